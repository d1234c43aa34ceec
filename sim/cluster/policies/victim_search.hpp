#pragma once
// The fewest running jobs to evict so a waiting job can start, gang-aware and placement-aware: candidates are
// added in the order given until the job fits, then those it turns out not to need are spared again, last
// added first (so a whole node is freed for a whole-node job, not scattered GPUs: volcano-sh/volcano#3291).
// Shared by the preemptive policies (priority, quota, las).
#include <vector>

#include "sim/cluster/policies/scheduler_policy.hpp"

namespace trainsim::sim::cluster {

// Empty when even all candidates would not make room.
std::vector<int> minimal_victims(const SchedulingPass& pass, int job, const std::vector<int>& candidates);

// Evicts the minimal victims among `candidates` and starts `job`; false (nothing evicted) when there is no room.
bool start_by_preempting(SchedulingPass& pass, int job, const std::vector<int>& candidates);

}  // namespace trainsim::sim::cluster
