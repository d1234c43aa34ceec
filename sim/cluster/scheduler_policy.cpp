#include "scheduler_policy.hpp"

#include <algorithm>

#include "cluster_state.hpp"
#include "models/errors.hpp"
#include "models/json_reader.hpp"

namespace trainsim::sim::cluster {

namespace {
std::vector<PolicyInfo>& registry() {
  static std::vector<PolicyInfo> r;
  return r;
}
}  // namespace

RegisterPolicy::RegisterPolicy(PolicyInfo info) {
  auto& r = registry();
  r.push_back(std::move(info));
  std::sort(r.begin(), r.end(), [](const PolicyInfo& a, const PolicyInfo& b) { return a.name < b.name; });
}

const std::vector<PolicyInfo>& policies() { return registry(); }

const PolicyInfo* find_policy(const std::string& name) {
  for (const PolicyInfo& p : registry())
    if (p.name == name) return &p;
  return nullptr;
}

PolicyChoice parse_policy_choice(const std::string& text, const std::string& path) {
  PolicyChoice c;
  c.text = text;
  const auto plus = text.find('+');
  c.ordering = text.substr(0, plus);
  c.placement = plus == std::string::npos ? "binpack" : text.substr(plus + 1);
  std::vector<std::string> names;
  for (const PolicyInfo& p : registry()) names.push_back(p.name);
  if (!find_policy(c.ordering))
    throw InputError(path, c.ordering, "a scheduling policy: " + join(names), "policies combine with a placement: backfill+topology");
  PlacementKind k;
  if (!placement_from_string(c.placement, &k))
    throw InputError(path, c.placement, "a placement after '+': " + join(placement_names()));
  return c;
}

}  // namespace trainsim::sim::cluster
