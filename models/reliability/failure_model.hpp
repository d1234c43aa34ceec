#pragma once
// What fails in a training cluster and how often: per-component failure rates (GPU, HBM, NIC,
// switch/cable, host, software), per node or per GPU, each with an exponential or Weibull time to
// failure; optional "lemon" nodes that fail far more often than the rest; presets from published
// fleets (../shared/reference/reliability.json). Pure values and formulas: drawing failures over time
// is sim/reliability/failure_injector's job, and nothing here knows about a single job.
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/scenario/spec.hpp"

namespace trainsim {

// ---- Time distributions, registered by name ------------------------------------------------------

// A positive random duration with a given mean. Failure times need a closed-form cumulative hazard
// H(t) = -ln S(t) (exponential, Weibull): the failure injector samples the first failure of a whole
// cohort of parts with it. Repair times only need the quantile (lognormal, fixed, ...).
class TimeDistribution {
 public:
  virtual ~TimeDistribution() = default;
  virtual double mean() const = 0;
  // The duration that a fraction u of draws stays below (u in (0, 1)): inverse-CDF sampling.
  virtual double quantile(double u) const = 0;
  virtual bool has_hazard() const { return false; }
  // True when the time left does not depend on the age (exponential): a renewed part is as good as an old one.
  virtual bool memoryless() const { return false; }
  virtual double cumulative_hazard(double t) const;          // H(t); only when has_hazard()
  virtual double inverse_cumulative_hazard(double h) const;  // H^-1(h); only when has_hazard()
};

struct DistributionInfo {
  std::string name;
  std::string description;
  bool for_failures = false;  // has a closed-form hazard (can drive the failure injector)
  // mean in seconds; `shape`: Weibull k, lognormal sigma (ignored by the others).
  std::function<std::unique_ptr<TimeDistribution>(double mean_s, double shape)> make;
};

// Every registered distribution, sorted by name.
const std::vector<DistributionInfo>& time_distributions();
const DistributionInfo* find_distribution(const std::string& name);  // nullptr when unknown
struct RegisterDistribution {
  explicit RegisterDistribution(DistributionInfo info);
};
// Throws InputError naming `path` when the name is unknown, the shape is not positive, or
// `for_failures` is asked of a distribution without a hazard.
std::unique_ptr<TimeDistribution> make_distribution(const std::string& name, double mean_s, double shape, const std::string& path,
                                                    bool for_failures = false);

// ---- Components and the failure model -----------------------------------------------------------

enum class FailureScope { Node, Gpu };  // a rate per node-day, or per GPU-day
const char* to_string(FailureScope s);

struct FailureComponent {
  std::string name;                       // gpu, hbm, nic, switch_cable, host, software, ...
  FailureScope scope = FailureScope::Node;
  double rate_per_day = 0;                // job-killing failures per unit-day (node-day or GPU-day): 1 / mean time to failure
  std::string distribution = "exponential";
  double shape = 1.0;                     // Weibull k: < 1 infant mortality, 1 exponential, > 1 wear-out
  bool needs_replacement = true;          // hardware: the node is swapped or repaired; software: restart in place
  std::string causes;                     // what the component covers (e.g. the published categories it sums)
};

// A few nodes whose every component fails `rate_factor` times as often; after `detect_after` failures
// of one such node operators find it and swap it for a healthy one (0: never found).
struct LemonNodes {
  int count = 0;
  double rate_factor = 10.0;
  int detect_after = 0;
};

struct FailureModel {
  std::string name = "default";  // preset name, or "custom"
  std::string source;
  std::vector<FailureComponent> components;
  LemonNodes lemons;

  // Job-killing failures per node-day of an ordinary node (per-GPU rates times the GPUs per node).
  double node_rate_per_day(int gpus_per_node) const;
  double failures_per_1000_node_days(int gpus_per_node) const { return 1000.0 * node_rate_per_day(gpus_per_node); }
  // Failures per day of `nodes` nodes, lemons included (long-run rates: 1 / mean for every part).
  double job_rate_per_day(int nodes, int gpus_per_node) const;
  double job_mtbf_s(int nodes, int gpus_per_node) const;  // 86400 / job_rate_per_day
  // Expected failures of `nodes` nodes, all parts new at 0, by `horizon_s`: per part, its cumulative hazard at
  // the horizon or horizon / mean, whichever is larger (exact for exponential parts; for Weibull it counts the
  // first failures, and replaced parts add a few more when k < 1), lemons at their factor.
  double expected_failures(int nodes, int gpus_per_node, double horizon_s) const;
  // Multiplies every component's rate (a different fleet with the same mix of causes).
  void scale_rates(double factor);
  // The share of each component in an ordinary node's failures.
  double share(std::size_t component, int gpus_per_node) const;
};

// Presets: "default", "llama3-405b", "bloom-176b", "opt-175b" (sources and derivations in the .cpp).
std::vector<std::string> failure_preset_names();
// Throws InputError naming `path` (with the closest names) when unknown.
FailureModel failure_preset(const std::string& name, const std::string& path = "failures");
// The default rate and the range published fleets span, failures per 1,000 node-days.
constexpr double kDefaultFailuresPer1000NodeDays = 4.0;
constexpr double kPublishedFailuresPer1000NodeDaysLow = 3.0, kPublishedFailuresPer1000NodeDaysHigh = 16.0;

// The scenario's "failures" value: a preset name, or {"preset", "failures_per_1000_node_days",
// "distribution", "shape", "components": {name: {...}}, "lemon_nodes": {...}}. `path` is for errors;
// `gpus_per_node` turns per-GPU rates into per-node ones when a total per node-day is asked for.
FailureModel parse_failure_model(const nlohmann::json& value, const std::string& path, int gpus_per_node,
                                 std::vector<AppliedDefault>* defaults);
nlohmann::json to_json(const FailureModel& m, int gpus_per_node);

}  // namespace trainsim
