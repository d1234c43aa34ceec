// The accuracy bands' derivation (calibrate/band_derivation.hpp) on ratios small enough to follow by hand.
#include <doctest/doctest.h>

#include "calibrate/band_derivation.hpp"

using namespace trainsim;

namespace {
// Three runs of a source at 0.9, 1.0 and 1.1 x `median`, in the groups `keys`.
void add_source(std::vector<BandRun>& runs, const std::string& source, double median, const std::vector<std::string>& keys) {
  for (double f : {0.9, 1.0, 1.1}) runs.push_back({source, f * median, keys});
}
}  // namespace

TEST_CASE("a band places the scatter within a source between the lowest and highest source median") {
  std::vector<BandRun> runs;
  add_source(runs, "A", 1.0, {"g", "h", "all"});
  add_source(runs, "B", 2.0, {"g", "h", "all"});
  add_source(runs, "C", 0.5, {"g", "all"});
  const BandRatios b = band_ratios(runs);
  CHECK(b.source_median.at("B") == doctest::Approx(2.0));
  // Within a source every group holds 0.9, 1.0, 1.1 per source: the 10th percentile of the nine values
  // (0.9 0.9 0.9 1 1 1 1.1 1.1 1.1) sits at position 0.8, between two 0.9s; the 90th at 7.2, between two 1.1s.
  const GroupBand g = group_band(b, "g");
  CHECK(g.cases == 9);
  CHECK(g.sources == 3);
  CHECK(g.within_low == doctest::Approx(0.9));
  CHECK(g.within_high == doctest::Approx(1.1));
  CHECK(g.low == doctest::Approx(0.9 * 0.5));   // x C's median, the lowest
  CHECK(g.high == doctest::Approx(1.1 * 2.0));  // x B's median, the highest
  CHECK(g.median == doctest::Approx(1.0));      // 0.45 0.5 0.55 0.9 [1.0] 1.1 1.8 2.0 2.2
  // "h" has two sources, fewer than kMinBandSources: all sources' medians bound it, C's included.
  const GroupBand h = group_band(b, "h");
  CHECK(h.sources == 2);
  CHECK(h.low == doctest::Approx(0.45));
  CHECK(h.high == doctest::Approx(2.2));
  // Source medians 0.5, 1.0, 2.0 over the median of all, 1.0.
  CHECK(source_spread(b).first == doctest::Approx(0.5));
  CHECK(source_spread(b).second == doctest::Approx(2.0));
}

TEST_CASE("a regime with too few runs takes its fallback group's band widened by the source spread") {
  std::vector<BandRun> runs;
  add_source(runs, "A", 1.0, {"g", "all"});
  add_source(runs, "B", 2.0, {"g", "all"});
  add_source(runs, "C", 0.5, {"rare", "g", "all"});  // 3 runs in "rare", fewer than kMinBandCases
  const BandRatios b = band_ratios(runs);
  double low = 0, high = 0;
  REQUIRE(regime_band({"rare", "g", "all"}, b, &low, &high));
  CHECK(low == doctest::Approx(0.45 * 0.5));
  CHECK(high == doctest::Approx(2.2 * 2.0));
  REQUIRE(regime_band({"g", "all"}, b, &low, &high));  // its own group: not widened
  CHECK(low == doctest::Approx(0.45));
  CHECK(high == doctest::Approx(2.2));
  CHECK_FALSE(regime_band({"rare"}, b, &low, &high));
}

TEST_CASE("coverage holds each source out and checks its runs against the others' band") {
  std::vector<BandRun> runs;
  add_source(runs, "A", 1.0, {"g"});
  add_source(runs, "B", 2.0, {"g"});
  add_source(runs, "C", 0.5, {"g"});
  add_source(runs, "D", 1.0, {"g"});
  // Without A (or D) the band is 0.9 x 0.5 to 1.1 x 2.0: all three runs inside. Without B the highest median is
  // 1.0, so the band ends at 1.1 and B's 1.8-2.2 fall outside; without C it starts at 0.9 and C's 0.45-0.55 do.
  const BandCoverage c = band_coverage(runs);
  CHECK(c.share == doctest::Approx(6.0 / 12.0));
  CHECK(c.misses == std::vector<std::size_t>{3, 4, 5, 6, 7, 8});
}
