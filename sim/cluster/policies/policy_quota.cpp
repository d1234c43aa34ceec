// Queues with guaranteed quotas that lend idle GPUs (Kueue ClusterQueues in cohorts: nominalQuota, borrowingLimit,
// lendingLimit, reclaimWithinCohort; Volcano's capacity plugin: guarantee / capability). Each queue's jobs go in
// arrival order, the queue furthest below its quota first; a job within its queue's quota starts or takes back
// borrowed GPUs by preempting jobs of queues above their quota (its own cohort's first, then the rest; most recently
// started first, the fewest that free a placement); a job beyond its quota starts only on GPUs left idle, up to the
// queue's borrowing limit and to what its cohort can lend: the unused quota of its queues (each at most its lending
// limit) plus the GPUs no queue is guaranteed. Jobs of a queue not listed have no quota: they only borrow, in the
// cohort "". Without cohorts or lending limits, borrowing is bounded by the idle GPUs alone.
#include <algorithm>
#include <map>

#include "sim/cluster/policies/scheduler_policy.hpp"
#include "sim/cluster/policies/victim_search.hpp"

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
    auto cohort = [&](const std::string& q) -> const std::string& {
      static const std::string none;
      return c.queue(q) ? c.queue(q)->cohort : none;
    };
    // GPUs no queue is guaranteed: anyone may borrow them.
    double guaranteed = 0;
    for (const QueueSpec& q : c.queues) guaranteed += q.quota_gpus;
    const double unassigned = std::max(0.0, pass.total_gpus() - guaranteed);
    // Whether the cohort can lend what its queues borrow once queue q uses g GPUs more: borrowed <= lent + unassigned.
    auto cohort_allows = [&](const std::string& q, double g) {
      double borrowed = 0, lent = 0;
      for (const QueueSpec& other : c.queues) {
        if (other.cohort != cohort(q)) continue;
        const double used = usage[other.name] + (other.name == q ? g : 0.0);
        borrowed += std::max(0.0, used - other.quota_gpus);
        const double unused = std::max(0.0, other.quota_gpus - used);
        lent += other.lending_limit_gpus < 0 ? unused : std::min(other.lending_limit_gpus, unused);
      }
      // Unlisted queues, in the cohort "", borrow all they use.
      if (cohort(q).empty())
        for (const auto& [name, used] : usage)
          if (!c.queue(name)) borrowed += used + (name == q ? g : 0.0);
      return borrowed <= lent + unassigned + 1e-9;
    };
    const std::vector<int> order = waiting_by_queue_key(pass, [&](const std::string& q) { return usage[q] - quota(q); });
    for (int j : order) {
      const std::string& q = pass.job(j).queue;
      const double g = pass.gpus(j);
      const bool within = usage[q] + g <= quota(q) + 1e-9;
      if (!within && limit(q) >= 0 && usage[q] + g > quota(q) + limit(q) + 1e-9) continue;
      if (!within && !cohort_allows(q, g)) continue;
      bool started = pass.start(j);
      if (!started && within) {
        // Reclaim: jobs of queues using more than their quota, the job's cohort first, the most recently started first.
        std::vector<int> candidates;
        for (int r : pass.running())
          if (usage[pass.job(r).queue] > quota(pass.job(r).queue) + 1e-9) candidates.push_back(r);
        std::stable_sort(candidates.begin(), candidates.end(), [&](int a, int b) {
          const bool sa = cohort(pass.job(a).queue) == cohort(q), sb = cohort(pass.job(b).queue) == cohort(q);
          if (sa != sb) return sa;
          return pass.status(a).started_s > pass.status(b).started_s;
        });
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

const RegisterPolicy kQuota{{"quota", "queues with guaranteed GPU quotas that lend idle GPUs within their cohort (up to lending limits) and take them back by preemption (cluster.queues)",
                             "Kueue ClusterQueue cohorts (nominalQuota, borrowingLimit, lendingLimit, reclaimWithinCohort); Volcano capacity plugin",
                             [] { return std::make_unique<QuotaCohort>(); }}};

}  // namespace
}  // namespace trainsim::sim::cluster
