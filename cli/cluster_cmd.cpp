// `trainsim cluster [SCENARIO] --trace KIND:PATH --policy fifo,backfill,...`: a shared cluster replaying a
// workload under each scheduling policy (sim/cluster), compared side by side.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <set>

#include "command.hpp"
#include "flag_checks.hpp"
#include "flag_values.hpp"
#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"
#include "models/core/units.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "reports/cluster_document.hpp"
#include "reports/cluster_report.hpp"
#include "reports/table.hpp"
#include "run_files.hpp"
#include "scenario_input.hpp"
#include "sim/cluster/cluster_sim.hpp"
#include "sim/cluster/cluster_state.hpp"
#include "sim/cluster/seed_statistics.hpp"
#include "sim/cluster/traces/trace_import.hpp"
#include "sim/cluster/workload/fill_workload.hpp"
#include "sim/cluster/workload/model_jobs.hpp"
#include "sim/cluster/workload/synthetic_workload.hpp"

namespace trainsim::cli {
namespace {

using Json = nlohmann::json;
namespace cl = trainsim::sim::cluster;

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

// The scenario's "cluster" section (with --set applied and the leaf switches of hardware.network where it has no
// network of its own) and the flags that override it.
Json cluster_section(const ClusterFlags& f, ClusterRun& run) {
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
  return section;
}

// --synthetic's settings, each in its range (the cluster's sizes are filled in by the study).
cl::SyntheticSpec synthetic_spec(const ClusterFlags& f) {
  if (f.synthetic_model != "blocks" && f.synthetic_model != "poisson")
    throw InputError("--synthetic-model", f.synthetic_model, "blocks (the trace's own job sequence in blocks) or poisson (arrivals and lognormal durations)");
  if (f.synthetic_jobs > 10'000'000) throw InputError("--synthetic", std::to_string(f.synthetic_jobs), "at most 10,000,000 jobs");
  if (!(f.load > 0 && f.load <= 10)) throw InputError("--load", std::to_string(f.load), "an offered load above 0, at most 10");
  std::string why;
  const auto span = parse_quantity(f.span, Quantity::Time, &why);
  if (!span || !(*span >= 1 && *span <= 100 * 365 * 86400.0)) throw InputError("--span", f.span, "a duration from 1 s to 100 years, e.g. 365d", why);
  if (f.synthetic_block < 0 || f.synthetic_block > 10'000'000)
    throw InputError("--synthetic-block", std::to_string(f.synthetic_block), "jobs per block, 1 to 10,000,000 (0: the square root of the trace's jobs)");
  cl::SyntheticSpec spec;
  spec.jobs = f.synthetic_jobs;
  spec.span_s = *span;
  spec.load = f.load;
  spec.seed = f.seed;
  spec.model = f.synthetic_model == "blocks" ? cl::SyntheticModel::Blocks : cl::SyntheticModel::Poisson;
  spec.block_jobs = f.synthetic_block;
  return spec;
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
  Json section = cluster_section(f, run);
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
  cl::WorkloadShaping shaping;
  if (f.synthetic_jobs > 0) {
    if (model_jobs) throw InputError("--synthetic", std::to_string(f.synthetic_jobs), "a --trace to fit (not the scenario's jobs)");
    shaping.synthetic = true;
    shaping.synthetic_spec = synthetic_spec(f);
    shaping.synthetic_model_name = f.synthetic_model;
    shaping.trace_name = f.trace;
  }
  shaping.time_scale = f.time_scale;
  shaping.fill = f.fill || f.fill_to > 0;  // (--fill-to's range: check_numeric_flags)
  shaping.fill_to = f.fill_to;
  shaping.fill_to_path = "--fill-to";
  shaping.seed = f.seed;
  shaping.rigid = f.rigid;
  const cl::ShapedWorkload workload = cl::shape_workload(std::move(trace), shaping, run);

  check_samples(f, workload.jobs);
  // Outputs checked before the run: a path that cannot be written, or that is an input, fails in a second.
  if (!f.jobs_csv.empty()) check_output_path("--jobs-csv", f.jobs_csv);
  if (!f.timeseries_csv.empty()) check_output_path("--timeseries-csv", f.timeseries_csv);
  if (!f.report.empty()) check_output_path("--report", f.report);
  if (f.seeds < 1 || f.seeds > 10000) throw InputError("--seeds", std::to_string(f.seeds), "a number of runs per policy from 1 to 10,000");
  std::unique_ptr<ProgressBar> bar;
  cl::StudyProgress progress{[&](const std::string& policy) { bar = std::make_unique<ProgressBar>("cluster " + policy); },
                             [&](double done) { bar->update(done); }, [&] { bar->finish(); }};
  cl::run_study(run, choices, workload, cl::StudyOptions{f.horizon_s, f.sample_interval_s, f.seed, f.seeds}, progress);
  if (!f.jobs_csv.empty()) write_output_file("--jobs-csv", f.jobs_csv, [&](std::ostream& os) { write_cluster_jobs_csv(os, run, workload.jobs); });
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
