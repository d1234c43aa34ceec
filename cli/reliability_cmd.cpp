// `trainsim reliability [SCENARIO]`: goodput of one training job under failures. Monte-Carlo of the
// job's timeline (sim/job_montecarlo) with the failure, checkpoint and recovery models, the closed
// forms beside it, the best checkpoint interval by simulation, what-ifs, sensitivities and the
// ETTR-vs-checkpoint-cost frontier.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>

#include "calibrate/profile_io.hpp"
#include "command.hpp"
#include "models/errors.hpp"
#include "models/json_reader.hpp"
#include "models/reliability.hpp"
#include "models/scenario.hpp"
#include "models/units.hpp"
#include "progress.hpp"
#include "reports/table.hpp"
#include "scenario_input.hpp"
#include "sim/job_setup.hpp"
#include "sim/reliability_study.hpp"

namespace trainsim::cli {
namespace {

using Json = nlohmann::json;
using namespace trainsim::sim;
namespace fs = std::filesystem;

struct ReliabilityOptions {
  ScenarioInput input;
  int runs = 1000;
  std::uint64_t seed = 1;
  int threads = 0;
  bool frontier = false;
  bool brief = false;
  // Quick-question flags, validated in run_reliability so errors name the flag.
  std::string days, failures_per_1000, mtbf, checkpoint_cost, checkpoint_interval, checkpoint_method, storage, restart_time,
      failure_preset, weibull_shape, repair_time, elastic;
  int spare_nodes = -1, lemon_nodes = -1, concurrent_jobs = 0;
  double lemon_factor = 0;
};

// ---- Flag values --------------------------------------------------------------------------------

double duration_flag(const std::string& flag, const std::string& text) {
  std::string why;
  auto v = parse_quantity(text, Quantity::Time, &why);
  if (!v || !(*v > 0)) throw InputError(flag, "\"" + text + "\"", std::string("a positive ") + quantity_example(Quantity::Time), why);
  return *v;
}

double positive_number_flag(const std::string& flag, const std::string& text, const std::string& what) {
  std::size_t used = 0;
  double v = 0;
  try { v = std::stod(text, &used); } catch (...) { used = 0; }
  if (used != text.size() || text.empty() || !(v > 0) || !std::isfinite(v)) throw InputError(flag, "\"" + text + "\"", what);
  return v;
}

std::vector<std::string> names_of_methods() {
  std::vector<std::string> out;
  for (const auto& m : checkpoint_methods()) out.push_back(m->name());
  return out;
}
std::vector<std::string> names_of_tiers() {
  std::vector<std::string> out;
  for (const auto& t : storage_tiers()) out.push_back(t.name);
  return out;
}

void one_of(const std::string& flag, const std::string& value, const std::vector<std::string>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
    auto near = closest_names(value, allowed, 1);
    throw InputError(flag, "\"" + value + "\"", "one of " + join(allowed), near.empty() ? "" : "did you mean \"" + near.front() + "\"?");
  }
}

void apply_flags(const ReliabilityOptions& o, ReliabilitySettings* s) {
  if (!o.failure_preset.empty()) s->failures = failure_preset(o.failure_preset, "--failure-preset");
  if (!o.weibull_shape.empty()) {
    const double k = positive_number_flag("--weibull-shape", o.weibull_shape, "a positive Weibull shape k (1 = exponential)");
    for (auto& c : s->failures.components) {
      c.distribution = "weibull";
      c.shape = k;
    }
  }
  if (o.lemon_nodes >= 0) s->failures.lemons.count = o.lemon_nodes;
  if (o.lemon_factor > 0) s->failures.lemons.rate_factor = o.lemon_factor;
  if (!o.failures_per_1000.empty())
    s->failures_per_1000_node_days = positive_number_flag("--failures-per-1000-node-days", o.failures_per_1000, "a positive rate such as 4");
  if (!o.mtbf.empty()) s->job_mtbf_s = duration_flag("--mtbf", o.mtbf);
  if (!o.checkpoint_method.empty()) {
    one_of("--checkpoint-method", o.checkpoint_method, names_of_methods());
    s->checkpoint.method = o.checkpoint_method;
  }
  if (!o.storage.empty()) {
    one_of("--storage", o.storage, names_of_tiers());
    s->checkpoint.storage = o.storage;
  }
  if (o.concurrent_jobs > 0) s->checkpoint.concurrent_jobs = o.concurrent_jobs;
  if (!o.checkpoint_cost.empty()) {
    std::string why;
    auto v = parse_quantity(o.checkpoint_cost, Quantity::Time, &why);
    if (!v || *v < 0) throw InputError("--checkpoint-cost", "\"" + o.checkpoint_cost + "\"", "a duration such as \"60s\"", why);
    s->checkpoint.blocking_override_s = *v;
  }
  if (!o.checkpoint_interval.empty()) parse_interval(Json(o.checkpoint_interval), "--checkpoint-interval", s);
  if (!o.restart_time.empty()) {
    std::string why;
    auto v = parse_quantity(o.restart_time, Quantity::Time, &why);
    if (!v || *v < 0) throw InputError("--restart-time", "\"" + o.restart_time + "\"", "a duration such as \"10m\"", why);
    s->recovery.fixed_total_s = *v;
  }
  if (!o.repair_time.empty()) s->recovery.repair_mean_s = duration_flag("--repair-time", o.repair_time);
  if (o.spare_nodes >= 0) s->recovery.spare_nodes = o.spare_nodes;
  if (!o.elastic.empty()) {
    if (o.elastic == "true" || o.elastic == "1" || o.elastic == "yes") s->recovery.elastic = true;
    else if (o.elastic == "false" || o.elastic == "0" || o.elastic == "no") s->recovery.elastic = false;
    else throw InputError("--elastic", "\"" + o.elastic + "\"", "true or false");
  }
  if (!o.days.empty()) {
    // A plain number is days ("54"); a duration with a unit is taken as written ("54d", "1296h").
    std::size_t used = 0;
    double v = 0;
    try { v = std::stod(o.days, &used); } catch (...) { used = 0; }
    if (used == o.days.size() && v > 0 && std::isfinite(v)) s->window_s = v * 86400.0;
    else s->window_s = duration_flag("--days", o.days);
  }
}

// ---- Formatting ---------------------------------------------------------------------------------

std::string pct(double f, int digits = 1) { return fixed(100 * f, digits) + "%"; }
std::string money(double usd) {
  if (!std::isfinite(usd)) return "-";
  if (std::fabs(usd) >= 1e6) return "$" + fixed(usd / 1e6, 2) + "M";
  if (std::fabs(usd) >= 1e3) return "$" + fixed(usd / 1e3, 1) + "K";
  return "$" + fixed(usd, 0);
}
std::string dur(double s) { return std::isfinite(s) ? format_seconds(s) : "-"; }
std::string bandwidth(double bps) {
  char buf[32];
  if (bps >= 1e12) std::snprintf(buf, sizeof buf, "%.2f TB/s", bps / 1e12);
  else std::snprintf(buf, sizeof buf, "%.1f GB/s", bps / 1e9);
  return buf;
}
std::string decimal_bytes(double b) {
  char buf[32];
  if (b >= 1e12) std::snprintf(buf, sizeof buf, "%.2f TB", b / 1e12);
  else if (b >= 1e9) std::snprintf(buf, sizeof buf, "%.1f GB", b / 1e9);
  else std::snprintf(buf, sizeof buf, "%.1f MB", b / 1e6);
  return buf;
}

Json stat_json(const Statistic& s) {
  return {{"mean", s.mean}, {"stddev", s.stddev}, {"p05", s.p05}, {"p50", s.p50}, {"p95", s.p95}, {"ci95", {s.ci95_low, s.ci95_high}}, {"n", s.n}};
}

Json row_json(const StudyRow& r) {
  return {{"label", r.label},
          {"method", r.method},
          {"interval_s", r.config.interval_s},
          {"checkpoint_cost_s", r.config.blocking_s},
          {"persist_s", r.config.persist_s},
          {"spare_nodes", r.config.spare_nodes},
          {"elastic", r.config.elastic},
          {"mtbf_s", r.mtbf_s},
          {"recovery_s", r.recovery_s},
          {"ettr", stat_json(r.stats.ettr)},
          {"interruptions", stat_json(r.stats.interruptions)},
          {"wall_s", stat_json(r.stats.wall_s)},
          {"lost_gpu_hours", stat_json(r.stats.lost_gpu_hours)},
          {"cost", r.cost},
          {"lost_cost", r.lost_cost},
          {"spare_cost", r.spare_cost},
          {"first_order_ettr", r.first_order_ettr},
          {"model_ettr", r.model_ettr}};
}

struct Report {
  std::string label;
  Scenario scenario;
  ReliabilityJob job;
  std::vector<std::string> notes;
  int runs = 0, threads = 1;
  std::uint64_t seed = 1;
  double seconds = 0;
  StudyRow base;
  IntervalSweep sweep;
  std::vector<StudyRow> what_if;
  std::vector<SensitivityRow> sensitivity;
  std::vector<FrontierPoint> frontier;
  bool brief = false, has_frontier = false;
  bool window_mode = false;  // the window, not the work, ends most runs: report training done, not time to train
};

std::string failure_mix(const FailureModel& f, int gpn) {
  std::vector<std::pair<double, std::string>> parts;
  for (std::size_t i = 0; i < f.components.size(); ++i)
    if (f.components[i].rate_per_day > 0) parts.emplace_back(f.share(i, gpn), f.components[i].name);
  std::stable_sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out;
  for (const auto& [share, name] : parts) out += (out.empty() ? "" : ", ") + name + " " + fixed(100 * share, 0) + "%";
  return out;
}

std::string distributions(const FailureModel& f) {
  std::string out;
  for (const auto& c : f.components) {
    std::string d = c.distribution == "weibull" ? "weibull k=" + fixed(c.shape, 2) : c.distribution;
    if (out.find(d) == std::string::npos) out += (out.empty() ? "" : ", ") + d;
  }
  return out;
}

std::string recovery_text(const RecoveryTimes& r) {
  if (r.fixed) return dur(r.total()) + " (given)";
  std::string out = dur(r.total()) + " (detect " + dur(r.detection) + ", drain " + dur(r.drain);
  if (r.reschedule > 0) out += ", spare swap " + dur(r.reschedule);
  return out + ", restart " + dur(r.restart) + ", reload " + dur(r.reload) + ", warm-up " + dur(r.warmup) + ")";
}

// ---- Table --------------------------------------------------------------------------------------

void print_table(std::ostream& os, const Report& r) {
  const ReliabilityJob& job = r.job;
  const Scenario& s = r.scenario;
  const ParallelLayout& p = s.parallel;
  const StudyRow& b = r.base;
  os << "Scenario     " << r.label << "\n";
  os << "Job          " << s.model.name << " " << to_string(s.training.mode) << ", " << job.gpus << " x " << s.hardware.gpu.name << " ("
     << job.nodes << (job.nodes == 1 ? " node x " : " nodes x ") << job.gpus_per_node << "), tp" << p.tp << " pp" << p.pp << " dp" << p.dp << " cp" << p.cp << "; step "
     << dur(job.step.time_s) << ", " << format_count(job.step.tokens_per_s) << " tokens/s\n";
  if (job.fixed_window)
    os << "Window       " << dur(job.window_s) << " of training (no train_tokens: ETTR over a fixed window)\n";
  else
    os << "Work         " << format_count(s.training.train_tokens) << " tokens = " << dur(job.work_s) << " failure-free"
       << (std::isfinite(job.window_s) ? ", within a window of " + dur(job.window_s) : std::string()) << "\n";
  os << "Failures     " << job.failures.name << ": " << fixed(job.failures.failures_per_1000_node_days(job.gpus_per_node), 2)
     << " per 1,000 node-days (" << failure_mix(job.failures, job.gpus_per_node) << "), " << distributions(job.failures);
  if (job.failures.lemons.count > 0)
    os << "; " << job.failures.lemons.count << " lemon nodes x" << fixed(job.failures.lemons.rate_factor, 0)
       << (job.failures.lemons.detect_after > 0 ? ", found after " + std::to_string(job.failures.lemons.detect_after) + " failures" : "");
  os << "; job MTBF " << dur(job.mtbf_s) << "\n";
  const CheckpointSettings& cs = job.settings.checkpoint;
  os << "Checkpoint   " << cs.method << " to " << cs.storage << ": " << decimal_bytes(job.checkpoint_size.state_bytes) << " ("
     << fixed(job.checkpoint_size.bytes_per_parameter, 1) << " B/param), write " << dur(job.checkpoint.write_s) << " at "
     << bandwidth(job.checkpoint_context.write_bandwidth) << (cs.concurrent_jobs > 1 ? " (shared by " + std::to_string(cs.concurrent_jobs) + " jobs)" : "")
     << "; blocks " << dur(b.config.blocking_s) << (cs.blocking_override_s >= 0 ? " (given)" : "");
  if (b.config.persist_s > 0) os << ", persists in " << dur(b.config.persist_s);
  os << ", restore " << dur(job.checkpoint.restore_s) << "; every " << dur(b.config.interval_s) << " ("
     << (job.settings.interval == IntervalChoice::Best ? "best by simulation" : to_string(job.settings.interval)) << ")\n";
  os << "Recovery     hardware " << recovery_text(job.recovery_hardware) << "; software " << dur(job.recovery_software.total()) << "\n";
  os << "             " << b.config.spare_nodes << (b.config.spare_nodes == 1 ? " spare node" : " spare nodes") << ", repair " << job.settings.recovery.repair_distribution << " mean "
     << dur(job.settings.recovery.repair_mean_s) << "; "
     << (b.config.elastic ? "elastic: continues on fewer replicas (down to " + pct(job.settings.recovery.elastic_min_fraction, 0) + ")"
                          : "restarts at full size") << "\n";
  os << "Monte-Carlo  " << r.runs << " runs, seed " << r.seed << ", " << r.threads << " threads, " << fixed(r.seconds, 2) << " s\n\n";

  os << "Result (mean with its 95% confidence interval; p05-p95 across runs)\n";
  TextTable t({"metric", "mean", "95% CI of mean", "p05", "p95"});
  const JobStatistics& st = b.stats;
  // The interval of the mean, shown within the range the metric can take (counts >= 0, ETTR <= 100%).
  auto ci = [](const Statistic& x, auto f, double hi = INFINITY) {
    return "[" + f(std::clamp(x.ci95_low, 0.0, hi)) + ", " + f(std::clamp(x.ci95_high, 0.0, hi)) + "]";
  };
  auto n1 = [](double v) { return fixed(v, 1); };
  auto pc = [](double v) { return pct(v, 2); };
  t.add_row({"interruptions", fixed(st.interruptions.mean, 1), ci(st.interruptions, n1), fixed(st.interruptions.p05, 0), fixed(st.interruptions.p95, 0)});
  t.add_row({"ETTR", pct(st.ettr.mean, 2), ci(st.ettr, pc, 1.0), pct(st.ettr.p05, 2), pct(st.ettr.p95, 2)});
  if (!r.window_mode)
    t.add_row({"time to train", dur(st.wall_s.mean), "[" + dur(st.wall_s.ci95_low) + ", " + dur(st.wall_s.ci95_high) + "]", dur(st.wall_s.p05),
               dur(st.wall_s.p95)});
  t.add_row({"lost GPU-hours", fixed(st.lost_gpu_hours.mean, 0), ci(st.lost_gpu_hours, [](double v) { return fixed(v, 0); }),
             fixed(st.lost_gpu_hours.p05, 0), fixed(st.lost_gpu_hours.p95, 0)});
  t.add_row({"lost cost", money(b.lost_cost), "-", money(st.lost_gpu_hours.p05 * job.price_per_gpu_hour),
             money(st.lost_gpu_hours.p95 * job.price_per_gpu_hour)});
  t.print(os);
  os << "  lost work per crash " << dur(st.lost_work_per_crash_s) << " (" << fixed(st.crashes_mean, 1) << " crashes a run)";
  if (!job.fixed_window) os << "; job cost " << money(b.cost) << " at $" << fixed(job.price_per_gpu_hour, 2) << "/GPU-hour";
  if (r.window_mode && !job.fixed_window)
    os << "; " << pct(1 - st.finished_fraction, 1) << " of runs end with the window, " << dur(st.progress_s.mean) << " of the "
       << dur(job.work_s) << " of training done";
  else if (st.finished_fraction < 1 && !job.fixed_window)
    os << "; " << pct(1 - st.finished_fraction, 1) << " of runs did not finish in the window";
  os << "\n\n";

  const double wall = st.wall_s.mean;
  if (wall > 0) {
    const double kept = st.progress_s.mean, other = std::max(0.0, wall - kept - st.checkpoint_s - st.rework_s - st.recovery_s - st.wait_s - st.reconfigure_s);
    os << "Where the time goes (share of wall clock)\n  training kept " << pct(kept / wall) << ", checkpoint pauses " << pct(st.checkpoint_s / wall)
       << ", redone work " << pct(st.rework_s / wall) << ", recovery " << pct(st.recovery_s / wall) << ", waiting for nodes " << pct(st.wait_s / wall);
    if (b.config.elastic) os << ", regrowing " << pct(st.reconfigure_s / wall) << ", running shrunk (lost speed) " << pct(other / wall);
    os << "\n\n";
  }

  os << "Closed forms (exponential failures, a spare always free): MTBF " << dur(job.mtbf_s) << ", checkpoint cost " << dur(b.config.blocking_s)
     << ", R " << dur(b.recovery_s) << "\n";
  os << "  Young " << dur(job.young_interval_s) << ", Daly " << dur(job.daly_interval_s) << ", exact optimum " << dur(job.optimal_interval_s)
     << "; at " << dur(b.config.interval_s) << ": 1 - first-order waste " << pct(b.first_order_ettr, 2) << ", Daly's complete model "
     << pct(b.model_ettr, 2) << ", Monte-Carlo " << pct(st.ettr.mean, 2) << "\n\n";

  os << "Checkpoint interval (Monte-Carlo; every interval sees the same failures)\n";
  TextTable sw({"interval", "ETTR", "95% CI", "first-order", "Daly model", "best"});
  for (std::size_t i = 0; i < r.sweep.rows.size(); ++i) {
    const StudyRow& x = r.sweep.rows[i];
    sw.add_row({dur(x.config.interval_s), pct(x.stats.ettr.mean, 2), "[" + pct(x.stats.ettr.ci95_low, 2) + ", " + pct(x.stats.ettr.ci95_high, 2) + "]",
                pct(x.first_order_ettr, 2), pct(x.model_ettr, 2), i == r.sweep.best ? "*" : ""});
  }
  sw.print(os);
  os << "  best interval by simulation: " << dur(r.sweep.best_interval_s()) << "\n\n";

  if (!r.brief) {
    os << "What if (each at its own interval by the same rule; cost = the job's GPUs for the wall time)\n";
    TextTable w({"variant", "checkpoint", "blocks", "interval", "spares", "elastic", "ETTR", "interruptions", r.window_mode ? "training kept" : "time to train",
                 "cost", "lost cost", "spares cost"});
    for (const auto& x : r.what_if)
      w.add_row({x.label, x.method, dur(x.config.blocking_s), dur(x.config.interval_s), std::to_string(x.config.spare_nodes), x.config.elastic ? "yes" : "no",
                 pct(x.stats.ettr.mean, 2), fixed(x.stats.interruptions.mean, 1), dur(r.window_mode ? x.stats.progress_s.mean : x.stats.wall_s.mean),
                 money(x.cost), money(x.lost_cost), money(x.spare_cost)});
    w.print(os);
    os << "\nSensitivity (x0.5 and x2; ETTR at the current interval, then at the case's own interval)\n";
    TextTable se({"change", "ETTR", "vs now", "own interval", "ETTR there"});
    for (const auto& x : r.sensitivity)
      se.add_row({x.at_current.label, pct(x.at_current.stats.ettr.mean, 2),
                  (x.at_current.stats.ettr.mean >= st.ettr.mean ? "+" : "") + fixed(100 * (x.at_current.stats.ettr.mean - st.ettr.mean), 2) + " pt",
                  dur(x.at_own.config.interval_s), pct(x.at_own.stats.ettr.mean, 2)});
    se.print(os);
    os << "\n";
  }

  if (r.has_frontier) {
    os << "ETTR vs blocking checkpoint cost (each cost at its best interval; recovery as configured, R = " << dur(b.recovery_s)
       << ", and instant, R = 0)\n";
    TextTable f({"cost", "best interval", "ETTR", "p05", "p95", "Daly model", "ETTR, R = 0"});
    for (const auto& x : r.frontier)
      f.add_row({dur(x.checkpoint_cost_s), dur(x.best.config.interval_s), pct(x.best.stats.ettr.mean, 2), pct(x.best.stats.ettr.p05, 2),
                 pct(x.best.stats.ettr.p95, 2), pct(x.model_ettr, 2), pct(x.instant_recovery_ettr, 2)});
    f.print(os);
    const double c90 = frontier_crossing_s(r.frontier, 0.90), c90i = frontier_crossing_s(r.frontier, 0.90, true);
    auto says = [](double c) { return c < 0 ? std::string("at every cost shown") : c == 0 ? std::string("at no cost shown") : "below " + dur(c); };
    os << "  ETTR above 90% needs a blocking checkpoint cost " << says(c90) << " with this recovery, " << says(c90i) << " with instant recovery\n\n";
  }

  for (const auto& n : r.notes) os << "Note: " << n << "\n";
  const auto& rd = job.settings.defaults;
  if (!rd.empty()) {
    os << "Reliability defaults applied:\n";
    for (const auto& d : rd) os << "  " << d.path << " = " << d.value << " (" << d.reason << ")\n";
  }
  os << s.defaults.size() << " scenario defaults applied (listed under \"defaults\" in --format json).\n";
}

// ---- JSON / CSV ---------------------------------------------------------------------------------

Json report_json(const Report& r) {
  const ReliabilityJob& job = r.job;
  const StudyRow& b = r.base;
  const JobStatistics& st = b.stats;
  Json defaults = defaults_to_json(r.scenario);
  for (const auto& d : job.settings.defaults) defaults.push_back({{"path", d.path}, {"value", d.value}, {"reason", d.reason}});
  Json j = {{"command", "reliability"},
            {"scenario_source", r.label},
            {"scenario", to_json(r.scenario)},
            {"reliability", to_json(job.settings, job)},
            {"defaults", defaults},
            {"notes", r.notes},
            {"job",
             {{"gpus", job.gpus},
              {"nodes", job.nodes},
              {"gpus_per_node", job.gpus_per_node},
              {"step_time_s", job.step.time_s},
              {"tokens_per_s", job.step.tokens_per_s},
              {"fixed_window", job.fixed_window},
              {"price_per_gpu_hour", job.price_per_gpu_hour}}},
            {"monte_carlo", {{"runs", r.runs}, {"seed", r.seed}, {"threads", r.threads}, {"seconds", r.seconds}}},
            {"mtbf_s", job.mtbf_s},
            {"checkpoint_cost_s", b.config.blocking_s},
            {"young_interval_s", job.young_interval_s},
            {"daly_interval_s", job.daly_interval_s},
            {"optimal_interval_s", job.optimal_interval_s},
            {"best_interval_s", r.sweep.best_interval_s()},
            {"interval_s", b.config.interval_s},
            {"recovery_s", b.recovery_s},
            {"expected_interruptions", std::isfinite(job.mtbf_s) ? st.wall_s.mean / job.mtbf_s : 0.0},
            {"first_order_ettr", b.first_order_ettr},
            {"model_ettr", b.model_ettr},
            {"interruptions", stat_json(st.interruptions)},
            {"ettr", stat_json(st.ettr)},
            {"lost_gpu_hours", stat_json(st.lost_gpu_hours)},
            {"wall_s", stat_json(st.wall_s)},
            {"lost_cost", {{"mean", b.lost_cost}}},
            {"cost", {{"mean", b.cost}}},
            {"lost_work_per_crash_s", st.lost_work_per_crash_s},
            {"breakdown",
             {{"productive_s", st.progress_s.mean},
              {"checkpoint_s", st.checkpoint_s},
              {"rework_s", st.rework_s},
              {"recovery_s", st.recovery_s},
              {"wait_s", st.wait_s},
              {"reconfigure_s", st.reconfigure_s},
              {"shrunk_s", st.shrunk_s}}},
            {"finished_fraction", st.finished_fraction}};
  if (std::isfinite(job.window_s)) j["window_s"] = job.window_s;
  if (!job.fixed_window) j["ideal_time_s"] = job.work_s;
  if (!r.window_mode) j["time_to_train_s"] = stat_json(st.wall_s);
  Json sweep = Json::array();
  for (const auto& x : r.sweep.rows) sweep.push_back(row_json(x));
  j["interval_sweep"] = sweep;
  if (!r.brief) {
    Json w = Json::array();
    for (const auto& x : r.what_if) w.push_back(row_json(x));
    j["what_if"] = w;
    Json se = Json::array();
    for (const auto& x : r.sensitivity)
      se.push_back({{"parameter", x.parameter}, {"factor", x.factor}, {"at_current_interval", row_json(x.at_current)}, {"at_own_interval", row_json(x.at_own)}});
    j["sensitivity"] = se;
  }
  if (r.has_frontier) {
    Json f = Json::array();
    for (const auto& x : r.frontier)
      f.push_back({{"checkpoint_cost_s", x.checkpoint_cost_s},
                   {"best_interval_s", x.best.config.interval_s},
                   {"ettr", stat_json(x.best.stats.ettr)},
                   {"model_ettr", x.model_ettr},
                   {"instant_recovery_ettr", x.instant_recovery_ettr}});
    j["frontier"] = {{"points", f},
                     {"cost_for_ettr_90_s", frontier_crossing_s(r.frontier, 0.90)},
                     {"cost_for_ettr_90_instant_recovery_s", frontier_crossing_s(r.frontier, 0.90, true)}};
  }
  return j;
}

void print_csv(std::ostream& os, const Report& r) {
  os << "section,label,interval_s,checkpoint_cost_s,spare_nodes,elastic,mtbf_s,recovery_s,ettr_mean,ettr_p05,ettr_p95,ettr_ci95_low,ettr_ci95_high,"
        "interruptions_mean,interruptions_p05,interruptions_p95,lost_gpu_hours_mean,wall_s_mean,cost,lost_cost,first_order_ettr,model_ettr\n";
  auto row = [&](const char* section, const std::string& label, const StudyRow& x) {
    const JobStatistics& s = x.stats;
    os << section << ',' << csv_field(label) << ',' << x.config.interval_s << ',' << x.config.blocking_s << ',' << x.config.spare_nodes << ','
       << (x.config.elastic ? "true" : "false") << ',' << x.mtbf_s << ',' << x.recovery_s << ',' << s.ettr.mean << ',' << s.ettr.p05 << ','
       << s.ettr.p95 << ',' << s.ettr.ci95_low << ',' << s.ettr.ci95_high << ',' << s.interruptions.mean << ',' << s.interruptions.p05 << ','
       << s.interruptions.p95 << ',' << s.lost_gpu_hours.mean << ',' << s.wall_s.mean << ',' << x.cost << ',' << x.lost_cost << ','
       << x.first_order_ettr << ',' << x.model_ettr << '\n';
  };
  row("result", "as configured", r.base);
  for (const auto& x : r.sweep.rows) row("interval_sweep", "interval " + fixed(x.config.interval_s, 1) + " s", x);
  for (std::size_t i = 1; i < r.what_if.size(); ++i) row("what_if", r.what_if[i].label, r.what_if[i]);
  for (const auto& x : r.sensitivity) {
    row("sensitivity", x.at_current.label + " at current interval", x.at_current);
    row("sensitivity", x.at_own.label + " at own interval", x.at_own);
  }
  for (const auto& x : r.frontier) row("frontier", "cost " + fixed(x.checkpoint_cost_s, 1) + " s", x.best);
}

// ---- The command --------------------------------------------------------------------------------

const std::vector<double> kFrontierCosts{5, 10, 15, 30, 45, 60, 90, 120, 180, 300, 600};

int run_reliability(const ReliabilityOptions& opt) {
  Report report;
  report.brief = opt.brief;
  report.has_frontier = opt.frontier;
  const ScenarioInput& input = opt.input;
  const bool builtin = input.path.empty() && !input.flags.count("/model");
  Json doc = load_scenario_document(input, &report.label);
  if (builtin && !opt.days.empty() && doc.contains("training") && doc["training"].is_object() && doc["training"].contains("train_tokens")) {
    doc["training"].erase("train_tokens");
    report.notes.push_back("--days on the built-in scenario: its 1B training tokens are ignored, the window is the question");
  }
  // --gpus N alone: the nodes follow from it (a scenario's num_nodes would contradict it).
  if (input.flags.count("/hardware/num_gpus") && !input.flags.count("/hardware/num_nodes") && doc.contains("hardware") &&
      doc["hardware"].is_object() && doc["hardware"].contains("num_nodes")) {
    doc["hardware"].erase("num_nodes");
    report.notes.push_back("--gpus without --nodes: the number of nodes is num_gpus / gpus_per_node");
  }
  // The layout as estimate checks it; quick questions on the built-in scenario (--gpus N) may not fit its
  // batch, and the reliability answer needs the layout only for speed, snapshot size and elastic shrink.
  try {
    report.scenario = parse_scenario(doc, true);
  } catch (const InputError& e) {
    if (!(builtin || input.flags.count("/hardware/num_gpus"))) throw;
    report.scenario = parse_scenario(doc, false);
    report.notes.push_back(std::string("the scenario's layout does not check (") + e.what() +
                           "); the derived layout is used for the step time, snapshot size and elastic speeds");
  }
  for (const auto& d : report.scenario.defaults)
    if (d.path == "/parallel/tp" || d.path == "/parallel/pp" || d.path == "/parallel/dp" || d.path == "/parallel/cp") {
      report.notes.push_back("the scenario leaves the layout open: the derived defaults are used for the job's speed (--format json lists them)");
      break;
    }
  // Calibration profile, as `estimate` takes it.
  std::optional<CalibrationProfile> calibration;
  if (!input.calibration.empty()) {
    calibration = read_calibration_profile(input.calibration, "--calibration");
  } else if (doc.contains("calibration") && doc["calibration"].is_string()) {
    fs::path p = doc["calibration"].get<std::string>();
    if (!p.is_absolute() && !input.path.empty()) p = fs::path(input.path).parent_path() / p;
    calibration = read_calibration_profile(p.string(), "/calibration");
  }

  ReliabilitySettings settings = parse_reliability_settings(doc, std::max(1, std::min(report.scenario.hardware.gpus_per_node, report.scenario.hardware.num_gpus)));
  apply_flags(opt, &settings);
  if (settings.recovery.fixed_total_s >= 0) {  // a given total replaces the itemised durations: their defaults do not apply
    auto& d = settings.defaults;
    d.erase(std::remove_if(d.begin(), d.end(),
                           [](const AppliedDefault& x) {
                             return x.path.rfind("/reliability/recovery/", 0) == 0 && x.path != "/reliability/recovery/repair";
                           }),
            d.end());
  }
  report.job = build_reliability_job(report.scenario, settings, calibration ? &*calibration : nullptr);
  ReliabilityJob& job = report.job;
  if (settings.recovery.elastic && job.elastic_speed.size() <= 1)
    report.notes.push_back("elastic is on, but this layout cannot shrink (data-parallel degree 1 or a single node): every failure restarts it");

  report.runs = opt.runs;
  report.seed = opt.seed;
  report.threads = opt.threads > 0 ? opt.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  MonteCarloOptions mc;
  mc.runs = opt.runs;
  mc.seed = opt.seed;
  mc.threads = report.threads;
  ProgressBar bar("simulating");
  ProgressCounter progress;
  progress.report = [&bar](double f) { bar.update(f); };
  int batches = 1 + sweep_batches();
  if (!opt.brief) batches += what_if_batches(job) + sensitivity_batches();
  if (opt.frontier) batches += static_cast<int>(kFrontierCosts.size()) * frontier_batches_per_cost();
  progress.planned_runs = static_cast<double>(batches) * opt.runs;
  mc.progress = &progress;

  const auto start = std::chrono::steady_clock::now();
  const double center = std::max(job.optimal_interval_s, job.sim.persist_s);
  if (settings.interval == IntervalChoice::Best) {
    progress.planned_runs -= opt.runs;
    report.sweep = sweep_intervals(job, job.sim, center, mc);
    job.sim.interval_s = report.sweep.best_interval_s();
    report.base = report.sweep.rows[report.sweep.best];
  } else {
    report.base = simulate(job, job.sim, job.failures, "as configured", mc);
    report.sweep = sweep_intervals(job, job.sim, center, mc);
  }
  report.base.label = "as configured";
  report.window_mode = job.fixed_window || report.base.stats.finished_fraction < 0.5;
  if (!opt.brief) {
    report.what_if = what_if(job, report.base, mc);
    report.sensitivity = sensitivity(job, report.base, mc);
  }
  if (opt.frontier) report.frontier = frontier(job, kFrontierCosts, mc);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  bar.update(1.0);

  if (input.format == "json") std::cout << report_json(report).dump(2) << "\n";
  else if (input.format == "csv") print_csv(std::cout, report);
  else print_table(std::cout, report);
  return kExitOk;
}

const RegisterCommand registered{
    {"reliability", "Goodput under failures: ETTR, interruptions, lost GPU-hours, best checkpoint interval, what-ifs (Monte-Carlo)",
     [](CLI::App& app) -> std::function<int()> {
       auto opt = std::make_shared<ReliabilityOptions>();
       add_scenario_options(app, opt->input);
       add_calibration_option(app, opt->input);
       const char* g = "Reliability";
       app.add_option("--days", opt->days, "simulate at most this long: days (54) or a duration (\"54d\")  [sets /reliability/window]")->group(g);
       app.add_option("--failures-per-1000-node-days", opt->failures_per_1000,
                      "job-killing failures per 1,000 node-days, the model's mix of causes kept (default 4; published fleets 3-16)")
           ->group(g);
       app.add_option("--mtbf", opt->mtbf, "the job's mean time between failures, e.g. 3h (scales every rate)  [sets /reliability/job_mtbf]")->group(g);
       app.add_option("--failure-preset", opt->failure_preset, "default, llama3-405b, bloom-176b or opt-175b")->group(g);
       app.add_option("--weibull-shape", opt->weibull_shape, "Weibull shape k for every component (1 = exponential, < 1 infant mortality)")->group(g);
       app.add_option("--lemon-nodes", opt->lemon_nodes, "nodes that fail far more often than the rest")->group(g)->check(CLI::Range(0, 1 << 20));
       app.add_option("--lemon-factor", opt->lemon_factor, "how many times more often a lemon node fails (default 10)")->group(g)->check(CLI::Range(1.0, 1e6));
       app.add_option("--checkpoint-cost", opt->checkpoint_cost, "blocking checkpoint cost, e.g. 60s (replaces the modelled one)  [sets /reliability/checkpoint/cost]")
           ->group(g);
       app.add_option("--checkpoint-interval", opt->checkpoint_interval, "30m, or young | daly | best  [sets /reliability/checkpoint/interval]")->group(g);
       app.add_option("--checkpoint-method", opt->checkpoint_method, "sync | async | in-memory | incremental  [sets /reliability/checkpoint/method]")->group(g);
       app.add_option("--storage", opt->storage, "local-nvme | parallel-fs | object-store  [sets /reliability/checkpoint/storage]")->group(g);
       app.add_option("--concurrent-jobs", opt->concurrent_jobs, "jobs checkpointing to the same storage at once (share its bandwidth)")
           ->group(g)->check(CLI::Range(1, 1 << 20));
       app.add_option("--restart-time", opt->restart_time, "recovery from failure to training again, e.g. 10m (replaces the itemised model)  [sets /reliability/recovery/total]")
           ->group(g);
       app.add_option("--spare-nodes", opt->spare_nodes, "spare nodes ready to swap in  [sets /reliability/spare_nodes]")->group(g)->check(CLI::Range(0, 1 << 20));
       app.add_option("--repair-time", opt->repair_time, "mean time until a failed node is back, e.g. 24h")->group(g);
       app.add_option("--elastic", opt->elastic, "true: continue on fewer data-parallel replicas when no spare is free")->group(g);
       app.add_option("--runs", opt->runs, "Monte-Carlo runs (default 1000)")->group(g)->check(CLI::Range(1, 1000000));
       app.add_option("--seed", opt->seed, "random seed (results are the same for any --threads)")->group(g);
       app.add_option("--threads", opt->threads, "worker threads (default: every core)")->group(g)->check(CLI::Range(1, 1024));
       app.add_flag("--frontier", opt->frontier, "also: ETTR against the blocking checkpoint cost, each at its best interval")->group(g);
       app.add_flag("--brief", opt->brief, "skip the what-if and sensitivity tables")->group(g);
       return [opt] { return run_reliability(*opt); };
     }}};

}  // namespace
}  // namespace trainsim::cli
