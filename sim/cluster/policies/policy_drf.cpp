// Dominant resource fairness (Ghodsi et al., NSDI'11) over tenants: the tenant with the smallest dominant
// share, divided by its weight, gets the next start (progressive filling), its jobs in arrival order; a job
// that does not fit is passed over. With GPUs the one resource tracked here, the dominant share is the GPU
// share and DRF is weighted max-min fairness on GPUs (YARN's and Mesos' DRF allocators, Volcano's drf plugin).
// Tenants are the cluster's queues when it lists any (weights from cluster.queues), else the users.
#include <map>
#include <queue>

#include "sim/cluster/policies/scheduler_policy.hpp"

namespace trainsim::sim::cluster {
namespace {

class DominantResourceFairness : public SchedulerPolicy {
 public:
  void schedule(SchedulingPass& pass) override {
    const ClusterSpec& c = pass.cluster();
    auto tenant = [&](int j) -> const std::string& { return c.queues.empty() ? pass.job(j).user : pass.job(j).queue; };
    auto weight = [&](const std::string& t) { return !c.queues.empty() && c.queue(t) ? c.queue(t)->weight : 1.0; };
    std::map<std::string, double> held;
    for (int r : pass.running()) held[tenant(r)] += pass.gpus(r);
    std::map<std::string, std::queue<int>> jobs;
    for (int j : pass.waiting()) jobs[tenant(j)].push(j);
    using Entry = std::pair<double, std::string>;  // (weighted share, tenant)
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> next;
    for (const auto& [t, q] : jobs) next.push({held[t] / weight(t), t});
    while (!next.empty()) {
      const std::string t = next.top().second;
      next.pop();
      std::queue<int>& q = jobs[t];
      while (!q.empty()) {
        const int j = q.front();
        q.pop();
        if (!pass.start(j)) continue;
        held[t] += pass.gpus(j);
        break;
      }
      if (!q.empty()) next.push({held[t] / weight(t), t});
    }
  }
};

const RegisterPolicy kDrf{{"drf", "dominant resource fairness over queues (or users): the smallest weighted GPU share starts next",
                           "Ghodsi et al., 'Dominant Resource Fairness' (NSDI'11); Volcano drf plugin",
                           [] { return std::make_unique<DominantResourceFairness>(); }}};

}  // namespace
}  // namespace trainsim::sim::cluster
