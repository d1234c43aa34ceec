#include "sim/reliability/reliability_study.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "models/core/units.hpp"
#include "models/reliability/checkpoint_model.hpp"
#include "models/reliability/recovery_model.hpp"
#include "models/reliability/reliability.hpp"

namespace trainsim::sim {

double closed_form_recovery_s(const JobSimConfig& c, double replacement_share) {
  const double share = std::clamp(replacement_share, 0.0, 1.0);
  return share * c.recovery_s(true) + (1 - share) * c.recovery_s(false);
}

StudyRow make_row(const ReliabilityJob& job, const JobSimConfig& config, double mtbf_s, const JobStatistics& stats, const std::string& label) {
  StudyRow row;
  row.label = label;
  row.config = config;
  row.method = job.settings.checkpoint.method;
  row.mtbf_s = mtbf_s;
  row.recovery_s = closed_form_recovery_s(config, job.replacement_share);
  row.stats = stats;
  const double delta = config.effective_blocking_s();
  row.first_order_ettr = first_order_ettr(delta, config.interval_s, row.recovery_s, row.mtbf_s);
  const double model = expected_ettr(delta, config.interval_s, row.recovery_s, row.mtbf_s);
  if (std::isfinite(model) && model >= 0) row.model_ettr = model;
  if (job.price_per_gpu_hour > 0 && std::isfinite(job.price_per_gpu_hour)) {  // else unknown: no cost at all, not $0
    const double hours = stats.wall_s.mean / kSecondsPerHour;
    row.cost = hours * job.gpus * job.price_per_gpu_hour;
    row.lost_cost = stats.lost_gpu_hours.mean * job.price_per_gpu_hour;
    row.spare_cost = hours * config.spare_nodes * job.gpus_per_node * job.price_per_gpu_hour;
  }
  return row;
}

namespace {

// Variants collected from the tables of a study, run together on the same seeds.
class Batch {
 public:
  // The same variant twice (a sensitivity whose own interval is the current one, ...) is simulated once.
  std::size_t add(const JobSimConfig& c, double mtbf_factor = 1) {
    for (std::size_t i = 0; i < variants_.size(); ++i)
      if (variants_[i].mtbf_factor == mtbf_factor && variants_[i].config == c) return i;
    variants_.push_back({c, mtbf_factor});
    return variants_.size() - 1;
  }
  void run(const ReliabilityJob& job, const MonteCarloOptions& mc) { stats_ = simulate_variants(job.failures, job.gpus, variants_, mc); }
  StudyRow row(const ReliabilityJob& job, std::size_t i, const std::string& label) const {
    return make_row(job, variants_[i].config, job.mtbf_s * variants_[i].mtbf_factor, stats_[i], label);
  }
  bool empty() const { return variants_.empty(); }

 private:
  std::vector<StudyVariant> variants_;
  std::vector<JobStatistics> stats_;
};

// ---- Interval sweep: a geometric grid of 2^(1/6) steps; the rows are every other point (2^(1/3), 13 of them)
// and the two points either side of the best of those. A job that does not shrink folds the grid and the
// likely neighbours (the closed forms centre the grid on the optimum: odd points within 2^(±1/2)) in the
// same pass, a fold costing little; another pass only when the best lies further out.
struct SweepPlan {
  double center = 0, floor = 1;
  static constexpr int kHalf = 13;     // fine points j = -13..13; the grid is the even j in [-12, 12]
  static constexpr int kLikely = 3;    // odd j in [-3, 3] folded with the grid (the best within 2^(±2/3))
  double interval(int j) const { return std::max(center * std::pow(2.0, j / 6.0), floor); }
  std::vector<std::size_t> fine = std::vector<std::size_t>(2 * kHalf + 1, SIZE_MAX);  // batch index by j + kHalf
  std::vector<int> batch = std::vector<int>(2 * kHalf + 1, -1);                      // which batch: 0 the grid's, 1 the refinement
  std::size_t& at(int j) { return fine[static_cast<std::size_t>(j + kHalf)]; }
  int& batch_of(int j) { return batch[static_cast<std::size_t>(j + kHalf)]; }
};

SweepPlan plan_sweep(const ReliabilityJob& job, double center_s) {
  SweepPlan p;
  p.floor = std::max(job.step.time_s, 1.0);
  p.center = std::isfinite(center_s) && center_s > 0 ? center_s : p.floor;
  return p;
}

void add_sweep_point(Batch& b, int which, SweepPlan& p, const JobSimConfig& base, int j) {
  JobSimConfig c = base;
  c.interval_s = p.interval(j);
  p.at(j) = b.add(c);
  p.batch_of(j) = which;
}

void add_sweep_grid(Batch& b, SweepPlan& p, const JobSimConfig& base, bool likely_neighbours) {
  for (int j = -12; j <= 12; j += 2) add_sweep_point(b, 0, p, base, j);
  if (likely_neighbours)
    for (int j = -SweepPlan::kLikely; j <= SweepPlan::kLikely; j += 2) add_sweep_point(b, 0, p, base, j);
}

std::size_t best_of(const std::vector<StudyRow>& rows) {
  std::size_t b = 0;
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (rows[i].stats.ettr.mean > rows[b].stats.ettr.mean) b = i;
  return b;
}

int best_grid_j(const ReliabilityJob& job, const Batch& b, SweepPlan& p) {
  std::vector<StudyRow> rows;
  for (int j = -12; j <= 12; j += 2) rows.push_back(b.row(job, p.at(j), ""));
  return -12 + 2 * static_cast<int>(best_of(rows));
}

// The neighbours of the best grid point not simulated yet, in `refine` (to run as a second pass); false when
// there are none.
bool plan_refinement(const ReliabilityJob& job, const Batch& grid, SweepPlan& p, const JobSimConfig& base, Batch* refine) {
  const int jb = best_grid_j(job, grid, p);
  bool any = false;
  for (int j : {jb - 1, jb + 1})
    if (p.batch_of(j) < 0) {
      add_sweep_point(*refine, 1, p, base, j);
      any = true;
    }
  return any;
}

// The 13 grid rows and the half-step either side of their best, sorted by interval.
IntervalSweep finish_sweep(const ReliabilityJob& job, const Batch& grid, SweepPlan& p, const Batch& refine) {
  IntervalSweep sweep;
  for (int j = -12; j <= 12; j += 2) sweep.rows.push_back(grid.row(job, p.at(j), ""));
  const int jb = -12 + 2 * static_cast<int>(best_of(sweep.rows));
  for (int j : {jb - 1, jb + 1}) sweep.rows.push_back((p.batch_of(j) == 0 ? grid : refine).row(job, p.at(j), ""));
  std::stable_sort(sweep.rows.begin(), sweep.rows.end(),
                   [](const StudyRow& x, const StudyRow& y) { return x.config.interval_s < y.config.interval_s; });
  sweep.best = best_of(sweep.rows);
  return sweep;
}

// ---- What-ifs and sensitivities ------------------------------------------------------------------------

struct Planned {
  std::size_t index;
  std::string label, method;
};

std::vector<Planned> plan_what_if(Batch& b, const ReliabilityJob& job, const JobSimConfig& base) {
  std::vector<Planned> out;
  const std::string configured = job.settings.checkpoint.method;
  for (const auto& m : checkpoint_methods()) {
    if (m->name() == configured) continue;
    out.push_back({b.add(config_with_method(job, m->name())), m->name() + " checkpoints", m->name()});
  }
  JobSimConfig spares = base;
  if (base.spare_nodes > 0) {
    spares.spare_nodes = 0;
    out.push_back({b.add(spares), "no spare nodes", configured});
  } else {
    spares.spare_nodes = default_spare_nodes(job.nodes);
    out.push_back({b.add(spares), std::to_string(spares.spare_nodes) + " spare nodes", configured});
  }
  if (job.elastic_speed.size() > 1) {
    // Elastic shrink matters when no spare is free: compared without spares (beside the row above).
    JobSimConfig e = spares;
    e.elastic = !base.elastic;
    e.spare_nodes = base.spare_nodes > 0 ? 0 : base.spare_nodes;
    const std::string what = e.elastic ? "elastic shrink" : "restart at full size (not elastic)";
    out.push_back({b.add(e), e.spare_nodes == 0 ? what + ", no spare nodes" : what, configured});
  }
  return out;
}

std::vector<StudyRow> finish_what_if(const ReliabilityJob& job, const Batch& b, const StudyRow& base, const std::vector<Planned>& planned) {
  std::vector<StudyRow> rows{base};
  rows.front().label = "as configured";
  for (const auto& p : planned) {
    rows.push_back(b.row(job, p.index, p.label));
    rows.back().method = p.method;
  }
  return rows;
}

struct PlannedSensitivity {
  std::string parameter, label;
  double factor;
  std::size_t at_current, at_own;
};

std::vector<PlannedSensitivity> plan_sensitivity(Batch& b, const ReliabilityJob& job, const JobSimConfig& base) {
  std::vector<PlannedSensitivity> out;
  for (const char* parameter : {"MTBF", "checkpoint cost", "restart time"})
    for (double f : {0.5, 2.0}) {
      JobSimConfig c = base;
      const std::string p = parameter;
      double mtbf_factor = 1;
      if (p == "MTBF") {
        mtbf_factor = f;  // every failure time stretched by f: the same failures, f times as far apart
      } else if (p == "checkpoint cost") {
        c.blocking_s *= f;
      } else {
        for (double* d : {&c.detection_s, &c.drain_s, &c.reschedule_s, &c.restart_s, &c.reload_s, &c.warmup_s}) *d *= f;
        if (c.fixed_recovery_s >= 0) c.fixed_recovery_s *= f;
      }
      char label[64];
      std::snprintf(label, sizeof label, "%s x%g", parameter, f);
      JobSimConfig own = c;
      own.interval_s = chosen_interval_s(job, c.blocking_s, c.persist_s, job.mtbf_s * mtbf_factor);
      out.push_back({parameter, label, f, b.add(c, mtbf_factor), b.add(own, mtbf_factor)});
    }
  return out;
}

std::vector<SensitivityRow> finish_sensitivity(const ReliabilityJob& job, const Batch& b, const std::vector<PlannedSensitivity>& planned) {
  std::vector<SensitivityRow> out;
  for (const auto& p : planned) {
    SensitivityRow row;
    row.parameter = p.parameter;
    row.factor = p.factor;
    row.at_current = b.row(job, p.at_current, p.label);
    row.at_own = b.row(job, p.at_own, p.label);
    out.push_back(std::move(row));
  }
  return out;
}

// ---- Frontier -------------------------------------------------------------------------------------------

struct PlannedFrontier {
  double cost, model_ettr;
  std::size_t tries[3], instant;
};

std::vector<PlannedFrontier> plan_frontier(Batch& b, const ReliabilityJob& job, const std::vector<double>& costs_s) {
  std::vector<PlannedFrontier> out;
  for (double cost : costs_s) {
    PlannedFrontier pt{};
    pt.cost = cost;
    JobSimConfig c = job.sim;
    c.blocking_s = cost;
    c.persist_s = 0;
    double tau = std::max(optimal_interval_s(cost, job.mtbf_s), std::max(job.step.time_s, 1.0));
    if (!std::isfinite(tau)) tau = chosen_interval_s(job, cost, 0, job.mtbf_s);  // no failures: the rule's finite interval
    const double r = closed_form_recovery_s(c, job.replacement_share);
    pt.model_ettr = expected_ettr(cost, tau, r, job.mtbf_s);
    int k = 0;
    for (double f : {std::pow(2.0, -0.25), 1.0, std::pow(2.0, 0.25)}) {
      c.interval_s = tau * f;
      pt.tries[k++] = b.add(c);
    }
    JobSimConfig instant = c;
    instant.interval_s = tau;
    instant.fixed_recovery_s = 0;
    pt.instant = b.add(instant);
    out.push_back(pt);
  }
  return out;
}

std::vector<FrontierPoint> finish_frontier(const ReliabilityJob& job, const Batch& b, const std::vector<PlannedFrontier>& planned) {
  std::vector<FrontierPoint> out;
  for (const auto& p : planned) {
    FrontierPoint pt;
    pt.checkpoint_cost_s = p.cost;
    pt.model_ettr = p.model_ettr;
    for (int k = 0; k < 3; ++k) {
      StudyRow row = b.row(job, p.tries[k], "");
      if (k == 0 || row.stats.ettr.mean > pt.best.stats.ettr.mean) pt.best = std::move(row);
    }
    pt.instant_recovery_ettr = b.row(job, p.instant, "").stats.ettr.mean;
    out.push_back(std::move(pt));
  }
  return out;
}

double sweep_center(const ReliabilityJob& job) {
  const double c = std::max(job.optimal_interval_s, job.sim.persist_s);
  return std::isfinite(c) && c > 0 ? c : job.sim.interval_s;
}

}  // namespace

StudyRow simulate(const ReliabilityJob& job, const JobSimConfig& config, const FailureModel& failures, const std::string& label,
                  const MonteCarloOptions& mc) {
  const std::vector<JobStatistics> stats = simulate_variants(failures, job.gpus, {{config, 1.0}}, mc);
  return make_row(job, config, failures.job_mtbf_s(job.nodes, job.gpus_per_node), stats.front(), label);
}

IntervalSweep sweep_intervals(const ReliabilityJob& job, const JobSimConfig& base, double center_s, const MonteCarloOptions& mc) {
  SweepPlan p = plan_sweep(job, center_s);
  Batch grid, refine;
  add_sweep_grid(grid, p, base, true);
  grid.run(job, mc);
  if (plan_refinement(job, grid, p, base, &refine)) refine.run(job, mc);
  return finish_sweep(job, grid, p, refine);
}

int what_if_batches(const ReliabilityJob& job) {
  int n = static_cast<int>(checkpoint_methods().size()) - 1;  // the other methods
  ++n;                                                         // spares toggled
  if (job.elastic_speed.size() > 1) ++n;                       // elastic toggled
  return n;
}

std::vector<StudyRow> what_if(const ReliabilityJob& job, const StudyRow& base, const MonteCarloOptions& mc) {
  Batch b;
  const auto planned = plan_what_if(b, job, base.config);
  b.run(job, mc);
  return finish_what_if(job, b, base, planned);
}

std::vector<SensitivityRow> sensitivity(const ReliabilityJob& job, const StudyRow& base, const MonteCarloOptions& mc) {
  Batch b;
  const auto planned = plan_sensitivity(b, job, base.config);
  b.run(job, mc);
  return finish_sensitivity(job, b, planned);
}

std::vector<FrontierPoint> frontier(const ReliabilityJob& job, const std::vector<double>& costs_s, const MonteCarloOptions& mc) {
  Batch b;
  const auto planned = plan_frontier(b, job, costs_s);
  b.run(job, mc);
  return finish_frontier(job, b, planned);
}

double frontier_crossing_s(const std::vector<FrontierPoint>& points, double level, bool instant_recovery) {
  auto value = [&](const FrontierPoint& p) { return instant_recovery ? p.instant_recovery_ettr : p.best.stats.ettr.mean; };
  for (std::size_t i = 0; i + 1 < points.size(); ++i) {
    const double a = value(points[i]), b = value(points[i + 1]);
    if (a >= level && b < level) {
      const double f = (a - level) / (a - b);
      return points[i].checkpoint_cost_s + f * (points[i + 1].checkpoint_cost_s - points[i].checkpoint_cost_s);
    }
  }
  if (!points.empty() && value(points.front()) < level) return 0;
  return -1;
}

int study_passes(const ReliabilityJob& job, const StudyOptions& options) {
  const bool best = job.settings.interval == IntervalChoice::Best;
  int passes = 1;  // (and the sweep's refinement when its best lies far out: added then)
  if (best && (options.what_if || options.sensitivity)) ++passes;  // they run at the simulated best interval
  return passes;
}

Study run_study(const ReliabilityJob& job, const StudyOptions& options, const MonteCarloOptions& mc_in) {
  MonteCarloOptions mc = mc_in;
  const double runs = std::max(0, mc.runs);
  if (mc.progress) mc.progress->planned_runs = study_passes(job, options) * runs;
  const bool best_mode = job.settings.interval == IntervalChoice::Best;
  Study study;

  // Pass 1: everything that does not depend on the simulated best interval.
  Batch b1;
  const std::size_t base_at = best_mode ? 0 : b1.add(job.sim);
  SweepPlan sweep = plan_sweep(job, sweep_center(job));
  add_sweep_grid(b1, sweep, job.sim, true);
  const auto frontier_plan = plan_frontier(b1, job, options.frontier_costs_s);
  std::vector<Planned> what_if_plan;
  std::vector<PlannedSensitivity> sensitivity_plan;
  if (!best_mode) {
    if (options.what_if) what_if_plan = plan_what_if(b1, job, job.sim);
    if (options.sensitivity) sensitivity_plan = plan_sensitivity(b1, job, job.sim);
  }
  b1.run(job, mc);

  // The sweep's refinement, when its neighbours of the best were not in pass 1.
  Batch refine;
  if (plan_refinement(job, b1, sweep, job.sim, &refine)) {
    if (mc.progress) mc.progress->planned_runs += runs;  // not planned: the best lies far out
    refine.run(job, mc);
  }
  study.sweep = finish_sweep(job, b1, sweep, refine);
  study.base = best_mode ? study.sweep.rows[study.sweep.best] : b1.row(job, base_at, "as configured");
  study.base.label = "as configured";
  study.frontier = finish_frontier(job, b1, frontier_plan);

  if (best_mode && (options.what_if || options.sensitivity)) {  // at the best interval: one more pass
    Batch b3;
    if (options.what_if) what_if_plan = plan_what_if(b3, job, study.base.config);
    if (options.sensitivity) sensitivity_plan = plan_sensitivity(b3, job, study.base.config);
    b3.run(job, mc);
    if (options.what_if) study.what_if = finish_what_if(job, b3, study.base, what_if_plan);
    if (options.sensitivity) study.sensitivity = finish_sensitivity(job, b3, sensitivity_plan);
  } else {
    if (options.what_if) study.what_if = finish_what_if(job, b1, study.base, what_if_plan);
    if (options.sensitivity) study.sensitivity = finish_sensitivity(job, b1, sensitivity_plan);
  }
  return study;
}

// The time the configured job lost in each run (wall-clock that did not become kept training), as a histogram for
// the HTML report. The configured job's runs once more: run i draws from (seed, i) in any batch, so these are the
// runs the study summarised (the result table's lost GPU-hours are these hours times the job's GPUs).
LostTimeDistribution lost_time_distribution(const ReliabilityJob& job, const StudyRow& base, MonteCarloOptions mc) {
  mc.progress = nullptr;
  const std::vector<RunResult> runs = run_job_montecarlo(base.config, job.failures, mc);
  LostTimeDistribution d;
  if (runs.empty()) return d;
  std::vector<double> hours;
  hours.reserve(runs.size());
  for (const RunResult& x : runs) hours.push_back(std::max(0.0, x.wall_s - x.progress_s) / kSecondsPerHour);
  const Statistic s = summarize(hours, 0.0);
  d.mean_h = s.mean;
  d.p05_h = s.p05;
  d.p95_h = s.p95;
  const auto [lowest, highest] = std::minmax_element(hours.begin(), hours.end());
  double lo = *lowest, hi = *highest;
  if (!(hi > lo)) {  // every run lost the same: one bin around it
    const double pad = std::max(0.01 * lo, 1.0 / 60);
    lo = std::max(0.0, lo - pad);
    hi += pad;
  }
  // About sqrt(runs) bins of equal width, at most kMaxBins.
  constexpr int kMaxBins = 40;
  const int bins = std::clamp(static_cast<int>(std::ceil(std::sqrt(static_cast<double>(hours.size())))), 1, kMaxBins);
  const double width = (hi - lo) / bins;
  for (int i = 0; i <= bins; ++i) d.edges_h.push_back(i == bins ? hi : lo + i * width);
  d.runs.assign(static_cast<std::size_t>(bins), 0);
  for (double h : hours) ++d.runs[static_cast<std::size_t>(std::clamp(static_cast<int>((h - lo) / width), 0, bins - 1))];
  return d;
}

}  // namespace trainsim::sim
