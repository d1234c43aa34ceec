#pragma once
// Many variants of one job on the same failures, cheaply. A study (checkpoint intervals, methods, spare
// nodes, MTBF, checkpoint cost and restart time) asks how the same job fares under the same failures
// (common random numbers: run i of every variant uses the seeds of run i). For a job that does not
// shrink, the failures do not depend on what the job does: every failure renews a part and the node stays
// in the pool, so run i's failure times, failing components and repair draws are the same for every
// checkpoint interval, method, recovery time or spare count. They are drawn once per run (FailureTape)
// and replayed:
//
//   FailureTape   run i's failures in time order (time, needs a new node, repair duration), drawn on
//                 demand from the FailureInjector exactly as JobSimulator::run draws them;
//   PoolReplay    the spare pool over the tape for a number of spare nodes and an MTBF factor (every failure
//                 time stretched by it: the same draws scaled, exact for any family whose parameter is a
//                 scale, as exponential and Weibull are): for each failure that needs a new node, a spare
//                 swapped in, or the time the first node is back from repair when none is free;
//   Timeline      the job's stretches between failures for one recovery configuration (durations) over a
//                 pool replay: when it crashes, how long the recovery takes (failures during it restart
//                 it), when it resumes;
//   fold          one variant's checkpoint cycle over a timeline: the progress kept and lost.
//
// A timeline does not depend on the checkpoint interval or cost, so the interval sweep, the checkpoint
// methods with the same restore time and the checkpoint-cost sensitivities are one fold each over a shared
// timeline. The replay gives results identical to JobSimulator::run on the same seed (tested). Elastic
// jobs change the failures (a node out of the job no longer fails in it), so elastic variants are
// simulated in full, on the same seeds.
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "sim/reliability/failure_injector.hpp"
#include "sim/reliability/job_montecarlo.hpp"

namespace trainsim::sim {

struct TapeEvent {
  double time_s = 0;       // infinity: no more failures
  double repair_s = 0;     // needs_replacement: the failed node's repair draw (infinity: never back)
  bool needs_replacement = false;
};

class FailureTape {
 public:
  // `repair`: the repair-time distribution (null: a failed node never comes back).
  FailureTape(const FailureModel& model, int nodes, int gpus_per_node, std::shared_ptr<const TimeDistribution> repair);
  // Run `seed` (as JobSimulator::run takes it): forget the events, restart the streams.
  void reset(std::uint64_t seed);
  // Failure k of the run, drawn when first asked for.
  const TapeEvent& at(std::size_t k) {
    while (events_.size() <= k) draw();
    return events_[k];
  }
  std::size_t drawn() const { return events_.size(); }

 private:
  void draw();
  FailureInjector injector_;
  std::shared_ptr<const TimeDistribution> repair_;
  Rng repair_rng_;
  std::vector<TapeEvent> events_;
};

// The spare pool over a tape: which failures wait for a repaired node, and until when. It depends on the failure
// times and repairs only, never on the job's timeline: a spare is taken at the failure and a node returns to
// the pool when repaired, whatever the job does meanwhile.
class PoolReplay {
 public:
  struct Event {
    double time_s = 0;  // scaled by the MTBF factor
    double ready_s = -std::numeric_limits<double>::infinity();  // no spare free: when the first node is back
    bool needs_replacement = false;
  };
  PoolReplay(FailureTape* tape, double mtbf_factor, int spare_nodes);
  void reset();  // after the tape's reset
  const Event& at(std::size_t k) {
    while (events_.size() <= k) resolve();
    return events_[k];
  }
  double time_of(std::size_t k) { return tape_->at(k).time_s * factor_; }
  double mtbf_factor() const { return factor_; }
  int spare_nodes() const { return spare_nodes_; }

 private:
  void resolve();
  FailureTape* tape_;
  double factor_;
  int spare_nodes_, spares_ = 0;
  std::vector<double> repairs_;  // min-heap of the times failed nodes come back
  std::vector<Event> events_;
};

// What a timeline depends on: the recovery, the spares, the window, the failure-time factor.
struct TimelineKey {
  double mtbf_factor = 1;
  int spare_nodes = 0;
  double detection_s = 0, drain_s = 0, reschedule_s = 0, restart_s = 0, reload_s = 0, warmup_s = 0, fixed_recovery_s = -1;
  double window_s = 0;
  std::uint64_t max_events = 0;
  static TimelineKey of(const JobSimConfig& c, double mtbf_factor);
  bool operator==(const TimelineKey&) const = default;
};

// One running stretch of a run: from `start` (a fresh checkpoint cycle) until the failure at `crash`,
// then the recovery until `resume`.
struct Stretch {
  double start = 0, crash = 0, resume = 0;
  double wait_s = 0, recovery_s = 0;  // the recovery's parts (as JobSimulator::recover splits them)
  int interruptions = 0;              // the crash and the failures during its recovery
  bool truncated = false;             // max_events reached in this recovery
  bool waited = false;                // a failure in it found no spare free (an elastic job would shrink there)
};

class Timeline {
 public:
  // `pool`: the replay of the key's spare nodes and MTBF factor.
  Timeline(PoolReplay* pool, const TimelineKey& key);
  void reset();  // after the tape's reset
  // Stretch j of the run, built when first asked for.
  const Stretch& at(std::size_t j) {
    while (stretches_.size() <= j) extend();
    return stretches_[j];
  }
  const TimelineKey& key() const { return key_; }

 private:
  void extend();
  PoolReplay* pool_;
  TimelineKey key_;
  std::vector<Stretch> stretches_;
  std::size_t next_ = 0;  // the next failure of the tape not yet consumed
  std::uint64_t failures_ = 0;
};

// One run of `config` (not elastic) replayed over `timeline` (built for the same recovery and window): the
// same RunResult JobSimulator::run gives on the same seed.
RunResult fold(const JobSimConfig& config, Timeline& timeline);
// The same for n configurations over one timeline at once (out[i] for configs[i]): each stretch is read once.
// `waited` (if given): waited[i] is whether run i met a failure with no spare free. Until then an elastic job
// runs exactly as one that is not (it shrinks only then), so its run is the fold's when it did not.
void fold(const JobSimConfig* const* configs, std::size_t n, Timeline& timeline, RunResult* out, bool* waited = nullptr);

// A variant of a study: a configuration of the job, and the factor on its MTBF (1: the job's failures;
// f: every failure time stretched by f, with the same draws).
struct StudyVariant {
  JobSimConfig config;
  double mtbf_factor = 1;
};

// Runs every variant `options.runs` times on the same seeds in one pass over the runs: run i draws its
// failures once and every variant with the first variant's nodes and repair distribution replays them; an
// elastic variant's run is simulated in full (with `model` scaled by its factor) only when a failure found
// no spare free (it shrinks there, and its failures change). Statistics per variant, identical for any
// number of threads.
std::vector<JobStatistics> simulate_variants(const FailureModel& model, int gpus, const std::vector<StudyVariant>& variants,
                                             const MonteCarloOptions& options);

}  // namespace trainsim::sim
