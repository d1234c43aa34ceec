#pragma once
// Access to ../shared/reference (published measurements) from tests; tests skip when it is absent.
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace trainsim::test {

inline std::optional<nlohmann::json> reference_file(const std::string& name) {
  std::ifstream in(std::string(TRAINSIM_SHARED_DIR) + "/reference/" + name);
  if (!in) return std::nullopt;
  return nlohmann::json::parse(in);
}

}  // namespace trainsim::test
