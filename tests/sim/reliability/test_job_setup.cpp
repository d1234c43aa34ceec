// From a scenario's "reliability" section to a simulated job: the example scenario, errors with their
// JSON paths, elastic speeds from the step model, and the studies' plumbing.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <cmath>
#include <fstream>

#include "models/core/errors.hpp"
#include "models/reliability/reliability.hpp"
#include "models/scenario/scenario.hpp"
#include "sim/reliability/job_setup.hpp"
#include "sim/reliability/reliability_study.hpp"

using namespace trainsim;
using namespace trainsim::sim;
using Json = nlohmann::json;

namespace {
Json example() {
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/llama3-405b-reliability-16k-h100.json");
  return Json::parse(in);
}
Json small_job() {
  return {{"model", "llama3-8b"},
          {"training", {{"global_batch_size", 512}, {"seq_len", 4096}, {"train_tokens", "20B"}}},
          {"parallel", {{"tp", 2}}},
          {"hardware", {{"num_nodes", 16}}},
          {"reliability", {{"failures", {{"preset", "default"}, {"failures_per_1000_node_days", 40}}}, {"spare_nodes", 2}}}};
}
}  // namespace

TEST_CASE("the example scenario: Llama 3 405B on 2,048 x 8 H100 for 54 days") {
  const Json doc = example();
  const Scenario s = parse_scenario(doc, true);
  const ReliabilitySettings settings = parse_reliability_settings(doc, 8);
  const ReliabilityJob job = build_reliability_job(s, settings);
  CHECK(job.gpus == 16384);
  CHECK(job.nodes == 2048);
  CHECK(job.window_s == 54 * 86400.0);
  CHECK_FALSE(job.fixed_window);  // 15.6T tokens take longer than 54 days: the window ends the run
  CHECK(job.mtbf_s / 3600 == trainsim::test::approx(3.09).epsilon(0.002));
  CHECK(job.checkpoint_size.bytes_per_parameter == trainsim::test::approx(14.0));
  CHECK(job.spare_nodes == 21);
  CHECK(job.settings.checkpoint.method == "async");
  CHECK(job.checkpoint.blocking_s < job.checkpoint.write_s + job.settings.checkpoint.overhead_s);
  CHECK(job.sim.interval_s >= job.daly_interval_s);  // Daly's, or the persist time if longer
  // tp 4 x pp 16 x cp 8 = 512 GPUs (64 nodes) a replica, dp 32: a node out takes its whole replica out, so
  // the speed with one node out is close to (dp - 1) / dp = 31/32 (the global batch shrinks with dp).
  REQUIRE(job.elastic_speed.size() > 2);
  CHECK(s.parallel.dp == 32);
  CHECK(job.replicas_per_node_out == 1);
  CHECK(job.elastic_speed[1] == trainsim::test::approx(31.0 / 32).epsilon(0.01));
  for (std::size_t k = 1; k < job.elastic_speed.size(); ++k) CHECK(job.elastic_speed[k] <= job.elastic_speed[k - 1] + 1e-12);
}

TEST_CASE("reliability settings: defaults recorded, errors name the path or the flag") {
  Json doc = small_job();
  doc.erase("reliability");
  const ReliabilitySettings d = parse_reliability_settings(doc, 8);
  CHECK(d.failures.name == "default");
  CHECK(d.interval == IntervalChoice::Daly);
  CHECK(d.defaults.size() >= 8);

  Json typo = small_job();
  typo["reliability"]["spares"] = 3;
  CHECK_THROWS_WITH_AS(parse_reliability_settings(typo, 8), doctest::Contains("/reliability/spares: got 3; expected no such field here"), InputError);
  Json bad_interval = small_job();
  bad_interval["reliability"]["checkpoint"] = {{"interval", "sometimes"}};
  CHECK_THROWS_WITH_AS(parse_reliability_settings(bad_interval, 8), doctest::Contains("/reliability/checkpoint/interval: got \"sometimes\""), InputError);
  ReliabilitySettings s;
  CHECK_THROWS_WITH_AS(parse_interval(Json("-5m"), "--checkpoint-interval", &s), doctest::Contains("--checkpoint-interval: got \"-5m\""), InputError);
  parse_interval(Json("best"), "--checkpoint-interval", &s);
  CHECK(s.interval == IntervalChoice::Best);

  // No train_tokens and no window: nothing to simulate.
  Json no_tokens = small_job();
  no_tokens["training"].erase("train_tokens");
  const Scenario sc = parse_scenario(no_tokens, true);
  CHECK_THROWS_WITH_AS(build_reliability_job(sc, parse_reliability_settings(no_tokens, 8)), doctest::Contains("/reliability/window: got nothing"),
                       InputError);
  no_tokens["reliability"]["window"] = "7d";
  CHECK(build_reliability_job(sc, parse_reliability_settings(no_tokens, 8)).fixed_window);
}

TEST_CASE("flags scale the failure model: per 1,000 node-days, then the job's MTBF") {
  const Json doc = small_job();
  const Scenario s = parse_scenario(doc, true);
  ReliabilitySettings settings = parse_reliability_settings(doc, 8);
  CHECK(build_reliability_job(s, settings).failures.failures_per_1000_node_days(8) == trainsim::test::approx(40));
  settings.job_mtbf_s = 3 * 3600;
  const ReliabilityJob job = build_reliability_job(s, settings);
  CHECK(job.mtbf_s == trainsim::test::approx(3 * 3600));
  CHECK(job.daly_interval_s == trainsim::test::approx(daly_interval_s(job.checkpoint.blocking_s, 3 * 3600)));
}

TEST_CASE("studies: the sweep finds the optimum near the exact one, methods and spares change what they should") {
  Json doc = small_job();
  doc["reliability"]["recovery"] = {{"total", "5min"}};
  doc["reliability"]["checkpoint"] = {{"cost", "60s"}};
  const Scenario s = parse_scenario(doc, true);
  const ReliabilityJob job = build_reliability_job(s, parse_reliability_settings(doc, 8));
  MonteCarloOptions mc;
  mc.runs = 200;
  mc.threads = 2;
  const IntervalSweep sweep = sweep_intervals(job, job.sim, job.optimal_interval_s, mc);
  CHECK(sweep.rows.size() == static_cast<std::size_t>(sweep_batches()));
  // The simulated optimum is flat: within a factor 1.6 of the exact one (grid steps of 2^(1/6)).
  CHECK(sweep.best_interval_s() / job.optimal_interval_s == trainsim::test::approx(1.0).epsilon(0.6));
  const StudyRow base = simulate(job, job.sim, job.failures, "base", mc);
  const std::vector<StudyRow> rows = what_if(job, base, mc);
  CHECK(static_cast<int>(rows.size()) == 1 + what_if_batches(job));
  for (const auto& r : rows) {
    CAPTURE(r.label);
    CHECK(r.stats.ettr.mean > 0.5);
    CHECK(r.stats.ettr.mean <= 1.0);
  }
  const auto sens = sensitivity(job, base, mc);
  REQUIRE(sens.size() == 6);
  CHECK(sens[0].at_current.stats.ettr.mean < base.stats.ettr.mean);  // MTBF x0.5
  CHECK(sens[1].at_current.stats.ettr.mean > base.stats.ettr.mean);  // MTBF x2
  CHECK(sens[2].at_current.stats.ettr.mean > base.stats.ettr.mean);  // checkpoint cost x0.5
  CHECK(sens[5].at_current.stats.ettr.mean < base.stats.ettr.mean);  // restart x2
}

// ---- Plausible ranges and whole-job checks (reliability_limits.hpp) ----------------------------------------

TEST_CASE("the reliability section's numbers have ranges: errors name the JSON path, the value and the range") {
  auto error_of = [](const Json& reliability) {
    Json doc = small_job();
    doc["reliability"] = reliability;
    try {
      parse_reliability_settings(doc, 8);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of({{"window", "1e12d"}}).find("/reliability/window: got \"1e12d\"; expected a window from 1 min to 100 years") != std::string::npos);
  CHECK(error_of({{"window", "0s"}}).find("/reliability/window: got \"0s\"") != std::string::npos);
  CHECK(error_of({{"job_mtbf", "1s"}}).find("/reliability/job_mtbf: got \"1s\"; expected a job MTBF from 1 min to 1,000 years") !=
        std::string::npos);
  CHECK(error_of({{"spare_nodes", -1}}).find("/reliability/spare_nodes: got -1") != std::string::npos);
  CHECK(error_of({{"elastic_min_fraction", 2}}).find("/reliability/elastic_min_fraction: got 2") != std::string::npos);
  CHECK(error_of({{"checkpoint", {{"interval", "2y"}}}}).find("/reliability/checkpoint/interval: got \"2y\"") != std::string::npos);
  CHECK(error_of({{"checkpoint", {{"interval", "0.5s"}}}}).find("/reliability/checkpoint/interval: got \"0.5s\"") != std::string::npos);
  CHECK(error_of({{"recovery", {{"warmup", "8d"}}}}).find("/reliability/recovery/warmup: got \"8d\"") != std::string::npos);
  CHECK(error_of({{"failures", {{"failures_per_1000_node_days", 1e4}}}}).find("/reliability/failures/failures_per_1000_node_days") !=
        std::string::npos);
  CHECK(error_of({{"window", "54d"}, {"job_mtbf", "3h"}, {"spare_nodes", 4}}) == "no error");
  // The same ranges for the flags (parse_interval is shared).
  ReliabilitySettings s;
  CHECK_THROWS_WITH_AS(parse_interval(Json("400d"), "--checkpoint-interval", &s), doctest::Contains("--checkpoint-interval: got \"400d\""), InputError);
}

TEST_CASE("a job whose failures leave no time to train is not simulated: the error says so") {
  // MTBF 1 min against a recovery of about 7 min: a recovery almost never completes (e^(R/M) ~ e^7 attempts).
  Json doc = small_job();
  doc["reliability"]["job_mtbf"] = "1min";
  const Scenario s = parse_scenario(doc, true);
  CHECK_THROWS_WITH_AS(build_reliability_job(s, parse_reliability_settings(doc, 8)),
                       doctest::Contains("/reliability/job_mtbf: got \"1min\"; expected failures far enough apart for the job to train"),
                       InputError);
  try {
    build_reliability_job(s, parse_reliability_settings(doc, 8));
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("never makes progress") != std::string::npos);
  }
  // With a restart of 30 s the same MTBF trains (ETTR well above 1%): simulated.
  doc["reliability"]["recovery"] = {{"total", "30s"}};
  const ReliabilityJob job = build_reliability_job(s, parse_reliability_settings(doc, 8));
  CHECK(job.mtbf_s == trainsim::test::approx(60));
}

TEST_CASE("the failures of a run are bounded before simulating: at most 100,000 expected") {
  // The example's fleet over a fixed window of 100 years: ~280,000 failures a run at 3.1 h; the window is what to
  // shorten. (With train_tokens the run ends when the work is done, ~62 days: a long window alone is fine.)
  Json doc = example();
  doc["reliability"]["window"] = "100y";
  CHECK_NOTHROW(build_reliability_job(parse_scenario(doc, true), parse_reliability_settings(doc, 8)));
  doc["training"].erase("train_tokens");
  const Scenario s = parse_scenario(doc, true);
  CHECK_THROWS_WITH_AS(build_reliability_job(s, parse_reliability_settings(doc, 8)),
                       doctest::Contains("/reliability/window: got \"100y\"; expected a window of at most"), InputError);
  // A given MTBF is named when it is what was set.
  Json fast = small_job();
  fast["reliability"]["window"] = "1d";
  fast["reliability"]["job_mtbf"] = "1min";
  fast["reliability"]["recovery"] = {{"total", "0s"}};
  fast["reliability"]["checkpoint"] = {{"cost", "0s"}};
  const Scenario sf = parse_scenario(fast, true);
  CHECK_NOTHROW(build_reliability_job(sf, parse_reliability_settings(fast, 8)));  // 1,440 failures a day
  // The example as it is: the run's cap is 10x its expected failures plus a margin, not 20 million.
  const Scenario se = parse_scenario(example(), true);
  const ReliabilityJob job = build_reliability_job(se, parse_reliability_settings(example(), 8));
  CHECK(job.sim.max_events > 4000);
  CHECK(job.sim.max_events < 20000);
  // More lemon nodes than nodes.
  Json lemons = small_job();
  lemons["reliability"]["failures"] = {{"lemon_nodes", {{"count", 17}}}};
  const Scenario sl = parse_scenario(lemons, true);
  CHECK_THROWS_WITH_AS(build_reliability_job(sl, parse_reliability_settings(lemons, 8)),
                       doctest::Contains("/reliability/failures/lemon_nodes/count: got 17; expected at most the job's 16 nodes"), InputError);
}

TEST_CASE("no failures: finite intervals, no NaN in the closed forms or the study") {
  Json doc = small_job();
  doc["reliability"]["failures"] = {
      {"components",
       {{"gpu", {{"failures_per_1000_gpu_days", 0}}}, {"hbm", {{"failures_per_1000_gpu_days", 0}}}, {"software", {{"failures_per_1000_node_days", 0}}},
        {"host", {{"failures_per_1000_node_days", 0}}}, {"switch_cable", {{"failures_per_1000_node_days", 0}}}, {"nic", {{"failures_per_1000_node_days", 0}}}}}};
  const Scenario s = parse_scenario(doc, true);
  const ReliabilityJob job = build_reliability_job(s, parse_reliability_settings(doc, 8));
  CHECK_FALSE(std::isfinite(job.mtbf_s));
  CHECK(std::isfinite(job.sim.interval_s));
  CHECK(job.sim.interval_s == trainsim::test::approx(job.work_s));  // no checkpoint needed before the end
  MonteCarloOptions mc;
  mc.runs = 5;
  mc.threads = 1;
  StudyOptions so;
  so.frontier_costs_s = {10, 60};
  const Study study = run_study(job, so, mc);
  CHECK(study.base.stats.ettr.mean == trainsim::test::approx(1.0));
  REQUIRE(study.base.model_ettr.has_value());
  CHECK(std::isfinite(*study.base.model_ettr));
  for (const auto& r : study.sweep.rows) CHECK(std::isfinite(r.config.interval_s));
  for (const auto& f : study.frontier) {
    CHECK(std::isfinite(f.model_ettr));
    CHECK(std::isfinite(f.best.config.interval_s));
  }
}

TEST_CASE("an unknown GPU price gives no costs, never $0") {
  const Scenario s = parse_scenario(small_job(), true);
  ReliabilityJob job = build_reliability_job(s, parse_reliability_settings(small_job(), 8));
  JobStatistics stats;
  stats.wall_s.mean = 86400;
  stats.lost_gpu_hours.mean = 100;
  REQUIRE(job.price_per_gpu_hour > 0);
  CHECK(make_row(job, job.sim, job.mtbf_s, stats, "x").cost.has_value());
  job.price_per_gpu_hour = 0;
  const StudyRow row = make_row(job, job.sim, job.mtbf_s, stats, "x");
  CHECK_FALSE(row.cost.has_value());
  CHECK_FALSE(row.lost_cost.has_value());
  CHECK_FALSE(row.spare_cost.has_value());
}

TEST_CASE("the whole study: the same answers as each table simulated apart, for any number of threads") {
  Json doc = small_job();
  doc["reliability"]["recovery"] = {{"total", "5min"}};
  doc["reliability"]["checkpoint"] = {{"cost", "60s"}};
  const Scenario s = parse_scenario(doc, true);
  const ReliabilityJob job = build_reliability_job(s, parse_reliability_settings(doc, 8));
  MonteCarloOptions mc;
  mc.runs = 130;
  mc.threads = 1;
  const Study study = run_study(job, StudyOptions{}, mc);
  // The headline: every one of the runs, as a plain Monte-Carlo of the job gives them.
  const JobStatistics direct = summarize_runs(run_job_montecarlo(job.sim, job.failures, mc), job.gpus);
  CHECK(study.base.stats.runs == 130);
  CHECK(study.base.stats.ettr.mean == trainsim::test::approx(direct.ettr.mean).epsilon(1e-12));
  CHECK(study.base.stats.ettr.p05 == direct.ettr.p05);
  CHECK(study.base.stats.interruptions.mean == direct.interruptions.mean);
  CHECK(study.base.label == "as configured");
  // The tables as the separate functions give them.
  const IntervalSweep sweep = sweep_intervals(job, job.sim, std::max(job.optimal_interval_s, job.sim.persist_s), mc);
  REQUIRE(study.sweep.rows.size() == static_cast<std::size_t>(sweep_batches()));
  REQUIRE(sweep.rows.size() == study.sweep.rows.size());
  for (std::size_t i = 0; i < sweep.rows.size(); ++i) {
    CHECK(study.sweep.rows[i].config.interval_s == sweep.rows[i].config.interval_s);
    CHECK(study.sweep.rows[i].stats.ettr.mean == sweep.rows[i].stats.ettr.mean);
  }
  CHECK(study.sweep.best == sweep.best);
  const std::vector<StudyRow> w = what_if(job, study.base, mc);
  REQUIRE(study.what_if.size() == w.size());
  for (std::size_t i = 0; i < w.size(); ++i) {
    CHECK(study.what_if[i].label == w[i].label);
    CHECK(study.what_if[i].stats.ettr.mean == w[i].stats.ettr.mean);
  }
  const auto se = sensitivity(job, study.base, mc);
  REQUIRE(study.sensitivity.size() == se.size());
  for (std::size_t i = 0; i < se.size(); ++i) {
    CHECK(study.sensitivity[i].at_current.stats.ettr.mean == se[i].at_current.stats.ettr.mean);
    CHECK(study.sensitivity[i].at_own.stats.ettr.mean == se[i].at_own.stats.ettr.mean);
  }
  // Two threads: identical.
  mc.threads = 2;
  const Study two = run_study(job, StudyOptions{}, mc);
  CHECK(two.base.stats.ettr.mean == study.base.stats.ettr.mean);
  for (std::size_t i = 0; i < two.sweep.rows.size(); ++i) CHECK(two.sweep.rows[i].stats.ettr.mean == study.sweep.rows[i].stats.ettr.mean);
  for (std::size_t i = 0; i < two.what_if.size(); ++i) CHECK(two.what_if[i].stats.ettr.mean == study.what_if[i].stats.ettr.mean);
  // Brief: no what-ifs or sensitivities simulated.
  StudyOptions brief;
  brief.what_if = brief.sensitivity = false;
  const Study b = run_study(job, brief, mc);
  CHECK(b.what_if.empty());
  CHECK(b.sensitivity.empty());
  CHECK(b.base.stats.ettr.mean == study.base.stats.ettr.mean);
  // "best": the base is the sweep's best row, the what-ifs run at it.
  Json best_doc = doc;
  best_doc["reliability"]["checkpoint"]["interval"] = "best";
  const ReliabilityJob best_job = build_reliability_job(s, parse_reliability_settings(best_doc, 8));
  ProgressCounter progress;
  mc.progress = &progress;
  const Study best = run_study(best_job, StudyOptions{}, mc);
  CHECK(best.base.config.interval_s == best.sweep.best_interval_s());
  CHECK(best.what_if.front().config.interval_s == best.sweep.best_interval_s());
  CHECK(progress.done_runs == progress.planned_runs);
}

// An interval in optimizer steps, as operators set it (Hugging Face save_steps, Megatron --save-interval): the time
// between checkpoints is that many steps of the priced step, by definition.
TEST_CASE("a checkpoint interval in steps is that many priced steps") {
  Json doc = small_job();
  doc["reliability"]["checkpoint"] = {{"interval", "250 steps"}};
  const ReliabilitySettings s = parse_reliability_settings(doc, 8);
  CHECK(s.interval == IntervalChoice::Steps);
  CHECK(s.interval_steps == 250);
  const ReliabilityJob job = build_reliability_job(parse_scenario(doc), s);
  CHECK(chosen_interval_s(job, 10, 0, 1e6) == doctest::Approx(250 * job.step.time_s).epsilon(1e-12));
  for (const char* bad : {"0 steps", "-5 steps", "1.5 steps", "many steps", "9999999999 steps"}) {
    doc["reliability"]["checkpoint"] = {{"interval", bad}};
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(parse_reliability_settings(doc, 8), doctest::Contains("/reliability/checkpoint/interval"), InputError);
  }
}

// Retention: how much space the kept checkpoints take and how many the quota holds. By hand for Llama-3-8B under
// bf16 AdamW: 8.03B x 14 B = 112.4 GB a checkpoint; 5 kept = 562.1 GB, over a 400 GB quota that holds 3.
TEST_CASE("checkpoint retention: kept bytes and the checkpoints a quota holds") {
  Json doc = small_job();
  doc["reliability"]["checkpoint"] = {{"keep", 5}, {"quota", "400GB"}};
  const ReliabilitySettings s = parse_reliability_settings(doc, 8);
  CHECK(s.checkpoint.keep == 5);
  CHECK(s.checkpoint.quota_bytes == 400e9);
  const ReliabilityJob job = build_reliability_job(parse_scenario(doc), s);
  const double size = job.checkpoint_size.state_bytes;
  CHECK(size == doctest::Approx(8.030261248e9 * 14).epsilon(1e-9));
  const Json r = retention_json(s.checkpoint, size);
  CHECK(r["kept_bytes"].get<double>() == doctest::Approx(5 * size));
  CHECK(r["checkpoints_in_quota"].get<double>() == 3);
  CHECK(r["fits_quota"].get<bool>() == false);
  CHECK(retention_json(CheckpointSettings{}, size).is_null());
  doc["reliability"]["checkpoint"] = {{"keep", 0}};
  CHECK_THROWS_WITH_AS(parse_reliability_settings(doc, 8), doctest::Contains("/reliability/checkpoint/keep"), InputError);
  doc["reliability"]["checkpoint"] = {{"quota", "-1TB"}};
  CHECK_THROWS_WITH_AS(parse_reliability_settings(doc, 8), doctest::Contains("/reliability/checkpoint/quota"), InputError);
}

TEST_CASE("an emergency checkpoint needs a second copy of every state shard, and costs its save in each recovery") {
  Json doc = small_job();  // tp 2 over 128 GPUs: dp 64 replicas, no ZeRO
  doc["reliability"]["checkpoint"] = {{"emergency", true}};
  const Scenario s = parse_scenario(doc, true);
  const ReliabilityJob job = build_reliability_job(s, parse_reliability_settings(doc, 8));
  CHECK(job.sim.emergency_loss_s == trainsim::test::approx(job.step.time_s / 2));  // half the step in progress, on average
  CHECK(job.emergency_save_s == trainsim::test::approx(job.checkpoint_context.overhead_s + job.checkpoint_context.write_s()));
  CHECK(job.sim.drain_s == trainsim::test::approx(job.settings.recovery.drain_s + job.emergency_save_s));
  CHECK(to_json(job.settings, job)["checkpoint"]["emergency"]["lost_per_crash_s"] == trainsim::test::approx(job.step.time_s / 2));
  // A distributed optimizer keeps one copy of each optimizer shard: nothing to save it from.
  doc["training"]["distributed_optimizer"] = true;
  const Scenario sharded = parse_scenario(doc, true);
  CHECK_THROWS_WITH_AS(build_reliability_job(sharded, parse_reliability_settings(doc, 8)), doctest::Contains("/reliability/checkpoint/emergency"),
                       InputError);
}
