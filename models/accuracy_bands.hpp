#pragma once
// How sure a predicted step time is: the spread of measured / predicted time over the published runs of
// ../shared/reference/ most like the scenario (the framework family, the scale, dense or MoE), each run predicted with
// the fitted parameters refit without its own source (leave-one-source-out, calibrate/reference_fit.hpp), so the
// errors are out of sample. Stored in presets/accuracy_bands.json by `make fit-reference`
// (tests/accuracy/reference_accuracy.cpp --write-bands) and checked against a fresh run by the accuracy.reference
// test: the band is the 10th to 90th percentile of them.
#include <string>
#include <vector>

#include "framework.hpp"
#include "spec.hpp"

namespace trainsim {

struct AccuracyBand {
  std::string group;   // "pytorch/1gpu", "megatron/multinode/moe", "megatron", ..., "all": the rows the band comes from
  int cases = 0;       // reference runs in the group
  double low = 1;      // 10th percentile of measured time / predicted time
  double high = 1;     // 90th percentile
  double median = 1;
};

// The band groups: framework family (megatron: megatron-core, megatron-deepspeed; pytorch: the others) and regime:
// scale (1gpu, node: within one node, multinode) and, for MoE models, "moe". A band is looked up most specific
// first: family/scale/moe, family/scale, family, all; the first with at least kMinBandCases runs.
bool megatron_family(const FrameworkTraits& f);  // allocation-free, for the step model's hot path
std::string band_family(const FrameworkTraits& f);
std::string band_scale(int gpus, int gpus_per_node);
// The keys a case or scenario belongs to, most specific first (ending with "all").
std::vector<std::string> band_keys(const std::string& family, const std::string& scale, bool moe);
constexpr int kMinBandCases = 5;
const AccuracyBand& accuracy_band(const std::string& family, const std::string& scale, bool moe);
// The stored table's provenance line (for results' notes and the README).
const std::string& accuracy_bands_source();

}  // namespace trainsim
