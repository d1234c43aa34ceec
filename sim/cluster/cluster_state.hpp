#pragma once
// Who holds which GPU: every node of every pool (up or down, schedulable or standby), the thousandths of
// each GPU still free (GPU sharing), and per pool how many nodes have k whole GPUs free, so "does this job
// fit anywhere?" is answered in O(GPUs per node) and a scheduling pass can skip jobs that cannot start.
// Placement strategies (binpack, spread, topology) choose nodes here; policies never touch nodes.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "cluster_job.hpp"
#include "cluster_spec.hpp"

namespace trainsim::sim::cluster {

enum class PlacementKind { Binpack, Spread, Topology };
const char* to_string(PlacementKind k);
// "binpack", "spread", "topology"; false when unknown.
bool placement_from_string(const std::string& s, PlacementKind* out);
std::vector<std::string> placement_names();

struct Placement {
  struct Part {
    int node = 0;
    int whole = 0;        // whole GPUs on this node
    int shared_gpu = -1;  // the GPU of a fractional request (index within the node), -1 when none
    int milli = 0;        // its thousandths
    std::uint64_t gpus = 0;  // which GPUs of the node the whole ones are (bit g: GPU g), chosen by place()
  };
  std::vector<Part> parts;
  int leaves = 0;  // leaf switches the job spans
  bool empty() const { return parts.empty(); }
};

class ClusterState {
 public:
  explicit ClusterState(const ClusterSpec& spec);  // `spec` must outlive the state

  int nodes() const { return static_cast<int>(node_pool_.size()); }
  int pool_of(int node) const { return node_pool_[static_cast<std::size_t>(node)]; }
  int leaf_of(int node) const { return node_leaf_[static_cast<std::size_t>(node)]; }
  int gpus_on(int node) const;
  bool schedulable(int node) const { return node_schedulable_[static_cast<std::size_t>(node)] != 0; }
  int free_whole(int node) const { return free_whole_[static_cast<std::size_t>(node)]; }
  int free_milli(int node, int gpu) const;
  const ClusterSpec& spec() const { return *spec_; }

  // Whole-GPU capacity in service (schedulable nodes) and allocated, in thousandths of a GPU.
  std::int64_t capacity_milli() const { return capacity_milli_; }
  std::int64_t allocated_milli() const { return allocated_milli_; }

  // Can `job` run on pool `pool` at all (GPU type allowed, fits a node or a gang of nodes of the pool)?
  bool pool_allowed(const ClusterJob& job, int pool) const;
  // Whether the job could start now (a quick count test, exact for the placements below).
  bool fits(const ClusterJob& job) const;
  // A placement, or an empty one when it does not fit now.
  Placement place(const ClusterJob& job, PlacementKind kind) const;
  void allocate(const Placement& p);
  void release(const Placement& p);

  // A node leaves service (failed, or reclaimed) or comes back; a standby (spare) node is brought in.
  void set_schedulable(int node, bool on);
  // The first standby node of `pool`, -1 when none.
  int standby_node(int pool) const;
  bool is_standby(int node) const { return node_standby_[static_cast<std::size_t>(node)] != 0; }
  void set_standby(int node, bool standby);

  // Free GPUs (thousandths) that no job in `waiting` could use on its node: the fragmentation of FGD (Weng et
  // al., ATC'23), measured against the jobs actually waiting.
  std::int64_t unusable_free_milli(const std::vector<const ClusterJob*>& waiting) const;

 private:
  void count_node(int node, int sign);  // add or remove the node from its pool's free histogram
  void note_spare(int node);            // keeps spares_ready_ in step with the node's standby and service flags
  void apply(const Placement& p, int sign);  // +1: take the placement's GPUs, -1: give them back
  int pick_single_node(const ClusterJob& job, PlacementKind kind) const;
  int free_whole_in_pool(int pool) const;  // whole GPUs free on its schedulable nodes
  bool place_gang(const ClusterJob& job, int pool, PlacementKind kind, Placement* out) const;

  const ClusterSpec* spec_;  // outlives the state (copies share it: a trial placement copies the state)
  std::vector<int> node_pool_, node_leaf_, free_whole_, gpu_offset_;
  std::vector<std::uint8_t> node_schedulable_, node_standby_;
  std::vector<std::int16_t> gpu_free_milli_;
  // Per pool: nodes (schedulable) with k whole GPUs free, k = 0..gpus_per_node; and nodes with a partly used GPU.
  std::vector<std::vector<int>> free_hist_;
  std::vector<int> pool_first_node_;
  // Per pool: standby nodes out of service, ready to swap in (standby_node takes the lowest without a scan: a
  // 100,000-node pool fails thousands of times a day).
  std::vector<std::set<int>> spares_ready_;
  std::int64_t capacity_milli_ = 0, allocated_milli_ = 0;
};

}  // namespace trainsim::sim::cluster
