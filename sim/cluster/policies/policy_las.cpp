// Least attained service, discretized (Tiresias, Gu et al., NSDI'19, 2D-LAS): a job's priority falls as its
// attained service (GPUs x seconds run) crosses the thresholds of cluster.scheduler.las_thresholds; jobs of a
// higher-priority queue start first (arrival order within a queue) and may preempt jobs of lower-priority
// queues, whole gangs, the fewest that free a placement. Needs no runtime estimate. Tiresias' guard against
// starvation (PromoteKnob): with cluster.scheduler.las_promote_knob K > 0, a job that has waited K times its
// executed time since it last ran is back in the first queue.
#include <algorithm>

#include "sim/cluster/policies/scheduler_policy.hpp"
#include "sim/cluster/policies/victim_search.hpp"

namespace trainsim::sim::cluster {
namespace {

class LeastAttainedService : public SchedulerPolicy {
 public:
  void schedule(SchedulingPass& pass) override {
    const std::vector<double>& thresholds = pass.cluster().las_thresholds_gpu_s;
    const double knob = pass.cluster().las_promote_knob;
    auto level_now = [&](int j) {
      const JobStatus& s = pass.status(j);
      if (knob > 0 && s.started_s < 0 && s.run_s > 0 && pass.now() - s.queued_since_s >= knob * s.run_s) return 0;
      const double attained = s.attained_gpu_s + (s.started_s >= 0 ? (pass.now() - s.started_s) * pass.gpus(j) : 0.0);
      return static_cast<int>(std::upper_bound(thresholds.begin(), thresholds.end(), attained) - thresholds.begin());
    };
    // Levels as at the pass's start (a job preempted in it keeps the level it had).
    std::vector<std::pair<int, int>> waiting;  // (level, job)
    for (int j : pass.waiting()) waiting.push_back({level_now(j), j});
    std::stable_sort(waiting.begin(), waiting.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::pair<int, int>> running;
    for (int r : pass.running()) running.push_back({level_now(r), r});
    for (const auto& [mine, j] : waiting) {
      if (pass.start(j)) {
        running.push_back({mine, j});
        continue;
      }
      std::vector<std::pair<int, int>> lower;
      for (const auto& lr : running)
        if (lr.first > mine) lower.push_back(lr);
      if (lower.empty()) continue;
      std::stable_sort(lower.begin(), lower.end(), [&](const auto& a, const auto& b) {
        if (a.first != b.first) return a.first > b.first;
        return pass.status(a.second).started_s > pass.status(b.second).started_s;
      });
      std::vector<int> candidates;
      for (const auto& lr : lower) candidates.push_back(lr.second);
      const std::vector<int> victims = minimal_victims(pass, j, candidates);
      if (victims.empty()) continue;
      for (int r : victims) {
        pass.preempt(r);
        running.erase(std::find_if(running.begin(), running.end(), [r](const auto& lr) { return lr.second == r; }));
      }
      if (pass.start(j)) running.push_back({mine, j});
    }
  }
};

const RegisterPolicy kLas{{"las", "least attained service (GPU-seconds), discretized into queues; preempts jobs of lower queues",
                           "Tiresias 2D-LAS (Gu et al., NSDI'19)", [] { return std::make_unique<LeastAttainedService>(); }}};

}  // namespace
}  // namespace trainsim::sim::cluster
