#include "accuracy_bands.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <string_view>

#include "json_text.hpp"

namespace trainsim {
namespace embedded {
extern const std::string_view accuracy_bands_json;
}  // namespace embedded

namespace {
struct BandTable {
  std::string source;
  std::map<std::string, AccuracyBand> groups;
};

const BandTable& table() {
  static const BandTable t = [] {
    BandTable out;
    const nlohmann::json doc = parse_json_text(embedded::accuracy_bands_json, "presets/accuracy_bands.json", "accuracy bands");
    out.source = doc.at("source").get<std::string>();
    for (const auto& [name, g] : doc.at("groups").items()) {
      AccuracyBand b;
      b.group = name;
      b.cases = g.at("cases").get<int>();
      b.low = g.at("p10").get<double>();
      b.high = g.at("p90").get<double>();
      b.median = g.at("median").get<double>();
      out.groups.emplace(name, b);
    }
    return out;
  }();
  return t;
}
}  // namespace

bool megatron_family(const FrameworkTraits& f) { return f.name == "megatron-core" || f.name == "megatron-deepspeed"; }

std::string band_family(const FrameworkTraits& f) { return megatron_family(f) ? "megatron" : "pytorch"; }

std::string band_scale(int gpus, int gpus_per_node) { return gpus <= 1 ? "1gpu" : gpus <= gpus_per_node ? "node" : "multinode"; }

std::vector<std::string> band_keys(const std::string& family, const std::string& scale, bool moe) {
  std::vector<std::string> keys;
  if (moe) keys.push_back(family + "/" + scale + "/moe");
  keys.push_back(family + "/" + scale);
  keys.push_back(family);
  keys.push_back("all");
  return keys;
}

const AccuracyBand& accuracy_band(const std::string& family, const std::string& scale, bool moe) {
  const auto& groups = table().groups;
  for (const std::string& key : band_keys(family, scale, moe)) {
    const auto it = groups.find(key);
    if (it != groups.end() && it->second.cases >= kMinBandCases) return it->second;
  }
  return groups.at("all");
}

const std::string& accuracy_bands_source() { return table().source; }

}  // namespace trainsim
