// Priority with gang-aware preemption (Volcano's priority + preempt actions, Kueue's preemption within a
// cohort): higher priority first, arrival order among equals. A job that does not fit may evict running
// jobs of strictly lower priority, whole gangs at a time (no job keeps part of its GPUs): the lowest
// priority and most recently started first (they lose the least work), then victims it turns out not to
// need are spared again, so the set is minimal for the placement (a node freed whole for a whole-node job:
// the case of volcano-sh/volcano#3291, where freeing scattered GPUs did not let the job start).
#include <algorithm>
#include <climits>

#include "sim/cluster/policies/scheduler_policy.hpp"
#include "sim/cluster/policies/victim_search.hpp"

namespace trainsim::sim::cluster {
namespace {

class PriorityPreempt : public SchedulerPolicy {
 public:
  void schedule(SchedulingPass& pass) override {
    std::vector<int> order = pass.waiting();
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return pass.job(a).priority > pass.job(b).priority; });
    int lowest_running = INT_MAX;  // no running job below a waiting one's priority: nothing to evict (a quick test)
    for (int r : pass.running()) lowest_running = std::min(lowest_running, pass.job(r).priority);
    for (int j : order) {
      if (pass.start(j) || pass.job(j).priority <= lowest_running) continue;
      std::vector<int> candidates;
      for (int r : pass.running())
        if (pass.job(r).priority < pass.job(j).priority) candidates.push_back(r);
      std::stable_sort(candidates.begin(), candidates.end(), [&](int a, int b) {
        if (pass.job(a).priority != pass.job(b).priority) return pass.job(a).priority < pass.job(b).priority;
        return pass.status(a).started_s > pass.status(b).started_s;
      });
      start_by_preempting(pass, j, candidates);
      lowest_running = INT_MAX;
      for (int r : pass.running()) lowest_running = std::min(lowest_running, pass.job(r).priority);
    }
  }
};

const RegisterPolicy kPriority{{"priority", "highest priority first; evicts whole lower-priority jobs (fewest needed) when a job does not fit",
                                "Volcano priority/preempt actions (volcano-sh/volcano#3291); Kueue preemption",
                                [] { return std::make_unique<PriorityPreempt>(); }}};

}  // namespace
}  // namespace trainsim::sim::cluster
