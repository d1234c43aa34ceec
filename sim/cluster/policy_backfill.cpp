// EASY backfilling (Lifka 1995; Slurm sched/backfill): jobs start in arrival order; when the head job does
// not fit, it gets a reservation at the earliest time enough GPUs will be free (the shadow time, from the
// running jobs' expected ends), and later jobs may start now if they fit and either end before the shadow
// time or use only GPUs the head job will not need then. The head job is never delayed when runtimes are
// as expected. Expected runtimes are the requested walltimes, or the true remaining times when a trace
// has no walltime (an oracle: say so when comparing).
#include <algorithm>

#include "scheduler_policy.hpp"

namespace trainsim::sim::cluster {
namespace {

double gpus_of(const ClusterJob& j) { return j.gpus == 1 && j.gpu_milli < 1000 ? j.gpu_milli / 1000.0 : j.gpus; }

class EasyBackfill : public SchedulerPolicy {
 public:
  void schedule(SchedulingPass& pass) override {
    const std::vector<int> order = pass.waiting();
    std::size_t i = 0;
    while (i < order.size() && pass.start(order[i])) ++i;
    if (i >= order.size()) return;
    const int head = order[i];
    // Shadow time: release the running jobs' GPUs in order of expected end until the head job fits by count.
    std::vector<std::pair<double, double>> ends;  // (end, GPUs)
    for (int r : pass.running()) ends.push_back({pass.now() + pass.expected_runtime(r), gpus_of(pass.job(r))});
    std::sort(ends.begin(), ends.end());
    double free = pass.free_gpus(), shadow = pass.now();
    const double need = gpus_of(pass.job(head));
    for (const auto& [end, g] : ends) {
      if (free >= need) break;
      free += g;
      shadow = end;
    }
    double extra = free - need;
    for (std::size_t k = i + 1; k < order.size(); ++k) {
      const int j = order[k];
      const double g = gpus_of(pass.job(j));
      const bool ends_in_time = pass.now() + pass.expected_runtime(j) <= shadow;
      if (!ends_in_time && g > extra) continue;
      if (pass.start(j) && !ends_in_time) extra -= g;
    }
  }
};

const RegisterPolicy kBackfill{{"backfill", "EASY backfilling: arrival order, the head job reserved, later jobs fill holes that do not delay it",
                                "Lifka, 'The ANL/IBM SP scheduling system' (JSSPP 1995); Slurm sched/backfill",
                                [] { return std::make_unique<EasyBackfill>(); }}};

}  // namespace
}  // namespace trainsim::sim::cluster
