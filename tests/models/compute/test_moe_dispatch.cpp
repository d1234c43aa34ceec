// The MoE dispatcher's traffic: DeepEP's one copy per destination node against the all-to-all's one copy per
// routed expert, checked against an enumeration and a hand computation.
#include <doctest/doctest.h>

#include <cmath>

#include "models/compute/moe_dispatch.hpp"
#include "models/scenario/presets.hpp"
#include "models/scenario/scenario.hpp"
#include "models/step/step.hpp"

using namespace trainsim;

TEST_CASE("expected groups hit by top-k experts: the hypergeometric count, checked by enumeration") {
  // 4 experts in 2 groups of 2, top-2: of the C(4,2) = 6 pairs, 2 lie in one group and 4 span both, so the
  // expected groups hit are (2 x 1 + 4 x 2) / 6 = 10/6.
  CHECK(expected_groups_hit(4, 2, 2) == doctest::Approx(10.0 / 6));
  // 6 experts in 3 groups of 2, top-3: no 3 experts fit in one group; of the C(6,3) = 20 triples, those with two
  // from one group and one from another hit 2 groups (3 groups x 1 pair x 4 others = 12), the other 8 hit 3:
  // (12 x 2 + 8 x 3) / 20 = 2.4.
  CHECK(expected_groups_hit(6, 3, 3) == doctest::Approx(2.4));
  CHECK(expected_groups_hit(8, 8, 4) == doctest::Approx(4));  // every expert chosen: every group hit
  CHECK(expected_groups_hit(8, 2, 1) == doctest::Approx(1));
}

TEST_CASE("DeepEP sends a token once per other node: 0.4536 of the all-to-all's bytes for Qwen3-235B on ep 32 over 4 nodes") {
  // 128 experts, top-8, ep 32 with 8 ranks per node: 32 experts per node. A given other node is missed with
  // probability C(96,8)/C(128,8) = prod_{i<8} (96-i)/(128-i) = 0.092747..., so 3 x 0.907253 = 2.7218 copies leave
  // the node, against the all-to-all's 8 x 24/32 = 6: 0.45363.
  double miss = 1;
  for (int i = 0; i < 8; ++i) miss *= (96.0 - i) / (128.0 - i);
  CHECK(miss == doctest::Approx(0.092747).epsilon(1e-4));
  const double share = dispatch_traffic_share(MoeDispatcher::DeepEp, 128, 8, GroupPlacement{32, 8});
  CHECK(share == doctest::Approx(3 * (1 - miss) / 6));
  CHECK(share == doctest::Approx(0.45363).epsilon(1e-4));
  // Within one node (ep 8, 16 experts per GPU): 7 x (1 - C(112,8)/C(128,8)) other GPUs against 8 x 7/8 = 7.
  double miss_gpu = 1;
  for (int i = 0; i < 8; ++i) miss_gpu *= (112.0 - i) / (128.0 - i);
  CHECK(dispatch_traffic_share(MoeDispatcher::DeepEp, 128, 8, GroupPlacement{8, 8}) == doctest::Approx(1 - miss_gpu));
  // The all-to-all dispatcher and a group of one are unchanged.
  CHECK(dispatch_traffic_share(MoeDispatcher::AllToAll, 128, 8, GroupPlacement{32, 8}) == 1.0);
  CHECK(dispatch_traffic_share(MoeDispatcher::DeepEp, 128, 8, GroupPlacement{1, 1}) == 1.0);
}

TEST_CASE("a DeepEP framework sends the EP all-to-all's bytes times the share, and nothing else changes") {
  nlohmann::json doc = {{"model", "qwen3-235b-a22b"},
                        {"training", {{"seq_len", 4096}, {"global_batch_size", 256}, {"recompute", "full"}}},
                        {"parallel", {{"tp", 2}, {"ep", 32}, {"etp", 1}, {"pp", 1}, {"micro_batch_size", 1}, {"sequence_parallel", true}}},
                        {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 256}}}};
  const Scenario a2a = parse_scenario(doc);
  doc["training"]["framework"] = {{"preset", "megatron-core"}, {"moe_dispatcher", "deepep"}};
  const Scenario deepep = parse_scenario(doc);
  const StepEstimate ea = StepModel(a2a.model, a2a.training, a2a.hardware).estimate(a2a.parallel);
  const StepEstimate ed = StepModel(deepep.model, deepep.training, deepep.hardware).estimate(deepep.parallel);
  CHECK(ed.breakdown.ep_comm_s < 0.6 * ea.breakdown.ep_comm_s);
  CHECK(ed.breakdown.compute_s == doctest::Approx(ea.breakdown.compute_s));
  CHECK(ed.breakdown.tp_comm_s == doctest::Approx(ea.breakdown.tp_comm_s));
}
