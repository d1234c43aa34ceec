#pragma once
// FGD's packing experiment (Weng et al., "Beware of Fragmentation", USENIX ATC'23, section 6): the trace's pods
// arrive one after another in a random order and never leave, and the question is how much of the cluster's
// GPU capacity a placement allocates before fragmentation leaves the arriving requests unplaceable. The paper
// inflates the workload to 130% of the cluster's GPUs by drawing more of the trace's pods at random (its
// simulator's "workload tuning") and repeats the run over 10 seeds.
#include <cstdint>
#include <vector>

#include "sim/cluster/cluster_job.hpp"

namespace trainsim::sim::cluster {

// The pods in a random order, one a second, none ending (`duration_s`). With `fill_to` > 0 the pods asking
// GPUs add up to that fraction of `cluster_gpus`: pods drawn at random (with replacement) are added until the
// next would pass it, or, when the trace asks more, pods removed at random until it no longer does.
std::vector<ClusterJob> fill_workload(const std::vector<ClusterJob>& pods, double fill_to, double cluster_gpus, bool gpu_sharing,
                                      double duration_s, std::uint64_t seed);

}  // namespace trainsim::sim::cluster
