#pragma once
// The accuracy bands (models/calibration/accuracy_bands.hpp) from the leave-one-source-out measured / predicted step times of
// the reference runs (calibrate/reference_fit.hpp): per band group, for a run of a source not measured yet. Such a
// run scatters around its source's median as the group's runs scatter around theirs, and that median sits anywhere
// between the lowest and highest median of the measured sources. Pooling the ratios instead lets the one or two
// sources of a group stand for every source a user's run may come from. Used by tests/accuracy (--write-bands and
// the coverage check); pure functions of the ratios.
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace trainsim {

// One speed case: its source, its cross-validated measured / predicted time and its band groups, most specific first
// (models/calibration/accuracy_bands.hpp: band_keys).
struct BandRun {
  std::string source;
  double ratio = 1;
  std::vector<std::string> keys;
};

// The runs' ratios per source and per band group (runs of `excluded_source` left out).
struct BandRatios {
  std::map<std::string, double> source_median;           // per source: the median of its runs
  double median = 1;                                     // of all runs
  std::map<std::string, std::vector<double>> ratios;     // per band group, sorted
  std::map<std::string, std::vector<double>> within;     // per band group: each ratio over its source's median, sorted
  std::map<std::string, std::set<std::string>> sources;  // per band group: the sources of its runs
};
BandRatios band_ratios(const std::vector<BandRun>& runs, const std::string& excluded_source = "");

// One group's band: low = the 10th percentile within a source x the lowest source median, high = the 90th x the
// highest (the group's own sources when it has kMinBandSources, else all), median = the group's median ratio.
struct GroupBand {
  int cases = 0, sources = 0;
  double low = 1, median = 1, high = 1;
  double within_low = 1, within_high = 1;  // 10th and 90th percentile of ratio / own source's median
};
GroupBand group_band(const BandRatios& b, const std::string& key);

// The lowest and highest per-source median over the median of all: a regime with fewer than kMinBandCases runs
// prints its fallback group's band widened by it once more (it is that far from the runs the band comes from).
std::pair<double, double> source_spread(const BandRatios& b);

// The band a regime prints (`keys` most specific first): the first group with kMinBandCases runs, widened by the
// source spread unless it is keys[0]. False when no group has enough runs.
bool regime_band(const std::vector<std::string>& keys, const BandRatios& b, double* low, double* high);

// The claim a band makes, checked out of sample: each run against the band its regime prints with the run's whole
// source left out. `share` inside [low, high]; `misses`: indices of the runs outside.
struct BandCoverage {
  double share = 0;
  std::vector<std::size_t> misses;
};
BandCoverage band_coverage(const std::vector<BandRun>& runs);

}  // namespace trainsim
