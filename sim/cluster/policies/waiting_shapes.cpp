#include "sim/cluster/policies/waiting_shapes.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

namespace trainsim::sim::cluster {
namespace {
constexpr double kEmpty = std::numeric_limits<double>::infinity();
constexpr double kAnyRuntime = DBL_MAX;  // every finite runtime is at most this; empty slots are not
// Runtimes within this of the reservation's start may overlap it: such a job is treated as overlapping when it
// fails (its shape stays open to shorter jobs) and as short when looked for (it is tried), both the safe side.
double slack(double s) { return 1e-9 * std::max(1.0, s); }
}  // namespace

void MinTree::resize(std::size_t n) {
  if (n <= cap_) {
    n_ = n;
    return;
  }
  std::size_t cap = std::max<std::size_t>(1, cap_);
  while (cap < n) cap *= 2;
  std::vector<double> v(2 * cap, kEmpty);
  for (std::size_t i = 0; i < n_; ++i) v[cap + i] = v_[cap_ + i];
  for (std::size_t k = cap - 1; k >= 1; --k) v[k] = std::min(v[2 * k], v[2 * k + 1]);
  v_ = std::move(v);
  cap_ = cap;
  n_ = n;
}

void MinTree::set(std::size_t pos, double v) {
  std::size_t i = cap_ + pos;
  v_[i] = v;
  for (i /= 2; i >= 1; i /= 2) v_[i] = std::min(v_[2 * i], v_[2 * i + 1]);
}

std::size_t MinTree::first_at_most(std::size_t p, double limit) const {
  if (p >= n_) return n_;
  std::size_t i = cap_ + p;
  // Up: from the leaf, step right to the next subtree that holds a value <= limit (none: past the root).
  while (v_[i] > limit) {
    while (i & 1) i >>= 1;  // a right child: its parent's right neighbour comes next
    if (i == 0) return n_;
    ++i;
  }
  // Down: the leftmost such leaf.
  while (i < cap_) {
    i *= 2;
    if (v_[i] > limit) ++i;
  }
  return std::min(i - cap_, n_);
}

int WaitingShapes::shape_of(const SchedulingPass& pass, int j) {
  const ClusterJob& c = pass.job(j);
  if (c.elastic() || shares_gpu(c, pass.cluster().gpu_sharing) || (!c.gang && c.gpus > 1)) return kAlwaysTried;
  std::vector<std::string> types = c.gpu_types;
  std::sort(types.begin(), types.end());
  const auto [it, fresh] = ids_.try_emplace(Key{c.gpus, c.gpu_milli, c.cpu_milli, c.memory_mib, std::move(types)}, static_cast<int>(shapes_.size()));
  if (fresh) shapes_.emplace_back();
  return it->second;
}

void WaitingShapes::put(const SchedulingPass& pass, int j) {
  const auto uj = static_cast<std::size_t>(j);
  if (uj >= shape_.size()) {
    const std::size_t n = std::max(uj + 1, 2 * shape_.size());
    shape_.resize(n, -1);
    rank_.resize(n, -1);
  }
  if (shape_[uj] < 0) {
    const int s = shape_of(pass, j);
    Shape& sh = shapes_[static_cast<std::size_t>(s)];
    shape_[uj] = s;
    if (sh.members.empty() || sh.members.back() < j) {
      rank_[uj] = static_cast<int>(sh.members.size());
      sh.members.push_back(j);
      sh.runtimes.resize(sh.members.size());
    } else {
      // Seen out of queue order (rare): insert in place and renumber the later members.
      std::vector<double> values(sh.members.size());
      for (std::size_t r = 0; r < values.size(); ++r) values[r] = sh.runtimes.get(r);
      const auto at = static_cast<std::size_t>(std::lower_bound(sh.members.begin(), sh.members.end(), j) - sh.members.begin());
      sh.members.insert(sh.members.begin() + static_cast<std::ptrdiff_t>(at), j);
      values.insert(values.begin() + static_cast<std::ptrdiff_t>(at), kEmpty);
      sh.runtimes.resize(sh.members.size());
      for (std::size_t r = at; r < sh.members.size(); ++r) {
        rank_[static_cast<std::size_t>(sh.members[r])] = static_cast<int>(r);
        sh.runtimes.set(r, values[r]);
      }
    }
  }
  Shape& sh = shapes_[static_cast<std::size_t>(shape_[uj])];
  const auto r = static_cast<std::size_t>(rank_[uj]);
  if (sh.runtimes.get(r) == kEmpty) ++sh.present;
  sh.runtimes.set(r, std::min(pass.expected_runtime(j), kAnyRuntime));
}

void WaitingShapes::erase(int j) {
  const auto uj = static_cast<std::size_t>(j);
  if (uj >= shape_.size() || shape_[uj] < 0) return;
  Shape& sh = shapes_[static_cast<std::size_t>(shape_[uj])];
  const auto r = static_cast<std::size_t>(rank_[uj]);
  if (sh.runtimes.get(r) == kEmpty) return;
  sh.runtimes.set(r, kEmpty);
  --sh.present;
}

void WaitingShapes::sync(const SchedulingPass& pass) {
  const std::uint64_t entries = pass.queue_entries();
  if (entries == entries_seen_) return;
  const std::vector<int>& queue = pass.waiting();
  const auto tail = std::upper_bound(queue.begin(), queue.end(), last_index_);
  // Only arrivals since the last look: they are the queue's tail. Otherwise a job came back (its runtime may be
  // new) and the whole queue is read again.
  const bool only_arrivals = static_cast<std::uint64_t>(queue.end() - tail) == entries - entries_seen_;
  entries_seen_ = entries;
  for (auto it = only_arrivals ? tail : queue.begin(); it != queue.end(); ++it) put(pass, *it);
  if (!queue.empty()) last_index_ = std::max(last_index_, queue.back());
}

WaitingShapes::Walk::Walk(WaitingShapes& index, const SchedulingPass& pass, int after)
    : ix_(index), pass_(pass), state_(index.shapes_.size(), kOpen) {
  for (std::size_t s = 0; s < ix_.shapes_.size(); ++s) {
    const Shape& sh = ix_.shapes_[s];
    if (sh.present == 0) continue;
    const auto from = std::upper_bound(sh.members.begin(), sh.members.end(), after) - sh.members.begin();
    push_next(static_cast<int>(s), static_cast<std::size_t>(from));
  }
}

void WaitingShapes::Walk::push_next(int shape, std::size_t from_rank) {
  const State st = state_[static_cast<std::size_t>(shape)];
  if (st == kClosed) return;
  const Shape& sh = ix_.shapes_[static_cast<std::size_t>(shape)];
  const double limit = st == kOpen ? kAnyRuntime : short_s_ + slack(short_s_);
  const std::size_t pos = sh.runtimes.first_at_most(from_rank, limit);
  if (pos < sh.members.size()) heap_.emplace(sh.members[pos], shape);
}

int WaitingShapes::Walk::next() {
  while (!heap_.empty()) {
    const auto [j, s] = heap_.top();
    heap_.pop();
    const auto next_rank = static_cast<std::size_t>(ix_.rank_[static_cast<std::size_t>(j)]) + 1;
    if (!pass_.is_waiting(j)) {  // left the queue some other way since it was indexed
      ix_.erase(j);
      push_next(s, next_rank);
      continue;
    }
    current_ = j;
    current_shape_ = s;
    return j;
  }
  current_ = -1;
  return -1;
}

void WaitingShapes::Walk::started() {
  ix_.erase(current_);
  push_next(current_shape_, static_cast<std::size_t>(ix_.rank_[static_cast<std::size_t>(current_)]) + 1);
}

void WaitingShapes::Walk::failed(double runtime) {
  State& st = state_[static_cast<std::size_t>(current_shape_)];
  if (current_shape_ != kAlwaysTried) {
    const bool overlaps = std::isfinite(short_s_) && runtime >= short_s_ - slack(short_s_);
    st = overlaps ? (st == kOpen ? kShortOnly : st) : kClosed;
  }
  push_next(current_shape_, static_cast<std::size_t>(ix_.rank_[static_cast<std::size_t>(current_)]) + 1);
}

void WaitingShapes::Walk::close() {
  if (current_shape_ != kAlwaysTried) state_[static_cast<std::size_t>(current_shape_)] = kClosed;
  push_next(current_shape_, static_cast<std::size_t>(ix_.rank_[static_cast<std::size_t>(current_)]) + 1);
}

}  // namespace trainsim::sim::cluster
