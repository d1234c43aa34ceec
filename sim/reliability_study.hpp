#pragma once
// Questions asked of a ReliabilityJob, each answered by Monte-Carlo batches with common random numbers
// (every variant sees the same seeds): which checkpoint interval is best, what changes with another
// checkpoint method, spare nodes or elastic shrink, how sensitive goodput is to MTBF, checkpoint cost
// and restart time, and how ETTR falls as the blocking checkpoint cost grows (the frontier).
#include <string>
#include <vector>

#include "job_montecarlo.hpp"
#include "job_setup.hpp"

namespace trainsim::sim {

struct StudyRow {
  std::string label;
  JobSimConfig config;
  double mtbf_s = 0;
  double recovery_s = 0;          // the closed forms' R for this configuration
  JobStatistics stats;
  double first_order_ettr = 0;    // 1 - first-order waste (Young 1974 / Daly 2006)
  double model_ettr = 0;          // Daly 2006's complete model for exponential failures
  std::string method;
  double cost = 0;                // USD: the job's GPUs for the mean wall time
  double lost_cost = 0;           // USD: mean lost GPU-hours x price
  double spare_cost = 0;          // USD: the spare nodes held for the mean wall time
};

// The closed forms' R for a configuration: the recovery with a spare free, weighted by the share of
// failures that need a new node.
double closed_form_recovery_s(const JobSimConfig& c, double replacement_share);

StudyRow simulate(const ReliabilityJob& job, const JobSimConfig& config, const FailureModel& failures, const std::string& label,
                  const MonteCarloOptions& mc);

struct IntervalSweep {
  std::vector<StudyRow> rows;  // by interval
  std::size_t best = 0;        // the row with the highest mean ETTR
  double best_interval_s() const { return rows.empty() ? 0 : rows[best].config.interval_s; }
};
// Intervals from a quarter to four times `center` on a geometric grid, then two points either side of
// the best; the best by mean ETTR. Batches: sweep_batches().
IntervalSweep sweep_intervals(const ReliabilityJob& job, const JobSimConfig& base, double center_s, const MonteCarloOptions& mc);
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
// The cost at which mean ETTR falls through `level` (linear between frontier points); negative when it never does.
double frontier_crossing_s(const std::vector<FrontierPoint>& points, double level, bool instant_recovery = false);

}  // namespace trainsim::sim
