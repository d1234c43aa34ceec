// What fp32 parameters under torch.autocast do to a transformers training step (layer_walk.cpp): the fp32 stream's
// casts, separate projections, LoRA's dtype round trip, MoE experts in the parameters' dtype, the 5.x eager experts'
// whole-parameter gradients, and activation checkpointing's hooks; and the framework option that picks the experts
// implementation. Expected values are derived by hand in the comments.
#include <doctest/doctest.h>

#include "tests/approx.hpp"
#include "tests/models/compute/one_gpu.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "models/calibration/fitted_parameters.hpp"
#include "models/compute/compute.hpp"
#include "models/compute/op_builder.hpp"
#include "models/core/errors.hpp"
#include "models/memory/memory.hpp"
#include "models/scenario/framework.hpp"
#include "models/scenario/scenario.hpp"
#include "models/step/step.hpp"

using namespace trainsim;
using Json = nlohmann::json;

namespace {
// One H100, one micro-batch of `seq` tokens, the model given as a Hugging Face config.
Scenario one_gpu(Json model, Json framework, const std::string& mode = "sft", const std::string& recompute = "none", int seq = 2048) {
  Json training = {{"mode", mode}, {"seq_len", seq}, {"recompute", recompute}, {"framework", framework}};
  if (mode == "lora") training["lora"] = {{"rank", 16}, {"alpha", 32}};
  return trainsim::test::one_h100(model, training);
}
using trainsim::test::llama_1b;
// Qwen3-30B-A3B's layer shape, four layers.
Json qwen3_4l() {
  return {{"model_type", "qwen3_moe"}, {"num_hidden_layers", 4}, {"hidden_size", 2048}, {"num_attention_heads", 32}, {"num_key_value_heads", 4},
          {"head_dim", 128}, {"intermediate_size", 6144}, {"moe_intermediate_size", 768}, {"num_experts", 128}, {"num_experts_per_tok", 8},
          {"vocab_size", 151936}, {"hidden_act", "silu"}};
}
// Mixtral-8x7B's layer shape, two layers.
Json mixtral_2l() {
  return {{"model_type", "mixtral"}, {"num_hidden_layers", 2}, {"hidden_size", 4096}, {"num_attention_heads", 32}, {"num_key_value_heads", 8},
          {"intermediate_size", 14336}, {"num_local_experts", 8}, {"num_experts_per_tok", 2}, {"vocab_size", 32000}, {"hidden_act", "silu"}};
}
LayerOp find_op(const Scenario& s, const std::string& name, const std::string& pass, bool moe_layer) {
  for (const auto& o : layer_ops(s.model, s.training, s.parallel, s.hardware.gpu, moe_layer))
    if (o.name == name && pass == o.pass) return o;
  LayerOp none;  // not in the walk: no kernels, no bytes
  none.kernels = 0;
  return none;
}
}  // namespace

TEST_CASE("an fp32 stream under autocast: each linear's fp32 input cast to 16 bits, once per separate projection") {
  // Full fine-tuning over fp32 parameters: the norm output is fp32 and autocast casts it for each of q, k and v:
  // 3 x (4 + 2) bytes per element of tokens x hidden forward; backward casts each gradient back (3 x 6) and sums the
  // three (2 x 12): 42 bytes per element, 3 and 5 kernels.
  const Scenario full = one_gpu(llama_1b(), "transformers");
  const double elements = 2048.0 * 2048;
  const LayerOp f = find_op(full, "attention.input_cast", "forward", false), b = find_op(full, "attention.input_cast", "backward", false);
  CHECK(f.bytes == trainsim::test::approx(18 * elements));
  CHECK(b.bytes == trainsim::test::approx(42 * elements));
  CHECK(f.kernels == 3);
  CHECK(b.kernels == 5);
  // q, k and v are three GEMMs (separate_projections); Megatron-Core's fused linear_qkv is one.
  CHECK(find_op(full, "attention.q.fprop", "forward", false).flops == trainsim::test::approx(2 * 2048.0 * 2048 * 2048));
  CHECK(find_op(full, "attention.k.fprop", "forward", false).flops == trainsim::test::approx(2 * 2048.0 * 2048 * 512));
  const Scenario mcore = one_gpu(llama_1b(), "megatron-core");
  CHECK(find_op(mcore, "attention.qkv.fprop", "forward", false).flops == trainsim::test::approx(2 * 2048.0 * 2048 * 3072));
  CHECK(find_op(mcore, "attention.input_cast", "forward", false).kernels == 0);  // 16-bit parameters: no stream casts
  // DPO: the frozen bf16 reference model's forward has a 16-bit stream: none of the policy's stream or RoPE casts.
  const Scenario dpo = one_gpu(llama_1b(), "transformers", "dpo");
  bool reference_casts = false, reference_norm = false;
  for (const auto& o : layer_ops(dpo.model, dpo.training, dpo.parallel, dpo.hardware.gpu, false)) {
    if (!o.reference) continue;
    reference_casts |= o.name == "reference.attention.input_cast" || o.name == "reference.attention.rope.cast";
    reference_norm |= o.name == "reference.attention.norm";
  }
  CHECK(reference_norm);
  CHECK_FALSE(reference_casts);
  // LoRA keeps the base model in bf16: a 16-bit stream, nothing to cast.
  CHECK(find_op(one_gpu(llama_1b(), "transformers", "lora"), "attention.input_cast", "forward", false).kernels == 0);
}

TEST_CASE("LoRA under autocast: PEFT's fp32 round trip of the adapter input, scale and add as two kernels") {
  // Per adapted q_proj (in 2048, out 2048), 2048 tokens: forward the scaled add (2 + 3) x 2 bytes per output element
  // plus the round trip 2 x (2 + 4) per input element; 2 + 2 kernels. Backward 2 x 2 per output and 3 x 2 + 12 per
  // input element; 1 + 2 kernels.
  const Scenario lora = one_gpu(llama_1b(), "transformers", "lora");
  const double t = 2048, in = 2048, out = 2048;
  const LayerOp f = find_op(lora, "attention.q_lora.add", "forward", false), b = find_op(lora, "attention.q_lora.add", "backward", false);
  CHECK(f.bytes == trainsim::test::approx(10 * t * out + 12 * t * in));
  CHECK(b.bytes == trainsim::test::approx(4 * t * out + 18 * t * in));
  CHECK(f.kernels == 4);
  CHECK(b.kernels == 3);
}

TEST_CASE("transformers 5.x experts over fp32 parameters run as fp32 CUDA-core GEMMs; bf16 ones on the tensor cores") {
  // grouped_mm casts the tokens to the weights' dtype: fp32 parameters under autocast give fp32 GEMMs, at most the
  // H100's 66.9 TFLOP/s fp32 peak, against 989.4 bf16: the same GEMM takes far longer. LoRA leaves the experts in
  // bf16 (frozen base weights): tensor cores.
  const Scenario full = one_gpu(mixtral_2l(), "transformers"), lora = one_gpu(mixtral_2l(), "transformers", "lora");
  const LayerOp fp32 = find_op(full, "moe.experts.gate_up.fprop", "forward", true);
  const LayerOp bf16 = find_op(lora, "moe.experts.gate_up.fprop", "forward", true);
  REQUIRE(fp32.flops > 0);
  CHECK(fp32.precision == Precision::Fp32);
  CHECK(bf16.precision == Precision::Bf16);
  CHECK(fp32.flops == trainsim::test::approx(bf16.flops));
  CHECK(fp32.flops / fp32.predicted_s <= full.hardware.gpu.flops_fp32);
  CHECK(fp32.predicted_s > 5 * bf16.predicted_s);
  // No weight casts for such experts (they run on the fp32 weights), while the attention's weights are cast.
  CHECK(find_op(full, "moe.experts.gate_up.autocast_cast", "forward", true).kernels == 0);
  CHECK(find_op(full, "attention.q.autocast_cast", "forward", true).kernels == 1);
  // Under the 4.x loop (nn.Linear experts under autocast) they are 16-bit again.
  const Scenario v4 = one_gpu(mixtral_2l(), Json{{"preset", "transformers"}, {"version", "4.57"}});
  CHECK(find_op(v4, "moe.experts.gate.fprop", "forward", true).precision == Precision::Bf16);
}

TEST_CASE("fp32 experts: FFMA GEMMs at 0.70 of the fp32 peak at the top clock, whatever the tensor cores' power limit") {
  // Two Mixtral layers at 2,048 tokens, top-2 of 8 experts: 512 tokens per expert. The gate/up forward, 8 GEMMs of
  // 512 x 28,672 over k = 4,096 in 64x64 tiles: 8 x 448 = 3,584 tiles over 132 SMs, 28 waves, 3,584 / (28 x 132) =
  // 0.9697 of them busy; 2 x 512 x 28,672 x 4,096 x 8 = 9.620e11 FLOP at 66.9 TFLOP/s x 0.70 x 0.9697 = 45.41 TFLOP/s:
  // 21.18 ms. (kernel_times census: the step's FFMA GEMMs ran 46.6 TFLOP/s; with the tensor cores' limit, as before,
  // they were priced about 38.)
  const Scenario full = one_gpu(mixtral_2l(), "transformers");
  const LayerOp op = find_op(full, "moe.experts.gate_up.fprop", "forward", true);
  CHECK(op.flops == trainsim::test::approx(2.0 * 512 * 28672 * 4096 * 8));
  CHECK(op.predicted_s == trainsim::test::approx(op.flops / (66.9e12 * 0.70 * 3584 / (28 * 132.0))));
}

TEST_CASE("ATen's grouped_mm loop over fp32 experts: host-paced after its sync, 26 us per GEMM") {
  using compute_detail::Acc;
  using compute_detail::aten_loop;
  // 128 experts of 10 us each: the host launches one every 26 us, so the loop takes 128 x 26 us and exposes
  // 128 x 16 us = 2.048 ms; 8 experts of 1 ms each run at the GPU's pace and expose only the first launch, 26 us.
  Acc host_paced, gpu_paced;
  aten_loop(host_paced, 128 * 10e-6, 128, 128);
  aten_loop(gpu_paced, 8 * 1e-3, 8, 8);
  CHECK(host_paced.loop_exposed_s == trainsim::test::approx(2.048e-3));
  CHECK(gpu_paced.loop_exposed_s == trainsim::test::approx(26e-6));
  // A pass of 10 Python launches at 30 us (0.3 ms of host) over 1 ms of other GPU work plus the host-paced loop:
  // the Python launches hide behind the 1 ms (the loop's own GPU time hides nothing after its sync); exposed 2.048 ms.
  Acc pass;
  pass.gemm_s = 1e-3, pass.kernels = 10;
  pass.gemm_s += 128 * 10e-6, pass.kernels += 128;
  aten_loop(pass, 128 * 10e-6, 128, 128);
  CHECK(pass.host(30e-6) == trainsim::test::approx(0.3e-3));
  CHECK(pass.host_exposed(30e-6) == trainsim::test::approx(2.048e-3));
  // 60 Python launches (1.8 ms) over the same 1 ms: 0.8 ms more.
  pass.kernels += 50;
  CHECK(pass.host_exposed(30e-6) == trainsim::test::approx(2.848e-3));

  // In a layer: four Qwen3-30B-A3B-shaped layers at 2,048 tokens, top-8 of 128 experts, 128 tokens per expert. Each of
  // the six expert GEMMs (gate/up and down; forward, input and weight gradients) is one grouped_mm call; the host
  // time of the layer covers at least each call's loop exposure, priced from its GEMMs' times as above.
  const Scenario s = one_gpu(qwen3_4l(), "transformers");
  double loops = 0;
  for (const char* name : {"moe.experts.gate_up", "moe.experts.down"})
    for (const auto& [direction, role] : {std::pair{"forward", "fprop"}, {"backward", "dgrad"}, {"backward", "wgrad"}}) {
      const LayerOp op = find_op(s, std::string(name) + "." + role, direction, true);
      REQUIRE(op.gemm.count == 128);
      CHECK((std::string(role) == "wgrad" ? op.gemm.k : op.gemm.m) == 2048.0 * 8 / 128);  // tokens per expert
      loops += std::max(26e-6, 128 * std::max(0.0, 26e-6 - op.predicted_s / 128));
    }
  const LayerCompute lc = layer_compute(s.model, s.training, s.parallel, s.hardware.gpu, true);
  CHECK(loops > 26e-6 * 6);  // the down projection's GEMMs at 128 tokens take less than 26 us each
  CHECK(lc.host_s >= loops * (1 - 1e-9));
  // bf16 experts (LoRA over a bf16 model) run grouped kernels: no such loop, no host wait.
  const Scenario lora = one_gpu(qwen3_4l(), "transformers", "lora");
  CHECK(layer_compute(lora.model, lora.training, lora.parallel, lora.hardware.gpu, true).host_s < loops);
}

TEST_CASE("transformers 5.x MoE dispatch: the eager sort, gathers, masks and combine, kernel for kernel as profiled") {
  // kernel_census (calibrate/measurements/corpus/census/kernel_census-*-2026-11-27.json), per MoE layer outside the
  // expert GEMM loops: two Mixtral-8x7B layers at 2,048 tokens ran 76 kernels forward and 144 backward (4 of them
  // zero fills); a Qwen3-30B-A3B layer 101 forward, its torch.sort over 16,384 routed rows in cub's radix sort (8
  // one-sweep passes, a histogram, an exclusive sum) where Mixtral's 4,096 sort in place in one kernel.
  auto outside_loop = [](const Scenario& sc, const char* pass) {
    double kernels = 0;
    for (const auto& o : layer_ops(sc.model, sc.training, sc.parallel, sc.hardware.gpu, true))
      if (o.pass == std::string(pass) && !(o.kind == LayerOp::Gemm && o.name.rfind("moe.experts.", 0) == 0)) kernels += o.kernels;
    return kernels;
  };
  const Scenario mixtral = one_gpu(mixtral_2l(), "transformers"), qwen3 = one_gpu(qwen3_4l(), "transformers");
  CHECK(outside_loop(mixtral, "forward") == 76);
  CHECK(outside_loop(qwen3, "forward") == 101);
  CHECK(outside_loop(mixtral, "backward") == doctest::Approx(144).epsilon(0.05));  // the model: 140 (autograd's view copies short, as in a Llama layer)
  CHECK(find_op(mixtral, "moe.permute", "forward", true).kernels == 31);
  CHECK(find_op(qwen3, "moe.permute", "forward", true).kernels == 31 + 9);
  CHECK(find_op(qwen3, "moe.permute", "backward", true).kernels == 52);
  // Megatron-Core's fused permute and unpermute: one kernel each way.
  const Scenario megatron = one_gpu(qwen3_4l(), "megatron-core");
  CHECK(find_op(megatron, "moe.permute", "forward", true).kernels == 2);
  CHECK(find_op(megatron, "moe.permute", "backward", true).kernels == 2);
  // The traits are overridable, validated and written back.
  const FrameworkTraits fewer = parse_framework(Json{{"preset", "transformers"}, {"moe_dispatch_kernels_forward", 10}}, "/training/framework");
  CHECK(fewer.moe_dispatch_kernels_forward == 10);
  CHECK(framework_to_json(fewer) == Json{{"preset", "transformers"}, {"moe_dispatch_kernels_forward", 10}});
  CHECK_THROWS_WITH_AS(parse_framework(Json{{"preset", "transformers"}, {"moe_dispatch_kernels_backward", -1}}, "/training/framework"),
                       doctest::Contains("/training/framework/moe_dispatch_kernels_backward"), InputError);
}

TEST_CASE("experts_implementation: a preset option that sets traits; the 5.x eager loop writes whole-parameter gradients") {
  const FrameworkTraits eager = parse_framework(Json{{"preset", "transformers"}, {"experts_implementation", "eager"}}, "/training/framework");
  CHECK_FALSE(eager.moe_grouped_gemm);
  CHECK(eager.moe_loop_host_sync);
  CHECK(eager.moe_expert_weights_indexed);
  CHECK_FALSE(eager.moe_experts_in_weight_dtype);
  CHECK(framework_to_json(eager) == Json{{"preset", "transformers"}, {"experts_implementation", "eager"}});
  const FrameworkTraits grouped = parse_framework(Json{{"preset", "transformers"}, {"experts_implementation", "grouped_mm"}}, "/training/framework");
  CHECK(grouped.moe_grouped_gemm);
  // The scenario's explicit traits win over the option's.
  CHECK_FALSE(parse_framework(Json{{"preset", "transformers"}, {"experts_implementation", "eager"}, {"moe_loop_host_sync", false}}, "/f")
                  .moe_loop_host_sync);
  // Bad values name the path and the choices; a preset without the option refuses the key.
  try {
    parse_framework(Json{{"preset", "transformers"}, {"experts_implementation", "fast"}}, "/training/framework");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("/training/framework/experts_implementation") != std::string::npos);
    CHECK(std::string(e.what()).find("\"eager\"") != std::string::npos);
  }
  CHECK_THROWS_AS(parse_framework(Json{{"preset", "megatron-core"}, {"experts_implementation", "eager"}}, "/training/framework"), InputError);

  // Each of the 8 experts' backward zero-fills a gradient of the whole 3-D parameter and accumulates it (read two,
  // write one), fp32 under autocast over fp32 parameters: 4 x 4 bytes per element, 8 experts x 3 x 4096 x 14336
  // elements, per expert.
  const Scenario s = one_gpu(mixtral_2l(), Json{{"preset", "transformers"}, {"experts_implementation", "eager"}});
  const double weights = 8 * 3 * 4096.0 * 14336;
  const LayerOp scatter = find_op(s, "moe.experts.weight_grad_scatter", "backward", true);
  CHECK(scatter.bytes == trainsim::test::approx(8 * 16 * weights));
  CHECK(scatter.kernels == 16);
  CHECK(find_op(one_gpu(mixtral_2l(), "transformers"), "moe.experts.weight_grad_scatter", "backward", true).kernels == 0);
}

TEST_CASE("LoRA over 5.x's 3-D expert parameters: peft merges W + s·B·A, keeps it, and computes its gradient") {
  // peft's ParamWrapper (moe_expert_adapter_merge_passes 12.5): per MoE layer of Mixtral-8x7B, 8 experts x 3 x 4096 x
  // 14336 = 1,409,286,144 bf16 weights. The forward reads W and writes the merged copy (2 passes of 2 bytes), the
  // backward makes the other 10.5 passes; the experts' weight-gradient GEMMs run (gate_up: 2 x 512 tokens per expert
  // (2,048 x top-2 / 8) x 4096 x 28672 x 8 experts = 962,072,674,304 FLOPs) and the per-token adapters do not.
  const Scenario lora = one_gpu(mixtral_2l(), "transformers", "lora");
  const double weights = 8 * 3 * 4096.0 * 14336;
  CHECK(find_op(lora, "moe.experts.adapter_merge", "forward", true).bytes == trainsim::test::approx(4 * weights));
  CHECK(find_op(lora, "moe.experts.adapter_merge", "backward", true).bytes == trainsim::test::approx(21 * weights));
  CHECK(find_op(lora, "moe.experts.gate_up.wgrad", "backward", true).flops == trainsim::test::approx(962072674304.0));
  CHECK(find_op(lora, "moe.experts.gate_lora.a.fprop", "forward", true).kernels == 0);
  // Adapters on the tokens where the framework says so (0 passes: transformers 4.x's nn.Linear experts): no merge, no
  // expert weight gradients, an A·B pair per expert Linear.
  const Scenario on_tokens = one_gpu(mixtral_2l(), Json{{"preset", "transformers"}, {"version", "4.57"}}, "lora");
  CHECK(find_op(on_tokens, "moe.experts.adapter_merge", "forward", true).kernels == 0);
  CHECK(find_op(on_tokens, "moe.experts.gate.wgrad", "backward", true).kernels == 0);
  CHECK(find_op(on_tokens, "moe.experts.gate_lora.a.fprop", "forward", true).kernels > 0);
  // Full fine-tuning has no adapters to merge; an override of the trait names its path when out of range.
  CHECK(find_op(one_gpu(mixtral_2l(), "transformers"), "moe.experts.adapter_merge", "forward", true).kernels == 0);
  CHECK_THROWS_WITH_AS(parse_framework(Json{{"preset", "transformers"}, {"moe_expert_adapter_merge_passes", -1}}, "/training/framework"),
                       doctest::Contains("/training/framework/moe_expert_adapter_merge_passes"), InputError);
  // Memory: each MoE layer keeps its merged weights, 2 bytes each, until its backward: 2 x 1,409,286,144 bytes more
  // activations per layer than with adapters on the tokens; under full recompute only the layer input is kept.
  const double merged = layer_activations(lora.model, lora.training, lora.parallel, true).stored -
                        layer_activations(on_tokens.model, on_tokens.training, on_tokens.parallel, true).stored;
  CHECK(merged == trainsim::test::approx(2 * weights));
  // The adapters peft makes there, counted by peft on the H100 (calibrate/measurements/corpus/census/
  // moe_adapter_mechanics-*.json): per layer q, k, v, o (16 x (4096 + 4096), (4096 + 1024) twice, (4096 + 4096)), per
  // expert gate_up at rank 32 (32 x (4096 + 28672)) and down at 16 (16 x (14336 + 4096)), the router 16 x (4096 + 8):
  // 22,479,104 for two layers; per expert Linear on the tokens (4.x), 16 x (4096 + 14336) x 3 per expert: 15,007,744.
  const auto trainable = [](const Scenario& sc) { return MemoryModel(sc.model, sc.training, sc.hardware).estimate(sc.parallel).trainable_parameters; };
  CHECK(trainable(lora) == 22479104.0);
  CHECK(trainable(on_tokens) == 15007744.0);
  const Scenario full_recompute = one_gpu(mixtral_2l(), "transformers", "lora", "full");
  CHECK(layer_activations(full_recompute.model, full_recompute.training, full_recompute.parallel, true).stored ==
        trainsim::test::approx(2.0 * 2048 * 4096));
}

TEST_CASE("position_embedding_type none: a decoder without position signal does no rotary work") {
  // The hand-written decoder of ../shared/reference/h100_single_gpu_runs.json (torch-dense) applies no RoPE: stated
  // as "none", the layer loses its rope ops (eager: q and k rotated in fp32) and nothing else.
  Json plain = llama_1b();
  const Scenario rope = one_gpu(plain, "pytorch");
  plain["position_embedding_type"] = "none";
  const Scenario none = one_gpu(plain, "pytorch");
  const LayerOp rotated = find_op(rope, "attention.rope", "forward", false);
  CHECK(rotated.kernels > 0);
  CHECK(find_op(none, "attention.rope", "forward", false).kernels == 0);
  // The same GEMMs (their time differs only by the clock: without the rotary kernels the layer's average power is
  // another, layer_power_traits).
  CHECK(find_op(none, "attention.qkv.fprop", "forward", false).flops ==
        trainsim::test::approx(find_op(rope, "attention.qkv.fprop", "forward", false).flops));
  CHECK(to_json(none)["model"]["position_embedding_type"] == "none");
  CHECK(count_parameters(none.model).total == trainsim::test::approx(count_parameters(rope.model).total));
}

TEST_CASE("activation checkpointing's saved-tensor hooks: host time per forward and recompute kernel") {
  // A tiny model whose step is host-bound: with the fitted checkpoint_hook_us at h, each layer's forward and
  // recompute kernels cost h more each, so the host time grows by layers x (forward + recompute kernels) x h, where
  // the framework checkpoints through torch.utils.checkpoint (transformers), and not under Megatron's
  // CheckpointFunction.
  const Json tiny = {{"model_type", "llama"}, {"num_hidden_layers", 2}, {"hidden_size", 256}, {"num_attention_heads", 4}, {"num_key_value_heads", 4},
                     {"intermediate_size", 512}, {"vocab_size", 1000}, {"hidden_act", "silu"}};
  FittedParameters none = shipped_fitted_parameters().values, hooked = none;
  none.checkpoint_hook_us = 0;
  hooked.checkpoint_hook_us = 10;
  for (const char* framework : {"transformers", "megatron-core"}) {
    CAPTURE(framework);
    const Scenario s = one_gpu(tiny, framework, "sft", "full", 128);
    const double a = StepModel(s.model, s.training, s.hardware, nullptr, &none).estimate(s.parallel).breakdown.host_s;
    const double b = StepModel(s.model, s.training, s.hardware, nullptr, &hooked).estimate(s.parallel).breakdown.host_s;
    const LayerCompute lc = layer_compute(s.model, s.training, s.parallel, s.hardware.gpu, false);
    double recompute_kernels = 0;  // the forward's but the down projection's GEMM and the residual add (its early stop)
    for (const LayerOp& o : layer_ops(s.model, s.training, s.parallel, s.hardware.gpu, false))
      if (std::string(o.pass) == "recompute") recompute_kernels += o.kernels;
    if (std::string(framework) == "transformers") CHECK(b - a == trainsim::test::approx(2 * (lc.kernels_forward + recompute_kernels) * 10e-6));
    else CHECK(b == a);
  }
}
