#pragma once
// Reads the per-iteration timing and memory lines of real training logs, so a plan's prediction can be
// compared with what the job actually did: Megatron-LM ("elapsed time per iteration (ms)", "throughput
// per GPU (TFLOP/s/GPU)", "memory (MB) | ... max allocated"), torchtitan ("step: N ... tps: ... tflops:
// ... mfu: ... memory: X GiB") and generic PyTorch/torchrun lines that name a step and its time
// ("step 120 ... step_time: 1.23s", "iter 5 | time 812.3 ms"). Lines that look like iteration reports but
// cannot be read are counted with their line numbers, never dropped silently.
#include <istream>
#include <string>
#include <vector>

namespace trainsim {

struct LogIteration {
  long long iteration = 0;
  double time_s = 0;            // 0 when the line has no time
  double tflops_per_gpu = 0;    // as the framework reports it (Megatron counts recomputation)
  double tokens_per_s = 0;      // per GPU when the framework says so (torchtitan "tps")
};

struct TrainingLog {
  std::string format;           // "megatron", "torchtitan", "pytorch" or "unknown"
  std::vector<LogIteration> iterations;
  double max_allocated_bytes = 0;  // largest per-GPU allocation the log reports
  long long lines = 0;
  std::vector<long long> malformed_lines;  // 1-based line numbers of iteration lines that could not be read
};

TrainingLog parse_training_log(std::istream& in);

// Median iteration time after skipping the warm-up: the first `skip` iterations, or 10% of them when
// skip < 0 (at least the first one, which includes compilation and allocator warm-up).
struct LogSummary {
  int used = 0;
  double median_time_s = 0;
  double p10_time_s = 0, p90_time_s = 0;
  double median_tflops_per_gpu = 0;
  double median_tokens_per_s_per_gpu = 0;
};
LogSummary summarize(const TrainingLog& log, int skip = -1);

}  // namespace trainsim
