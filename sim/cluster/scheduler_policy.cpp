#include "scheduler_policy.hpp"

#include "cluster_state.hpp"
#include "models/errors.hpp"
#include "models/json_reader.hpp"
#include "models/name_registry.hpp"

namespace trainsim::sim::cluster {

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
