// --to megatron: Megatron-LM's pretrain_gpt.py (megatron-core) argument list for the plan, launched
// with torchrun on every node (pretrain_gpt.sh).
#include "export_registry.hpp"

namespace trainsim {
namespace {

using namespace export_detail;

class MegatronExporter final : public Exporter {
 public:
  std::string name() const override { return "megatron"; }
  std::string description() const override { return "Megatron-LM pretrain_gpt.py argument list + torchrun launch (pretrain_gpt.sh)"; }

  std::vector<ExportFile> render(const ExportPlan& p) const override {
    const int nodes = p.hardware.num_nodes, per_node = p.gpus_per_node_used();
    std::string out = "#!/usr/bin/env bash\n" + comment_header(p, name());
    out += "#\n# Megatron-LM (megatron-core) pretrain_gpt.py with this plan's layout, model and batch. Run this script on every node\n"
           "# (" + std::to_string(nodes) + (nodes == 1 ? " node" : " nodes") + "; torchrun's c10d rendezvous pairs them up).\n";
    out += "# MEGATRON_DIR is the Megatron-LM checkout. The data-parallel size is implied: GPUs / (tp x pp x cp) = " +
           std::to_string(p.layout.dp) + ".\n";
    for (const auto& w : megatron_warnings(p)) out += "# WARNING: " + w + "\n";
    out += "set -euo pipefail\n\n";
    out += nodes > 1 ? ": \"${MASTER_ADDR:?set MASTER_ADDR to the address of the first node}\"\n" : "MASTER_ADDR=\"${MASTER_ADDR:-localhost}\"\n";
    out += "MEGATRON_DIR=\"${MEGATRON_DIR:-/workspace/Megatron-LM}\"\n";
    for (const auto& [key, value] : launch_environment(p))
      out += "export " + key + "=" + value + "  # Megatron with tp > 1: one CUDA work queue keeps TP communication in issue order\n";
    out += "\n" + bash_array("MEGATRON_ARGS", megatron_arguments(p)) + "\n";
    out += "torchrun --nnodes " + std::to_string(nodes) + " --nproc-per-node " + std::to_string(per_node) +
           " --rdzv-backend c10d --rdzv-endpoint \"$MASTER_ADDR:29500\" --rdzv-id \"${JOB_ID:-" + p.job_name + "}\" \\\n";
    out += "  \"$MEGATRON_DIR/pretrain_gpt.py\" \"${MEGATRON_ARGS[@]}\" \"$@\"\n";
    return {{"pretrain_gpt.sh", out}};
  }
};

const RegisterExporter registered{std::make_unique<MegatronExporter>()};

}  // namespace
}  // namespace trainsim
