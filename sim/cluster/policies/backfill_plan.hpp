#pragma once
// A backfill pass's plan of the future, GPU by GPU: until when each GPU is busy (its running job's expected end)
// and which intervals reservations hold it. It answers "when is the earliest this job could start, by node
// shape, without touching a reservation?" node by node, and for jobs spanning nodes in one sweep over the pool's
// instants (O(E log E) for E busy ends and reservations), where replaying the releases and overlaying the
// reservations on a copy of the cluster state costs O(running jobs + reservations) per instant tried: the
// difference between seconds and minutes under Slurm's backfill, which holds hundreds of reservations per pass.
// The placement itself is still ClusterState's, on the state the plan gives for the instant found.
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "sim/cluster/cluster_state.hpp"

namespace trainsim::sim::cluster {

class BackfillPlan {
 public:
  // `state`: the cluster now (its spec outlives the plan).
  BackfillPlan(const ClusterState& state, double now);
  // The plan of a new pass at `now` on the same cluster (its storage kept): as if built anew.
  void reset(double now);

  // A running job holds the GPUs of `p` until `end_s`; a reservation holds them over [from_s, until_s).
  void hold_until(const Placement& p, double end_s);
  void reserve(const Placement& p, double from_s, double until_s);

  // The earliest instant t >= now, at most `latest_s`, at which the job has whole GPUs free over [t, t + runtime)
  // by node shape (on one node, or whole nodes of one pool and the rest on one more); +inf when none. Exact for
  // jobs of whole GPUs; a job sharing a GPU is treated as needing a whole one (an upper bound on its start).
  double earliest(const ClusterJob& job, double runtime_s, double latest_s) const;

  // The cluster as a job of whole GPUs running over [t, t + runtime) finds it, for place(): `out` becomes the
  // state now with every GPU usable over that run free and every other one taken. O(GPUs + their reservations),
  // where releasing the running jobs and taking the overlapping reservations on a copy costs O(running jobs +
  // reservations) calls, each updating a node's histograms: quadratic in a deep backfill queue. `out`'s storage
  // is reused from call to call.
  void state_for(double t, double runtime_s, ClusterState& out) const;

  // The placement binpack (and topology, for one node) makes on state_for(t, runtime) for a job of whole GPUs on
  // one node and no CPU or memory asked, read from the plan without building that state; empty otherwise.
  Placement binpack_at(const ClusterJob& job, double t, double runtime_s) const;

 private:
  bool usable(int gpu, double t, double runtime_s) const;  // free from t and no reservation over [t, t + runtime)
  // When a GPU of `nodes` may become usable: now, the busy ends and the reservation ends up to `latest`; sorted,
  // each once.
  std::vector<double> instants(const std::vector<int>& nodes, double latest_s) const;
  void instants_into(const int* nodes, std::size_t count, double latest_s, std::vector<double>& times) const;
  mutable std::vector<double> scratch_times_;
  std::vector<int> reserved_nodes_;           // nodes with a reservation, each once, for state_for(now)
  std::vector<std::uint64_t> reserved_mask_;  // per node: its GPUs some reservation holds
  mutable Placement freed_, taken_;                      // state_for's scratch
  // The earliest instant, at most `latest`, with `need` usable GPUs on `node`; over nodes of `pool` (whole nodes
  // and the rest on one more). +inf when none.
  double earliest_on_node(int node, int need, double runtime_s, double latest_s) const;
  // earliest_on_node, answered from the node's last answer where that decides it.
  double earliest_on_node_known(int node, int need, double runtime_s, double latest_s) const;
  struct NodeAnswer {
    int need = 0;
    double runtime_s = 0, latest_s = 0, t = 0;
    std::uint32_t version = 0;
  };
  mutable std::vector<NodeAnswer> answers_;
  std::vector<std::uint32_t> node_version_;  // bumped when a start or a reservation changes the node's plan
  // A lower bound on earliest_on_node (busy ends only): a node that cannot beat the best found is not searched.
  double ready_bound(int node, int need) const;
  // A lower bound on earliest_over_nodes: when the pool's whole_nodes-th node is free on every GPU.
  double gang_bound(int pool, int whole_nodes, double cutoff_s) const;
  // The schedulable nodes of at least `need` GPUs bound by cutoff_s, by ready_bound ascending (then by node).
  const std::vector<std::pair<double, int>>& by_ready_bound(int need, double cutoff_s) const;
  struct ReadyOrder {
    double cutoff_s = -std::numeric_limits<double>::infinity();  // not built yet
    std::vector<std::pair<double, int>> nodes;
  };
  mutable std::map<int, ReadyOrder> ready_order_;
  mutable std::vector<double> sorted_ends_;  // busy_until_ sorted within each node, at the first bound asked
  double earliest_over_nodes(int pool, int need, double runtime_s, double latest_s) const;
  std::uint64_t pools_allowed(const ClusterJob& job) const;  // bit p: the job may run on pool p (at most 64 pools)

  // Queries that found no instant. The plan only ever gets fuller (reservations and started jobs are added,
  // nothing is released), and a job needing at least as many GPUs for at least as long, on the same pools,
  // by an instant no later, fits wherever such a job would fit first: it misses too. A deep backfill queue
  // is mostly such jobs (those that find nothing in bf_window), each otherwise a search of every node.
  struct Miss {
    int gpus;
    double runtime_s, latest_s;
    std::uint64_t pools;
  };
  mutable std::vector<Miss> misses_;

  const ClusterState* state_;
  double now_;
  std::vector<int> first_gpu_;                 // per node, its first GPU's index (and one past the last node)
  std::vector<double> busy_until_;             // per GPU: when it frees (now when free; +inf when out of service)
  std::vector<std::vector<std::pair<double, double>>> held_;  // per GPU: reservation intervals [from, until)
  static constexpr double kNever = std::numeric_limits<double>::infinity();
};

}  // namespace trainsim::sim::cluster
