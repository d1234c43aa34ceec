// Replaying a run's failures for many variants (sim/reliability/shared_failures): the replay gives exactly the run
// JobSimulator simulates on the same seed, for every kind of job that does not shrink; variants folded
// together equal variants folded alone; a study's statistics do not depend on the threads; elastic variants
// (simulated in full) and MTBF-scaled ones (the same draws stretched) mix with the rest.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <cmath>
#include <vector>

#include "models/reliability/failure_model.hpp"
#include "sim/reliability/job_montecarlo.hpp"
#include "sim/reliability/shared_failures.hpp"

using namespace trainsim;
using namespace trainsim::sim;

namespace {

JobSimConfig base_config() {
  JobSimConfig c;
  c.nodes = 256;
  c.gpus_per_node = 8;
  c.window_s = 30 * 86400.0;
  c.interval_s = 1800;
  c.blocking_s = 20;
  c.detection_s = 60;
  c.drain_s = 30;
  c.reschedule_s = 120;
  c.restart_s = 300;
  c.reload_s = 15;
  c.warmup_s = 60;
  c.spare_nodes = 3;
  c.repair = std::shared_ptr<const TimeDistribution>(make_distribution("lognormal", 12 * 3600.0, 1.0, "repair"));
  return c;
}

// A model whose MTBF on 256 nodes is about `hours`, Llama 3's mix (hardware and software failures).
FailureModel model_with_mtbf(double hours) {
  FailureModel m = failure_preset("llama3-405b");
  m.scale_rates(m.job_mtbf_s(256, 8) / (hours * 3600));
  return m;
}

void check_same(const RunResult& a, const RunResult& b) {
  CHECK(a.wall_s == b.wall_s);
  CHECK(a.progress_s == b.progress_s);
  CHECK(a.interruptions == b.interruptions);
  CHECK(a.crashes == b.crashes);
  CHECK(a.rework_s == b.rework_s);
  CHECK(a.checkpoint_s == b.checkpoint_s);
  CHECK(a.recovery_s == b.recovery_s);
  CHECK(a.wait_s == b.wait_s);
  CHECK(a.finished == b.finished);
  CHECK(a.truncated == b.truncated);
}

// Every run of `c` replayed from a tape equals JobSimulator::run on the same seed.
void check_replay(const JobSimConfig& c, const FailureModel& m, int runs = 40) {
  JobSimulator sim(c, m);
  FailureTape tape(m, c.nodes, c.gpus_per_node, c.repair);
  PoolReplay pool(&tape, 1.0, c.spare_nodes);
  Timeline timeline(&pool, TimelineKey::of(c, 1.0));
  for (int i = 0; i < runs; ++i) {
    const std::uint64_t seed = run_seed(99, static_cast<std::uint64_t>(i));
    tape.reset(seed);
    pool.reset();
    timeline.reset();
    CAPTURE(i);
    check_same(fold(c, timeline), sim.run(seed));
  }
}

}  // namespace

TEST_CASE("a replayed run is the simulated run: spares, waits, recoveries restarted by failures, async persist") {
  const FailureModel m = model_with_mtbf(2);
  SUBCASE("spares, itemised recovery") { check_replay(base_config(), m); }
  SUBCASE("no spares: every hardware failure waits for a repaired node") {
    JobSimConfig c = base_config();
    c.spare_nodes = 0;
    check_replay(c, m);
  }
  SUBCASE("a given recovery, long against the MTBF: failures during recovery") {
    JobSimConfig c = base_config();
    c.fixed_recovery_s = 3600;
    check_replay(c, m);
  }
  SUBCASE("async: the checkpoint persists after the pause, longer than the interval") {
    JobSimConfig c = base_config();
    c.interval_s = 300;
    c.persist_s = 500;
    check_replay(c, m);
  }
  SUBCASE("the work finishes before the window") {
    JobSimConfig c = base_config();
    c.work_s = 5 * 86400.0;
    check_replay(c, m);
  }
  SUBCASE("a failed node never comes back (no repair)") {
    JobSimConfig c = base_config();
    c.repair = nullptr;
    c.spare_nodes = 2;
    check_replay(c, m, 20);
  }
  SUBCASE("no checkpoints at all") {
    JobSimConfig c = base_config();
    c.interval_s = std::numeric_limits<double>::infinity();
    check_replay(c, m, 10);
  }
  SUBCASE("the event cap: runs stop and say so") {
    JobSimConfig c = base_config();
    c.max_events = 50;
    JobSimulator sim(c, m);
    CHECK(sim.run(run_seed(99, 0)).truncated);
    check_replay(c, m, 10);
  }
}

TEST_CASE("a replayed run is the simulated run: Weibull parts, lemon nodes found and replaced") {
  FailureModel m = model_with_mtbf(3);
  m.components[0].distribution = "weibull";
  m.components[0].shape = 0.7;
  m.lemons = {3, 20.0, 2};
  check_replay(base_config(), m);
}

TEST_CASE("folding variants together equals folding each alone") {
  const FailureModel m = model_with_mtbf(2);
  std::vector<JobSimConfig> configs;
  for (double tau : {120.0, 600.0, 1800.0, 3600.0, 7200.0})
    for (double persist : {0.0, 900.0}) {
      JobSimConfig c = base_config();
      c.interval_s = tau;
      c.persist_s = persist;
      c.work_s = persist > 0 ? 6 * 86400.0 : c.work_s;  // some finish, some run to the window
      configs.push_back(c);
    }
  std::vector<const JobSimConfig*> ptrs;
  for (const auto& c : configs) ptrs.push_back(&c);
  FailureTape tape(m, 256, 8, configs[0].repair);
  PoolReplay pool(&tape, 1.0, configs[0].spare_nodes);
  Timeline timeline(&pool, TimelineKey::of(configs[0], 1.0));
  std::vector<RunResult> together(configs.size());
  for (int i = 0; i < 20; ++i) {
    tape.reset(run_seed(5, static_cast<std::uint64_t>(i)));
    pool.reset();
    timeline.reset();
    fold(ptrs.data(), ptrs.size(), timeline, together.data());
    for (std::size_t v = 0; v < configs.size(); ++v) {
      CAPTURE(v);
      check_same(together[v], fold(configs[v], timeline));
    }
  }
}

TEST_CASE("an MTBF factor stretches the same failures: the replay matches a simulation of the scaled model") {
  const FailureModel m = model_with_mtbf(2);
  FailureModel slower = m;
  slower.scale_rates(0.5);  // MTBF x2
  const JobSimConfig c = base_config();
  JobSimulator sim(c, slower);
  FailureTape tape(m, c.nodes, c.gpus_per_node, c.repair);
  PoolReplay pool(&tape, 2.0, c.spare_nodes);
  Timeline timeline(&pool, TimelineKey::of(c, 2.0));
  for (int i = 0; i < 20; ++i) {
    const std::uint64_t seed = run_seed(3, static_cast<std::uint64_t>(i));
    tape.reset(seed);
    pool.reset();
    timeline.reset();
    const RunResult a = fold(c, timeline), b = sim.run(seed);
    CAPTURE(i);
    // The same draws: failure times equal to rounding, so the same decisions and results to ~1e-12.
    CHECK(a.interruptions == b.interruptions);
    CHECK(a.progress_s == trainsim::test::approx(b.progress_s).epsilon(1e-9));
    CHECK(a.wait_s == trainsim::test::approx(b.wait_s).epsilon(1e-9));
  }
}

TEST_CASE("simulate_variants: the same statistics for any number of threads; elastic variants simulated in full") {
  const FailureModel m = model_with_mtbf(4);
  std::vector<StudyVariant> variants;
  for (double tau : {600.0, 1800.0}) {
    JobSimConfig c = base_config();
    c.interval_s = tau;
    variants.push_back({c, 1.0});
    variants.push_back({c, 0.5});
  }
  JobSimConfig none = base_config();
  none.spare_nodes = 0;
  variants.push_back({none, 1.0});
  JobSimConfig elastic = none;
  elastic.elastic = true;
  elastic.elastic_speed = {1.0, 0.99, 0.98, 0.97};
  variants.push_back({elastic, 1.0});
  variants.push_back({elastic, 2.0});
  MonteCarloOptions o;
  o.runs = 150;  // more than one chunk of 64 runs
  o.seed = 11;
  std::vector<std::vector<JobStatistics>> by_threads;
  for (int threads : {1, 2, 3}) {
    o.threads = threads;
    by_threads.push_back(simulate_variants(m, 2048, variants, o));
  }
  for (std::size_t k = 1; k < by_threads.size(); ++k)
    for (std::size_t v = 0; v < variants.size(); ++v) {
      const JobStatistics &a = by_threads[0][v], &b = by_threads[k][v];
      CAPTURE(v);
      CHECK(a.ettr.mean == b.ettr.mean);
      CHECK(a.ettr.p05 == b.ettr.p05);
      CHECK(a.interruptions.mean == b.interruptions.mean);
      CHECK(a.rework_s == b.rework_s);
      CHECK(a.wait_s == b.wait_s);
      CHECK(a.shrunk_s == b.shrunk_s);
    }
  // Each variant alone gives its statistics in the batch (a variant simulated in full too).
  const auto& all = by_threads[0];
  for (std::size_t v : {std::size_t{1}, std::size_t{4}, std::size_t{6}}) {
    o.threads = 2;
    const JobStatistics alone = simulate_variants(m, 2048, {variants[v]}, o).front();
    CAPTURE(v);
    CHECK(alone.ettr.mean == all[v].ettr.mean);
    CHECK(alone.interruptions.mean == all[v].interruptions.mean);
  }
  // Memory bounded: the same statistics when the variants go in groups (each group drawing the failures again).
  o.threads = 2;
  o.max_variant_runs = 2.5 * o.runs;
  ProgressCounter progress;
  progress.planned_runs = o.runs;
  o.progress = &progress;
  const std::vector<JobStatistics> grouped = simulate_variants(m, 2048, variants, o);
  o.progress = nullptr;
  o.max_variant_runs = 1e7;
  REQUIRE(grouped.size() == variants.size());
  for (std::size_t v = 0; v < variants.size(); ++v) {
    CAPTURE(v);
    CHECK(grouped[v].ettr.mean == all[v].ettr.mean);
    CHECK(grouped[v].interruptions.p95 == all[v].interruptions.p95);
  }
  CHECK(progress.done_runs == o.runs);
  // The full simulation of a non-elastic variant agrees run by run (summarize_runs of the same runs).
  o.threads = 2;
  const JobStatistics direct = summarize_runs(run_job_montecarlo(variants[0].config, m, o), 2048);
  CHECK(direct.ettr.mean == trainsim::test::approx(all[0].ettr.mean).epsilon(1e-12));
  CHECK(direct.ettr.p95 == all[0].ettr.p95);
  CHECK(direct.interruptions.mean == all[0].interruptions.mean);
  // MTBF x0.5 fails about twice as often; elastic without spares beats waiting.
  CHECK(all[1].interruptions.mean == trainsim::test::approx(2 * all[0].interruptions.mean).epsilon(0.1));
  CHECK(all[5].ettr.mean > all[4].ettr.mean);
  CHECK(all[5].shrunk_s > 0);
}

TEST_CASE("an elastic job with spares: replayed until it would shrink, simulated in full from the runs where it does") {
  // 3 spares, 12 h repairs, an MTBF of 1 h: some runs run out of spares (and shrink), most do not.
  const FailureModel m = model_with_mtbf(1);
  JobSimConfig c = base_config();
  c.elastic = true;
  c.elastic_speed = {1.0, 0.995, 0.99, 0.985, 0.98};
  MonteCarloOptions o;
  o.runs = 100;
  o.seed = 21;
  o.threads = 2;
  const JobStatistics replayed = simulate_variants(m, 2048, {{c, 1.0}}, o).front();
  const JobStatistics simulated = summarize_runs(run_job_montecarlo(c, m, o), 2048);
  CHECK(replayed.ettr.mean == trainsim::test::approx(simulated.ettr.mean).epsilon(1e-12));
  CHECK(replayed.ettr.p05 == simulated.ettr.p05);
  CHECK(replayed.ettr.p95 == simulated.ettr.p95);
  CHECK(replayed.interruptions.mean == simulated.interruptions.mean);
  CHECK(replayed.shrunk_s == trainsim::test::approx(simulated.shrunk_s).epsilon(1e-12));
  CHECK(replayed.reconfigure_s == trainsim::test::approx(simulated.reconfigure_s).epsilon(1e-12));
  CHECK(simulated.shrunk_s > 0);  // some runs did shrink
}
