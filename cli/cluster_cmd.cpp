// `trainsim cluster [SCENARIO] --trace KIND:PATH --policy fifo,backfill,...`: a shared cluster replaying a
// workload under each scheduling policy (sim/cluster), compared side by side.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <set>

#include "command.hpp"
#include "flag_values.hpp"
#include "flag_checks.hpp"
#include "models/errors.hpp"
#include "models/json_reader.hpp"
#include "models/units.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "reports/cluster_document.hpp"
#include "reports/cluster_report.hpp"
#include "reports/table.hpp"
#include "run_files.hpp"
#include "scenario_input.hpp"
#include "sim/cluster/cluster_sim.hpp"
#include "sim/cluster/cluster_state.hpp"
#include "sim/cluster/fill_workload.hpp"
#include "sim/cluster/model_jobs.hpp"
#include "sim/cluster/seed_statistics.hpp"
#include "sim/cluster/synthetic_workload.hpp"
#include "sim/cluster/trace_import.hpp"

namespace trainsim::cli {
namespace {

using Json = nlohmann::json;
namespace cl = trainsim::sim::cluster;

// What a policy assumed that the reader should know: an oracle for runtimes, a policy missing its settings.
std::vector<std::string> policy_notes(const std::vector<cl::PolicyChoice>& choices, const cl::ClusterSpec& cluster, const std::vector<cl::ClusterJob>& jobs) {
  auto uses = [&](const std::string& ordering) {
    return std::any_of(choices.begin(), choices.end(), [&](const cl::PolicyChoice& c) { return c.ordering == ordering; });
  };
  std::vector<std::string> notes;
  const auto no_walltime = std::count_if(jobs.begin(), jobs.end(), [](const cl::ClusterJob& j) { return j.walltime_s <= 0; });
  if ((uses("backfill") || uses("easy") || uses("multifactor")) && no_walltime > 0)
    notes.push_back(std::to_string(no_walltime) + " of " + std::to_string(jobs.size()) +
                    " jobs give no walltime: backfill takes their true runtimes as the estimate (an oracle; a real scheduler sees only "
                    "the requested limits, usually well above the runtime)");
  if (uses("quota") && cluster.queues.empty())
    notes.push_back("quota: the cluster defines no queues, so no job has a quota and every job only borrows idle GPUs (quota runs as "
                    "arrival order that skips jobs which do not fit); define cluster.queues to compare quotas");
  if (uses("multifactor")) {
    const auto users = std::count_if(jobs.begin(), jobs.end(), [&](const cl::ClusterJob& j) { return !j.user.empty() && j.user != jobs.front().user; });
    if (users == 0)
      notes.push_back("multifactor: every job belongs to one user (or the trace names none), so fair-share orders nothing; the order is by "
                      "age, size and QOS");
  }
  if (uses("las") && cluster.las_promote_knob <= 0)
    notes.push_back("las: no starvation guard (cluster.scheduler.las_promote_knob 0); jobs of a low queue can wait without bound "
                    "while short jobs keep arriving; waits include the time re-queued after preemptions");
  return notes;
}

// Whether the scheduler itself delays starts: a cycle between passes, a cost per pass, or a cap on admissions.
bool scheduler_delays(const cl::ClusterSpec& c) { return c.cycle.period_s > 0 || c.cycle.cost_s > 0 || c.cycle.admissions_per_queue > 0; }

// The control plane's admission capacity (a cap per queue and cycle, every queue named and the default one) against
// the workload's arrivals, both a day.
void scheduler_throughput(const std::vector<cl::ClusterJob>& jobs, ClusterRun* run) {
  const cl::SchedulerCycle& cycle = run->cluster.cycle;
  if (jobs.size() > 1) {
    double first = jobs.front().submit_s, last = first;
    for (const cl::ClusterJob& j : jobs) first = std::min(first, j.submit_s), last = std::max(last, j.submit_s);
    if (last > first) run->arrivals_per_day = static_cast<double>(jobs.size() - 1) / (last - first) * 86400;
  }
  if (cycle.period_s > 0 && cycle.admissions_per_queue > 0) {
    std::set<std::string> queues;
    for (const cl::ClusterJob& j : jobs) queues.insert(j.queue);
    run->admissions_per_day = cycle.admissions_per_queue * static_cast<double>(queues.size()) * 86400 / cycle.period_s;
    if (run->arrivals_per_day > run->admissions_per_day)
      run->notes.push_back("scheduler: jobs arrive at " + format_count(run->arrivals_per_day) + " a day, more than the " +
                           format_count(run->admissions_per_day) + " a day its cycle admits (" + std::to_string(cycle.admissions_per_queue) +
                           " per queue every " + format_seconds(cycle.period_s) + "): the queue grows whatever the GPUs");
  }
}

constexpr double kFillDurationS = 1e12;  // "never ends" under --fill: far past any trace's last arrival

struct ClusterFlags {
  std::string scenario;
  std::vector<std::string> sets;  // --set POINTER=VALUE into the scenario
  std::string trace;
  std::string policies = "fifo";
  std::string format = "table";
  std::string report;  // --report FILE.html
  int nodes = 0, gpus_per_node = 8, nodes_per_leaf = 0;
  std::string gpu = "h100-sxm-80gb";
  std::string failures;
  std::string job_failures;
  int retries = -1;
  std::string checkpoint_interval;
  std::string gpu_sharing;
  double time_scale = 1;
  double horizon_s = 0, sample_interval_s = 0;
  bool fill = false;
  bool rigid = false;
  double fill_to = 0;
  int synthetic_jobs = 0;
  std::string synthetic_model = "blocks";
  int synthetic_block = 0;
  std::string span = "365d";
  double load = 0.8;
  std::uint64_t seed = 1;
  int seeds = 1;
  std::string jobs_csv, timeseries_csv;
  // The numeric flags a user gave (0 is their "not given" default, so a given 0, negative or NaN must be told apart).
  const CLI::Option *horizon_given = nullptr, *sample_interval_given = nullptr, *fill_to_given = nullptr, *synthetic_given = nullptr;
};

// Time-series samples a run may record per policy (about 40 bytes each): a documented bound checked before the run
// (over the submit span and the longest job; a run that queues for longer has its interval doubled as it goes).
constexpr double kMaxSamples = static_cast<double>(cl::kMaxTimeSamples);

bool given(const CLI::Option* o) { return o && o->count() > 0; }

// Each numeric flag in its range where it is parsed: a finite value, exit 2 with the range otherwise (the value
// as given: 1e-09, nan, -5).
void check_numeric_flags(const ClusterFlags& f) {
  auto in = [](double v, double lo, double hi) { return std::isfinite(v) && v >= lo && v <= hi; };
  if (given(f.horizon_given) && !(in(f.horizon_s, 0, 1e12) && f.horizon_s > 0))
    throw InputError("--horizon", format_number(f.horizon_s), "simulated seconds above 0, at most 1e12");
  if (given(f.sample_interval_given) && !in(f.sample_interval_s, 1e-3, 1e12))
    throw InputError("--sample-interval", format_number(f.sample_interval_s), "seconds between samples, from 0.001 to 1e12");
  if (given(f.fill_to_given) && !(in(f.fill_to, 0, 10) && f.fill_to > 0))
    throw InputError("--fill-to", format_number(f.fill_to), "a fraction of the cluster's GPUs above 0, at most 10");
  if (given(f.synthetic_given) && f.synthetic_jobs < 1)
    throw InputError("--synthetic", std::to_string(f.synthetic_jobs), "a number of jobs from 1 to 10,000,000");
}

// The samples a run would record: its likely length (the horizon, else the arrivals' span plus the longest job)
// over the interval.
void check_samples(const ClusterFlags& f, const std::vector<cl::ClusterJob>& jobs) {
  if (!given(f.sample_interval_given) || jobs.empty()) return;
  double longest = 0;
  for (const cl::ClusterJob& j : jobs) longest = std::max(longest, j.duration_s);
  const double length = f.horizon_s > 0 ? f.horizon_s : jobs.back().submit_s - jobs.front().submit_s + longest;
  if (length / f.sample_interval_s > kMaxSamples)
    throw InputError("--sample-interval", format_number(f.sample_interval_s),
                     "an interval giving at most 1,000,000 samples over the run (about " + format_seconds(length) + " here: at least " +
                         format_seconds(length / kMaxSamples) + ")");
}

int run_cluster(const ClusterFlags& f) {
  check_numeric_flags(f);
  ClusterRun run;
  if (std::find(output_formats().begin(), output_formats().end(), f.format) == output_formats().end())
    throw InputError("--format", f.format, output_formats_text());
  if (!(f.time_scale > 0 && f.time_scale <= 1e6)) throw InputError("--time-scale", std::to_string(f.time_scale), "a positive factor up to 1e6");
  std::vector<cl::PolicyChoice> choices;
  for (const std::string& p : split_list(f.policies)) choices.push_back(cl::parse_policy_choice(p, "--policy"));
  if (choices.empty()) throw InputError("--policy", f.policies, "one or more policies separated by commas");

  // The cluster: --nodes, else the scenario's "cluster" section, else the trace's own node list.
  if (f.scenario.empty() && !f.sets.empty()) throw InputError("--set", "\"" + f.sets.front() + "\"", "a scenario file to set it in");
  Json section = Json::object();
  if (!f.scenario.empty()) {
    Json doc = read_json_file(f.scenario, "");
    apply_sets(doc, f.sets);
    if (!doc.is_object() || !doc.contains("cluster")) throw InputError("/cluster", "nothing", "a \"cluster\" section in " + f.scenario);
    section = doc["cluster"];
    // One wiring for both simulators: without its own, the cluster takes the leaf switches of hardware.network.
    if (section.is_object() && !section.contains("network") && doc.contains("hardware") && doc["hardware"].is_object() &&
        doc["hardware"].contains("network") && doc["hardware"]["network"].is_object()) {
      const Json& net = doc["hardware"]["network"];
      for (const char* key : {"nodes_per_leaf", "oversubscription"})
        if (net.contains(key)) section["network"][key] = net[key];
      if (section.contains("network")) run.defaults.push_back({"/cluster/network", section["network"].dump(), "from /hardware/network"});
    }
  }
  if (!f.failures.empty()) section["failures"] = f.failures;
  // Job errors: a preset (or none) from the flag, its retries on top of the scenario's or the preset's.
  if (!f.job_failures.empty()) section["job_failures"] = Json{{"preset", f.job_failures}};
  if (f.job_failures == "none") section["job_failures"] = "none";
  if (f.retries >= 0) {
    if (!section.contains("job_failures") || !section["job_failures"].is_object())
      throw InputError("--retries", std::to_string(f.retries), "job failures to retry: --job-failures PRESET or the scenario's cluster.job_failures");
    section["job_failures"]["retries"] = f.retries;
  }
  if (!f.checkpoint_interval.empty()) section["checkpoint_interval"] = f.checkpoint_interval;
  if (f.nodes_per_leaf > 0) section["network"]["nodes_per_leaf"] = f.nodes_per_leaf;
  if (f.nodes > 0) section["pools"] = Json::array({{{"gpu", f.gpu}, {"gpus_per_node", f.gpus_per_node}, {"nodes", f.nodes}}});
  // The workload: a trace, else the scenario's jobs given as what they train (their speed from the step model).
  cl::Trace trace;
  const bool model_jobs = f.trace.empty() && section.is_object() && section.contains("jobs");
  if (!model_jobs) {
    if (f.trace.empty())
      throw InputError("--trace", "nothing", "a workload trace: " + join(cl::trace_kinds()) + " (or jobs in the scenario's cluster section)",
                       "e.g. --trace philly-chronus:../shared/traces/philly-derived-chronus/trace_job_Philly_MIX1.csv");
    note_input_file(f.trace.substr(f.trace.find(':') + 1));  // KIND:PATH
    trace = cl::import_trace(f.trace, f.fill || f.fill_to > 0);
  }
  const bool fractional = std::any_of(trace.jobs.begin(), trace.jobs.end(), [](const cl::ClusterJob& j) { return j.gpu_milli < 1000; });
  if (!f.gpu_sharing.empty()) {
    if (f.gpu_sharing != "true" && f.gpu_sharing != "false") throw InputError("--gpu-sharing", f.gpu_sharing, "true or false");
    section["gpu_sharing"] = f.gpu_sharing == "true";
  } else if (!section.contains("gpu_sharing") && fractional) {
    section["gpu_sharing"] = true;
    run.defaults.push_back({"/cluster/gpu_sharing", "true", "the trace asks for fractions of a GPU, shared as on its own cluster"});
  }
  run.cluster = cl::parse_cluster(section, "/cluster", &run.defaults);
  if (f.nodes > 0) run.cluster_source = "--nodes";
  else if (!run.cluster.pools.empty()) run.cluster_source = f.scenario;
  else if (!trace.nodes.empty()) {
    run.cluster = cl::cluster_from_trace_nodes(trace.nodes, run.cluster);
    run.cluster_source = "the trace's node list";
  } else {
    throw InputError("--nodes", "nothing", "a cluster: --nodes N [--gpus-per-node G --gpu NAME], or a scenario with a \"cluster\" section",
                     "this trace has no node list of its own");
  }
  if (model_jobs) {
    const std::string dir = std::filesystem::path(f.scenario).parent_path().string();
    trace.jobs = cl::jobs_from_scenarios(section["jobs"], dir, "/cluster/jobs", run.cluster, &run.model_jobs);
    trace.report.source = f.scenario + " /cluster/jobs";
    trace.report.rows = trace.report.jobs = trace.jobs.size();
  }
  if (trace.jobs.empty()) {
    std::string why = std::to_string(trace.report.rows) + (trace.report.rows == 1 ? " row" : " rows");
    for (const auto& [reason, n] : trace.report.skipped) why += ", " + std::to_string(n) + " skipped: " + reason;
    throw InputError(model_jobs ? "/cluster/jobs" : "--trace", "\"" + trace.report.source + "\" (no job: " + why + ")", "a workload with at least one job");
  }
  double synthetic_span_s = 0;  // the span a synthetic workload's load is offered in (its delivery is measured there)
  if (f.synthetic_jobs > 0) {
    if (model_jobs) throw InputError("--synthetic", std::to_string(f.synthetic_jobs), "a --trace to fit (not the scenario's jobs)");
    // Jobs drawn from the trace (blocks of its own job sequence, or Poisson arrivals and lognormal durations), at
    // the asked scale.
    if (f.synthetic_model != "blocks" && f.synthetic_model != "poisson")
      throw InputError("--synthetic-model", f.synthetic_model, "blocks (the trace's own job sequence in blocks) or poisson (arrivals and lognormal durations)");
    if (f.synthetic_jobs > 10'000'000) throw InputError("--synthetic", std::to_string(f.synthetic_jobs), "at most 10,000,000 jobs");
    if (!(f.load > 0 && f.load <= 10)) throw InputError("--load", std::to_string(f.load), "an offered load above 0, at most 10");
    std::string why;
    const auto span = parse_quantity(f.span, Quantity::Time, &why);
    if (!span || !(*span >= 1 && *span <= 100 * 365 * 86400.0)) throw InputError("--span", f.span, "a duration from 1 s to 100 years, e.g. 365d", why);
    cl::SyntheticSpec spec;
    spec.jobs = f.synthetic_jobs;
    spec.span_s = *span;
    spec.load = f.load;
    spec.seed = f.seed;
    spec.model = f.synthetic_model == "blocks" ? cl::SyntheticModel::Blocks : cl::SyntheticModel::Poisson;
    if (f.synthetic_block < 0 || f.synthetic_block > 10'000'000) throw InputError("--synthetic-block", std::to_string(f.synthetic_block), "jobs per block, 1 to 10,000,000 (0: the square root of the trace's jobs)");
    spec.block_jobs = f.synthetic_block;
    spec.cluster_gpus = run.cluster.total_gpus();
    for (const cl::NodePool& p : run.cluster.pools) spec.max_gpus = std::max(spec.max_gpus, p.total_gpus());
    double scale = 1;
    const cl::WorkloadFit fit = cl::fit_workload(trace.jobs, f.trace);
    trace.jobs = cl::synthesize_workload(fit, spec, &scale);
    trace.report.source = "synthetic (" + f.synthetic_model + "), fitted to " + f.trace;
    trace.report.jobs = trace.jobs.size();
    const cl::WorkloadComparison cmp = cl::compare_workloads(fit, trace.jobs, scale);
    synthetic_span_s = *span;
    run.synthetic_note = std::to_string(f.synthetic_jobs) + " jobs over " + format_seconds(*span) + " at load " + fixed(f.load, 2) +
                         " (durations x" + fixed(scale, 3) + " of the trace's); arrival gaps' CV " + fixed(cmp.synthetic_gap_cv, 2) +
                         " (trace " + fixed(cmp.trace_gap_cv, 2) + "), arriving in the second of the previous job " +
                         fixed(100 * cmp.synthetic_same_second, 1) + "% (trace " + fixed(100 * cmp.trace_same_second, 1) +
                         "%), median duration before scaling " + format_seconds(cmp.synthetic_median_duration_s) + " (trace " +
                         format_seconds(cmp.trace_median_duration_s) + ")";
  }
  if (f.time_scale != 1)
    for (cl::ClusterJob& j : trace.jobs) j.submit_s *= f.time_scale, j.duration_s *= f.time_scale, j.walltime_s *= f.time_scale;
  // The FGD experiment (Weng et al., ATC'23): pods arrive in a random order and never end; how much of the
  // cluster a placement fills before fragmentation leaves requests unplaceable. Each seed draws the order (and,
  // with --fill-to, the pods added to inflate the workload) anew, as the paper's 10 seeds do.
  std::vector<cl::ClusterJob> fill_pods;
  if (f.fill || f.fill_to > 0) {
    double asked = 0, asking = 0;  // (--fill-to's range: check_numeric_flags)
    for (const cl::ClusterJob& j : trace.jobs) asked += cl::gpus_held(j, run.cluster.gpu_sharing), asking += j.gpus > 0;
    // The pods an inflation would draw, at the trace's mean request: bounded like --synthetic.
    const double drawn = asked > 0 ? f.fill_to * run.cluster.total_gpus() / (asked / asking) : 0;
    if (drawn > 10'000'000)
      throw InputError("--fill-to", format_number(f.fill_to), "at most 10,000,000 pods drawn (this trace's pods ask " + fixed(asked / asking, 3) +
                                                              " GPUs each on average; this cluster would need " + fixed(drawn, 0) + ")");
    fill_pods = std::move(trace.jobs);
    trace.jobs = cl::fill_workload(fill_pods, f.fill_to, run.cluster.total_gpus(), run.cluster.gpu_sharing, kFillDurationS, f.seed);
    trace.report.jobs = trace.jobs.size();
    run.fill_to = f.fill_to;
    run.fill = true;
  }
  if (f.rigid)
    for (cl::ClusterJob& j : trace.jobs) j.elastic_min = j.elastic_max = 0;
  run.workload = trace.report;
  run.time_scale = f.time_scale;
  std::vector<double> recorded;
  for (const cl::ClusterJob& j : trace.jobs)
    if (j.recorded_wait_s >= 0) recorded.push_back(j.recorded_wait_s * f.time_scale);
  if (!recorded.empty()) {
    run.recorded_n = static_cast<int>(recorded.size());
    double sum = 0;
    for (double w : recorded) sum += w;
    run.recorded_mean_wait_s = sum / static_cast<double>(recorded.size());
    run.recorded_p50_wait_s = cl::percentile(recorded, 0.5);
    run.recorded_p99_wait_s = cl::percentile(recorded, 0.99);
  }

  check_samples(f, trace.jobs);
  // Outputs checked before the run: a path that cannot be written, or that is an input, fails in a second.
  if (!f.jobs_csv.empty()) check_output_path("--jobs-csv", f.jobs_csv);
  if (!f.timeseries_csv.empty()) check_output_path("--timeseries-csv", f.timeseries_csv);
  if (!f.report.empty()) check_output_path("--report", f.report);
  run.notes = policy_notes(choices, run.cluster, trace.jobs);
  if (f.seeds < 1 || f.seeds > 10000) throw InputError("--seeds", std::to_string(f.seeds), "a number of runs per policy from 1 to 10,000");
  run.seeds = f.seeds;
  scheduler_throughput(trace.jobs, &run);
  for (const cl::PolicyChoice& choice : choices) {
    ProgressBar bar("cluster " + choice.text);
    cl::ClusterSimOptions o;
    o.policy = choice.text;
    o.horizon_s = f.horizon_s;
    o.sample_interval_s = f.sample_interval_s;
    o.span_s = synthetic_span_s * f.time_scale;
    const auto start = std::chrono::steady_clock::now();
    // Several seeds: the failures, repairs and reclaims drawn anew each run; the means and their intervals.
    std::vector<cl::PolicyResult> runs;
    // With a scheduling cycle, its cost or an admission cap, each run again under a scheduler that passes at every
    // event at no cost: the difference in the mean wait is the time jobs wait for the scheduler itself.
    const bool rerun_ideal = scheduler_delays(run.cluster);
    cl::ClusterSpec ideal = run.cluster;
    ideal.cycle = {};
    const double share = rerun_ideal ? 0.5 : 1.0;  // of a seed's work, the run itself
    double ideal_wait_sum = 0;
    for (int k = 0; k < f.seeds; ++k) {
      o.seed = f.seed + static_cast<std::uint64_t>(k);
      o.progress = [&bar, k, &f, share](double done) { bar.update((k + share * done) / f.seeds); };
      // The fill experiment draws its pods anew per seed (their number varies with the draw), and stops at its
      // own last arrival; the first seed's draw is the workload the job and time-series files describe.
      std::vector<cl::ClusterJob> redrawn;
      if (run.fill && k > 0) redrawn = cl::fill_workload(fill_pods, f.fill_to, run.cluster.total_gpus(), run.cluster.gpu_sharing, kFillDurationS, o.seed);
      const std::vector<cl::ClusterJob>& jobs = redrawn.empty() ? trace.jobs : redrawn;
      if (run.fill && !jobs.empty()) o.horizon_s = jobs.back().submit_s + 1;
      runs.push_back(cl::simulate_cluster(run.cluster, jobs, o));
      if (rerun_ideal) {
        o.progress = [&bar, k, &f, share](double done) { bar.update((k + share + share * done) / f.seeds); };
        ideal_wait_sum += cl::simulate_cluster(ideal, jobs, o).mean_wait_s;
      }
    }
    if (rerun_ideal) run.ideal_mean_wait_s.push_back(ideal_wait_sum / f.seeds);
    cl::SeedStatistics spread;
    run.policies.push_back(f.seeds > 1 ? cl::mean_over_seeds(runs, &spread) : std::move(runs.front()));
    run.spread.push_back(std::move(spread));
    run.wall_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    bar.finish();
  }
  // A synthetic workload's span is when its jobs arrive; the run goes on until the queue drains. Say how much longer.
  if (synthetic_span_s > 0)
    for (const cl::PolicyResult& p : run.policies)
      if (p.makespan_s > 1.05 * synthetic_span_s * f.time_scale)
        run.notes.push_back(p.name + ": the jobs arrive over " + format_seconds(synthetic_span_s * f.time_scale) + " and the last ends after " +
                            format_seconds(p.makespan_s) + " (the queue drains for " + format_seconds(p.makespan_s - synthetic_span_s * f.time_scale) +
                            "): util covers the whole run, \"delivered over the span\" the asked span only");
  if (!f.jobs_csv.empty()) write_output_file("--jobs-csv", f.jobs_csv, [&](std::ostream& os) { write_cluster_jobs_csv(os, run, trace.jobs); });
  if (!f.timeseries_csv.empty()) write_output_file("--timeseries-csv", f.timeseries_csv, [&](std::ostream& os) { write_cluster_timeseries_csv(os, run); });
  emit_result(f.format, cluster_json(run), "cluster",
              {[&](std::ostream& os) { print_cluster_table(os, run); }, [&](std::ostream& os) { print_cluster_csv(os, run); },
               [&](std::ostream& os) { print_cluster_markdown(os, run); }, [&](std::ostream& os) { write_cluster_html(os, run); }},
              f.report);
  return kExitOk;
}

const RegisterCommand registered{
    {"cluster", "A shared cluster under scheduling policies: replay a workload trace with gangs, preemption, placement and failures",
     [](CLI::App& app) -> std::function<int()> {
       auto f = std::make_shared<ClusterFlags>();
       app.add_option("scenario", f->scenario, "scenario file with a \"cluster\" section (pools, network, failures, recovery, scheduler)")->check(non_empty_path());
       add_set_option(app, f->sets);
       app.add_option("--trace", f->trace, "KIND:PATH, KIND one of " + join(cl::trace_kinds()) + " (alibaba-2023: a directory or a pod list)");
       // The names from the registries, so a new policy or placement is listed without touching this text.
       std::vector<std::string> orderings;
       for (const cl::PolicyInfo& p : cl::policies()) orderings.push_back(p.name);
       app.add_option("--policy", f->policies, "policies to compare, comma-separated, each ORDER[+PLACEMENT]: " + join(orderings) +
                                                   "; placement " + join(cl::placement_names()) + " (binpack by default); `trainsim presets` describes each");
       app.add_option("--nodes", f->nodes, "a one-pool cluster of N nodes (instead of the scenario's or the trace's)")->check(CLI::Range(1, 1000000));
       app.add_option("--gpus-per-node", f->gpus_per_node, "GPUs per node with --nodes (default 8)")->check(CLI::Range(1, 64));
       app.add_option("--gpu", f->gpu, "GPU model with --nodes (default h100-sxm-80gb)");
       app.add_option("--nodes-per-leaf", f->nodes_per_leaf, "nodes under one leaf switch (default 32)");
       app.add_option("--failures", f->failures, "failure preset (default, llama3-405b, ...) or none");
       {
         std::vector<std::string> presets;
         for (const auto& p : cl::job_failure_presets()) presets.push_back(p.name);
         app.add_option("--job-failures", f->job_failures, "user and code errors ending runs early, from a trace summary: " + join(presets) + ", or none");
       }
       app.add_option("--retries", f->retries, "retries of a run ended by a job error (Kubernetes backoffLimit; Slurm: 0)")->check(CLI::Range(0, 100));
       app.add_option("--checkpoint-interval", f->checkpoint_interval, "checkpoint interval of jobs that name none (default 1h)");
       app.add_option("--gpu-sharing", f->gpu_sharing, "true or false: fractional GPU requests share a GPU (default: true when the trace has them)");
       app.add_option("--time-scale", f->time_scale, "multiply the trace's submit times and durations by this factor");
       f->horizon_given = app.add_option("--horizon", f->horizon_s, "stop after this many simulated seconds (default: when every job has ended)");
       f->sample_interval_given = app.add_option("--sample-interval", f->sample_interval_s,
                                                 "seconds between time-series samples, at most 1,000,000 over the run (default: 1/500 of the submit span)");
       app.add_option("--seed", f->seed, "random seed of the failures and repairs")->check(seed_value());
       app.add_option("--seeds", f->seeds, "runs per policy, seeds --seed, --seed + 1, ...: the figures are their means, with 95% confidence intervals (default 1)");
       f->synthetic_given = app.add_option("--synthetic", f->synthetic_jobs, "N jobs drawn from the --trace instead of its own jobs (see --synthetic-model)");
       app.add_option("--synthetic-model", f->synthetic_model, "blocks (default: blocks of the trace's own job sequence, its bursts kept) or poisson (Poisson arrivals, lognormal durations per size)");
       app.add_option("--synthetic-block", f->synthetic_block, "with --synthetic-model blocks: consecutive trace jobs per block (default: the square root of the trace's jobs)");
       app.add_option("--span", f->span, "with --synthetic: arrivals over this long (default 365d)");
       app.add_option("--load", f->load, "with --synthetic: GPU-time offered within the span over the cluster's (default 0.8); the run reports what it delivered there");
       f->fill_to_given = app.add_option("--fill-to", f->fill_to, "with --fill: add pods drawn at random from the trace until they ask for this fraction of the cluster's GPUs (e.g. 1.3, as FGD's experiments)");
       app.add_flag("--fill", f->fill, "every pod of the trace in a random order (per --seed), never ending: report how much of the cluster is allocated at the last arrival (FGD's experiment)");
       app.add_flag("--rigid", f->rigid, "run elastic jobs as rigid ones (their requested GPUs only): what elasticity is worth");
       app.add_option("--jobs-csv", f->jobs_csv, "write one row per job and policy to FILE")->check(non_empty_path());
       app.add_option("--timeseries-csv", f->timeseries_csv, "write allocated GPUs, queue length and fragmentation over time to FILE")->check(non_empty_path());
       app.add_option("--format", f->format, "table (default), json, csv, md or html");
       app.add_option("--report", f->report, "also write a self-contained HTML report with charts to FILE.html")->check(non_empty_path());
       return [f] { return run_cluster(*f); };
     }}};

}  // namespace
}  // namespace trainsim::cli
