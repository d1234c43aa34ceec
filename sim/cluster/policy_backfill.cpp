// Backfilling: jobs start in arrival order; a job that cannot start gets a reservation, the GPUs it will get at
// the earliest time it fits by node shape (from the running jobs' expected ends), and later jobs may start now
// only on GPUs no reservation needs before they would end. Expected runtimes are the requested walltimes, or
// the true remaining times when a trace has none (an oracle: the cluster command says so).
//  - `backfill` follows Slurm's sched/backfill: at every event the main loop starts jobs in priority order until
//    the first that cannot start; every bf_interval the backfill loop walks up to bf_max_job_test waiting jobs,
//    starting each that delays no reservation and reserving for each that cannot start (many reservations, not
//    one), up to bf_window ahead (cluster.scheduler.backfill_interval, backfill_depth, backfill_window).
//  - `easy` is EASY backfilling (Lifka 1995): at every event, one reservation, for the first waiting job.
#include <algorithm>
#include <limits>

#include "scheduler_policy.hpp"

namespace trainsim::sim::cluster {
namespace {

class Backfill : public SchedulerPolicy {
 public:
  explicit Backfill(bool slurm) : slurm_(slurm) {}

  void schedule(SchedulingPass& pass) override {
    // The main loop: the head starts, or it blocks (a started job leaves the queue; no copy of it per pass).
    while (!pass.waiting().empty() && pass.start(pass.waiting().front())) {
    }
    if (pass.waiting().empty()) return;
    const BackfillSettings& bf = pass.cluster().backfill;
    if (slurm_) {
      if (pass.now() < next_loop_s_) {
        pass.wake_at(next_loop_s_);
        return;
      }
      next_loop_s_ = pass.now() + bf.interval_s;
    }
    const double window = slurm_ ? bf.window_s : std::numeric_limits<double>::infinity();
    // The jobs this loop tests, the blocked head first (starting one changes the queue): Slurm's first
    // bf_max_job_test, EASY's whole queue.
    const std::vector<int>& queue = pass.waiting();
    const std::size_t tested = slurm_ ? std::min(queue.size(), static_cast<std::size_t>(std::max(0, bf.depth))) : queue.size();
    const std::vector<int> order(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(tested));
    // A reservation holds GPUs back only from the jobs after it that could start now, and a pass only takes
    // GPUs, so a job that does not fit stays unable to: once no later job fits (or no GPU is free), the rest of
    // the loop would start nothing, and its reservations would hold GPUs back from no one. The loop stops
    // there; `next_fit` is the first later job that still fits, each job looked at once a pass.
    int reservations = 0;
    std::size_t next_fit = 0;
    for (std::size_t k = 0; k < order.size() && pass.free_gpus() > 0; ++k) {
      const int j = order[k];
      if (k > 0 && pass.start_beside_reservations(j)) continue;
      for (next_fit = std::max(next_fit, k + 1); next_fit < order.size() && !pass.fits(order[next_fit]); ++next_fit) {
      }
      if (next_fit == order.size()) break;
      if (slurm_ || reservations == 0) pass.reserve(j, window), ++reservations;
    }
  }

 private:
  bool slurm_;
  double next_loop_s_ = 0;  // when the backfill loop runs next (Slurm: every bf_interval)
};

const RegisterPolicy kBackfill{{"backfill", "Slurm's backfill: priority order; every bf_interval, up to bf_max_job_test waiting jobs start if they delay no reservation, else are reserved",
                                "Slurm sched/backfill (slurm.conf bf_interval, bf_max_job_test, bf_window)",
                                [] { return std::make_unique<Backfill>(true); }}};
const RegisterPolicy kEasy{{"easy", "EASY backfilling: arrival order, the first waiting job reserved, later jobs fill holes that do not delay it",
                            "Lifka, 'The ANL/IBM SP scheduling system' (JSSPP 1995)",
                            [] { return std::make_unique<Backfill>(false); }}};

}  // namespace
}  // namespace trainsim::sim::cluster
