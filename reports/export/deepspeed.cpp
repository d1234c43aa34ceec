// --to deepspeed: ds_config.json (batch, precision, ZeRO stage, offload, activation checkpointing) and
// the `deepspeed` launcher line (launch_deepspeed.sh).
#include <algorithm>
#include <nlohmann/json.hpp>

#include "export_registry.hpp"

namespace trainsim {
namespace {

using namespace export_detail;
using OrderedJson = nlohmann::ordered_json;

// DeepSpeed's ZeRO stage for the plan: Megatron's distributed optimizer shards optimizer states = stage 1.
int deepspeed_zero_stage(const TrainingSpec& t) { return std::max(t.zero_stage, t.distributed_optimizer ? 1 : 0); }

std::vector<std::string> deepspeed_warnings(const ExportPlan& p) {
  const ParallelLayout& l = p.layout;
  const TrainingSpec& t = p.training;
  std::vector<std::string> w;
  if (l.tp > 1 || l.pp > 1)
    w.push_back("tp " + std::to_string(l.tp) + " / pp " + std::to_string(l.pp) +
                ": DeepSpeed has no tensor parallelism of its own and its pipeline engine needs a deepspeed.pipe.PipelineModule; run this "
                "layout with Megatron-DeepSpeed (pretrain_gpt.py --tensor-model-parallel-size " + std::to_string(l.tp) +
                " --pipeline-model-parallel-size " + std::to_string(l.pp) + " --deepspeed --deepspeed_config ds_config.json)");
  if (l.pp > 1 && deepspeed_zero_stage(t) >= 2) w.push_back("DeepSpeed's pipeline engine supports ZeRO stage 0 or 1 only");
  if (l.vpp > 1) w.push_back("DeepSpeed's pipeline engine runs one model chunk per rank: no interleaved (vpp " + std::to_string(l.vpp) + ") schedule");
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
  if (t.recompute == Recompute::Selective)
    w.push_back("selective recompute (attention core only) has no DeepSpeed switch: checkpoint the attention core in the model");
  if (t.uses_adapters()) w.push_back(std::string(to_string(t.mode)) + ": wrap the model with PEFT before deepspeed.initialize");
  return w;
}

class DeepSpeedExporter final : public Exporter {
 public:
  std::string name() const override { return "deepspeed"; }
  std::string description() const override { return "DeepSpeed ds_config.json + deepspeed launcher line (launch_deepspeed.sh)"; }

  std::vector<ExportFile> render(const ExportPlan& p) const override {
    const TrainingSpec& t = p.training;
    const ParallelLayout& l = p.layout;
    // JSON has no comments: the header goes into a "comment" key, which DeepSpeed ignores.
    OrderedJson c;
    c["comment"] = header_lines(p, name());
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
    zero["stage"] = deepspeed_zero_stage(t);
    // A plan estimated for DeepSpeed (training.framework deepspeed / megatron-deepspeed) exports the traits it was
    // priced with; otherwise DeepSpeed runs overlapped, as trainsim's other frameworks were priced.
    const FrameworkTraits& fw = t.framework;
    const bool deepspeed_priced = fw.name == "deepspeed" || fw.name == "megatron-deepspeed";
    zero["overlap_comm"] = deepspeed_priced ? (deepspeed_zero_stage(t) >= 3 ? fw.overlap_param_gather : fw.overlap_grad_reduce) : true;
    zero["contiguous_gradients"] = true;
    if (deepspeed_priced) {
      zero["reduce_bucket_size"] = static_cast<long long>(fw.grad_bucket_elements);
      if (fw.param_gather_unit == GatherUnit::Bucket) zero["stage3_prefetch_bucket_size"] = static_cast<long long>(fw.param_gather_bucket_elements);
    }
    if (t.offload_optimizer) zero["offload_optimizer"] = {{"device", "cpu"}, {"pin_memory", true}};
    // Hybrid sharding at ZeRO-3: MiCS shards within groups of this many ranks and replicates across them.
    if (l.dp_replicate > 1 && deepspeed_zero_stage(t) >= 3) zero["mics_shard_size"] = l.zero_shard_ranks();
    c["zero_optimization"] = zero;
    if (t.optimizer != OptimizerKind::Adam8bit)
      c["optimizer"] = {{"type", t.optimizer == OptimizerKind::Sgd ? "SGD" : t.optimizer_name == "adam" ? "Adam" : "AdamW"}};
    if (t.recompute != Recompute::None)
      c["activation_checkpointing"] = {{"partition_activations", false}, {"cpu_checkpointing", false}, {"contiguous_memory_optimization", false}};
    c["steps_per_print"] = 10;
    c["wall_clock_breakdown"] = false;

    const int nodes = p.hardware.num_nodes, per_node = p.gpus_per_node_used();
    std::string sh = "#!/usr/bin/env bash\n" + comment_header(p, name());
    sh += "#\n# train.py: your script; it calls deepspeed.initialize() and reads --deepspeed_config (deepspeed.add_config_arguments).\n";
    sh += "# ds_config.json sets the batch (" + std::to_string(t.global_batch_size) + " = micro " + std::to_string(l.micro_batch_size) + " x dp " +
          std::to_string(l.dp) + " x accumulation " + std::to_string(l.gradient_accumulation_steps) + "), precision and ZeRO stage " +
          std::to_string(deepspeed_zero_stage(t)) + (t.zero_stage == 0 && t.distributed_optimizer ? " (= Megatron's distributed optimizer)" : "") +
          ".\n";
    if (t.optimizer != OptimizerKind::Adam8bit)
      sh += "# Its optimizer has DeepSpeed's default parameters: add \"params\" (lr, betas, weight_decay); trainsim does not plan them.\n";
    if (t.recompute == Recompute::Full)
      sh += "# Full recompute: enable activation checkpointing in the model (model.gradient_checkpointing_enable() for Hugging Face models).\n";
    for (const auto& w : deepspeed_warnings(p)) sh += "# WARNING: " + w + "\n";
    sh += "set -euo pipefail\n";
    for (const auto& [key, value] : launch_environment(p)) sh += "export " + key + "=" + value + "  # Megatron-DeepSpeed with tp > 1\n";
    if (nodes > 1) {
      sh += "# hostfile: one line per node, e.g. \"node001 slots=" + std::to_string(per_node) + "\" (" + std::to_string(nodes) + " lines).\n";
      sh += "deepspeed --hostfile \"${HOSTFILE:-hostfile}\" --num_nodes " + std::to_string(nodes) + " --num_gpus " + std::to_string(per_node) +
            " train.py --deepspeed_config ds_config.json \"$@\"\n";
    } else {
      sh += "deepspeed --num_nodes 1 --num_gpus " + std::to_string(per_node) + " train.py --deepspeed_config ds_config.json \"$@\"\n";
    }
    return {{"ds_config.json", c.dump(2) + "\n"}, {"launch_deepspeed.sh", sh}};
  }
};

const RegisterExporter registered{std::make_unique<DeepSpeedExporter>()};

}  // namespace
}  // namespace trainsim
