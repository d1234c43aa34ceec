// Queues with guaranteed quotas that lend idle GPUs (Kueue ClusterQueues in a cohort: nominalQuota,
// borrowingLimit, reclaimWithinCohort; Volcano's capacity plugin: guarantee / capability). Each queue's jobs
// go in arrival order, the queue furthest below its quota first; a job within its queue's quota starts or
// takes back borrowed GPUs by preempting jobs of queues above their quota (most recently started first, the
// fewest that free a placement); a job beyond its quota starts only on GPUs left idle, up to the queue's
// borrowing limit. Jobs of a queue not listed have no quota: they only borrow.
#include <algorithm>
#include <map>

#include "scheduler_policy.hpp"
#include "victim_search.hpp"

namespace trainsim::sim::cluster {
namespace {

class QuotaCohort : public SchedulerPolicy {
 public:
  void schedule(SchedulingPass& pass) override {
    const ClusterSpec& c = pass.cluster();
    std::map<std::string, double> usage;
    for (int r : pass.running()) usage[pass.job(r).queue] += pass.gpus(r);
    auto quota = [&](const std::string& q) { return c.queue(q) ? c.queue(q)->quota_gpus : 0.0; };
    auto limit = [&](const std::string& q) { return c.queue(q) ? c.queue(q)->borrowing_limit_gpus : -1.0; };
    std::vector<int> order = pass.waiting();
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      const std::string &qa = pass.job(a).queue, &qb = pass.job(b).queue;
      return usage[qa] - quota(qa) < usage[qb] - quota(qb);
    });
    for (int j : order) {
      const std::string& q = pass.job(j).queue;
      const double g = pass.gpus(j);
      const bool within = usage[q] + g <= quota(q) + 1e-9;
      if (!within && limit(q) >= 0 && usage[q] + g > quota(q) + limit(q) + 1e-9) continue;
      bool started = pass.start(j);
      if (!started && within) {
        // Reclaim: jobs of queues using more than their quota, the most recently started first.
        std::vector<int> candidates;
        for (int r : pass.running())
          if (usage[pass.job(r).queue] > quota(pass.job(r).queue) + 1e-9) candidates.push_back(r);
        std::stable_sort(candidates.begin(), candidates.end(), [&](int a, int b) { return pass.status(a).started_s > pass.status(b).started_s; });
        const std::vector<int> victims = minimal_victims(pass, j, candidates);
        for (int r : victims) {
          usage[pass.job(r).queue] -= pass.gpus(r);
          pass.preempt(r);
        }
        started = !victims.empty() && pass.start(j);
      }
      if (started) usage[q] += g;
    }
  }

  std::string never_starts(const ClusterJob& job, const ClusterSpec& c) const override {
    const QueueSpec* q = c.queue(job.queue);
    if (!q || q->borrowing_limit_gpus < 0) return {};
    if (gpus_held(job, c.gpu_sharing) <= q->quota_gpus + q->borrowing_limit_gpus + 1e-9) return {};
    return "more GPUs than its queue's quota plus borrowing limit";
  }
};

const RegisterPolicy kQuota{{"quota", "queues with guaranteed GPU quotas that lend idle GPUs and take them back by preemption (cluster.queues)",
                             "Kueue ClusterQueue cohorts (nominalQuota, borrowingLimit, reclaimWithinCohort); Volcano capacity plugin",
                             [] { return std::make_unique<QuotaCohort>(); }}};

}  // namespace
}  // namespace trainsim::sim::cluster
