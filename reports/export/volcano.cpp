// --to volcano: a Volcano Job (batch.volcano.sh/v1alpha1) that gang-schedules one pod per node
// (minAvailable = nodes), each running torchrun + Megatron-LM on its GPUs (volcano-job.yaml).
#include "export_registry.hpp"

namespace trainsim {
namespace {

using namespace export_detail;

class VolcanoExporter final : public Exporter {
 public:
  std::string name() const override { return "volcano"; }
  std::string description() const override { return "Volcano Job with gang scheduling (minAvailable = nodes), queue, GPUs per pod (volcano-job.yaml)"; }

  // Kubernetes object names are DNS-1123 labels.
  bool accepts_job_name(const std::string& n) const override { return is_dns_label(n); }
  std::string job_name_rule() const override {
    return "a Kubernetes name: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit";
  }

  std::vector<ExportFile> render(const ExportPlan& p) const override {
    const std::string nodes = std::to_string(p.hardware.num_nodes);
    std::string out = comment_header(p, name());
    out += "#\n# One pod per node with all its GPUs; minAvailable = replicas = " + nodes +
           " makes Volcano start all of them together or none (gang scheduling).\n";
    out += "# The svc plugin gives every pod VC_WORKER_HOSTS (worker-0 is torchrun's master) and the env plugin VC_TASK_INDEX (its node rank).\n";
    out += "# The image must hold Megatron-LM at /workspace/Megatron-LM (--image). Add your RDMA device resources and volumes.\n";
    for (const auto& w : megatron_warnings(p)) out += "# WARNING: " + w + "\n";
    out += "apiVersion: batch.volcano.sh/v1alpha1\n";
    out += "kind: Job\n";
    out += "metadata:\n";
    out += "  name: " + p.job_name + "\n";
    out += "spec:\n";
    out += "  schedulerName: volcano\n";
    out += "  queue: " + p.queue + "\n";
    out += "  minAvailable: " + nodes + "\n";
    out += "  maxRetry: 3\n";
    out += "  plugins:\n";
    out += "    env: []\n";
    out += "    svc: []\n";
    out += "  policies:\n";
    out += "    - event: PodEvicted\n";
    out += "      action: RestartJob\n";
    out += "    - event: PodFailed\n";
    out += "      action: RestartJob\n";
    out += "  tasks:\n";
    out += "    - name: worker\n";
    out += "      replicas: " + nodes + "\n";
    out += "      policies:\n";
    out += "        - event: TaskCompleted\n";
    out += "          action: CompleteJob\n";
    out += pod_template_yaml(p, "megatron", "--node-rank \"$VC_TASK_INDEX\" --master-addr \"${VC_WORKER_HOSTS%%,*}\" --master-port 29500", "Never", 6);
    return {{"volcano-job.yaml", out}};
  }
};

const RegisterExporter registered{std::make_unique<VolcanoExporter>()};

}  // namespace
}  // namespace trainsim
