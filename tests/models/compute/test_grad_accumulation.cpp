// Gradient accumulation through autograd (framework autograd_grad_accumulation; torch/csrc/autograd/functions/
// accumulate_grad.h): from the second micro-batch of a step each trainable parameter's new gradient is added into its
// .grad, one kernel per parameter tensor reading two gradients and writing one. Expected values by hand.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <string>

#include "models/compute/compute.hpp"
#include "models/scenario/framework.hpp"
#include "models/scenario/scenario.hpp"
#include "models/step/step.hpp"

using namespace trainsim;
using Json = nlohmann::json;
using trainsim::test::approx;

namespace {
// Llama-3.2-1B's shape with untied embeddings, one H100, micro-batch 1 of 2,048 tokens, `sequences` a step.
Scenario llama(Json framework, int sequences, const std::string& mode = "sft", int zero = 0) {
  Json training = {{"mode", mode}, {"seq_len", 2048}, {"global_batch_size", sequences}, {"recompute", "none"}, {"framework", framework},
                   {"zero_stage", zero}};
  if (mode == "lora") training["lora"] = {{"rank", 16}, {"alpha", 32}, {"target_modules", {"q_proj", "v_proj"}}};
  return parse_scenario({{"model",
                          {{"model_type", "llama"}, {"num_hidden_layers", 16}, {"hidden_size", 2048}, {"num_attention_heads", 32},
                           {"num_key_value_heads", 8}, {"intermediate_size", 8192}, {"vocab_size", 128256}, {"hidden_act", "silu"},
                           {"tie_word_embeddings", false}}},
                         {"training", training},
                         {"parallel", {{"tp", 1}, {"pp", 1}, {"micro_batch_size", 1}}},
                         {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 1}}}});
}
struct Accumulated {
  double bytes = 0, kernels = 0;
};
Accumulated accumulated(const Scenario& s) {
  Accumulated a;
  for (const LayerOp& o : layer_ops(s.model, s.training, s.parallel, s.hardware.gpu, false))
    if (o.name.size() > 15 && o.name.ends_with(".grad_accumulate")) {
      CHECK(std::string(o.pass) == "backward");
      a.bytes += o.bytes, a.kernels += o.kernels;
    }
  return a;
}
}  // namespace

TEST_CASE("autograd adds each micro-batch's gradients into .grad after the first: a kernel per parameter, read two, write one") {
  // Full fine-tuning in transformers (fp32 parameters under autocast: fp32 gradients), 4 micro-batches a step: 3 of 4
  // micro-batches add. A layer's parameters: q and o 2,048 x 2,048, k and v 2,048 x 512, gate, up and down
  // 2,048 x 8,192: 60,817,408 elements in 7 tensors, and two RMSNorm weights of 2,048: 60,821,504 in 9.
  const Scenario four = llama("transformers", 4);
  REQUIRE(four.parallel.gradient_accumulation_steps == 4);
  CHECK(autograd_accumulation_share(four.training, four.parallel) == 0.75);
  const Accumulated a = accumulated(four);
  CHECK(a.bytes == approx(0.75 * 3 * 4 * 60821504.0));
  CHECK(a.kernels == approx(0.75 * 9));

  // One micro-batch a step: the gradient is stolen, nothing added.
  const Scenario one = llama("transformers", 1);
  CHECK(autograd_accumulation_share(one.training, one.parallel) == 0);
  CHECK(accumulated(one).kernels == 0);

  // The edges: the embedding and the untied LM head, 128,256 x 2,048 each, and the final norm's 2,048, in fp32: their
  // memory-bound time at the GPU's bandwidth (both priced at one clock: the layer's power duty moves the GEMMs').
  const GpuComputeTraits tr = gpu_compute_traits(four.hardware.gpu);
  const EdgeCompute e4 = edge_compute(four.model, four.training, four.parallel, four.hardware.gpu, tr);
  const EdgeCompute e1 = edge_compute(one.model, one.training, one.parallel, one.hardware.gpu, tr);
  const double vh = 128256.0 * 2048;
  CHECK(e4.embedding_s - e1.embedding_s == approx(memory_bound_time(four.hardware.gpu, 0.75 * 12 * vh)));
  CHECK(e4.head_s - e1.head_s == approx(memory_bound_time(four.hardware.gpu, 0.75 * 12 * (vh + 2048))));

  // The step pays for it: same micro-batch, more of them, each slower on average.
  const StepEstimate s4 = StepModel(four.model, four.training, four.hardware).estimate(four.parallel);
  const StepEstimate s1 = StepModel(one.model, one.training, one.hardware).estimate(one.parallel);
  CHECK(s4.breakdown.compute_s > 4 * s1.breakdown.compute_s);
}

TEST_CASE("autograd accumulation: LoRA adds only its adapters; frameworks that accumulate otherwise add nothing") {
  // LoRA on q and v: per layer A (2,048 x 16) and B (16 x 2,048 for q, 16 x 512 for v): 32,768 + 32,768 + 32,768 +
  // 8,192 = 106,496 elements in 4 tensors; the frozen norms and base weights have no gradient.
  const Scenario lora = llama("transformers", 4, "lora");
  const Accumulated a = accumulated(lora);
  CHECK(a.bytes == approx(0.75 * 3 * 4 * 106496.0));
  CHECK(a.kernels == approx(0.75 * 4));
  // A plain loop accumulates the same way, over its own modules: a fused qkv and a fused gate/up projection (the
  // pytorch preset's separate_projections false), so 4 weight tensors and 2 norms, the same elements.
  const Accumulated plain = accumulated(llama("pytorch", 4));
  CHECK(plain.kernels == approx(0.75 * 6));
  CHECK(plain.bytes == approx(0.75 * 3 * 4 * 60821504.0));
  // Megatron-Core's weight-gradient GEMMs add into main_grad (priced in the GEMM), DeepSpeed and FSDP keep their own
  // buckets and shards, and a sharded optimizer's gradients are not autograd's.
  CHECK(autograd_accumulation_share(llama("megatron-core", 4).training, llama("megatron-core", 4).parallel) == 0);
  CHECK(accumulated(llama("megatron-core", 4)).kernels == 0);
  CHECK(accumulated(llama("deepspeed", 4, "sft", 2)).kernels == 0);
  CHECK(accumulated(llama("transformers", 4, "sft", 1)).kernels == 0);
}

TEST_CASE("autograd accumulation: linear attention's projections accumulate, its delta rule (activations) does not") {
  // Gated DeltaNet's input projections (q, k, v, z: 2 x 16 x 128 + 2 x 32 x 128 = 12,288 outputs of 2,048 inputs) are
  // parameters; the chunked delta rule multiplies activations, priced as a GEMM with both operands' gradients.
  const Scenario s = parse_scenario({{"model",
                                      {{"num_hidden_layers", 4}, {"hidden_size", 2048}, {"num_attention_heads", 16}, {"num_key_value_heads", 2},
                                       {"head_dim", 256}, {"intermediate_size", 5120}, {"vocab_size", 151936}, {"full_attention_interval", 4},
                                       {"linear_num_key_heads", 16}, {"linear_num_value_heads", 32}, {"linear_key_head_dim", 128},
                                       {"linear_value_head_dim", 128}, {"linear_conv_kernel_dim", 4}}},
                                     {"training", {{"mode", "sft"}, {"seq_len", 2048}, {"global_batch_size", 4}, {"framework", "transformers"}}},
                                     {"parallel", {{"tp", 1}, {"pp", 1}, {"micro_batch_size", 1}}},
                                     {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 1}}}});
  REQUIRE(s.model.linear_attention_share() > 0);
  bool projection = false;
  for (const LayerOp& o : layer_ops(s.model, s.training, s.parallel, s.hardware.gpu, false)) {
    CHECK(o.name.find("delta_rule.grad_accumulate") == std::string::npos);
    if (o.name == "linear_attention.in_proj_qkvz.grad_accumulate") {
      projection = true;
      CHECK(o.bytes == approx(0.75 * 3 * 4 * 2048.0 * 12288));
    }
  }
  CHECK(projection);
}
