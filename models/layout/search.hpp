#pragma once
// Layout search: every valid combination of the parallel degrees, micro-batch, recompute mode, ZeRO
// stage, sequence parallelism and pipeline schedule that the scenario leaves open, for each GPU count;
// those that do not fit in memory are pruned, the rest ranked by time to train (or cost), and the
// Pareto front of GPUs vs time vs cost marked. Multi-threaded; deterministic for a given scenario.
#include <atomic>
#include <functional>
#include <vector>

#include "models/memory/memory.hpp"
#include "models/scenario/spec.hpp"
#include "models/step/step.hpp"

namespace trainsim {

// Which fields the search may choose. A field the scenario (or a flag) set explicitly stays fixed.
struct SearchSpace {
  bool tp = true, pp = true, dp = true, cp = true, ep = true, etp = true, vpp = true, micro_batch = true;
  bool recompute = true, zero_stage = true, sequence_parallel = true, schedule = true, offload_optimizer = true;
  // Hybrid sharding: besides sharding over the whole data-parallel group, shard within each node's
  // data-parallel ranks and replicate across nodes (HSDP), for the sharded (ZeRO >= 1) variants.
  bool dp_replicate = true;
};
// Free = the scenario left it to a default (it appears in Scenario::defaults).
SearchSpace search_space_from(const Scenario& s);

enum class Objective { TimeToTrain, Cost };

struct SearchOptions {
  int top = 10;
  Objective objective = Objective::TimeToTrain;
  int threads = 0;             // 0 = all hardware threads
  double max_cost = 0;         // USD; 0 = no budget
  double max_time_s = 0;       // seconds to train; 0 = no limit
  // Called from the calling thread about ten times a second with the fraction done.
  std::function<void(double)> progress;
  // Calibration profile every step model uses (calibration.hpp); nullptr = published defaults.
  const CalibrationProfile* calibration = nullptr;
  // Fitted parameters every step model uses (fitted_parameters.hpp); nullptr = the shipped ones.
  const FittedParameters* fitted = nullptr;
};

struct Plan {
  ParallelLayout layout;
  TrainingSpec training;  // recompute and zero_stage as chosen
  int num_gpus = 0;
  StageMemory memory;     // most loaded GPU
  double capacity = 0;
  StepEstimate step;
  TrainingCost cost;
  bool pareto = false;    // on the front of GPUs vs time to train vs cost
};

struct SearchResult {
  std::vector<Plan> plans;       // best first, at most options.top
  std::vector<Plan> pareto;      // one per GPU count on the front, fewest GPUs first
  std::vector<Plan> best_per_count;  // the fastest plan at each searched GPU count that has one, fewest GPUs first
  long long searched = 0;        // candidate layouts evaluated
  long long fit_memory = 0;      // of which fit in GPU (and host) memory
  long long feasible = 0;        // of which are also within the budget (= fit_memory without one)
  // Among the layouts that fit in memory: the cheapest cost (0: unknown price) and the shortest time to train,
  // so that "nothing within the budget" can say what the budget would need.
  double cheapest_cost = 0, fastest_time_s = 0;
  std::vector<int> gpu_counts;
  std::vector<long long> searched_per_count;  // candidate layouts per GPU count (0: the scenario's fixed degrees allow none)
};

SearchResult search_plans(const Scenario& base, const std::vector<int>& gpu_counts, const SearchSpace& space,
                          const SearchOptions& options);

}  // namespace trainsim
