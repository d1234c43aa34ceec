#pragma once
// One training job's timeline under failures, simulated many times: run, checkpoint every interval,
// fail (FailureInjector), detect, drain, reschedule onto a spare (or wait for a repaired node, or
// continue on fewer data-parallel replicas when elastic), restart, reload, warm up, and go on until
// the work is done or the window ends. Between events the progress follows in closed form (whole
// checkpoint cycles at once), so a run costs O(failures), and a run allocates nothing once its
// buffers have grown. Runs are spread over threads; run i always uses the random streams derived from
// (seed, i), so results do not depend on the number of threads.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

#include "models/reliability/failure_model.hpp"
#include "sim/reliability/failure_injector.hpp"

namespace trainsim::sim {

struct JobSimConfig {
  int nodes = 1;
  int gpus_per_node = 8;
  double window_s = std::numeric_limits<double>::infinity();  // wall-clock limit
  double work_s = std::numeric_limits<double>::infinity();    // full-speed compute seconds to finish the training
  // Checkpoints, seconds.
  double interval_s = 3600;  // compute between two checkpoints
  double blocking_s = 0;     // training paused per checkpoint
  double persist_s = 0;      // after the pause, until the checkpoint survives a failure (async / in-memory)
  // >= 0: an emergency checkpoint on a detected failure (survivors save the last completed step from a healthy replica):
  // a crash loses at most this much compute; its save is part of the recovery (drain_s).
  double emergency_loss_s = -1;
  // Recovery, seconds.
  double detection_s = 0, drain_s = 0, reschedule_s = 0, restart_s = 0, reload_s = 0, warmup_s = 0;
  double fixed_recovery_s = -1;  // >= 0: from the failure to training again, replacing the parts (waits for nodes still add)
  int spare_nodes = 0;           // nodes ready to swap in; a failed node returns to the pool after a repair
  std::shared_ptr<const TimeDistribution> repair;  // repair time of a failed node (null: never back)
  bool elastic = false;
  // Speed relative to the full job with k nodes out (elastic_speed[0] = 1); its size - 1 is the most
  // nodes that may be out before the job waits for nodes instead of shrinking further.
  std::vector<double> elastic_speed{1.0};
  // A run stops after this many failures and is reported as cut short (RunResult::truncated). The whole-job
  // checks in build_reliability_job bound the expected failures of a run; this caps what one run may cost in
  // time and memory (the repair heap and the injector's undo log grow with it) whatever a variant does.
  std::uint64_t max_events = 1'000'000;

  // Checkpoint cost per cycle: the pause, plus any wait for the previous persist to finish.
  double effective_blocking_s() const { return blocking_s + (persist_s > interval_s ? persist_s - interval_s : 0.0); }
  // The recovery after a failure with a spare free (or in place), as the closed forms' R.
  double recovery_s(bool replace_node) const;
  bool operator==(const JobSimConfig&) const = default;
};

struct RunResult {
  double wall_s = 0;         // until the work was done or the window ended
  double progress_s = 0;     // full-speed compute seconds of training kept
  int interruptions = 0;     // job-killing failures, including those during a recovery
  int crashes = 0;           // failures while the job ran or checkpointed (they roll work back)
  double rework_s = 0;       // progress rolled back to the last checkpoint
  double checkpoint_s = 0;   // wall time paused for checkpoints
  double recovery_s = 0;     // wall time detecting, draining, rescheduling, restarting, reloading, warming up
  double wait_s = 0;         // wall time waiting for a repaired node (no spare free)
  double shrunk_s = 0;       // wall time running on fewer nodes (elastic)
  double reconfigure_s = 0;  // planned stops to grow back to full size (elastic)
  bool finished = false;     // the work was done within the window
  bool truncated = false;    // stopped after max_events failures (its numbers cover the time until then)
  double ettr() const { return wall_s > 0 ? progress_s / wall_s : 1.0; }
};

// The checkpoint cycle of a configuration: interval_s of compute, then the pause (and any wait for the
// previous checkpoint to persist). Shared by the simulator and the replay of a recorded failure stream
// (shared_failures.hpp), so both account a running stretch identically.
class CheckpointCycle {
 public:
  explicit CheckpointCycle(const JobSimConfig& c)
      : tau_(c.interval_s), delta_(c.effective_blocking_s()), persist_(c.persist_s), period_(tau_ + delta_), emergency_(c.emergency_loss_s) {}
  struct Advance {
    double compute = 0, blocked = 0, durable_compute = 0;
  };
  // A running stretch of dt from a fresh checkpoint cycle.
  Advance advance(double dt) const {
    Advance c = periodic(dt);
    // An emergency checkpoint keeps all but the step in progress.
    if (emergency_ >= 0) c.durable_compute = std::max(c.durable_compute, std::max(0.0, c.compute - emergency_));
    return c;
  }
  // The periodic checkpoints alone.
  Advance periodic(double dt) const {
    Advance c;
    if (!(dt > 0)) return c;
    if (!std::isfinite(tau_)) {  // no checkpoints: everything since the start of the stretch is at risk
      c.compute = dt;
      return c;
    }
    const double k = std::floor(dt / period_), rem = dt - k * period_;
    c.compute = k * tau_ + std::min(rem, tau_);
    c.blocked = k * delta_ + std::max(0.0, rem - tau_);
    // Checkpoint j completes its pause at j·period and survives a failure persist_s later: the k-th (the last
    // whole cycle's) once the stretch runs persist_s past it, the (k-1)-th always (persist_s <= period: an
    // interval shorter than the persist time waits for it, effective_blocking_s).
    const double durable = rem >= persist_ ? k : std::max(0.0, k - 1);
    c.durable_compute = durable * tau_;
    return c;
  }
  // Wall time to do `compute` from a fresh cycle.
  double time_to_compute(double compute) const {
    if (!(compute > 0)) return 0;
    if (!std::isfinite(tau_)) return compute;
    // Checkpoints after every full interval but the last: ceil(compute / tau) - 1 of them.
    const double checkpoints = std::max(0.0, std::ceil(compute / tau_) - 1);
    return compute + checkpoints * delta_;
  }
  // When a stretch from t with `compute` still to do ends the training, if it does by `limit`; else infinity.
  // (Skips the checkpoint count when even failure-free compute would not get there: the usual case in a window.)
  double finish_time(double t, double compute, double limit) const {
    if (!std::isfinite(compute)) return std::numeric_limits<double>::infinity();
    if (t + compute > limit) return std::numeric_limits<double>::infinity();  // time_to_compute(x) >= x
    return t + time_to_compute(compute);
  }

 private:
  double tau_, delta_, persist_, period_, emergency_;
};

class JobSimulator {
 public:
  JobSimulator(const JobSimConfig& config, const FailureModel& model);
  // One run from its seed; allocates nothing once the buffers have grown.
  RunResult run(std::uint64_t seed);
  const JobSimConfig& config() const { return cfg_; }

 private:
  double recover(double fail_time, RunResult* r);  // handles the pending failure and any during the recovery
  void take_returns(double now);                // repaired nodes back by `now`: to the job (elastic) or the spare pool
  void grow(double now);                        // elastic: bring nodes back from spares and returns
  double speed() const { return cfg_.elastic_speed[static_cast<std::size_t>(out_.size())]; }

  JobSimConfig cfg_;
  CheckpointCycle cycle_;
  FailureInjector injector_;
  Rng repair_rng_;
  std::vector<double> repairs_;  // min-heap of the times failed nodes come back
  std::vector<int> out_;         // nodes out of the job (elastic shrink)
  int spares_ = 0;
  double last_wait_ = 0, last_recovery_ = 0;  // the parts of the latest recovery (cut at the window's end)
  std::uint64_t failures_ = 0;                // consumed in this run (max_events)
  bool truncated_ = false;
};

// Progress across several Monte-Carlo batches: report(fraction of the planned runs done), called
// from the thread that started the batch only.
struct ProgressCounter {
  std::function<void(double)> report;
  double planned_runs = 0;
  double done_runs = 0;
};

struct MonteCarloOptions {
  int runs = 1000;
  std::uint64_t seed = 1;
  int threads = 0;  // 0: every core
  ProgressCounter* progress = nullptr;
  // simulate_variants keeps ~20 bytes per variant and run until the statistics: beyond this many variant-runs
  // (200 MB) it simulates the variants in groups, drawing the failures again for each.
  double max_variant_runs = 1e7;
};

// results[i] is run i; identical for any number of threads.
std::vector<RunResult> run_job_montecarlo(const JobSimConfig& config, const FailureModel& model, const MonteCarloOptions& options);

struct Statistic {
  int n = 0;
  double mean = 0, stddev = 0, p05 = 0, p50 = 0, p95 = 0;
  double ci95_low = 0, ci95_high = 0;  // 95% confidence interval of the mean (normal approximation)
};
// The confidence interval is kept within [lowest, highest], the values the quantity can take (ETTR in
// [0, 1], counts and durations >= 0): a normal approximation near a bound would otherwise cross it.
Statistic summarize(std::vector<double> values, double lowest = -std::numeric_limits<double>::infinity(),
                    double highest = std::numeric_limits<double>::infinity());

struct JobStatistics {
  int runs = 0;
  Statistic ettr, interruptions, wall_s, progress_s, lost_gpu_hours;
  double lost_work_per_crash_s = 0;  // all rework over all crashes
  double crashes_mean = 0;
  double rework_s = 0, checkpoint_s = 0, recovery_s = 0, wait_s = 0, shrunk_s = 0, reconfigure_s = 0;  // means per run
  double finished_fraction = 0;
  int truncated_runs = 0;            // runs stopped after max_events failures
};
// Lost GPU-hours: the job's GPUs times the wall time that did not become kept progress.
JobStatistics summarize_runs(const std::vector<RunResult>& runs, int gpus);

}  // namespace trainsim::sim
