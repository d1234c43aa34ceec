#include "result_check.hpp"

#include <cmath>
#include <utility>
#include <vector>

namespace trainsim {

bool signed_field(const std::string& key) {
  for (const char* word : {"error", "difference", "delta", "change", "bias"})
    if (key.find(word) != std::string::npos) return true;
  return false;
}

void check_result_numbers(const nlohmann::json& result, const std::string& what) {
  // Iterative walk: results are shallow, but a check must never be the thing that overflows a stack.
  struct Item {
    const nlohmann::json* value;
    std::string path;
    bool may_be_negative;
  };
  std::vector<Item> todo{{&result, "", false}};
  while (!todo.empty()) {
    const Item item = std::move(todo.back());
    todo.pop_back();
    const nlohmann::json& v = *item.value;
    if (v.is_object()) {
      for (auto it = v.begin(); it != v.end(); ++it)
        todo.push_back({&it.value(), item.path + "/" + it.key(), item.may_be_negative || signed_field(it.key())});
    } else if (v.is_array()) {
      for (std::size_t i = 0; i < v.size(); ++i) todo.push_back({&v[i], item.path + "/" + std::to_string(i), item.may_be_negative});
    } else if (v.is_number_float()) {
      const double x = v.get<double>();
      if (!std::isfinite(x) || (x < 0 && !item.may_be_negative))
        throw ResultCheckError("the " + what + " result holds " + std::to_string(x) + " at " + (item.path.empty() ? "/" : item.path) +
                               ": a model produced a number that must never be shown (please report this with the scenario)");
    } else if (v.is_number_integer() && !v.is_number_unsigned()) {
      if (v.get<long long>() < 0 && !item.may_be_negative)
        throw ResultCheckError("the " + what + " result holds " + std::to_string(v.get<long long>()) + " at " + item.path +
                               ": a model produced a negative count (please report this with the scenario)");
    }
  }
}

}  // namespace trainsim
