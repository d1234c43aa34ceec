// First in, first out: jobs start in arrival order and the first that does not fit blocks every job behind
// it (head-of-line blocking), as Slurm's plain priority scheduler and Kubernetes' default queue with gang
// scheduling do.
#include "sim/cluster/policies/scheduler_policy.hpp"

namespace trainsim::sim::cluster {
namespace {

class Fifo : public SchedulerPolicy {
 public:
  void schedule(SchedulingPass& pass) override {
    // A started job leaves the queue, so the head is always the front: no copy of a queue of 100,000 per pass.
    while (!pass.waiting().empty())
      if (!pass.start(pass.waiting().front())) return;
  }
};

const RegisterPolicy kFifo{{"fifo", "arrival order; the first job that does not fit blocks the rest (head-of-line blocking)",
                            "Slurm sched/builtin; Kubernetes gang scheduling with a FIFO queue",
                            [] { return std::make_unique<Fifo>(); }}};

}  // namespace
}  // namespace trainsim::sim::cluster
