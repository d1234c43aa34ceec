#pragma once
// `trainsim export`: one fixed plan rendered as the files that launch it on a framework or scheduler
// (Megatron-LM, DeepSpeed, torchrun, Slurm, Volcano, Kubeflow). Each target is an Exporter in its own
// .cpp that registers itself by name; the files are built as an OBJECT library so the linker keeps the
// registrations. Exporters format what the plan says; they compute nothing the models should.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/spec.hpp"
#include "models/walltime.hpp"

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
  // Predictions for this plan; 0 when not known.
  double step_time_s = 0, mfu = 0, time_to_train_s = 0, iterations = 0;
  // The time limit to ask a scheduler for (time to train with the expected failure overhead and a margin);
  // limit_s = 0 when the time to train is not known.
  WalltimeEstimate walltime;
  // Scheduler settings (Volcano, Kubeflow).
  std::string queue = "default";
  std::string image = "nvcr.io/nvidia/pytorch:24.12-py3";

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
  std::string text;  // e.g. "--tensor-model-parallel-size 8"
  std::string note;  // why, or what to replace (empty: none)
};
std::vector<Argument> megatron_arguments(const ExportPlan& plan);
// What Megatron-LM cannot express for this plan, or what must be done by hand.
std::vector<std::string> megatron_warnings(const ExportPlan& plan);
// Where Megatron-LM's pretrain_gpt.py lives in the container / on the nodes.
constexpr const char* kMegatronScript = "/workspace/Megatron-LM/pretrain_gpt.py";

// A bash array assignment, one argument a line with its note as a trailing comment.
std::string bash_array(const std::string& name, const std::vector<Argument>& args);
// Lines of a container's bash script: environment, then `exec torchrun <rendezvous> pretrain_gpt.py`
// with every Megatron argument on its own continuation line (for Kubernetes job manifests).
std::vector<std::string> megatron_container_script(const ExportPlan& plan, const std::string& torchrun_rendezvous);

// A Kubernetes `template:` block (at `indent` spaces) whose pod runs that script in `container` with
// the plan's GPUs per node as nvidia.com/gpu limits and a memory-backed /dev/shm for NCCL.
std::string pod_template_yaml(const ExportPlan& plan, const std::string& container, const std::string& torchrun_rendezvous,
                              const std::string& restart_policy, int indent);

// Environment a launcher sets: CUDA_DEVICE_MAX_CONNECTIONS=1 when tp > 1 (Megatron requires it for
// overlapping TP communication with compute).
std::vector<std::pair<std::string, std::string>> launch_environment(const ExportPlan& plan);

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
