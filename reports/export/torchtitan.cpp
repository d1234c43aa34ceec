// --to torchtitan: torchtitan's TOML job config (torchtitan.toml) and its torchrun launch (launch_torchtitan.sh); and the
// fsdp2 stack (-m torchtitan.train --job.config_file) that launchers and schedulers start for fsdp2 plans. Field names are
// torchtitan v0.2.2's (torchtitan/config/job_config.py, commit 73a0e697), the last release that reads TOML: its main branch
// (b5bcd76c) replaced the TOML files by Python config functions (--module / --config, commit 76d5c72e).
#include <algorithm>

#include "launch_stack.hpp"
#include "models/compute/transformer.hpp"
#include "models/scenario/framework.hpp"

namespace trainsim {
namespace {

using namespace export_detail;

std::string s(long long v) { return std::to_string(v); }
const char* flag(bool b) { return b ? "true" : "false"; }
std::string quoted(const std::string& v) { return yaml_quote(v); }  // a TOML basic string escapes like a YAML double-quoted one

// torchtitan's registered models and flavors (torchtitan/models/*/__init__.py at v0.2.2), matched by family and shape.
struct Flavor {
  const char* family;  // trainsim preset names start with it
  const char* name;    // torchtitan [model] name
  const char* flavor;
  int layers, hidden;
};
constexpr Flavor kFlavors[] = {
    {"llama3", "llama3", "8B", 32, 4096},          {"llama3", "llama3", "70B", 80, 8192},          {"llama3", "llama3", "405B", 126, 16384},
    {"qwen3", "qwen3", "0.6B", 28, 1024},          {"qwen3", "qwen3", "1.7B", 28, 2048},           {"qwen3", "qwen3", "4B", 36, 2560},
    {"qwen3", "qwen3", "8B", 36, 4096},            {"qwen3", "qwen3", "14B", 40, 5120},            {"qwen3", "qwen3", "32B", 64, 5120},
    {"qwen3", "qwen3", "30B-A3B", 48, 2048},       {"qwen3", "qwen3", "235B-A22B", 94, 4096},      {"deepseek", "deepseek_v3", "16B", 27, 2048},
    {"deepseek", "deepseek_v3", "236B", 60, 5120}, {"deepseek", "deepseek_v3", "671B", 61, 7168},
};

const Flavor* torchtitan_flavor(const ModelSpec& m) {
  for (const Flavor& f : kFlavors)
    if (m.name.rfind(f.family, 0) == 0 && m.num_hidden_layers == f.layers && m.hidden_size == f.hidden) return &f;
  return nullptr;
}

// The ZeRO stage torchtitan runs: FSDP2 (fully_shard) for ZeRO-2/3; DDP only as the one parallelism (parallelize.py refuses
// DDP beside tp, pp or cp); no ZeRO-1.
int torchtitan_zero(const ExportPlan& p) {
  const ParallelLayout& l = p.layout;
  const int stage = std::max(p.training.zero_stage, p.training.distributed_optimizer ? 1 : 0);
  if (stage == 0 && l.model_parallel() == 1) return 0;
  return std::max(stage, 2);
}

std::vector<std::string> torchtitan_warnings(const ExportPlan& p) {
  const TrainingSpec& t = p.training;
  const ParallelLayout& l = p.layout;
  const FrameworkTraits& fw = framework_for(t, l);
  const int stage = std::max(t.zero_stage, t.distributed_optimizer ? 1 : 0);
  std::vector<std::string> w;
  switch (t.mode) {
    case TrainingMode::Pretrain: break;
    case TrainingMode::Sft:
      w.push_back("sft: torchtitan trains the language-model loss on its registered datasets; register yours and load the base weights "
                  "(checkpoint.initial_load_path, initial_load_in_hf)");
      break;
    case TrainingMode::Lora:
    case TrainingMode::Qlora:
      w.push_back(std::string(to_string(t.mode)) + ": torchtitan has no adapters; it trains every weight (more memory than priced)");
      break;
    case TrainingMode::Dpo: w.push_back("dpo: torchtitan has no preference loss; this trains the language-model loss"); break;
    case TrainingMode::Ppo:  // RL modes are refused before an export (require_supervised_mode)
    case TrainingMode::Grpo: break;
  }
  if (stage == 0 && l.model_parallel() > 1)
    w.push_back("ZeRO 0 beside tp, pp or cp: torchtitan's DDP runs alone, so the data-parallel ranks shard with FSDP2 (reshard never, ZeRO-2)");
  if (stage == 1) w.push_back("ZeRO-1: torchtitan has no optimizer-only sharding; FSDP2 without resharding (ZeRO-2) shards gradients too");
  if (t.offload_optimizer) w.push_back("training.enable_cpu_offload moves parameters and gradients to the CPU with the optimizer states");
  if (t.offload_optimizer && t.offload_fraction < 1) w.push_back("torchtitan offloads all or nothing: the priced offload_optimizer_fraction is not honoured");
  if ((t.offload_optimizer && t.optimizer_offload_device == OffloadDevice::Nvme) || t.params_offloaded() == OffloadDevice::Nvme)
    w.push_back("NVMe offload is DeepSpeed's (ZeRO-Infinity): torchtitan offloads to host memory only (more host memory than priced)");
  if (t.precision == Precision::Fp16) w.push_back("fp16: torchtitan's mixed precision is bfloat16 or float32; written as bfloat16");
  if (t.paged_optimizer) w.push_back("paged optimizers are bitsandbytes': torchtitan's AdamW keeps its states on the GPU");
  if (t.optimizer == OptimizerKind::Adam8bit) w.push_back("8-bit Adam is not a torchtitan optimizer: AdamW keeps fp32 states (more memory than priced)");
  if (t.optimizer == OptimizerKind::Sgd) w.push_back("SGD is not a torchtitan optimizer (Adam, AdamW): written as AdamW");
  if (l.tp > 1 && !l.sequence_parallel) w.push_back("torchtitan always runs tensor parallelism with sequence parallelism");
  if (l.tp_comm_overlap && l.tp > 1 && !(fw.fused_norm && fw.fused_activation))
    w.push_back("TP communication overlap is torchtitan's async TP, which needs torch.compile: left off as the plan runs eager");
  if (l.dp_replicate > 1 && stage < 2)
    w.push_back("dp_replicate " + s(l.dp_replicate) + " with ZeRO " + s(stage) + ": written as HSDP (replicate x shard)");
  if (const long long divisor = 2LL * l.tp * l.cp; (l.tp > 1 || l.cp > 1) && t.seq_len % divisor != 0)
    w.push_back("seq_len " + s(t.seq_len) + " must divide by tp x 2 cp = " + s(divisor) + " in torchtitan");
  if (p.model.is_moe() && l.etp != 1 && l.etp != l.tp) w.push_back("torchtitan takes expert tensor parallelism 1 or equal to tp");
  warn_master_copy(p, "torchtitan (fp32 FSDP shards)", w);
  return w;
}

std::string torchtitan_toml(const ExportPlan& p, const std::string& target) {
  const ModelSpec& m = p.model;
  const TrainingSpec& t = p.training;
  const ParallelLayout& l = p.layout;
  const FrameworkTraits& fw = framework_for(t, l);
  const int zero = torchtitan_zero(p);
  std::string out = comment_header(p, target) + "#\n";
  out += "# torchtitan v0.2.2 job config: torchrun ... -m torchtitan.train --job.config_file torchtitan.toml (launch_torchtitan.sh).\n";
  out += "# torchtitan's main branch no longer reads TOML (Python configs through --module / --config): use v0.2.2, or carry these\n";
  out += "# values into a config function there.\n";

  out += "\n[job]\n";
  out += "dump_folder = \"./outputs\"\n";
  out += "description = " + quoted(p.job_name + ": trainsim export of " + m.name) + "\n";

  out += "\n[model]\n";
  if (const Flavor* f = torchtitan_flavor(m)) {
    out += "name = \"" + std::string(f->name) + "\"  # torchtitan's model for " + m.name + "\n";
    out += "flavor = \"" + std::string(f->flavor) + "\"\n";
  } else {
    out += "name = \"llama3\"  # placeholder: torchtitan has no registered model shaped like " + m.name + "; register one\n";
    out += "flavor = " + quoted(m.name) + "  # placeholder\n";
  }
  out += "hf_assets_path = \"./assets/hf/" + m.name + "\"  # tokenizer (and weights): scripts/download_hf_assets.py\n";
  if (t.precision == Precision::Fp8) out += "converters = [\"quantize.linear.float8\"]  # fp8 GEMMs through torchao Float8Linear, as priced\n";

  out += "\n[optimizer]\n";
  out += "name = \"AdamW\"\n";
  out += "lr = 3e-4  # not planned by trainsim: set yours\n";

  out += "\n[training]\n";
  if (l.pp > 1) {
    // The pipeline splits local_batch_size into micro-batches of pipeline_parallel_microbatch_size (pipeline_parallel.py): one
    // local batch holds every micro-batch of the step, so torchtitan's own accumulation is 1.
    out += "local_batch_size = " + s(static_cast<long long>(l.micro_batch_size) * l.gradient_accumulation_steps) + "  # micro-batch " +
           s(l.micro_batch_size) + " x " + s(l.gradient_accumulation_steps) + " pipeline micro-batches\n";
  } else {
    out += "local_batch_size = " + s(l.micro_batch_size) + "  # per data-parallel rank and micro-step\n";
  }
  // train.py: gradient accumulation steps = global_batch_size / (local_batch_size x data-parallel degree).
  out += "global_batch_size = " + s(t.global_batch_size) + "  # = micro " + s(l.micro_batch_size) + " x dp " + s(l.dp) + " x accumulation " +
         s(l.gradient_accumulation_steps) + "\n";
  out += "seq_len = " + s(t.seq_len) + "\n";
  if (const long long iters = p.train_iterations(); iters > 0) out += "steps = " + s(iters) + "  # the run's optimizer steps, as priced\n";
  out += "max_norm = 1.0\n";
  out += std::string("mixed_precision_param = \"") + (t.precision == Precision::Fp32 ? "float32" : "bfloat16") + "\"\n";
  out += "mixed_precision_reduce = \"float32\"\n";
  if (t.offload_optimizer) out += "enable_cpu_offload = true  # FSDP CPU offload: parameters, gradients and optimizer states\n";
  out += "dataset = \"c4\"  # placeholder: your dataset in torchtitan's registry\n";

  out += "\n[parallelism]\n";
  if (zero == 0) {
    out += "data_parallel_replicate_degree = " + s(l.dp) + "  # DDP\n";
    out += "data_parallel_shard_degree = 1\n";
  } else {
    out += "data_parallel_replicate_degree = " + s(l.dp_replicate) + (l.dp_replicate > 1 ? "  # HSDP: replicas of the shards\n" : "\n");
    out += "data_parallel_shard_degree = " + s(l.dp / std::max(1, l.dp_replicate)) + "  # FSDP2 shards over these ranks x cp\n";
    // "default" reshards after forward except under pipeline parallelism (parallelize.py apply_fsdp), as the fsdp2 preset prices.
    out += std::string("fsdp_reshard_after_forward = \"") + (zero >= 3 ? "default" : "never") + "\"  # ZeRO-" + s(zero) + "\n";
  }
  out += "tensor_parallel_degree = " + s(l.tp) + "\n";
  if (l.tp > 1 && l.tp_comm_overlap && fw.fused_norm && fw.fused_activation) out += "enable_async_tensor_parallel = true\n";
  out += "pipeline_parallel_degree = " + s(l.pp) + "\n";
  if (l.pp > 1) {
    const char* schedule = l.schedule == Schedule::Gpipe ? "GPipe" : l.vpp > 1 ? "Interleaved1F1B" : "1F1B";
    out += std::string("pipeline_parallel_schedule = \"") + schedule + "\"\n";
    out += "pipeline_parallel_microbatch_size = " + s(l.micro_batch_size) + "\n";
    // The layers of each (virtual) stage as priced (transformer.hpp layers_in_virtual_stage), named as torchtitan's decoder
    // models name them; torchtitan infers stages per rank from the list.
    const int stages = virtual_stages(l);
    out += "module_fqns_per_model_part = [\n";
    for (int v = 0; v < stages; ++v) {
      std::vector<std::string> names;
      if (v == 0) names.push_back("\"tok_embeddings\"");
      const int first = first_layer_of_virtual_stage(m.num_hidden_layers, l, v);
      for (int i = 0; i < layers_in_virtual_stage(m.num_hidden_layers, l, v); ++i) names.push_back("\"layers." + s(first + i) + "\"");
      if (v == stages - 1) {
        names.push_back("\"norm\"");
        names.push_back("\"output\"");
      }
      std::string line = "  [";
      for (std::size_t i = 0; i < names.size(); ++i) line += (i ? ", " : "") + names[i];
      out += line + "],\n";
    }
    out += "]\n";
  }
  out += "context_parallel_degree = " + s(l.cp) + "\n";
  if (m.is_moe()) {
    out += "expert_parallel_degree = " + s(l.ep) + "\n";
    out += "expert_tensor_parallel_degree = " + s(l.etp) + "\n";
  }

  out += "\n[activation_checkpoint]\n";
  switch (t.recompute) {
    case Recompute::None: out += "mode = \"none\"\n"; break;
    case Recompute::Full: out += "mode = \"full\"\n"; break;
    case Recompute::Selective:
      out += "mode = \"selective\"\n";
      out += "selective_ac_option = \"op\"  # per-op policy: every other matmul's output kept, as the fsdp2 preset prices\n";
      break;
  }

  out += "\n[checkpoint]\n";
  out += std::string("enable = ") + flag(p.checkpoint_interval_steps > 0) + "\n";
  out += "folder = \"checkpoint\"\n";
  if (p.checkpoint_interval_steps > 0) out += "interval = " + s(p.checkpoint_interval_steps) + "  # steps between checkpoints (trainsim reliability)\n";

  out += "\n[compile]\n";
  // The preset's eager kernels (unfused norm and activation) are what compile fuses; a scenario that prices them fused compiles.
  out += std::string("enable = ") + flag(fw.fused_norm && fw.fused_activation) + "\n";
  out += "components = [\"model\", \"loss\"]\n";
  return out;
}

StackLaunch torchtitan_stack(const ExportPlan& p) {
  StackLaunch st;
  st.stack = "torchtitan (-m torchtitan.train, FSDP2 with DTensor tensor, pipeline, context and expert parallelism)";
  st.needs = "torchtitan v0.2.2 (pip install torchtitan==0.2.2, or a checkout at that tag) and its tokenizer assets";
  st.files = {{"torchtitan.toml", torchtitan_toml(p, "torchtitan")}};
  st.program = "-m torchtitan.train";
  st.args_name = "TORCHTITAN_ARGS";
  st.args = {{"--job.config_file \"$CONFIG_DIR/torchtitan.toml\"", "--section.option flags after it override the file"}};
  st.env.emplace_back("PYTORCH_ALLOC_CONF", "\"${PYTORCH_ALLOC_CONF:-expandable_segments:True}\"");
  st.env_notes.push_back("as torchtitan's run_train.sh runs");
  st.warnings = torchtitan_warnings(p);
  return st;
}

class TorchtitanExporter final : public Exporter {
 public:
  std::string name() const override { return "torchtitan"; }
  std::string description() const override { return "torchtitan TOML job config (torchtitan.toml) + torchrun launch (launch_torchtitan.sh)"; }
  std::string framework_for(const ExportPlan&) const override { return "fsdp2"; }

  std::vector<ExportFile> render(const ExportPlan& p) const override {
    StackLaunch st = torchtitan_stack(p);
    st.files.front().content = torchtitan_toml(p, name());
    const int nodes = p.hardware.num_nodes;
    const std::vector<std::string> body = torchrun_script_body(p, st);
    const std::vector<std::string> notes{"Run this script on every node (" + s(nodes) + (nodes == 1 ? " node" : " nodes") +
                                         "; torchrun's c10d rendezvous at $MASTER_ADDR:29500 pairs them up)."};
    std::vector<ExportFile> files = st.files;
    files.push_back({"launch_torchtitan.sh", launch_file(p, name(), st, notes, body)});
    return files;
  }
};

const RegisterExporter registered{std::make_unique<TorchtitanExporter>()};
const RegisterStack stack{"fsdp2", torchtitan_stack};

}  // namespace
}  // namespace trainsim
