#pragma once
// Storage tiers (local NVMe, a parallel file system, an object store), registered by name, and the bandwidth
// one job gets from a tier it shares: what checkpoints are written to and training data is read from.
#include <string>
#include <vector>

namespace trainsim {

class JsonReader;

struct StorageTier {
  std::string name;
  std::string description;
  std::string source;
  double aggregate_bandwidth = 0;  // bytes/s the tier sustains for all clients together; 0 = grows with the nodes (local disks)
  double per_node_bandwidth = 0;   // bytes/s one node writes or reads
  bool survives_node_loss = true;  // local NVMe does not: a lost node's shard must come from a replica (assumed present)
};
const std::vector<StorageTier>& storage_tiers();  // sorted by name
std::vector<std::string> storage_tier_names();
const StorageTier* find_storage_tier(const std::string& name);
struct RegisterStorageTier {
  explicit RegisterStorageTier(StorageTier tier);
};

// Bandwidth one job gets from a tier when `nodes` of its nodes write (or read) together and
// `concurrent_jobs` jobs checkpoint at the same time: its share of the aggregate, capped by what its
// nodes can push: min(aggregate / concurrent_jobs, nodes x per_node).
double shared_bandwidth(const StorageTier& tier, int nodes, int concurrent_jobs);


// A scenario's choice of tier: a name, or {tier, aggregate_bandwidth, per_node_bandwidth, concurrent_jobs}.
struct StorageChoice {
  std::string tier = "parallel-fs";
  double aggregate_bandwidth = 0;  // overrides the tier's (0: the tier's)
  double per_node_bandwidth = 0;   // overrides the tier's (0: the tier's)
  int concurrent_jobs = 1;         // jobs using the tier at once, sharing its aggregate
};
// Reads `key` of r as a StorageChoice (absent: `fallback`, the default recorded with `reason`).
StorageChoice read_storage_choice(JsonReader& r, const std::string& key, const StorageChoice& fallback, const std::string& reason);
// The named tier with the choice's overrides applied; an unknown name throws InputError naming `what`.
StorageTier resolved_tier(const StorageChoice& c, const std::string& what);
// This job's share of the tier (shared_bandwidth) for the choice.
double shared_bandwidth(const StorageChoice& c, int nodes, const std::string& what);

}  // namespace trainsim
