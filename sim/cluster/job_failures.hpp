#pragma once
// Job-level failures: user and code errors (exceptions, out-of-memory, bad data, timeouts in the user's code) that
// end a run early whatever the nodes do. In the GPU clusters whose summaries are in ../shared/traces/ they end 15-43%
// of GPU jobs (Helios, SenseTime: Hu et al., SC'21; Acme, Shanghai AI Lab: Hu et al., NSDI'24). Each run of a job
// (an attempt) fails with one probability, at a random point of the work it has left; a failed attempt is retried
// from the job's last checkpoint up to `retries` times (Kubernetes' backoffLimit; Slurm requeues no job that exited
// with an error, so 0 there), each retry queued again after an exponential backoff (Kubernetes: 10 s doubling, at
// most 6 min). A job whose last attempt fails ends as failed: the GPU time it held produced no finished result.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/scenario/spec.hpp"
#include "sim/random.hpp"

namespace trainsim::sim::cluster {

struct JobFailureSpec {
  std::string name = "none";          // the preset it came from, "custom", or "none"
  double attempt_failure_probability = 0;
  // Where a failing attempt stops, as a fraction of the work it had left: Beta(a, 1) with mean failure_point_mean
  // (a = m / (1 - m)); 0.5 is uniform.
  double failure_point_mean = 0.5;
  int retries = 0;
  double retry_backoff_s = 10, retry_backoff_max_s = 360;

  bool on() const { return attempt_failure_probability > 0; }
  // The fraction of its remaining work a failing attempt completes, drawn from `rng`.
  double failure_point(Rng& rng) const;
  // The backoff before retry k (1-based): retry_backoff_s x 2^(k-1), at most retry_backoff_max_s.
  double backoff_s(int retry) const;
};

// A trace summary's figures as a preset: the share of GPU jobs that failed is the attempt's failure probability, and
// the failure point's mean follows from the failed jobs' share of GPU time against the completed ones' (the same job
// sizes assumed): (failed GPU-time / completed GPU-time) x (completed jobs / failed jobs).
struct JobFailurePreset {
  const char* name;
  double fail_rate;        // failed GPU jobs / GPU jobs
  double complete_rate;    // completed GPU jobs / GPU jobs
  double fail_gpu_time;    // GPU-seconds of failed jobs
  double complete_gpu_time;  // GPU-seconds of completed jobs
  const char* source;
};
const std::vector<JobFailurePreset>& job_failure_presets();

// "job_failures": a preset name, "none", or {preset?, attempt_failure_probability, failure_point_mean, retries,
// retry_backoff, retry_backoff_max}; InputErrors name `path`.
JobFailureSpec parse_job_failures(const nlohmann::json& value, const std::string& path, std::vector<AppliedDefault>* defaults);
nlohmann::json to_json(const JobFailureSpec& f);

}  // namespace trainsim::sim::cluster
