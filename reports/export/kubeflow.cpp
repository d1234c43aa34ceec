// --to kubeflow: a Kubeflow PyTorchJob (kubeflow.org/v1): one Master and nodes-1 Workers, one pod per
// node running torchrun + the plan's stack on its devices, with the stack's config files in a ConfigMap
// (pytorchjob.yaml). An elastic plan gets an elasticPolicy instead: Workers only, torchrun's c10d rendezvous on
// worker-0 (the training operator's PET_RDZV_ENDPOINT, from the container port it looks up by name), between the
// fewest nodes the plan may shrink to and its full size (kubeflow/training-operator pkg/controller.v1/pytorch/
// elastic.go: PET_NNODES = "min:max", PET_MAX_RESTARTS).
#include "launch_stack.hpp"
#include "vendor.hpp"

namespace trainsim {
namespace {

using namespace export_detail;

class KubeflowExporter final : public Exporter {
 public:
  std::string name() const override { return "kubeflow"; }
  std::string description() const override { return "Kubeflow PyTorchJob: Master + Workers, nprocPerNode, GPUs per pod (pytorchjob.yaml)"; }

  // Kubernetes object names are DNS-1123 labels.
  bool accepts_job_name(const std::string& n) const override { return is_dns_label(n); }
  std::string job_name_rule() const override {
    return "a Kubernetes name: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit";
  }

  std::vector<ExportFile> render(const ExportPlan& p) const override {
    const StackLaunch st = stack_launch(p, name());
    const VendorLaunch& v = vendor_launch(p.hardware.gpu);
    const int nodes = p.hardware.num_nodes;
    const std::string config_map = config_map_name(p, st);
    // The training operator sets MASTER_ADDR/MASTER_PORT and the pod's node rank (PET_NODE_RANK; RANK in older operators).
    const bool elastic = p.elastic_min_nodes > 0;
    const std::string rendezvous = "--node-rank \"${PET_NODE_RANK:-$RANK}\" --master-addr \"$MASTER_ADDR\" --master-port \"$MASTER_PORT\"";
    // Elastic: the node count and rendezvous come from the operator; torchrun re-forms the group when a node leaves or returns.
    const std::string elastic_launch = "torchrun --nnodes \"$PET_NNODES\" --nproc-per-node " + std::to_string(p.gpus_per_node_used()) +
                                       " --rdzv-backend c10d --rdzv-endpoint \"$PET_RDZV_ENDPOINT\" --rdzv-id \"" + p.job_name +
                                       "\" --max-restarts \"$PET_MAX_RESTARTS\"";
    std::string out = comment_header(p, name());
    if (elastic)
      out += "#\n# Elastic (reliability.elastic): one pod per node with all its " + v.device_word + "s, " + std::to_string(nodes) +
             " Workers; after a failure the job goes on with as few as " + std::to_string(p.elastic_min_nodes) +
             " nodes (its data-parallel replicas down to the scenario's elastic_min_fraction) and grows back when a node returns.\n"
             "# Each change restarts the worker group from the last checkpoint: maxRestarts " + std::to_string(p.max_restarts) +
             " = a shrink and a regrowth per failure expected within the time limit.\n";
    else
      out += "#\n# One pod per node with all its " + v.device_word + "s: Master (node rank 0) + " + std::to_string(nodes - 1) + " Workers = " +
             std::to_string(nodes) + (nodes == 1 ? " node" : " nodes") + ". No elasticPolicy: the layout is fixed.\n";
    out += "# schedulingPolicy gang-schedules the pods when the training operator runs with Volcano or scheduler-plugins.\n";
    out += k8s_stack_preamble(p, st);
    out += "apiVersion: kubeflow.org/v1\n";
    out += "kind: PyTorchJob\n";
    out += "metadata:\n";
    out += "  name: " + p.job_name + "\n";
    out += "spec:\n";
    if (elastic) {
      out += "  elasticPolicy:\n";
      out += "    rdzvBackend: c10d\n";
      out += "    minReplicas: " + std::to_string(p.elastic_min_nodes) + "\n";
      out += "    maxReplicas: " + std::to_string(nodes) + "\n";
      out += "    maxRestarts: " + std::to_string(p.max_restarts) + "\n";
    }
    out += "  nprocPerNode: \"" + std::to_string(p.gpus_per_node_used()) + "\"\n";
    out += "  runPolicy:\n";
    out += "    schedulingPolicy:\n";
    out += "      minAvailable: " + std::to_string(elastic ? p.elastic_min_nodes : nodes) + "\n";
    out += "      queue: " + p.queue + "\n";
    out += "  pytorchReplicaSpecs:\n";
    const auto script = stack_script(p, st, "exec " + (elastic ? elastic_launch : torchrun_words(p, rendezvous)), kConfigMountPath, "");
    auto replica = [&](const std::string& role, int replicas) {
      out += "    " + role + ":\n";
      out += "      replicas: " + std::to_string(replicas) + "\n";
      out += "      restartPolicy: OnFailure\n";
      // The operator reads the rendezvous port from the Worker container's port of this name.
      out += pod_template_yaml(p, "pytorch", script, "", config_map, "training.kubeflow.org/job-name", 6,
                               elastic ? std::pair<std::string, int>{"pytorchjob-port", 29400} : std::pair<std::string, int>{});
    };
    if (elastic) {
      replica("Worker", nodes);
    } else {
      replica("Master", 1);
      if (nodes > 1) replica("Worker", nodes - 1);
    }
    return {{"pytorchjob.yaml", out}};
  }
};

const RegisterExporter registered{std::make_unique<KubeflowExporter>()};

}  // namespace
}  // namespace trainsim
