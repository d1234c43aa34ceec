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

// A reference case as a scenario document: its four sections, without id/source/measured.
inline nlohmann::json case_scenario(const nlohmann::json& c) {
  return {{"model", c.at("model")}, {"training", c.at("training")}, {"parallel", c.at("parallel")}, {"hardware", c.at("hardware")}};
}

}  // namespace trainsim::test
