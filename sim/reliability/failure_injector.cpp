#include "sim/reliability/failure_injector.hpp"

#include <algorithm>

namespace trainsim::sim {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr auto later = [](const auto& a, const auto& b) { return a.time > b.time; };  // min-heap order for std::*_heap
}  // namespace

FailureInjector::FailureInjector(const FailureModel& model, int nodes, int gpus_per_node)
    : model_(model), nodes_(std::max(0, nodes)), gpus_per_node_(std::max(1, gpus_per_node)) {
  lemons_ = std::clamp(model_.lemons.count, 0, nodes_);
  const std::size_t nc = model_.components.size();
  comps_.resize(nc);
  cohorts_.resize(2 * nc);
  int units = 0;
  for (std::size_t c = 0; c < nc; ++c) {
    const FailureComponent& fc = model_.components[c];
    Component& k = comps_[c];
    k.needs_replacement = fc.needs_replacement;
    k.units_per_node = fc.scope == FailureScope::Gpu ? gpus_per_node_ : 1;
    k.offset = units;
    if (fc.rate_per_day <= 0) continue;  // never fails: no units, no cohort
    k.dist = make_distribution(fc.distribution, 86400.0 / fc.rate_per_day, fc.shape, "failures/components/" + fc.name + "/distribution", true);
    k.memoryless = k.dist->memoryless();
    units += nodes_ * k.units_per_node;
    for (int lemon = 0; lemon < 2; ++lemon) {
      Cohort& h = cohorts_[static_cast<std::size_t>(cohort_index(static_cast<int>(c), lemon != 0))];
      h.component = static_cast<int>(c);
      h.factor = lemon ? model_.lemons.rate_factor : 1.0;
      // Ordinary nodes' parts, and lemons' once found, may all join the ordinary cohort.
      h.members.assign(static_cast<std::size_t>((lemon ? lemons_ : nodes_) * k.units_per_node), 0);
    }
  }
  const auto n_units = static_cast<std::size_t>(units);
  unit_component_.assign(n_units, 0);
  unit_cohort_.assign(n_units, -1);
  unit_pos_.assign(n_units, 0);
  unit_gen_.assign(n_units, 0);
  node_up_.assign(static_cast<std::size_t>(nodes_), 1);
  node_lemon_.assign(static_cast<std::size_t>(nodes_), 0);
  lemon_failures_.assign(static_cast<std::size_t>(nodes_), 0);
  // The canonical starting state every reset() returns to: every part in its cohort, in unit order.
  for (std::size_t c = 0; c < nc; ++c) {
    const Component& k = comps_[c];
    if (!k.dist) continue;
    for (int node = 0; node < nodes_; ++node)
      for (int j = 0; j < k.units_per_node; ++j) {
        const int u = k.offset + node * k.units_per_node + j;
        unit_component_[static_cast<std::size_t>(u)] = static_cast<std::int16_t>(c);
        cohort_add(cohort_index(static_cast<int>(c), node < lemons_), u, false);
      }
  }
  heap_.reserve(1024);
  undo_.reserve(4096);
  dirty_.reserve(cohorts_.size());
  reset(1, 0);
}

int FailureInjector::node_of(int unit) const {
  const Component& k = comps_[static_cast<std::size_t>(component_of(unit))];
  return (unit - k.offset) / k.units_per_node;
}

void FailureInjector::cohort_add(int cohort, int unit, bool log) {
  Cohort& h = cohorts_[static_cast<std::size_t>(cohort)];
  const auto u = static_cast<std::size_t>(unit);
  h.members[static_cast<std::size_t>(h.n)] = unit;
  unit_pos_[u] = h.n;
  unit_cohort_[u] = static_cast<std::int16_t>(cohort);
  if (log) undo_.push_back({cohort, h.n, unit, -1, true});
  ++h.n;
  mark_dirty(cohort);
}

void FailureInjector::mark_dirty(int cohort) {
  Cohort& h = cohorts_[static_cast<std::size_t>(cohort)];
  if (!h.dirty) {
    h.dirty = true;
    dirty_.push_back(cohort);
  }
}

void FailureInjector::cohort_remove(int unit, bool log) {
  const auto u = static_cast<std::size_t>(unit);
  const int cohort = unit_cohort_[u];
  Cohort& h = cohorts_[static_cast<std::size_t>(cohort)];
  const int pos = unit_pos_[u];
  const int last = h.members[static_cast<std::size_t>(h.n - 1)];
  h.members[static_cast<std::size_t>(pos)] = last;
  unit_pos_[static_cast<std::size_t>(last)] = pos;
  --h.n;
  unit_cohort_[u] = -1;
  if (log) undo_.push_back({cohort, pos, unit, last, false});
  mark_dirty(cohort);
}

void FailureInjector::reset(std::uint64_t seed, double now) {
  // Reverse the run's cohort operations: the members come back in exactly their starting order, so a
  // run's result depends only on its seed, not on what this injector simulated before.
  for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) {
    Cohort& h = cohorts_[static_cast<std::size_t>(it->cohort)];
    const auto u = static_cast<std::size_t>(it->unit);
    if (it->add) {
      --h.n;
      unit_cohort_[u] = -1;
    } else {
      h.members[static_cast<std::size_t>(h.n)] = it->last;
      unit_pos_[static_cast<std::size_t>(it->last)] = h.n;
      ++h.n;
      h.members[static_cast<std::size_t>(it->pos)] = it->unit;
      unit_pos_[u] = it->pos;
      unit_cohort_[u] = static_cast<std::int16_t>(it->cohort);
    }
  }
  undo_.clear();
  heap_.clear();
  std::fill(node_up_.begin(), node_up_.end(), std::uint8_t{1});
  std::fill(node_lemon_.begin(), node_lemon_.end(), std::uint8_t{0});
  std::fill(node_lemon_.begin(), node_lemon_.begin() + lemons_, std::uint8_t{1});
  std::fill(lemon_failures_.begin(), lemon_failures_.end(), 0);
  nodes_up_ = nodes_;
  rng_.reseed(seed);
  t0_ = now;
  dirty_.clear();
  for (auto& h : cohorts_) {
    h.dirty = false;
    if (comps_[static_cast<std::size_t>(h.component)].dist) draw_cohort(h, now);
    else h.next = kInf;
  }
  pending_valid_ = false;
}

void FailureInjector::draw_cohort(Cohort& h, double now) {
  h.pick = -1;
  if (h.n == 0) {
    h.next = kInf;
    return;
  }
  // First failure among n parts of the same age A, each with hazard factor f: n·f·(H(A + x) - H(A)) = E.
  const TimeDistribution& d = *comps_[static_cast<std::size_t>(h.component)].dist;
  const double age = std::max(0.0, now - t0_);
  const double target = d.cumulative_hazard(age) + rng_.exponential() / (h.n * h.factor);
  h.next = std::max(now, t0_ + d.inverse_cumulative_hazard(target));
}

void FailureInjector::redraw_dirty(double now) {
  for (int k : dirty_) {
    Cohort& h = cohorts_[static_cast<std::size_t>(k)];
    h.dirty = false;
    draw_cohort(h, now);
  }
  dirty_.clear();
}

void FailureInjector::add_unit(int unit, double now) {
  const int c = component_of(unit);
  const Component& k = comps_[static_cast<std::size_t>(c)];
  const bool lemon = node_lemon_[static_cast<std::size_t>(node_of(unit))] != 0;
  if (k.memoryless) {
    // Memoryless parts never leave their cohort (a renewed part is as good as the old one); one moves only when
    // its node's hazard changed (a lemon found).
    const int target = cohort_index(c, lemon);
    const int now_in = unit_cohort_[static_cast<std::size_t>(unit)];
    if (now_in == target) return;
    if (now_in >= 0) cohort_remove(unit, true);
    cohort_add(target, unit, true);
    return;
  }
  const double factor = lemon ? model_.lemons.rate_factor : 1.0;
  const std::uint32_t gen = ++unit_gen_[static_cast<std::size_t>(unit)];
  heap_.push_back({now + k.dist->inverse_cumulative_hazard(rng_.exponential() / factor), unit, gen});
  std::push_heap(heap_.begin(), heap_.end(), later);
}

const FailureEvent& FailureInjector::peek() {
  if (pending_valid_) return pending_;
  while (!heap_.empty() && heap_.front().gen != unit_gen_[static_cast<std::size_t>(heap_.front().unit)]) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    heap_.pop_back();
  }
  double best = kInf;
  int source = -1, node = -1;
  pending_unit_ = -1;
  // With every node out of the pool nothing can fail (a memoryless cohort keeps its candidate for later).
  while (nodes_up_ > 0) {
    best = heap_.empty() ? kInf : heap_.front().time;
    source = -1;
    for (std::size_t k = 0; k < cohorts_.size(); ++k)
      if (cohorts_[k].next < best) {
        best = cohorts_[k].next;
        source = static_cast<int>(k);
      }
    if (!(best < kInf)) break;
    if (source < 0) {
      pending_unit_ = heap_.front().unit;
      node = node_of(pending_unit_);
      break;
    }
    Cohort& h = cohorts_[static_cast<std::size_t>(source)];
    if (h.pick < 0) h.pick = h.members[rng_.below(static_cast<std::uint32_t>(h.n))];
    pending_unit_ = h.pick;
    node = node_of(pending_unit_);
    if (node_up_[static_cast<std::size_t>(node)]) break;
    // A memoryless cohort keeps the parts of nodes out of the pool (thinning): a candidate failure of one of
    // them is no failure. The cohort's next candidate comes after it; the accepted ones arrive at the rate
    // of the parts in the pool, uniformly among them, exactly.
    draw_cohort(h, best);
    pending_unit_ = -1;
  }
  pending_ = FailureEvent{};
  pending_.time_s = pending_unit_ >= 0 ? best : kInf;
  pending_cohort_ = source;
  if (pending_unit_ >= 0) {
    pending_.node = node;
    pending_.component = component_of(pending_unit_);
    pending_.needs_replacement = comps_[static_cast<std::size_t>(pending_.component)].needs_replacement;
    pending_.lemon = node_lemon_[static_cast<std::size_t>(pending_.node)] != 0;
  }
  pending_valid_ = true;
  return pending_;
}

void FailureInjector::consume(double* now, int* unit) {
  peek();
  *now = pending_.time_s;
  *unit = pending_unit_;
  if (pending_unit_ < 0) return;  // nothing can fail
  if (pending_cohort_ >= 0) {
    if (comps_[static_cast<std::size_t>(component_of(*unit))].memoryless) mark_dirty(pending_cohort_);  // the part stays: as good as new
    else cohort_remove(*unit, true);
  } else {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    heap_.pop_back();
  }
  ++unit_gen_[static_cast<std::size_t>(*unit)];
  pending_valid_ = false;
}

void FailureInjector::count_lemon_failure(int node) {
  const auto n = static_cast<std::size_t>(node);
  if (!node_lemon_[n] || model_.lemons.detect_after <= 0) return;
  if (++lemon_failures_[n] >= model_.lemons.detect_after) node_lemon_[n] = 0;  // found: from now on a healthy node
}

void FailureInjector::renew() {
  double now = 0;
  int unit = -1;
  consume(&now, &unit);
  if (unit < 0) return;
  const int node = node_of(unit);
  const bool was_lemon = is_lemon(node);
  count_lemon_failure(node);
  if (was_lemon && !is_lemon(node)) {
    // The lemon was found and swapped for a healthy node with new parts.
    remove_node(node, now);
    restore_node(node, now);
    return;
  }
  add_unit(unit, now);
  redraw_dirty(now);
}

void FailureInjector::take_down() {
  double now = 0;
  int unit = -1;
  consume(&now, &unit);
  if (unit < 0) return;
  const int node = node_of(unit);
  count_lemon_failure(node);  // a found lemon comes back healthy
  remove_node(node, now);
  redraw_dirty(now);
}

void FailureInjector::remove_node(int node, double now) {
  const auto n = static_cast<std::size_t>(node);
  if (node < 0 || node >= nodes_ || !node_up_[n]) return;
  // Every part leaves its cohort (O(parts per node)); the cohorts it left are drawn again from now, at the rate of
  // the parts in the pool. (Keeping memoryless parts in their cohort and rejecting their candidates while out,
  // decided when the candidate was looked at rather than when it fell due, lost the failures of nodes that came
  // back in between: a cluster whose pool changed often saw 6% fewer failures than its rate.)
  for (const Component& k : comps_) {
    if (!k.dist) continue;
    for (int j = 0; j < k.units_per_node; ++j) {
      const int u = k.offset + node * k.units_per_node + j;
      if (unit_cohort_[static_cast<std::size_t>(u)] >= 0) cohort_remove(u, true);
      if (!k.memoryless) ++unit_gen_[static_cast<std::size_t>(u)];
    }
  }
  node_up_[n] = 0;
  --nodes_up_;
  redraw_dirty(now);
  pending_valid_ = false;
}

void FailureInjector::restore_node(int node, double now) {
  const auto n = static_cast<std::size_t>(node);
  if (node < 0 || node >= nodes_ || node_up_[n]) return;
  node_up_[n] = 1;
  ++nodes_up_;
  // New parts: a memoryless one joins its cohort (as good as new), any other gets its own clock from now.
  for (const Component& k : comps_) {
    if (!k.dist) continue;
    for (int j = 0; j < k.units_per_node; ++j) add_unit(k.offset + node * k.units_per_node + j, now);
  }
  redraw_dirty(now);
  pending_valid_ = false;
}

}  // namespace trainsim::sim
