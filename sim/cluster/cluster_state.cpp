#include "cluster_state.hpp"

#include <algorithm>
#include <climits>

#include "sim/random.hpp"

namespace trainsim::sim::cluster {

namespace {
constexpr int kWhole = 1000;

constexpr PlacementKind kPlacements[] = {PlacementKind::Binpack, PlacementKind::Spread, PlacementKind::Topology,
                                         PlacementKind::BestFit, PlacementKind::Random, PlacementKind::Fgd};

// A gang's or a node's share of a job's host requests: `part` of its `gpus` GPUs, rounded up.
std::int64_t host_share(std::int64_t total, int part, int gpus) {
  return gpus <= 0 || part >= gpus ? total : (total * part + gpus - 1) / gpus;
}
}  // namespace

const char* to_string(PlacementKind k) {
  switch (k) {
    case PlacementKind::Binpack: return "binpack";
    case PlacementKind::Spread: return "spread";
    case PlacementKind::Topology: return "topology";
    case PlacementKind::BestFit: return "bestfit";
    case PlacementKind::Random: return "random";
    case PlacementKind::Fgd: return "fgd";
  }
  return "binpack";
}

bool placement_from_string(const std::string& s, PlacementKind* out) {
  for (PlacementKind k : kPlacements)
    if (s == to_string(k)) {
      *out = k;
      return true;
    }
  return false;
}

std::vector<std::string> placement_names() {
  std::vector<std::string> out;
  for (PlacementKind k : kPlacements) out.emplace_back(to_string(k));
  return out;
}

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
      cpu_free_.push_back(pool.cpu_milli);
      memory_free_.push_back(pool.memory_mib);
    }
    max_cpu_milli_ = std::max(max_cpu_milli_, pool.cpu_milli);
    max_gpus_per_node_ = std::max(max_gpus_per_node_, pool.gpus_per_node);
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

void ClusterState::count_node(int node, int sign) {
  free_hist_[static_cast<std::size_t>(pool_of(node))][static_cast<std::size_t>(free_whole(node))] += sign;
}

void ClusterState::set_schedulable(int node, bool on) {
  if (schedulable(node) == on) return;
  const std::int64_t gpus = gpus_on(node);
  if (on) {
    unplaceable_.clear();  // more is free: what could not be placed may be now
    ++release_epoch_;
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

bool ClusterState::pool_allowed_typed(const ClusterJob& job, int pool) const {
  const NodePool& p = spec_->pools[static_cast<std::size_t>(pool)];
  return std::find(job.gpu_types.begin(), job.gpu_types.end(), p.gpu) != job.gpu_types.end();
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

bool ClusterState::host_room(int node, std::int64_t cpu_milli, std::int64_t memory_mib) const {
  const NodePool& p = spec_->pools[static_cast<std::size_t>(pool_of(node))];
  const auto n = static_cast<std::size_t>(node);
  return (p.cpu_milli == 0 || cpu_free_[n] >= cpu_milli) && (p.memory_mib == 0 || memory_free_[n] >= memory_mib);
}

bool ClusterState::host_fits_empty_node(const ClusterJob& job, int gpus, int pool) const {
  const NodePool& p = spec_->pools[static_cast<std::size_t>(pool)];
  const int on_node = gpus > p.gpus_per_node ? p.gpus_per_node : gpus;
  return (p.cpu_milli == 0 || host_share(job.cpu_milli, on_node, gpus) <= p.cpu_milli) &&
         (p.memory_mib == 0 || host_share(job.memory_mib, on_node, gpus) <= p.memory_mib);
}

NodeView ClusterState::view(int node) const {
  const NodePool& p = spec_->pools[static_cast<std::size_t>(pool_of(node))];
  const auto n = static_cast<std::size_t>(node);
  NodeView v;
  v.gpu_model = &p.gpu;
  v.cpu_free = cpu_free_[n], v.cpu_limit = p.cpu_milli;
  v.memory_free = memory_free_[n], v.memory_limit = p.memory_mib;
  v.gpu_free = &gpu_free_milli_[static_cast<std::size_t>(gpu_offset_[n])];
  v.gpus = gpus_on(node);
  return v;
}

std::uint64_t ClusterState::next_random() const {
  // A counter through splitmix64: a placement's draw depends only on the seed and the draws before it.
  return splitmix64(++random_state_);
}

bool ClusterState::pick_single_node(const ClusterJob& job, PlacementKind kind, int* node, int* gpu) const {
  // Over every pool the job may use, not the first that fits. Each candidate (a node, and for a share of a GPU
  // one of its GPUs) gets a key, smaller is better, first in node order among equals.
  const bool shared = shares_gpu(job, spec_->gpu_sharing);
  const bool fgd = kind == PlacementKind::Fgd && fragmentation_;
  const int milli = shared ? job.gpu_milli : kWhole;
  int best_node = -1, best_gpu = -1, candidates = 0;
  double best_key = 0, best_key2 = 0;
  int ties = 0;  // fgd: candidates equal to the best so far (one is drawn among them, as Kubernetes' selectHost does)
  auto consider = [&](int n, int g, double key, double key2) {
    const bool tie = best_node >= 0 && key == best_key && key2 == best_key2;
    if (fgd && tie) {
      if (next_random() % static_cast<std::uint64_t>(++ties) == 0) best_node = n, best_gpu = g;
      return;
    }
    if (best_node < 0 || key < best_key || (key == best_key && key2 < best_key2)) best_node = n, best_gpu = g, best_key = key, best_key2 = key2, ties = 1;
  };
  std::int16_t after[64];
  for (int n = 0; n < nodes(); ++n) {
    if (!schedulable(n) || !pool_allowed(job, pool_of(n)) || !host_room(n, job.cpu_milli, job.memory_mib)) continue;
    const int gpn = gpus_on(n);
    if (!shared && free_whole(n) < job.gpus) continue;
    if (shared) {
      bool any = false;
      for (int g = 0; g < gpn && !any; ++g) any = free_milli(n, g) >= milli;
      if (!any) continue;
    }
    if (kind == PlacementKind::Random) {
      // Reservoir sampling: the k-th node that holds the job replaces the choice with probability 1/k.
      if (next_random() % static_cast<std::uint64_t>(++candidates) == 0) best_node = n;
      continue;
    }
    if (fgd) {
      // The growth of the node's fragmentation if the job went here (on each GPU it could take, for a share).
      const NodeView before = view(n);
      const double f0 = fragmentation_->of(before);
      NodeView v = before;
      v.cpu_free -= job.cpu_milli, v.memory_free -= job.memory_mib;
      std::copy(before.gpu_free, before.gpu_free + gpn, after);
      v.gpu_free = after;
      if (shared) {
        for (int g = 0; g < gpn; ++g) {
          if (after[g] < milli) continue;
          after[g] = static_cast<std::int16_t>(after[g] - milli);
          consider(n, g, fragmentation_->of(v) - f0, 0);
          after[g] = static_cast<std::int16_t>(after[g] + milli);
        }
      } else {
        for (int g = 0, left = job.gpus; g < gpn && left > 0; ++g)
          if (after[g] == kWhole) after[g] = 0, --left;
        consider(n, -1, fragmentation_->of(v) - f0, 0);
      }
      continue;
    }
    double node_key = 0;
    if (kind == PlacementKind::BestFit) {
      // What the node keeps free after the job, CPU and GPU each over the largest node's, half and half.
      std::int64_t free_gpu = 0;
      for (int g = 0; g < gpn; ++g) free_gpu += free_milli(n, g);
      const std::int64_t asked = shared ? milli : static_cast<std::int64_t>(job.gpus) * kWhole;
      node_key = 0.5 * static_cast<double>(free_gpu - asked) / (max_gpus_per_node_ * kWhole);
      if (spec_->pools[static_cast<std::size_t>(pool_of(n))].cpu_milli > 0 && max_cpu_milli_ > 0)
        node_key += 0.5 * static_cast<double>(cpu_free_[static_cast<std::size_t>(n)] - job.cpu_milli) / static_cast<double>(max_cpu_milli_);
    }
    const double sign = kind == PlacementKind::Spread ? -1 : 1;
    if (!shared) {
      consider(n, -1, kind == PlacementKind::BestFit ? node_key : sign * free_whole(n), 0);
      continue;
    }
    // A shared GPU: binpack takes the one with the fewest thousandths left that still fit (a partly used one
    // before an idle one), spread the one with the most, bestfit the best node and in it the fullest GPU.
    for (int g = 0; g < gpn; ++g) {
      const int f = free_milli(n, g);
      if (f < milli) continue;
      if (kind == PlacementKind::BestFit) consider(n, g, node_key, f);
      else consider(n, g, sign * f, 0);
    }
  }
  if (best_node < 0) return false;
  if (kind == PlacementKind::Random && shared) {
    std::vector<int> fitting;
    for (int g = 0; g < gpus_on(best_node); ++g)
      if (free_milli(best_node, g) >= milli) fitting.push_back(g);
    best_gpu = fitting[next_random() % fitting.size()];
  }
  *node = best_node;
  *gpu = best_gpu;
  return true;
}

bool ClusterState::known_unplaceable(const ClusterJob& job, bool shared) const {
  for (const Unplaceable& u : unplaceable_)
    if (u.shared == shared && u.gpus <= job.gpus && (!shared || u.gpu_milli <= job.gpu_milli) && u.cpu_milli <= job.cpu_milli &&
        u.memory_mib <= job.memory_mib && (u.gpu_types.empty() || u.gpu_types == job.gpu_types))
      return true;
  return false;
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
  // Each node's share of the job's host requests (the remainder node's likewise).
  const std::int64_t cpu_full = host_share(job.cpu_milli, gpn, job.gpus), memory_full = host_share(job.memory_mib, gpn, job.gpus);
  const std::int64_t cpu_rest = host_share(job.cpu_milli, rest, job.gpus), memory_rest = host_share(job.memory_mib, rest, job.gpus);
  for (int n = first; n < first + p.nodes + p.spare_nodes; ++n)
    if (schedulable(n) && free_whole(n) == gpn && host_room(n, cpu_full, memory_full)) empty.push_back(n);
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
  for (int n : chosen) out->parts.push_back({n, gpn, -1, 0, 0, cpu_full, memory_full});
  if (rest > 0) {
    // The remainder on one more node: in a leaf already used when it can (topology), the fullest that fits
    // (binpack, topology) or the emptiest (spread).
    int best = -1;
    long best_key = 0;
    for (int n = first; n < first + p.nodes + p.spare_nodes; ++n) {
      if (!schedulable(n) || free_whole(n) < rest || !host_room(n, cpu_rest, memory_rest) || std::find(chosen.begin(), chosen.end(), n) != chosen.end())
        continue;
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
    out->parts.push_back({best, rest, -1, 0, 0, cpu_rest, memory_rest});
  }
  return true;
}

Placement ClusterState::place(const ClusterJob& job, PlacementKind kind) const {
  Placement out;
  const bool shared = shares_gpu(job, spec_->gpu_sharing);
  if (known_unplaceable(job, shared)) return out;
  int node = -1, gpu = -1;
  if (pick_single_node(job, kind, &node, &gpu)) {
    out.parts.push_back({node, shared ? 0 : job.gpus, shared ? gpu : -1, shared ? job.gpu_milli : 0, 0, job.cpu_milli, job.memory_mib});
  } else if (!shared) {
    // A gang over several nodes stays within one pool (one GPU type, one fabric): binpack and topology take
    // the pool with the fewest whole GPUs free that holds it, spread the one with the most.
    const PlacementKind gang_kind = kind == PlacementKind::Spread || kind == PlacementKind::Topology ? kind : PlacementKind::Binpack;
    int best_free = 0;
    for (std::size_t p = 0; p < spec_->pools.size(); ++p) {
      const int pool = static_cast<int>(p);
      if (!pool_allowed(job, pool) || job.gpus <= spec_->pools[p].gpus_per_node) continue;
      const int free = free_whole_in_pool(pool);
      const bool better = gang_kind == PlacementKind::Spread ? free > best_free : free < best_free;
      if (!out.empty() && !better) continue;
      Placement trial;
      if (!place_gang(job, pool, gang_kind, &trial)) continue;
      out = std::move(trial);
      best_free = free;
    }
  }
  if (out.empty()) {
    if (unplaceable_.size() < 256) unplaceable_.push_back({job.gpus, job.gpu_milli, shared, job.cpu_milli, job.memory_mib, job.gpu_types});
    return out;
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
    cpu_free_[static_cast<std::size_t>(part.node)] -= sign * part.cpu_milli;
    memory_free_[static_cast<std::size_t>(part.node)] -= sign * part.memory_mib;
    allocated_milli_ += sign * (static_cast<std::int64_t>(part.whole) * kWhole + part.milli);
  }
  if (sign < 0) unplaceable_.clear(), ++release_epoch_;  // more is free: what could not be placed may be now
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
