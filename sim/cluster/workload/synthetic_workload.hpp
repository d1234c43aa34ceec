#pragma once
// A synthetic workload fitted to a trace, for what-ifs at other scales. Two models:
//  - `blocks` (the default): a moving-block bootstrap of the trace's own job sequence (Kunsch 1989): runs of
//    consecutive jobs (gap to the previous arrival, GPUs, duration, user) drawn at random places of the trace
//    and laid end to end. Bursts (a sweep of identical jobs in one second), the size mix, the durations and
//    their correlation with bursts stay the trace's; a Poisson process loses them (on Chronus at its own load,
//    a FIFO wait of 0 s against the trace's 4.5 min).
//  - `poisson`: Poisson arrivals; GPU counts from the trace's mix; durations lognormal per GPU count, log-mean
//    and log-sd fitted by maximum likelihood to the trace's jobs of that count (all jobs' fit where a count has
//    fewer than 10), truncated at the longest job the trace has of that count.
// Either way jobs larger than the cluster's largest pool are left out, the gaps are stretched so the arrivals
// span `span_s`, and the durations scaled by one factor so the GPU-time offered within the span is `load` of the
// cluster's: a job arriving late counts only up to the span's end, so a run that keeps up delivers that load over
// the span (scaling the whole GPU-time instead let the long jobs of a heavy tail run on for months past a year
// and deliver 0.54 where 0.8 was asked).
#include <cstdint>
#include <string>
#include <vector>

#include "sim/cluster/cluster_job.hpp"

namespace trainsim::sim::cluster {

enum class SyntheticModel { Blocks, Poisson };

struct WorkloadFit {
  // The trace's jobs in submit order, for the block bootstrap.
  struct Job {
    double gap_s = 0;  // since the previous job's arrival (0 for the first)
    int gpus = 1;
    double duration_s = 0;
    std::string user;
  };
  std::vector<Job> sequence;
  struct SizeClass {
    int gpus = 1;
    double share = 0;          // of the jobs
    double log_mean = 0, log_sd = 0;  // of the duration in seconds
    double log_max = 0;               // the longest duration of the class in the trace (the truncation)
    int jobs = 0;
    double mean_duration() const;     // of the truncated lognormal
  };
  std::vector<SizeClass> sizes;   // by GPU count
  std::vector<std::pair<std::string, double>> users;  // name, share
  std::string source;
  double mean_gpu_seconds() const;  // E[gpus x duration] of the fitted mix
};

struct SyntheticSpec {
  int jobs = 1000;
  double span_s = 86400;      // arrivals from 0 to about this time
  double load = 0.8;          // offered GPU-time / (cluster GPUs x span)
  int cluster_gpus = 8;
  int max_gpus = 8;           // the largest job the cluster can hold
  std::uint64_t seed = 1;
  SyntheticModel model = SyntheticModel::Blocks;
  // Consecutive trace jobs per block; 0: the square root of the trace's jobs (175 for Chronus' 30,756: bursts last
  // tens of jobs, and its swings of load, which decide the waits, minutes: longer blocks keep more of both).
  int block_jobs = 0;
};

// How far a synthetic workload is from its trace: each side's arrival burstiness (the coefficient of variation of
// the gaps: 1 for Poisson), the share of jobs arriving in the same second as the previous one, and the median
// duration (before the load's scaling, for the synthetic side).
struct WorkloadComparison {
  double trace_gap_cv = 0, synthetic_gap_cv = 0;
  double trace_same_second = 0, synthetic_same_second = 0;
  double trace_median_duration_s = 0, synthetic_median_duration_s = 0;
};
WorkloadComparison compare_workloads(const WorkloadFit& fit, const std::vector<ClusterJob>& synthetic, double duration_scale);

// The GPU-time `jobs` offer from the first arrival to `span_s` after it, their durations times `scale`, over the
// cluster's in that time.
double load_in_span(const std::vector<ClusterJob>& jobs, double cluster_gpus, double span_s, double scale = 1);
// Scales the durations of `jobs` (sorted by submit time) by the one factor that makes load_in_span equal `load`,
// and returns it; an InputError when even jobs running to the span's end offer less.
double scale_to_load_in_span(std::vector<ClusterJob>& jobs, double load, double cluster_gpus, double span_s);

// Fits the mix of `jobs` (a trace's; durations must be positive to count). Throws InputError when none can.
WorkloadFit fit_workload(const std::vector<ClusterJob>& jobs, const std::string& source);
// Jobs sorted by submit time; the duration scale that meets `load` is returned in *duration_scale.
std::vector<ClusterJob> synthesize_workload(const WorkloadFit& fit, const SyntheticSpec& spec, double* duration_scale);

}  // namespace trainsim::sim::cluster
