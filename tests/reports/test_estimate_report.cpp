// The renderers of `trainsim estimate` on a result built from the models: the CSV's rows add up to the model's
// parameters (counted by hand from the checkpoint) and each row's total to its parts, the layout and training lines
// say what the scenario says, every format shows the same MFU, and names cannot break Markdown or HTML.
#include <doctest/doctest.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "models/memory/memory.hpp"
#include "models/scenario/scenario.hpp"
#include "models/step/step.hpp"
#include "reports/estimate_document.hpp"
#include "reports/estimate_report.hpp"

using namespace trainsim;
using Json = nlohmann::json;

namespace {

// Llama-3-8B full SFT on 8 H100s at tp 2 with sequence parallelism and two pipeline stages (dp 2).
EstimateResult llama_estimate() {
  EstimateResult r;
  r.scenario = parse_scenario(Json{{"model", "llama3-8b"},
                                   {"training", {{"mode", "sft"}, {"seq_len", 4096}, {"global_batch_size", 64}, {"train_tokens", "1B"}}},
                                   {"hardware", {{"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 8}, {"num_nodes", 1}}},
                                   {"parallel", {{"tp", 2}, {"pp", 2}, {"dp", 2}, {"sequence_parallel", true}, {"micro_batch_size", 1}}}});
  r.scenario_label = "built in the test";
  const Scenario& s = r.scenario;
  r.memory = MemoryModel(s.model, s.training, s.hardware).estimate(s.parallel);
  const StepModel sm(s.model, s.training, s.hardware);
  r.step = sm.estimate(s.parallel);
  r.cost = sm.training_cost(r.step, s.parallel);
  return r;
}

std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::istringstream l(line);
    std::string cell;
    while (std::getline(l, cell, ',')) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

}  // namespace

TEST_CASE("estimate CSV: one row per pipeline stage, parameters summing to the model's, totals to their parts") {
  const EstimateResult r = llama_estimate();
  std::ostringstream os;
  print_estimate_csv(os, r);
  const auto rows = csv_rows(os.str());
  REQUIRE(rows.size() == 3);  // the header and two stages
  CHECK(rows[0][0] == "stage");
  double parameters = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto& c = rows[i];
    REQUIRE(c.size() == rows[0].size());
    CHECK(c[1] == "16");  // 32 layers over two stages
    // Per GPU: the stage's share of Llama-3-8B's 8,030,261,248 parameters (counted by hand from the checkpoint in
    // tests/models/compute/test_transformer.cpp) on one of two tensor-parallel ranks.
    parameters += std::stod(c[2]);
    const double parts = std::stod(c[3]) + std::stod(c[4]) + std::stod(c[5]) + std::stod(c[6]) + std::stod(c[7]);
    CHECK(std::stod(c[8]) == doctest::Approx(parts).epsilon(1e-9));  // rounded to whole bytes each
    CHECK(c[10] == (std::stod(c[8]) <= std::stod(c[9]) ? "true" : "false"));
  }
  // Over both stages, on each of the two TP ranks: the whole model once, the 65 RMSNorm weight vectors of 4,096
  // (two per layer and the final one) on both ranks.
  CHECK(2 * parameters == 8030261248.0 + 65 * 4096.0);
}

TEST_CASE("estimate table, Markdown, HTML and JSON show one MFU, one layout") {
  EstimateResult r = llama_estimate();
  const Json j = estimate_json(r);
  const double mfu = j.at("step").at("mfu").get<double>();
  char mfu_text[32];
  std::snprintf(mfu_text, sizeof mfu_text, "MFU %.1f%%", 100 * mfu);
  CHECK(j.at("step").at("time_s_low").get<double>() < j.at("step").at("time_s").get<double>());
  CHECK(j.at("step").at("time_s").get<double>() < j.at("step").at("time_s_high").get<double>());
  CHECK(j.at("memory").at("stages").size() == 2);
  // The layout line in the words the scenario uses (the format documented in estimate_report.hpp).
  CHECK(describe_layout(r.scenario) == "tp 2+sp . pp 2 . dp 2 . cp 1 (1f1b), 8 x h100-sxm-80gb on 1 node");
  std::ostringstream table, md, html;
  print_estimate_table(table, r);
  print_estimate_markdown(md, r);
  write_estimate_html(html, r);
  CHECK(table.str().find(mfu_text) != std::string::npos);
  CHECK(md.str().find(mfu_text) != std::string::npos);
  CHECK(html.str().find(mfu_text) != std::string::npos);
  CHECK(table.str().find("tp 2+sp . pp 2 . dp 2") != std::string::npos);
}

TEST_CASE("estimate Markdown and HTML: a model name cannot break the table or the page") {
  EstimateResult r = llama_estimate();
  r.scenario.model.name = "llama|<img src=x>";
  std::ostringstream md, html;
  print_estimate_markdown(md, r);
  write_estimate_html(html, r);
  CHECK(md.str().find("<img") == std::string::npos);
  CHECK(md.str().find("&lt;img src=x&gt;") != std::string::npos);
  CHECK(html.str().find("<img src=x>") == std::string::npos);
  CHECK(html.str().find("llama|&lt;img src=x&gt;") != std::string::npos);
}
