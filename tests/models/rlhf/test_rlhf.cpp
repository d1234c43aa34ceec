// PPO / GRPO: the scenario section, the rollout's engines (models/rlhf/rollout.hpp) and the step (models/rlhf/rlhf_step.hpp),
// against hand derivations.
#include <doctest/doctest.h>

#include <cmath>

#include "models/comm/collectives.hpp"
#include "models/compute/transformer.hpp"
#include "models/core/errors.hpp"
#include "models/rlhf/rlhf_step.hpp"
#include "models/rlhf/rollout.hpp"
#include "models/scenario/scenario.hpp"

using namespace trainsim;
using Json = nlohmann::json;

namespace {

// NeMo RL's Llama 3.1 8B GRPO recipe (grpo-llama3.1-8b-instruct-2n8g.yaml): 64 prompts x 32 responses, 512 samples an
// update, sequences of 4,096 tokens, vLLM tp 1 colocated on two 8-GPU nodes, Megatron pp 2.
Json grpo_scenario(Json rlhf_overrides = Json::object(), Json training_overrides = Json::object()) {
  Json rl = {{"prompts_per_step", 64}, {"group_size", 32}, {"prompt_len", 132}, {"response_len", 1060}, {"samples_per_update", 512}, {"rollout_tp", 1}};
  rl.update(rlhf_overrides);
  Json training = {{"mode", "grpo"}, {"seq_len", 4096}, {"distributed_optimizer", true}, {"recompute", "full"}, {"framework", "megatron-core"},
                   {"rlhf", rl}};
  training.update(training_overrides);
  return {{"model", "llama3.1-8b"},
          {"training", training},
          {"parallel", {{"tp", 1}, {"pp", 2}, {"micro_batch_size", 1}}},
          {"hardware", {{"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 8}, {"num_nodes", 2}}}};
}

std::string input_error(const Json& doc) {
  try {
    parse_scenario(doc);
  } catch (const InputError& e) {
    return e.path();
  }
  return "";
}

// One engine of one GPU generating `sequences` responses of exactly `length` tokens after `prompt` prompt tokens.
RlhfSpec fixed_lengths(int sequences, int prompt, int length) {
  RlhfSpec rl;
  rl.prompts_per_step = sequences;
  rl.group_size = 1;
  rl.prompt_len = prompt;
  rl.response_len = length;
  rl.max_response_len = length;
  rl.samples_per_update = sequences;
  rl.gpu_memory_utilization = 0.9;
  return rl;
}

}  // namespace

TEST_CASE("a KV cache entry: keys and values of every layer's key-value heads, split over tensor parallel") {
  const Scenario s = parse_scenario(grpo_scenario());
  // Llama 3 8B: 32 layers x 8 KV heads x 128 dims x 2 (K and V) x 2 bytes = 131,072 bytes a token (the 128 KiB figure
  // vLLM and the Llama 3 model card's serving notes quote).
  CHECK(kv_cache_bytes_per_token(s.model, 1) == doctest::Approx(131072));
  CHECK(kv_cache_bytes_per_token(s.model, 4) == doctest::Approx(131072 / 4));
  CHECK(kv_cache_bytes_per_token(s.model, 16) == doctest::Approx(131072 / 8));  // at most one head per GPU: replicated beyond 8
  // DeepSeek-V3 (MLA): the 512-dim latent and the 64-dim rotary key on each of 61 layers, on every GPU (V2 paper §2.1.4:
  // d_c + d_h^R = 576 elements a layer).
  const Scenario v3 = parse_scenario({{"model", "deepseek-v3"}, {"training", {{"seq_len", 4096}, {"global_batch_size", 8}}},
                                      {"parallel", {{"micro_batch_size", 1}}}, {"hardware", {{"num_gpus", 8}}}}, false);
  CHECK(kv_cache_bytes_per_token(v3.model, 8) == doctest::Approx(576.0 * 2 * 61));
}

TEST_CASE("response lengths: the exponential scale whose mean cut at the maximum is the mean given") {
  // X ~ Exp(M) cut at M has mean M (1 - 1/e) = 0.632 M.
  CHECK(response_length_scale(1000 * (1 - std::exp(-1.0)), 1000) == doctest::Approx(1000).epsilon(1e-6));
  const double scale = response_length_scale(1060, 3964);
  CHECK(scale * (1 - std::exp(-3964 / scale)) == doctest::Approx(1060).epsilon(1e-9));
  CHECK(response_length_scale(500, 500) == 0);  // every response max long
}

TEST_CASE("decoding reads the weights and the growing KV cache once a step (Pope et al. 2022 §2 roofline)") {
  const Scenario s = parse_scenario(grpo_scenario());
  // A GPU whose tensor cores cannot be the bound, so each step costs its bytes at the memory-bound rate.
  GpuSpec gpu = s.hardware.gpu;
  gpu.flops_bf16 = 1e18;
  const GpuComputeTraits tr = gpu_compute_traits(gpu);
  const CommModel comm = make_comm_model(s.hardware);
  const int C = 4, P = 100, M = 1000;
  const RolloutEstimate r = estimate_rollout(s.model, fixed_lengths(C, P, M), gpu, tr, comm, 1, 1);
  REQUIRE(r.fits);
  CHECK(r.concurrent == C);
  CHECK(r.waves == 1);
  CHECK(r.decode_steps == M);
  // Step s reads W = 2 B x every parameter and C (P + s) cached tokens: summed over M steps,
  // M W + C kv (M P + M^2 / 2) bytes.
  const double W = 2 * count_parameters(s.model).total;
  const double kv = 131072;
  const double bytes = M * W + C * kv * (static_cast<double>(M) * P + static_cast<double>(M) * M / 2);
  CHECK(r.decode_s == doctest::Approx(memory_bound_time(gpu, tr, bytes)).epsilon(1e-6));
}

TEST_CASE("an engine runs what its cache holds at once and the rest in further waves") {
  const Scenario s = parse_scenario(grpo_scenario());
  const GpuComputeTraits tr = gpu_compute_traits(s.hardware.gpu);
  const CommModel comm = make_comm_model(s.hardware);
  RlhfSpec rl = fixed_lengths(4, 100, 1000);
  // Room for 2.5 finished sequences of 1,100 tokens beside the 16-bit weights: 2 run at once, in 2 waves.
  const double W = 2 * count_parameters(s.model).total;
  rl.gpu_memory_utilization = (W + 2.5 * 1100 * 131072) / s.hardware.gpu.memory_bytes;
  const RolloutEstimate r = estimate_rollout(s.model, rl, s.hardware.gpu, tr, comm, 1, 1);
  CHECK(r.kv_capacity_tokens == doctest::Approx(2.5 * 1100));
  CHECK(r.concurrent == 2);
  CHECK(r.waves == 2);
  // Exponential lengths: a wave of C decodes until its longest ends, scale x H_C steps (the expected maximum of C
  // exponentials), while the maximum allows.
  rl = fixed_lengths(4, 100, 1000);
  rl.max_response_len = 100000;
  const RolloutEstimate e = estimate_rollout(s.model, rl, s.hardware.gpu, tr, comm, 1, 1);
  CHECK(e.decode_steps == doctest::Approx(e.length_scale * (1 + 1 / 2.0 + 1 / 3.0 + 1 / 4.0)));
  // Too little memory for one full sequence: the engine does not fit.
  rl.gpu_memory_utilization = W / s.hardware.gpu.memory_bytes;
  CHECK_FALSE(estimate_rollout(s.model, rl, s.hardware.gpu, tr, comm, 1, 1).fits);
}

TEST_CASE("an RL update packs its samples into sequences of seq_len tokens") {
  const Scenario s = parse_scenario(grpo_scenario());
  // 512 samples x (132 + 1,060) tokens / 4,096 = 148.99 -> 149 sequences, rounded up to micro-batch 1 x dp 8: 152.
  CHECK(s.parallel.dp == 8);
  CHECK(s.training.global_batch_size == 152);
  CHECK(s.parallel.gradient_accumulation_steps == 19);
  // max_response_len defaults to what seq_len leaves after the prompt.
  CHECK(s.training.rl.max_response_len == 4096 - 132);
  // Without seq_len: the longest sample, prompt + max_response_len.
  Json doc = grpo_scenario({{"max_response_len", 2048}});
  doc["training"].erase("seq_len");
  CHECK(parse_scenario(doc).training.seq_len == 132 + 2048);
  // The resolved scenario reloads to the same derived batch.
  const Scenario again = parse_scenario(to_json(s));
  CHECK(again.training.global_batch_size == 152);
  CHECK(again.training.rl.prompts_per_step == 64);
}

TEST_CASE("a GRPO step: four updates of 512 samples, the actor's and the reference's forward, colocated memory") {
  const Scenario s = parse_scenario(grpo_scenario());
  const RlhfStepEstimate e = estimate_rlhf_step(s);
  CHECK(e.samples == 2048);
  CHECK(e.tokens == doctest::Approx(2048.0 * (132 + 1060)));
  CHECK(e.updates == 4);
  CHECK(e.reference_s == doctest::Approx(e.logprobs_s));  // the same architecture over the same tokens
  CHECK(e.reward_s == 0);                                 // a rule
  CHECK(e.values_s == 0);
  CHECK(e.critic_update_s == 0);
  CHECK(e.rollout.engines == 16);
  CHECK(e.rollout.samples_per_engine == 128);
  CHECK(e.step_s == doctest::Approx(e.rollout.time_s + e.scoring_s + e.training_s + e.sync_s));
  // A forward is a third of a training pass over the same tokens: the step's two forward passes over 2,048 samples
  // cost less than its four updates over the same samples, and more than a quarter of them (recompute, optimizer).
  CHECK(e.logprobs_s < e.actor_update_s / 3);
  // Colocated: the reference sleeps while the actor trains; the phase holds the larger.
  CHECK(e.training_phase_bytes == doctest::Approx(std::max(e.actor_bytes, e.reference_bytes)));
  CHECK(e.generation_phase_bytes == doctest::Approx(0.6 * s.hardware.gpu.memory_bytes + e.reference_bytes));
  CHECK(e.fits);
  // Two passes over the samples double the updates; no KL penalty, no reference forward.
  const RlhfStepEstimate twice = estimate_rlhf_step(parse_scenario(grpo_scenario({{"update_epochs", 2}, {"kl_reference", false}})));
  CHECK(twice.updates == 8);
  CHECK(twice.reference_s == 0);
  CHECK(twice.reference_bytes == 0);
}

TEST_CASE("PPO adds a critic and a reward model; separate pools hold every model and receive the weights over the network") {
  Json doc = grpo_scenario({{"group_size", 1}, {"prompts_per_step", 512}, {"reward_model", "llama3-8b"}});
  doc["training"]["mode"] = "ppo";
  const RlhfStepEstimate ppo = estimate_rlhf_step(parse_scenario(doc));
  CHECK(ppo.reward_s > 0);
  CHECK(ppo.values_s == doctest::Approx(ppo.reward_s));  // the critic starts from the reward model: the same forward
  CHECK(ppo.critic_update_s > 0);
  CHECK(ppo.training_s == doctest::Approx(ppo.actor_update_s + ppo.critic_update_s));

  doc["training"]["rlhf"]["placement"] = "separate";
  doc["training"]["rlhf"]["rollout_gpus"] = 8;
  const Scenario sep = parse_scenario(doc);
  const RlhfStepEstimate e = estimate_rlhf_step(sep);
  CHECK(e.rollout.engines == 8);
  CHECK(e.training_phase_bytes == doctest::Approx(e.actor_bytes + e.reference_bytes + e.reward_bytes + e.critic_bytes));
  // Each engine GPU receives the whole 16-bit model at its share of the node's NICs: 8 NDR-400 NICs for 8 GPUs, at
  // the fabric's ring efficiency (collectives.hpp's published table).
  const FabricSpec& ib = sep.hardware.inter_node;
  const double per_gpu = ib.bandwidth * fabric_efficiency(ib).ring * sep.hardware.nics_per_node / sep.hardware.gpus_per_node;
  CHECK(e.sync_s == doctest::Approx(2 * count_parameters(sep.model).total / per_gpu + ib.latency_s));
  // Cost counts both pools.
  doc["training"]["rlhf"]["steps"] = 100;
  const RlhfStepEstimate run = estimate_rlhf_step(parse_scenario(doc));
  CHECK(run.cost.gpu_hours == doctest::Approx(100 * run.step_s * (16 + 8) / 3600.0));
}

TEST_CASE("RL inputs that cannot be priced name their path") {
  CHECK(input_error(grpo_scenario({{"group_size", 1}})) == "/training/rlhf/group_size");  // a group of one has no baseline
  CHECK(input_error(grpo_scenario(Json::object(), {{"global_batch_size", 64}})) == "/training/global_batch_size");
  CHECK(input_error(grpo_scenario({{"critic_model", "llama3-8b"}})) == "/training/rlhf/critic_model");
  CHECK(input_error(grpo_scenario({{"rollout_gpus", 8}})) == "/training/rlhf/rollout_gpus");
  CHECK(input_error(grpo_scenario({{"response_len", 4000}})) == "/training/rlhf/response_len");  // 132 + 4,000 > 4,096
  CHECK(input_error(grpo_scenario({{"unknown", 1}})) == "/training/rlhf/unknown");
  Json no_section = grpo_scenario();
  no_section["training"].erase("rlhf");
  CHECK(input_error(no_section) == "/training/rlhf");
  Json sft = grpo_scenario();
  sft["training"]["mode"] = "sft";
  sft["training"]["global_batch_size"] = 64;
  CHECK(input_error(sft) == "/training/rlhf");
  // An engine of 3 GPUs divides neither the 16 GPUs nor the 32 heads.
  CHECK_THROWS_AS(estimate_rlhf_step(parse_scenario(grpo_scenario({{"rollout_tp", 3}}))), InputError);
  try {
    require_supervised_mode(parse_scenario(grpo_scenario()).training, "plan");
    FAIL("plan took a GRPO scenario");
  } catch (const InputError& e) {
    CHECK(e.path() == "/training/mode");
  }
}
