#include "log_comparison.hpp"

#include <algorithm>
#include <cstdio>

#include "models/core/errors.hpp"
#include "models/core/units.hpp"
#include "models/memory/memory.hpp"
#include "models/step/step.hpp"

namespace trainsim {

namespace {
// Megatron-LM's "throughput per GPU (TFLOP/s/GPU)" counts the FLOPs of its own formula, which includes
// recomputation (megatron/training/training.py num_floating_point_operations): HFU in our terms.
double predicted_megatron_tflops(const StepEstimate& e, int gpus) { return e.hardware_flops / (e.time_s * gpus) / 1e12; }
}  // namespace

double physical_step_floor_s(const StepEstimate& e) {
  // mfu x time = model FLOPs / (GPUs x peak); hfu likewise with the FLOPs actually run (recompute included).
  return std::min(e.mfu, e.hfu) * e.time_s;
}

void check_step_time_physical(double floor_s, double step_s, const std::string& log_path, const std::string& basis) {
  auto seconds = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g s", v);
    return std::string(buf);
  };
  if (step_s > 0 && step_s < floor_s)
    throw InputError(log_path, "a step of " + seconds(step_s) + " (" + basis + ")",
                     "at least " + seconds(floor_s) + ", the plan's FLOPs at every GPU's peak (MFU 100%)",
                     "the log is of another plan, or its time unit is not the one its format states");
}

LogComparison compare_log(const Scenario& s, const TrainingLog& log, int skip) {
  LogComparison c;
  c.log = log;
  c.summary = summarize(log, skip);
  if (c.summary.used == 0) {  // the warm-up is never compared
    c.notes.push_back("no iterations left after the warm-up (" + std::to_string(c.summary.iterations) + " in the log, " +
                      std::to_string(c.summary.warmup) + " left out): nothing measured to compare");
    return c;
  }
  StepModel sm(s.model, s.training, s.hardware);
  const StepEstimate e = sm.estimate(s.parallel);
  const int gpus = s.hardware.num_gpus;
  const double tokens_per_s_per_gpu = e.tokens_per_s / gpus;
  const std::string path = "LOG";
  const double floor_s = physical_step_floor_s(e);
  if (c.summary.median_time_s > 0) check_step_time_physical(floor_s, c.summary.median_time_s, path, "the median iteration time");
  if (c.summary.median_tokens_per_s_per_gpu > 0)
    check_step_time_physical(floor_s, s.training.tokens_per_step() / (c.summary.median_tokens_per_s_per_gpu * gpus), path, "from the logged tokens/s per GPU");
  if (c.summary.median_samples_per_s > 0)
    check_step_time_physical(floor_s, s.training.global_batch_size / c.summary.median_samples_per_s, path, "from the logged samples/s");

  if (c.summary.median_time_s > 0) {
    c.rows.push_back({"iteration time (s), median", c.summary.median_time_s, e.time_s});
    c.rows.push_back({"tokens/s per GPU (from iteration time)", s.training.tokens_per_step() / c.summary.median_time_s / gpus,
                      tokens_per_s_per_gpu});
  }
  if (c.summary.median_tokens_per_s_per_gpu > 0)
    c.rows.push_back({"tokens/s per GPU (as logged)", c.summary.median_tokens_per_s_per_gpu, tokens_per_s_per_gpu});
  if (c.summary.median_samples_per_s > 0)
    c.rows.push_back({"samples/s, all GPUs (as logged)", c.summary.median_samples_per_s, s.training.global_batch_size / e.time_s});
  if (c.summary.median_tflops_per_gpu > 0) {
    if (log.format == "megatron")
      c.rows.push_back({"TFLOP/s per GPU (Megatron's count, with recompute)", c.summary.median_tflops_per_gpu, predicted_megatron_tflops(e, gpus)});
    else
      c.rows.push_back({"TFLOP/s per GPU (model FLOPs)", c.summary.median_tflops_per_gpu, e.model_flops / (e.time_s * gpus) / 1e12});
  }
  if (log.peak_memory_bytes > 0) {
    // Compared as the log counts it: allocated = tensors only; reserved = also the allocator's fragmentation.
    const StageMemory w = MemoryModel(s.model, s.training, s.hardware).worst_stage(s.parallel);
    const bool reserved = log.memory_counter == MemoryCounter::AllocatorReserved;
    c.rows.push_back({reserved ? "peak reserved GiB (allocator segments, most loaded GPU)" : "peak allocated GiB (tensors, most loaded GPU)",
                      log.peak_memory_bytes / kBytesPerGiB, w.counted(log.memory_counter) / kBytesPerGiB});
  } else {
    c.notes.push_back("the log reports no memory figures");
  }
  if (c.summary.used < kFewIterations)
    c.notes.push_back("only " + std::to_string(c.summary.used) + " iteration" + (c.summary.used > 1 ? "s" : "") + " after the warm-up (" +
                      std::to_string(c.summary.warmup) + " left out): the measured values are not a steady-state median");
  if (c.summary.median_time_s <= 0 && c.summary.median_tokens_per_s_per_gpu <= 0 && c.summary.median_samples_per_s <= 0)
    c.notes.push_back("the log has no iteration timings");
  return c;
}

}  // namespace trainsim
