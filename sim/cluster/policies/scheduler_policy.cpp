#include "sim/cluster/policies/scheduler_policy.hpp"

#include <algorithm>
#include <unordered_map>

#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"
#include "models/core/name_registry.hpp"
#include "sim/cluster/cluster_state.hpp"

namespace trainsim::sim::cluster {

std::vector<int> waiting_by_queue_key(const SchedulingPass& pass, const std::function<double(const std::string&)>& key) {
  std::unordered_map<std::string, double> keys;
  const std::vector<int>& waiting = pass.waiting();
  std::vector<std::pair<double, std::size_t>> ranked;
  ranked.reserve(waiting.size());
  for (std::size_t k = 0; k < waiting.size(); ++k) {
    const std::string& q = pass.job(waiting[k]).queue;
    auto it = keys.find(q);
    if (it == keys.end()) it = keys.emplace(q, key(q)).first;
    ranked.push_back({it->second, k});
  }
  std::sort(ranked.begin(), ranked.end());
  std::vector<int> out;
  out.reserve(ranked.size());
  for (const auto& [value, k] : ranked) out.push_back(waiting[k]);
  return out;
}

namespace {
NameRegistry<PolicyInfo>& registry() {
  static NameRegistry<PolicyInfo> r;
  return r;
}
}  // namespace

RegisterPolicy::RegisterPolicy(PolicyInfo info) { registry().add(std::move(info)); }

const std::vector<PolicyInfo>& policies() { return registry().entries(); }

const PolicyInfo* find_policy(const std::string& name) { return registry().find(name); }

PolicyChoice parse_policy_choice(const std::string& text, const std::string& path) {
  PolicyChoice c;
  c.text = text;
  const auto plus = text.find('+');
  c.ordering = text.substr(0, plus);
  c.placement = plus == std::string::npos ? "binpack" : text.substr(plus + 1);
  if (!find_policy(c.ordering))
    registry().unknown(path, c.ordering,
                       {.what = "a scheduling policy", .shown = c.ordering, .hint = "policies combine with a placement: backfill+topology"});
  PlacementKind k;
  if (!placement_from_string(c.placement, &k))
    throw InputError(path, c.placement, "a placement after '+': " + join(placement_names()));
  return c;
}

}  // namespace trainsim::sim::cluster
