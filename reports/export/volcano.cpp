// --to volcano: a Volcano Job (batch.volcano.sh/v1alpha1) that gang-schedules one pod per node
// (minAvailable = nodes), each running torchrun + the plan's stack on its devices, with the stack's config files in
// a ConfigMap (volcano-job.yaml).
#include "launch_stack.hpp"
#include "vendor.hpp"

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
    const StackLaunch st = stack_launch(p, name());
    const VendorLaunch& v = vendor_launch(p.hardware.gpu);
    const std::string nodes = std::to_string(p.hardware.num_nodes);
    const std::string config_map = config_map_name(p, st);
    std::string out = comment_header(p, name());
    out += "#\n# One pod per node with all its " + v.device_word + "s; minAvailable = replicas = " + nodes +
           " makes Volcano start all of them together or none (gang scheduling).\n";
    out += "# The svc plugin gives every pod VC_WORKER_HOSTS (worker-0 is torchrun's master) and the env plugin VC_TASK_INDEX (its node rank).\n";
    if (p.elastic_min_nodes > 0)
      out += "# The plan is elastic (down to " + std::to_string(p.elastic_min_nodes) +
             " nodes), but this Job restarts at full size after a failure; --to kubeflow writes an elastic launch (elasticPolicy).\n";
    out += k8s_stack_preamble(p, st);
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
    const auto script = stack_script(p, st, "exec " + torchrun_words(p, "--node-rank \"$VC_TASK_INDEX\" --master-addr \"${VC_WORKER_HOSTS%%,*}\" --master-port 29500"),
                                     kConfigMountPath, "");
    out += pod_template_yaml(p, "trainer", script, "Never", config_map, "volcano.sh/job-name", 6);
    return {{"volcano-job.yaml", out}};
  }
};

const RegisterExporter registered{std::make_unique<VolcanoExporter>()};

}  // namespace
}  // namespace trainsim
