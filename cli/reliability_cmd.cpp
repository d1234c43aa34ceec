// `trainsim reliability [SCENARIO]`: goodput of one training job under failures. Monte-Carlo of the
// job's timeline (sim/reliability/job_montecarlo) with the failure, checkpoint and recovery models, the closed
// forms beside it, the best checkpoint interval by simulation, what-ifs, sensitivities and the
// ETTR-vs-checkpoint-cost frontier. What it prints (table, JSON, CSV, Markdown, the HTML report) is rendered in
// reports/reliability_report.hpp and reports/reliability_document.hpp from the ReliabilityReport built here.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <thread>

#include "command.hpp"
#include "flag_checks.hpp"
#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"
#include "models/core/units.hpp"
#include "models/reliability/reliability.hpp"
#include "models/reliability/reliability_limits.hpp"
#include "models/scenario/scenario.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "reports/reliability_document.hpp"
#include "reports/reliability_report.hpp"
#include "scenario_input.hpp"
#include "sim/reliability/job_setup.hpp"
#include "sim/reliability/reliability_study.hpp"

namespace trainsim::cli {
namespace {

using Json = nlohmann::json;
using namespace trainsim::sim;

struct ReliabilityOptions {
  ScenarioInput input;
  int runs = 1000;
  std::uint64_t seed = 1;
  int threads = 0;
  bool frontier = false;
  bool brief = false;
  // Quick-question flags, validated in run_reliability so errors name the flag.
  std::string days, failures_per_1000, mtbf, checkpoint_cost, checkpoint_interval, checkpoint_method, storage, upload_to, checkpoint_contents, restart_time,
      failure_preset, weibull_shape, repair_time, elastic;
  std::string lemon_factor;
  bool emergency = false;
  // Integer flags: kUnset when not given (any value given, negative included, is range-checked).
  static constexpr long long kUnset = std::numeric_limits<long long>::min();
  long long spare_nodes = kUnset, lemon_nodes = kUnset, concurrent_jobs = kUnset;
};

// ---- Flag values: the ranges of models/reliability/reliability_limits.hpp, as the scenario's fields have them ----------

namespace lim = trainsim::reliability_limits;


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
    one_of("--checkpoint-method", o.checkpoint_method, checkpoint_method_names());
    s->checkpoint.method = o.checkpoint_method;
  }
  if (!o.storage.empty()) {
    one_of("--storage", o.storage, storage_tier_names());
    s->checkpoint.storage.tier = o.storage;
  }
  if (!o.upload_to.empty()) {
    one_of("--upload-to", o.upload_to, storage_tier_names());
    s->checkpoint.upload_to = o.upload_to;
  }
  if (o.emergency) s->checkpoint.emergency = true;
  if (!o.checkpoint_contents.empty()) {
    one_of("--checkpoint-contents", o.checkpoint_contents, {"full", "weights"});
    s->checkpoint.contents = o.checkpoint_contents == "weights" ? CheckpointContents::Weights : CheckpointContents::Full;
  }
  if (o.concurrent_jobs != ReliabilityOptions::kUnset)
    s->checkpoint.storage.concurrent_jobs = static_cast<int>(lim::number_flag("--concurrent-jobs", std::to_string(o.concurrent_jobs), lim::kConcurrentJobs));
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

// ---- The command --------------------------------------------------------------------------------


const std::vector<double> kFrontierCosts{5, 10, 15, 30, 45, 60, 90, 120, 180, 300, 600};

int run_reliability(const ReliabilityOptions& opt) {
  ReliabilityReport report;
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
  require_supervised_mode(report.scenario.training, "reliability");
  for (const auto& d : report.scenario.defaults)
    if (d.path == "/parallel/tp" || d.path == "/parallel/pp" || d.path == "/parallel/dp" || d.path == "/parallel/cp") {
      report.notes.push_back("the scenario leaves the layout open: the derived defaults are used for the job's speed (--format json lists them)");
      break;
    }
  // Calibration profile, as `estimate` takes it.
  const std::optional<LoadedCalibration> calibration = load_calibration(input, doc);

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
  report.job = build_reliability_job(report.scenario, settings, calibration ? &calibration->profile : nullptr);
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
  if (opt.frontier) {
    report.frontier_cost_for_ettr_90_s = frontier_crossing_s(report.frontier, 0.90);
    report.frontier_cost_for_ettr_90_instant_s = frontier_crossing_s(report.frontier, 0.90, true);
  }
  // The HTML report draws the lost time per run: the configured job's runs once more (the same seeds, so the same
  // runs the study summarised), only when the report is asked for.
  if (input.format == "html" || !input.report.empty()) report.lost_time = lost_time_distribution(job, report.base, mc);
  add_reliability_output_notes(&report);

  emit_result(input.format, reliability_json(report), "reliability",
              {[&](std::ostream& os) { print_reliability_table(os, report); }, [&](std::ostream& os) { print_reliability_csv(os, report); },
               [&](std::ostream& os) { print_reliability_markdown(os, report); }, [&](std::ostream& os) { write_reliability_html(os, report); }},
              input.report);
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
       app.add_option("--checkpoint-interval", opt->checkpoint_interval, "30m, \"500 steps\", or young | daly | best  [sets /reliability/checkpoint/interval]")->group(g);
       app.add_option("--checkpoint-method", opt->checkpoint_method, "sync | async | in-memory | incremental  [sets /reliability/checkpoint/method]")->group(g);
       app.add_option("--storage", opt->storage, "local-nvme | parallel-fs | object-store  [sets /reliability/checkpoint/storage]")->group(g);
       app.add_option("--upload-to", opt->upload_to, "tiered: upload each checkpoint to this tier after the write (parallel-fs | object-store)  [sets /reliability/checkpoint/upload_to]")
           ->group(g);
       app.add_flag("--emergency-checkpoint", opt->emergency, "save the last completed step from a healthy replica when a failure is detected  [sets /reliability/checkpoint/emergency]")
           ->group(g);
       app.add_option("--checkpoint-contents", opt->checkpoint_contents, "full | weights (weights only: no optimizer states)  [sets /reliability/checkpoint/contents]")
           ->group(g);
       app.add_option("--concurrent-jobs", opt->concurrent_jobs, "jobs checkpointing to the same storage at once (share its bandwidth; 1 to 10000)")
           ->group(g);
       app.add_option("--restart-time", opt->restart_time, "recovery from failure to training again, e.g. 10m (replaces the itemised model)  [sets /reliability/recovery/total]")
           ->group(g);
       app.add_option("--spare-nodes", opt->spare_nodes, "spare nodes ready to swap in  [sets /reliability/spare_nodes]")->group(g);
       app.add_option("--repair-time", opt->repair_time, "mean time until a failed node is back, e.g. 24h (1 min to 1 year)")->group(g);
       app.add_option("--elastic", opt->elastic, "true: continue on fewer data-parallel replicas when no spare is free")->group(g);
       app.add_option("--runs", opt->runs, "Monte-Carlo runs (default 1000)")->group(g)->check(CLI::Range(1, 1000000));
       app.add_option("--seed", opt->seed, "random seed (results are the same for any --threads)")->check(seed_value())->group(g);
       app.add_option("--threads", opt->threads, "worker threads (default: every core)")->group(g)->check(CLI::Range(1, 1024));
       app.add_flag("--frontier", opt->frontier, "also: ETTR against the blocking checkpoint cost, each at its best interval")->group(g);
       app.add_flag("--brief", opt->brief, "the headline only: skip the checkpoint-interval, what-if and sensitivity tables")->group(g);
       return [opt] { return run_reliability(*opt); };
     }}};

}  // namespace
}  // namespace trainsim::cli
