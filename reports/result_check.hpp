#pragma once
// The one check every result passes before it is rendered in any format: no NaN, no infinity, and no
// negative number except in fields that are signed by nature (errors, differences). A violation is a bug
// in a model, not bad input: it becomes an internal error naming the JSON path and the value, so it is
// found instead of printed as "inf%" or "$-3".
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace trainsim {

class ResultCheckError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Throws ResultCheckError for the first offending number; `what` names the result ("plan", "estimate").
void check_result_numbers(const nlohmann::json& result, const std::string& what);

// Keys whose numbers may be negative: differences and signed errors ("error", "difference", "delta",
// "change", "bias" anywhere in the key name).
bool signed_field(const std::string& key);

}  // namespace trainsim
