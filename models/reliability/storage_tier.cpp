#include "models/reliability/storage_tier.hpp"

#include <algorithm>

#include "models/core/json_reader.hpp"
#include "models/core/name_registry.hpp"
#include "models/reliability/reliability_limits.hpp"

namespace trainsim {

// Registry and built-in tiers in one file: whatever looks a tier up keeps the registrations.

namespace {
NameRegistry<StorageTier>& tier_registry() {
  static NameRegistry<StorageTier> all;
  return all;
}
}  // namespace

const std::vector<StorageTier>& storage_tiers() { return tier_registry().entries(); }
std::vector<std::string> storage_tier_names() { return tier_registry().names(); }

const StorageTier* find_storage_tier(const std::string& name) { return tier_registry().find(name); }

RegisterStorageTier::RegisterStorageTier(StorageTier tier) { tier_registry().add(std::move(tier)); }

double shared_bandwidth(const StorageTier& tier, int nodes, int concurrent_jobs) {
  const double nodes_bw = std::max(1, nodes) * tier.per_node_bandwidth;
  if (tier.aggregate_bandwidth <= 0) return nodes_bw;
  return std::min(tier.aggregate_bandwidth / std::max(1, concurrent_jobs), nodes_bw);
}

namespace {

const RegisterStorageTier reg_nvme{{"local-nvme",
                                    "each node writes its shard to its own NVMe drives: scales with the nodes, lost with a node "
                                    "(shards assumed mirrored to a neighbour)",
                                    "assumption: 12 GB/s a node, about half the raw sequential write of 8 data-center U.2 "
                                    "drives in RAID 0 (DGX H100: 8 x 3.84 TB)",
                                    0, 12e9, false}};
const RegisterStorageTier reg_pfs{{"parallel-fs",
                                   "a shared parallel file system (Lustre, GPFS, Tectonic): its aggregate bandwidth is shared by "
                                   "every writer",
                                   "Llama 3 paper (arXiv 2407.21783) §3.3.1: Tectonic sustains 2 TB/s (7 TB/s peak); 25 GB/s per "
                                   "client node is an assumption",
                                   2e12, 25e9, true}};
const RegisterStorageTier reg_object{{"object-store",
                                      "an object store (S3, GCS, Azure Blob) reached over the front-end network",
                                      "AWS S3 performance guide: up to 100 Gb/s per instance with parallel requests (12.5 GB/s; "
                                      "10 GB/s used); 200 GB/s for a bucket shared by a cluster is an assumption",
                                      200e9, 10e9, true}};

}  // namespace

StorageChoice read_storage_choice(JsonReader& r, const std::string& key, const StorageChoice& fallback, const std::string& reason) {
  StorageChoice c = fallback;
  if (!r.has(key)) {
    r.record_default(key, "\"" + fallback.tier + "\"", reason);
  } else if (r.raw(key).is_string()) {
    c.tier = r.get_enum(key, tier_registry().names(), fallback.tier, "");
  } else {
    namespace lim = reliability_limits;
    JsonReader st(r.raw(key), r.child_path(key), r.defaults());
    st.mark_read({"tier", "aggregate_bandwidth", "per_node_bandwidth", "concurrent_jobs"});
    c.tier = st.get_enum("tier", tier_registry().names(), fallback.tier, reason);
    if (st.has("aggregate_bandwidth"))
      c.aggregate_bandwidth = lim::read_quantity(st, "aggregate_bandwidth", Quantity::Bandwidth, 0, "", lim::kAggregateBandwidth);
    if (st.has("per_node_bandwidth"))
      c.per_node_bandwidth = lim::read_quantity(st, "per_node_bandwidth", Quantity::Bandwidth, 0, "", lim::kNodeBandwidth);
    c.concurrent_jobs = lim::read_int(st, "concurrent_jobs", 1, "", lim::kConcurrentJobs);
    st.reject_unknown();
  }
  return c;
}

StorageTier resolved_tier(const StorageChoice& c, const std::string& what) {
  const StorageTier* found = find_storage_tier(c.tier);
  if (!found) tier_registry().unknown(what, c.tier, {.hint = ""});
  StorageTier tier = *found;
  if (c.aggregate_bandwidth > 0) tier.aggregate_bandwidth = c.aggregate_bandwidth;
  if (c.per_node_bandwidth > 0) tier.per_node_bandwidth = c.per_node_bandwidth;
  return tier;
}

double shared_bandwidth(const StorageChoice& c, int nodes, const std::string& what) {
  return shared_bandwidth(resolved_tier(c, what), nodes, c.concurrent_jobs);
}

}  // namespace trainsim
