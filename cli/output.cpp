#include "output.hpp"

#include <iostream>

#include "models/errors.hpp"
#include "reports/result_check.hpp"

namespace trainsim::cli {

std::string json_text(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

void emit_result(const std::string& format, const nlohmann::json& result, const std::string& what, const Renderers& renderers) {
  check_result_numbers(result, what);
  if (format == "json") {
    std::cout << json_text(result) << "\n";
  } else if (format == "csv") {
    if (!renderers.csv) throw InputError("--format", "\"csv\"", "table or json", "trainsim " + what + " has no CSV form");
    renderers.csv(std::cout);
  } else {
    renderers.table(std::cout);
  }
}

}  // namespace trainsim::cli
