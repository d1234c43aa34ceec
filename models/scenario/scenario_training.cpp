// The `training` section.
#include <algorithm>
#include <cmath>

#include "models/compute/recompute_policy.hpp"
#include "models/core/json_reader.hpp"
#include "models/core/limits.hpp"
#include "models/scenario/scenario_parts.hpp"

namespace trainsim {
namespace {

Precision precision_of(const std::string& s) {
  if (s == "fp32") return Precision::Fp32;
  if (s == "fp16") return Precision::Fp16;
  if (s == "fp8") return Precision::Fp8;
  return Precision::Bf16;
}


// The mode (DPO's adapters, the RL step's rlhf section), the sequence length and batch, and how much data: tokens,
// or samples x epochs.
void read_mode_and_data(JsonReader& r, TrainingSpec& t, const ModelSpec& model, std::vector<AppliedDefault>* defaults) {
  const std::string path = "/training";
  std::string mode = r.get_enum("mode", {"pretrain", "sft", "lora", "qlora", "dpo", "ppo", "grpo"}, "pretrain", "pre-training");
  t.mode = mode == "sft" ? TrainingMode::Sft : mode == "lora" ? TrainingMode::Lora : mode == "qlora" ? TrainingMode::Qlora
           : mode == "dpo" ? TrainingMode::Dpo : mode == "ppo" ? TrainingMode::Ppo : mode == "grpo" ? TrainingMode::Grpo
                                                                                   : TrainingMode::Pretrain;
  if (t.mode == TrainingMode::Dpo) {
    const std::string a = r.get_enum("adapters", {"none", "lora", "qlora"}, "none", "full DPO: every weight trains, beside a frozen reference copy");
    t.dpo_adapters = a == "lora" ? AdapterKind::Lora : a == "qlora" ? AdapterKind::Qlora : AdapterKind::None;
  } else if (r.has("adapters")) {
    throw InputError(path + "/adapters", json_value_text(r.raw("adapters")), "left out unless mode is \"dpo\"",
                     "supervised fine-tuning with adapters is mode \"lora\" or \"qlora\"");
  }

  if (t.is_rl()) {
    // A step's samples come from the rollout: their count and lengths are the rlhf section's, and an update's batch
    // is the packed sequences its samples fill (derive_layout).
    if (!r.has("rlhf"))
      throw InputError(path + "/rlhf", "nothing", "the RL step: {prompts_per_step, prompt_len, response_len, ...}",
                       std::string("mode \"") + mode + "\" trains on generated samples");
    for (const char* key : {"global_batch_size", "dataset_samples", "train_tokens"})
      if (r.has(key))
        throw InputError(path + "/" + key, json_value_text(r.raw(key)), std::string("left out in mode \"") + mode + "\"",
                         std::string(key) == "global_batch_size" ? "an update's samples are rlhf.samples_per_update"
                                                                 : "RL trains for a number of steps: rlhf.prompts_per_step prompts each");
    const int seq_given = r.has("seq_len") ? r.get_int("seq_len", 0, "", 2, limits::kMaxSeqLen) : 0;
    t.rl = parse_rlhf(r.raw("rlhf"), t.mode, seq_given, defaults);
    t.seq_len = seq_given > 0 ? seq_given : t.rl.prompt_len + t.rl.max_response_len;
    if (seq_given == 0) r.record_default("seq_len", std::to_string(t.seq_len), "rlhf prompt_len + max_response_len: the longest sample");
  } else if (r.has("rlhf")) {
    throw InputError(path + "/rlhf", json_value_text(r.raw("rlhf")), "left out unless mode is \"ppo\" or \"grpo\"");
  }
  int seq_default = model.max_position_embeddings > 0 ? std::min(model.max_position_embeddings, 4096) : 4096;
  if (!t.is_rl()) t.seq_len = r.get_int("seq_len", seq_default, "4096, capped by the model's max_position_embeddings", 1, limits::kMaxSeqLen);
  t.global_batch_size = r.get_int("global_batch_size", 0, "", 1, limits::kMaxGlobalBatch);  // 0: derived with the layout

  t.dataset_samples = r.get_quantity("dataset_samples", Quantity::Count, 0, "", {1, limits::kMaxDatasetSamples});
  t.epochs = r.get_number("epochs", 0, "", 0, limits::kMaxEpochs);
  if (r.has("epochs") && !(t.epochs > 0)) throw InputError(path + "/epochs", json_value_text(r.raw("epochs")), "a number of epochs > 0");
  if (r.has("train_tokens")) {
    t.train_tokens = r.required_quantity("train_tokens", Quantity::Count, {0, limits::kMaxTrainTokens, true});
  } else if (t.dataset_samples > 0) {
    if (t.epochs <= 0) throw InputError(path + "/epochs", "nothing", "a number of epochs > 0", "dataset_samples needs epochs");
    // A DPO sample is a preference pair: its chosen and rejected sequences are both trained on.
    t.train_tokens = t.dataset_samples * t.epochs * t.seq_len * t.sequences_per_sample();
    if (t.train_tokens > limits::kMaxTrainTokens)
      throw InputError(path + "/dataset_samples", json_value_text(r.raw("dataset_samples")),
                       "at most " + format_count(limits::kMaxTrainTokens) + " tokens in all (dataset_samples x epochs x seq_len" +
                           (t.sequences_per_sample() > 1 ? " x 2" : "") + ")");
    r.record_default("train_tokens", Json(t.train_tokens).dump(),
                     t.sequences_per_sample() > 1 ? "dataset_samples x epochs x seq_len x 2 (chosen + rejected)" : "dataset_samples x epochs x seq_len");
  }
}

// Training and gradient precision, the optimizer and its states' dtypes, ZeRO stage and distributed optimizer.
void read_precision_and_optimizer(JsonReader& r, TrainingSpec& t) {
  const std::string path = "/training";
  std::vector<std::string> precisions{"fp32", "fp16", "bf16", "fp8"};
  t.precision = precision_of(r.get_enum("precision", precisions, "bf16", "bf16 mixed precision"));
  t.grad_precision_given = r.has("grad_precision");
  if (t.grad_precision_given) t.grad_precision = precision_of(r.get_enum("grad_precision", precisions, "fp32", ""));
  else
    r.record_default("grad_precision", "the framework's",
                     "fp32 (Megatron-LM main_grad, PyTorch FSDP), the training dtype under DeepSpeed ZeRO (trait zero_grads_in_training_dtype) "
                     "or without a master copy (master_weights_dtype none)");
  t.optimizer_name = r.get_enum("optimizer", {"adam", "adamw", "sgd", "adam8bit", "paged_adamw", "paged_adamw8bit"}, "adamw", "AdamW");
  t.optimizer = t.optimizer_name == "sgd" ? OptimizerKind::Sgd
                : t.optimizer_name == "adam8bit" || t.optimizer_name == "paged_adamw8bit" ? OptimizerKind::Adam8bit
                                                                                           : OptimizerKind::Adam;
  t.paged_optimizer = t.optimizer_name.rfind("paged_", 0) == 0;
  const std::string master = r.get_enum("master_weights_dtype", {"fp32", "fp16", "none"}, "fp32", "");
  t.master_weights = master != "none";
  if (t.master_weights) t.master_precision = precision_of(master);
  // Without a master copy torch.optim creates its states like the parameters (torch.zeros_like): 16-bit moments.
  const bool moments_follow_weights = !t.master_weights && t.optimizer != OptimizerKind::Adam8bit;
  t.moment_precision = precision_of(r.get_enum("optimizer_moments_dtype", precisions,
                                               moments_follow_weights ? to_string(high_precision(t.precision)) : "fp32",
                                               moments_follow_weights ? "the parameters' dtype: torch.optim keeps its states like the parameters it steps" : ""));
  t.precision_aware_optimizer = r.get_bool("precision_aware_optimizer", false, "");  // like the dtypes beside it: no default listed
  if (t.optimizer == OptimizerKind::Adam8bit && t.moment_precision != Precision::Fp32)
    throw InputError(path + "/optimizer_moments_dtype", json_value_text(r.raw("optimizer_moments_dtype")), "fp32 or left out with adam8bit",
                     "8-bit Adam keeps its own 1-byte moments");
  t.zero_stage = r.get_int("zero_stage", 0, "no ZeRO sharding", 0, 3);
  t.distributed_optimizer = r.get_bool("distributed_optimizer", false, "optimizer states replicated unless zero_stage >= 1");
}

// Activation recompute and, for selective recompute, Megatron's modules.
void read_recompute(JsonReader& r, TrainingSpec& t) {
  const std::string path = "/training";
  std::string rc = r.get_enum("recompute", {"none", "selective", "full"}, "none", "keep all activations");
  t.recompute = rc == "full" ? Recompute::Full : rc == "selective" ? Recompute::Selective : Recompute::None;
  // Megatron's --recompute-modules: which modules selective recompute repeats.
  if (r.has("recompute_modules")) {
    const Json& list = r.raw("recompute_modules");
    std::vector<std::string> names;
    for (const RecomputeModuleName& n : recompute_module_names()) names.push_back(n.name);
    if (!list.is_array() || list.empty())
      throw InputError(path + "/recompute_modules", json_value_text(list), "a non-empty array of " + join(names));
    if (t.recompute != Recompute::Selective)
      throw InputError(path + "/recompute_modules", json_value_text(list), "recompute \"selective\" (the modules it repeats)",
                       "set recompute to \"selective\" or leave recompute_modules out");
    t.recompute_modules = 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string name = list[i].is_string() ? list[i].get<std::string>() : "";
      const auto it = std::find_if(recompute_module_names().begin(), recompute_module_names().end(),
                                   [&](const RecomputeModuleName& n) { return name == n.name; });
      if (it == recompute_module_names().end())
        throw InputError(path + "/recompute_modules/" + std::to_string(i), json_value_text(list[i]), "one of " + join(names));
      t.recompute_modules |= it->bit;
    }
  }
  r.mark_read({"recompute_modules"});
}

// Optimizer and parameter offload: to the host or NVMe, and the share offloaded.
void read_offload(JsonReader& r, TrainingSpec& t) {
  const std::string path = "/training";
  t.offload_optimizer = r.get_bool("offload_optimizer", false, "optimizer states on the GPU");
  if (r.has("offload_optimizer_fraction") && !t.offload_optimizer)
    throw InputError(path + "/offload_optimizer_fraction", json_value_text(r.raw("offload_optimizer_fraction")), "offload_optimizer true beside it",
                     "the share of the optimizer states offloaded, when they are");
  t.offload_fraction = r.get_number("offload_optimizer_fraction", 1.0, "", 1e-6, 1.0);
  if (t.paged_optimizer && t.offload_optimizer)
    throw InputError(path + "/offload_optimizer", "true", "false beside a paged optimizer (" + t.optimizer_name + ")",
                     "a paged optimizer pages its own states to the host when the GPU is full; offload_optimizer keeps them there");
  if (r.has("offload_optimizer_device") && !t.offload_optimizer)
    throw InputError(path + "/offload_optimizer_device", json_value_text(r.raw("offload_optimizer_device")), "offload_optimizer true beside it",
                     "where the offloaded optimizer states live, when they are");
  t.optimizer_offload_device = r.get_enum("offload_optimizer_device", {"cpu", "nvme"}, "cpu", "") == "nvme" ? OffloadDevice::Nvme : OffloadDevice::Cpu;
  const std::string params = r.get_enum("offload_params", {"none", "cpu", "nvme"}, "none", "");
  t.param_offload = params == "nvme" ? OffloadDevice::Nvme : params == "cpu" ? OffloadDevice::Cpu : OffloadDevice::None;
  if (t.param_offload != OffloadDevice::None && t.zero_stage < 3)
    throw InputError(path + "/offload_params", json_value_text(r.raw("offload_params")), "zero_stage 3 beside it",
                     "only ZeRO-3 / FSDP shards the parameters it could offload");
}

// The adapters' rank, alpha and target modules where the mode trains adapters.
void read_lora(JsonReader& r, TrainingSpec& t, const ModelSpec& model, std::vector<AppliedDefault>* defaults) {
  const std::string path = "/training";
  if (t.uses_adapters()) {
    Json lora_section = r.has("lora") ? r.raw("lora") : Json::object();
    r.mark_read({"lora"});
    JsonReader lr(lora_section, path + "/lora", defaults);
    // A rank above hidden_size exceeds the smaller side of every adapted matrix: more parameters, no more expressiveness.
    const int max_rank = std::max(1, model.hidden_size);
    t.lora.rank = lr.get_int("rank", std::min(16, max_rank), "LoRA rank 16", 1, max_rank);
    t.lora.alpha = lr.get_number("alpha", 2.0 * t.lora.rank, "2 x rank", 0, 1e6);
    if (lr.has("target_modules")) {
      const Json& tm = lr.raw("target_modules");
      const std::vector<std::string> known{"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
      if (!tm.is_array() || tm.empty())
        throw InputError(path + "/lora/target_modules", json_value_text(tm), "a non-empty list of " + join(known));
      t.lora.target_modules.clear();
      for (std::size_t i = 0; i < tm.size(); ++i) {
        std::string name = tm[i].is_string() ? tm[i].get<std::string>() : "";
        if (std::find(known.begin(), known.end(), name) == known.end())
          throw InputError(path + "/lora/target_modules/" + std::to_string(i), json_value_text(tm[i]), "one of " + join(known),
                           "use all-linear names of Llama-style models; fc1/fc2 map to up_proj/down_proj");
        // Multi-head latent attention has no q/k/v projections of these shapes (q_a/q_b, kv_a/kv_b instead).
        if (model.is_mla() && (name == "q_proj" || name == "k_proj" || name == "v_proj"))
          throw InputError(path + "/lora/target_modules/" + std::to_string(i), json_value_text(tm[i]),
                           "o_proj or an MLP module: the model uses multi-head latent attention, which has no q_proj/k_proj/v_proj");
        t.lora.target_modules.push_back(name);
      }
    } else if (model.is_mla()) {
      t.lora.target_modules = {"o_proj", "gate_proj", "up_proj", "down_proj"};
      lr.record_default("target_modules", join(t.lora.target_modules),
                        "all linear layers of the names trainsim models (multi-head latent attention's q/kv projections not adapted)");
    } else {
      lr.record_default("target_modules", join(t.lora.target_modules), "all linear layers");
    }
    lr.reject_unknown();
  } else {
    r.mark_read({"lora"});
  }
}

}  // namespace

TrainingSpec parse_training(const Json& section, const ModelSpec& model, std::vector<AppliedDefault>* defaults) {
  const std::string path = "/training";
  TrainingSpec t;
  JsonReader r(section, path, defaults);
  read_mode_and_data(r, t, model, defaults);
  read_precision_and_optimizer(r, t);
  read_recompute(r, t);
  t.flash_attention = r.get_bool("flash_attention", true, "FlashAttention (no s^2 buffers)");
  read_offload(r, t);
  t.packing = r.get_bool("packing", true, "sequences packed to seq_len");
  t.document_tokens = r.get_number("document_tokens", 0, "", 1, std::max(1, t.seq_len));
  if (r.has("moe_expert_load_cv") && !model.is_moe())
    throw InputError(path + "/moe_expert_load_cv", json_value_text(r.raw("moe_expert_load_cv")), "left out for a dense model",
                     "it describes how a MoE router loads its experts");
  t.moe_expert_load_cv = r.get_number("moe_expert_load_cv", 0, "", 0, limits::kMaxExpertLoadCv);
  // Named framework (with trait overrides); when absent, parse_scenario records the one the layout implies.
  if (r.has("framework")) t.framework = parse_framework(r.raw("framework"), path + "/framework");
  r.mark_read({"framework"});

  read_lora(r, t, model, defaults);
  r.mark_read({"preset"});
  r.reject_unknown();
  return t;
}

}  // namespace trainsim
