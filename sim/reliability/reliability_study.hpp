#pragma once
// Questions asked of a ReliabilityJob, each answered by Monte-Carlo batches with common random numbers
// (every variant sees the same seeds): which checkpoint interval is best, what changes with another
// checkpoint method, spare nodes or elastic shrink, how sensitive goodput is to MTBF, checkpoint cost
// and restart time, and how ETTR falls as the blocking checkpoint cost grows (the frontier).
//
// A study runs its variants together (simulate_variants, shared_failures.hpp): run i's failures are drawn
// once and replayed by every variant that does not shrink, so a variant costs a fraction of a simulation.
// Every variant keeps the full number of runs.
#include <optional>
#include <string>
#include <vector>

#include "sim/reliability/job_montecarlo.hpp"
#include "sim/reliability/job_setup.hpp"
#include "sim/reliability/shared_failures.hpp"

namespace trainsim::sim {

struct StudyRow {
  std::string label;
  JobSimConfig config;
  double mtbf_s = 0;
  double recovery_s = 0;          // the closed forms' R for this configuration
  JobStatistics stats;
  // 1 - first-order waste (Young 1974 / Daly 2006); none where the first-order waste exceeds 100%: the
  // model assumes few failures per interval and is meaningless there (it would give a negative ETTR).
  std::optional<double> first_order_ettr;
  std::optional<double> model_ettr;  // Daly 2006's complete model for exponential failures (none when undefined)
  std::string method;
  // USD; none when the GPU price is unknown (never $0).
  std::optional<double> cost;        // the job's GPUs for the mean wall time
  std::optional<double> lost_cost;   // mean lost GPU-hours x price
  std::optional<double> spare_cost;  // the spare nodes held for the mean wall time
};

// The closed forms' R for a configuration: the recovery with a spare free, weighted by the share of
// failures that need a new node.
double closed_form_recovery_s(const JobSimConfig& c, double replacement_share);

// A row from a variant's statistics: closed forms at its configuration and MTBF, costs at the job's price.
StudyRow make_row(const ReliabilityJob& job, const JobSimConfig& config, double mtbf_s, const JobStatistics& stats, const std::string& label);

StudyRow simulate(const ReliabilityJob& job, const JobSimConfig& config, const FailureModel& failures, const std::string& label,
                  const MonteCarloOptions& mc);

struct IntervalSweep {
  std::vector<StudyRow> rows;  // by interval
  std::size_t best = 0;        // the row with the highest mean ETTR
  double best_interval_s() const { return rows.empty() ? 0 : rows[best].config.interval_s; }
};
// Intervals from a quarter to four times `center` on a geometric grid of 2^(1/3) (13 points), then the two
// half-steps (2^(±1/6)) either side of the best; the best by mean ETTR. Batches: sweep_batches().
IntervalSweep sweep_intervals(const ReliabilityJob& job, const JobSimConfig& base, double center_s, const MonteCarloOptions& mc);

// Time lost per run of the job as configured (wall-clock that did not become kept training: the lost GPU-hours
// over the job's GPUs), as counted from the base variant's runs: a histogram and the
// statistics the result table shows. Empty (no bins) when the command did not ask for the per-run results.
struct LostTimeDistribution {
  std::vector<double> edges_h;  // bins' edges, hours: bins + 1 values, ascending
  std::vector<int> runs;        // runs per bin [edges_h[i], edges_h[i + 1]) (the last bin includes its top)
  double mean_h = 0, p05_h = 0, p95_h = 0;
};

// The base variant's runs once more (the same seeds: the runs the study summarised), binned in about sqrt(runs) bins.
LostTimeDistribution lost_time_distribution(const ReliabilityJob& job, const StudyRow& base, MonteCarloOptions mc);

constexpr int sweep_batches() { return 15; }

// Sync / async / in-memory / incremental checkpointing; with and without spare nodes; elastic vs
// restart at full size (without spares, where it matters). `base` is the configured job's row (its first line).
std::vector<StudyRow> what_if(const ReliabilityJob& job, const StudyRow& base, const MonteCarloOptions& mc);
int what_if_batches(const ReliabilityJob& job);

struct SensitivityRow {
  std::string parameter;  // "MTBF", "checkpoint cost", "restart time"
  double factor = 1;
  StudyRow at_current;    // at the base interval
  StudyRow at_own;        // at its own interval (the job's rule: Daly unless given)
};
// MTBF, checkpoint cost and restart time x0.5 and x2.
std::vector<SensitivityRow> sensitivity(const ReliabilityJob& job, const StudyRow& base, const MonteCarloOptions& mc);
constexpr int sensitivity_batches() { return 12; }

struct FrontierPoint {
  double checkpoint_cost_s = 0;
  StudyRow best;                   // at the best of three intervals around the exact optimum
  double model_ettr = 0;           // Daly's complete model at the exact optimum
  double instant_recovery_ettr = 0;  // Monte-Carlo with R = 0 at the exact optimum: the bound
};
// ETTR against the blocking checkpoint cost (persist 0), each cost at its best interval.
std::vector<FrontierPoint> frontier(const ReliabilityJob& job, const std::vector<double>& costs_s, const MonteCarloOptions& mc);
constexpr int frontier_batches_per_cost() { return 4; }
// The cost at which mean ETTR falls through `level` (linear between frontier points); negative when it never
// does (ETTR stays above `level` at every cost shown), 0 when it is below `level` at every cost shown.
double frontier_crossing_s(const std::vector<FrontierPoint>& points, double level, bool instant_recovery = false);

// ---- The whole study, as `trainsim reliability` runs it -------------------------------------------------

struct StudyOptions {
  bool what_if = true;       // the what-if table
  bool sensitivity = true;   // the sensitivity table
  std::vector<double> frontier_costs_s;  // empty: no frontier
};
struct Study {
  StudyRow base;                // the job as configured (interval "best": the sweep's best row)
  IntervalSweep sweep;
  std::vector<StudyRow> what_if;
  std::vector<SensitivityRow> sensitivity;
  std::vector<FrontierPoint> frontier;
};
// How many passes over the runs run_study plans (for progress): 1, and 2 for interval "best" (the what-ifs run at
// the simulated best). One more when the sweep's best lies beyond the neighbours folded with the grid.
int study_passes(const ReliabilityJob& job, const StudyOptions& options);
// Every variant of every table on the same seeds, `mc.runs` runs each, in study_passes() passes; mc.progress
// (if any) is told planned_runs = passes x runs.
Study run_study(const ReliabilityJob& job, const StudyOptions& options, const MonteCarloOptions& mc);

}  // namespace trainsim::sim
