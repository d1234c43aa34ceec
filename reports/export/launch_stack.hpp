#pragma once
// What starts one framework's training program on a node, as every launcher and scheduler export writes it: the
// program torchrun runs (Megatron-LM's pretrain_gpt.py, a DeepSpeed or Hugging Face train.py, torchtitan's
// module), its arguments, the config files it reads and the environment it needs. One builder per framework
// preset registers itself (RegisterStack), so `--to slurm` of a DeepSpeed plan launches DeepSpeed, not Megatron.
#include <string>
#include <utility>
#include <vector>

#include "export_registry.hpp"

namespace trainsim {

struct StackLaunch {
  std::string stack;                 // in words, for comments: "Megatron-LM pretrain_gpt.py"
  std::vector<ExportFile> files;     // config files the program reads, written beside the launch file
  // Shell words torchrun runs after its own options, e.g. "\"$MEGATRON_DIR/pretrain_gpt.py\"" or "-m torchtitan.train".
  std::string program;
  std::string args_name;             // bash array holding the arguments ("MEGATRON_ARGS")
  std::vector<export_detail::Argument> args;
  // Bash lines before the launch (defaults of the variables `program` and `args` use, e.g. MEGATRON_DIR).
  std::vector<std::string> setup;
  std::vector<std::pair<std::string, std::string>> env;  // exported before the launch, with why in `env_notes`
  std::vector<std::string> env_notes;
  std::vector<std::string> notes;     // what the user must know to run it (comments)
  std::vector<std::string> warnings;  // what the stack cannot express of the plan, or what to do by hand
  // Where the program's own files come from: the checkout or package the image must hold (for comments).
  std::string needs;
};

using StackBuilder = StackLaunch (*)(const ExportPlan&);

struct RegisterStack {
  RegisterStack(const char* framework, StackBuilder build);
};

// The launch of the plan's framework (plan.framework); InputError naming --to when no stack launches it.
StackLaunch stack_launch(const ExportPlan& plan, const std::string& target);
// Frameworks with a registered stack, sorted.
std::vector<std::string> stack_frameworks();

// "torchrun --nnodes N --nproc-per-node G " + rendezvous: the plan's nodes and devices per node.
std::string torchrun_words(const ExportPlan& plan, const std::string& rendezvous);

// The bash that starts the stack on one node: the vendor's setup, CONFIG_DIR (default `config_dir`) when the stack
// reads files, the stack's setup and environment, its argument array, then `launcher` + program + "${ARGS[@]}" +
// `trailing` (e.g. "\"$@\"", so arguments given to the script reach the program). One line per element.
std::vector<std::string> stack_script(const ExportPlan& plan, const StackLaunch& stack, const std::string& launcher,
                                      const std::string& config_dir, const std::string& trailing);

// The body of a standalone script run on every node: MASTER_ADDR (required on several nodes), then the stack under
// torchrun with c10d rendezvous at $MASTER_ADDR:29500, config files beside the script, and the script's own arguments
// passed on.
std::vector<std::string> torchrun_script_body(const ExportPlan& plan, const StackLaunch& stack);

// A standalone launch file: shebang, header, the stack's comments (what it runs, what it needs, its warnings, the
// target's own `notes`), `set -euo pipefail`, then `body`.
std::string launch_file(const ExportPlan& plan, const std::string& target, const StackLaunch& stack,
                        const std::vector<std::string>& notes, const std::vector<std::string>& body);

// Kubernetes: a `template:` block (at `indent` spaces) whose pod runs `script` in `container` with the plan's devices
// per node as the vendor's resource limit, the collectives library's network settings (commented), a memory-backed
// /dev/shm, the stack's files from the ConfigMap `config_map` (empty: none) at kConfigMountPath, and, on several nodes,
// one pod per node: anti-affinity among the pods whose label `job_label` (the operator's job-name label) is the job's.
// The plan's RDMA resources join the limits (with the IPC_LOCK capability RDMA's memory registration needs); `port`
// (a name and a number) is declared on the container when given.
std::string pod_template_yaml(const ExportPlan& plan, const std::string& container, const std::vector<std::string>& script,
                              const std::string& restart_policy, const std::string& config_map, const std::string& job_label, int indent,
                              const std::pair<std::string, int>& port = {});
// A ConfigMap named `name` holding the stack's files; empty when it has none.
std::string config_map_yaml(const StackLaunch& stack, const std::string& name);
// One ConfigMap data entry: `key: |` and the text as a block scalar (2 + 2 spaces), blank lines kept.
std::string config_map_entry(const std::string& key, const std::string& text);
// The ConfigMap a Kubernetes export names for the stack's files ("<job>-config"); empty when the stack has none.
std::string config_map_name(const ExportPlan& plan, const StackLaunch& stack);
// What a pod runs and needs, as "# " comment lines: the stack and image, the ConfigMap, the RDMA resources to add,
// the stack's notes and warnings; then the ConfigMap document itself.
std::string k8s_stack_preamble(const ExportPlan& plan, const StackLaunch& stack);

// Config files are read from $CONFIG_DIR: the launch file's folder (standalone scripts), the submit folder (Slurm),
// or a ConfigMap mounted at this path (Kubernetes).
constexpr const char* kConfigMountPath = "/etc/trainsim";

}  // namespace trainsim
