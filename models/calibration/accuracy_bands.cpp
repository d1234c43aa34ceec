#include "models/calibration/accuracy_bands.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "models/core/json_text.hpp"

namespace trainsim {
namespace embedded {
extern const std::string_view accuracy_bands_json;
}  // namespace embedded

namespace {
struct BandTable {
  std::string source;
  std::map<std::string, AccuracyBand> groups;
  double spread_low = 1, spread_high = 1;  // lowest / highest per-source median over the median of all
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
    if (doc.contains("source_spread")) {
      out.spread_low = doc.at("source_spread").at("low").get<double>();
      out.spread_high = doc.at("source_spread").at("high").get<double>();
    }
    return out;
  }();
  return t;
}
}  // namespace

bool megatron_family(const FrameworkTraits& f) { return f.name == "megatron-core" || f.name == "megatron-deepspeed"; }

std::string band_family(const FrameworkTraits& f) { return megatron_family(f) ? "megatron" : "pytorch"; }

std::string band_scale(int gpus, int gpus_per_node) { return gpus <= 1 ? "1gpu" : gpus <= gpus_per_node ? "node" : "multinode"; }

std::vector<std::string> band_keys(const std::string& family, const std::string& scale, bool moe, bool host_bound) {
  std::vector<std::string> keys;
  if (host_bound) keys.push_back(family + "/" + scale + "/host");
  if (moe) keys.push_back(family + "/" + scale + "/moe");
  keys.push_back(family + "/" + scale);
  keys.push_back(family);
  keys.push_back("all");
  return keys;
}

namespace {
// The first of `keys` with kMinBandCases runs; widened by the source spread unless it is the regime's own (keys[0]).
AccuracyBand resolve_band(const BandTable& t, const std::vector<std::string>& keys) {
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto it = t.groups.find(keys[i]);
    if (it == t.groups.end() || it->second.cases < kMinBandCases) continue;
    AccuracyBand b = it->second;
    b.regime = keys.front();
    if (i > 0) {
      b.extrapolated = true;
      b.low *= t.spread_low;
      b.high *= t.spread_high;
    }
    return b;
  }
  AccuracyBand b = t.groups.at("all");
  b.regime = keys.front();
  b.extrapolated = true;
  b.low *= t.spread_low;
  b.high *= t.spread_high;
  return b;
}
}  // namespace

const AccuracyBand& accuracy_band(const std::string& family, const std::string& scale, bool moe, bool host_bound) {
  // Every regime the step model asks for, resolved once (thread-safe static initialisation), keyed by its whole
  // lookup order (a host-bound MoE regime falls back to the MoE group, a host-bound dense one not).
  auto key_of = [](const std::vector<std::string>& keys) {
    std::string k;
    for (const auto& part : keys) k += part + "|";
    return k;
  };
  static const std::map<std::string, AccuracyBand> resolved = [&] {
    std::map<std::string, AccuracyBand> out;
    for (const char* f : {"megatron", "pytorch"})
      for (const char* sc : {"1gpu", "node", "multinode"})
        for (bool m : {false, true})
          for (bool h : {false, true}) {
            const std::vector<std::string> keys = band_keys(f, sc, m, h);
            out.emplace(key_of(keys), resolve_band(table(), keys));
          }
    return out;
  }();
  const auto it = resolved.find(key_of(band_keys(family, scale, moe, host_bound)));
  if (it != resolved.end()) return it->second;
  static const AccuracyBand unknown = resolve_band(table(), {"unknown", "all"});
  return unknown;
}

const std::string& accuracy_bands_source() { return table().source; }

}  // namespace trainsim
