#include "hugging_face.hpp"

#include <cmath>

#include "models/scenario/framework.hpp"

namespace trainsim::export_detail {

namespace {
using OrderedJson = nlohmann::ordered_json;

bool trains_in_bf16(Precision p) { return p == Precision::Bf16 || p == Precision::Fp8; }
}  // namespace

HfParallel hf_parallel(const ExportPlan& p) {
  if (p.framework == "deepspeed") return HfParallel::DeepSpeed;
  if (p.hardware.num_gpus <= 1) return HfParallel::Single;
  // FSDP has no optimizer-only sharding: a ZeRO-1 plan of the transformers or fsdp stack runs as SHARD_GRAD_OP (warned).
  return deepspeed_zero_stage(p.training) >= 1 ? HfParallel::Fsdp : HfParallel::Ddp;
}

std::string hf_framework(const ExportPlan& p) {
  // The Trainer shards only through FSDP (ZeRO-2/3) or DeepSpeed: ZeRO-1 (or Megatron's distributed optimizer) and an
  // optimizer-only CPU offload exist only in DeepSpeed (FSDP's offload moves parameters and gradients too).
  // So do NVMe offload and parameter offload (ZeRO-Infinity).
  const bool needs_deepspeed = deepspeed_zero_stage(p.training) == 1 || p.training.offload_optimizer || p.training.params_offloaded() != OffloadDevice::None;
  if (p.framework == "deepspeed" || needs_deepspeed) return "deepspeed";
  if (p.framework == "transformers" || p.framework == "fsdp") return p.framework;
  return "transformers";
}

std::string fsdp_sharding_strategy(const ExportPlan& p) {
  const bool full = p.training.zero_stage >= 3;
  // accelerate/utils/constants.py FSDP_SHARDING_STRATEGY.
  if (p.layout.dp_replicate > 1) return full ? "HYBRID_SHARD" : "HYBRID_SHARD_ZERO2";
  return full ? "FULL_SHARD" : "SHARD_GRAD_OP";
}

std::string hf_fsdp_option(const ExportPlan& p) {
  std::string strategy = fsdp_sharding_strategy(p);
  for (char& c : strategy) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  // trainer_utils.FSDPOption: "offload" moves parameters and gradients to the CPU with the optimizer states.
  return strategy + " auto_wrap" + (p.training.offload_optimizer ? " offload" : "");
}

OrderedJson hf_fsdp_config(const ExportPlan& p, bool prefixed) {
  const FrameworkTraits& fw = framework_for(p.training, p.layout);
  const std::string pre = prefixed ? "fsdp_" : "";
  OrderedJson c;
  // FSDP1: the version with HYBRID_SHARD and the sharding strategies above (training_args.py fsdp_config "version").
  c[pre + "version"] = 1;
  // transformers' default is NO_PREFETCH; the step was priced with the next layer's gather overlapping the backward.
  c[pre + "backward_prefetch"] = fw.overlap_param_gather ? "backward_pre" : "no_prefetch";
  c[pre + "forward_prefetch"] = false;
  c[pre + "use_orig_params"] = true;
  c[pre + "sync_module_states"] = true;
  // Gradient checkpointing through FSDP's wrapper: TrainingArguments' gradient_checkpointing adds an all-gather per layer in
  // the backward under full shard (transformers#30404), which the step was not priced with.
  c[pre + "activation_checkpointing"] = p.training.recompute != Recompute::None;
  return c;
}

OrderedJson hf_training_arguments(const ExportPlan& p, bool fsdp_in_arguments, const std::string& deepspeed_path) {
  const TrainingSpec& t = p.training;
  const ParallelLayout& l = p.layout;
  const HfParallel kind = hf_parallel(p);
  OrderedJson a;
  a["output_dir"] = "output/" + p.job_name;
  a["run_name"] = p.job_name;
  a["per_device_train_batch_size"] = l.micro_batch_size;
  a["gradient_accumulation_steps"] = l.gradient_accumulation_steps;
  if (const long long iters = p.train_iterations(); iters > 0) a["max_steps"] = iters;
  // Both written: TRL's configs default bf16 to true when fp16 is not set.
  a["bf16"] = trains_in_bf16(t.precision);
  a["fp16"] = t.precision == Precision::Fp16;
  const bool checkpointing = t.recompute != Recompute::None && kind != HfParallel::Fsdp;
  a["gradient_checkpointing"] = checkpointing;  // written false too: TRL and ms-swift default it to true
  if (checkpointing) a["gradient_checkpointing_kwargs"] = {{"use_reentrant", false}};
  a["optim"] = hf_optim(t);
  a["max_grad_norm"] = 1.0;
  a["logging_steps"] = 10;
  if (p.checkpoint_interval_steps > 0) {
    a["save_strategy"] = "steps";
    a["save_steps"] = p.checkpoint_interval_steps;
  }
  a["report_to"] = "none";
  // DDP's unused-parameter search walks the autograd graph every step; the step was priced without it.
  if (kind == HfParallel::Ddp) a["ddp_find_unused_parameters"] = false;
  if (kind == HfParallel::Fsdp && fsdp_in_arguments) {
    a["fsdp"] = hf_fsdp_option(p);
    a["fsdp_config"] = hf_fsdp_config(p, false);
  }
  if (kind == HfParallel::DeepSpeed && !deepspeed_path.empty()) a["deepspeed"] = deepspeed_path;
  return a;
}

std::string hf_load_dtype(const ExportPlan& p) {
  const Precision precision = p.training.precision;
  if (precision == Precision::Fp32) return "float32";
  const std::string training = precision == Precision::Fp16 ? "float16" : "bfloat16";
  // Adapters over a frozen 16-bit base, DeepSpeed's 16-bit engine, and training without a master copy load the training dtype.
  if (p.training.uses_adapters() || hf_parallel(p) == HfParallel::DeepSpeed || !p.training.master_weights) return training;
  return "float32";
}

std::string hf_optim(const TrainingSpec& t) {
  // training_args.py OptimizerNames; adamw_torch_fused is the default from torch 2.8.
  switch (t.optimizer) {
    case OptimizerKind::Sgd: return "sgd";
    case OptimizerKind::Adam8bit: return t.paged_optimizer ? "paged_adamw_8bit" : "adamw_bnb_8bit";
    case OptimizerKind::Adam: break;
  }
  return t.paged_optimizer ? "paged_adamw_32bit" : "adamw_torch_fused";
}

std::string hf_deepspeed_config(const ExportPlan& p, const std::string& target) {
  OrderedJson c = OrderedJson::parse(deepspeed_config_json(p, target));
  if (c.contains("optimizer")) {
    // "auto": the Trainer fills them from learning_rate, adam_beta1/2, adam_epsilon, weight_decay; without params DeepSpeed
    // would use its own defaults whatever TrainingArguments say. torch.optim.SGD takes no betas or eps.
    if (p.training.optimizer == OptimizerKind::Sgd)
      c["optimizer"]["params"] = {{"lr", "auto"}, {"weight_decay", "auto"}};
    else
      c["optimizer"]["params"] = {{"lr", "auto"}, {"betas", "auto"}, {"eps", "auto"}, {"weight_decay", "auto"}};
  } else {
    // The Trainer's own optimizer (8-bit Adam) under ZeRO: DeepSpeed refuses optimizers it has not tested unless told.
    c["zero_allow_untested_optimizer"] = true;
  }
  return c.dump(2) + "\n";
}

std::string accelerate_config_yaml(const ExportPlan& p, const std::string& target) {
  const HfParallel kind = hf_parallel(p);
  const int nodes = p.hardware.num_nodes;
  std::string out = comment_header(p, target) + "#\n";
  out += "# accelerate launch --config_file accelerate_config.yaml; the launch script passes each node's --machine_rank";
  out += nodes > 1 ? " and the main process's address.\n" : ".\n";
  out += "compute_environment: LOCAL_MACHINE\n";
  out += "debug: false\n";
  // 'NO' quoted: YAML 1.1 reads a bare NO as false.
  const char* type = kind == HfParallel::Fsdp ? "FSDP" : kind == HfParallel::DeepSpeed ? "DEEPSPEED" : kind == HfParallel::Ddp ? "MULTI_GPU" : "'NO'";
  out += std::string("distributed_type: ") + type + "\n";
  if (kind == HfParallel::Ddp) out += "gpu_ids: all\n";
  out += "machine_rank: 0  # this node's rank; launch passes --machine_rank\n";
  if (nodes > 1) {
    out += "main_process_ip: 127.0.0.1  # placeholder: launch passes --main_process_ip \"$MASTER_ADDR\"\n";
    out += "main_process_port: 29500\n";
  }
  out += "main_training_function: main\n";
  // fp8 runs as bf16 here (hf_warnings): accelerate's fp8 needs an fp8 backend configured beside it.
  const std::string mp = trains_in_bf16(p.training.precision) ? "bf16" : p.training.precision == Precision::Fp16 ? "fp16" : "'no'";
  out += "mixed_precision: " + mp + "\n";
  out += "num_machines: " + std::to_string(nodes) + "\n";
  out += "num_processes: " + std::to_string(p.hardware.num_gpus) + "  # all processes of all machines\n";
  out += "rdzv_backend: static\n";
  out += "same_network: true\n";
  out += "use_cpu: false\n";
  if (kind == HfParallel::Fsdp) {
    const OrderedJson f = hf_fsdp_config(p, true);
    const std::string strategy = fsdp_sharding_strategy(p);
    out += "fsdp_config:\n";
    out += "  fsdp_activation_checkpointing: " + f["fsdp_activation_checkpointing"].dump() + "\n";
    out += "  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP  # one unit per decoder layer (the model's _no_split_modules), as priced\n";
    out += "  fsdp_backward_prefetch: " + std::string(f["fsdp_backward_prefetch"] == "backward_pre" ? "BACKWARD_PRE" : "NO_PREFETCH") + "\n";
    out += "  fsdp_cpu_ram_efficient_loading: true\n";
    out += "  fsdp_forward_prefetch: false\n";
    out += std::string("  fsdp_offload_params: ") + (p.training.offload_optimizer ? "true" : "false") + "\n";
    // FSDP1 takes the strategy from fsdp_sharding_strategy when given (accelerate launch defaults it to FULL_SHARD and the
    // plugin prefers it over reshard_after_forward): both say the same.
    out += "  fsdp_reshard_after_forward: " + strategy + "\n";
    out += "  fsdp_sharding_strategy: " + strategy + "\n";
    out += "  fsdp_state_dict_type: SHARDED_STATE_DICT\n";
    out += "  fsdp_sync_module_states: true\n";
    out += "  fsdp_use_orig_params: true\n";
    out += "  fsdp_version: 1\n";
  }
  if (kind == HfParallel::DeepSpeed) {
    // With a config file, accelerate refuses its own ZeRO keys (zero_stage, offload, gradient_* ...): the file holds them.
    out += "deepspeed_config:\n";
    out += "  deepspeed_config_file: ds_config.json  # relative to the working folder; launch passes the absolute path\n";
    out += "  deepspeed_multinode_launcher: standard  # torchrun on each node, no pdsh\n";
    out += std::string("  zero3_init_flag: ") + (deepspeed_zero_stage(p.training) >= 3 ? "true" : "false") + "\n";
  }
  return out;
}

std::vector<Argument> accelerate_launch_arguments(const ExportPlan& p) {
  std::vector<Argument> a;
  a.push_back({"--config_file \"$CONFIG_DIR/accelerate_config.yaml\"", std::to_string(p.hardware.num_gpus) + " processes on " +
                                                                            std::to_string(p.hardware.num_nodes) +
                                                                            (p.hardware.num_nodes == 1 ? " machine" : " machines")});
  a.push_back({"--machine_rank \"$NODE_RANK\"", "0 on the first node"});
  if (p.hardware.num_nodes > 1) {
    a.push_back({"--main_process_ip \"$MASTER_ADDR\"", ""});
    a.push_back({"--main_process_port \"${MASTER_PORT:-29500}\"", ""});
  }
  if (hf_parallel(p) == HfParallel::DeepSpeed) a.push_back({"--deepspeed_config_file \"$CONFIG_DIR/ds_config.json\"", ""});
  return a;
}

std::vector<std::string> hf_warnings(const ExportPlan& p) {
  const TrainingSpec& t = p.training;
  const ParallelLayout& l = p.layout;
  const HfParallel kind = hf_parallel(p);
  std::vector<std::string> w;
  if (t.precision == Precision::Fp8)
    w.push_back("fp8: written as bf16 mixed precision; fp8 GEMMs need accelerate's fp8 recipe (Transformer Engine or torchao) set up beside it");
  if (t.recompute == Recompute::Selective)
    w.push_back("selective recompute has no Trainer switch: gradient checkpointing recomputes whole decoder layers (a longer step than priced)");
  if (l.tp > 1 || l.pp > 1 || l.cp > 1)
    w.push_back("tp " + std::to_string(l.tp) + ", pp " + std::to_string(l.pp) + ", cp " + std::to_string(l.cp) +
                ": the Trainer runs data parallelism only; these degrees are not in the files");
  if (p.model.is_moe() && l.ep > 1)
    w.push_back("ep " + std::to_string(l.ep) + ": Hugging Face modeling code keeps every expert on every rank (expert parallelism needs MegaBlocks "
                "or a Megatron stack)");
  if (kind == HfParallel::Fsdp && deepspeed_zero_stage(t) == 1)
    w.push_back("ZeRO-1: FSDP has no optimizer-only sharding; SHARD_GRAD_OP shards the gradients too (less memory than priced)");
  if (kind == HfParallel::Fsdp && t.offload_optimizer)
    w.push_back("FSDP's CPU offload moves parameters and gradients with the optimizer states (a slower step than priced)");
  if (kind == HfParallel::Fsdp && t.offload_optimizer && t.offload_fraction < 1)
    w.push_back("FSDP offloads all or nothing: the priced offload_optimizer_fraction is not honoured (everything goes to the CPU)");
  if (kind == HfParallel::Fsdp && l.dp_replicate > 1 && l.zero_shard_ranks() != p.gpus_per_node_used())
    w.push_back("dp_replicate " + std::to_string(l.dp_replicate) + ": FSDP's HYBRID_SHARD shards within each node (" +
                std::to_string(p.gpus_per_node_used()) + " GPUs), the plan within groups of " + std::to_string(l.zero_shard_ranks()));
  if (kind == HfParallel::DeepSpeed) warn_master_copy(p, "DeepSpeed (fp32 partitions of its bf16 engine)", w);
  if (kind == HfParallel::DeepSpeed && l.dp_replicate > 1 && deepspeed_zero_stage(t) < 3)
    w.push_back("dp_replicate " + std::to_string(l.dp_replicate) + ": DeepSpeed shards ZeRO-1/2 states over the whole data-parallel group");
  return w;
}

std::string hf_model_id(const ModelSpec& m) {
  // Presets cite their config as "Hugging Face org/name config.json".
  const std::string tag = "Hugging Face ";
  if (const std::size_t at = m.source.find(tag); at != std::string::npos) {
    const std::size_t start = at + tag.size();
    std::size_t end = start;
    while (end < m.source.size() && m.source[end] != ' ' && m.source[end] != ',' && m.source[end] != ';') ++end;
    const std::string id = m.source.substr(start, end - start);
    if (id.find('/') != std::string::npos && id.front() != '/' && id.back() != '/') return id;
  }
  return m.name;
}

std::string yaml_from_json(const OrderedJson& object, const std::vector<std::pair<std::string, std::string>>& notes) {
  std::string out;
  for (const auto& [key, value] : object.items()) {
    out += key + ": " + value.dump();
    for (const auto& [k, note] : notes)
      if (k == key) out += "  # " + note;
    out += "\n";
  }
  return out;
}

}  // namespace trainsim::export_detail
