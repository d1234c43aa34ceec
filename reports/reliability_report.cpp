#include "reliability_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>

#include "models/core/units.hpp"
#include "table.hpp"

namespace trainsim {

using namespace trainsim::sim;

namespace {

using Json = nlohmann::json;

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

void print(std::ostream& os, const ReliabilityTable& t) {
  TextTable text(t.header);
  for (const auto& row : t.rows) text.add_row(row);
  text.print(os);
}

}  // namespace

// ---- The cells every form shares ----------------------------------------------------------------

std::vector<ReliabilityFact> reliability_facts(const ReliabilityReport& r) {
  const ReliabilityJob& job = r.job;
  const Scenario& s = r.scenario;
  const ParallelLayout& p = s.parallel;
  const StudyRow& b = r.base;
  std::vector<ReliabilityFact> facts;
  facts.push_back({"Scenario", r.label});
  {
    std::ostringstream os;
    os << s.model.name << " " << to_string(s.training.mode) << ", " << job.gpus << " x " << s.hardware.gpu.name << " (" << job.nodes
       << (job.nodes == 1 ? " node x " : " nodes x ") << job.gpus_per_node << "), tp" << p.tp << " pp" << p.pp << " dp" << p.dp << " cp" << p.cp
       << "; step " << dur(job.step.time_s) << ", " << format_count(job.step.tokens_per_s) << " tokens/s";
    facts.push_back({"Job", os.str()});
  }
  if (job.fixed_window) {
    facts.push_back({"Window", dur(job.window_s) + " of training (no train_tokens: ETTR over a fixed window)"});
  } else {
    std::ostringstream os;
    os << format_count(s.training.train_tokens) << " tokens = " << dur(job.work_s) << " failure-free"
       << (std::isfinite(job.window_s) ? ", within a window of " + dur(job.window_s) : std::string());
    facts.push_back({"Work", os.str()});
  }
  {
    std::ostringstream os;
    os << job.failures.name << ": " << fixed(job.failures.failures_per_1000_node_days(job.gpus_per_node), 2) << " per 1,000 node-days";
    const std::string mix = failure_mix(job.failures, job.gpus_per_node);
    os << (mix.empty() ? std::string(", none") : " (" + mix + "), " + distributions(job.failures));
    if (job.failures.lemons.count > 0)
      os << "; " << job.failures.lemons.count << " lemon nodes x" << fixed(job.failures.lemons.rate_factor, 0)
         << (job.failures.lemons.detect_after > 0 ? ", found after " + std::to_string(job.failures.lemons.detect_after) + " failures" : "");
    os << "; job MTBF " << (std::isfinite(job.mtbf_s) ? dur(job.mtbf_s) : std::string("infinite (no failure rates)"));
    facts.push_back({"Failures", os.str()});
  }
  {
    const CheckpointSettings& cs = job.settings.checkpoint;
    std::ostringstream os;
    os << cs.method << " to " << cs.storage.tier << ": " << decimal_bytes(job.checkpoint_size.state_bytes) << " ("
       << fixed(job.checkpoint_size.bytes_per_parameter, 1) << " B/param), write " << dur(job.checkpoint.write_s) << " at "
       << bandwidth(job.checkpoint_context.write_bandwidth)
       << (cs.storage.concurrent_jobs > 1 ? " (shared by " + std::to_string(cs.storage.concurrent_jobs) + " jobs)" : "") << "; blocks " << dur(b.config.blocking_s)
       << (cs.blocking_override_s >= 0 ? " (given)" : "");
    if (b.config.persist_s > 0) os << ", persists in " << dur(b.config.persist_s);
    os << ", restore " << dur(job.checkpoint.restore_s) << "; every " << dur(b.config.interval_s) << " ("
       << (job.settings.interval == IntervalChoice::Best    ? "best by simulation"
           : job.settings.interval == IntervalChoice::Steps ? std::to_string(job.settings.interval_steps) + " steps"
                                                             : to_string(job.settings.interval))
       << ")";
    if (const auto kept = sim::retention_json(cs, job.checkpoint_size.state_bytes); !kept.is_null()) {
      if (kept.contains("keep")) os << "; keeps " << kept["keep"].get<int>() << ": " << decimal_bytes(kept["kept_bytes"].get<double>());
      if (kept.contains("quota_bytes"))
        os << (kept.contains("keep") ? " of the " : "; the ") << decimal_bytes(kept["quota_bytes"].get<double>()) << " quota (it holds "
           << static_cast<long long>(kept["checkpoints_in_quota"].get<double>()) << ")"
           << (kept.contains("fits_quota") && !kept["fits_quota"].get<bool>() ? ": OVER THE QUOTA" : "");
    }
    if (cs.contents == CheckpointContents::Weights) os << "; weights only (a restart resumes with fresh optimizer moments)";
    if (cs.emergency)
      os << "; emergency checkpoint on a detected failure: a crash loses half a step (" << dur(job.sim.emergency_loss_s) << "), the survivors' save adds "
         << dur(job.emergency_save_s) << " to each recovery (the closed forms below leave it out)";
    if (!cs.upload_to.empty()) os << "; then uploaded to " << cs.upload_to << " in " << dur(job.checkpoint.upload_s);
    if (const auto st = sim::staging_json(cs, job.checkpoint_context, job.scenario.hardware.host_memory_bytes); !st.is_null()) {
      os << "; stages " << decimal_bytes(st["host_bytes_per_node"].get<double>()) << " of host memory a node";
      if (st.contains("host_memory_bytes"))
        os << " of " << decimal_bytes(st["host_memory_bytes"].get<double>())
           << (st["fits_host_memory"].get<bool>() ? "" : ": OVER HOST MEMORY (the snapshot does not fit the node)");
    }
    facts.push_back({"Checkpoint", os.str()});
  }
  facts.push_back({"Recovery", "hardware " + recovery_text(job.recovery_hardware) + "; software " + dur(job.recovery_software.total())});
  {
    std::ostringstream os;
    os << b.config.spare_nodes << (b.config.spare_nodes == 1 ? " spare node" : " spare nodes") << ", repair "
       << job.settings.recovery.repair_distribution << " mean " << dur(job.settings.recovery.repair_mean_s) << "; "
       << (b.config.elastic ? "elastic: continues on fewer replicas (down to " + pct(job.settings.recovery.elastic_min_fraction, 0) + ")"
                            : "restarts at full size");
    facts.push_back({"Spares", os.str(), true});
  }
  {
    std::ostringstream os;
    os << r.runs << " runs, seed " << r.seed << ", " << r.threads << " threads, " << fixed(r.seconds, 2) << " s";
    facts.push_back({"Monte-Carlo", os.str()});
  }
  return facts;
}

ReliabilityTable reliability_result_table(const ReliabilityReport& r) {
  const ReliabilityJob& job = r.job;
  const StudyRow& b = r.base;
  const JobStatistics& st = b.stats;
  ReliabilityTable t{"Result (mean with its 95% confidence interval; p05-p95 across runs)", {"metric", "mean", "95% CI of mean", "p05", "p95"}, {},
                     {false, true, true, true, true}};
  // The interval of the mean, shown within the range the metric can take (counts >= 0, ETTR <= 100%).
  auto ci = [](const Statistic& x, auto f, double hi = INFINITY) {
    return "[" + f(std::clamp(x.ci95_low, 0.0, hi)) + ", " + f(std::clamp(x.ci95_high, 0.0, hi)) + "]";
  };
  auto n1 = [](double v) { return fixed(v, 1); };
  auto pc = [](double v) { return pct(v, 2); };
  t.rows.push_back({"interruptions", fixed(st.interruptions.mean, 1), ci(st.interruptions, n1), fixed(st.interruptions.p05, 0), fixed(st.interruptions.p95, 0)});
  t.rows.push_back({"ETTR", pct(st.ettr.mean, 2), ci(st.ettr, pc, 1.0), pct(st.ettr.p05, 2), pct(st.ettr.p95, 2)});
  if (!r.window_mode)
    t.rows.push_back({"time to train", dur(st.wall_s.mean), "[" + dur(st.wall_s.ci95_low) + ", " + dur(st.wall_s.ci95_high) + "]", dur(st.wall_s.p05),
                      dur(st.wall_s.p95)});
  t.rows.push_back({"lost GPU-hours", fixed(st.lost_gpu_hours.mean, 0), ci(st.lost_gpu_hours, [](double v) { return fixed(v, 0); }),
                    fixed(st.lost_gpu_hours.p05, 0), fixed(st.lost_gpu_hours.p95, 0)});
  t.rows.push_back({"lost cost", money(b.lost_cost), "-", money(at_price(job, st.lost_gpu_hours.p05)), money(at_price(job, st.lost_gpu_hours.p95))});
  return t;
}

std::string reliability_result_note(const ReliabilityReport& r) {
  const ReliabilityJob& job = r.job;
  const StudyRow& b = r.base;
  const JobStatistics& st = b.stats;
  std::ostringstream os;
  os << "lost work per crash " << dur(st.lost_work_per_crash_s) << " (" << fixed(st.crashes_mean, 1) << " crashes a run)";
  if (!job.fixed_window) {
    if (b.cost) os << "; job cost " << money(b.cost) << " at $" << fixed(job.price_per_gpu_hour, 2) << "/GPU-hour";
    else os << "; job cost - (GPU price unknown)";
  }
  if (r.window_mode && !job.fixed_window)
    os << "; " << pct(1 - st.finished_fraction, 1) << " of runs end with the window, " << dur(st.progress_s.mean) << " of the " << dur(job.work_s)
       << " of training done";
  else if (st.finished_fraction < 1 && !job.fixed_window)
    os << "; " << pct(1 - st.finished_fraction, 1) << " of runs did not finish in the window";
  return os.str();
}

TimeShares time_shares(const JobStatistics& st) {
  TimeShares t;
  t.wall = st.wall_s.mean;
  t.kept = st.progress_s.mean;
  t.checkpoint = st.checkpoint_s;
  t.rework = st.rework_s;
  t.recovery = st.recovery_s;
  t.wait = st.wait_s;
  t.reconfigure = st.reconfigure_s;
  t.shrunk = std::max(0.0, t.wall - t.kept - t.checkpoint - t.rework - t.recovery - t.wait - t.reconfigure);
  return t;
}

std::string reliability_time_shares(const ReliabilityReport& r) {
  const TimeShares t = time_shares(r.base.stats);
  if (!(t.wall > 0)) return "";
  const double wall = t.wall;
  std::ostringstream os;
  os << "training kept " << pct(t.kept / wall) << ", checkpoint pauses " << pct(t.checkpoint / wall) << ", redone work " << pct(t.rework / wall)
     << ", recovery " << pct(t.recovery / wall) << ", waiting for nodes " << pct(t.wait / wall);
  if (r.base.config.elastic) os << ", regrowing " << pct(t.reconfigure / wall) << ", running shrunk (lost speed) " << pct(t.shrunk / wall);
  return os.str();
}

std::vector<std::string> reliability_closed_forms(const ReliabilityReport& r) {
  const ReliabilityJob& job = r.job;
  const StudyRow& b = r.base;
  std::ostringstream l1, l2;
  l1 << "Closed forms (exponential failures, a spare always free): MTBF " << (std::isfinite(job.mtbf_s) ? dur(job.mtbf_s) : std::string("infinite"))
     << ", checkpoint cost " << dur(b.config.blocking_s) << ", R " << dur(b.recovery_s);
  if (std::isfinite(job.mtbf_s))
    l2 << "Young " << dur(job.young_interval_s) << ", Daly " << dur(job.daly_interval_s) << ", exact optimum " << dur(job.optimal_interval_s);
  else
    l2 << "Young, Daly, exact optimum: n/a (no failures: no checkpoint is needed)";
  l2 << "; at " << dur(b.config.interval_s) << ": 1 - first-order waste " << (b.first_order_ettr ? pct(b.first_order_ettr, 2) : kFirstOrderInvalid)
     << ", Daly's complete model " << pct(b.model_ettr, 2) << ", Monte-Carlo " << pct(b.stats.ettr.mean, 2);
  return {l1.str(), l2.str()};
}

ReliabilityTable reliability_interval_table(const ReliabilityReport& r) {
  ReliabilityTable t{"Checkpoint interval (Monte-Carlo; every interval sees the same failures)",
                     {"interval", "ETTR", "95% CI", "first-order", "Daly model", "best"},
                     {},
                     {true, true, true, true, true, false}};
  for (std::size_t i = 0; i < r.sweep.rows.size(); ++i) {
    const StudyRow& x = r.sweep.rows[i];
    t.rows.push_back({dur(x.config.interval_s), pct(x.stats.ettr.mean, 2), "[" + pct(x.stats.ettr.ci95_low, 2) + ", " + pct(x.stats.ettr.ci95_high, 2) + "]",
                      pct(x.first_order_ettr, 2), pct(x.model_ettr, 2), i == r.sweep.best ? "*" : ""});
  }
  return t;
}

std::string reliability_best_interval(const ReliabilityReport& r) { return "best interval by simulation: " + dur(r.sweep.best_interval_s()); }

ReliabilityTable reliability_what_if_table(const ReliabilityReport& r) {
  ReliabilityTable t{"What if (each at its own interval by the same rule; cost = the job's GPUs for the wall time)",
                     {"variant", "checkpoint", "blocks", "interval", "spares", "elastic", "ETTR", "interruptions",
                      r.window_mode ? "training kept" : "time to train", "cost", "lost cost", "spares cost"},
                     {},
                     {false, false, true, true, true, false, true, true, true, true, true, true}};
  for (const auto& x : r.what_if)
    t.rows.push_back({x.label, x.method, dur(x.config.blocking_s), dur(x.config.interval_s), std::to_string(x.config.spare_nodes),
                      x.config.elastic ? "yes" : "no", pct(x.stats.ettr.mean, 2), fixed(x.stats.interruptions.mean, 1),
                      dur(r.window_mode ? x.stats.progress_s.mean : x.stats.wall_s.mean), money(x.cost), money(x.lost_cost), money(x.spare_cost)});
  return t;
}

ReliabilityTable reliability_sensitivity_table(const ReliabilityReport& r) {
  ReliabilityTable t{"Sensitivity (x0.5 and x2; ETTR at the current interval, then at the case's own interval)",
                     {"change", "ETTR", "vs now", "own interval", "ETTR there"},
                     {},
                     {false, true, false, true, true}};
  const double now = r.base.stats.ettr.mean;
  for (const auto& x : r.sensitivity)
    t.rows.push_back({x.at_current.label, pct(x.at_current.stats.ettr.mean, 2), change_text(x.at_current.stats.ettr.mean - now),
                      dur(x.at_own.config.interval_s), pct(x.at_own.stats.ettr.mean, 2)});
  return t;
}

ReliabilityTable reliability_frontier_table(const ReliabilityReport& r) {
  ReliabilityTable t{"ETTR vs blocking checkpoint cost (each cost at its best interval; recovery as configured, R = " + dur(r.base.recovery_s) +
                         ", and instant, R = 0)",
                     {"cost", "best interval", "ETTR", "p05", "p95", "Daly model", "ETTR, R = 0"},
                     {},
                     {true, true, true, true, true, true, true}};
  for (const auto& x : r.frontier)
    t.rows.push_back({dur(x.checkpoint_cost_s), dur(x.best.config.interval_s), pct(x.best.stats.ettr.mean, 2), pct(x.best.stats.ettr.p05, 2),
                      pct(x.best.stats.ettr.p95, 2), pct(x.model_ettr, 2), pct(x.instant_recovery_ettr, 2)});
  return t;
}

std::string reliability_frontier_note(const ReliabilityReport& r) {
  if (!r.has_frontier) return "";
  auto says = [](double c) { return c < 0 ? std::string("at every cost shown") : c == 0 ? std::string("at no cost shown") : "below " + dur(c); };
  return "ETTR above 90% needs a blocking checkpoint cost " + says(r.frontier_cost_for_ettr_90_s) + " with this recovery, " +
         says(r.frontier_cost_for_ettr_90_instant_s) + " with instant recovery";
}

// ---- Notes --------------------------------------------------------------------------------------

void add_reliability_output_notes(ReliabilityReport* r) {
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
    r->notes.push_back(std::to_string(truncated) + " simulated runs (first: " + which + ") stopped after " + std::to_string(job.sim.max_events) +
                       " failures, 10x those expected: their numbers cover the time until then");
  if (r->has_frontier && !r->frontier.empty()) {
    for (bool instant : {false, true}) {
      const double c = instant ? r->frontier_cost_for_ettr_90_instant_s : r->frontier_cost_for_ettr_90_s;
      const std::string key = instant ? "cost_for_ettr_90_instant_recovery_s" : "cost_for_ettr_90_s";
      if (c < 0) r->notes.push_back("frontier: " + key + " is null: ETTR stays above 90% at every cost shown");
      else if (c == 0) r->notes.push_back("frontier: " + key + " is null: ETTR is below 90% at every cost shown");
    }
  }
}

// ---- Table --------------------------------------------------------------------------------------

void print_reliability_table(std::ostream& os, const ReliabilityReport& r) {
  constexpr std::size_t kLabelWidth = 13;
  for (const ReliabilityFact& f : reliability_facts(r)) {
    const std::string label = f.continues ? "" : f.label;
    os << label << std::string(kLabelWidth > label.size() ? kLabelWidth - label.size() : 1, ' ') << f.text << "\n";
  }
  os << "\n";

  const ReliabilityTable result = reliability_result_table(r);
  os << result.title << "\n";
  print(os, result);
  os << "  " << reliability_result_note(r) << "\n\n";

  const std::string shares = reliability_time_shares(r);
  if (!shares.empty()) os << "Where the time goes (share of wall clock)\n  " << shares << "\n\n";

  const std::vector<std::string> closed = reliability_closed_forms(r);
  os << closed[0] << "\n  " << closed[1] << "\n";
  if (!r.brief) {
    const ReliabilityTable sweep = reliability_interval_table(r);
    os << "\n" << sweep.title << "\n";
    print(os, sweep);
    if (std::any_of(r.sweep.rows.begin(), r.sweep.rows.end(), [](const StudyRow& x) { return !x.first_order_ettr; }))
      os << "  first-order n/a: the first-order waste exceeds 100% there (the model assumes rare failures and is invalid)\n";
  }
  os << "  " << reliability_best_interval(r) << "\n\n";

  if (!r.brief) {
    const ReliabilityTable what_if = reliability_what_if_table(r);
    os << what_if.title << "\n";
    print(os, what_if);
    const ReliabilityTable sensitivity = reliability_sensitivity_table(r);
    os << "\n" << sensitivity.title << "\n";
    print(os, sensitivity);
    os << "\n";
  }

  if (r.has_frontier) {
    const ReliabilityTable frontier = reliability_frontier_table(r);
    os << frontier.title << "\n";
    print(os, frontier);
    os << "  " << reliability_frontier_note(r) << "\n\n";
  }

  for (const auto& n : r.notes) os << "Note: " << n << "\n";
  const auto& rd = r.job.settings.defaults;
  if (!rd.empty()) {
    os << "Reliability defaults applied:\n";
    for (const auto& d : rd) os << "  " << d.path << " = " << d.value << " (" << d.reason << ")\n";
  }
  os << r.scenario.defaults.size() << " scenario defaults applied (listed under \"defaults\" in --format json).\n";
}

// ---- JSON / CSV ---------------------------------------------------------------------------------

Json reliability_json(const ReliabilityReport& r) {
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
                     {"cost_for_ettr_90_s", crossing(r.frontier_cost_for_ettr_90_s)},
                     {"cost_for_ettr_90_instant_recovery_s", crossing(r.frontier_cost_for_ettr_90_instant_s)}};
  }
  return j;
}

void print_reliability_csv(std::ostream& os, const ReliabilityReport& r) {
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

}  // namespace trainsim
