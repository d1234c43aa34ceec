#pragma once
// Jobs given as what they train rather than how long they ran: each entry of a cluster section's "jobs" names a
// scenario (model, training with train_tokens, parallel layout, hardware). Its GPUs are the layout's, its
// duration the step model's time to train, and its speed depends on its placement: a gang under one leaf switch
// runs at the estimate; over several leaves its inter-node collectives cross the spine, where a loaded leaf
// gives each node 1/oversubscription of its NIC bandwidth (every node of the leaf sending up at once: the
// 4.00x the iteration simulator measures for FSDP gathers on a 4:1 spine with one node per leaf), so the step
// is the estimate at that bandwidth. On a non-blocking fabric (oversubscription 1) placement costs nothing.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/cluster/cluster_job.hpp"
#include "sim/cluster/cluster_spec.hpp"

namespace trainsim::sim::cluster {

struct ModelJobInfo {
  std::string id;
  double step_s = 0, step_cross_leaf_s = 0;  // one step within one leaf, and across leaves
  double steps = 0;
};

// `list` is the "jobs" array; `base_dir` resolves scenario paths; `path` is for errors ("/cluster/jobs").
// Throws InputError (a scenario without train_tokens, a bad entry). `info` gets one entry per job when given.
std::vector<ClusterJob> jobs_from_scenarios(const nlohmann::json& list, const std::string& base_dir, const std::string& path,
                                            const ClusterSpec& cluster, std::vector<ModelJobInfo>* info = nullptr);

}  // namespace trainsim::sim::cluster
