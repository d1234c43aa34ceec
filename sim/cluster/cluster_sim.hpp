#pragma once
// The cluster simulator: a discrete-event simulation on SimGrid of a shared GPU cluster under one
// scheduling policy. Actors: the scheduler (owns the cluster state and runs the policy at every event, or
// every cycle), the arrivals (one message per job at its submit time), one actor per running job (it sleeps
// for its run and reports its end; a failure or a preemption kills it), repair and spare-swap timers, and
// alarms for the next node failure (sim/reliability/failure_injector.hpp draws them per pool). A failure costs a job the
// work since its last checkpoint plus the recovery (detection, drain, reschedule, restart, warm-up); it then
// waits again in its old place. Several runs (policies) may follow each other in one process.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cluster_job.hpp"
#include "cluster_spec.hpp"
#include "sim/cluster/policies/scheduler_policy.hpp"

namespace trainsim::sim::cluster {

struct JobRecord {
  int index = 0;             // into the workload
  double submit_s = 0, start_s = -1, end_s = -1;  // first start; end of the last run (-1: never)
  // wait: all time queued, the first wait and every wait after a preemption or failure until the job ran again;
  // first_wait: until the first start (what traces record). Bounded slowdown: JCT / max(duration, 10 s).
  double wait_s = -1, first_wait_s = -1, jct_s = -1, slowdown = -1;
  int preemptions = 0, failures = 0, reclaims = 0;  // reclaims: runs stopped by a spot node taken back
  int resizes = 0;            // an elastic job's shrinks and growths
  int job_errors = 0;         // runs ended by a user or code error (job_failures.hpp)
  bool failed = false;        // its last retry failed too: it ended without finishing (end_s is then)
  double gpu_hours_lost = 0;  // rolled-back work and recoveries, GPU-hours
  int leaves = 0;             // leaf switches of its first placement
  bool finished = false;      // ended: its work done, or stopped at its walltime
  bool timed_out = false;     // stopped at its walltime before its work was done (Slurm: TIMEOUT)
  double work_done_s = -1;    // a timed-out job's work done (at full speed)
};

struct TimeSample {
  double t_s = 0;
  double allocated_gpus = 0, capacity_gpus = 0;
  int queued = 0, running = 0;
  double fragmented_gpus = 0;  // free GPUs no waiting job can use on their node
};

struct PolicyResult {
  std::string name;            // as asked: "backfill+topology"
  int jobs = 0;                // finished
  int rejected = 0;            // never started: larger than any pool, refused by the policy, or stuck on an idle cluster
  std::vector<std::pair<std::string, int>> rejected_reasons;  // why, in first-seen order
  int unfinished = 0;          // still waiting or running at the horizon
  int timed_out = 0;           // stopped at their walltime (counted among the ended jobs)
  double utilization = 0;      // allocated GPU-time / GPU-time in service, from the first arrival to the last end
  // The same from the first arrival to ClusterSimOptions::span_s after it (a synthetic workload's span: the load
  // the run delivered over the time it was asked for); 0 when no span is given.
  double utilization_in_span = 0;
  double mean_wait_s = 0, p50_wait_s = 0, p99_wait_s = 0, mean_jct_s = 0, makespan_s = 0;  // waits: all time queued
  double mean_first_wait_s = 0;  // until the first start only (comparable with a trace's recorded waits)
  double mean_slowdown = 0;
  int preemptions = 0, failures = 0;
  int spot_reclaims = 0;       // spot nodes taken back
  // User and code errors (job_failures.hpp): runs they ended, retries queued, jobs that failed for good (not counted
  // among the finished), and the GPU-hours those jobs held (allocated to work that finished nothing).
  int job_errors = 0, job_retries = 0, failed_jobs = 0;
  double failed_gpu_hours = 0;
  int resizes = 0;             // elastic jobs' shrinks and growths
  double gpu_hours_lost = 0;
  double goodput = 0;          // useful GPU-time (the jobs' durations) / allocated GPU-time
  // The jobs' own effective training time ratio, as `trainsim reliability` defines it for one job (work done over
  // wall time from its first start to its end: rework, recoveries and the waits for nodes or for the queue after
  // a failure all count against it), averaged over the finished jobs.
  double mean_job_ettr = 0;
  double allocated_at_end = 0; // allocated / in-service GPUs when the run stopped (the FGD allocation ratio under --fill)
  double waiting_gpus_at_end = 0;  // GPUs asked by jobs still waiting then
  int running_at_end = 0;
  double gpu_hours = 0;        // allocated
  double energy_kwh = 0, cost_usd = 0;  // allocated GPU-hours x the pool's power and price
  double carbon_kg = 0;        // the energy x the grid's intensity at the hour it was drawn (0: no intensity given)
  std::vector<JobRecord> records;
  std::vector<TimeSample> series;
  double sample_interval_s = 0;  // the series' spacing: as asked, doubled as often as the cap required
};

// The most time samples one run keeps: an interval too fine for the run's length is doubled until it fits.
inline constexpr std::size_t kMaxTimeSamples = 1'000'000;

struct ClusterSimOptions {
  std::string policy = "fifo";  // "ordering[+placement]"
  std::uint64_t seed = 1;
  // 0: 1/500 of the submit span plus a mean job's duration (at least 1 s), doubled whenever the run passes 1,000
  // samples; else as given, doubled whenever it passes kMaxTimeSamples.
  double sample_interval_s = 0;
  double horizon_s = 0;          // 0: until every job ends
  double span_s = 0;             // > 0: also measure the utilization over this long from the first arrival
  std::function<void(double)> progress;  // fraction of jobs ended (at most ~200 calls)
};


// Runs `jobs` (sorted by submit time) on `cluster` under one policy. Throws InputError for a bad policy name.
PolicyResult simulate_cluster(const ClusterSpec& cluster, const std::vector<ClusterJob>& jobs, const ClusterSimOptions& options);

}  // namespace trainsim::sim::cluster
