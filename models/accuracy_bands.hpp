#pragma once
// How sure a predicted step time is: the spread of measured / predicted time over the published runs of
// ../shared/reference/ most like the scenario (the framework family and the GPU class), each run predicted with
// the fitted parameters refit without its own source (leave-one-source-out, calibrate/reference_fit.hpp), so the
// errors are out of sample. Stored in presets/accuracy_bands.json by `make fit-reference`
// (tests/accuracy/reference_accuracy.cpp --write-bands) and checked against a fresh run by the accuracy.reference
// test: the band is the 10th to 90th percentile of them.
#include <string>

#include "framework.hpp"
#include "spec.hpp"

namespace trainsim {

struct AccuracyBand {
  std::string group;   // "megatron/hopper", "pytorch/hopper", "megatron", ..., "all": the rows the band comes from
  int cases = 0;       // reference runs in the group
  double low = 1;      // 10th percentile of measured time / predicted time
  double high = 1;     // 90th percentile
  double median = 1;
};

// The band groups: framework family (megatron: megatron-core, megatron-deepspeed; pytorch: fsdp, fsdp2,
// deepspeed, transformers) and GPU class (hopper: GPUs with the Hopper fused-attention table; other).
bool megatron_family(const FrameworkTraits& f);  // allocation-free, for the step model's hot path
std::string band_family(const FrameworkTraits& f);
std::string band_gpu_class(const GpuSpec& g);
// The most specific group with at least kMinBandCases runs: family/class, else family, else all.
constexpr int kMinBandCases = 5;
const AccuracyBand& accuracy_band(const std::string& family, const std::string& gpu_class);
// The stored table's provenance line (for results' notes and the README).
const std::string& accuracy_bands_source();

}  // namespace trainsim
