// The single-job Monte-Carlo against the checks and the closed forms:
// - Llama 3 shape (arXiv 2407.21783 §3.3.4): 2,048 nodes x 8 GPUs at 3.79 failures per 1,000 node-days
//   for 54 days gives about 419 interruptions (within 10%).
// - 1 - first-order waste (Young 1974; Daly 2006) within 1 point of the simulated ETTR where its
//   assumptions hold (exponential failures, MTBF >> interval >> checkpoint cost); Daly's complete model
//   closer still.
// - BLOOM (huggingface.co/blog/bloom-megatron-deepspeed): 3-hour checkpoints lose 1.5 h of work per crash
//   on average.
// - Results do not depend on the number of threads.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <cmath>
#include <cstring>

#include "models/reliability/failure_model.hpp"
#include "models/reliability/reliability.hpp"
#include "sim/reliability/job_montecarlo.hpp"

using namespace trainsim;
using namespace trainsim::sim;

namespace {

JobSimConfig quick(int nodes, double window_days, double interval_s, double blocking_s, double recovery_s) {
  JobSimConfig c;
  c.nodes = nodes;
  c.gpus_per_node = 8;
  c.window_s = window_days * 86400;
  c.interval_s = interval_s;
  c.blocking_s = blocking_s;
  c.fixed_recovery_s = recovery_s;
  c.spare_nodes = 1 << 20;  // a spare always free
  c.repair = std::shared_ptr<const TimeDistribution>(make_distribution("fixed", 86400, 1, "repair"));
  return c;
}

JobStatistics simulate(const JobSimConfig& c, const FailureModel& m, int runs, std::uint64_t seed = 1, int threads = 2) {
  MonteCarloOptions o;
  o.runs = runs;
  o.seed = seed;
  o.threads = threads;
  return summarize_runs(run_job_montecarlo(c, m, o), c.nodes * c.gpus_per_node);
}

// A model whose job MTBF on `nodes` nodes is `mtbf_s` (exponential, node-level, every failure a node swap).
FailureModel with_mtbf(int nodes, double mtbf_s) {
  FailureModel m;
  m.components = {{"node", FailureScope::Node, 86400.0 / mtbf_s / nodes, "exponential", 1.0, true, ""}};
  return m;
}

}  // namespace

TEST_CASE("Llama 3 shape: about 419 interruptions in 54 days on 2,048 x 8 GPUs") {
  // Preset llama3-405b: the paper's 419 unexpected interruptions as rates; 3.79 per 1,000 node-days.
  const FailureModel m = failure_preset("llama3-405b");
  REQUIRE(m.failures_per_1000_node_days(8) == trainsim::test::approx(3.79).epsilon(0.001));
  const JobSimConfig c = quick(2048, 54, 1200, 60, 600);
  const JobStatistics s = simulate(c, m, 200);
  MESSAGE("Llama 3 shape: mean interruptions " << s.interruptions.mean << " (p05 " << s.interruptions.p05 << ", p95 " << s.interruptions.p95
                                               << "), expected " << expected_interruptions(2048, 3.79, 54));
  CHECK(s.interruptions.mean == trainsim::test::approx(419).epsilon(0.10));
  // Failures arrive in wall-clock time whatever the job is doing: the mean is Poisson's 419 within noise.
  CHECK(s.interruptions.mean == trainsim::test::approx(419).epsilon(0.02));
  CHECK(s.interruptions.p05 < 419);
  CHECK(s.interruptions.p95 > 419);
}

TEST_CASE("ETTR within 1 point of 1 - first-order waste where its assumptions hold") {
  // Exponential failures, M = 24 h >> tau = 1 h >> delta = 30 s; recovery R = 5 min.
  const double m = 86400, tau = 3600, delta = 30, r = 300;
  const JobSimConfig c = quick(512, 365, tau, delta, r);
  const JobStatistics s = simulate(c, with_mtbf(512, m), 200);
  const double first_order = 1 - first_order_waste(delta, tau, r, m);
  const double complete = expected_ettr(delta, tau, r, m);
  MESSAGE("ETTR: Monte-Carlo " << s.ettr.mean << " [" << s.ettr.ci95_low << ", " << s.ettr.ci95_high << "], 1 - first-order waste "
                               << first_order << ", Daly complete model " << complete);
  CHECK(std::fabs(s.ettr.mean - first_order) < 0.01);
  CHECK(std::fabs(s.ettr.mean - complete) < 0.002);
}

TEST_CASE("failures during recovery restart it: the simulation matches Daly's complete model far from first order") {
  // M = 2 h, R = 30 min, delta = 5 min: first-order waste is off by points; the complete model is exact.
  const double m = 7200, r = 1800, delta = 300;
  const double tau = optimal_interval_s(delta, m);
  const JobSimConfig c = quick(64, 200, tau, delta, r);
  const JobStatistics s = simulate(c, with_mtbf(64, m), 100);
  const double complete = expected_ettr(delta, tau, r, m);
  MESSAGE("far from first order: Monte-Carlo " << s.ettr.mean << ", complete model " << complete << ", 1 - first-order "
                                               << 1 - first_order_waste(delta, tau, r, m));
  CHECK(s.ettr.mean == trainsim::test::approx(complete).epsilon(0.01));
  // Every failure in the window is an interruption, during a recovery or not.
  CHECK(s.interruptions.mean == trainsim::test::approx(200 * 86400 / m).epsilon(0.02));
}

TEST_CASE("BLOOM: 3-hour checkpoints lose about 1.5 h of work per crash") {
  // 48 nodes (384 A100) at 1.5 GPU failures a week; checkpoints every 3 h; a 3.5-month run, many seeds.
  const FailureModel m = failure_preset("bloom-176b");
  JobSimConfig c = quick(48, 105, 3 * 3600, 60, 1800);
  c.spare_nodes = 4;  // BLOOM kept 4 spare nodes
  const JobStatistics s = simulate(c, m, 400);
  MESSAGE("BLOOM: mean lost work per crash " << s.lost_work_per_crash_s / 3600 << " h over " << s.crashes_mean << " crashes a run; closed form "
                                             << expected_lost_work_s(60, 3 * 3600, m.job_mtbf_s(48, 8)) / 3600 << " h");
  CHECK(s.lost_work_per_crash_s / 3600 == trainsim::test::approx(1.5).epsilon(0.05));
  CHECK(s.lost_work_per_crash_s == trainsim::test::approx(expected_lost_work_s(60, 3 * 3600, m.job_mtbf_s(48, 8))).epsilon(0.05));
}

TEST_CASE("an emergency checkpoint on a detected failure loses the step in progress, not the interval's half") {
  // The BLOOM run again with just-in-time checkpointing (Gupta et al. EuroSys'24): each crash loses only the half
  // step (10 s of a 20 s step) in progress instead of about half of the 3 h interval; ETTR rises by about what the
  // 1.5 h per crash was worth.
  const FailureModel m = failure_preset("bloom-176b");
  JobSimConfig c = quick(48, 105, 3 * 3600, 60, 1800);
  c.spare_nodes = 4;
  const JobStatistics periodic = simulate(c, m, 200);
  c.emergency_loss_s = 10;
  const JobStatistics emergency = simulate(c, m, 200);
  CHECK(emergency.lost_work_per_crash_s <= 10.0 + 1e-9);
  CHECK(emergency.lost_work_per_crash_s == trainsim::test::approx(10).epsilon(0.02));  // a crash within 10 s of a restart loses less
  const double crashes_per_s = emergency.crashes_mean / (105 * 86400.0);
  CHECK(emergency.ettr.mean - periodic.ettr.mean == trainsim::test::approx(crashes_per_s * (periodic.lost_work_per_crash_s - 10)).epsilon(0.1));
}

TEST_CASE("results do not depend on the number of threads") {
  FailureModel m = failure_preset("llama3-405b");
  m.lemons = {2, 10.0, 3};
  m.components[0].distribution = "weibull";
  m.components[0].shape = 0.8;
  JobSimConfig c = quick(256, 30, 1800, 20, -1);
  c.fixed_recovery_s = -1;
  c.detection_s = 60;
  c.restart_s = 300;
  c.spare_nodes = 2;
  c.repair = std::shared_ptr<const TimeDistribution>(make_distribution("lognormal", 12 * 3600, 1.0, "repair"));
  c.elastic = true;
  c.elastic_speed = {1.0, 0.99, 0.98, 0.97, 0.96};
  MonteCarloOptions o;
  o.runs = 97;
  o.seed = 2024;
  std::vector<std::vector<RunResult>> results;
  for (int threads : {1, 2, 3, 8}) {
    o.threads = threads;
    results.push_back(run_job_montecarlo(c, m, o));
  }
  for (std::size_t k = 1; k < results.size(); ++k)
    for (std::size_t i = 0; i < results[0].size(); ++i) {
      const RunResult &a = results[0][i], &b = results[k][i];
      CHECK(a.wall_s == b.wall_s);
      CHECK(a.progress_s == b.progress_s);
      CHECK(a.interruptions == b.interruptions);
      CHECK(a.rework_s == b.rework_s);
      CHECK(a.shrunk_s == b.shrunk_s);
    }
  // A different seed gives different runs.
  o.seed = 2025;
  const auto other = run_job_montecarlo(c, m, o);
  CHECK((other[0].progress_s != results[0][0].progress_s || other[1].progress_s != results[0][1].progress_s));
}

TEST_CASE("no failures: only the checkpoint pauses are lost, exactly") {
  FailureModel none;
  JobSimConfig c = quick(16, 10, 1000, 10, 60);
  const JobStatistics window = simulate(c, none, 3);
  // A fixed window of 864,000 s = 855 full cycles of 1,010 s and 450 s more of compute.
  const double cycles = std::floor(864000.0 / 1010), compute = cycles * 1000 + std::min(864000.0 - cycles * 1010, 1000.0);
  CHECK(window.ettr.mean == trainsim::test::approx(compute / 864000.0).epsilon(1e-12));
  CHECK(window.interruptions.mean == 0);
  // Finishing 5,500 s of work: 5 checkpoints (after each full interval but the last).
  c.window_s = 1e9;
  c.work_s = 5500;
  const JobStatistics work = simulate(c, none, 2);
  CHECK(work.wall_s.mean == trainsim::test::approx(5500 + 5 * 10));
  CHECK(work.finished_fraction == 1);
}

TEST_CASE("asynchronous checkpoints: a crash before the write persists loses the interval before too") {
  const double m = 20 * 3600, tau = 1800;
  JobSimConfig sync = quick(64, 200, tau, 1, 300);
  JobSimConfig async = sync;
  async.persist_s = 600;
  const JobStatistics a = simulate(async, with_mtbf(64, m), 100), s = simulate(sync, with_mtbf(64, m), 100);
  // Sync: about tau/2 lost a crash; async: a further persist_s·(1 - ...) on average, here ~ +600 s·(600/1800)... at least more.
  CHECK(a.lost_work_per_crash_s > s.lost_work_per_crash_s + 100);
  CHECK(s.lost_work_per_crash_s == trainsim::test::approx(expected_lost_work_s(1, tau, m)).epsilon(0.05));
}

TEST_CASE("spare nodes and elastic shrink") {
  // 128 nodes, MTBF 4 h, every failure a node swap, 24 h repairs.
  const FailureModel m = with_mtbf(128, 4 * 3600);
  JobSimConfig c = quick(128, 60, 1800, 30, -1);
  c.detection_s = 60;
  c.restart_s = 180;
  c.reschedule_s = 120;
  c.repair = std::shared_ptr<const TimeDistribution>(make_distribution("lognormal", 24 * 3600, 1.0, "repair"));
  c.spare_nodes = 8;
  const JobStatistics spares = simulate(c, m, 60);
  c.spare_nodes = 0;
  const JobStatistics none = simulate(c, m, 60);
  c.elastic = true;
  c.elastic_speed.clear();
  for (int k = 0; k <= 64; ++k) c.elastic_speed.push_back((128.0 - k) / 128.0);
  const JobStatistics elastic = simulate(c, m, 60);
  MESSAGE("ETTR with 8 spares " << spares.ettr.mean << ", no spares " << none.ettr.mean << " (waiting " << none.wait_s / 86400
                                << " d), elastic without spares " << elastic.ettr.mean);
  // Without spares the job waits for a repaired node after every failure; with ~6 nodes in repair at any
  // time (a failure every 4 h, 24 h repairs) it is almost never whole: ETTR near e^-6.
  CHECK(spares.ettr.mean > none.ettr.mean + 0.2);
  CHECK(none.ettr.mean < 0.05);
  CHECK(none.wait_s > 0.5 * none.wall_s.mean);
  CHECK(spares.wait_s < 0.2 * none.wait_s);
  CHECK(elastic.ettr.mean > none.ettr.mean + 0.2);  // running on fewer nodes beats waiting
  CHECK(elastic.shrunk_s > 0);
  CHECK(elastic.wait_s < none.wait_s);
}

TEST_CASE("summaries: percentiles and the confidence interval of the mean") {
  const Statistic s = summarize({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  CHECK(s.mean == 6);
  CHECK(s.p50 == 6);
  CHECK(s.p05 == trainsim::test::approx(1.5));
  CHECK(s.p95 == trainsim::test::approx(10.5));
  CHECK(s.ci95_high - s.mean == trainsim::test::approx(1.959964 * s.stddev / std::sqrt(11.0)));
}
