// Volcano's gang + proportion + reclaim (the plugins and actions of its default scheduler configuration): every
// queue deserves a share of the cluster's GPUs by its weight, filled like water: each round gives the queues that
// still want more their weight's part of what is left, capped at what they ask for (their running and waiting
// jobs' GPUs), until every queue has its request or nothing is left (proportion plugin, OnSessionOpen). Queues go
// furthest below their deserved share first, each queue's jobs in arrival order, whole gangs only; a job starts only
// while its queue stays within its deserved share (AllocatableFn), and a queue below its share reclaims GPUs from
// queues above theirs by evicting whole jobs, the most recently started first, the fewest that free a placement
// (reclaim action, ReclaimableFn). Weights come from cluster.queues (1 for a queue not listed).
#include <algorithm>
#include <map>

#include "scheduler_policy.hpp"
#include "victim_search.hpp"

namespace trainsim::sim::cluster {
namespace {

constexpr double kEps = 1e-9;

// Water-filling of `total` over the queues by weight, each capped at its request.
std::map<std::string, double> deserved_shares(double total, const std::map<std::string, double>& request,
                                              const std::map<std::string, double>& weight) {
  std::map<std::string, double> deserved;
  std::map<std::string, bool> met;
  for (const auto& [q, r] : request) deserved[q] = 0, met[q] = r <= kEps;
  double remaining = total;
  while (remaining > kEps) {
    double weights = 0;
    for (const auto& [q, m] : met)
      if (!m) weights += weight.at(q);
    if (weights <= 0) break;
    for (auto& [q, m] : met) {
      if (m) continue;
      deserved[q] += remaining * weight.at(q) / weights;
      if (deserved[q] >= request.at(q) - kEps) deserved[q] = request.at(q), m = true;
    }
    double given = 0;
    for (const auto& [q, d] : deserved) given += d;
    const double left = total - given;
    if (left >= remaining - kEps) break;  // nothing more was taken: every queue is met
    remaining = left;
  }
  return deserved;
}

class Proportion : public SchedulerPolicy {
 public:
  void schedule(SchedulingPass& pass) override {
    const ClusterSpec& c = pass.cluster();
    std::map<std::string, double> allocated, request, weight;
    for (int r : pass.running()) allocated[pass.job(r).queue] += pass.gpus(r), request[pass.job(r).queue] += pass.gpus(r);
    for (int j : pass.waiting()) request[pass.job(j).queue] += pass.gpus(j);
    for (const auto& [q, r] : request) weight[q] = c.queue(q) ? c.queue(q)->weight : 1.0;
    const std::map<std::string, double> deserved = deserved_shares(pass.total_gpus(), request, weight);
    auto share = [&](const std::string& q) { return deserved.at(q) > 0 ? allocated[q] / deserved.at(q) : 1e300; };
    std::vector<int> order = pass.waiting();
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return share(pass.job(a).queue) < share(pass.job(b).queue); });
    for (int j : order) {
      const std::string& q = pass.job(j).queue;
      const double g = pass.gpus(j);
      if (allocated[q] + g > deserved.at(q) + kEps) continue;  // it would take the queue past its deserved share
      bool started = pass.start(j);
      if (!started) {
        // Reclaim from queues above their deserved share, the most recently started first.
        std::vector<int> candidates;
        for (int r : pass.running())
          if (allocated[pass.job(r).queue] > deserved.at(pass.job(r).queue) + kEps) candidates.push_back(r);
        std::stable_sort(candidates.begin(), candidates.end(), [&](int a, int b) { return pass.status(a).started_s > pass.status(b).started_s; });
        const std::vector<int> victims = minimal_victims(pass, j, candidates);
        for (int r : victims) {
          allocated[pass.job(r).queue] -= pass.gpus(r);
          pass.preempt(r);
        }
        started = !victims.empty() && pass.start(j);
      }
      if (started) allocated[q] += g;
    }
  }
};

const RegisterPolicy kProportion{{"proportion", "Volcano's gang + proportion + reclaim: queues deserve GPUs by weight (water-filled, capped at their requests); jobs start within their queue's share and reclaim from queues above theirs",
                                  "Volcano scheduler: gang and proportion plugins, allocate and reclaim actions (volcano-sh/volcano pkg/scheduler/plugins/proportion)",
                                  [] { return std::make_unique<Proportion>(); }}};

}  // namespace
}  // namespace trainsim::sim::cluster
