#pragma once
// How every command prints its result: the result as JSON is checked once (reports/result_check.hpp) and
// then written in the format asked for, and the HTML report written where --report asks. One mechanism for
// --format and --report, not an if-chain per command.
#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace trainsim::cli {

struct Renderers {
  std::function<void(std::ostream&)> table = nullptr;
  std::function<void(std::ostream&)> csv = nullptr;       // empty: the command has no CSV form
  std::function<void(std::ostream&)> markdown = nullptr;  // empty: no Markdown form
  std::function<void(std::ostream&)> html = nullptr;      // empty: no HTML report
};

// The --format values: table, json, csv, md, html (the renderers say which a command has).
const std::vector<std::string>& output_formats();
std::string output_formats_text();  // "table, json, csv, md or html"

// Checks `result` (throws ResultCheckError: exit 1 with the path), prints it as `format` to stdout, and writes
// the HTML report to `report_path` when it is not empty. A format or report the command has no renderer for is
// an InputError naming the flag.
void emit_result(const std::string& format, const nlohmann::json& result, const std::string& what, const Renderers& renderers,
                 const std::string& report_path = "");

// JSON text for output: invalid UTF-8 in user-given names is replaced rather than thrown on.
std::string json_text(const nlohmann::json& value, int indent = 2);

}  // namespace trainsim::cli
