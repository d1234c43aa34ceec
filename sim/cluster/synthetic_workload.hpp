#pragma once
// A synthetic workload fitted to a trace, for what-ifs at other scales: Poisson arrivals over a given span;
// GPU counts drawn from the trace's own mix (capped at the largest pool); durations lognormal per GPU count,
// their log-mean and log-sd fitted by maximum likelihood to the trace's jobs of that count (all jobs' fit
// where a count has fewer than 10), truncated at the longest job the trace has of that count (an untruncated
// lognormal tail would put jobs of years into a year), then scaled by one factor so the offered GPU-time is
// `load` of the cluster's over the span. Users are drawn from the trace's mix too.
#include <cstdint>
#include <string>
#include <vector>

#include "cluster_job.hpp"

namespace trainsim::sim::cluster {

struct WorkloadFit {
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
};

// Fits the mix of `jobs` (a trace's; durations must be positive to count). Throws InputError when none can.
WorkloadFit fit_workload(const std::vector<ClusterJob>& jobs, const std::string& source);
// Jobs sorted by submit time; the duration scale that meets `load` is returned in *duration_scale.
std::vector<ClusterJob> synthesize_workload(const WorkloadFit& fit, const SyntheticSpec& spec, double* duration_scale);

}  // namespace trainsim::sim::cluster
