#pragma once
// `trainsim export`: one fixed plan rendered as the files that launch it on a framework or scheduler
// (Megatron-LM, DeepSpeed, Hugging Face Trainer, TRL, ms-swift, torchtitan, torchrun, Slurm, Volcano, Kubeflow), the
// framework it was priced for (launch_stack.hpp) on the vendor's hardware (vendor.hpp). Each target is an Exporter in its own
// .cpp that registers itself by name; the files are built as an OBJECT library so the linker keeps the
// registrations. Exporters format what the plan says; they compute nothing the models should.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/reliability/walltime.hpp"
#include "models/scenario/spec.hpp"

namespace trainsim {

struct ExportFile {
  std::string path;     // relative to the output folder
  std::string content;
};

// A resolved, fixed plan and the job settings that are not part of a scenario.
struct ExportPlan {
  ModelSpec model;
  TrainingSpec training;
  ParallelLayout layout;
  HardwareSpec hardware;  // num_nodes, gpus_per_node and num_gpus are the job's
  std::string job_name;   // DNS-1123 label: lowercase letters, digits and '-'
  std::string source;     // where the plan came from (for the header comment)
  // The framework preset the figures below were priced for, which the files launch (framework.hpp).
  std::string framework;
  // When the target runs another framework than the plan was priced for, export re-evaluates the plan there:
  // the plan's own framework and figures, for the header; empty / 0 otherwise.
  std::string plan_framework;
  double plan_step_time_s = 0, plan_mfu = 0;
  // Predictions for this plan; 0 when not known. The likely step range is the accuracy band's (accuracy_bands.hpp).
  double step_time_s = 0, mfu = 0, time_to_train_s = 0, iterations = 0;
  double step_time_low_s = 0, step_time_high_s = 0;
  // Memory on the most loaded GPU and the GPU's capacity, bytes; 0 when not known.
  double memory_bytes = 0, capacity_bytes = 0;
  // Optimizer steps between checkpoints: the interval that minimises the expected lost time under the default failure
  // rates (reliability.hpp, as trainsim reliability computes it); 0 when not known.
  long long checkpoint_interval_steps = 0;
  bool checkpoint_interval_given = false;  // the scenario's own interval in steps, not the computed one
  // The time limit to ask a scheduler for (time to train with the expected failure overhead and a margin);
  // limit_s = 0 when the time to train is not known.
  WalltimeEstimate walltime;
  // Scheduler settings (Volcano, Kubeflow).
  std::string queue = "default";
  std::string image;  // empty: the vendor's PyTorch image (vendor.hpp)
  // Extended resources each pod asks beside its devices: the site's RDMA device plugin's (--rdma-resource).
  std::vector<std::pair<std::string, int>> rdma_resources;
  // An elastic plan (the scenario's reliability.elastic): it continues on as few as elastic_min_nodes nodes (0: not
  // elastic), and its launcher may re-form the group max_restarts times (a shrink and a regrowth per expected failure).
  int elastic_min_nodes = 0;
  int max_restarts = 0;

  // GPUs the job uses on each node (all of them, or fewer on a single partial node).
  int gpus_per_node_used() const { return hardware.num_nodes > 0 ? hardware.num_gpus / hardware.num_nodes : hardware.num_gpus; }
  // Optimizer steps: the plan's prediction, else train_tokens / tokens per step (rounded up); 0 when unknown.
  long long train_iterations() const;
};

class Exporter {
 public:
  virtual ~Exporter() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  // The framework preset the target runs this plan with; empty: the plan's own (launchers and schedulers start
  // whatever stack the plan was priced for). Export re-evaluates the plan when it differs, and refuses it when
  // the layout cannot run or does not fit there.
  virtual std::string framework_for(const ExportPlan& plan) const;
  virtual std::vector<ExportFile> render(const ExportPlan& plan) const = 0;
  // The job names the target accepts (checked before rendering), and that rule in words for the error.
  // Default: what bash scripts and launchers take safely: 1-200 of A-Z a-z 0-9 . _ + -.
  virtual bool accepts_job_name(const std::string& name) const;
  virtual std::string job_name_rule() const;
};

// Every registered exporter, sorted by name.
const std::vector<std::unique_ptr<Exporter>>& exporters();
std::vector<std::string> exporter_names();
const Exporter* find_exporter(const std::string& name);  // nullptr when none has that name

struct RegisterExporter {
  explicit RegisterExporter(std::unique_ptr<Exporter> e);
};

// ---- Helpers the exporters share ----

namespace export_detail {

// Lines (without a comment marker) every file starts with: trainsim, the source, model and batch,
// the layout, the cluster, and the predicted step time / MFU / time to train when known.
std::vector<std::string> header_lines(const ExportPlan& plan, const std::string& target);
// The same lines, each prefixed with "# ".
std::string comment_header(const ExportPlan& plan, const std::string& target);
// "tp 8 (+sp), pp 8 x vpp 3 (interleaved), dp 16, cp 1, ep 1, etp 1, micro-batch 1, global batch 1536"
std::string layout_text(const ExportPlan& plan);

// One Megatron-LM (pretrain_gpt.py / megatron-core) argument with its value(s), as shell words.
struct Argument {
  Argument(std::string text_, std::string note_ = {}) : text(std::move(text_)), note(std::move(note_)) {}
  std::string text;  // e.g. "--tensor-model-parallel-size 8"
  std::string note;  // why, or what to replace (empty: none)
};
// Appends one argument with its note: add("--flag value", "why").
struct AddArgument {
  std::vector<Argument>& list;
  void operator()(std::string text, std::string note = {}) const { list.push_back({std::move(text), std::move(note)}); }
};
std::vector<Argument> megatron_arguments(const ExportPlan& plan);
// The batch, sequence and model-shape arguments that Megatron-LM and Megatron-DeepSpeed spell alike (--micro-batch-size
// ... --num-attention-heads).
std::vector<Argument> megatron_shape_arguments(const ExportPlan& plan);
// Megatron's --pipeline-model-parallel-layout for the split the step was priced with, one "|"-separated entry per
// virtual stage (E embedding, t*N layers, L loss); empty when the plain degrees express it (no embedding/loss slots and
// an interleaved split that divides evenly).
std::string megatron_pipeline_layout(const ExportPlan& plan);
// What Megatron-LM cannot express for this plan, or what must be done by hand.
std::vector<std::string> megatron_warnings(const ExportPlan& plan);
// A stack that always keeps a master copy of the weights (Megatron's main params, DeepSpeed's fp32 partitions,
// torchtitan's fp32 FSDP shards) cannot launch a plan priced without one (master_weights_dtype "none"): the warning
// for that stack, or nothing.
void warn_master_copy(const ExportPlan& plan, const std::string& stack, std::vector<std::string>& warnings);

// A bash array assignment, one argument a line with its note as a trailing comment.
std::string bash_array(const std::string& name, const std::vector<Argument>& args);

// DeepSpeed's ds_config.json for the plan (the DeepSpeed and Megatron-DeepSpeed stacks, Hugging Face's DeepSpeed plugin),
// and the ZeRO stage it sets: Megatron's distributed optimizer shards optimizer states = stage 1.
std::string deepspeed_config_json(const ExportPlan& plan, const std::string& target);
int deepspeed_zero_stage(const TrainingSpec& t);

// Environment Megatron's layers need: CUDA_DEVICE_MAX_CONNECTIONS=1 when tp or cp > 1 (Megatron requires it for
// overlapping TP communication with compute), unless Megatron-FSDP forbids it; NVTE_USE_CUTLASS_GROUPED_GEMM=1 where
// the experts were priced as one grouped kernel (moe_gemm_streams 0).
struct LaunchVariable {
  std::string name, value, why;
};
std::vector<LaunchVariable> launch_environment(const ExportPlan& plan);

// A double-quoted YAML scalar.
std::string yaml_quote(const std::string& s);
// "D-HH:MM:SS" for Slurm's --time, rounded up to whole minutes; the caller checks the value is finite and sane.
std::string slurm_time(double seconds);
// A Kubernetes object name (DNS-1123 label): at most 63 lowercase letters, digits and '-', alphanumeric at both ends.
bool is_dns_label(const std::string& s);
// Numbers as the files write them: 0.1 -> "0.1", 1 -> "1".
std::string number_text(double v);

}  // namespace export_detail
}  // namespace trainsim
