// The `training.rlhf` section: PPO and GRPO steps (spec.hpp RlhfSpec; the step model is rlhf_step.hpp).
#include <string>

#include "models/core/json_reader.hpp"
#include "models/core/json_text.hpp"
#include "models/core/limits.hpp"
#include "models/scenario/scenario_parts.hpp"

namespace trainsim {
namespace {

constexpr int kMaxRlSamples = 1 << 24;  // samples one step generates
constexpr int kMaxGroup = 1 << 16;

// A reward or critic model: a preset name or a model section, read as the scenario's own model is.
std::shared_ptr<const ModelSpec> read_model(JsonReader& r, const std::string& key, std::vector<AppliedDefault>* defaults) {
  return std::make_shared<const ModelSpec>(parse_model(r.raw(key), defaults, nullptr, r.child_path(key)));
}

}  // namespace

RlhfSpec parse_rlhf(const Json& section, TrainingMode mode, int seq_len_given, std::vector<AppliedDefault>* defaults) {
  const std::string path = "/training/rlhf";
  if (!section.is_object())
    throw InputError(path, json_value_text(section), "an object {prompts_per_step, prompt_len, response_len, ...}");
  JsonReader r(section, path, defaults);
  const bool grpo = mode == TrainingMode::Grpo;
  RlhfSpec rl;
  rl.prompts_per_step = r.required_int("prompts_per_step", 1, kMaxRlSamples);
  // GRPO's advantage is relative to the other responses to the same prompt: a group needs two at least.
  rl.group_size = grpo ? r.required_int("group_size", 2, kMaxGroup) : r.get_int("group_size", 1, "one response per prompt", 1, kMaxGroup);
  if (rl.samples_per_step() > kMaxRlSamples)
    throw InputError(path + "/group_size", std::to_string(rl.group_size),
                     "prompts_per_step x group_size at most " + std::to_string(kMaxRlSamples) + " samples a step");
  rl.prompt_len = r.required_int("prompt_len", 1, limits::kMaxSeqLen);
  if (seq_len_given > 0 && rl.prompt_len >= seq_len_given)
    throw InputError(path + "/prompt_len", std::to_string(rl.prompt_len), "below training.seq_len (" + std::to_string(seq_len_given) + ")",
                     "a sample is its prompt and a response of one token at least");
  rl.response_len = r.required_int("response_len", 1, limits::kMaxSeqLen - rl.prompt_len);
  if (seq_len_given > 0 && rl.prompt_len + rl.response_len > seq_len_given)
    throw InputError(path + "/response_len", std::to_string(rl.response_len),
                     "at most seq_len - prompt_len = " + std::to_string(seq_len_given - rl.prompt_len), "training.seq_len bounds prompt and response");
  if (seq_len_given > 0)
    rl.max_response_len = r.get_int("max_response_len", seq_len_given - rl.prompt_len, "seq_len - prompt_len: generation runs until the sequence is full",
                                    rl.response_len, seq_len_given - rl.prompt_len);
  else
    rl.max_response_len = r.get_int("max_response_len", rl.response_len, "response_len: every response equally long", rl.response_len,
                                    limits::kMaxSeqLen - rl.prompt_len);
  rl.samples_per_update = r.get_int("samples_per_update", static_cast<int>(rl.samples_per_step()), "prompts_per_step x group_size: one update a step",
                                    1, static_cast<int>(rl.samples_per_step()));
  rl.update_epochs = r.get_int("update_epochs", 1, "one pass over the step's samples", 1, 64);
  rl.kl_reference = r.get_bool("kl_reference", true, "a KL penalty against the frozen starting policy (the reference model's forward)");
  if (r.has("reward_model")) rl.reward_model = read_model(r, "reward_model", defaults);
  else r.record_default("reward_model", "null", "a rule scores the responses (verifiable reward): no model");
  if (grpo && r.has("critic_model"))
    throw InputError(path + "/critic_model", json_value_text(r.raw("critic_model")), "left out for GRPO",
                     "GRPO's baseline is the group's mean reward: it has no critic (mode \"ppo\" has one)");
  if (!grpo) {
    if (r.has("critic_model")) {
      rl.critic_model = read_model(r, "critic_model", defaults);
    } else {
      r.record_default("critic_model", rl.reward_model ? "the reward model" : "the actor",
                       rl.reward_model ? "initialised from the reward model (OpenRLHF, DeepSpeed-Chat)" : "initialised from the actor");
    }
  }
  const std::string placement = r.get_enum("placement", {"colocated", "separate"}, "colocated",
                                           "the engine and every model share the GPUs in turn (verl, NeMo RL, OpenRLHF --colocate_all_models)");
  rl.placement = placement == "separate" ? RolloutPlacement::Separate : RolloutPlacement::Colocated;
  if (rl.placement == RolloutPlacement::Separate) {
    rl.rollout_gpus = r.required_int("rollout_gpus", 1, limits::kMaxGpus);
  } else if (r.has("rollout_gpus")) {
    throw InputError(path + "/rollout_gpus", json_value_text(r.raw("rollout_gpus")), "left out unless placement is \"separate\"",
                     "colocated engines run on the training GPUs");
  }
  rl.rollout_tp = r.get_int("rollout_tp", 0, "the smallest power of two whose engine holds the weights and a full sequence's KV cache", 0, 1024);
  if (r.has("rollout_tp") && rl.rollout_tp == 0)
    throw InputError(path + "/rollout_tp", "0", "a tensor-parallel degree of at least 1", "leave it out for the smallest that fits");
  const bool colocated = rl.placement == RolloutPlacement::Colocated;
  rl.gpu_memory_utilization =
      r.get_number("gpu_memory_utilization", colocated ? 0.6 : 0.9,
                   colocated ? "0.6: NeMo RL's colocated default (the trainer's weights stay beside the engine)" : "0.9: vLLM's default", 0.05, 0.99);
  rl.prefix_caching = r.get_bool("prefix_caching", true, "vLLM's automatic prefix caching: a group's responses share one prefill of their prompt");
  rl.max_num_seqs = r.get_int("max_num_seqs", 256, "vLLM's default", 1, 1 << 20);
  rl.steps = r.get_int("steps", 0, "", 1, 1 << 30);
  r.reject_unknown();
  return rl;
}

}  // namespace trainsim
