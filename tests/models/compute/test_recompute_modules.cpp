// Megatron's recompute modules (training.recompute_modules under recompute "selective"): the names, what each
// drops from a layer's stored activations (hand-derived from the terms of memory.cpp, Korthikanti et al. 2022
// §4.1 generalised), that the recomputed work is the forward work of those modules and the recompute pass
// lists exactly it, and that recomputing the MoE block dispatches and combines again.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "models/compute/compute.hpp"
#include "models/compute/flops.hpp"
#include "models/compute/recompute_policy.hpp"
#include "models/core/errors.hpp"
#include "models/layout/search.hpp"
#include "models/memory/memory.hpp"
#include "models/scenario/scenario.hpp"
#include "models/step/step.hpp"
#include "tests/approx.hpp"

using namespace trainsim;
using trainsim::test::approx;

namespace {
// Qwen3-30B-A3B (48 MoE layers: hidden 2048, 128 experts, top 8, expert size 768) on 8 H100, Megatron-core,
// bf16, flash attention, no TP: one 4096-token sequence per micro-batch, ep 8.
Scenario qwen(const nlohmann::json& training_extra, int ep = 8) {
  nlohmann::json training = {{"seq_len", 4096}, {"global_batch_size", 8}, {"framework", "megatron-core"}};
  training.update(training_extra);
  return parse_scenario({{"model", "qwen3-30b-a3b"},
                         {"training", training},
                         {"parallel", {{"tp", 1}, {"pp", 1}, {"ep", ep}, {"micro_batch_size", 1}}},
                         {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 8}}}});
}
// Llama-3-8B (dense: hidden 4096, FFN 14336, gated) on the same GPUs.
Scenario llama(const nlohmann::json& training_extra) {
  nlohmann::json training = {{"seq_len", 4096}, {"global_batch_size", 8}, {"framework", "megatron-core"}};
  training.update(training_extra);
  return parse_scenario({{"model", "llama3-8b"},
                         {"training", training},
                         {"parallel", {{"tp", 1}, {"pp", 1}, {"micro_batch_size", 1}}},
                         {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 8}}}});
}
double stored(const Scenario& s, bool moe) { return layer_activations(s.model, s.training, s.parallel, moe).stored; }
}  // namespace

TEST_CASE("recompute modules by Megatron's names") {
  CHECK(llama({{"recompute", "selective"}}).training.recompute_modules == kRecomputeCoreAttn);  // Megatron's default
  CHECK(llama({{"recompute", "selective"}, {"recompute_modules", {"layernorm", "mlp"}}}).training.recompute_modules ==
        (kRecomputeLayernorm | kRecomputeMlp));
  CHECK_THROWS_WITH_AS(llama({{"recompute", "selective"}, {"recompute_modules", {"mlp", "attention"}}}),
                       doctest::Contains("/training/recompute_modules/1"), InputError);
  CHECK_THROWS_WITH_AS(llama({{"recompute", "full"}, {"recompute_modules", {"mlp"}}}), doctest::Contains("/training/recompute_modules"), InputError);
  CHECK_THROWS_WITH_AS(llama({{"recompute", "selective"}, {"recompute_modules", nlohmann::json::array()}}),
                       doctest::Contains("/training/recompute_modules"), InputError);
}

TEST_CASE("what each module drops from a layer's stored activations") {
  const double sb = 4096, h_llama = 4096, ffn = 14336, h_qwen = 2048;
  const Scenario none = llama({{"recompute", "selective"}, {"recompute_modules", {"core_attn"}}});
  // layernorm: the two norm outputs, QKV and fc1 inputs, 2 bytes each: 2 x 2 x s x h.
  CHECK(stored(none, false) - stored(llama({{"recompute", "selective"}, {"recompute_modules", {"core_attn", "layernorm"}}}), false) ==
        approx(2 * 2 * sb * h_llama));
  // mlp: the gate and up outputs (SwiGLU inputs) and fc2's input, 2 bytes each: 3 x 2 x s x ffn.
  CHECK(stored(none, false) - stored(llama({{"recompute", "selective"}, {"recompute_modules", {"core_attn", "mlp"}}}), false) ==
        approx(3 * 2 * sb * ffn));
  // moe_act: fc2's input for the s x 8 routed tokens at expert size 768, 2 bytes (Megatron fuses the activation).
  const Scenario core = qwen({{"recompute", "selective"}});
  CHECK(stored(core, true) - stored(qwen({{"recompute", "selective"}, {"recompute_modules", {"core_attn", "moe_act"}}}), true) ==
        approx(2 * sb * 8 * 768));
  // moe: the block's routing and experts: fp32 router probabilities (4 x s x 128), permuted expert inputs
  // (2 x s x 8 x h; Megatron-Core keeps no expert outputs: its probabilities scale the activation), the experts'
  // SwiGLU inputs and fc2 input (3 x 2 x s x 8 x 768).
  CHECK(stored(core, true) - stored(qwen({{"recompute", "selective"}, {"recompute_modules", {"core_attn", "moe"}}}), true) ==
        approx(4 * sb * 128 + 2 * sb * 8 * h_qwen + 3 * 2 * sb * 8 * 768));
  // moe contains moe_act: both together drop what moe alone does.
  CHECK(stored(qwen({{"recompute", "selective"}, {"recompute_modules", {"moe", "moe_act"}}}), true) ==
        approx(stored(qwen({{"recompute", "selective"}, {"recompute_modules", {"moe"}}}), true)));
}

TEST_CASE("expert outputs are kept only where the combine weights them") {
  // Qwen3-30B-A3B at 4096 tokens, top 8, hidden 2048: a framework whose combine weights each expert's output keeps
  // it for the probabilities' gradient, 2 bytes x 8 routed copies x h per token; Megatron-Core scales the activation.
  const Scenario mcore = qwen(nlohmann::json::object());
  const Scenario weighted = qwen({{"framework", {{"preset", "megatron-core"}, {"moe_probs_in_activation", false}}}});
  CHECK(stored(weighted, true) - stored(mcore, true) == approx(2.0 * 4096 * 8 * 2048));
  CHECK(stored(weighted, false) == approx(stored(mcore, false)));  // a dense layer has no experts
}

TEST_CASE("DeepSeek-V3 at its published layout: a MoE layer's stored activations by hand, and the ranks fit in 80 GB") {
  // scenarios/examples/deepseek-v3-pretrain-2048xh800.json: fp8 (16-bit activations, 8-bit GEMM inputs saved for
  // backward), tp 1, 4096 tokens a micro-batch, recompute of the norms, MLA's up-projections and the experts'
  // activation (the report, §3.3.2-3.3.3). Per token, bytes (hidden 7168, 128 heads, v head 128, q latent 1536,
  // kv latent 512 + rope 64, 256 experts top 8 of size 2048, one shared expert of 2048):
  //   the two norms' inputs 2 x 2 x 7168 = 28,672; fp32 router probabilities 4 x 256 = 1,024;
  //   permuted expert inputs (fp8) 8 x 7168 = 57,344; the experts' SwiGLU inputs in 16 bits 2 x 2 x 8 x 2048 = 65,536;
  //   the shared expert's SwiGLU inputs and fc2 input 2 x 2 x 2048 + 2048 = 10,240;
  //   the out-projection input (fp8) 128 x 128 = 16,384; the latents (16-bit and fp8 q latent 3 x 1536, kv latent
  //   and rotary key 2 x 576, fp8 kv-norm output 512) 6,272; flash attention's fp32 log-sum-exp 4 x 128 = 512.
  //   Total 185,984 (no expert outputs: Megatron-Core's probabilities scale the activation).
  // DeepSeek caches the SwiGLU inputs in fp8 with an fp32 scale per 1x128 tile (§3.3.2, moe_act_input_fp8), 1 + 4/128
  // bytes each: 2 x 8 x 2048 x (2 - 1.03125) = 31,744 fewer, 154,240.
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/deepseek-v3-pretrain-2048xh800.json");
  REQUIRE(in);
  const nlohmann::json file = nlohmann::json::parse(in);
  const Scenario v3 = parse_scenario(file);
  REQUIRE(v3.training.framework.moe_act_input_fp8);
  CHECK(stored(v3, true) == approx(4096.0 * 154240));
  nlohmann::json sixteen_bit = file;
  sixteen_bit["training"]["framework"]["moe_act_input_fp8"] = false;
  CHECK(stored(parse_scenario(sixteen_bit), true) == approx(4096.0 * 185984));
  // DeepSeek trained it on H800s (80 GB) under DualPipe: every rank, with its two stages, fits.
  REQUIRE(v3.parallel.schedule == Schedule::DualPipe);
  const MemoryModel mm(v3.model, v3.training, v3.hardware);
  CHECK(mm.worst_stage(v3.parallel).total <= v3.hardware.gpu.memory_bytes);
}

TEST_CASE("the recomputed work is the modules' forward work, and the recompute pass lists it") {
  auto recompute = [](const Scenario& s, bool moe) { return layer_compute(s.model, s.training, s.parallel, s.hardware.gpu, moe).recompute_s; };
  auto listed = [](const Scenario& s, bool moe) {
    double sum = 0;
    for (const LayerOp& op : layer_ops(s.model, s.training, s.parallel, s.hardware.gpu, moe))
      if (std::string(op.pass) == "recompute") sum += op.predicted_s;
    return sum;
  };
  const Scenario core = llama({{"recompute", "selective"}});
  const Scenario ln = llama({{"recompute", "selective"}, {"recompute_modules", {"layernorm"}}});
  const Scenario mlp = llama({{"recompute", "selective"}, {"recompute_modules", {"mlp"}}});
  const Scenario all = llama({{"recompute", "selective"}, {"recompute_modules", {"core_attn", "layernorm", "mlp"}}});
  CHECK(recompute(ln, false) > 0);
  CHECK(recompute(all, false) == approx(recompute(core, false) + recompute(ln, false) + recompute(mlp, false)));
  // The MLP's forward: gate_up (s x 4096 x 28672) and down (s x 14336 x 4096) GEMMs, 3 x 2 x s x h x ffn FLOPs.
  CHECK(layer_compute(mlp.model, mlp.training, mlp.parallel, mlp.hardware.gpu, false).recompute_flops == approx(3 * 2 * 4096.0 * 4096 * 14336));
  for (const Scenario* s : {&core, &ln, &mlp, &all}) CHECK(listed(*s, false) == approx(recompute(*s, false)));
  const Scenario moe = qwen({{"recompute", "selective"}, {"recompute_modules", {"moe"}}});
  const Scenario act = qwen({{"recompute", "selective"}, {"recompute_modules", {"moe_act"}}});
  CHECK(recompute(moe, true) > recompute(act, true));
  CHECK(listed(moe, true) == approx(recompute(moe, true)));
  CHECK(listed(act, true) == approx(recompute(act, true)));
  // HFU counts the MLP's GEMM FLOPs once more per layer: 32 layers x 3 x 2 x s x h x ffn per sequence.
  CHECK(hardware_flops_per_iteration(mlp.model, mlp.training, 1) - model_flops_per_iteration(mlp.model, mlp.training, 1) ==
        approx(32 * 3 * 2 * 4096.0 * 4096 * 14336));
}

TEST_CASE("recomputing the MoE block dispatches and combines again") {
  auto recompute_a2a = [](const Scenario& s) {
    const StepStream st = StepModel(s.model, s.training, s.hardware).stream(s.parallel);
    double calls = 0;
    for (const CommOp& op : st.moe.comm)
      if (op.pass == Pass::Recompute && op.dim == ParallelDim::Ep) calls += op.calls;
    return calls;
  };
  CHECK(recompute_a2a(qwen({{"recompute", "selective"}, {"recompute_modules", {"moe"}}})) == 2);  // dispatch + combine
  CHECK(recompute_a2a(qwen({{"recompute", "selective"}, {"recompute_modules", {"moe_act"}}})) == 0);
}

TEST_CASE("plan tries Megatron's MoE recompute modules for MoE models, and only where the framework has them") {
  // searched_recompute_choices: none, selective (core_attn), full; MoE models add {layernorm, moe_act} and
  // {layernorm, moe} (Megatron-MoE-ModelZoo's Qwen3 best practice), MLA models with mla_up_proj.
  CHECK(searched_recompute_choices(llama(nlohmann::json::object()).model).size() == 3);
  const auto moe = searched_recompute_choices(qwen(nlohmann::json::object()).model);
  REQUIRE(moe.size() == 5);
  CHECK(moe[3].modules == (kRecomputeLayernorm | kRecomputeMoeAct));
  CHECK(moe[4].modules == (kRecomputeLayernorm | kRecomputeMoe));
  const Scenario v3 = parse_scenario({{"model", "deepseek-v3"},
                                      {"training", {{"seq_len", 4096}, {"global_batch_size", 64}}},
                                      {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 64}}}}, false);
  CHECK(searched_recompute_choices(v3.model)[3].modules == (kRecomputeLayernorm | kRecomputeMoeAct | kRecomputeMlaUpProj));

  TrainingSpec t = qwen(nlohmann::json::object()).training;
  t.recompute = Recompute::Selective;
  CHECK(recompute_text(t) == "selective");
  t.recompute_modules = kRecomputeLayernorm | kRecomputeMoeAct;
  CHECK(recompute_text(t) == "selective (moe_act, layernorm)");  // Megatron's order of the names

  // Searching recompute for Qwen3-30B-A3B on 16 GPUs, ep 16, distributed optimizer, 2048-token sequences
  // (recompute left open, the rest as given): the plans include module sets.
  nlohmann::json doc = {{"model", "qwen3-30b-a3b"},
                        {"training", {{"seq_len", 2048}, {"global_batch_size", 16}, {"framework", "megatron-core"}, {"zero_stage", 1}}},
                        {"parallel", {{"tp", 1}, {"pp", 1}, {"ep", 16}, {"micro_batch_size", 1}}},
                        {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 16}}}};
  const Scenario open = parse_scenario(doc);
  SearchSpace space;
  space.tp = space.pp = space.dp = space.cp = space.ep = space.etp = space.vpp = space.micro_batch = false;
  space.zero_stage = space.sequence_parallel = space.schedule = space.offload_optimizer = space.dp_replicate = false;
  SearchOptions options;
  options.top = 10;
  const SearchResult r = search_plans(open, {16}, space, options);
  CHECK(r.plans.size() == 5);  // the five recompute choices, all fit
  bool with_modules = false;
  for (const Plan& p : r.plans) with_modules |= p.training.recompute_modules == (kRecomputeLayernorm | kRecomputeMoeAct);
  CHECK(with_modules);

  // FSDP2's selective is torchtitan's per-op policy: the module sets would repeat it, and are not tried.
  doc["training"]["framework"] = "fsdp2";
  doc["parallel"]["ep"] = 1;
  doc["training"]["zero_stage"] = 3;
  const SearchResult f = search_plans(parse_scenario(doc), {16}, space, options);
  CHECK(f.plans.size() == 3);
}
