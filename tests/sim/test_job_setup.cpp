// From a scenario's "reliability" section to a simulated job: the example scenario, errors with their
// JSON paths, elastic speeds from the step model, and the studies' plumbing.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>

#include "models/errors.hpp"
#include "models/reliability.hpp"
#include "models/scenario.hpp"
#include "sim/job_setup.hpp"
#include "sim/reliability_study.hpp"

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
  CHECK(job.mtbf_s / 3600 == doctest::Approx(3.09).epsilon(0.002));
  CHECK(job.checkpoint_size.bytes_per_parameter == doctest::Approx(14.0));
  CHECK(job.spare_nodes == 21);
  CHECK(job.settings.checkpoint.method == "async");
  CHECK(job.checkpoint.blocking_s < job.checkpoint.write_s + job.settings.checkpoint.overhead_s);
  CHECK(job.sim.interval_s >= job.daly_interval_s);  // Daly's, or the persist time if longer
  // FSDP over dp 2,048, one replica a node: every node out is one replica out, speed close to (dp - k)/dp.
  REQUIRE(job.elastic_speed.size() > 2);
  CHECK(job.replicas_per_node_out == 1);
  CHECK(job.elastic_speed[1] == doctest::Approx(2047.0 / 2048).epsilon(0.02));
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
  CHECK(build_reliability_job(s, settings).failures.failures_per_1000_node_days(8) == doctest::Approx(40));
  settings.job_mtbf_s = 3 * 3600;
  const ReliabilityJob job = build_reliability_job(s, settings);
  CHECK(job.mtbf_s == doctest::Approx(3 * 3600));
  CHECK(job.daly_interval_s == doctest::Approx(daly_interval_s(job.checkpoint.blocking_s, 3 * 3600)));
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
  CHECK(sweep.best_interval_s() / job.optimal_interval_s == doctest::Approx(1.0).epsilon(0.6));
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
