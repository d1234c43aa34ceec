#pragma once
// Who holds which GPU: every node of every pool (up or down, schedulable or standby), the thousandths of
// each GPU still free (GPU sharing), and per pool how many nodes have k whole GPUs free, so "does this job
// fit anywhere?" is answered in O(GPUs per node) and a scheduling pass can skip jobs that cannot start.
// Placement strategies (binpack, spread, topology, bestfit, random, fgd) choose nodes here; policies never
// touch nodes. Nodes may also limit CPU and memory: a job's host requests must fit beside its GPUs.
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cluster_job.hpp"
#include "cluster_spec.hpp"
#include "fragmentation.hpp"

namespace trainsim::sim::cluster {

// Where a job goes among the nodes that hold it:
//  - binpack: the fullest node (fewest whole GPUs left; for a share of a GPU, the GPU with the fewest thousandths
//    left): the paper's GPU packing;
//  - spread: the emptiest (Kubernetes' LeastAllocated);
//  - topology: binpack, and a gang over the fewest leaf switches;
//  - bestfit: the node left with the least CPU and GPU, each over the cluster's largest node, weighted half and
//    half (the best-fit baseline of Weng et al., ATC'23);
//  - random: a node drawn uniformly (and a GPU among those that fit);
//  - fgd: the node and GPU where the fragmentation of the target workload grows least (fragmentation.hpp).
// Gangs over several nodes are placed as binpack places them under bestfit, random and fgd.
enum class PlacementKind { Binpack, Spread, Topology, BestFit, Random, Fgd };
const char* to_string(PlacementKind k);
// "binpack", "spread", "topology", "bestfit", "random", "fgd"; false when unknown.
bool placement_from_string(const std::string& s, PlacementKind* out);
std::vector<std::string> placement_names();

struct Placement {
  struct Part {
    int node = 0;
    int whole = 0;        // whole GPUs on this node
    int shared_gpu = -1;  // the GPU of a fractional request (index within the node), -1 when none
    int milli = 0;        // its thousandths
    std::uint64_t gpus = 0;  // which GPUs of the node the whole ones are (bit g: GPU g), chosen by place()
    std::int64_t cpu_milli = 0, memory_mib = 0;  // the job's host requests on this node
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
  int gpus_on(int node) const {
    return gpu_offset_[static_cast<std::size_t>(node) + 1] - gpu_offset_[static_cast<std::size_t>(node)];
  }
  bool schedulable(int node) const { return node_schedulable_[static_cast<std::size_t>(node)] != 0; }
  int free_whole(int node) const { return free_whole_[static_cast<std::size_t>(node)]; }
  int free_milli(int node, int gpu) const {  // inline: a backfill plan reads every GPU of the cluster per reservation
    return gpu_free_milli_[static_cast<std::size_t>(gpu_offset_[static_cast<std::size_t>(node)] + gpu)];
  }
  const ClusterSpec& spec() const { return *spec_; }

  // Whole-GPU capacity in service (schedulable nodes) and allocated, in thousandths of a GPU.
  std::int64_t capacity_milli() const { return capacity_milli_; }
  std::int64_t allocated_milli() const { return allocated_milli_; }
  // Counts the times GPUs or nodes were freed: a job that found no placement cannot find one before it changes.
  std::uint64_t release_epoch() const { return release_epoch_; }

  // Can `job` run on pool `pool` at all (GPU type allowed, fits a node or a gang of nodes of the pool)?
  bool pool_allowed(const ClusterJob& job, int pool) const {  // inline: searches call it per node
    return job.gpu_types.empty() || pool_allowed_typed(job, pool);
  }
  // Whether the job could start now: a quick count of whole and shared GPUs, exact for jobs without CPU or
  // memory requests; with them it may say yes where place() finds no node with the host room.
  bool fits(const ClusterJob& job) const;
  // A placement, or an empty one when it does not fit now.
  Placement place(const ClusterJob& job, PlacementKind kind) const;
  void allocate(const Placement& p);
  void release(const Placement& p);

  // FGD's target workload (fgd placement), shared by copies of the state; random placement's seed.
  void set_target_workload(std::shared_ptr<const FragmentationMeasure> measure) { fragmentation_ = std::move(measure); }
  void seed_random(std::uint64_t seed) { random_state_ = seed; }
  // Whether a node's free CPU and memory hold these requests (a pool that limits neither always does).
  bool host_room(int node, std::int64_t cpu_milli, std::int64_t memory_mib) const;
  // Whether an idle node of `pool` holds the job's host requests for `gpus` GPUs as place() divides them (all on
  // one node, or a gang's share per whole node): false means no placement of that size can ever hold the job.
  bool host_fits_empty_node(const ClusterJob& job, int gpus, int pool) const;
  // The node as the fragmentation measure reads it.
  NodeView view(int node) const;

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
  // The single node (and for a share of a GPU, the GPU) the placement takes; false when none holds the job.
  bool pick_single_node(const ClusterJob& job, PlacementKind kind, int* node, int* gpu) const;
  // Requests that found no placement since the last time GPUs or nodes were freed: a job asking at least as much
  // cannot be placed either (placement only shrinks what is free until something is released), so a pass over
  // thousands of waiting jobs does not search the nodes for each.
  struct Unplaceable {
    int gpus, gpu_milli;
    bool shared;
    std::int64_t cpu_milli, memory_mib;
    std::vector<std::string> gpu_types;
  };
  bool known_unplaceable(const ClusterJob& job, bool shared) const;
  bool pool_allowed_typed(const ClusterJob& job, int pool) const;  // the job names GPU types
  std::uint64_t next_random() const;
  int free_whole_in_pool(int pool) const;  // whole GPUs free on its schedulable nodes
  bool place_gang(const ClusterJob& job, int pool, PlacementKind kind, Placement* out) const;

  const ClusterSpec* spec_;  // outlives the state (copies share it: a trial placement copies the state)
  std::vector<int> node_pool_, node_leaf_, free_whole_, gpu_offset_;
  std::vector<std::uint8_t> node_schedulable_, node_standby_;
  std::vector<std::int16_t> gpu_free_milli_;
  std::vector<std::int64_t> cpu_free_, memory_free_;  // per node (meaningless where its pool limits none)
  std::int64_t max_cpu_milli_ = 0;                     // the largest node's CPU (bestfit's scale)
  int max_gpus_per_node_ = 1;
  mutable std::vector<Unplaceable> unplaceable_;
  std::uint64_t release_epoch_ = 1;
  std::shared_ptr<const FragmentationMeasure> fragmentation_;
  mutable std::uint64_t random_state_ = 0;
  // Per pool: nodes (schedulable) with k whole GPUs free, k = 0..gpus_per_node; and nodes with a partly used GPU.
  std::vector<std::vector<int>> free_hist_;
  std::vector<int> pool_first_node_;
  // Per pool: standby nodes out of service, ready to swap in (standby_node takes the lowest without a scan: a
  // 100,000-node pool fails thousands of times a day).
  std::vector<std::set<int>> spares_ready_;
  std::int64_t capacity_milli_ = 0, allocated_milli_ = 0;
};

}  // namespace trainsim::sim::cluster
