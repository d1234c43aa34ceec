#pragma once
// Reads the per-iteration timing and memory lines of real training logs, so a plan's prediction can be
// compared with what the job actually did: Megatron-LM ("elapsed time per iteration (ms)", "throughput
// per GPU (TFLOP/s/GPU)", "memory (MB) | ... max allocated"), torchtitan ("step: N ... tps: ... tflops:
// ... mfu: ... memory: X GiB"), DeepSpeed's throughput timer ("epoch=0/micro_step=40/global_step=10,
// RunningAvgSamplesPerSec=..., CurrSamplesPerSec=12.3, MemAllocated=10.5GB, MaxMemAllocated=20.1GB"), ms-swift ("'train_speed(iter/s)': 0.104, ... 'global_step/max_steps': '5/100'",
// "'memory(GiB)'"), Hugging Face Trainer's closing summary ("'train_steps_per_second': 0.51") and generic
// PyTorch/torchrun lines that name a step and its time ("step 120 ... step_time: 1.23s", "iter 5 | time 812.3 ms").
//
// Lines that look like iteration reports but cannot be used are skipped and counted with their line numbers
// and the reason, never dropped silently: a value that is not a number, negative, zero, NaN or infinite, out
// of range or absurdly long, an iteration number that is not one. Memory report lines with such a value are
// skipped the same way. Lines longer than kMaxLineBytes are not read (counted the same way).
//
// The reader is a hand-written scanner: linear in the length of the input, no recursion, no std::regex,
// bounded memory per line; any bytes (NUL, invalid UTF-8) are safe. parse_training_log(std::string_view) is
// the entry point for fuzzing.
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "calibrate/import_common.hpp"
#include "models/memory/memory.hpp"

namespace trainsim {

struct LogIteration {
  long long iteration = 0;
  double time_s = 0;            // > 0, or 0 when the line has no time (torchtitan)
  double tflops_per_gpu = 0;    // > 0 as the framework reports it (Megatron counts recomputation); 0: not reported
  double tokens_per_s = 0;      // > 0 per GPU when the framework says so (torchtitan "tps"); 0: not reported
  // > 0: samples (sequences) per second over all GPUs, the step's global batch over its time (DeepSpeed's
  // CurrSamplesPerSec: train_batch_size / the global step's elapsed time, deepspeed/utils/timer.py); 0: not reported
  double samples_per_s = 0;
  long long line = 0;           // 1-based line of the log it came from
};

struct TrainingLog {
  std::string format;           // "megatron", "torchtitan", "deepspeed", "ms-swift", "hf-trainer", "pytorch" or "unknown"
  std::vector<LogIteration> iterations;
  double peak_memory_bytes = 0;  // largest per-GPU memory figure the log reports
  // What that figure counts: Megatron's "max allocated" the allocator's live tensors, torchtitan's "memory:" its
  // reserved segments (torchtitan/metrics.py: reserved_bytes.all.peak).
  MemoryCounter memory_counter = MemoryCounter::AllocatorAllocated;
  // A mean step time over the whole run, warm-up included (Hugging Face Trainer's train_steps_per_second); 0 when the
  // log has none. Used only where the log reports no step by step time.
  double run_mean_step_time_s = 0;
  long long lines = 0;
  MalformedLines malformed;     // iteration-like (and memory report) lines skipped, with line numbers and reasons
};

TrainingLog parse_training_log(std::istream& in);
TrainingLog parse_training_log(std::string_view text);  // the same, from text in memory

// Median iteration time after skipping the warm-up: the first `skip` iterations, or 10% of them when
// skip < 0 (at least the first one, which includes compilation and allocator warm-up). When the warm-up
// takes every iteration, nothing is used (used = 0, all medians 0): the warm-up is never compared.
struct LogSummary {
  int iterations = 0;           // in the log
  int warmup = 0;               // left out as warm-up
  int used = 0;                 // iterations - warmup, or 0
  double median_time_s = 0;
  double p10_time_s = 0, p90_time_s = 0;
  double median_tflops_per_gpu = 0;
  double median_tokens_per_s_per_gpu = 0;
  double median_samples_per_s = 0;  // over all GPUs (DeepSpeed)
};
LogSummary summarize(const TrainingLog& log, int skip = -1);

}  // namespace trainsim
