#pragma once
// How every command prints its result: the result as JSON is checked once (reports/result_check.hpp) and
// then written in the format asked for. One mechanism for --format, not an if-chain per command.
#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

namespace trainsim::cli {

struct Renderers {
  std::function<void(std::ostream&)> table;
  std::function<void(std::ostream&)> csv;  // empty: the command has no CSV form
};

// Checks `result` (throws ResultCheckError: exit 1 with the path) and prints it as `format` to stdout.
void emit_result(const std::string& format, const nlohmann::json& result, const std::string& what, const Renderers& renderers);

// JSON text for output: invalid UTF-8 in user-given names is replaced rather than thrown on.
std::string json_text(const nlohmann::json& value, int indent = 2);

}  // namespace trainsim::cli
