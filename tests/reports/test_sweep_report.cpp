// The sweep's merged result and its renderers on records written by hand: rows in index order, a missing point
// listed as missing, numbers to 6 significant digits for people and in full for scripts, a failed point's error
// kept, and text from the records escaped in Markdown and HTML.
#include <doctest/doctest.h>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "reports/sweep_report.hpp"

using namespace trainsim;
using Json = nlohmann::json;

namespace {

// Three points of a two-axis sweep (gpus x model); point 1 never ran, point 2 failed with exit 2.
Json merged() {
  const Json header = {{"sweep", "grid"}, {"fingerprint", "f00d"}, {"command", "estimate"}};
  std::vector<std::optional<Json>> records(3);
  records[0] = Json{{"index", 0}, {"inputs", {{"gpus", 8}, {"model", "llama3-8b"}}}, {"exit_code", 0}, {"result", {{"step", {{"time_s", 1.234567891}}}}}};
  records[2] = Json{{"index", 2}, {"inputs", {{"gpus", 16}, {"model", "a|<b>"}}}, {"exit_code", 2}, {"error", "no layout fits"}, {"result", nullptr}};
  return sweep_report::merge(header, {"gpus", "model"}, {{"step_s", "/step/time_s"}}, {}, records);
}

std::string rendered(void (*render)(std::ostream&, const Json&), const Json& m) {
  std::ostringstream os;
  render(os, m);
  return os.str();
}

}  // namespace

TEST_CASE("sweep merge: rows in index order, the kept column read by its pointer, a missing point counted") {
  const Json m = merged();
  REQUIRE(m.at("rows").size() == 2);
  CHECK(m.at("rows").at(0).at("index") == 0);
  CHECK(m.at("rows").at(0).at("values").at("step_s").get<double>() == 1.234567891);
  CHECK(m.at("rows").at(1).at("exit_code") == 2);
  CHECK(m.at("rows").at(1).at("error") == "no layout fits");
  CHECK(m.at("done") == 1);
  CHECK(m.at("failed") == 1);
  CHECK(m.at("missing_points") == Json::array({1}));
  CHECK(m.at("complete") == false);
}

TEST_CASE("sweep CSV in full precision, the table to 6 significant digits") {
  const Json m = merged();
  const std::string csv = rendered(sweep_report::print_csv, m);
  CHECK(csv.find("1.234567891") != std::string::npos);
  const std::string table = rendered(sweep_report::print_table, m);
  CHECK(table.find("1.23457") != std::string::npos);
  CHECK(table.find("1.234567891") == std::string::npos);
  CHECK(table.find("no layout fits") != std::string::npos);
}

TEST_CASE("sweep Markdown and HTML: an input from the sweep file cannot break the table or the page") {
  const Json m = merged();
  const std::string md = rendered(sweep_report::print_markdown, m);
  CHECK(md.find("a\\|&lt;b&gt;") != std::string::npos);
  CHECK(md.find("<b>") == std::string::npos);
  const std::string html = sweep_report::html(m);
  CHECK(html.find("a|&lt;b&gt;") != std::string::npos);
  CHECK(html.find("<b>") == std::string::npos);
}
