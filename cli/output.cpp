#include "output.hpp"

#include <iostream>

#include "models/core/errors.hpp"
#include "reports/result_check.hpp"
#include "run_files.hpp"

namespace trainsim::cli {

const std::vector<std::string>& output_formats() {
  static const std::vector<std::string> formats{"table", "json", "csv", "md", "html"};
  return formats;
}

std::string output_formats_text() { return "table, json, csv, md or html"; }

std::string json_text(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

// The renderer for `format`, or an InputError naming what the command does have.
const std::function<void(std::ostream&)>& renderer_for(const std::string& format, const std::string& what, const Renderers& r) {
  const std::function<void(std::ostream&)>* chosen = format == "csv" ? &r.csv : format == "md" ? &r.markdown : format == "html" ? &r.html : &r.table;
  if (!*chosen) {
    std::string has = "table or json";
    if (r.csv) has += ", csv";
    if (r.markdown) has += ", md";
    if (r.html) has += ", html";
    throw InputError("--format", "\"" + format + "\"", has, "trainsim " + what + " has no " + format + " form");
  }
  return *chosen;
}

}  // namespace

void emit_result(const std::string& format, const nlohmann::json& result, const std::string& what, const Renderers& renderers,
                 const std::string& report_path) {
  check_result_numbers(result, what);
  if (!report_path.empty() && !renderers.html)
    throw InputError("--report", report_path, "no report", "trainsim " + what + " has no HTML report");
  // The report's path is checked before anything is printed: an unwritable path fails without a half-done output.
  if (!report_path.empty()) check_output_path("--report", report_path);
  if (format == "json") std::cout << json_text(result) << "\n";
  else renderer_for(format, what, renderers)(std::cout);
  if (report_path.empty()) return;
  std::cout.flush();  // the printed result first, when the report goes to the same place (/dev/stdout)
  write_output_file("--report", report_path, renderers.html);
}

}  // namespace trainsim::cli
