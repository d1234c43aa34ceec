// How unevenly routed tokens load the expert-parallel ranks (expert_load.hpp): the expected largest of n normal
// variables against its closed forms and published tables, the busiest rank's load by hand, what it changes in a
// layer, and one router spread fitted on one published dropless/forced pair predicting three others.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <string>

#include "models/compute/compute.hpp"
#include "models/compute/expert_load.hpp"
#include "models/core/errors.hpp"
#include "models/memory/memory.hpp"
#include "models/scenario/scenario.hpp"
#include "models/step/step.hpp"
#include "tests/approx.hpp"

using namespace trainsim;
using nlohmann::json;

TEST_CASE("expected largest of n standard normals: closed forms for 2 and 3, Teichroew's table beyond") {
  CHECK(expected_max_standard_normal(1) == 0);
  // E[max(X1, X2)] = 1/sqrt(pi); E[max of 3] = 3 / (2 sqrt(pi)) (integrating x n phi Phi^(n-1) by parts).
  CHECK(expected_max_standard_normal(2) == doctest::Approx(1 / std::sqrt(std::numbers::pi)).epsilon(1e-6));
  CHECK(expected_max_standard_normal(3) == doctest::Approx(3 / (2 * std::sqrt(std::numbers::pi))).epsilon(1e-6));
  // Teichroew (1956), "Tables of expected values of order statistics ... from the normal distribution", Ann. Math.
  // Statist. 27: the largest of 4, 5, 8, 10 and 100: 1.029375, 1.162964, 1.423600, 1.538753, 2.507594.
  CHECK(expected_max_standard_normal(4) == doctest::Approx(1.029375).epsilon(1e-5));
  CHECK(expected_max_standard_normal(5) == doctest::Approx(1.162964).epsilon(1e-5));
  CHECK(expected_max_standard_normal(8) == doctest::Approx(1.423600).epsilon(1e-5));
  CHECK(expected_max_standard_normal(10) == doctest::Approx(1.538753).epsilon(1e-5));
  CHECK(expected_max_standard_normal(100) == doctest::Approx(2.507594).epsilon(1e-5));
  // Harter (1961), "Expected values of normal order statistics", Biometrika 48: the largest of 1,000: 3.24144; past
  // the table, the same integral per n.
  CHECK(expected_max_standard_normal(1000) == doctest::Approx(3.24144).epsilon(1e-5));
  CHECK(expected_max_standard_normal(1025) > expected_max_standard_normal(1024));
  CHECK(expected_max_standard_normal(1025) == doctest::Approx(expected_max_standard_normal(1024)).epsilon(1e-3));
}

namespace {

// Qwen3-235B-A22B (128 experts, top-8) as the Megatron MoE ModelZoo's long-context runs lay it out on 32 H100
// nodes: tp 4 with sequence parallelism, pp 8 x vpp 4, ep 8, etp 1, cp = seq / 16K, DeepEP, selective recompute of
// the norms and the MoE block, global batch 256 (best_practice/qwen3/readme.md, "Long Context", at e865051).
Scenario long_context(int seq, double load_cv) {
  const int cp = seq / 16384;
  json training = {{"seq_len", seq},
                   {"global_batch_size", 256},
                   {"precision", "bf16"},
                   {"optimizer", "adam"},
                   {"distributed_optimizer", true},
                   {"recompute", "selective"},
                   {"recompute_modules", {"layernorm", "moe"}},
                   {"framework", {{"preset", "megatron-core"}, {"moe_dispatcher", "deepep"}}}};
  if (load_cv > 0) training["moe_expert_load_cv"] = load_cv;
  return parse_scenario({{"model", "qwen3-235b-a22b"},
                         {"training", training},
                         {"parallel",
                          {{"tp", 4}, {"pp", 8}, {"vpp", 4}, {"cp", cp}, {"dp", 8 / cp}, {"ep", 8}, {"etp", 1}, {"sequence_parallel", true}, {"micro_batch_size", 1}}},
                         {"hardware",
                          {{"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 8}, {"num_nodes", 32}, {"inter_node", {{"fabric", "ib-ndr-400"}, {"nics_per_node", 8}}}}}});
}

double step_s(const Scenario& s) { return StepModel(s.model, s.training, s.hardware).estimate(s.parallel).time_s; }

}  // namespace

TEST_CASE("the busiest expert-parallel rank: 1 + c sqrt(ep / E) E[max of ep], by hand") {
  const Scenario balanced = long_context(16384, 0), loaded = long_context(16384, 1.76);
  // 128 experts over 8 ranks, 16 each: a rank's load varies by 1.76 / sqrt(16) = 0.44 of the mean, and the largest
  // of 8 lies 1.4236 of those above it: 1.6264.
  CHECK(busiest_expert_rank_load(balanced.model, balanced.training, balanced.parallel) == 1);
  CHECK(busiest_expert_rank_load(loaded.model, loaded.training, loaded.parallel) == doctest::Approx(1 + 0.44 * 1.4236).epsilon(1e-4));
  ParallelLayout one = loaded.parallel;
  one.ep = 1;
  CHECK(busiest_expert_rank_load(loaded.model, loaded.training, one) == 1);  // one GPU holds every expert
  TrainingSpec wild = loaded.training;
  wild.moe_expert_load_cv = 100;
  ParallelLayout two = loaded.parallel;
  two.ep = 2;
  CHECK(busiest_expert_rank_load(loaded.model, wild, two) == 2);  // never more than every token on one rank
  // 16,384 tokens a sequence over cp 1 and tp 4: 4,096 routed by each rank to 8 experts, 8 ranks sending to each
  // expert's rank: 4,096 x 8 x 8 / 128 = 2,048 tokens an expert, 1.6264 times that on the busiest rank.
  CHECK(balanced_tokens_per_expert(loaded.model, loaded.parallel, 4096) == 2048);
  CHECK(expert_tokens_on_busiest_rank(loaded.model, loaded.training, loaded.parallel, 4096) == doctest::Approx(2048 * 1.6264).epsilon(1e-4));
}

TEST_CASE("the busiest rank's experts, all-to-all and activations scale with its load") {
  const Scenario balanced = long_context(16384, 0), loaded = long_context(16384, 1.76);
  const double load = busiest_expert_rank_load(loaded.model, loaded.training, loaded.parallel);
  auto op = [](const Scenario& s, const std::string& name) {
    for (const LayerOp& o : layer_ops(s.model, s.training, s.parallel, s.hardware.gpu, true))
      if (o.name == name) return o;
    FAIL("no op " << name);
    return LayerOp{};
  };
  CHECK(op(loaded, "moe.experts.gate_up.fprop").gemm.m == doctest::Approx(load * op(balanced, "moe.experts.gate_up.fprop").gemm.m));
  // The dispatch all-to-all's buffer: the busiest rank receives its load's multiple.
  auto a2a_bytes = [](const Scenario& s) {
    const StepStream st = StepModel(s.model, s.training, s.hardware).stream(s.parallel);
    for (int i = 0; i < st.moe.comm.size; ++i)
      if (st.moe.comm.ops[i].collective == Collective::AllToAll) return st.moe.comm.ops[i].bytes;
    return 0.0;
  };
  CHECK(a2a_bytes(loaded) == doctest::Approx(load * a2a_bytes(balanced)));
  // Activations, the busiest rank's rows: per routed row the permuted expert input (2 x 4,096 bytes), the gate and
  // up outputs (2 x 2 x 1,536) and their product (2 x 1,536), 17,408 bytes; 4,096 tokens x top-8 = 32,768 rows a
  // rank on average.
  const double extra = layer_activations(loaded.model, loaded.training, loaded.parallel, true).full -
                       layer_activations(balanced.model, balanced.training, balanced.parallel, true).full;
  CHECK(extra == doctest::Approx((load - 1) * 17408.0 * 32768));
  CHECK(step_s(loaded) > step_s(balanced));
}

TEST_CASE("one router spread, fitted on the 16K pair, predicts the ModelZoo's dropless slowdown at 32K-128K within 5%") {
  // Megatron MoE ModelZoo, best_practice/qwen3/readme.md "Long Context" (e865051): Qwen3-235B-A22B on 256 H100s,
  // TFLOP/s a GPU with forced load balancing / dropless real routing: 16K 295/237, 32K 335/277, 64K 368/320,
  // 128K 389/357. The same FLOPs either way, so dropless over forced step time is 295/237 and so on. Each run routes
  // 4,096 tokens a rank (seq / cp / tp), so one router spread should hold for all four while the MoE layers' share
  // of the step falls with the sequence (attention grows as its square).
  const double published[4][2] = {{16384, 295.0 / 237}, {32768, 335.0 / 277}, {65536, 368.0 / 320}, {131072, 389.0 / 357}};
  const double forced16 = step_s(long_context(16384, 0));
  double lo = 0, hi = 10;
  for (int i = 0; i < 40; ++i) {
    const double mid = 0.5 * (lo + hi);
    (step_s(long_context(16384, mid)) / forced16 < published[0][1] ? lo : hi) = mid;
  }
  const double cv = 0.5 * (lo + hi);
  MESSAGE("router spread fitted on the 16K pair: moe_expert_load_cv " << cv);
  CHECK(cv == doctest::Approx(1.67).epsilon(0.03));  // the value the note and the examples quote
  for (int i = 1; i < 4; ++i) {
    const int seq = static_cast<int>(published[i][0]);
    const double predicted = step_s(long_context(seq, cv)) / step_s(long_context(seq, 0));
    MESSAGE(seq << " tokens: dropless / forced " << predicted << " predicted, " << published[i][1] << " published");
    CHECK(predicted == doctest::Approx(published[i][1]).epsilon(0.05));
  }
}

TEST_CASE("moe_expert_load_cv: a MoE field, non-negative") {
  const json model = "qwen3-30b-a3b";
  auto with = [&](const json& m, const json& cv) {
    return parse_scenario({{"model", m}, {"training", {{"seq_len", 4096}, {"global_batch_size", 8}, {"moe_expert_load_cv", cv}}},
                           {"parallel", {{"ep", 8}, {"micro_batch_size", 1}}}, {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 8}}}});
  };
  CHECK(with(model, 0.5).training.moe_expert_load_cv == 0.5);
  CHECK_THROWS_WITH_AS(with(model, -1), doctest::Contains("/training/moe_expert_load_cv"), InputError);
  CHECK_THROWS_WITH_AS(with("llama3-8b", 0.5), doctest::Contains("/training/moe_expert_load_cv"), InputError);
}
