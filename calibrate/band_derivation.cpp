#include "band_derivation.hpp"

#include <algorithm>

#include "models/calibration/accuracy_bands.hpp"
#include "models/core/statistics.hpp"

namespace trainsim {

BandRatios band_ratios(const std::vector<BandRun>& runs, const std::string& excluded_source) {
  BandRatios b;
  std::map<std::string, std::vector<double>> by_source;
  std::vector<double> all;
  for (const auto& r : runs)
    if (r.source != excluded_source) by_source[r.source].push_back(r.ratio), all.push_back(r.ratio);
  for (auto& [source, v] : by_source) {
    std::sort(v.begin(), v.end());
    b.source_median[source] = sorted_quantile(v, 0.5);
  }
  std::sort(all.begin(), all.end());
  if (!all.empty()) b.median = sorted_quantile(all, 0.5);
  for (const auto& r : runs) {
    if (r.source == excluded_source) continue;
    for (const std::string& key : r.keys) {
      b.ratios[key].push_back(r.ratio);
      b.within[key].push_back(r.ratio / b.source_median.at(r.source));
      b.sources[key].insert(r.source);
    }
  }
  for (auto& [key, v] : b.ratios) std::sort(v.begin(), v.end());
  for (auto& [key, v] : b.within) std::sort(v.begin(), v.end());
  return b;
}

GroupBand group_band(const BandRatios& b, const std::string& key) {
  const std::set<std::string>& own = b.sources.at(key);
  const bool own_sources = static_cast<int>(own.size()) >= kMinBandSources;
  double lowest = 1e300, highest = 0;
  for (const auto& [source, m] : b.source_median)
    if (!own_sources || own.count(source)) lowest = std::min(lowest, m), highest = std::max(highest, m);
  const std::vector<double>& within = b.within.at(key);
  GroupBand g;
  g.cases = static_cast<int>(within.size());
  g.sources = static_cast<int>(own.size());
  g.within_low = sorted_quantile(within, 0.1);
  g.within_high = sorted_quantile(within, 0.9);
  g.low = g.within_low * lowest;
  g.high = g.within_high * highest;
  g.median = sorted_quantile(b.ratios.at(key), 0.5);
  return g;
}

std::pair<double, double> source_spread(const BandRatios& b) {
  double lo = 1, hi = 1;
  for (const auto& [source, m] : b.source_median) lo = std::min(lo, m / b.median), hi = std::max(hi, m / b.median);
  return {lo, hi};
}

bool regime_band(const std::vector<std::string>& keys, const BandRatios& b, double* low, double* high) {
  const std::pair<double, double> spread = source_spread(b);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto g = b.ratios.find(keys[i]);
    if (g == b.ratios.end() || static_cast<int>(g->second.size()) < kMinBandCases) continue;
    const GroupBand band = group_band(b, keys[i]);
    *low = band.low * (i == 0 ? 1.0 : spread.first);
    *high = band.high * (i == 0 ? 1.0 : spread.second);
    return true;
  }
  return false;
}

BandCoverage band_coverage(const std::vector<BandRun>& runs) {
  BandCoverage c;
  std::map<std::string, BandRatios> without;  // per held-out source: the other sources' ratios
  std::size_t inside = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const BandRun& r = runs[i];
    auto it = without.find(r.source);
    if (it == without.end()) it = without.emplace(r.source, band_ratios(runs, r.source)).first;
    double low = 0, high = 0;
    if (regime_band(r.keys, it->second, &low, &high) && r.ratio >= low && r.ratio <= high) ++inside;
    else c.misses.push_back(i);
  }
  c.share = runs.empty() ? 0.0 : static_cast<double>(inside) / static_cast<double>(runs.size());
  return c;
}

}  // namespace trainsim
