#include "cluster_report.hpp"

#include <cstdio>

#include "models/core/units.hpp"
#include "table.hpp"

namespace trainsim {

using Json = nlohmann::json;
using sim::cluster::PolicyResult;

namespace {

std::string pct(double f) { return fixed(100 * f, 1) + "%"; }

std::string count_text(double n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", n);
  std::string s = buf, out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i > 0 && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return out;
}

Json policy_json(const PolicyResult& p, double wall_s) {
  Json reasons = Json::array();
  for (const auto& [why, n] : p.rejected_reasons) reasons.push_back({{"reason", why}, {"jobs", n}});
  return {{"name", p.name}, {"jobs", p.jobs}, {"rejected", p.rejected}, {"rejected_reasons", reasons}, {"unfinished", p.unfinished}, {"timed_out", p.timed_out},
          {"utilization", p.utilization}, {"utilization_in_span", p.utilization_in_span}, {"mean_wait_s", p.mean_wait_s}, {"p50_wait_s", p.p50_wait_s}, {"p99_wait_s", p.p99_wait_s},
          {"mean_first_wait_s", p.mean_first_wait_s}, {"mean_job_ettr", p.mean_job_ettr},
          {"mean_jct_s", p.mean_jct_s}, {"mean_slowdown", p.mean_slowdown}, {"makespan_s", p.makespan_s},
          {"preemptions", p.preemptions}, {"failures", p.failures}, {"spot_reclaims", p.spot_reclaims}, {"resizes", p.resizes}, {"gpu_hours_lost", p.gpu_hours_lost}, {"goodput", p.goodput},
          {"gpu_hours", p.gpu_hours}, {"energy_kwh", p.energy_kwh}, {"carbon_kg", p.carbon_kg}, {"cost_usd", p.cost_usd},
          {"allocated_at_end", p.allocated_at_end}, {"waiting_gpus_at_end", p.waiting_gpus_at_end},
          {"job_errors", p.job_errors}, {"job_retries", p.job_retries}, {"failed_jobs", p.failed_jobs}, {"failed_gpu_hours", p.failed_gpu_hours},
          {"wall_s", wall_s}};
}

}  // namespace

Json cluster_json(const ClusterRun& r) {
  Json skipped = Json::array();
  for (const auto& [why, n] : r.workload.skipped) skipped.push_back({{"reason", why}, {"rows", n}});
  Json out = {{"cluster", sim::cluster::to_json(r.cluster)},
              {"cluster_source", r.cluster_source},
              {"workload", {{"source", r.workload.source}, {"rows", r.workload.rows}, {"jobs", r.workload.jobs}, {"skipped", skipped}, {"time_scale", r.time_scale}, {"fill", r.fill}, {"fill_to", r.fill_to}, {"synthetic", r.synthetic_note}}},
              {"policies", Json::array()}};
  for (std::size_t i = 0; i < r.policies.size(); ++i) {
    Json p = policy_json(r.policies[i], i < r.wall_s.size() ? r.wall_s[i] : 0);
    p["seeds"] = r.seeds;
    if (i < r.ideal_mean_wait_s.size()) {
      p["ideal_mean_wait_s"] = r.ideal_mean_wait_s[i];
      p["scheduler_latency_s"] = r.policies[i].mean_wait_s - r.ideal_mean_wait_s[i];
    }
    if (i < r.spread.size() && !r.spread[i].metrics.empty()) {
      Json ci = Json::object();
      for (const auto& [name, st] : r.spread[i].metrics) ci[name] = {{"mean", st.mean}, {"low", st.ci95_low}, {"high", st.ci95_high}, {"sd", st.stddev}};
      p["ci95"] = ci;
    }
    out["policies"].push_back(p);
  }
  out["scheduler"] = {{"admissions_per_day", r.admissions_per_day > 0 ? Json(r.admissions_per_day) : Json(nullptr)},
                      {"arrivals_per_day", r.arrivals_per_day}};
  if (r.recorded_n > 0)
    out["recorded"] = {{"jobs", r.recorded_n}, {"mean_wait_s", r.recorded_mean_wait_s}, {"p50_wait_s", r.recorded_p50_wait_s}, {"p99_wait_s", r.recorded_p99_wait_s}};
  Json defaults = Json::array();
  for (const AppliedDefault& d : r.defaults) defaults.push_back({{"path", d.path}, {"value", d.value}, {"reason", d.reason}});
  out["defaults"] = defaults;
  out["notes"] = r.notes;
  Json jobs = Json::array();
  for (const auto& m : r.model_jobs) jobs.push_back({{"id", m.id}, {"step_s", m.step_s}, {"step_cross_leaf_s", m.step_cross_leaf_s}, {"steps", m.steps}});
  if (!r.model_jobs.empty()) out["model_jobs"] = jobs;
  return out;
}

const std::vector<std::string>& policy_table_header() {
  static const std::vector<std::string> h{"policy", "jobs", "util", "mean wait", "p50 wait", "p99 wait", "mean JCT", "makespan",
                                          "preempt", "failures", "GPU-h lost", "goodput", "run"};
  return h;
}

std::vector<std::vector<std::string>> policy_table_rows(const ClusterRun& r) {
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < r.policies.size(); ++i) {
    const PolicyResult& p = r.policies[i];
    rows.push_back({p.name, count_text(p.jobs), pct(p.utilization), format_seconds(p.mean_wait_s), format_seconds(p.p50_wait_s),
                    format_seconds(p.p99_wait_s), format_seconds(p.mean_jct_s), format_seconds(p.makespan_s), count_text(p.preemptions),
                    count_text(p.failures), fixed(p.gpu_hours_lost, 1), pct(p.goodput), fixed(i < r.wall_s.size() ? r.wall_s[i] : 0, 2) + " s"});
  }
  return rows;
}

namespace {
// The failure model by name and by the rate it runs at (a preset scaled by the scenario keeps its name).
std::string failures_text(const sim::cluster::ClusterSpec& c) {
  if (!c.failures_on) return "off";
  const int gpn = c.max_gpus_per_node() > 0 ? c.max_gpus_per_node() : 8;
  return c.failures.name + " at " + fixed(c.failures.failures_per_1000_node_days(gpn), 2) + " per 1,000 node-days";
}
// Job-level failures (user and code errors) and their retries.
std::string job_failures_text(const sim::cluster::ClusterSpec& c) {
  const auto& f = c.job_failures;
  if (!f.on()) return "off";
  return f.name + ": " + fixed(100 * f.attempt_failure_probability, 1) + "% of runs fail, at " + fixed(100 * f.failure_point_mean, 0) +
         "% of their work on average; " + std::to_string(f.retries) + (f.retries == 1 ? " retry" : " retries") +
         (f.retries > 0 ? " after " + format_seconds(f.retry_backoff_s) + " doubling to " + format_seconds(f.retry_backoff_max_s) : std::string());
}
}  // namespace

std::string cluster_text(const ClusterRun& r) {
  const auto& c = r.cluster;
  std::string s = count_text(c.total_nodes()) + " nodes, " + count_text(c.total_gpus()) + " GPUs (" + r.cluster_source + "):";
  for (const auto& p : c.pools) s += " " + p.name + " " + std::to_string(p.nodes) + (p.spare_nodes ? " +" + std::to_string(p.spare_nodes) + " spare" : "") + ";";
  return s + " " + std::to_string(c.nodes_per_leaf) + " nodes per leaf switch, GPU sharing " + (c.gpu_sharing ? "on" : "off") + ", failures " +
         failures_text(c) + ", job errors " + job_failures_text(c) + ", checkpoint every " + format_seconds(c.checkpoint_interval_s) +
         " (jobs that name none)";
}

std::string workload_text(const ClusterRun& r) {
  std::string s = r.workload.source + ": " + count_text(static_cast<double>(r.workload.rows)) + " rows, " +
                  count_text(static_cast<double>(r.workload.jobs)) + " jobs";
  if (r.time_scale != 1) s += ", times x" + fixed(r.time_scale, 3);
  if (!r.synthetic_note.empty()) s += ": " + r.synthetic_note;
  return s;
}

void print_cluster_table(std::ostream& os, const ClusterRun& r) {
  const auto& c = r.cluster;
  os << "Cluster    " << count_text(c.total_nodes()) << " nodes, " << count_text(c.total_gpus()) << " GPUs (" << r.cluster_source << "):";
  for (const auto& p : c.pools) os << " " << p.name << " " << p.nodes << (p.spare_nodes ? " +" + std::to_string(p.spare_nodes) + " spare" : "") << ";";
  os << "\n           " << c.nodes_per_leaf << " nodes per leaf switch, GPU sharing " << (c.gpu_sharing ? "on" : "off") << ", failures "
 << failures_text(c) << ", checkpoint every " << format_seconds(c.checkpoint_interval_s) << " (jobs that name none)\n";
  if (c.job_failures.on()) os << "           job errors " << job_failures_text(c) << "\n";
  os << "Workload   " << r.workload.source << ": " << count_text(static_cast<double>(r.workload.rows)) << " rows, "
     << count_text(static_cast<double>(r.workload.jobs)) << " jobs";
  if (r.time_scale != 1) os << ", times x" << r.time_scale;
  if (!r.synthetic_note.empty()) os << ": " << r.synthetic_note;
  os << "\n";
  for (const auto& [why, n] : r.workload.skipped) os << "           skipped " << count_text(static_cast<double>(n)) << ": " << why << "\n";
  if (!r.model_jobs.empty()) {
    os << "           step time within one leaf switch / across leaves (inter-node collectives at 1/" << fixed(c.oversubscription, 1)
       << " of the NIC bandwidth over the spine):\n";
    for (const auto& m : r.model_jobs)
      os << "           " << m.id << ": " << format_seconds(m.step_s) << " / " << format_seconds(m.step_cross_leaf_s) << " (+"
         << fixed(100 * (m.step_cross_leaf_s / m.step_s - 1), 1) << "%), " << count_text(m.steps) << " steps\n";
  }
  os << "\n";
  if (r.fill) {
    // FGD's experiment (Weng et al., ATC'23): the share of the GPUs allocated when the last pod has arrived.
    os << "Fill: pods in a random order, never ending; GPUs allocated at the last arrival (FGD, Weng et al. ATC'23)";
    if (r.fill_to > 0) os << ", the workload inflated by random draws of its pods to " << pct(r.fill_to) << " of the GPUs";
    if (r.seeds > 1) os << "; means of " << r.seeds << " seeds (each a new order and draw) with their 95% intervals";
    os << "\n";
    TextTable f({"policy", "allocated", "GPUs allocated", "jobs waiting", "GPUs they ask", "run"});
    for (std::size_t i = 0; i < r.policies.size(); ++i) {
      const PolicyResult& p = r.policies[i];
      std::string allocated = pct(p.allocated_at_end);
      if (i < r.spread.size())
        for (const auto& [name, st] : r.spread[i].metrics)
          if (name == "allocated_at_end") allocated += " [" + pct(st.ci95_low) + ", " + pct(st.ci95_high) + "]";
      f.add_row({p.name, allocated, fixed(p.allocated_at_end * r.cluster.total_gpus(), 1), count_text(p.unfinished - p.running_at_end),
                 fixed(p.waiting_gpus_at_end, 1), fixed(i < r.wall_s.size() ? r.wall_s[i] : 0, 2) + " s"});
    }
    f.print(os);
    return;
  }
  TextTable t(policy_table_header());
  for (auto& row : policy_table_rows(r)) t.add_row(std::move(row));
  t.print(os);
  if (r.recorded_n > 0)
    os << "\nRecorded in the trace (" << count_text(r.recorded_n) << " jobs): wait mean " << format_seconds(r.recorded_mean_wait_s) << ", p50 "
       << format_seconds(r.recorded_p50_wait_s) << ", p99 " << format_seconds(r.recorded_p99_wait_s) << "\n";
  if (!r.ideal_mean_wait_s.empty()) {
    const sim::cluster::SchedulerCycle& cycle = r.cluster.cycle;
    os << "\nWaiting for the scheduler itself (a pass every " << (cycle.period_s > 0 ? format_seconds(cycle.period_s) : std::string("event"))
       << (cycle.cost_s > 0 ? ", decisions " + format_seconds(cycle.cost_s) + " later" : std::string())
       << (cycle.admissions_per_queue > 0 ? ", " + std::to_string(cycle.admissions_per_queue) + " admissions per queue a pass" : std::string()) << "):";
    for (std::size_t i = 0; i < r.ideal_mean_wait_s.size() && i < r.policies.size(); ++i)
      os << " " << r.policies[i].name << " " << format_seconds(r.policies[i].mean_wait_s - r.ideal_mean_wait_s[i]) << " of its "
         << format_seconds(r.policies[i].mean_wait_s) << " mean wait;";
    os << " the rest is waiting for GPUs (the same runs passing at every event at no cost)\n";
  }
  if (r.policies.size() > 0 && r.policies[0].utilization_in_span > 0) {
    // A synthetic workload's asked load is the GPU-time it offers within its span: what the run delivered there.
    os << "\nDelivered over the span (allocated GPU-time over the GPUs' from the first arrival to the span's end):";
    for (const PolicyResult& p : r.policies) os << " " << p.name << " " << pct(p.utilization_in_span) << ";";
    os << "\n";
  }
  if (r.policies.size() > 0 && r.policies[0].energy_kwh > 0) {
    os << "\nEnergy (allocated GPU-hours at the pools' GPU power)";
    if (!r.cluster.carbon_g_per_kwh.empty()) os << " and emissions at the grid's intensity by hour";
    os << ":";
    for (const PolicyResult& p : r.policies) {
      os << " " << p.name << " " << fixed(p.energy_kwh / 1000, 1) << " MWh";
      if (!r.cluster.carbon_g_per_kwh.empty()) os << " / " << fixed(p.carbon_kg / 1000, 2) << " t CO2";
      os << ";";
    }
    os << "\n";
  }
  for (const PolicyResult& p : r.policies)
    if (p.spot_reclaims > 0) os << p.name << ": " << p.spot_reclaims << " spot nodes reclaimed (jobs on them counted under failures' GPU-hours lost)\n";
  for (const PolicyResult& p : r.policies)
    if (p.resizes > 0) os << p.name << ": " << p.resizes << " elastic resizes (shrunk after a failure or for waiting jobs, grown into idle GPUs)\n";
  for (const PolicyResult& p : r.policies) {
    if (p.rejected > 0) {
      os << p.name << ": " << p.rejected << " jobs rejected, never started:";
      for (std::size_t i = 0; i < p.rejected_reasons.size(); ++i)
        os << (i > 0 ? ";" : "") << " " << p.rejected_reasons[i].second << " " << p.rejected_reasons[i].first;
      os << "\n";
    }
    if (p.unfinished > 0) os << p.name << ": " << p.unfinished << " jobs had not ended at the horizon\n";
    if (p.timed_out > 0) os << p.name << ": " << p.timed_out << " jobs stopped at their walltime before their work was done (Slurm: TIMEOUT)\n";
    if (p.job_errors > 0)
      os << p.name << ": " << p.job_errors << " runs ended by job errors, " << p.job_retries << " retried; " << p.failed_jobs
         << " jobs failed for good (not among the finished), holding " << fixed(p.failed_gpu_hours, 1) << " GPU-hours that finished nothing\n";
    if (p.mean_wait_s > p.mean_first_wait_s * 1.01 + 1)
      os << p.name << ": waits count the time re-queued after preemptions and failures (mean " << format_seconds(p.mean_wait_s)
         << "; until the first start only: " << format_seconds(p.mean_first_wait_s) << ")\n";
  }
  if (r.seeds > 1) {
    os << "\nMeans over " << r.seeds << " seeds with their 95% confidence intervals (the estimator of `trainsim reliability`):\n";
    TextTable ci({"policy", "mean wait", "p99 wait", "util", "goodput", "job ETTR", "failures", "GPU-h lost"});
    auto cell = [](const sim::cluster::SeedStatistics& s, const std::string& name, auto fmt) {
      for (const auto& [key, st] : s.metrics)
        if (key == name) return fmt(st.mean) + " [" + fmt(st.ci95_low) + ", " + fmt(st.ci95_high) + "]";
      return std::string("-");
    };
    auto secs = [](double v) { return format_seconds(v); };
    auto percent = [](double v) { return pct(v); };
    auto num = [](double v) { return fixed(v, 1); };
    for (std::size_t i = 0; i < r.policies.size() && i < r.spread.size(); ++i)
      ci.add_row({r.policies[i].name, cell(r.spread[i], "mean_wait_s", secs), cell(r.spread[i], "p99_wait_s", secs), cell(r.spread[i], "utilization", percent),
                  cell(r.spread[i], "goodput", percent), cell(r.spread[i], "mean_job_ettr", percent), cell(r.spread[i], "failures", num),
                  cell(r.spread[i], "gpu_hours_lost", num)});
    ci.print(os);
  }
  for (const std::string& n : r.notes) os << "Note: " << n << "\n";
  os << "\nutil: allocated GPU-time over GPU-time in service from the first arrival to the last end; goodput: the jobs' own\n"
        "GPU-time over allocated GPU-time (the rest: work rolled back by failures and preemptions, restarts): the cluster's\n"
        "view. The jobs' view is `trainsim reliability`'s ETTR, work over wall time from the first start to the end, waits\n"
        "for nodes and re-queueing included: mean_job_ettr in JSON, and in the interval table with --seeds.\n";
}

void print_cluster_csv(std::ostream& os, const ClusterRun& r) {
  os << "policy,jobs,rejected,unfinished,utilization,mean_wait_s,p50_wait_s,p99_wait_s,mean_jct_s,mean_slowdown,makespan_s,preemptions,failures,"
        "spot_reclaims,resizes,gpu_hours_lost,goodput,gpu_hours,energy_kwh,carbon_kg,cost_usd,job_errors,job_retries,failed_jobs,failed_gpu_hours\n";
  for (const PolicyResult& p : r.policies)
    os << csv_field(p.name) << ',' << p.jobs << ',' << p.rejected << ',' << p.unfinished << ',' << p.utilization << ',' << p.mean_wait_s << ','
       << p.p50_wait_s << ',' << p.p99_wait_s << ',' << p.mean_jct_s << ',' << p.mean_slowdown << ',' << p.makespan_s << ',' << p.preemptions << ','
       << p.failures << ',' << p.spot_reclaims << ',' << p.resizes << ',' << p.gpu_hours_lost << ',' << p.goodput << ',' << p.gpu_hours << ',' << p.energy_kwh << ',' << p.carbon_kg << ',' << p.cost_usd
       << ',' << p.job_errors << ',' << p.job_retries << ',' << p.failed_jobs << ',' << p.failed_gpu_hours << '\n';
}

void write_cluster_jobs_csv(std::ostream& os, const ClusterRun& r, const std::vector<sim::cluster::ClusterJob>& jobs) {
  os << "policy,id,user,queue,gpus,gpu_milli,submit_s,start_s,end_s,wait_s,jct_s,slowdown,preemptions,failures,reclaims,resizes,gpu_hours_lost,leaves,first_wait_s,job_errors,failed\n";
  auto cell = [](double v) { return v < 0 ? std::string() : std::to_string(v); };
  for (const PolicyResult& p : r.policies)
    for (const auto& rec : p.records) {
      const auto& j = jobs[static_cast<std::size_t>(rec.index)];
      os << csv_field(p.name) << ',' << csv_field(j.id) << ',' << csv_field(j.user) << ',' << csv_field(j.queue) << ',' << j.gpus << ','
         << j.gpu_milli << ',' << rec.submit_s << ',' << cell(rec.start_s) << ',' << cell(rec.end_s) << ',' << cell(rec.wait_s) << ','
         << cell(rec.jct_s) << ',' << cell(rec.slowdown) << ',' << rec.preemptions << ',' << rec.failures << ',' << rec.reclaims << ',' << rec.resizes << ',' << rec.gpu_hours_lost << ','
         << rec.leaves << ',' << cell(rec.first_wait_s) << ',' << rec.job_errors << ',' << (rec.failed ? 1 : 0) << '\n';
    }
}

void write_cluster_timeseries_csv(std::ostream& os, const ClusterRun& r) {
  os << "policy,t_s,allocated_gpus,capacity_gpus,queued,running,fragmented_gpus\n";
  for (const PolicyResult& p : r.policies)
    for (const auto& s : p.series)
      os << csv_field(p.name) << ',' << s.t_s << ',' << s.allocated_gpus << ',' << s.capacity_gpus << ',' << s.queued << ',' << s.running << ','
         << s.fragmented_gpus << '\n';
}

}  // namespace trainsim
