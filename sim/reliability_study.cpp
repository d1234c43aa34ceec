#include "reliability_study.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "models/checkpoint_model.hpp"
#include "models/recovery_model.hpp"
#include "models/reliability.hpp"

namespace trainsim::sim {

double closed_form_recovery_s(const JobSimConfig& c, double replacement_share) {
  const double share = std::clamp(replacement_share, 0.0, 1.0);
  return share * c.recovery_s(true) + (1 - share) * c.recovery_s(false);
}

StudyRow simulate(const ReliabilityJob& job, const JobSimConfig& config, const FailureModel& failures, const std::string& label,
                  const MonteCarloOptions& mc) {
  StudyRow row;
  row.label = label;
  row.config = config;
  row.method = job.settings.checkpoint.method;
  row.mtbf_s = failures.job_mtbf_s(job.nodes, job.gpus_per_node);
  row.recovery_s = closed_form_recovery_s(config, job.replacement_share);
  row.stats = summarize_runs(run_job_montecarlo(config, failures, mc), job.gpus);
  const double delta = config.effective_blocking_s();
  row.first_order_ettr = 1 - first_order_waste(delta, config.interval_s, row.recovery_s, row.mtbf_s);
  row.model_ettr = expected_ettr(delta, config.interval_s, row.recovery_s, row.mtbf_s);
  const double hours = row.stats.wall_s.mean / 3600.0;
  row.cost = hours * job.gpus * job.price_per_gpu_hour;
  row.lost_cost = row.stats.lost_gpu_hours.mean * job.price_per_gpu_hour;
  row.spare_cost = hours * config.spare_nodes * job.gpus_per_node * job.price_per_gpu_hour;
  return row;
}

IntervalSweep sweep_intervals(const ReliabilityJob& job, const JobSimConfig& base, double center_s, const MonteCarloOptions& mc) {
  IntervalSweep sweep;
  const double floor_s = std::max(job.step.time_s, 1.0);
  auto at = [&](double tau) {
    JobSimConfig c = base;
    c.interval_s = std::max(tau, floor_s);
    return simulate(job, c, job.failures, "", mc);
  };
  for (int i = -6; i <= 6; ++i) sweep.rows.push_back(at(center_s * std::pow(2.0, i / 3.0)));
  auto best_of = [&] {
    std::size_t b = 0;
    for (std::size_t i = 1; i < sweep.rows.size(); ++i)
      if (sweep.rows[i].stats.ettr.mean > sweep.rows[b].stats.ettr.mean) b = i;
    return b;
  };
  // Refine: halfway (geometrically) to each neighbour of the best grid point.
  const double best_tau = sweep.rows[best_of()].config.interval_s;
  sweep.rows.push_back(at(best_tau * std::pow(2.0, -1.0 / 6.0)));
  sweep.rows.push_back(at(best_tau * std::pow(2.0, 1.0 / 6.0)));
  std::stable_sort(sweep.rows.begin(), sweep.rows.end(),
                   [](const StudyRow& a, const StudyRow& b) { return a.config.interval_s < b.config.interval_s; });
  sweep.best = best_of();
  return sweep;
}

int what_if_batches(const ReliabilityJob& job) {
  int n = static_cast<int>(checkpoint_methods().size()) - 1;  // the other methods
  ++n;                                                         // spares toggled
  if (job.elastic_speed.size() > 1) ++n;                       // elastic toggled
  return n;
}

std::vector<StudyRow> what_if(const ReliabilityJob& job, const StudyRow& base, const MonteCarloOptions& mc) {
  std::vector<StudyRow> rows{base};
  rows.front().label = "as configured";
  const std::string configured = job.settings.checkpoint.method;
  for (const auto& m : checkpoint_methods()) {
    if (m->name() == configured) continue;
    StudyRow r = simulate(job, config_with_method(job, m->name()), job.failures, m->name() + " checkpoints", mc);
    r.method = m->name();
    rows.push_back(std::move(r));
  }
  JobSimConfig spares = base.config;
  if (base.config.spare_nodes > 0) {
    spares.spare_nodes = 0;
    rows.push_back(simulate(job, spares, job.failures, "no spare nodes", mc));
  } else {
    spares.spare_nodes = default_spare_nodes(job.nodes);
    rows.push_back(simulate(job, spares, job.failures, std::to_string(spares.spare_nodes) + " spare nodes", mc));
  }
  if (job.elastic_speed.size() > 1) {
    // Elastic shrink matters when no spare is free: compared without spares (beside the row above).
    JobSimConfig e = spares;
    e.elastic = !base.config.elastic;
    e.spare_nodes = base.config.spare_nodes > 0 ? 0 : base.config.spare_nodes;
    const std::string what = e.elastic ? "elastic shrink" : "restart at full size (not elastic)";
    rows.push_back(simulate(job, e, job.failures, e.spare_nodes == 0 ? what + ", no spare nodes" : what, mc));
  }
  return rows;
}

std::vector<SensitivityRow> sensitivity(const ReliabilityJob& job, const StudyRow& base, const MonteCarloOptions& mc) {
  std::vector<SensitivityRow> out;
  for (const char* parameter : {"MTBF", "checkpoint cost", "restart time"})
    for (double f : {0.5, 2.0}) {
      SensitivityRow row;
      row.parameter = parameter;
      row.factor = f;
      FailureModel failures = job.failures;
      JobSimConfig c = base.config;
      const std::string p = parameter;
      if (p == "MTBF") {
        failures.scale_rates(1 / f);
      } else if (p == "checkpoint cost") {
        c.blocking_s *= f;
      } else {
        for (double* d : {&c.detection_s, &c.drain_s, &c.reschedule_s, &c.restart_s, &c.reload_s, &c.warmup_s}) *d *= f;
        if (c.fixed_recovery_s >= 0) c.fixed_recovery_s *= f;
      }
      char label[64];
      std::snprintf(label, sizeof label, "%s x%g", parameter, f);
      row.at_current = simulate(job, c, failures, label, mc);
      JobSimConfig own = c;
      own.interval_s = chosen_interval_s(job, c.blocking_s, c.persist_s, failures.job_mtbf_s(job.nodes, job.gpus_per_node));
      row.at_own = simulate(job, own, failures, label, mc);
      out.push_back(std::move(row));
    }
  return out;
}

std::vector<FrontierPoint> frontier(const ReliabilityJob& job, const std::vector<double>& costs_s, const MonteCarloOptions& mc) {
  std::vector<FrontierPoint> out;
  for (double cost : costs_s) {
    FrontierPoint pt;
    pt.checkpoint_cost_s = cost;
    JobSimConfig c = job.sim;
    c.blocking_s = cost;
    c.persist_s = 0;
    const double tau = std::max(optimal_interval_s(cost, job.mtbf_s), std::max(job.step.time_s, 1.0));
    const double r = closed_form_recovery_s(c, job.replacement_share);
    pt.model_ettr = expected_ettr(cost, tau, r, job.mtbf_s);
    bool first = true;
    for (double f : {std::pow(2.0, -0.25), 1.0, std::pow(2.0, 0.25)}) {
      c.interval_s = tau * f;
      StudyRow row = simulate(job, c, job.failures, "", mc);
      if (first || row.stats.ettr.mean > pt.best.stats.ettr.mean) pt.best = std::move(row);
      first = false;
    }
    JobSimConfig instant = c;
    instant.interval_s = tau;
    instant.fixed_recovery_s = 0;
    pt.instant_recovery_ettr = simulate(job, instant, job.failures, "", mc).stats.ettr.mean;
    out.push_back(std::move(pt));
  }
  return out;
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

}  // namespace trainsim::sim
