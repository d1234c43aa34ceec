#include "models/compute/moe_dispatch.hpp"

#include <algorithm>
#include <cmath>

namespace trainsim {

double expected_groups_hit(double experts, double top_k, double groups) {
  if (groups <= 1) return groups;
  const double outside = experts - experts / groups;  // experts not in a given group
  if (top_k > outside) return groups;                  // every group is hit
  // C(outside, k) / C(E, k) = prod_{i<k} (outside - i) / (E - i)
  double miss = 1;
  for (int i = 0; i < static_cast<int>(top_k); ++i) miss *= (outside - i) / (experts - i);
  return groups * (1 - miss);
}

double dispatch_traffic_share(MoeDispatcher dispatcher, double experts, double top_k, GroupPlacement ep) {
  if (dispatcher != MoeDispatcher::DeepEp || ep.size <= 1 || top_k <= 0) return 1.0;
  const double n = ep.size, g = std::clamp(static_cast<double>(ep.ranks_per_node), 1.0, n);
  const double nodes = std::ceil(n / g);
  if (nodes > 1) {
    // Off the node: one copy per other node hit, against the all-to-all's top_k x (n - g) / n.
    const double other_nodes = expected_groups_hit(experts, top_k, nodes) * (nodes - 1) / nodes;
    return other_nodes / (top_k * (n - g) / n);
  }
  const double other_gpus = expected_groups_hit(experts, top_k, n) * (n - 1) / n;
  return other_gpus / (top_k * (n - 1) / n);
}

}  // namespace trainsim
