// Full recompute through torch.utils.checkpoint without reentrance stops early (framework checkpoint_early_stop,
// layer_walk.cpp, OpBuilder::unrecomputed):
// torch/utils/checkpoint.py's _recomputation_hook raises _StopRecomputationError once the recompute has saved as many
// tensors as the forward did (set_checkpoint_early_stop, on by default since PyTorch 2.1). An aten linear's autograd
// node saves its inputs before its GEMM runs, so when a decoder layer's last saving op is the MLP's down projection
// (Llama: down_proj(act(gate(x)) * up(x)), then the residual add, which saves nothing), neither that GEMM nor the add
// is rerun. Expected values are derived by hand in the comments.
#include <doctest/doctest.h>

#include "tests/approx.hpp"
#include "tests/models/compute/one_gpu.hpp"

#include <set>
#include <string>

#include "models/compute/compute.hpp"
#include "models/scenario/scenario.hpp"

using namespace trainsim;
using Json = nlohmann::json;

namespace {
// One H100, one micro-batch of 2,048 tokens, full recompute.
Scenario full_recompute(Json model, Json framework, const std::string& precision = "bf16", Json lora = nullptr) {
  Json training = {{"mode", lora.is_null() ? "sft" : "lora"}, {"seq_len", 2048}, {"recompute", "full"}, {"precision", precision}, {"framework", framework}};
  if (!lora.is_null()) training["lora"] = lora;
  return trainsim::test::one_h100(model, training);
}
using trainsim::test::llama_1b;
// The forward ops full recompute leaves out: forward names not listed again in the recompute pass.
std::set<std::string> not_recomputed(const Scenario& s, bool moe_layer = false) {
  std::set<std::string> forward, recompute;
  for (const LayerOp& o : layer_ops(s.model, s.training, s.parallel, s.hardware.gpu, moe_layer)) {
    const std::string pass = o.pass;
    if (pass == "forward") forward.insert(o.name);
    if (pass == "recompute") recompute.insert(o.name);
  }
  std::set<std::string> out;
  for (const std::string& n : forward)
    if (!recompute.count(n)) out.insert(n);
  return out;
}
const std::set<std::string> kDownAndResidual = {"mlp.down.fprop", "mlp.residual"};
const std::set<std::string> kResidual = {"mlp.residual"};
}  // namespace

TEST_CASE("torch.utils.checkpoint's early stop: the recompute ends before the down projection's GEMM") {
  SUBCASE("transformers: the down GEMM and the residual add are not rerun, the FLOPs short by 2·T·f·h") {
    const Scenario s = full_recompute(llama_1b(), "transformers");
    CHECK(not_recomputed(s) == kDownAndResidual);
    const LayerCompute lc = layer_compute(s.model, s.training, s.parallel, s.hardware.gpu, false);
    const double down = 2.0 * 2048 * 8192 * 2048;  // tokens x f x h, 2 FLOPs per multiply-add
    CHECK(lc.recompute_flops == trainsim::test::approx(lc.forward_flops - down));
    CHECK(lc.recompute_s < lc.forward_s);
  }
  SUBCASE("Megatron's CheckpointFunction reruns the whole forward") {
    const Scenario s = full_recompute(llama_1b(), "megatron-core");
    CHECK(not_recomputed(s).empty());
    const LayerCompute lc = layer_compute(s.model, s.training, s.parallel, s.hardware.gpu, false);
    CHECK(lc.recompute_flops == trainsim::test::approx(lc.forward_flops));
    CHECK(lc.recompute_s == trainsim::test::approx(lc.forward_s));
  }
  SUBCASE("a layer compiled before it is checkpointed saves after its whole forward (checkpoint_early_stop false)") {
    const Scenario s = full_recompute(llama_1b(), {{"preset", "pytorch"}, {"checkpoint_early_stop", false}});
    CHECK(not_recomputed(s).empty());
    const LayerCompute lc = layer_compute(s.model, s.training, s.parallel, s.hardware.gpu, false);
    CHECK(lc.recompute_flops == trainsim::test::approx(lc.forward_flops));
  }
  SUBCASE("reentrant checkpointing (no saved-tensor hooks) never stops early") {
    CHECK(not_recomputed(full_recompute(llama_1b(), {{"preset", "transformers"}, {"checkpoint_saved_tensor_hooks", false}})).empty());
  }
  SUBCASE("a LoRA adapter on down_proj saves after the base GEMM: that GEMM is rerun") {
    const Json targets = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj"};
    const Scenario without = full_recompute(llama_1b(), "transformers", "bf16", {{"rank", 16}, {"alpha", 32}, {"target_modules", targets}});
    CHECK(not_recomputed(without) == kDownAndResidual);
    Json with_down = targets;
    with_down.push_back("down_proj");
    const Scenario with = full_recompute(llama_1b(), "transformers", "bf16", {{"rank", 16}, {"alpha", 32}, {"target_modules", with_down}});
    const std::set<std::string> skipped = not_recomputed(with);
    CHECK(!skipped.count("mlp.down.fprop"));
    CHECK(skipped.count("mlp.residual"));
  }
  SUBCASE("dropout after the down projection saves its mask: the GEMM and the dropout are rerun") {
    Json gpt = llama_1b();
    gpt["hidden_act"] = "gelu";  // a two-matrix MLP: GPT-style, dropout 0.1 by default
    CHECK(not_recomputed(full_recompute(gpt, "transformers")) == kResidual);
    gpt["hidden_dropout"] = 0.0;
    gpt["attention_dropout"] = 0.0;
    CHECK(not_recomputed(full_recompute(gpt, "transformers")) == kDownAndResidual);
  }
  SUBCASE("an fp8 linear is an autograd Function that saves after its GEMM (torchao's Float8Linear)") {
    CHECK(not_recomputed(full_recompute(llama_1b(), "fsdp2", "fp8")) == kResidual);
    CHECK(not_recomputed(full_recompute(llama_1b(), "fsdp2", "bf16")) == kDownAndResidual);
  }
  SUBCASE("an MoE layer's last saving op is the combine of the experts' outputs: only the residual add is skipped") {
    const Json qwen3 = {{"model_type", "qwen3_moe"}, {"num_hidden_layers", 4}, {"hidden_size", 2048},       {"num_attention_heads", 32},
                        {"num_key_value_heads", 4},  {"head_dim", 128},         {"intermediate_size", 6144}, {"moe_intermediate_size", 768},
                        {"num_experts", 128},        {"num_experts_per_tok", 8}, {"vocab_size", 151936},      {"hidden_act", "silu"}};
    CHECK(not_recomputed(full_recompute(qwen3, "transformers"), true) == kResidual);
  }
}
