// --to ms-swift: ModelScope ms-swift command lines (launch_swift.sh): Megatron-SWIFT (`megatron pt|sft|rlhf`) for
// megatron-core plans and any plan with tp, pp, cp or ep > 1, else `swift pt|sft|rlhf` on the Hugging Face stack with
// DeepSpeed (ds_config.json) or FSDP (fsdp_config.json) as priced. ms-swift starts torchrun itself from NPROC_PER_NODE,
// NNODES, NODE_RANK, MASTER_ADDR and MASTER_PORT (swift/cli/main.py). Argument names are ms-swift 4's
// (modelscope/ms-swift 3602360a: swift/megatron/arguments/megatron_args.py, swift/arguments/): --tuner_type, --save_steps,
// --output_dir, --model; 3.x named them --train_type, --save_interval, --save and --load.
#include <algorithm>
#include <cmath>

#include "hugging_face.hpp"
#include "launch_stack.hpp"
#include "models/compute/recompute_policy.hpp"
#include "models/compute/transformer.hpp"
#include "models/core/json_reader.hpp"
#include "models/core/units.hpp"
#include "models/scenario/framework.hpp"
#include "vendor.hpp"

namespace trainsim {
namespace {

using namespace export_detail;

std::string s(long long v) { return std::to_string(v); }
const char* flag(bool b) { return b ? "true" : "false"; }

bool uses_megatron(const ExportPlan& p) { return p.framework == "megatron-core"; }

// `megatron pt|sft|rlhf` / `swift pt|sft|rlhf`.
std::string subcommand(const TrainingSpec& t) {
  switch (t.mode) {
    case TrainingMode::Pretrain: return "pt";
    case TrainingMode::Dpo: return "rlhf";
    case TrainingMode::Sft:
    case TrainingMode::Lora:
    case TrainingMode::Qlora:
    case TrainingMode::Ppo:  // RL modes are refused before an export (require_supervised_mode)
    case TrainingMode::Grpo: break;
  }
  return "sft";
}

bool all_linear(const LoraSpec& lora) {
  for (const char* m : {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"})
    if (std::find(lora.target_modules.begin(), lora.target_modules.end(), m) == lora.target_modules.end()) return false;
  return true;
}

// LoRA targets in Megatron's module names (linear_qkv, linear_proj, linear_fc1, linear_fc2), or all-linear.
std::string megatron_lora_targets(const LoraSpec& lora) {
  if (all_linear(lora)) return "all-linear";
  std::vector<std::string> out;
  auto add = [&out](const std::string& name) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  };
  for (const std::string& m : lora.target_modules) {
    if (m == "q_proj" || m == "k_proj" || m == "v_proj") add("linear_qkv");
    else if (m == "o_proj") add("linear_proj");
    else if (m == "gate_proj" || m == "up_proj") add("linear_fc1");
    else if (m == "down_proj") add("linear_fc2");
    else add(m);
  }
  return join(out, " ");
}

// Arguments both paths share: the model, the dataset, what is trained.
void add_common(std::vector<Argument>& a, const ExportPlan& p, bool megatron) {
  const TrainingSpec& t = p.training;
  if (t.mode == TrainingMode::Dpo)
    a.push_back({"--rlhf_type dpo", t.uses_adapters() ? "each sample a preference pair: the policy and the reference (the base, adapters off) run both sequences"
                                                      : "each sample a preference pair: the policy and a frozen reference copy run both sequences"});
  a.push_back({"--model \"${MODEL:-" + hf_model_id(p.model) + "}\"", "placeholder from the preset " + p.model.name + ": your model id or path"});
  a.push_back({"--dataset \"${DATASET:?set DATASET to your dataset id or path}\"", ""});
  a.push_back({std::string("--tuner_type ") + (t.uses_adapters() ? "lora" : "full"), ""});
  if (t.uses_adapters()) {
    a.push_back({"--lora_rank " + s(t.lora.rank), ""});
    a.push_back({"--lora_alpha " + s(std::llround(t.lora.alpha)), "an integer in ms-swift"});
    a.push_back({"--target_modules " + (megatron ? megatron_lora_targets(t.lora) : all_linear(t.lora) ? std::string("all-linear") : join(t.lora.target_modules, " ")), ""});
  }
  if (t.mode == TrainingMode::Dpo) {
    a.push_back({"--beta 0.1", "not planned by trainsim: DPO's usual value"});
    a.push_back({"--loss_type sigmoid", ""});
  }
}

// Sequence length and packing. A DPO pair is two sequences: packed, one pair fills 2 x seq_len tokens of a row.
void add_length(std::vector<Argument>& a, const ExportPlan& p) {
  const TrainingSpec& t = p.training;
  a.push_back({"--max_length " + s(t.seq_len), t.mode == TrainingMode::Dpo ? "each of the chosen and rejected sequences" : "sequence length as priced"});
  a.push_back({std::string("--packing ") + flag(t.packing), ""});
  if (t.packing && t.mode == TrainingMode::Dpo)
    a.push_back({"--packing_length " + s(2 * static_cast<long long>(t.seq_len)), "one pair (chosen + rejected) per packed row, as priced"});
}

std::vector<Argument> megatron_swift_arguments(const ExportPlan& p) {
  const ModelSpec& m = p.model;
  const TrainingSpec& t = p.training;
  const ParallelLayout& l = p.layout;
  const FrameworkTraits& fw = framework_for(t, l);
  std::vector<Argument> a;
  add_common(a, p, true);
  a.push_back({"--tensor_model_parallel_size " + s(l.tp), ""});
  a.push_back({"--pipeline_model_parallel_size " + s(l.pp), ""});
  // Uneven or slotted pipelines: the split the step was priced with (pipeline_split, layers_in_virtual_stage).
  if (const std::string layout = megatron_pipeline_layout(p); !layout.empty()) {
    a.push_back({"--pipeline_model_parallel_layout '" + layout + "'", s(virtual_stages(l)) + " virtual stages as priced"});
  } else if (const PipelineSplit split = pipeline_split(m.num_hidden_layers, l.pp); l.pp > 1 && !split.even) {
    a.push_back({"--decoder_first_pipeline_num_layers " + s(split.first), "uneven split as priced"});
    a.push_back({"--decoder_last_pipeline_num_layers " + s(split.last), ""});
  } else if (l.vpp > 1) {
    a.push_back({"--virtual_pipeline_model_parallel_size " + s(l.vpp), "interleaved 1F1B"});
  }
  a.push_back({"--context_parallel_size " + s(l.cp), ""});
  if (m.is_moe()) {
    a.push_back({"--expert_model_parallel_size " + s(l.ep), ""});
    a.push_back({"--expert_tensor_parallel_size " + s(l.etp), ""});
    a.push_back({std::string("--moe_grouped_gemm ") + flag(fw.moe_grouped_gemm), ""});
    if (fw.moe_dispatcher == MoeDispatcher::DeepEp) {
      a.push_back({"--moe_token_dispatcher_type flex", ""});
      a.push_back({"--moe_enable_deepep true", "DeepEP dispatch, as priced"});
    }
  }
  if (l.sequence_parallel && l.tp > 1) a.push_back({"--sequence_parallel true", ""});
  if (l.tp_comm_overlap && l.tp > 1) a.push_back({"--tp_comm_overlap true", ""});
  a.push_back({"--micro_batch_size " + s(l.micro_batch_size), ""});
  a.push_back({"--global_batch_size " + s(t.global_batch_size),
               "= micro " + s(l.micro_batch_size) + " x dp " + s(l.dp) + " x accumulation " + s(l.gradient_accumulation_steps)});
  add_length(a, p);
  switch (t.recompute) {
    case Recompute::None: a.push_back({"--recompute_granularity none", "ms-swift defaults to selective"}); break;
    case Recompute::Selective:
      a.push_back({"--recompute_granularity selective", ""});
      a.push_back({"--recompute_modules " + join(recompute_module_list(t.recompute_modules), " "), ""});
      break;
    case Recompute::Full:
      a.push_back({"--recompute_granularity full", ""});
      a.push_back({"--recompute_method uniform", ""});
      a.push_back({"--recompute_num_layers 1", ""});
      break;
  }
  switch (t.precision) {
    case Precision::Bf16: a.push_back({"--bf16 true", ""}); break;
    case Precision::Fp16: a.push_back({"--fp16 true", ""}); break;
    case Precision::Fp8:
      a.push_back({"--bf16 true", ""});
      a.push_back({"--fp8_format hybrid", "fp8 GEMMs through Transformer Engine"});
      break;
    case Precision::Fp32: a.push_back({"--bf16 false", ""}); break;
  }
  a.push_back({std::string("--attention_backend ") + (t.flash_attention ? "flash" : "unfused"), ""});
  a.push_back({std::string("--cross_entropy_loss_fusion ") + flag(fw.fused_cross_entropy), ""});
  a.push_back({std::string("--optimizer ") + (t.optimizer == OptimizerKind::Sgd ? "sgd" : "adam"), ""});
  // ms-swift turns the distributed optimizer on by default and both overlaps off; the step was priced with the framework's.
  const bool distributed = t.zero_stage >= 1 || t.distributed_optimizer;
  a.push_back({std::string("--use_distributed_optimizer ") + flag(distributed),
               distributed ? "optimizer states sharded over data-parallel ranks (ZeRO-1)" : "ZeRO 0"});
  if (t.zero_stage >= 2) {
    a.push_back({"--use_megatron_fsdp true", t.zero_stage >= 3 ? "ZeRO-3" : "ZeRO-2"});
    a.push_back({std::string("--data_parallel_sharding_strategy ") + (t.zero_stage >= 3 ? "optim_grads_params" : "optim_grads"), ""});
  }
  // ms-swift's gradient_accumulation_fusion (default true; off without apex): Megatron's fused weight-gradient
  // accumulation into main_grad, as priced.
  a.push_back({std::string("--gradient_accumulation_fusion ") + flag(wgrad_accumulation_bytes(t, l) > 0), "weight gradients accumulated as priced"});
  a.push_back({std::string("--overlap_grad_reduce ") + flag(fw.overlap_grad_reduce), ""});
  // Megatron gathers parameters only for a sharded optimizer, and overlaps that gather only with the reduce overlapped too.
  a.push_back({std::string("--overlap_param_gather ") + flag(distributed && fw.overlap_grad_reduce && fw.overlap_param_gather), ""});
  if (t.offload_optimizer) {
    a.push_back({"--optimizer_cpu_offload true", "optimizer states and step on the CPU, as priced"});
    a.push_back({"--optimizer_offload_fraction " + format_number(t.offload_fraction, 6), ""});
    // Megatron's precision-aware optimizer makes the fp32 master from its host copy; without it the GPU keeps it.
    a.push_back({std::string("--use_precision_aware_optimizer ") + flag(t.uses_precision_aware_optimizer()),
                 offload_master_on_device(t, l) ? "the fp32 master kept on the GPU, as priced" : "the fp32 master on the host only, as priced"});
  }
  if (const long long iters = p.train_iterations(); iters > 0) a.push_back({"--train_iters " + s(iters), "the run's optimizer steps, as priced"});
  if (p.checkpoint_interval_steps > 0) a.push_back({"--save_steps " + s(p.checkpoint_interval_steps), "steps between checkpoints (trainsim reliability)"});
  a.push_back({"--output_dir megatron_output/" + p.job_name, ""});
  return a;
}

std::vector<Argument> swift_arguments(const ExportPlan& p) {
  const TrainingSpec& t = p.training;
  const ParallelLayout& l = p.layout;
  const HfParallel kind = hf_parallel(p);
  std::vector<Argument> a;
  add_common(a, p, false);
  if (t.quantized_base()) {
    a.push_back({"--quant_method bnb", ""});
    a.push_back({"--quant_bits 4", "a 4-bit frozen base, as priced"});
    a.push_back({"--bnb_4bit_quant_type nf4", ""});
  }
  a.push_back({"--torch_dtype " + hf_load_dtype(p), t.uses_adapters() ? "the frozen base in the training precision, as priced"
                                                   : kind == HfParallel::DeepSpeed ? "DeepSpeed keeps its own fp32 master copy"
                                                                                   : "fp32 weights under mixed precision, as priced"});
  a.push_back({"--per_device_train_batch_size " + s(l.micro_batch_size), ""});
  a.push_back({"--gradient_accumulation_steps " + s(l.gradient_accumulation_steps),
               "global batch " + s(t.global_batch_size) + " = micro " + s(l.micro_batch_size) + " x dp " + s(l.dp) + " x accumulation " +
                   s(l.gradient_accumulation_steps)});
  if (const long long iters = p.train_iterations(); iters > 0) a.push_back({"--max_steps " + s(iters), "the run's optimizer steps, as priced"});
  add_length(a, p);
  // Packing and padding-free batches need FlashAttention in ms-swift (SftArguments._check_padding_free).
  if (t.packing) a.push_back({"--attn_impl flash_attn", ""});
  const bool checkpointing = t.recompute != Recompute::None && kind != HfParallel::Fsdp;
  a.push_back({std::string("--gradient_checkpointing ") + flag(checkpointing),
               kind == HfParallel::Fsdp && t.recompute != Recompute::None ? "FSDP checkpoints layers itself (fsdp_config.json)" : "ms-swift defaults to true"});
  a.push_back({std::string("--bf16 ") + flag(t.precision == Precision::Bf16 || t.precision == Precision::Fp8), ""});
  a.push_back({std::string("--fp16 ") + flag(t.precision == Precision::Fp16), ""});
  // TrainingArguments' optim; ms-swift leaves transformers' default (adamw_torch_fused from torch 2.8), the Adam priced.
  if (t.optimizer != OptimizerKind::Adam) a.push_back({"--optim " + hf_optim(t), ""});
  if (kind == HfParallel::DeepSpeed)
    a.push_back({"--deepspeed \"$CONFIG_DIR/ds_config.json\"", "ZeRO " + s(deepspeed_zero_stage(t)) + " as priced (ms-swift's zero" +
                                                                  s(deepspeed_zero_stage(t)) + " preset differs: overlap_comm and buckets)"});
  if (kind == HfParallel::Fsdp) a.push_back({"--fsdp \"$CONFIG_DIR/fsdp_config.json\"", fsdp_sharding_strategy(p)});
  if (p.checkpoint_interval_steps > 0) a.push_back({"--save_steps " + s(p.checkpoint_interval_steps), "steps between checkpoints (trainsim reliability)"});
  a.push_back({"--output_dir output/" + p.job_name, ""});
  return a;
}

std::vector<std::string> megatron_swift_warnings(const ExportPlan& p) {
  const TrainingSpec& t = p.training;
  const ParallelLayout& l = p.layout;
  std::vector<std::string> w;
  if (t.quantized_base()) w.push_back("QLoRA: Megatron-SWIFT has no 4-bit base; this trains LoRA over 16-bit weights (more memory than priced)");
  if (l.schedule == Schedule::Gpipe && l.pp > 1) w.push_back("Megatron has no GPipe schedule: it runs 1F1B (less activation memory than priced)");
  if (t.optimizer == OptimizerKind::Adam8bit) w.push_back("Megatron has no 8-bit Adam: --optimizer adam keeps fp32 states (more memory than priced)");
  if (l.dp_replicate > 1)
    w.push_back("dp_replicate " + s(l.dp_replicate) + ": ms-swift has no flag for hybrid sharding; states shard over all data-parallel ranks");
  if (t.precision == Precision::Fp8) w.push_back("fp8 needs Transformer Engine and a Hopper or newer GPU");
  if (t.mode == TrainingMode::Pretrain)
    w.push_back("megatron pt continues from --model's weights; from scratch add --perform_initialization true and give no weights");
  if (t.has_reference_copy() && framework_for(t, l).reference_model_gradient_buffer)
    w.push_back("priced with the DPO reference's DDP gradient buffer of ms-swift before #6027 (2025-09-30); ms-swift 4 builds the reference "
                "without it: one gradient element (4 bytes in fp32) per local parameter less than priced");
  warn_master_copy(p, "Megatron-SWIFT", w);
  return w;
}

class MsSwiftExporter final : public Exporter {
 public:
  std::string name() const override { return "ms-swift"; }
  std::string description() const override {
    return "ModelScope ms-swift command line (launch_swift.sh): megatron pt|sft|rlhf for Megatron layouts, swift pt|sft|rlhf with DeepSpeed or FSDP";
  }
  std::string framework_for(const ExportPlan& p) const override {
    const ParallelLayout& l = p.layout;
    if (p.framework == "megatron-core" || l.tp > 1 || l.pp > 1 || l.cp > 1 || l.ep > 1) return "megatron-core";
    return hf_framework(p);
  }

  std::vector<ExportFile> render(const ExportPlan& p) const override {
    const bool megatron = uses_megatron(p);
    const int nodes = p.hardware.num_nodes;
    const std::string command = std::string(megatron ? "megatron " : "swift ") + subcommand(p.training);
    std::vector<ExportFile> files;
    if (!megatron && hf_parallel(p) == HfParallel::DeepSpeed) files.push_back({"ds_config.json", hf_deepspeed_config(p, name())});
    if (!megatron && hf_parallel(p) == HfParallel::Fsdp) {
      // ms-swift's --fsdp file: TrainingArguments' fsdp option and fsdp_config (swift/arguments/sft_args.py _init_fsdp).
      nlohmann::ordered_json f;
      f["fsdp"] = hf_fsdp_option(p);
      f["fsdp_config"] = hf_fsdp_config(p, true);
      files.push_back({"fsdp_config.json", f.dump(2) + "\n"});
    }

    StackLaunch st;
    st.stack = megatron ? "Megatron-SWIFT (" + command + ", megatron-core through mcore-bridge)" : "ms-swift on transformers (" + command + ")";
    st.needs = "ms-swift 4 (pip install ms-swift)" + std::string(megatron ? " with Megatron-LM's megatron-core and Transformer Engine" : "") +
               (!megatron && hf_parallel(p) == HfParallel::DeepSpeed ? " and DeepSpeed" : "");
    st.warnings = megatron ? megatron_swift_warnings(p) : hf_warnings(p);
    st.notes.push_back("The learning rate is ms-swift's default (trainsim does not plan it): add --lr (megatron) or --learning_rate (swift).");

    std::vector<std::string> body;
    if (!files.empty()) body.push_back("CONFIG_DIR=\"${CONFIG_DIR:-$(cd \"$(dirname \"$0\")\" && pwd)}\"  # where " + files.front().path + " is");
    // swift/cli/main.py: any of these set makes ms-swift start torchrun with them.
    body.push_back("export NPROC_PER_NODE=" + s(p.gpus_per_node_used()) + "  # processes (GPUs) per node");
    body.push_back("export NNODES=" + s(nodes));
    body.push_back("export NODE_RANK=\"${NODE_RANK:-0}\"  # this node's rank, 0.." + s(nodes - 1));
    if (nodes > 1) body.push_back("export MASTER_ADDR=\"${MASTER_ADDR:?set MASTER_ADDR to the address of the first node}\"");
    else body.push_back("export MASTER_ADDR=\"${MASTER_ADDR:-127.0.0.1}\"");
    body.push_back("export MASTER_PORT=\"${MASTER_PORT:-29500}\"");
    body.push_back("export PYTORCH_CUDA_ALLOC_CONF=\"${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True}\"  # as ms-swift's examples run");
    for (const auto& line : vendor_launch(p.hardware.gpu).setup_lines) body.push_back(line);
    if (megatron)
      for (const LaunchVariable& v : launch_environment(p)) body.push_back("export " + v.name + "=" + v.value + "  # " + v.why);
    std::string array = bash_array("SWIFT_ARGS", megatron ? megatron_swift_arguments(p) : swift_arguments(p));
    array.pop_back();
    body.push_back(array);
    body.push_back(command + " \"${SWIFT_ARGS[@]}\" \"$@\"");
    const std::vector<std::string> notes{"Run this script on every node (" + s(nodes) + (nodes == 1 ? " node" : " nodes") + ") with NODE_RANK 0.." +
                                         s(nodes - 1) + (nodes > 1 ? " and MASTER_ADDR the first node's address" : "") + ": ms-swift starts torchrun with " +
                                         s(p.gpus_per_node_used()) + " processes per node."};
    files.push_back({"launch_swift.sh", launch_file(p, name(), st, notes, body)});
    return files;
  }
};

const RegisterExporter registered{std::make_unique<MsSwiftExporter>()};

}  // namespace
}  // namespace trainsim
