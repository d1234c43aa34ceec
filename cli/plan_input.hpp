#pragma once
// A fixed plan as commands that act on one (export, validate) take it: a scenario file (its layout taken
// as fixed, missing degrees derived as for `estimate`), or the JSON that `trainsim plan` (its first plan)
// or `trainsim estimate` wrote with `--format json`.
#include <string>

#include "models/scenario/spec.hpp"

namespace trainsim::cli {

struct PlanInput {
  Scenario scenario;        // with the plan's layout, recompute, ZeRO stage and GPU count
  std::string kind;         // "scenario", "plan JSON" or "estimate JSON"
  std::string source;       // the file
  // The predictions that came with the plan (or were computed for a scenario); 0 when not known.
  double step_time_s = 0, mfu = 0, time_to_train_s = 0, iterations = 0;
  // A scenario's reliability.elastic: the job continues on fewer data-parallel replicas, down to this fraction.
  bool elastic = false;
  double elastic_min_fraction = 0.5;
  // A scenario's reliability.checkpoint.interval given in steps ("500 steps"): the launch saves at that interval.
  long long save_steps = 0;
};

// Throws InputError naming the path in that file (e.g. /plans/0/layout/tp).
PlanInput load_plan_input(const std::string& path);

}  // namespace trainsim::cli
