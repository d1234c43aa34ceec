#include "sim/cluster/policies/backfill_plan.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace trainsim::sim::cluster {

BackfillPlan::BackfillPlan(const ClusterState& state, double now) : state_(&state), now_(now) {
  int gpu = 0;
  for (int n = 0; n < state.nodes(); ++n) {
    first_gpu_.push_back(gpu);
    gpu += state.gpus_on(n);
  }
  first_gpu_.push_back(gpu);
  busy_until_.resize(static_cast<std::size_t>(gpu));
  held_.resize(static_cast<std::size_t>(gpu));
  reserved_mask_.assign(static_cast<std::size_t>(state.nodes()), 0);
  node_version_.assign(static_cast<std::size_t>(state.nodes()), 0);
  reset(now);
}

void BackfillPlan::reset(double now) {
  now_ = now;
  const ClusterState& state = *state_;
  for (int n = 0; n < state.nodes(); ++n) {
    double* busy = &busy_until_[static_cast<std::size_t>(first_gpu_[static_cast<std::size_t>(n)])];
    for (int g = 0; g < state.gpus_on(n); ++g)
      // A GPU in use whose job this plan has not been told of yet stays busy until hold_until() says otherwise.
      busy[g] = !state.schedulable(n) ? kNever : state.free_milli(n, g) == 1000 ? now : kNever;
  }
  // The last pass's reservations, answers, orders and misses go (their storage stays).
  for (int node : reserved_nodes_) {
    for (int gpu = first_gpu_[static_cast<std::size_t>(node)]; gpu < first_gpu_[static_cast<std::size_t>(node) + 1]; ++gpu)
      held_[static_cast<std::size_t>(gpu)].clear();
    reserved_mask_[static_cast<std::size_t>(node)] = 0;
  }
  reserved_nodes_.clear();
  answers_.assign(static_cast<std::size_t>(state.nodes()), NodeAnswer{});
  for (auto& [need, order] : ready_order_) order.cutoff_s = -kNever, order.nodes.clear();
  sorted_ends_.clear();
  misses_.clear();
}

void BackfillPlan::hold_until(const Placement& p, double end_s) {
  // A job expected to end now holds its GPUs until its end is handled: usable only after now.
  if (end_s <= now_) end_s = std::nextafter(now_, kNever);
  for (const Placement::Part& part : p.parts) {
    const int base = first_gpu_[static_cast<std::size_t>(part.node)];
    if (!state_->schedulable(part.node)) continue;  // out of service: busy for ever already
    ++node_version_[static_cast<std::size_t>(part.node)];
    std::uint64_t held = part.gpus;
    if (part.shared_gpu >= 0) held |= std::uint64_t{1} << part.shared_gpu;
    for (; held != 0; held &= held - 1) {  // the held GPUs' bits, lowest first
      double& until = busy_until_[static_cast<std::size_t>(base + std::countr_zero(held))];
      // A shared GPU frees when its last job ends; a GPU first marked busy-for-ever learns its end here.
      until = until == kNever || until <= now_ ? end_s : std::max(until, end_s);
    }
  }
}

void BackfillPlan::reserve(const Placement& p, double from_s, double until_s) {
  for (const Placement::Part& part : p.parts) {
    const int base = first_gpu_[static_cast<std::size_t>(part.node)];
    ++node_version_[static_cast<std::size_t>(part.node)];
    std::uint64_t gpus = 0;
    for (int g = 0; g < state_->gpus_on(part.node); ++g)
      if ((part.gpus >> g & 1) != 0 || g == part.shared_gpu) held_[static_cast<std::size_t>(base + g)].push_back({from_s, until_s}), gpus |= std::uint64_t{1} << g;
    if (!state_->schedulable(part.node)) continue;
    std::uint64_t& mask = reserved_mask_[static_cast<std::size_t>(part.node)];
    if (mask == 0) reserved_nodes_.push_back(part.node);
    mask |= gpus;
  }
}

bool BackfillPlan::usable(int gpu, double t, double runtime_s) const {
  if (busy_until_[static_cast<std::size_t>(gpu)] > t) return false;
  for (const auto& [from, until] : held_[static_cast<std::size_t>(gpu)])
    if (from < t + runtime_s && until > t) return false;
  return true;
}

void BackfillPlan::state_for(double t, double runtime_s, ClusterState& out) const {
  out = *state_;
  freed_.parts.clear(), taken_.parts.clear();
  // One node's GPUs: free them where usable over the run but taken now, take them where free now but not usable.
  auto compare = [&](int n, std::uint64_t only) {
    const int base = first_gpu_[static_cast<std::size_t>(n)];
    Placement::Part freed{n}, taken{n};
    for (int g = 0; g < state_->gpus_on(n); ++g) {
      if ((only >> g & 1) == 0) continue;
      const bool use = usable(base + g, t, runtime_s), free_now = state_->free_milli(n, g) == 1000;
      if (use == free_now) continue;
      Placement::Part& part = use ? freed : taken;
      part.gpus |= std::uint64_t{1} << g;
      ++part.whole;
    }
    if (freed.whole > 0) freed_.parts.push_back(freed);
    if (taken.whole > 0) taken_.parts.push_back(taken);
  };
  if (t == now_) {
    // Now nothing busy is usable (busy ends lie after now): only GPUs a reservation holds can differ from the state.
    for (int node : reserved_nodes_) compare(node, reserved_mask_[static_cast<std::size_t>(node)]);
  } else {
    for (int n = 0; n < state_->nodes(); ++n)
      if (state_->schedulable(n)) compare(n, ~std::uint64_t{0});
  }
  if (!freed_.parts.empty()) out.release(freed_);
  if (!taken_.parts.empty()) out.allocate(taken_);
}

Placement BackfillPlan::binpack_at(const ClusterJob& job, double t, double runtime_s) const {
  // What place() picks on state_for(t, runtime) for a single-node job of whole GPUs under binpack: the node with
  // the fewest usable GPUs that still holds the job (first in node order among equals), its first usable GPUs;
  // only nodes whose bound is at most t can hold it. Jobs asking CPU or memory, or larger than a node of a pool
  // they may use (a gang), are left to state_for.
  Placement out;
  if (job.cpu_milli > 0 || job.memory_mib > 0 || job.gpus < 1) return out;
  for (std::size_t p = 0; p < state_->spec().pools.size(); ++p)
    if (state_->pool_allowed(job, static_cast<int>(p)) && job.gpus > state_->spec().pools[p].gpus_per_node) return out;
  int best = -1, best_count = 0;
  for (const auto& [bound, n] : by_ready_bound(job.gpus, t)) {
    if (bound > t) break;
    // Once a node holds the job exactly, only one earlier in node order could still win.
    if (best >= 0 && best_count == job.gpus && n > best) continue;
    if (!state_->pool_allowed(job, state_->pool_of(n))) continue;
    const int first = first_gpu_[static_cast<std::size_t>(n)];
    int count = 0;
    for (int g = 0; g < state_->gpus_on(n); ++g) count += usable(first + g, t, runtime_s);
    if (count >= job.gpus && (best < 0 || count < best_count || (count == best_count && n < best))) best = n, best_count = count;
  }
  if (best < 0) return out;
  Placement::Part part{best, job.gpus};
  const int first = first_gpu_[static_cast<std::size_t>(best)];
  for (int g = 0, left = job.gpus; g < state_->gpus_on(best) && left > 0; ++g)
    if (usable(first + g, t, runtime_s)) part.gpus |= std::uint64_t{1} << g, --left;
  out.parts.push_back(part);
  out.leaves = 1;
  return out;
}

std::uint64_t BackfillPlan::pools_allowed(const ClusterJob& job) const {
  std::uint64_t bits = 0;
  for (std::size_t p = 0; p < state_->spec().pools.size(); ++p)
    if (state_->pool_allowed(job, static_cast<int>(p))) bits |= std::uint64_t{1} << p;
  return bits;
}

double BackfillPlan::earliest(const ClusterJob& job, double runtime_s, double latest_s) const {
  const bool keyed = state_->spec().pools.size() <= 64;  // beyond, no miss is remembered
  const std::uint64_t pools = keyed ? pools_allowed(job) : 0;
  if (keyed)
    for (const Miss& m : misses_)
      if (m.pools == pools && m.gpus <= job.gpus && m.runtime_s <= runtime_s && m.latest_s >= latest_s) return kNever;
  double best = kNever;
  // Nodes in the order of their lower bounds (busy ends only): the search stops at the first that cannot beat the
  // best found or start within the window, and nothing starts before now.
  for (const auto& [bound, n] : by_ready_bound(job.gpus, latest_s)) {
    if (bound >= best || bound > latest_s || best <= now_) break;
    if (state_->pool_allowed(job, state_->pool_of(n))) best = std::min(best, earliest_on_node_known(n, job.gpus, runtime_s, std::min(latest_s, best)));
  }
  const std::vector<NodePool>& all = state_->spec().pools;
  for (std::size_t p = 0; p < all.size() && best > now_; ++p)
    if (job.gpus > all[p].gpus_per_node && state_->pool_allowed(job, static_cast<int>(p)) &&
        gang_bound(static_cast<int>(p), job.gpus / all[p].gpus_per_node, std::min(latest_s, best)) <= std::min(latest_s, best))
      best = std::min(best, earliest_over_nodes(static_cast<int>(p), job.gpus, runtime_s, std::min(latest_s, best)));
  if (best == kNever && keyed) misses_.push_back({job.gpus, runtime_s, latest_s, pools});
  return best;
}

std::vector<double> BackfillPlan::instants(const std::vector<int>& nodes, double latest_s) const {
  std::vector<double> times;
  instants_into(nodes.data(), nodes.size(), latest_s, times);
  return times;
}

void BackfillPlan::instants_into(const int* nodes, std::size_t count, double latest_s, std::vector<double>& times) const {
  times.assign(1, now_);
  for (const int* it = nodes; it != nodes + count; ++it)
    for (int gpu = first_gpu_[static_cast<std::size_t>(*it)]; gpu < first_gpu_[static_cast<std::size_t>(*it) + 1]; ++gpu) {
      const double b = busy_until_[static_cast<std::size_t>(gpu)];
      if (b > now_ && b <= latest_s) times.push_back(b);
      for (const auto& interval : held_[static_cast<std::size_t>(gpu)])
        if (interval.second > now_ && interval.second <= latest_s) times.push_back(interval.second);
    }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
}

double BackfillPlan::earliest_on_node_known(int node, int need, double runtime_s, double latest_s) const {
  // The node's last answer, while nothing changed on it: a run at least as long cannot start earlier (a start
  // usable for the longer run is usable for the shorter), so an answer found for a shorter or equal run bounds this
  // one from below; for the same run it is this one.
  NodeAnswer& a = answers_[static_cast<std::size_t>(node)];
  const bool valid = a.need == need && a.version == node_version_[static_cast<std::size_t>(node)] && a.runtime_s <= runtime_s;
  if (valid) {
    if (a.t == kNever ? a.latest_s >= latest_s : a.t > latest_s) return kNever;
    if (a.runtime_s == runtime_s && a.t != kNever) return a.t;
  }
  const double t = earliest_on_node(node, need, runtime_s, latest_s);
  a = {need, runtime_s, latest_s, t, node_version_[static_cast<std::size_t>(node)]};
  return t;
}

double BackfillPlan::gang_bound(int pool, int whole_nodes, double cutoff_s) const {
  // A gang needs `whole_nodes` nodes of the pool with every GPU free: not before the whole_nodes-th of them frees
  // its last GPU (busy ends only, the order built once per plan); +inf when that is after cutoff_s.
  const int gpn = state_->spec().pools[static_cast<std::size_t>(pool)].gpus_per_node;
  int found = 0;
  for (const auto& [bound, n] : by_ready_bound(gpn, cutoff_s))
    if (state_->pool_of(n) == pool && ++found >= whole_nodes) return bound;
  return kNever;
}

double BackfillPlan::ready_bound(int node, int need) const {
  // The need-th earliest busy end among the node's GPUs: no start on it before then, reservations or not. Each
  // node's ends are sorted once per plan: a job started later in the pass only makes its GPUs busy longer, so the
  // first reading stays a lower bound.
  if (sorted_ends_.empty()) {
    sorted_ends_ = busy_until_;
    for (int n = 0; n < state_->nodes(); ++n)
      std::sort(sorted_ends_.begin() + first_gpu_[static_cast<std::size_t>(n)], sorted_ends_.begin() + first_gpu_[static_cast<std::size_t>(n) + 1]);
  }
  return std::max(now_, sorted_ends_[static_cast<std::size_t>(first_gpu_[static_cast<std::size_t>(node)] + need - 1)]);
}

const std::vector<std::pair<double, int>>& BackfillPlan::by_ready_bound(int need, double cutoff_s) const {
  // Built once per plan and size (a pass asks hundreds of jobs): a job started later in the pass only makes its
  // GPUs busy longer, so a bound read earlier stays a lower bound and the order stays a safe order to search in.
  // Only nodes bound by cutoff_s (the window's end: no search looks further), again with a later cutoff if asked.
  ReadyOrder& order = ready_order_[need];
  if (cutoff_s > order.cutoff_s) {
    order.nodes.clear();
    order.cutoff_s = cutoff_s;
    for (int n = 0; n < state_->nodes(); ++n)
      if (state_->schedulable(n) && state_->gpus_on(n) >= need)
        if (const double b = ready_bound(n, need); b <= cutoff_s) order.nodes.push_back({b, n});
    std::sort(order.nodes.begin(), order.nodes.end());
  }
  return order.nodes;
}

// A node's own instants in order, each tested GPU by GPU: the first is usually the answer or near it.
double BackfillPlan::earliest_on_node(int node, int need, double runtime_s, double latest_s) const {
  const int first = first_gpu_[static_cast<std::size_t>(node)], last = first_gpu_[static_cast<std::size_t>(node) + 1];
  // Now first, without gathering the node's instants (most nodes of a busy cluster answer here or never).
  int now_usable = 0;
  for (int gpu = first; gpu < last; ++gpu) now_usable += usable(gpu, now_, runtime_s);
  if (now_usable >= need) return now_;
  std::vector<double>& times = scratch_times_;  // reused: a pass asks this of many nodes for hundreds of jobs
  instants_into(&node, 1, latest_s, times);
  for (double t : times) {
    int n = 0;
    for (int gpu = first; gpu < last; ++gpu) n += usable(gpu, t, runtime_s);
    if (n >= need) return t;
  }
  return kNever;
}

// Over several nodes of a pool, testing every node at every instant costs O(instants x reservations); one sweep
// instead. T[0..K) are the pool's instants in order. A GPU is blocked at T[k] while busy (T[k] < its busy end)
// or while a reservation overlaps the run (from < T[k] + runtime and T[k] < until): each condition holds over a
// run of consecutive k found by binary search (both are monotone in T[k]), with usable()'s comparisons. The
// gaps between a GPU's blocked runs change its node's usable count; sweeping k keeps per node that count and per
// pool how many nodes are whole and how many could take the rest. O(E log E) for E busy ends and reservations.
double BackfillPlan::earliest_over_nodes(int pool, int need, double runtime_s, double latest_s) const {
  const int gpn = state_->spec().pools[static_cast<std::size_t>(pool)].gpus_per_node;
  // A node that cannot have the rest (or, without one, all its GPUs) usable by latest_s takes no part at any instant.
  const int least = need % gpn > 0 ? need % gpn : gpn;
  std::vector<int> nodes;
  for (int n = 0; n < state_->nodes(); ++n)
    if (state_->pool_of(n) == pool && state_->schedulable(n) && ready_bound(n, least) <= latest_s) nodes.push_back(n);
  const int full = need / gpn, rest = need % gpn;
  if (static_cast<int>(nodes.size()) < full + (rest > 0 ? 1 : 0)) return kNever;
  const std::vector<double> times = instants(nodes, latest_s);
  const int K = static_cast<int>(times.size());
  auto first_at_or_after = [&](double t) { return static_cast<int>(std::lower_bound(times.begin(), times.end(), t) - times.begin()); };

  struct Change {
    int k, node, delta;  // at T[k], the usable count of nodes[node] changes by delta
  };
  std::vector<Change> changes;
  std::vector<std::pair<int, int>> blocked;  // one GPU's blocked runs [from k, to k)
  for (std::size_t i = 0; i < nodes.size(); ++i)
    for (int gpu = first_gpu_[static_cast<std::size_t>(nodes[i])]; gpu < first_gpu_[static_cast<std::size_t>(nodes[i]) + 1]; ++gpu) {
      blocked.clear();
      const double busy = busy_until_[static_cast<std::size_t>(gpu)];
      if (busy > now_) blocked.push_back({0, busy == kNever ? K : first_at_or_after(busy)});
      for (const auto& [from, until] : held_[static_cast<std::size_t>(gpu)]) {
        const int a = static_cast<int>(std::partition_point(times.begin(), times.end(), [&](double t) { return !(from < t + runtime_s); }) - times.begin());
        const int b = first_at_or_after(until);
        if (a < b) blocked.push_back({a, b});
      }
      std::sort(blocked.begin(), blocked.end());
      int k = 0;
      const int node = static_cast<int>(i);
      for (const auto& [from_k, to_k] : blocked) {
        if (from_k > k) changes.push_back({k, node, +1}), changes.push_back({from_k, node, -1});
        k = std::max(k, to_k);
      }
      if (k < K) changes.push_back({k, node, +1});
    }
  std::sort(changes.begin(), changes.end(), [](const Change& x, const Change& y) { return x.k < y.k; });

  std::vector<int> usable_count(nodes.size(), 0);
  int whole = 0, partial = 0;  // nodes with every GPU usable; nodes with at least `rest` (not all)
  std::size_t c = 0;
  for (int k = 0; k < K; ++k) {
    for (; c < changes.size() && changes[c].k == k; ++c) {
      int& u = usable_count[static_cast<std::size_t>(changes[c].node)];
      whole -= u == gpn, partial -= rest > 0 && u >= rest && u < gpn;
      u += changes[c].delta;
      whole += u == gpn, partial += rest > 0 && u >= rest && u < gpn;
    }
    if (whole >= full && (rest == 0 || whole > full || partial > 0)) return times[static_cast<std::size_t>(k)];
  }
  return kNever;
}

}  // namespace trainsim::sim::cluster
