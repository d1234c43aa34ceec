// The iteration simulator (sim/iteration/iteration_sim.hpp) against what its design implies, by hand. One SimGrid engine per
// process: CMake runs each test case in a process of its own (-tc).
#include <doctest/doctest.h>

#include "models/scenario/scenario.hpp"
#include "models/step/step.hpp"
#include "sim/iteration/iteration_sim.hpp"

using namespace trainsim;

namespace {
// Llama 3 8B, 32 sequences of 4,096 tokens on one 8-GPU H100 node, tp 2 x dp 4.
Scenario tp2_dp4() {
  return parse_scenario({{"model", "llama3-8b"},
                         {"training", {{"seq_len", 4096}, {"global_batch_size", 32}}},
                         {"parallel", {{"tp", 2}, {"micro_batch_size", 1}}},
                         {"hardware", {{"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 8}, {"num_nodes", 1}}}});
}
}  // namespace

TEST_CASE("idle: on an idle non-blocking node the simulated step is the analytic one") {
  const Scenario s = tp2_dp4();
  const StepModel model(s.model, s.training, s.hardware);
  const StepEstimate analytic = model.estimate(s.parallel);
  const sim::SimulationResult r = sim::simulate_iterations(s, model, {});
  REQUIRE(r.iteration_s.size() == 2);
  CHECK(r.gpus == 8);
  // Each flow is sized to its analytic time and nothing shares a link: compute, the blocking TP collectives, the
  // optimizer and the overhead are the analytic ones; only the DP buckets' overlap with the last backward is
  // scheduled for real (the analytic step charges what is exposed of them).
  CHECK(r.breakdown.compute_s == doctest::Approx(analytic.breakdown.compute_s + analytic.breakdown.recompute_s + analytic.breakdown.host_s).epsilon(1e-6));
  CHECK(r.breakdown.tp_s == doctest::Approx(analytic.breakdown.tp_comm_s).epsilon(1e-6));
  CHECK(r.breakdown.optimizer_s == doctest::Approx(analytic.breakdown.optimizer_s).epsilon(1e-6));
  CHECK(r.step_time_s == doctest::Approx(analytic.time_s).epsilon(0.01));
  CHECK(r.iteration_s[0] == doctest::Approx(r.iteration_s[1]).epsilon(1e-9));  // nothing random: iterations alike
}

TEST_CASE("straggler: a GPU computing 1.5x slower holds every data-parallel rank back by half its compute") {
  const Scenario s = tp2_dp4();
  const StepModel model(s.model, s.training, s.hardware);
  const StepEstimate analytic = model.estimate(s.parallel);
  sim::SimOptions options;
  options.stragglers = {{0, 1.5}};
  const sim::SimulationResult r = sim::simulate_iterations(s, model, options);
  const double compute = analytic.breakdown.compute_s + analytic.breakdown.recompute_s + analytic.breakdown.host_s;
  // GPU 0's tensor-parallel group runs at its pace: its compute is 1.5x, and the others wait for it at the
  // gradient reduce, so the step grows by 0.5x the compute (less the DP traffic that overlap hid meanwhile).
  CHECK(r.reported_gpu == 0);
  CHECK(r.breakdown.compute_s == doctest::Approx(1.5 * compute).epsilon(1e-6));
  CHECK(r.step_time_s - analytic.time_s == doctest::Approx(0.5 * compute).epsilon(0.02));
}
