// Shortest job first, greedy: waiting jobs in order of expected runtime, each started if it fits (a job that
// does not fit is passed over, not waited for). `sjf` knows each job's true remaining time (the oracle of
// Gavel's and Tiresias' comparisons); `sjf-estimate` orders by the mean duration of the user's finished
// jobs, as history-based predictors do (Helios, SC'21).
#include <algorithm>

#include "sim/cluster/policies/scheduler_policy.hpp"

namespace trainsim::sim::cluster {
namespace {

class ShortestFirst : public SchedulerPolicy {
 public:
  explicit ShortestFirst(bool oracle) : oracle_(oracle) {}
  void schedule(SchedulingPass& pass) override {
    std::vector<std::pair<double, int>> order;
    for (int j : pass.waiting()) order.push_back({oracle_ ? pass.status(j).remaining_work_s : pass.history_estimate(j), j});
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [t, j] : order) pass.start(j);
  }

 private:
  bool oracle_;
};

const RegisterPolicy kSjf{{"sjf", "shortest true remaining time first, greedy (an oracle: the upper bound of runtime-aware ordering)",
                           "Tiresias (NSDI'19) and Gavel (OSDI'20) compare against it",
                           [] { return std::make_unique<ShortestFirst>(true); }}};
const RegisterPolicy kSjfEstimate{{"sjf-estimate", "shortest expected time first, greedy; expected = mean duration of the user's finished jobs",
                                   "history-based duration prediction (Hu et al., Helios, SC'21)",
                                   [] { return std::make_unique<ShortestFirst>(false); }}};

}  // namespace
}  // namespace trainsim::sim::cluster
