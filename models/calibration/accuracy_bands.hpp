#pragma once
// How sure a predicted step time is: the spread of measured / predicted time over the published runs of
// ../shared/reference/ most like the scenario (the framework family, the scale, dense or MoE), each run predicted with
// the fitted parameters refit without its own source (leave-one-source-out, calibrate/reference_fit.hpp), so the
// errors are out of sample. Stored in presets/accuracy_bands.json by `make fit-reference`
// (tests/accuracy/reference_accuracy.cpp --write-bands) and checked against a fresh run by the accuracy.reference
// test. A band is for a run of a source not measured yet, so it has two levels: the 10th to 90th percentile of the
// group's runs around their own source's median, placed as low and as high as the measured sources' medians sit.
#include <string>
#include <vector>

#include "models/scenario/framework.hpp"
#include "models/scenario/spec.hpp"

namespace trainsim {

struct AccuracyBand {
  std::string group;   // "pytorch/1gpu", "megatron/multinode/moe", "megatron", ..., "all": the rows the band comes from
  int cases = 0;       // reference runs in the group
  double low = 1;      // measured time / predicted time: 10th percentile within a source x the lowest source median
  double high = 1;     // 90th percentile within a source x the highest source median (both widened when extrapolated)
  double median = 1;
  // The scenario's own regime ("pytorch/1gpu/moe") and whether it had fewer than kMinBandCases measured runs: then
  // the band is the first fallback group's, widened by the spread between sources (a new source moves the median by
  // as much as the measured sources differ from each other), and the answer is an extrapolation from `group`.
  std::string regime;
  bool extrapolated = false;
};

// The band groups: framework family (megatron: megatron-core, megatron-deepspeed; pytorch: the others) and regime:
// scale (1gpu, node: within one node, multinode), for MoE models "moe", and "host" where the step waits on the host
// for at least kHostBoundShare of its time (exposed launch and hook time: the kernel count of eager code and the
// host's pace decide it, and a host's pace varies from run to run). A band is looked up most specific first:
// family/scale/host, family/scale/moe, family/scale, family, all; the first with at least kMinBandCases runs.
bool megatron_family(const FrameworkTraits& f);  // allocation-free, for the step model's hot path
std::string band_family(const FrameworkTraits& f);
std::string band_scale(int gpus, int gpus_per_node);
// The keys a case or scenario belongs to, most specific first (ending with "all").
std::vector<std::string> band_keys(const std::string& family, const std::string& scale, bool moe, bool host_bound = false);
constexpr int kMinBandCases = 5;
// A group's own sources bound where a new source's median may sit when it has this many; fewer, and all sources do.
constexpr int kMinBandSources = 3;
constexpr double kHostBoundShare = 0.2;
// Whether a step of `total_s` seconds with `host_s` of exposed host time is host-bound in the band's sense.
inline bool host_bound_step(double host_s, double total_s) { return total_s > 0 && host_s >= kHostBoundShare * total_s; }
// The band for a regime: its own group's when it has kMinBandCases runs, else the first fallback's widened by the
// source spread (stored with the groups). Resolved once per regime; the reference lives as long as the program.
const AccuracyBand& accuracy_band(const std::string& family, const std::string& scale, bool moe, bool host_bound = false);
// The stored table's provenance line (for results' notes and the README).
const std::string& accuracy_bands_source();

}  // namespace trainsim
