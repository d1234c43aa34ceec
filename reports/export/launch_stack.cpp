#include "launch_stack.hpp"

#include "models/core/errors.hpp"
#include "models/core/name_registry.hpp"
#include "vendor.hpp"

namespace trainsim {

namespace {
struct StackEntry {
  std::string name;  // framework preset
  StackBuilder build;
};
NameRegistry<StackEntry>& registry() {
  static NameRegistry<StackEntry> all;
  return all;
}
}  // namespace

RegisterStack::RegisterStack(const char* framework, StackBuilder build) { registry().add({framework, build}); }

std::vector<std::string> stack_frameworks() { return registry().names(); }

StackLaunch stack_launch(const ExportPlan& plan, const std::string& target) {
  const StackEntry* e = registry().find(plan.framework);
  if (!e)
    throw InputError("--to", "\"" + target + "\"", "a target that can launch the plan's framework " + plan.framework,
                     "launchers and schedulers start " + join(stack_frameworks()) + " plans");
  return e->build(plan);
}

using namespace export_detail;

std::string torchrun_words(const ExportPlan& p, const std::string& rendezvous) {
  return "torchrun --nnodes " + std::to_string(p.hardware.num_nodes) + " --nproc-per-node " + std::to_string(p.gpus_per_node_used()) + " " +
         rendezvous;
}

std::vector<std::string> stack_script(const ExportPlan& p, const StackLaunch& st, const std::string& launcher, const std::string& config_dir,
                                      const std::string& trailing) {
  std::vector<std::string> lines;
  for (const auto& l : vendor_launch(p.hardware.gpu).setup_lines) lines.push_back(l);
  if (!st.files.empty()) lines.push_back("CONFIG_DIR=\"${CONFIG_DIR:-" + config_dir + "}\"  # where " + st.files.front().path +
                                         (st.files.size() > 1 ? " and the other config files are" : " is"));
  for (const auto& l : st.setup) lines.push_back(l);
  for (std::size_t i = 0; i < st.env.size(); ++i)
    lines.push_back("export " + st.env[i].first + "=" + st.env[i].second + (i < st.env_notes.size() && !st.env_notes[i].empty() ? "  # " + st.env_notes[i] : ""));
  if (!st.args.empty()) {
    std::string array = bash_array(st.args_name, st.args);
    array.pop_back();  // one line per element: split at the newlines
    std::size_t start = 0;
    for (std::size_t nl; (nl = array.find('\n', start)) != std::string::npos; start = nl + 1) lines.push_back(array.substr(start, nl - start));
    lines.push_back(array.substr(start));
  }
  lines.push_back(launcher + " \\");
  std::string run = "  " + st.program;
  if (!st.args.empty()) run += " \"${" + st.args_name + "[@]}\"";
  if (!trailing.empty()) run += " " + trailing;
  lines.push_back(run);
  return lines;
}

std::vector<std::string> torchrun_script_body(const ExportPlan& p, const StackLaunch& st) {
  std::vector<std::string> body;
  body.push_back(p.hardware.num_nodes > 1 ? ": \"${MASTER_ADDR:?set MASTER_ADDR to the address of the first node}\""
                                          : "MASTER_ADDR=\"${MASTER_ADDR:-localhost}\"");
  const std::string rendezvous = "--rdzv-backend c10d --rdzv-endpoint \"$MASTER_ADDR:29500\" --rdzv-id \"${JOB_ID:-" + p.job_name + "}\"";
  for (auto& l : stack_script(p, st, torchrun_words(p, rendezvous), "$(cd \"$(dirname \"$0\")\" && pwd)", "\"$@\"")) body.push_back(std::move(l));
  return body;
}

std::string launch_file(const ExportPlan& p, const std::string& target, const StackLaunch& st, const std::vector<std::string>& notes,
                        const std::vector<std::string>& body) {
  std::string out = "#!/usr/bin/env bash\n" + comment_header(p, target) + "#\n";
  out += "# Runs " + st.stack + (st.needs.empty() ? std::string() : "; needs " + st.needs) + ".\n";
  for (const auto& n : notes) out += "# " + n + "\n";
  for (const auto& n : st.notes) out += "# " + n + "\n";
  for (const auto& w : st.warnings) out += "# WARNING: " + w + "\n";
  out += "set -euo pipefail\n\n";
  for (const auto& l : body) out += l + "\n";
  return out;
}

std::string pod_template_yaml(const ExportPlan& p, const std::string& container, const std::vector<std::string>& script,
                              const std::string& restart_policy, const std::string& config_map, const std::string& job_label, int indent,
                              const std::pair<std::string, int>& port) {
  const VendorLaunch& v = vendor_launch(p.hardware.gpu);
  std::string out;
  auto line = [&](int depth, const std::string& text) { out += std::string(std::size_t(indent + 2 * depth), ' ') + text + "\n"; };
  line(0, "template:");
  line(1, "spec:");
  if (!restart_policy.empty()) line(2, "restartPolicy: " + restart_policy);
  if (p.hardware.num_nodes > 1 && !job_label.empty()) {
    // Pods of one job on distinct nodes: each holds all of a node's devices, and two on one node could not both start.
    line(2, "affinity:");
    line(3, "podAntiAffinity:");
    line(4, "requiredDuringSchedulingIgnoredDuringExecution:");
    line(5, "- topologyKey: kubernetes.io/hostname");
    line(6, "labelSelector:");
    line(7, "matchLabels:");
    line(8, job_label + ": " + p.job_name);
  }
  line(2, "containers:");
  line(3, "- name: " + container);
  line(4, "image: " + yaml_quote(p.image.empty() ? v.default_image : p.image));
  line(4, "command: [\"/bin/bash\", \"-c\"]");
  line(4, "args:");
  line(5, "- |");
  line(6, "set -euo pipefail");
  for (const auto& l : v.network_lines(p.hardware.nics_per_node)) line(6, l);
  for (const auto& l : script) line(6, l);
  if (port.second > 0) {
    line(4, "ports:");
    line(5, "- name: " + port.first);
    line(6, "containerPort: " + std::to_string(port.second));
  }
  line(4, "resources:");
  line(5, "limits:");
  line(6, v.k8s_resource + ": " + std::to_string(p.gpus_per_node_used()));
  for (const auto& [resource, count] : p.rdma_resources) line(6, resource + ": " + std::to_string(count));
  if (!p.rdma_resources.empty()) {
    line(4, "securityContext:");
    line(5, "capabilities:");
    line(6, "add: [\"IPC_LOCK\"]");
  }
  line(4, "volumeMounts:");
  line(5, "- name: dshm");
  line(6, "mountPath: /dev/shm");
  if (!config_map.empty()) {
    line(5, "- name: trainsim-config");
    line(6, std::string("mountPath: ") + kConfigMountPath);
    line(6, "readOnly: true");
  }
  line(2, "volumes:");
  line(3, "- name: dshm");
  line(4, "emptyDir:");
  line(5, "medium: Memory");
  if (!config_map.empty()) {
    line(3, "- name: trainsim-config");
    line(4, "configMap:");
    line(5, "name: " + config_map);
  }
  return out;
}

std::string config_map_entry(const std::string& key, const std::string& text) {
  std::string out = "  " + key + ": |\n";
  std::size_t start = 0;
  for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
    out += (nl > start ? "    " + text.substr(start, nl - start) : std::string()) + "\n";
  if (start < text.size()) out += "    " + text.substr(start) + "\n";
  return out;
}

std::string config_map_yaml(const StackLaunch& st, const std::string& name) {
  if (st.files.empty()) return "";
  std::string out = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n";
  for (const auto& f : st.files) out += config_map_entry(f.path, f.content);
  return out + "---\n";
}

std::string config_map_name(const ExportPlan& p, const StackLaunch& st) { return st.files.empty() ? std::string() : p.job_name + "-config"; }

std::string k8s_stack_preamble(const ExportPlan& p, const StackLaunch& st) {
  const VendorLaunch& v = vendor_launch(p.hardware.gpu);
  const std::string config_map = config_map_name(p, st);
  std::string out = "# Each pod runs " + st.stack + "; the image (--image; default " + v.image_note + ") needs " + st.needs + ".\n";
  if (!config_map.empty()) out += "# The ConfigMap " + config_map + " holds the config files, mounted at " + kConfigMountPath + ".\n";
  if (p.rdma_resources.empty()) out += "# Add your RDMA device resources (--rdma-resource: your RDMA device plugin's resource name) and volumes.\n";
  else out += "# RDMA devices per pod from --rdma-resource; add your volumes.\n";
  for (const auto& n : st.notes) out += "# " + n + "\n";
  for (const auto& w : st.warnings) out += "# WARNING: " + w + "\n";
  return out + config_map_yaml(st, config_map);
}

}  // namespace trainsim
