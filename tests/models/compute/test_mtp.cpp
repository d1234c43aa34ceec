// Multi-token prediction (DeepSeek-V3 arXiv 2412.19437 §2.2; Megatron --mtp-num-layers): the modules' weights,
// their FLOPs (Megatron-LM's count, training.py num_floating_point_operations) and their work on the last stage.
#include <doctest/doctest.h>

#include "models/compute/flops.hpp"
#include "models/compute/transformer.hpp"
#include "models/memory/memory.hpp"
#include "models/scenario/scenario.hpp"
#include "models/step/step.hpp"
#include "tests/approx.hpp"

using namespace trainsim;
using trainsim::test::approx;

namespace {
Scenario with_mtp(const char* model, int mtp, int pp = 1) {
  return parse_scenario({{"model", {{"preset", model}, {"mtp_num_layers", mtp}}},
                         {"training", {{"seq_len", 4096}, {"global_batch_size", 64}, {"framework", "megatron-core"}}},
                         {"parallel", {{"tp", 1}, {"pp", pp}, {"micro_batch_size", 1}}},
                         {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 8}}}});
}
}  // namespace

TEST_CASE("MTP modules' weights") {
  // DeepSeek-V3's config names it num_nextn_predict_layers: read as mtp_num_layers.
  const Scenario pasted = parse_scenario({{"model", {{"preset", "deepseek-v3"}, {"num_nextn_predict_layers", 1}}},
                                          {"training", {{"seq_len", 4096}, {"global_batch_size", 64}}},
                                          {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 64}}}});
  CHECK(pasted.model.mtp_layers == 1);
  // Hugging Face's DeepSeek-V3 checkpoint: 685B with the MTP module, which stores its own copies of the embedding
  // and the head (2 x 129280 x 7168); trainsim shares them, as Megatron does.
  const double total = count_parameters(pasted.model).total + 2.0 * 129280 * 7168;
  CHECK(total == approx(685e9).epsilon(0.005));
}

TEST_CASE("MTP FLOPs as Megatron counts them") {
  const Scenario base = with_mtp("llama3-8b", 0), one = with_mtp("llama3-8b", 1);
  // Llama-3-8B, one 4096-token sequence, forward + backward (x3): one more layer (QKV and output projections
  // 2s(h·q + 2h·kv + q·h), scores 4s²q, gated MLP 2s·3h·f), the module's norms and projection 2s(3h + 2h²), and
  // the logits once more 2s·h·V.
  const double s = 4096, h = 4096, q = 4096, kv = 1024, f = 14336, V = 128256;
  const double layer = 2 * s * (h * q + 2 * h * kv + q * h) + 4 * s * s * q + 2 * s * 3 * h * f;
  CHECK(model_flops_per_iteration(one.model, one.training, 1) - model_flops_per_iteration(base.model, base.training, 1) ==
        approx(3 * (layer + 2 * s * (3 * h + 2 * h * h) + 2 * s * h * V)));
}

TEST_CASE("MTP runs on the last pipeline stage") {
  const Scenario base = with_mtp("llama3-8b", 0, 2), one = with_mtp("llama3-8b", 1, 2);
  const MemoryModel mb(base.model, base.training, base.hardware), mo(one.model, one.training, one.hardware);
  // The first stage is unchanged; the last holds the module's layer and its logits.
  CHECK(mo.stage(one.parallel, 0).total == approx(mb.stage(base.parallel, 0).total));
  CHECK(mo.stage(one.parallel, 1).total > mb.stage(base.parallel, 1).total);
  CHECK(mo.stage(one.parallel, 1).parameters - mb.stage(base.parallel, 1).parameters ==
        approx(count_parameters(one.model).total - count_parameters(base.model).total));
  // The step: the last stage gets slower by at least a layer and a head.
  const StepEstimate eb = StepModel(base.model, base.training, base.hardware).estimate(base.parallel);
  const StepEstimate eo = StepModel(one.model, one.training, one.hardware).estimate(one.parallel);
  CHECK(eo.time_s > eb.time_s);
}
