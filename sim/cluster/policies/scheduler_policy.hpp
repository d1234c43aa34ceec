#pragma once
// Scheduling policies as plug-ins, registered by name, one file each (policy_*.cpp). A policy sees the
// waiting jobs in queue order and the running ones, and acts through the SchedulingPass: start a job (placed
// by the run's placement strategy: binpack, spread, topology), or preempt one (gang-aware: a whole job).
// It knows no nodes, clocks or actors; the simulator (cluster_sim.cpp) owns those.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/cluster/cluster_job.hpp"
#include "sim/cluster/cluster_spec.hpp"

namespace trainsim::sim::cluster {

// What the simulator knows of a job that a policy may use.
struct JobStatus {
  double attained_gpu_s = 0;   // GPU-seconds of service so far (Tiresias' attained service)
  double started_s = -1;       // start of the current run (-1: not running)
  double queued_since_s = 0;   // waiting since (its arrival, or its last preemption or failure)
  double run_s = 0;            // wall time it has run so far, all runs (Tiresias' executed time)
  double remaining_work_s = 0; // work left at full speed (the oracle's knowledge)
  int preemptions = 0;
};

class SchedulingPass {
 public:
  virtual ~SchedulingPass() = default;
  virtual double now() const = 0;
  // Job indices: waiting in queue order (arrival order; a requeued job keeps its place), running by start.
  virtual const std::vector<int>& waiting() const = 0;
  virtual const std::vector<int>& running() const = 0;
  virtual const ClusterJob& job(int j) const = 0;
  virtual const JobStatus& status(int j) const = 0;
  // Whether the job waits now, and how many times a job has entered the waiting queue so far (its arrival, and each
  // return after a preemption, failure or job error): a policy that keeps its own view of the queue between passes
  // (multifactor's sorted sets) learns from these what changed without reading the whole queue.
  virtual bool is_waiting(int j) const = 0;
  virtual std::uint64_t queue_entries() const = 0;
  // Would the job fit the free GPUs now (placement included)?
  virtual bool fits(int j) const = 0;
  // Would it fit once `victims` (running jobs) released their GPUs?
  virtual bool fits_without(int j, const std::vector<int>& victims) const = 0;
  // Starts the job; false when it does not fit or its queue has admitted its share of this pass.
  virtual bool start(int j) = 0;
  // Stops a running job: it loses the work since its last checkpoint and waits again.
  virtual void preempt(int j) = 0;
  // A backfill reservation (EASY; Slurm's sched/backfill): the earliest time the job fits by node shape, as the
  // running jobs release their very GPUs at their expected ends and beside the reservations made before it in
  // this pass; those GPUs are held for it from then for its expected runtime. +inf, and nothing reserved, when
  // that time lies beyond `window_s` from now.
  virtual double reserve(int j, double window_s) = 0;
  // Starts the job now on GPUs that no reservation of this pass needs before the job would end (so it delays
  // none of them); false when none fit.
  virtual bool start_beside_reservations(int j) = 0;
  // Asks for a pass at time t even if nothing happens by then (a periodic loop such as Slurm's backfill).
  virtual void wake_at(double t) = 0;
  // GPUs (whole) free now and in total in service.
  virtual double free_gpus() const = 0;
  virtual double total_gpus() const = 0;
  // Seconds a job is expected to run (the whole job when waiting, what is left when running): its requested
  // walltime when it has one, else the simulator's estimate (the oracle's true time, or a history estimate).
  virtual double expected_runtime(int j) const = 0;
  // The history estimate: the mean duration of the user's finished jobs (all users' when the user has none;
  // 0 before any job finished, so ties keep queue order).
  virtual double history_estimate(int j) const = 0;
  // GPUs a job holds (a fraction for a shared GPU), and the cluster's queues and policy settings.
  virtual double gpus(int j) const = 0;
  virtual const ClusterSpec& cluster() const = 0;
};

class SchedulerPolicy {
 public:
  virtual ~SchedulerPolicy() = default;
  virtual void schedule(SchedulingPass& pass) = 0;
  // Why the policy would never start this job, whatever else runs ("" when it may): such a job is rejected
  // with this reason when the run begins rather than left waiting for ever.
  virtual std::string never_starts(const ClusterJob& /*job*/, const ClusterSpec& /*cluster*/) const { return {}; }
};

// The waiting jobs by their queue's key, smallest first, queue order among equals: `key` is asked once per queue
// (the queue policies sort deep queues every pass; a lookup per comparison cost them most of a run).
std::vector<int> waiting_by_queue_key(const SchedulingPass& pass, const std::function<double(const std::string&)>& key);

struct PolicyInfo {
  std::string name;
  std::string description;
  std::string source;  // the scheduler or paper it follows
  std::function<std::unique_ptr<SchedulerPolicy>()> make;
};

const std::vector<PolicyInfo>& policies();  // sorted by name
const PolicyInfo* find_policy(const std::string& name);
struct RegisterPolicy {
  explicit RegisterPolicy(PolicyInfo info);
};

// "backfill+topology" -> ordering "backfill", placement "topology"; the placement defaults to binpack.
struct PolicyChoice {
  std::string text;       // as given
  std::string ordering;   // a registered policy
  std::string placement;  // binpack, spread, topology
};
// Throws InputError naming `path` and the known names when a part is unknown.
PolicyChoice parse_policy_choice(const std::string& text, const std::string& path);

}  // namespace trainsim::sim::cluster
