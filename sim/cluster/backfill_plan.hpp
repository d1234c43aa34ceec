#pragma once
// A backfill pass's plan of the future, GPU by GPU: until when each GPU is busy (its running job's expected end)
// and which intervals reservations hold it. It answers "when is the earliest this job could start, by node
// shape, without touching a reservation?" in O(GPUs) per node tried, where replaying the releases and overlaying
// the reservations on a copy of the cluster state costs O(running jobs + reservations) per instant tried: the
// difference between seconds and minutes on a 30,000-job trace under Slurm's backfill (hundreds of reservations
// per pass). The placement itself is still ClusterState's (the simulator builds the state at the instant found).
#include <limits>
#include <vector>

#include "cluster_state.hpp"

namespace trainsim::sim::cluster {

class BackfillPlan {
 public:
  // `state`: the cluster now (its spec outlives the plan).
  BackfillPlan(const ClusterState& state, double now);

  // A running job holds the GPUs of `p` until `end_s`; a reservation holds them over [from_s, until_s).
  void hold_until(const Placement& p, double end_s);
  void reserve(const Placement& p, double from_s, double until_s);

  // The earliest instant t >= now, at most `latest_s`, at which the job has whole GPUs free over [t, t + runtime)
  // by node shape (on one node, or whole nodes of one pool and the rest on one more); +inf when none. Exact for
  // jobs of whole GPUs; a job sharing a GPU is treated as needing a whole one (an upper bound on its start).
  double earliest(const ClusterJob& job, double runtime_s, double latest_s) const;

 private:
  bool usable(int gpu, double t, double runtime_s) const;  // free from t and no reservation over [t, t + runtime)
  // Instants at which a GPU of `node` may become usable: now, the busy ends, the reservation ends; sorted, <= latest.
  std::vector<double> instants(int node, double latest_s) const;
  int usable_on(int node, double t, double runtime_s) const;

  const ClusterState* state_;
  double now_;
  std::vector<int> first_gpu_;                 // per node, its first GPU's index (and one past the last node)
  std::vector<double> busy_until_;             // per GPU: when it frees (now when free; +inf when out of service)
  std::vector<std::vector<std::pair<double, double>>> held_;  // per GPU: reservation intervals [from, until)
  static constexpr double kNever = std::numeric_limits<double>::infinity();
};

}  // namespace trainsim::sim::cluster
