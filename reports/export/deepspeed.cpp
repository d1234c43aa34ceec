// --to deepspeed: ds_config.json (batch, precision, ZeRO stage and buckets as priced, offload, activation
// checkpointing) and the `deepspeed` launcher line (launch_deepspeed.sh); and the deepspeed stack (a train.py that
// calls deepspeed.initialize) that launchers and schedulers start. Layouts with tp or pp > 1 run as Megatron-DeepSpeed
// (megatron_deepspeed.cpp).
#include <algorithm>
#include <nlohmann/json.hpp>

#include "launch_stack.hpp"
#include "models/scenario/framework.hpp"
#include "vendor.hpp"

namespace trainsim {

namespace export_detail {

int deepspeed_zero_stage(const TrainingSpec& t) { return std::max(t.zero_stage, t.distributed_optimizer ? 1 : 0); }

std::string deepspeed_config_json(const ExportPlan& p, const std::string& target) {
  using OrderedJson = nlohmann::ordered_json;
  const TrainingSpec& t = p.training;
  const ParallelLayout& l = p.layout;
  const FrameworkTraits& fw = framework_for(t, l);
  const int stage = deepspeed_zero_stage(t);
  // JSON has no comments: the header goes into a "comment" key, which DeepSpeed ignores.
  OrderedJson c;
  c["comment"] = header_lines(p, target);
  c["train_batch_size"] = t.global_batch_size;
  c["train_micro_batch_size_per_gpu"] = l.micro_batch_size;
  c["gradient_accumulation_steps"] = l.gradient_accumulation_steps;
  c["gradient_clipping"] = 1.0;
  const bool bf16 = t.precision == Precision::Bf16 || t.precision == Precision::Fp8;
  c["bf16"] = {{"enabled", bf16}};
  if (t.precision == Precision::Fp16)
    c["fp16"] = {{"enabled", true}, {"loss_scale", 0}, {"initial_scale_power", 16}, {"loss_scale_window", 1000}, {"hysteresis", 2}, {"min_loss_scale", 1}};
  else
    c["fp16"] = {{"enabled", false}};
  OrderedJson zero;
  zero["stage"] = stage;
  // The overlap and bucket sizes the step time was priced with (the framework's traits; Hugging Face's "auto" sizes are
  // hidden_size² for the reduce bucket and 0.9 hidden_size² for ZeRO-3's prefetch, written here as numbers).
  zero["overlap_comm"] = stage >= 3 ? fw.overlap_param_gather : fw.overlap_grad_reduce;
  zero["contiguous_gradients"] = true;
  const double hidden = p.model.hidden_size;
  zero["reduce_bucket_size"] = static_cast<long long>(fw.grad_bucket(hidden));
  if (stage >= 1 && stage <= 2) zero["allgather_bucket_size"] = static_cast<long long>(fw.grad_bucket(hidden));
  if (stage >= 3 && fw.param_gather_unit == GatherUnit::Bucket) zero["stage3_prefetch_bucket_size"] = static_cast<long long>(fw.param_gather_bucket(hidden));
  if (t.offload_optimizer) zero["offload_optimizer"] = {{"device", to_string(t.optimizer_offload_device)}, {"pin_memory", true}};
  if (t.offload_optimizer && t.optimizer_offload_device == OffloadDevice::Nvme) zero["offload_optimizer"]["nvme_path"] = "/local_nvme";
  if (t.params_offloaded() != OffloadDevice::None) {
    zero["offload_param"] = {{"device", to_string(t.params_offloaded())}, {"pin_memory", true}};
    if (t.params_offloaded() == OffloadDevice::Nvme) zero["offload_param"]["nvme_path"] = "/local_nvme";
  }
  if (t.offload_optimizer && t.offload_fraction < 1) zero["offload_optimizer"]["ratio"] = t.offload_fraction;  // ZeRO-Offload++'s partial offload
  // Hybrid sharding at ZeRO-3: MiCS shards within groups of this many ranks and replicates across them.
  if (l.dp_replicate > 1 && stage >= 3) zero["mics_shard_size"] = l.zero_shard_ranks();
  c["zero_optimization"] = zero;
  if (t.optimizer != OptimizerKind::Adam8bit)
    c["optimizer"] = {{"type", t.optimizer == OptimizerKind::Sgd ? "SGD" : t.optimizer_name == "adam" ? "Adam" : "AdamW"}};
  if (t.recompute != Recompute::None)
    c["activation_checkpointing"] = {{"partition_activations", false}, {"cpu_checkpointing", false}, {"contiguous_memory_optimization", false}};
  c["steps_per_print"] = 10;
  c["wall_clock_breakdown"] = false;
  return c.dump(2) + "\n";
}

}  // namespace export_detail

namespace {

using namespace export_detail;

std::vector<std::string> deepspeed_warnings(const ExportPlan& p) {
  const ParallelLayout& l = p.layout;
  const TrainingSpec& t = p.training;
  std::vector<std::string> w;
  if (l.cp > 1)
    w.push_back("cp " + std::to_string(l.cp) + ": DeepSpeed has no context parallelism; DeepSpeed-Ulysses (sequence_parallel_size) splits "
                "attention by heads instead and needs model changes");
  if (p.model.is_moe() && (l.ep > 1 || l.etp > 1))
    w.push_back("MoE: build the experts with deepspeed.moe.layer.MoE(ep_size=" + std::to_string(l.ep) + ") in the model");
  if (l.dp_replicate > 1 && deepspeed_zero_stage(t) < 3)
    w.push_back("dp_replicate " + std::to_string(l.dp_replicate) + ": DeepSpeed shards ZeRO-1/2 states over the whole data-parallel group "
                "(hybrid sharding only at stage 3, as MiCS): states take " + std::to_string(l.dp_replicate) + "x less memory than planned, "
                "and the gradient reduce spans all ranks");
  if (t.precision == Precision::Fp8) w.push_back("DeepSpeed has no fp8 switch: ds_config enables bf16; fp8 GEMMs need Transformer Engine layers");
  if (t.optimizer == OptimizerKind::Adam8bit)
    w.push_back("8-bit Adam is not a DeepSpeed optimizer: pass bitsandbytes' AdamW8bit to deepspeed.initialize(optimizer=...)");
  if (t.moment_precision != Precision::Fp32 || t.master_precision != Precision::Fp32)
    w.push_back("DeepSpeed keeps fp32 Adam moments and master weights: the optimizer states take more memory than planned");
  if (t.paged_optimizer) w.push_back("paged optimizers are bitsandbytes': pass its PagedAdamW to deepspeed.initialize(optimizer=...)");
  if (t.recompute == Recompute::Selective)
    w.push_back("selective recompute (attention core only) has no DeepSpeed switch: checkpoint the attention core in the model");
  if (t.uses_adapters()) w.push_back(std::string(to_string(t.mode)) + ": wrap the model with PEFT before deepspeed.initialize");
  if ((t.offload_optimizer && t.optimizer_offload_device == OffloadDevice::Nvme) || t.params_offloaded() == OffloadDevice::Nvme)
    w.push_back("nvme_path /local_nvme is a placeholder: point it at each node's local NVMe mount (priced at the local-nvme tier's bandwidth)");
  warn_master_copy(p, "DeepSpeed (fp32 partitions of its bf16 engine)", w);
  return w;
}

StackLaunch deepspeed_stack(const ExportPlan& p) {
  const TrainingSpec& t = p.training;
  StackLaunch s;
  s.stack = "a DeepSpeed train.py (Hugging Face transformers model, deepspeed.initialize)";
  s.needs = "your train.py ($TRAIN_SCRIPT), which reads --deepspeed_config (deepspeed.add_config_arguments)";
  s.files = {{"ds_config.json", deepspeed_config_json(p, "deepspeed")}};
  s.program = "\"${TRAIN_SCRIPT:-train.py}\"";
  s.args_name = "DEEPSPEED_ARGS";
  s.args = {{"--deepspeed_config \"$CONFIG_DIR/ds_config.json\"",
             "batch " + std::to_string(t.global_batch_size) + " = micro " + std::to_string(p.layout.micro_batch_size) + " x dp " +
                 std::to_string(p.layout.dp) + " x accumulation " + std::to_string(p.layout.gradient_accumulation_steps) + ", ZeRO " +
                 std::to_string(deepspeed_zero_stage(t))}};
  if (vendor_launch(p.hardware.gpu).vendor == "huawei") {
    s.env.emplace_back("DS_ACCELERATOR", "npu");
    s.env_notes.push_back("DeepSpeed on Ascend through torch_npu");
  }
  s.warnings = deepspeed_warnings(p);
  if (t.recompute == Recompute::Full)
    s.warnings.push_back("full recompute: enable activation checkpointing in the model (model.gradient_checkpointing_enable() for Hugging Face models)");
  return s;
}

class DeepSpeedExporter final : public Exporter {
 public:
  std::string name() const override { return "deepspeed"; }
  std::string description() const override {
    return "DeepSpeed ds_config.json + deepspeed launcher line (launch_deepspeed.sh); tp or pp > 1 as Megatron-DeepSpeed";
  }
  std::string framework_for(const ExportPlan& p) const override {
    return p.layout.tp > 1 || p.layout.pp > 1 ? "megatron-deepspeed" : "deepspeed";
  }

  std::vector<ExportFile> render(const ExportPlan& p) const override {
    const StackLaunch st = stack_launch(p, name());
    const int nodes = p.hardware.num_nodes, per_node = p.gpus_per_node_used();
    // DeepSpeed's own launcher starts the processes of every node over ssh from this one, as the hostfile lists them.
    std::string launcher = "deepspeed";
    if (nodes > 1) launcher += " --hostfile \"${HOSTFILE:-hostfile}\"";
    launcher += " --num_nodes " + std::to_string(nodes) + " --num_gpus " + std::to_string(per_node);
    std::vector<std::string> notes{"Run once, on the first node: the deepspeed launcher starts " + std::to_string(per_node) + " processes on " +
                                   (nodes == 1 ? std::string("this node.") : "each of the " + std::to_string(nodes) + " nodes.")};
    if (nodes > 1) notes.push_back("hostfile: one line per node, e.g. \"node001 slots=" + std::to_string(per_node) + "\" (" + std::to_string(nodes) + " lines).");
    if (p.training.optimizer != OptimizerKind::Adam8bit)
      notes.push_back("ds_config.json's optimizer has DeepSpeed's default parameters: add \"params\" (lr, betas, weight_decay); trainsim does not plan them.");
    std::vector<ExportFile> files = st.files;
    files.push_back({"launch_deepspeed.sh", launch_file(p, name(), st, notes, stack_script(p, st, launcher, "$(cd \"$(dirname \"$0\")\" && pwd)", "\"$@\""))});
    return files;
  }
};

const RegisterExporter registered{std::make_unique<DeepSpeedExporter>()};
const RegisterStack stack{"deepspeed", deepspeed_stack};

}  // namespace
}  // namespace trainsim
