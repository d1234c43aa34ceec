#pragma once
// The published runs of ../shared/reference/ as trainsim cases: each with its scenario, the layout it ran (or,
// where the source leaves the micro-batch or interleaving out, the layout the plan search picks), what was
// measured, and the source it comes from. One reader for the accuracy report (tests/accuracy) and for the fit
// of the model's parameters (reference_fit.hpp).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/layout/search.hpp"
#include "models/memory/memory.hpp"
#include "models/scenario/scenario.hpp"
#include "models/step/step.hpp"

namespace trainsim {

// FitsInMemory: 1 when the step ran, 0 when it ran out of GPU memory; trainsim's verdict is MemoryEstimate::fits.
enum class ReferenceMetric { IterationSeconds, HardwareTflopsPerGpu, TokensPerSecondPerGpu, MfuPercent, MemoryGiB, FitsInMemory };
const char* to_string(ReferenceMetric m);  // "iteration s", "TFLOP/s/GPU", ...

struct ReferenceCase {
  std::string id;
  std::string file;    // "korthikanti2022.json", ...
  std::string source;  // the publication or project it comes from (its `source` text's head): the unit left out in cross-validation
  ReferenceMetric metric = ReferenceMetric::IterationSeconds;
  double measured = 0;
  Scenario scenario;   // parallel / training: the layout it ran, or the searched one (searched = true)
  bool searched = false;
  bool counted = true;  // false: the source file marks it unsupported, or a later measurement supersedes it (shown, not counted)
  // The id of the case that measured the same run again and replaces this one (its `supersedes` names this id): a
  // corpus case re-measured the way a training job runs (calibrate/measurements/corpus/README.md). Empty: none.
  std::string superseded_by;
  // What the source's memory figure counts (memory.hpp): the whole device unless the source says otherwise.
  MemoryCounter memory_counter = MemoryCounter::Device;
  bool speed() const { return metric != ReferenceMetric::MemoryGiB && metric != ReferenceMetric::FitsInMemory; }
  bool memory() const { return metric == ReferenceMetric::MemoryGiB; }
  bool verdict() const { return metric == ReferenceMetric::FitsInMemory; }
};

struct ReferenceSet {
  std::vector<ReferenceCase> cases;  // in file order; a case with speed and memory figures appears twice
  std::vector<std::string> refused;  // "id: why" for cases marked unsupported that trainsim still refuses
  // "id: ..." for cases that run but publish no figure compared here (model TFLOP/s only, by a FLOP convention of
  // the source's own), with trainsim's step time and MFU beside the source's figure.
  std::vector<std::string> uncompared;
  std::vector<std::string> files;    // the files read, in order
};

// A reference case as a scenario document: its model, training, parallel and hardware sections, without the
// "note" keys the files keep as comments at any depth.
nlohmann::json reference_case_scenario(const nlohmann::json& c);

// Narayanan et al. SC'21 §5.1: hardware FLOPs per iteration with full recompute,
// 96·B·s·L·h²·(1 + s/(6h) + V/(16·L·h)): the formula behind Table 1's and Table 2's TFLOP/s.
double megatron_hfu_flops(const ModelSpec& m, double batch, double s);

// Where the reference runs are: the published files (../shared/reference) and the corpus measured with
// calibrate/measurements/corpus/run_corpus.py (every *.json of its results folder, in the format of
// h100_single_gpu_runs.json; empty: none).
struct ReferenceDirs {
  std::string published;
  std::string measured;
};

// Reads the five published reference files and the measured corpus, each case as a user's scenario with what it
// states (nothing added by id). Searched layouts are picked with `fitted` (nullptr: the shipped parameters).
// Throws std::runtime_error when a file is missing or a counted case cannot be run.
ReferenceSet load_reference_cases(const ReferenceDirs& dirs, const FittedParameters* fitted = nullptr);

// The model's figure for a case in its metric's unit, at the case's layout.
double predict_case(const ReferenceCase& c, const FittedParameters* fitted = nullptr);
// Signed error with + = the model is faster than the run (speed: compared as speeds, a time t being a speed
// 1/t) or needs more memory.
double case_error(const ReferenceCase& c, double predicted);
// measured / predicted iteration time (speed cases), the quantity the fit and the accuracy bands use.
double time_ratio(const ReferenceCase& c, double predicted);

}  // namespace trainsim
