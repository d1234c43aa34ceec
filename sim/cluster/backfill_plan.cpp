#include "backfill_plan.hpp"

#include <algorithm>
#include <cmath>

namespace trainsim::sim::cluster {

BackfillPlan::BackfillPlan(const ClusterState& state, double now) : state_(&state), now_(now) {
  int gpu = 0;
  for (int n = 0; n < state.nodes(); ++n) {
    first_gpu_.push_back(gpu);
    for (int g = 0; g < state.gpus_on(n); ++g, ++gpu)
      // A GPU in use whose job this plan has not been told of yet stays busy until hold_until() says otherwise.
      busy_until_.push_back(!state.schedulable(n) ? kNever : state.free_milli(n, g) == 1000 ? now : kNever);
  }
  first_gpu_.push_back(gpu);
  held_.resize(static_cast<std::size_t>(gpu));
}

void BackfillPlan::hold_until(const Placement& p, double end_s) {
  // A job expected to end now holds its GPUs until its end is handled: usable only after now.
  if (end_s <= now_) end_s = std::nextafter(now_, kNever);
  for (const Placement::Part& part : p.parts) {
    const int base = first_gpu_[static_cast<std::size_t>(part.node)];
    if (!state_->schedulable(part.node)) continue;  // out of service: busy for ever already
    for (int g = 0; g < state_->gpus_on(part.node); ++g) {
      const bool held = (part.gpus >> g & 1) != 0 || g == part.shared_gpu;
      if (!held) continue;
      double& until = busy_until_[static_cast<std::size_t>(base + g)];
      // A shared GPU frees when its last job ends; a GPU first marked busy-for-ever learns its end here.
      until = until == kNever || until <= now_ ? end_s : std::max(until, end_s);
    }
  }
}

void BackfillPlan::reserve(const Placement& p, double from_s, double until_s) {
  for (const Placement::Part& part : p.parts) {
    const int base = first_gpu_[static_cast<std::size_t>(part.node)];
    for (int g = 0; g < state_->gpus_on(part.node); ++g)
      if ((part.gpus >> g & 1) != 0 || g == part.shared_gpu) held_[static_cast<std::size_t>(base + g)].push_back({from_s, until_s});
  }
}

bool BackfillPlan::usable(int gpu, double t, double runtime_s) const {
  if (busy_until_[static_cast<std::size_t>(gpu)] > t) return false;
  for (const auto& [from, until] : held_[static_cast<std::size_t>(gpu)])
    if (from < t + runtime_s && until > t) return false;
  return true;
}

std::vector<double> BackfillPlan::instants(int node, double latest_s) const {
  std::vector<double> out{now_};
  for (int gpu = first_gpu_[static_cast<std::size_t>(node)]; gpu < first_gpu_[static_cast<std::size_t>(node) + 1]; ++gpu) {
    const double b = busy_until_[static_cast<std::size_t>(gpu)];
    if (b > now_ && b <= latest_s) out.push_back(b);
    for (const auto& interval : held_[static_cast<std::size_t>(gpu)])
      if (interval.second > now_ && interval.second <= latest_s) out.push_back(interval.second);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

int BackfillPlan::usable_on(int node, double t, double runtime_s) const {
  int n = 0;
  for (int gpu = first_gpu_[static_cast<std::size_t>(node)]; gpu < first_gpu_[static_cast<std::size_t>(node) + 1]; ++gpu)
    n += usable(gpu, t, runtime_s);
  return n;
}

double BackfillPlan::earliest(const ClusterJob& job, double runtime_s, double latest_s) const {
  const int need = job.gpus;
  double best = kNever;
  // On one node: each node's first instant with `need` usable GPUs.
  for (int n = 0; n < state_->nodes(); ++n) {
    if (!state_->schedulable(n) || state_->gpus_on(n) < need || !state_->pool_allowed(job, state_->pool_of(n))) continue;
    for (double t : instants(n, std::min(latest_s, best))) {
      if (t >= best) break;
      if (usable_on(n, t, runtime_s) >= need) {
        best = t;
        break;
      }
    }
  }
  // Over several nodes of one pool: whole nodes and the rest on one more, all usable at the same instant.
  const std::vector<NodePool>& pools = state_->spec().pools;
  for (std::size_t p = 0; p < pools.size(); ++p) {
    const int gpn = pools[p].gpus_per_node;
    if (need <= gpn || !state_->pool_allowed(job, static_cast<int>(p))) continue;
    const int full = need / gpn, rest = need % gpn;
    std::vector<int> nodes;
    std::vector<double> times;
    for (int n = 0; n < state_->nodes(); ++n) {
      if (state_->pool_of(n) != static_cast<int>(p) || !state_->schedulable(n)) continue;
      nodes.push_back(n);
      for (double t : instants(n, std::min(latest_s, best))) times.push_back(t);
    }
    if (static_cast<int>(nodes.size()) < full + (rest > 0 ? 1 : 0)) continue;
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    for (double t : times) {
      if (t >= best) break;
      int whole = 0, partial = 0;
      for (int n : nodes) {
        const int u = usable_on(n, t, runtime_s);
        if (u == gpn) ++whole;
        else if (rest > 0 && u >= rest) ++partial;
      }
      if (whole >= full && (rest == 0 || whole > full || partial > 0)) {
        best = t;
        break;
      }
    }
  }
  return best;
}

}  // namespace trainsim::sim::cluster
