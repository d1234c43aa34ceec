// --to torchrun: the torchrun line that starts the plan's processes on every node, with the layout and
// batch passed in Megatron-LM's argument names (launch_torchrun.sh).
#include <set>

#include "export_registry.hpp"

namespace trainsim {
namespace {

using namespace export_detail;

// The arguments that carry the layout, batch and run length (the rest describe the model: --to megatron).
bool is_layout_argument(const std::string& text) {
  static const std::set<std::string> keep{"--tensor-model-parallel-size", "--pipeline-model-parallel-size",
                                          "--num-layers-per-virtual-pipeline-stage", "--decoder-first-pipeline-num-layers",
                                          "--decoder-last-pipeline-num-layers", "--pipeline-model-parallel-layout", "--context-parallel-size",
                                          "--expert-model-parallel-size", "--expert-tensor-parallel-size", "--sequence-parallel",
                                          "--micro-batch-size", "--global-batch-size", "--seq-length", "--train-iters"};
  return keep.count(text.substr(0, text.find(' '))) > 0;
}

class TorchrunExporter final : public Exporter {
 public:
  std::string name() const override { return "torchrun"; }
  std::string description() const override { return "torchrun launch line with the layout and batch as arguments (launch_torchrun.sh)"; }

  std::vector<ExportFile> render(const ExportPlan& p) const override {
    const int nodes = p.hardware.num_nodes, per_node = p.gpus_per_node_used();
    std::vector<Argument> args;
    for (const auto& a : megatron_arguments(p))
      if (is_layout_argument(a.text)) args.push_back(a);
    std::string out = "#!/usr/bin/env bash\n" + comment_header(p, name());
    out += "#\n# Starts " + std::to_string(per_node) + " processes per node on " + std::to_string(nodes) + (nodes == 1 ? " node" : " nodes") +
           "; run this same script on every node (c10d rendezvous at $MASTER_ADDR:29500).\n";
    out += "# TRAIN_ARGS are in Megatron-LM's names (pretrain_gpt.py reads them as they are; --to megatron adds the model, precision and\n";
    out += "# memory settings). For another train.py, map them to its own flags. Data-parallel size = GPUs / (tp x pp x cp) = " +
           std::to_string(p.layout.dp) + ", gradient accumulation = " + std::to_string(p.layout.gradient_accumulation_steps) + ".\n";
    out += "set -euo pipefail\n\n";
    out += nodes > 1 ? ": \"${MASTER_ADDR:?set MASTER_ADDR to the address of the first node}\"\n" : "MASTER_ADDR=\"${MASTER_ADDR:-localhost}\"\n";
    for (const auto& [key, value] : launch_environment(p)) out += "export " + key + "=" + value + "  # Megatron-style TP overlap (tp > 1)\n";
    out += "\n" + bash_array("TRAIN_ARGS", args) + "\n";
    out += "torchrun --nnodes " + std::to_string(nodes) + " --nproc-per-node " + std::to_string(per_node) +
           " --rdzv-backend c10d --rdzv-endpoint \"$MASTER_ADDR:29500\" --rdzv-id \"${JOB_ID:-" + p.job_name + "}\" \\\n";
    out += "  \"${TRAIN_SCRIPT:-train.py}\" \"${TRAIN_ARGS[@]}\" \"$@\"\n";
    return {{"launch_torchrun.sh", out}};
  }
};

const RegisterExporter registered{std::make_unique<TorchrunExporter>()};

}  // namespace
}  // namespace trainsim
