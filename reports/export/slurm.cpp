// --to slurm: an sbatch script (nodes, one task per node, GPUs, exclusive, time limit from the predicted
// time to train) that runs torchrun + Megatron-LM on every node with srun (train.sbatch).
#include <algorithm>

#include "export_registry.hpp"

namespace trainsim {
namespace {

using namespace export_detail;

// Cores requested per node: 8 per GPU, which GPU servers usually have (DGX A100: 128, DGX H100: 112).
constexpr int kCpusPerGpu = 8;

class SlurmExporter final : public Exporter {
 public:
  std::string name() const override { return "slurm"; }
  std::string description() const override { return "Slurm sbatch script: srun + torchrun + Megatron-LM, NCCL settings (train.sbatch)"; }

  std::vector<ExportFile> render(const ExportPlan& p) const override {
    const int nodes = p.hardware.num_nodes, per_node = p.gpus_per_node_used();
    std::string out = "#!/bin/bash\n" + comment_header(p, name());
    out += "#SBATCH --job-name=" + p.job_name + "\n";
    out += "#SBATCH --nodes=" + std::to_string(nodes) + "\n";
    out += "#SBATCH --ntasks-per-node=1\n";
    out += "#SBATCH --gpus-per-node=" + std::to_string(per_node) + "\n";
    out += "#SBATCH --cpus-per-task=" + std::to_string(kCpusPerGpu * per_node) + "\n";
    out += "#SBATCH --exclusive\n";
    if (p.time_to_train_s > 0) out += "#SBATCH --time=" + slurm_time(p.time_to_train_s) + "\n";
    out += "#SBATCH --output=%x-%j.out\n";
    out += "#\n# One task per node runs torchrun, which starts " + std::to_string(per_node) + " Megatron-LM ranks (MEGATRON_DIR: the checkout).\n";
    if (p.time_to_train_s > 0)
      out += "# --time is trainsim's predicted time to train, a lower bound: add a margin, or split the run into chained jobs that resume\n"
             "# from checkpoints (--save/--load) if your partition's limit is shorter.\n";
    else
      out += "# No predicted time to train (the plan has no train_tokens): add #SBATCH --time for your partition.\n";
    out += "# --cpus-per-task assumes " + std::to_string(kCpusPerGpu) + " cores per GPU: match it to your nodes.\n";
    for (const auto& w : megatron_warnings(p)) out += "# WARNING: " + w + "\n";
    out += "set -euo pipefail\n\n";
    out += "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n";
    out += "export MASTER_ADDR MASTER_PORT=29500\n";
    for (const auto& [key, value] : launch_environment(p))
      out += "export " + key + "=" + value + "  # Megatron with tp > 1: one CUDA work queue keeps TP communication in issue order\n";
    std::string hcas;
    for (int i = 0; i < std::max(1, p.hardware.nics_per_node); ++i) hcas += (i ? ",mlx5_" : "mlx5_") + std::to_string(i);
    out += "# NCCL: name your nodes' InfiniBand/RoCE adapters (ibstat lists them) and the interface NCCL bootstraps over (ip link).\n";
    out += "# export NCCL_IB_HCA=" + hcas + "\n";
    out += "# export NCCL_SOCKET_IFNAME=eth0\n";
    out += "MEGATRON_DIR=\"${MEGATRON_DIR:-/workspace/Megatron-LM}\"\n";
    out += "\n" + bash_array("MEGATRON_ARGS", megatron_arguments(p)) + "\n";
    out += "srun --kill-on-bad-exit=1 torchrun --nnodes " + std::to_string(nodes) + " --nproc-per-node " + std::to_string(per_node) +
           " --rdzv-backend c10d --rdzv-endpoint \"$MASTER_ADDR:$MASTER_PORT\" --rdzv-id \"$SLURM_JOB_ID\" \\\n";
    out += "  \"$MEGATRON_DIR/pretrain_gpt.py\" \"${MEGATRON_ARGS[@]}\"\n";
    return {{"train.sbatch", out}};
  }
};

const RegisterExporter registered{std::make_unique<SlurmExporter>()};

}  // namespace
}  // namespace trainsim
