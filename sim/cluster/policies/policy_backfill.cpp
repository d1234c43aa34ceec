// Backfilling: jobs start in arrival order; a job that cannot start gets a reservation, the GPUs it will get at
// the earliest time it fits by node shape (from the running jobs' expected ends), and later jobs may start now
// only on GPUs no reservation needs before they would end. Expected runtimes are the requested walltimes, or
// the true remaining times when a trace has none (an oracle: the cluster command says so).
//  - `backfill` follows Slurm's sched/backfill: at every event the main loop starts jobs in priority order until
//    the first that cannot start; every bf_interval the backfill loop walks up to bf_max_job_test waiting jobs,
//    starting each that delays no reservation and reserving for each that cannot start (many reservations, not
//    one), up to bf_window ahead (cluster.scheduler.backfill_interval, backfill_depth, backfill_window).
//  - `easy` is EASY backfilling (Lifka 1995): at every event, one reservation, for the first waiting job.
//  - `multifactor` is Slurm's backfill with priority/multifactor: both loops walk the queue in that priority order
//    (multifactor_priority.hpp) instead of arrival order.
#include <algorithm>
#include <limits>
#include <memory>

#include "sim/cluster/policies/multifactor_priority.hpp"
#include "sim/cluster/policies/scheduler_policy.hpp"
#include "sim/cluster/policies/waiting_shapes.hpp"

namespace trainsim::sim::cluster {
namespace {

class Backfill : public SchedulerPolicy {
 public:
  explicit Backfill(bool slurm, bool multifactor = false) : slurm_(slurm) {
    if (multifactor) priority_ = std::make_unique<MultifactorPriority>();
  }

  void schedule(SchedulingPass& pass) override {
    if (!priority_) {
      const bool by_shape = !slurm_ && !per_job_rules(pass.cluster());
      if (by_shape) shapes_.sync(pass);
      // The main loop in arrival order: the head starts, or it blocks (a started job leaves the queue; no copy).
      while (!pass.waiting().empty() && pass.start(pass.waiting().front())) {
      }
      if (by_shape) easy_by_shape(pass);
      else loops(pass, pass.waiting(), 0);
      return;
    }
    // The main loop in priority order; each start changes the queue (and the QOS scale), so the rest is ranked again.
    // Only the first bf_max_job_test are ranked: no loop of this pass looks further.
    const std::size_t ranked_first = static_cast<std::size_t>(std::max(1, pass.cluster().backfill.depth));
    std::vector<int> ranked = priority_->order(pass, ranked_first);
    while (!ranked.empty() && pass.start(ranked.front())) ranked = priority_->order(pass, ranked_first);
    loops(pass, ranked, 0);
    priority_->note_running(pass);
  }

 private:
  // The backfill loop over queue[head...] (queue: the waiting jobs in priority order; queue[head] the blocked head).
  void loops(SchedulingPass& pass, const std::vector<int>& queue_in, std::size_t head) {
    if (head >= queue_in.size()) return;
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
    const std::size_t left = queue_in.size() - head;
    const std::size_t tested = slurm_ ? std::min(left, static_cast<std::size_t>(std::max(0, bf.depth))) : left;
    const auto first = queue_in.begin() + static_cast<std::ptrdiff_t>(head);
    const std::vector<int> order(first, first + static_cast<std::ptrdiff_t>(tested));
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

  // EASY's loop over a deep queue, the same starts as `loops` in a cost set by the starts and the request shapes
  // (waiting_shapes.hpp): the head is reserved once a later job fits, then each later job starts if it delays no
  // reservation, a shape skipped once one of its jobs could not.
  void easy_by_shape(SchedulingPass& pass) {
    if (pass.waiting().empty()) return;
    const int head = pass.waiting().front();
    WaitingShapes::Walk walk(shapes_, pass, head);
    bool reserved = false;
    for (int j; pass.free_gpus() > 0 && (j = walk.next()) >= 0;) {
      if (!reserved) {
        if (!pass.fits(j)) {
          walk.close();
          continue;
        }
        walk.set_short_limit(pass.reserve(head, std::numeric_limits<double>::infinity()) - pass.now());
        reserved = true;
      }
      if (pass.start_beside_reservations(j)) walk.started();
      else walk.failed(pass.expected_runtime(j));
    }
  }
  // Whether a job's start depends on more than its request shape: per-user or per-account limits, or a cap on
  // admissions per queue and pass. The shape index does not apply then.
  static bool per_job_rules(const ClusterSpec& c) { return c.has_user_limits() || c.cycle.admissions_per_queue > 0; }

  bool slurm_;
  WaitingShapes shapes_;  // EASY: the waiting jobs by request shape, kept between passes
  double next_loop_s_ = 0;  // when the backfill loop runs next (Slurm: every bf_interval)
  std::unique_ptr<MultifactorPriority> priority_;  // `multifactor`: the queue's order
};

const RegisterPolicy kBackfill{{"backfill", "Slurm's backfill: priority order; every bf_interval, up to bf_max_job_test waiting jobs start if they delay no reservation, else are reserved",
                                "Slurm sched/backfill (slurm.conf bf_interval, bf_max_job_test, bf_window)",
                                [] { return std::make_unique<Backfill>(true); }}};
const RegisterPolicy kMultifactor{{"multifactor", "Slurm's backfill in priority/multifactor order: age, Fair Tree fair-share over decayed usage, job size, QOS (cluster.scheduler.priority)",
                                   "Slurm priority/multifactor with Fair Tree (slurm.conf PriorityWeight*, PriorityDecayHalfLife, PriorityMaxAge) + sched/backfill",
                                   [] { return std::make_unique<Backfill>(true, true); }}};
const RegisterPolicy kEasy{{"easy", "EASY backfilling: arrival order, the first waiting job reserved, later jobs fill holes that do not delay it",
                            "Lifka, 'The ANL/IBM SP scheduling system' (JSSPP 1995)",
                            [] { return std::make_unique<Backfill>(false); }}};

}  // namespace
}  // namespace trainsim::sim::cluster
