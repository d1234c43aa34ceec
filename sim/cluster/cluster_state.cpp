#include "cluster_state.hpp"

#include <algorithm>
#include <climits>

namespace trainsim::sim::cluster {

namespace {
constexpr int kWhole = 1000;
}

const char* to_string(PlacementKind k) {
  switch (k) {
    case PlacementKind::Binpack: return "binpack";
    case PlacementKind::Spread: return "spread";
    case PlacementKind::Topology: return "topology";
  }
  return "binpack";
}

bool placement_from_string(const std::string& s, PlacementKind* out) {
  for (PlacementKind k : {PlacementKind::Binpack, PlacementKind::Spread, PlacementKind::Topology})
    if (s == to_string(k)) {
      *out = k;
      return true;
    }
  return false;
}

std::vector<std::string> placement_names() { return {"binpack", "spread", "topology"}; }

ClusterState::ClusterState(const ClusterSpec& spec) : spec_(&spec) {
  int gpu = 0;
  for (std::size_t p = 0; p < spec.pools.size(); ++p) {
    const NodePool& pool = spec.pools[p];
    pool_first_node_.push_back(static_cast<int>(node_pool_.size()));
    free_hist_.emplace_back(static_cast<std::size_t>(pool.gpus_per_node) + 1, 0);
    for (int n = 0; n < pool.nodes + pool.spare_nodes; ++n) {
      const int node = static_cast<int>(node_pool_.size());
      node_pool_.push_back(static_cast<int>(p));
      node_leaf_.push_back(node / std::max(1, spec.nodes_per_leaf));
      gpu_offset_.push_back(gpu);
      gpu += pool.gpus_per_node;
      free_whole_.push_back(pool.gpus_per_node);
      node_schedulable_.push_back(0);
      node_standby_.push_back(n >= pool.nodes ? 1 : 0);
      for (int g = 0; g < pool.gpus_per_node; ++g) gpu_free_milli_.push_back(kWhole);
    }
  }
  gpu_offset_.push_back(gpu);
  spares_ready_.resize(spec.pools.size());
  for (int n = 0; n < nodes(); ++n) {
    if (!is_standby(n)) set_schedulable(n, true);
    note_spare(n);
  }
}

void ClusterState::note_spare(int node) {
  std::set<int>& ready = spares_ready_[static_cast<std::size_t>(pool_of(node))];
  if (is_standby(node) && !schedulable(node)) ready.insert(node);
  else ready.erase(node);
}

int ClusterState::gpus_on(int node) const {
  return gpu_offset_[static_cast<std::size_t>(node) + 1] - gpu_offset_[static_cast<std::size_t>(node)];
}

int ClusterState::free_milli(int node, int gpu) const {
  return gpu_free_milli_[static_cast<std::size_t>(gpu_offset_[static_cast<std::size_t>(node)] + gpu)];
}

void ClusterState::count_node(int node, int sign) {
  free_hist_[static_cast<std::size_t>(pool_of(node))][static_cast<std::size_t>(free_whole(node))] += sign;
}

void ClusterState::set_schedulable(int node, bool on) {
  if (schedulable(node) == on) return;
  const std::int64_t gpus = gpus_on(node);
  if (on) {
    node_schedulable_[static_cast<std::size_t>(node)] = 1;
    count_node(node, +1);
    capacity_milli_ += gpus * kWhole;
  } else {
    count_node(node, -1);
    node_schedulable_[static_cast<std::size_t>(node)] = 0;
    capacity_milli_ -= gpus * kWhole;
  }
  note_spare(node);
}

int ClusterState::standby_node(int pool) const {
  const std::set<int>& ready = spares_ready_[static_cast<std::size_t>(pool)];
  return ready.empty() ? -1 : *ready.begin();
}

void ClusterState::set_standby(int node, bool standby) {
  node_standby_[static_cast<std::size_t>(node)] = standby ? 1 : 0;
  note_spare(node);
}

bool ClusterState::pool_allowed(const ClusterJob& job, int pool) const {
  const NodePool& p = spec_->pools[static_cast<std::size_t>(pool)];
  if (!job.gpu_types.empty() && std::find(job.gpu_types.begin(), job.gpu_types.end(), p.gpu) == job.gpu_types.end()) return false;
  return true;
}


bool ClusterState::fits(const ClusterJob& job) const {
  const bool shared = shares_gpu(job, spec_->gpu_sharing);
  for (std::size_t p = 0; p < spec_->pools.size(); ++p) {
    if (!pool_allowed(job, static_cast<int>(p))) continue;
    const std::vector<int>& hist = free_hist_[p];
    const int gpn = spec_->pools[p].gpus_per_node;
    if (shared) {
      int with_free = 0;
      for (int k = 1; k <= gpn; ++k) with_free += hist[static_cast<std::size_t>(k)];
      if (with_free > 0) return true;
      // Only partly used GPUs are left: look for one with enough thousandths free.
      const int first = pool_first_node_[p];
      for (int n = first; n < first + spec_->pools[p].nodes + spec_->pools[p].spare_nodes; ++n) {
        if (!schedulable(n)) continue;
        for (int g = 0; g < gpn; ++g)
          if (free_milli(n, g) >= job.gpu_milli) return true;
      }
      continue;
    }
    if (job.gpus <= gpn) {
      for (int k = job.gpus; k <= gpn; ++k)
        if (hist[static_cast<std::size_t>(k)] > 0) return true;
      continue;
    }
    const int full = job.gpus / gpn, rest = job.gpus % gpn;
    const int empty_nodes = hist[static_cast<std::size_t>(gpn)];
    if (empty_nodes < full) continue;
    if (rest == 0 || empty_nodes > full) return true;
    for (int k = rest; k < gpn; ++k)
      if (hist[static_cast<std::size_t>(k)] > 0) return true;
  }
  return false;
}

int ClusterState::pick_single_node(const ClusterJob& job, PlacementKind kind) const {
  // Over every pool the job may use, not the first that fits: binpack and topology take the fullest node that
  // fits (fewest GPUs left idle beside the job), spread the emptiest.
  int best = -1, best_key = 0;
  for (int n = 0; n < nodes(); ++n) {
    if (!schedulable(n) || free_whole(n) < job.gpus || !pool_allowed(job, pool_of(n))) continue;
    const int key = kind == PlacementKind::Spread ? -free_whole(n) : free_whole(n);
    if (best < 0 || key < best_key) best = n, best_key = key;
  }
  return best;
}

int ClusterState::free_whole_in_pool(int pool) const {
  const std::vector<int>& hist = free_hist_[static_cast<std::size_t>(pool)];
  int free = 0;
  for (std::size_t k = 1; k < hist.size(); ++k) free += static_cast<int>(k) * hist[k];
  return free;
}

bool ClusterState::place_gang(const ClusterJob& job, int pool, PlacementKind kind, Placement* out) const {
  const NodePool& p = spec_->pools[static_cast<std::size_t>(pool)];
  const int gpn = p.gpus_per_node, first = pool_first_node_[static_cast<std::size_t>(pool)];
  const int full = job.gpus / gpn, rest = job.gpus % gpn;
  std::vector<int> empty;
  for (int n = first; n < first + p.nodes + p.spare_nodes; ++n)
    if (schedulable(n) && free_whole(n) == gpn) empty.push_back(n);
  if (static_cast<int>(empty.size()) < full) return false;
  std::vector<int> chosen;
  if (kind == PlacementKind::Topology) {
    // Fewest leaf switches: the leaf with the fewest empty nodes that still holds the whole job (best fit),
    // else leaves in decreasing order of empty nodes until the job is covered.
    std::vector<std::pair<int, std::vector<int>>> by_leaf;
    for (int n : empty) {
      if (by_leaf.empty() || by_leaf.back().first != leaf_of(n)) by_leaf.push_back({leaf_of(n), {}});
      by_leaf.back().second.push_back(n);
    }
    const int need = full + (rest > 0 ? 1 : 0);
    int best = -1;
    for (std::size_t i = 0; i < by_leaf.size(); ++i)
      if (static_cast<int>(by_leaf[i].second.size()) >= need && (best < 0 || by_leaf[i].second.size() < by_leaf[static_cast<std::size_t>(best)].second.size()))
        best = static_cast<int>(i);
    if (best >= 0) {
      const auto& nodes = by_leaf[static_cast<std::size_t>(best)].second;
      chosen.assign(nodes.begin(), nodes.begin() + full);
    } else {
      std::stable_sort(by_leaf.begin(), by_leaf.end(), [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
      for (const auto& leaf : by_leaf)
        for (int n : leaf.second)
          if (static_cast<int>(chosen.size()) < full) chosen.push_back(n);
    }
  } else if (kind == PlacementKind::Spread) {
    // Round-robin over leaves: the i-th empty node of every leaf before the (i+1)-th of any.
    std::vector<std::pair<int, int>> order;  // (rank within its leaf, node)
    int rank = 0;
    for (std::size_t i = 0; i < empty.size(); ++i) {
      rank = i > 0 && leaf_of(empty[i]) == leaf_of(empty[i - 1]) ? rank + 1 : 0;
      order.push_back({rank, empty[i]});
    }
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (int i = 0; i < full; ++i) chosen.push_back(order[static_cast<std::size_t>(i)].second);
  } else {
    chosen.assign(empty.begin(), empty.begin() + full);
  }
  for (int n : chosen) out->parts.push_back({n, gpn, -1, 0});
  if (rest > 0) {
    // The remainder on one more node: in a leaf already used when it can (topology), the fullest that fits
    // (binpack, topology) or the emptiest (spread).
    int best = -1;
    long best_key = 0;
    for (int n = first; n < first + p.nodes + p.spare_nodes; ++n) {
      if (!schedulable(n) || free_whole(n) < rest || std::find(chosen.begin(), chosen.end(), n) != chosen.end()) continue;
      long key = kind == PlacementKind::Spread ? -free_whole(n) : free_whole(n);
      if (kind == PlacementKind::Topology) {
        bool same_leaf = false;
        for (int c : chosen) same_leaf = same_leaf || leaf_of(c) == leaf_of(n);
        key += same_leaf ? 0 : 1000;
      }
      if (best < 0 || key < best_key) best = n, best_key = key;
    }
    if (best < 0) {
      out->parts.clear();
      return false;
    }
    out->parts.push_back({best, rest, -1, 0});
  }
  return true;
}

Placement ClusterState::place(const ClusterJob& job, PlacementKind kind) const {
  Placement out;
  if (shares_gpu(job, spec_->gpu_sharing)) {
    // A shared GPU, over every allowed pool: binpack takes the GPU with the fewest thousandths left that still
    // fit (a partly used one before an idle one), spread the one with the most.
    int best_node = -1, best_gpu = -1, best_key = 0;
    for (int n = 0; n < nodes(); ++n) {
      if (!schedulable(n) || !pool_allowed(job, pool_of(n))) continue;
      for (int g = 0; g < gpus_on(n); ++g) {
        const int f = free_milli(n, g);
        if (f < job.gpu_milli) continue;
        const int key = kind == PlacementKind::Spread ? -f : f;
        if (best_node < 0 || key < best_key) best_node = n, best_gpu = g, best_key = key;
      }
    }
    if (best_node >= 0) out.parts.push_back({best_node, 0, best_gpu, job.gpu_milli});
  } else if (int n = pick_single_node(job, kind); n >= 0) {
    out.parts.push_back({n, job.gpus, -1, 0});
  } else {
    // A gang over several nodes stays within one pool (one GPU type, one fabric): binpack and topology take
    // the pool with the fewest whole GPUs free that holds it, spread the one with the most.
    int best_free = 0;
    for (std::size_t p = 0; p < spec_->pools.size(); ++p) {
      const int pool = static_cast<int>(p);
      if (!pool_allowed(job, pool) || job.gpus <= spec_->pools[p].gpus_per_node) continue;
      const int free = free_whole_in_pool(pool);
      const bool better = kind == PlacementKind::Spread ? free > best_free : free < best_free;
      if (!out.empty() && !better) continue;
      Placement trial;
      if (!place_gang(job, pool, kind, &trial)) continue;
      out = std::move(trial);
      best_free = free;
    }
  }
  // The whole GPUs of each part: the node's first idle ones.
  for (Placement::Part& part : out.parts) {
    const int base = gpu_offset_[static_cast<std::size_t>(part.node)];
    for (int g = 0, left = part.whole; g < gpus_on(part.node) && left > 0; ++g)
      if (gpu_free_milli_[static_cast<std::size_t>(base + g)] == kWhole) part.gpus |= std::uint64_t{1} << g, --left;
  }
  std::vector<int> leaves;
  for (const Placement::Part& part : out.parts)
    if (std::find(leaves.begin(), leaves.end(), leaf_of(part.node)) == leaves.end()) leaves.push_back(leaf_of(part.node));
  out.leaves = static_cast<int>(leaves.size());
  return out;
}

void ClusterState::allocate(const Placement& p) { apply(p, +1); }
void ClusterState::release(const Placement& p) { apply(p, -1); }

void ClusterState::apply(const Placement& p, int sign) {
  for (const Placement::Part& part : p.parts) {
    const bool counted = schedulable(part.node);
    if (counted) count_node(part.node, -1);
    const int base = gpu_offset_[static_cast<std::size_t>(part.node)];
    // The very GPUs place() chose: a release never frees a GPU that fractional jobs have filled instead.
    for (int g = 0; g < gpus_on(part.node); ++g)
      if (part.gpus >> g & 1) gpu_free_milli_[static_cast<std::size_t>(base + g)] = sign > 0 ? 0 : kWhole;
    if (part.shared_gpu >= 0) {
      std::int16_t& f = gpu_free_milli_[static_cast<std::size_t>(base + part.shared_gpu)];
      f = static_cast<std::int16_t>(f - sign * part.milli);
    }
    int whole = 0;
    for (int g = 0; g < gpus_on(part.node); ++g) whole += gpu_free_milli_[static_cast<std::size_t>(base + g)] == kWhole;
    free_whole_[static_cast<std::size_t>(part.node)] = whole;
    if (counted) count_node(part.node, +1);
    allocated_milli_ += sign * (static_cast<std::int64_t>(part.whole) * kWhole + part.milli);
  }
}

std::int64_t ClusterState::unusable_free_milli(const std::vector<const ClusterJob*>& waiting) const {
  std::int64_t unusable = 0;
  for (std::size_t p = 0; p < spec_->pools.size(); ++p) {
    const NodePool& np = spec_->pools[p];
    // The smallest demand on one node of the jobs that may run on this pool: whole GPUs, and thousandths of one.
    int min_whole = INT_MAX, min_milli = INT_MAX;
    for (const ClusterJob* j : waiting) {
      if (!pool_allowed(*j, static_cast<int>(p))) continue;
      if (shares_gpu(*j, spec_->gpu_sharing)) min_milli = std::min(min_milli, j->gpu_milli);
      else min_whole = std::min(min_whole, std::min(j->elastic() ? j->elastic_min : j->gpus, np.gpus_per_node));
    }
    const int first = pool_first_node_[p];
    for (int n = first; n < first + np.nodes + np.spare_nodes; ++n) {
      if (!schedulable(n)) continue;
      const bool whole_usable = free_whole(n) >= min_whole || min_milli <= kWhole;
      for (int g = 0; g < np.gpus_per_node; ++g) {
        const int f = free_milli(n, g);
        if (f == 0) continue;
        const bool usable = f == kWhole ? whole_usable : f >= min_milli;
        if (!usable) unusable += f;
      }
    }
  }
  return unusable;
}

}  // namespace trainsim::sim::cluster
