// Volcano's gang + proportion + reclaim (the plugins and actions of its default scheduler configuration): every
// queue deserves a share of the cluster's GPUs by its weight, filled like water: each round gives the queues that
// still want more their weight's part of what is left, capped at what they ask for (their running and waiting
// jobs' GPUs), until every queue has its request or nothing is left (proportion plugin, OnSessionOpen). Queues go
// furthest below their deserved share first, each queue's jobs in arrival order, whole gangs only; a job starts only
// while its queue stays within its deserved share (AllocatableFn), and a queue below its share reclaims GPUs from
// queues above theirs by evicting whole jobs, the most recently started first, the fewest that free a placement
// (reclaim action, ReclaimableFn). Weights come from cluster.queues (1 for a queue not listed). A queue's
// `capability` caps its share in every round, and its `guarantee` is its share's floor, kept from the others: each
// queue's real capability is min(capability, the GPUs less every queue's guarantee plus its own) (proportion.go,
// realCapability; a queue capped by it is met though its jobs still ask).
// Volcano's job enqueue check against the real capability is the same condition as the share for whole gangs here.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/cluster/policies/scheduler_policy.hpp"
#include "sim/cluster/policies/victim_search.hpp"

namespace trainsim::sim::cluster {
namespace {

constexpr double kEps = 1e-9;

// Water-filling of `total` over the queues by weight, each capped at its real capability and its request, and
// raised to its guarantee.
std::vector<double> deserved_shares(double total, const std::vector<double>& request, const std::vector<double>& weight,
                                    const std::vector<double>& capability, const std::vector<double>& guarantee) {
  const std::size_t n = request.size();
  std::vector<double> deserved(n, 0.0);
  std::vector<bool> met(n);
  for (std::size_t q = 0; q < n; ++q) met[q] = request[q] <= kEps;
  double remaining = total;
  while (remaining > kEps) {
    double weights = 0;
    for (std::size_t q = 0; q < n; ++q)
      if (!met[q]) weights += weight[q];
    if (weights <= 0) break;
    for (std::size_t q = 0; q < n; ++q) {
      if (met[q]) continue;
      const double before = deserved[q];
      deserved[q] = std::min({deserved[q] + remaining * weight[q] / weights, capability[q], request[q]});
      if (deserved[q] >= request[q] - kEps) deserved[q] = request[q], met[q] = true;
      else if (deserved[q] <= before + kEps) met[q] = true;  // held at its capability
      deserved[q] = std::max(deserved[q], guarantee[q]);
    }
    double given = 0;
    for (double d : deserved) given += d;
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
    // This pass's queues by index (a name lookup per job and comparison cost most of a run on a deep queue).
    std::unordered_map<std::string, std::size_t> index;
    std::vector<double> allocated, request, weight, capability, guarantee;
    double guaranteed = 0;  // every listed queue's guarantee, active or not: kept from the others' shares
    for (const QueueSpec& q : c.queues) guaranteed += q.guarantee_gpus;
    const double total = pass.total_gpus();
    auto queue_of = [&](int j) {
      const std::string& q = pass.job(j).queue;
      auto [it, added] = index.try_emplace(q, allocated.size());
      if (added) {
        const QueueSpec* spec = c.queue(q);
        allocated.push_back(0), request.push_back(0);
        weight.push_back(spec ? spec->weight : 1.0);
        guarantee.push_back(spec ? spec->guarantee_gpus : 0.0);
        const double real = std::max(0.0, total - guaranteed + guarantee.back());
        capability.push_back(spec && spec->capability_gpus >= 0 ? std::min(real, spec->capability_gpus) : real);
      }
      return it->second;
    };
    for (int r : pass.running()) {
      const std::size_t q = queue_of(r);
      allocated[q] += pass.gpus(r), request[q] += pass.gpus(r);
    }
    for (int j : pass.waiting()) request[queue_of(j)] += pass.gpus(j);
    const std::vector<double> deserved = deserved_shares(total, request, weight, capability, guarantee);
    auto share = [&](const std::string& name) {
      const std::size_t q = index.at(name);
      return deserved[q] > 0 ? allocated[q] / deserved[q] : 1e300;
    };
    const std::vector<int> order = waiting_by_queue_key(pass, share);
    // The running jobs of queues above their deserved share, the most recently started first: what a reclaim may
    // evict (found once a pass, again after an eviction).
    std::vector<int> candidates;
    bool candidates_known = false;
    for (int j : order) {
      const std::size_t q = queue_of(j);
      const double g = pass.gpus(j);
      if (allocated[q] + g > deserved[q] + kEps) continue;  // it would take the queue past its deserved share
      bool started = pass.start(j);
      if (!started) {
        if (!candidates_known) {
          candidates.clear();
          for (int r : pass.running())
            if (allocated[queue_of(r)] > deserved[queue_of(r)] + kEps) candidates.push_back(r);
          std::stable_sort(candidates.begin(), candidates.end(), [&](int a, int b) { return pass.status(a).started_s > pass.status(b).started_s; });
          candidates_known = true;
        }
        if (candidates.empty()) continue;
        const std::vector<int> victims = minimal_victims(pass, j, candidates);
        for (int r : victims) {
          allocated[queue_of(r)] -= pass.gpus(r);
          pass.preempt(r);
        }
        if (!victims.empty()) candidates_known = false;
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
