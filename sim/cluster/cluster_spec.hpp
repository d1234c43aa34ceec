#pragma once
// The shared cluster the cluster simulator runs: node pools (GPU model, GPUs per node, nodes, price, spot,
// spares), how nodes hang under leaf switches, GPU sharing, failures and repairs, the default checkpoint
// interval of jobs that name none, and the scheduler's cycle. Read from a scenario's "cluster" section
// (the contract in scenarios/FORMAT.md) or made from a trace's own node list.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cluster_job.hpp"
#include "job_failures.hpp"
#include "models/reliability/failure_model.hpp"
#include "models/reliability/recovery_model.hpp"
#include "models/scenario/spec.hpp"

namespace trainsim::sim::cluster {

struct NodePool {
  std::string name;            // the pool's name (default: the GPU's)
  std::string gpu;             // GPU model: a trainsim preset (h100-sxm-80gb) or a trace's name (G2, T4)
  int gpus_per_node = 8;
  // Each node's CPU (thousandths of a core) and memory (MiB) for jobs that ask for them; 0: not limited.
  std::int64_t cpu_milli = 0, memory_mib = 0;
  int nodes = 1;               // nodes schedulable at the start
  int spare_nodes = 0;         // standby nodes that replace failed ones (not schedulable until then)
  double price_per_gpu_hour = 0;  // USD (0: unknown)
  double gpu_power_w = 0;      // board power per GPU for energy (the preset's TDP when a preset; 0: unknown)
  bool spot = false;
  // Spot capacity: each node in service is reclaimed at this rate (a Poisson process) and comes back this much
  // later; the jobs on it lose the work since their last checkpoint, as on a failure.
  double reclaims_per_node_day = 0;
  double reclaimed_for_s = 0;
  int total_gpus() const { return gpus_per_node * nodes; }
};

// A failure at a given time on a given node (what-ifs and tests), beside or instead of random failures.
struct ScriptedFailure {
  int node = 0;
  double at_s = 0;
  bool needs_replacement = true;  // hardware (the node goes to repair) or software (restart in place)
};

struct SchedulerCycle {
  double period_s = 0;         // 0: a pass at every event (arrival, end, failure); > 0: passes only every period
  double cost_s = 0;           // a pass's decisions take effect this much later (GPUs held meanwhile)
  int admissions_per_queue = 0;  // most jobs a queue admits per pass (Kueue: 1); 0: no limit
};

// Slurm's backfill loop (sched/backfill; slurm.conf SchedulerParameters, defaults as Slurm 22.05's): every
// `interval_s` it walks up to `depth` waiting jobs in priority order, starting each that delays no earlier job's
// reservation and reserving GPUs for each that cannot start, up to `window_s` ahead.
struct BackfillSettings {
  double interval_s = 30;   // bf_interval
  int depth = 500;          // bf_max_job_test
  double window_s = 86400;  // bf_window (1,440 minutes)
};

// Slurm's priority/multifactor (slurm.conf PriorityWeight*, PriorityMaxAge, PriorityDecayHalfLife, PriorityFavorSmall),
// the `multifactor` policy's job priority: the weighted sum of an age factor (time queued over max_age, at most 1), a
// fair-share factor (Fair Tree, Slurm's default since 19.05, over the workload's users with equal shares: usage decayed
// with the half-life), a job-size factor (GPUs asked over the cluster's; 1 minus that when favor_small) and a QOS factor
// (the job's priority over the largest). Defaults: the example configuration of Slurm's priority/multifactor guide.
struct MultifactorSettings {
  double weight_age = 1000, weight_fairshare = 10000, weight_job_size = 1000, weight_qos = 0;
  double max_age_s = 14 * 86400.0;
  double decay_half_life_s = 14 * 86400.0;
  bool favor_small = false;
};

// Per-user limits (Slurm's MaxJobsPerUser and MaxTRESPerUser=gres/gpu=N on a QOS or association): a user's jobs
// beyond them stay pending, skipped by the scheduler (Slurm's reasons QOSMaxJobsPerUserLimit, QOSMaxGRESPerUser)
// without holding back other users' jobs. 0: no limit.
struct UserLimits {
  int max_running_jobs = 0;
  double max_gpus = 0;
  bool any() const { return max_running_jobs > 0 || max_gpus > 0; }
};

// A queue with a guaranteed share (Kueue ClusterQueue nominal quota, Volcano queue capability / guarantee):
// its jobs may borrow GPUs other queues leave idle, up to a limit, and get their quota back by preemption.
struct QueueSpec {
  std::string name;
  double quota_gpus = 0;             // guaranteed (nominal) GPUs
  double borrowing_limit_gpus = -1;  // most GPUs beyond the quota (-1: any idle GPU)
  // Kueue: queues borrow only within their cohort (the unused quota its queues lend, and the GPUs no queue is
  // guaranteed), and take back lent GPUs from their cohort first; a queue lends at most lending_limit_gpus of its
  // unused quota (-1: all of it), keeping the rest for itself. Queues without a cohort share the cohort "".
  std::string cohort;
  double lending_limit_gpus = -1;
  double weight = 1;                 // fair-share weight (drf, proportion)
  // Volcano queue (proportion): `capability` caps what the queue may ever hold (-1: none), and `guarantee` is kept
  // for it: other queues' shares come out of the rest (Queue.spec.capability, Queue.spec.guarantee).
  double capability_gpus = -1;
  double guarantee_gpus = 0;
};

struct ClusterSpec {
  std::vector<NodePool> pools;
  int nodes_per_leaf = 32;
  double oversubscription = 1;
  bool gpu_sharing = false;       // jobs asking for a fraction of a GPU may share one (Alibaba 2023)
  bool failures_on = false;
  FailureModel failures;
  RecoverySettings recovery;      // detection, drain, restart, warm-up; repair times of failed nodes
  std::vector<ScriptedFailure> scripted_failures;
  JobFailureSpec job_failures;    // user and code errors that end runs early, and their retries
  double checkpoint_interval_s = 3600;  // jobs that name none
  SchedulerCycle cycle;
  BackfillSettings backfill;
  MultifactorSettings priority;      // `multifactor`'s job priority
  UserLimits user_limits;            // every user's
  std::map<std::string, UserLimits> user_limit_overrides;  // by user name, replacing user_limits
  const UserLimits& limits_of(const std::string& user) const;
  // Accounts (Slurm associations) with group limits on what all their users' jobs hold at once: GrpJobs and
  // GrpTRES=gres/gpu=N as max_running_jobs and max_gpus. A job's account is its own, else its user's.
  std::map<std::string, UserLimits> account_limits;
  std::map<std::string, std::string> user_accounts;  // user -> account
  const std::string& account_of(const ClusterJob& job) const;
  const UserLimits* account_limits_of(const ClusterJob& job) const;  // null: no account, or one without limits
  bool has_user_limits() const;  // per-user or per-account limits
  std::vector<QueueSpec> queues;     // for `quota` and `drf`; jobs of a queue not listed have no quota
  // `las`: attained-service thresholds (GPU-seconds) between its priority queues (Tiresias' discretized LAS).
  std::vector<double> las_thresholds_gpu_s{3600};
  // las's starvation guard (Tiresias' PromoteKnob): a job waiting at least this many times its executed time
  // goes back to the first queue; 0: no guard.
  double las_promote_knob = 0;
  // Grid carbon intensity, g CO2 per kWh, by hour of day (24 values; one value: flat), hour 0 at time 0
  // (shifted by carbon_start_hour); empty: no emissions reported.
  std::vector<double> carbon_g_per_kwh;
  double carbon_start_hour = 0;
  const QueueSpec* queue(const std::string& name) const;
  int total_gpus() const;
  int total_nodes() const;        // schedulable at the start (spares excluded)
  int max_gpus_per_node() const;
};

// The scenario's "cluster" section; `path` is for errors ("/cluster").
ClusterSpec parse_cluster(const nlohmann::json& value, const std::string& path, std::vector<AppliedDefault>* defaults);
// A cluster made of a trace's node list (one pool per GPU model and node size), with `base`'s other settings.
ClusterSpec cluster_from_trace_nodes(const std::vector<TraceNodePool>& nodes, ClusterSpec base);
nlohmann::json to_json(const ClusterSpec& c);

}  // namespace trainsim::sim::cluster
