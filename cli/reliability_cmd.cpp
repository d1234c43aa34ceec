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
#include <limits>
#include <optional>
#include <sstream>
#include <thread>

#include "calibrate/profile_io.hpp"
#include "command.hpp"
#include "output.hpp"
#include "models/errors.hpp"
#include "models/json_reader.hpp"
#include "models/reliability.hpp"
#include "models/reliability_limits.hpp"
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
  std::string lemon_factor;
  // Integer flags: kUnset when not given (any value given, negative included, is range-checked).
  static constexpr long long kUnset = std::numeric_limits<long long>::min();
  long long spare_nodes = kUnset, lemon_nodes = kUnset, concurrent_jobs = kUnset;
};

// ---- Flag values: the ranges of models/reliability_limits.hpp, as the scenario's fields have them ----------

namespace lim = trainsim::reliability_limits;

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
  if (!o.failure_preset.empty()) {
    s->failures = failure_preset(o.failure_preset, "--failure-preset");
    s->rate_source = "--failure-preset";
    s->rate_text = "\"" + o.failure_preset + "\"";
  }
  if (!o.weibull_shape.empty()) {
    const double k = lim::number_flag("--weibull-shape", o.weibull_shape, lim::kWeibullShape);
    for (auto& c : s->failures.components) {
      c.distribution = "weibull";
      c.shape = k;
    }
  }
  if (o.lemon_nodes != ReliabilityOptions::kUnset) {
    s->failures.lemons.count = static_cast<int>(lim::number_flag("--lemon-nodes", std::to_string(o.lemon_nodes), lim::kLemonNodes));
    s->lemon_source = "--lemon-nodes";
  }
  if (!o.lemon_factor.empty()) s->failures.lemons.rate_factor = lim::number_flag("--lemon-factor", o.lemon_factor, lim::kLemonFactor);
  if (!o.failures_per_1000.empty()) {
    s->failures_per_1000_node_days = lim::number_flag("--failures-per-1000-node-days", o.failures_per_1000, lim::kFailuresPer1000NodeDays);
    s->rate_source = "--failures-per-1000-node-days";
    s->rate_text = "\"" + o.failures_per_1000 + "\"";
  }
  if (!o.mtbf.empty()) {
    s->job_mtbf_s = lim::duration_flag("--mtbf", o.mtbf, lim::kJobMtbf);
    s->rate_source = "--mtbf";
    s->rate_text = "\"" + o.mtbf + "\"";
  }
  if (!o.checkpoint_method.empty()) {
    one_of("--checkpoint-method", o.checkpoint_method, names_of_methods());
    s->checkpoint.method = o.checkpoint_method;
  }
  if (!o.storage.empty()) {
    one_of("--storage", o.storage, names_of_tiers());
    s->checkpoint.storage = o.storage;
  }
  if (o.concurrent_jobs != ReliabilityOptions::kUnset)
    s->checkpoint.concurrent_jobs = static_cast<int>(lim::number_flag("--concurrent-jobs", std::to_string(o.concurrent_jobs), lim::kConcurrentJobs));
  if (!o.checkpoint_cost.empty()) s->checkpoint.blocking_override_s = lim::duration_flag("--checkpoint-cost", o.checkpoint_cost, lim::kCheckpointCost);
  if (!o.checkpoint_interval.empty()) parse_interval(Json(o.checkpoint_interval), "--checkpoint-interval", s);
  if (!o.restart_time.empty()) s->recovery.fixed_total_s = lim::duration_flag("--restart-time", o.restart_time, lim::kRecovery);
  if (!o.repair_time.empty()) s->recovery.repair_mean_s = lim::duration_flag("--repair-time", o.repair_time, lim::kRepairMean);
  if (o.spare_nodes != ReliabilityOptions::kUnset)
    s->recovery.spare_nodes = static_cast<int>(lim::number_flag("--spare-nodes", std::to_string(o.spare_nodes), lim::kSpareNodes));
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
    const bool plain = !o.days.empty() && used == o.days.size();
    s->window_s = plain ? lim::check(v * 86400.0, lim::kWindow, "--days", "\"" + o.days + "\" (days)")
                        : lim::duration_flag("--days", o.days, lim::kWindow);
    s->window_source = "--days";
    s->window_text = "\"" + o.days + "\"";
  }
}

// ---- Formatting ---------------------------------------------------------------------------------

// Nothing this command prints is negative, NaN or infinite: a quantity that has no value (a cost with an
// unknown GPU price, the first-order model where it is invalid, an interval without failures) is "-" or
// "n/a" in tables, null in JSON and an empty field in CSV.
double unsigned_zero(double v) { return v == 0 ? 0.0 : v; }  // no "-0.00"
std::string pct(double f, int digits = 1) {
  if (!std::isfinite(f) || f < 0) return "n/a";
  return fixed(unsigned_zero(100 * f), digits) + "%";
}
std::string pct(const std::optional<double>& f, int digits = 1) { return f ? pct(*f, digits) : "n/a"; }
std::string money(double usd) {
  if (!std::isfinite(usd) || usd < 0) return "-";
  if (usd >= 1e6) return "$" + fixed(usd / 1e6, 2) + "M";
  if (usd >= 1e3) return "$" + fixed(usd / 1e3, 1) + "K";
  return "$" + fixed(unsigned_zero(usd), 0);
}
std::string money(const std::optional<double>& usd) { return usd ? money(*usd) : "-"; }
std::string dur(double s) { return std::isfinite(s) && s >= 0 ? format_seconds(unsigned_zero(s)) : "-"; }
// JSON: a number, or null when it has no finite value.
Json jnum(double v) { return std::isfinite(v) ? Json(unsigned_zero(v)) : Json(nullptr); }
Json jnum(const std::optional<double>& v) { return v ? jnum(*v) : Json(nullptr); }
// CSV: a number as the stream writes it, or an empty field.
std::string cnum(double v) {
  if (!std::isfinite(v)) return "";
  std::ostringstream o;
  o << unsigned_zero(v);
  return o.str();
}
std::string cnum(const std::optional<double>& v) { return v ? cnum(*v) : ""; }
bool priced(const ReliabilityJob& job) { return job.price_per_gpu_hour > 0 && std::isfinite(job.price_per_gpu_hour); }
std::optional<double> at_price(const ReliabilityJob& job, double gpu_hours) {
  if (!priced(job)) return std::nullopt;
  return gpu_hours * job.price_per_gpu_hour;
}
constexpr const char* kFirstOrderInvalid = "n/a (first-order model invalid: waste > 100%)";
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
  return {{"mean", jnum(s.mean)}, {"stddev", jnum(s.stddev)}, {"p05", jnum(s.p05)}, {"p50", jnum(s.p50)}, {"p95", jnum(s.p95)},
          {"ci95", {jnum(s.ci95_low), jnum(s.ci95_high)}}, {"n", s.n}};
}

Json row_json(const StudyRow& r) {
  return {{"label", r.label},
          {"method", r.method},
          {"interval_s", jnum(r.config.interval_s)},
          {"checkpoint_cost_s", jnum(r.config.blocking_s)},
          {"persist_s", jnum(r.config.persist_s)},
          {"spare_nodes", r.config.spare_nodes},
          {"elastic", r.config.elastic},
          {"mtbf_s", jnum(r.mtbf_s)},
          {"recovery_s", jnum(r.recovery_s)},
          {"ettr", stat_json(r.stats.ettr)},
          {"interruptions", stat_json(r.stats.interruptions)},
          {"wall_s", stat_json(r.stats.wall_s)},
          {"lost_gpu_hours", stat_json(r.stats.lost_gpu_hours)},
          {"cost", jnum(r.cost)},
          {"lost_cost", jnum(r.lost_cost)},
          {"spare_cost", jnum(r.spare_cost)},
          {"first_order_ettr", jnum(r.first_order_ettr)},
          {"model_ettr", jnum(r.model_ettr)}};
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

// A change of ETTR in points, in words rather than with a sign: "1.86 pt higher", "0.94 pt lower".
std::string change_text(double delta) {
  const std::string points = fixed(std::fabs(100 * delta), 2);
  if (points == fixed(0.0, 2)) return "same";
  return points + (delta > 0 ? " pt higher" : " pt lower");
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
     << " per 1,000 node-days";
  const std::string mix = failure_mix(job.failures, job.gpus_per_node);
  os << (mix.empty() ? std::string(", none") : " (" + mix + "), " + distributions(job.failures));
  if (job.failures.lemons.count > 0)
    os << "; " << job.failures.lemons.count << " lemon nodes x" << fixed(job.failures.lemons.rate_factor, 0)
       << (job.failures.lemons.detect_after > 0 ? ", found after " + std::to_string(job.failures.lemons.detect_after) + " failures" : "");
  os << "; job MTBF " << (std::isfinite(job.mtbf_s) ? dur(job.mtbf_s) : std::string("infinite (no failure rates)")) << "\n";
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
  t.add_row({"lost cost", money(b.lost_cost), "-", money(at_price(job, st.lost_gpu_hours.p05)), money(at_price(job, st.lost_gpu_hours.p95))});
  t.print(os);
  os << "  lost work per crash " << dur(st.lost_work_per_crash_s) << " (" << fixed(st.crashes_mean, 1) << " crashes a run)";
  if (!job.fixed_window) {
    if (b.cost) os << "; job cost " << money(b.cost) << " at $" << fixed(job.price_per_gpu_hour, 2) << "/GPU-hour";
    else os << "; job cost - (GPU price unknown)";
  }
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

  os << "Closed forms (exponential failures, a spare always free): MTBF "
     << (std::isfinite(job.mtbf_s) ? dur(job.mtbf_s) : std::string("infinite")) << ", checkpoint cost " << dur(b.config.blocking_s) << ", R "
     << dur(b.recovery_s) << "\n";
  if (std::isfinite(job.mtbf_s))
    os << "  Young " << dur(job.young_interval_s) << ", Daly " << dur(job.daly_interval_s) << ", exact optimum " << dur(job.optimal_interval_s);
  else
    os << "  Young, Daly, exact optimum: n/a (no failures: no checkpoint is needed)";
  os << "; at " << dur(b.config.interval_s) << ": 1 - first-order waste " << (b.first_order_ettr ? pct(b.first_order_ettr, 2) : kFirstOrderInvalid)
     << ", Daly's complete model " << pct(b.model_ettr, 2) << ", Monte-Carlo " << pct(st.ettr.mean, 2) << "\n";
  if (!r.brief) {
    os << "\nCheckpoint interval (Monte-Carlo; every interval sees the same failures)\n";
    TextTable sw({"interval", "ETTR", "95% CI", "first-order", "Daly model", "best"});
    for (std::size_t i = 0; i < r.sweep.rows.size(); ++i) {
      const StudyRow& x = r.sweep.rows[i];
      sw.add_row({dur(x.config.interval_s), pct(x.stats.ettr.mean, 2), "[" + pct(x.stats.ettr.ci95_low, 2) + ", " + pct(x.stats.ettr.ci95_high, 2) + "]",
                  pct(x.first_order_ettr, 2), pct(x.model_ettr, 2), i == r.sweep.best ? "*" : ""});
    }
    sw.print(os);
    if (std::any_of(r.sweep.rows.begin(), r.sweep.rows.end(), [](const StudyRow& x) { return !x.first_order_ettr; }))
      os << "  first-order n/a: the first-order waste exceeds 100% there (the model assumes rare failures and is invalid)\n";
  }
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
      se.add_row({x.at_current.label, pct(x.at_current.stats.ettr.mean, 2), change_text(x.at_current.stats.ettr.mean - st.ettr.mean),
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
              {"price_per_gpu_hour", priced(job) ? Json(job.price_per_gpu_hour) : Json(nullptr)}}},
            {"monte_carlo", {{"runs", r.runs}, {"seed", r.seed}, {"threads", r.threads}, {"seconds", r.seconds}}},
            {"mtbf_s", jnum(job.mtbf_s)},
            {"checkpoint_cost_s", jnum(b.config.blocking_s)},
            {"young_interval_s", jnum(job.young_interval_s)},
            {"daly_interval_s", jnum(job.daly_interval_s)},
            {"optimal_interval_s", jnum(job.optimal_interval_s)},
            {"best_interval_s", jnum(r.sweep.best_interval_s())},
            {"interval_s", jnum(b.config.interval_s)},
            {"recovery_s", jnum(b.recovery_s)},
            {"expected_interruptions", std::isfinite(job.mtbf_s) ? jnum(st.wall_s.mean / job.mtbf_s) : Json(0.0)},
            {"first_order_ettr", jnum(b.first_order_ettr)},
            {"model_ettr", jnum(b.model_ettr)},
            {"interruptions", stat_json(st.interruptions)},
            {"ettr", stat_json(st.ettr)},
            {"lost_gpu_hours", stat_json(st.lost_gpu_hours)},
            {"wall_s", stat_json(st.wall_s)},
            {"lost_cost", {{"mean", jnum(b.lost_cost)}}},
            {"cost", {{"mean", jnum(b.cost)}}},
            {"lost_work_per_crash_s", jnum(st.lost_work_per_crash_s)},
            {"breakdown",
             {{"productive_s", jnum(st.progress_s.mean)},
              {"checkpoint_s", jnum(st.checkpoint_s)},
              {"rework_s", jnum(st.rework_s)},
              {"recovery_s", jnum(st.recovery_s)},
              {"wait_s", jnum(st.wait_s)},
              {"reconfigure_s", jnum(st.reconfigure_s)},
              {"shrunk_s", jnum(st.shrunk_s)}}},
            {"finished_fraction", jnum(st.finished_fraction)}};
  if (std::isfinite(job.window_s)) j["window_s"] = job.window_s;
  if (!job.fixed_window) j["ideal_time_s"] = jnum(job.work_s);
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
      f.push_back({{"checkpoint_cost_s", jnum(x.checkpoint_cost_s)},
                   {"best_interval_s", jnum(x.best.config.interval_s)},
                   {"ettr", stat_json(x.best.stats.ettr)},
                   {"model_ettr", jnum(x.model_ettr)},
                   {"instant_recovery_ettr", jnum(x.instant_recovery_ettr)}});
    // A crossing only where ETTR falls through 90% between two costs shown; null otherwise (the notes say which).
    auto crossing = [](double c) { return c > 0 ? jnum(c) : Json(nullptr); };
    j["frontier"] = {{"points", f},
                     {"cost_for_ettr_90_s", crossing(frontier_crossing_s(r.frontier, 0.90))},
                     {"cost_for_ettr_90_instant_recovery_s", crossing(frontier_crossing_s(r.frontier, 0.90, true))}};
  }
  return j;
}

void print_csv(std::ostream& os, const Report& r) {
  os << "section,label,interval_s,checkpoint_cost_s,spare_nodes,elastic,mtbf_s,recovery_s,ettr_mean,ettr_p05,ettr_p95,ettr_ci95_low,ettr_ci95_high,"
        "interruptions_mean,interruptions_p05,interruptions_p95,lost_gpu_hours_mean,wall_s_mean,cost,lost_cost,first_order_ettr,model_ettr\n";
  auto row = [&](const char* section, const std::string& label, const StudyRow& x) {
    const JobStatistics& s = x.stats;
    os << section << ',' << csv_field(label) << ',' << cnum(x.config.interval_s) << ',' << cnum(x.config.blocking_s) << ',' << x.config.spare_nodes
       << ',' << (x.config.elastic ? "true" : "false") << ',' << cnum(x.mtbf_s) << ',' << cnum(x.recovery_s) << ',' << cnum(s.ettr.mean) << ','
       << cnum(s.ettr.p05) << ',' << cnum(s.ettr.p95) << ',' << cnum(s.ettr.ci95_low) << ',' << cnum(s.ettr.ci95_high) << ','
       << cnum(s.interruptions.mean) << ',' << cnum(s.interruptions.p05) << ',' << cnum(s.interruptions.p95) << ',' << cnum(s.lost_gpu_hours.mean)
       << ',' << cnum(s.wall_s.mean) << ',' << cnum(x.cost) << ',' << cnum(x.lost_cost) << ',' << cnum(x.first_order_ettr) << ','
       << cnum(x.model_ettr) << '\n';
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

// What the numbers cannot say themselves: values left out (null, "-", "n/a") and runs cut short.
void add_output_notes(Report* r) {
  const ReliabilityJob& job = r->job;
  std::vector<const StudyRow*> rows{&r->base};
  for (const auto& x : r->sweep.rows) rows.push_back(&x);
  for (const auto& x : r->what_if) rows.push_back(&x);
  for (const auto& x : r->sensitivity) {
    rows.push_back(&x.at_current);
    rows.push_back(&x.at_own);
  }
  for (const auto& x : r->frontier) rows.push_back(&x.best);
  if (!priced(job))
    r->notes.push_back("the GPU price is unknown (" + job.scenario.hardware.gpu.name +
                       "): costs are left out (\"-\" in tables, null in JSON, empty in CSV); set hardware.price_per_gpu_hour to get them");
  if (!std::isfinite(job.mtbf_s))
    r->notes.push_back("no failure rates: the job never fails, so the MTBF and the Young / Daly / exact intervals are infinite (null in JSON)");
  if (std::any_of(rows.begin(), rows.end(), [](const StudyRow* x) { return !x->first_order_ettr; }))
    r->notes.push_back("1 - first-order waste is n/a (null) where the first-order waste exceeds 100%: that model counts at most one failure "
                       "per interval and is invalid there; Daly's complete model and the Monte-Carlo hold");
  int truncated = 0;
  std::string which;
  for (const StudyRow* x : rows)
    if (x->stats.truncated_runs > 0) {
      truncated += x->stats.truncated_runs;
      if (which.empty()) which = x->label.empty() ? "interval " + dur(x->config.interval_s) : x->label;
    }
  if (truncated > 0)
    r->notes.push_back(std::to_string(truncated) + " simulated runs (first: " + which + ") stopped after " +
                       std::to_string(job.sim.max_events) + " failures, 10x those expected: their numbers cover the time until then");
  if (r->has_frontier && !r->frontier.empty()) {
    for (bool instant : {false, true}) {
      const double c = frontier_crossing_s(r->frontier, 0.90, instant);
      const std::string key = instant ? "cost_for_ettr_90_instant_recovery_s" : "cost_for_ettr_90_s";
      if (c < 0) r->notes.push_back("frontier: " + key + " is null: ETTR stays above 90% at every cost shown");
      else if (c == 0) r->notes.push_back("frontier: " + key + " is null: ETTR is below 90% at every cost shown");
    }
  }
}

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
  mc.progress = &progress;  // run_study plans the runs it makes

  StudyOptions so;
  so.what_if = so.sensitivity = !opt.brief;
  if (opt.frontier) so.frontier_costs_s = kFrontierCosts;
  const auto start = std::chrono::steady_clock::now();
  Study study = run_study(job, so, mc);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  bar.finish();
  report.base = std::move(study.base);
  report.sweep = std::move(study.sweep);
  report.what_if = std::move(study.what_if);
  report.sensitivity = std::move(study.sensitivity);
  report.frontier = std::move(study.frontier);
  job.sim.interval_s = report.base.config.interval_s;  // "best": the sweep's
  report.window_mode = job.fixed_window || report.base.stats.finished_fraction < 0.5;
  add_output_notes(&report);

  emit_result(input.format, report_json(report), "reliability",
              {[&](std::ostream& os) { print_table(os, report); }, [&](std::ostream& os) { print_csv(os, report); }});
  return kExitOk;
}

const RegisterCommand registered{
    {"reliability", "Goodput under failures: ETTR, interruptions, lost GPU-hours, best checkpoint interval, what-ifs (Monte-Carlo)",
     [](CLI::App& app) -> std::function<int()> {
       auto opt = std::make_shared<ReliabilityOptions>();
       add_scenario_options(app, opt->input);
       add_calibration_option(app, opt->input);
       const char* g = "Reliability";
       app.add_option("--days", opt->days, "simulate at most this long: days (54) or a duration (\"54d\"), up to 100 years  [sets /reliability/window]")->group(g);
       app.add_option("--failures-per-1000-node-days", opt->failures_per_1000,
                      "job-killing failures per 1,000 node-days, the model's mix of causes kept (default 4; published fleets 3-16)")
           ->group(g);
       app.add_option("--mtbf", opt->mtbf, "the job's mean time between failures, e.g. 3h (scales every rate; 1 min to 1000 years)  [sets /reliability/job_mtbf]")->group(g);
       app.add_option("--failure-preset", opt->failure_preset, "default, llama3-405b, bloom-176b or opt-175b")->group(g);
       app.add_option("--weibull-shape", opt->weibull_shape, "Weibull shape k for every component (1 = exponential, < 1 infant mortality; 0.5 to 10)")->group(g);
       app.add_option("--lemon-nodes", opt->lemon_nodes, "nodes that fail far more often than the rest (0 to the job's nodes)")->group(g);
       app.add_option("--lemon-factor", opt->lemon_factor, "how many times more often a lemon node fails (default 10; 1 to 1000)")->group(g);
       app.add_option("--checkpoint-cost", opt->checkpoint_cost, "blocking checkpoint cost, e.g. 60s (replaces the modelled one)  [sets /reliability/checkpoint/cost]")
           ->group(g);
       app.add_option("--checkpoint-interval", opt->checkpoint_interval, "30m, or young | daly | best  [sets /reliability/checkpoint/interval]")->group(g);
       app.add_option("--checkpoint-method", opt->checkpoint_method, "sync | async | in-memory | incremental  [sets /reliability/checkpoint/method]")->group(g);
       app.add_option("--storage", opt->storage, "local-nvme | parallel-fs | object-store  [sets /reliability/checkpoint/storage]")->group(g);
       app.add_option("--concurrent-jobs", opt->concurrent_jobs, "jobs checkpointing to the same storage at once (share its bandwidth; 1 to 10000)")
           ->group(g);
       app.add_option("--restart-time", opt->restart_time, "recovery from failure to training again, e.g. 10m (replaces the itemised model)  [sets /reliability/recovery/total]")
           ->group(g);
       app.add_option("--spare-nodes", opt->spare_nodes, "spare nodes ready to swap in  [sets /reliability/spare_nodes]")->group(g);
       app.add_option("--repair-time", opt->repair_time, "mean time until a failed node is back, e.g. 24h (1 min to 1 year)")->group(g);
       app.add_option("--elastic", opt->elastic, "true: continue on fewer data-parallel replicas when no spare is free")->group(g);
       app.add_option("--runs", opt->runs, "Monte-Carlo runs (default 1000)")->group(g)->check(CLI::Range(1, 1000000));
       app.add_option("--seed", opt->seed, "random seed (results are the same for any --threads)")->group(g);
       app.add_option("--threads", opt->threads, "worker threads (default: every core)")->group(g)->check(CLI::Range(1, 1024));
       app.add_flag("--frontier", opt->frontier, "also: ETTR against the blocking checkpoint cost, each at its best interval")->group(g);
       app.add_flag("--brief", opt->brief, "the headline only: skip the checkpoint-interval, what-if and sensitivity tables")->group(g);
       return [opt] { return run_reliability(*opt); };
     }}};

}  // namespace
}  // namespace trainsim::cli
