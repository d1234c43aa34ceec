// Linear attention (Gated DeltaNet, Qwen3-Next): how configs spell the layer pattern, the weights and FLOPs of a
// linear-attention layer (hand-derived from transformers' Qwen3NextGatedDeltaNet shapes and Megatron-LM's FLOP
// count), the blend of a hybrid model's layers, and what cannot be run.
#include <doctest/doctest.h>

#include <string>

#include "models/compute/compute.hpp"
#include "models/compute/linear_attention.hpp"
#include "models/compute/transformer.hpp"
#include "models/core/errors.hpp"
#include "models/scenario/scenario.hpp"
#include "tests/approx.hpp"

using namespace trainsim;
using trainsim::test::approx;

namespace {
// Qwen3-Next-80B-A3B's dimensions (Megatron-MoE-ModelZoo Qwen3-Next-80B-A3B.yaml, the HF config.json).
nlohmann::json qwen3_next(const nlohmann::json& extra = nlohmann::json::object()) {
  nlohmann::json m = {{"num_hidden_layers", 48}, {"hidden_size", 2048}, {"num_attention_heads", 16}, {"num_key_value_heads", 2},
                      {"head_dim", 256}, {"intermediate_size", 5120}, {"vocab_size", 151936}, {"num_experts", 512},
                      {"num_experts_per_tok", 10}, {"moe_intermediate_size", 512}, {"shared_expert_intermediate_size", 512},
                      {"full_attention_interval", 4}, {"linear_num_key_heads", 16}, {"linear_num_value_heads", 32},
                      {"linear_key_head_dim", 128}, {"linear_value_head_dim", 128}, {"linear_conv_kernel_dim", 4}};
  m.update(extra);
  return m;
}
Scenario scenario(const nlohmann::json& model, const nlohmann::json& parallel = {{"tp", 1}, {"pp", 1}, {"ep", 8}, {"micro_batch_size", 1}}) {
  return parse_scenario({{"model", model},
                         {"training", {{"seq_len", 4096}, {"global_batch_size", 8}, {"framework", "megatron-core"}}},
                         {"parallel", parallel},
                         {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 8}}}});
}
}  // namespace

TEST_CASE("the layer pattern as Qwen3-Next's config writes it") {
  const ModelSpec m = scenario(qwen3_next()).model;
  CHECK(m.linear_attention_layers == 36);  // every 4th of 48 layers softmax attention
  CHECK(m.attention_output_gate);          // implied by the hybrid config
  CHECK(m.linear_attention_share() == approx(0.75));
  nlohmann::json types = nlohmann::json::array();
  for (int i = 0; i < 48; ++i) types.push_back(i % 2 ? "full_attention" : "linear_attention");
  nlohmann::json by_types = qwen3_next({{"layer_types", types}});
  by_types.erase("full_attention_interval");
  CHECK(scenario(by_types).model.linear_attention_layers == 24);
  CHECK_THROWS_WITH_AS(scenario(qwen3_next({{"linear_num_value_heads", 24}})), doctest::Contains("/model/linear_num_value_heads"), InputError);
  // Context parallelism on linear-attention layers is not modelled: refused, naming the field.
  CHECK_THROWS_WITH_AS(scenario(qwen3_next(), {{"tp", 1}, {"pp", 1}, {"cp", 2}, {"ep", 4}, {"micro_batch_size", 1}}), doctest::Contains("/parallel/cp"),
                       InputError);
}

TEST_CASE("weights and FLOPs of a Gated DeltaNet layer") {
  const ModelSpec m = scenario(qwen3_next()).model;
  // in_proj_qkvz 2048 x (2 x 2048 + 2 x 4096) and in_proj_ba 2048 x 64: 2048 x 12352 = 25,296,896; conv over
  // q, k, v: 8192 channels x 4 taps = 32,768; out_proj 4096 x 2048 = 8,388,608.
  CHECK(gated_delta_net_split_params(m) == approx(25296896.0 + 32768 + 8388608));
  CHECK(gated_delta_net_replicated_params(m) == approx(2 * 32 + 128));  // A_log, dt_bias; the gated norm
  // Megatron-LM: 2 x (2048 x 12352 + 4 x 8192 + 4 x 32 x 128² + 4096 x 2048) = 71,630,848 per token.
  CHECK(gated_delta_net_forward_flops_per_token(m) == approx(71630848.0));
  // A layer's attention weights on average: 12 gated softmax layers (2048 x (2 x 4096 + 2 x 512) + 4096 x 2048
  // = 27,262,976) and 36 linear ones.
  const ModelParams p = count_parameters(m);
  CHECK(p.moe_layer.attention_split * 48 == approx(12 * 27262976.0 + 36 * (25296896.0 + 32768 + 8388608)));
}

TEST_CASE("a hybrid layer is the layers' mix, and its ops list says which kind runs each") {
  const Scenario hybrid = scenario(qwen3_next());
  const Scenario softmax = scenario(qwen3_next({{"full_attention_interval", 1}, {"attention_output_gate", true}}));
  CHECK(softmax.model.linear_attention_layers == 0);
  const LayerCompute h = layer_compute(hybrid.model, hybrid.training, hybrid.parallel, hybrid.hardware.gpu, true);
  const LayerCompute s = layer_compute(softmax.model, softmax.training, softmax.parallel, softmax.hardware.gpu, true);
  // Forward FLOPs per layer, the attention part only (the MoE block is the same): the softmax layer's gated
  // QKV (2 x 4096 x 2048 x 9216) and output projection (2 x 4096 x 4096 x 2048) and its causal core (2 x 16 heads
  // x 4096² x 512 x 1/2); the linear layer's projections and delta rule (Megatron's count less the conv, which
  // runs memory-bound): 4096 x (71,630,848 - 65,536).
  const double softmax_attention = 2 * 4096.0 * 2048 * 9216 + 2 * 4096.0 * 4096 * 2048 + 2 * 16 * 4096.0 * 4096 * 512 * 0.5;
  const double linear_attention = 4096 * (71630848.0 - 2 * 4 * 8192);
  CHECK(s.forward_flops - h.forward_flops == approx(0.75 * (softmax_attention - linear_attention)));
  // The list: ops both kinds run once, each kind's own with its share of the layers; the shares weigh the
  // predicted times back to the layer's.
  double sum = 0;
  bool linear_op = false, softmax_op = false;
  for (const LayerOp& op : layer_ops(hybrid.model, hybrid.training, hybrid.parallel, hybrid.hardware.gpu, true)) {
    sum += op.layer_share * op.predicted_s;
    linear_op = linear_op || (op.name.rfind("linear_attention.", 0) == 0 && op.layer_share == approx(0.75));
    softmax_op = softmax_op || (op.name.rfind("attention.qkv", 0) == 0 && op.layer_share == approx(0.25));
  }
  CHECK(linear_op);
  CHECK(softmax_op);
  CHECK(sum == approx(h.forward_s + h.backward_s + h.recompute_s));
}
