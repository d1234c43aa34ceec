// --to slurm: an sbatch script (nodes, one task per node, devices, exclusive, time limit from the predicted
// time to train) that runs torchrun + the plan's stack on every node with srun (train.sbatch).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "models/core/units.hpp"

#include "launch_stack.hpp"
#include "vendor.hpp"

namespace trainsim {
namespace {

using namespace export_detail;

// Cores requested per node: 8 per GPU, which GPU servers usually have (DGX A100: 128, DGX H100: 112).
constexpr int kCpusPerGpu = 8;
// Longest --time written: a year. Beyond it a single job is not a plan (Slurm's own ceiling, INFINITE aside, is
// far above, but partitions cap at days or weeks); the script then says to chain jobs.
constexpr double kMaxSlurmTimeS = 365.0 * 86400.0;

std::string fixed_percent(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100 * f);
  return buf;
}

class SlurmExporter final : public Exporter {
 public:
  std::string name() const override { return "slurm"; }
  std::string description() const override { return "Slurm sbatch script: srun + torchrun + the plan's stack, network settings (train.sbatch)"; }

  // Slurm takes a job name of any printable characters; #SBATCH lines split on white space.
  bool accepts_job_name(const std::string& n) const override {
    if (n.empty() || n.size() > 200) return false;
    for (char c : n)
      if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f || c == '"' || c == '\'' || c == '\\' || c == '$' || c == '`' || c == '%') return false;
    return true;
  }
  std::string job_name_rule() const override { return "1 to 200 printable characters without spaces, quotes, '\\', '$', '`' or '%'"; }

  std::vector<ExportFile> render(const ExportPlan& p) const override {
    const StackLaunch st = stack_launch(p, name());
    const VendorLaunch& v = vendor_launch(p.hardware.gpu);
    const int nodes = p.hardware.num_nodes, per_node = p.gpus_per_node_used();
    std::string out = "#!/bin/bash\n" + comment_header(p, name());
    out += "#SBATCH --job-name=" + p.job_name + "\n";
    out += "#SBATCH --nodes=" + std::to_string(nodes) + "\n";
    out += "#SBATCH --ntasks-per-node=1\n";
    out += "#SBATCH " + v.slurm_devices(per_node) + "\n";
    out += "#SBATCH --cpus-per-task=" + std::to_string(kCpusPerGpu * per_node) + "\n";
    out += "#SBATCH --exclusive\n";
    const WalltimeEstimate& w = p.walltime;
    const bool time_known = p.time_to_train_s > 0 && w.limit_s > 0;
    const bool time_sane = time_known && std::isfinite(w.limit_s) && w.limit_s <= kMaxSlurmTimeS;
    if (time_sane) out += "#SBATCH --time=" + slurm_time(w.limit_s) + "\n";
    out += "#SBATCH --output=%x-%j.out\n";
    out += "#\n# One task per node runs torchrun, which starts " + std::to_string(per_node) + " ranks of " + st.stack + " (" + st.needs + ").\n";
    if (v.vendor == "huawei") out += "# --gres=npu: the GRES name your gres.conf gives the Ascend NPUs.\n";
    if (!st.files.empty()) out += "# Submit from the folder holding " + st.files.front().path + " (CONFIG_DIR defaults to the submit folder).\n";
    if (time_sane) {
      out += "# --time = predicted time to train " + format_seconds(w.compute_s) + " / expected goodput " + fixed_percent(w.ettr) +
             " (failures: job MTBF " + format_seconds(w.mtbf_s) + ", checkpoint " + format_seconds(w.checkpoint_s) + " every " +
             format_seconds(w.interval_s) + ", recovery " + format_seconds(w.recovery_s) + ") = " + format_seconds(w.expected_s) +
             ", + " + fixed_percent(w.margin) + " margin (--time-margin).\n";
      out += "# If your partition's limit is shorter, split the run into chained jobs that resume from checkpoints.\n";
    } else if (time_known) {
      out += "# No --time: the expected run (" + (std::isfinite(w.expected_s) ? format_seconds(w.expected_s) : std::string("never finishing under the "
             "default failure rate")) + ") is beyond what one Slurm job should hold. Run it as chained jobs that resume from checkpoints\n"
             "# with your partition's --time, and check the plan: trainsim reliability shows what failures cost it.\n";
    } else {
      out += "# No predicted time to train (the plan has no train_tokens): add #SBATCH --time for your partition.\n";
    }
    out += "# --cpus-per-task assumes " + std::to_string(kCpusPerGpu) + " cores per " + v.device_word + ": match it to your nodes.\n";
    for (const auto& n : st.notes) out += "# " + n + "\n";
    for (const auto& warning : st.warnings) out += "# WARNING: " + warning + "\n";
    out += "set -euo pipefail\n\n";
    out += "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n";
    out += "export MASTER_ADDR MASTER_PORT=29500\n";
    for (const auto& l : v.network_lines(p.hardware.nics_per_node)) out += l + "\n";
    // Arguments given to sbatch after the script name reach the program (e.g. --save/--load, --data-path).
    for (const auto& l : stack_script(p, st,
                                      "srun --kill-on-bad-exit=1 " + torchrun_words(p, "--rdzv-backend c10d --rdzv-endpoint \"$MASTER_ADDR:$MASTER_PORT\" "
                                                                                      "--rdzv-id \"$SLURM_JOB_ID\""),
                                      "$SLURM_SUBMIT_DIR", "\"$@\""))
      out += l + "\n";
    std::vector<ExportFile> files = st.files;
    files.push_back({"train.sbatch", out});
    return files;
  }
};

const RegisterExporter registered{std::make_unique<SlurmExporter>()};

}  // namespace
}  // namespace trainsim
