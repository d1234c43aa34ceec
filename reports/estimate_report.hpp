#pragma once
// Renders a memory estimate: JSON (the contract keys), a terminal table, CSV (one row per stage).
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <vector>

#include "models/memory/memory.hpp"
#include "models/memory/memory_advice.hpp"
#include "models/rlhf/rlhf_step.hpp"
#include "models/scenario/spec.hpp"
#include "models/step/data_feed.hpp"
#include "models/step/step.hpp"

namespace trainsim {

struct EstimateResult {
  Scenario scenario;
  MemoryEstimate memory;
  std::vector<FitSuggestion> suggestions;
  StepEstimate step;
  TrainingCost cost;
  std::string scenario_label;  // where the scenario came from
  std::optional<DataFeedEstimate> data_feed;  // with the scenario's "data" section
  std::optional<RlhfStepEstimate> rlhf;       // modes ppo and grpo: the whole RL step; `step` is one actor update
};

nlohmann::json stage_memory_json(const StageMemory& s, double capacity);
nlohmann::json memory_json(const MemoryEstimate& m);
nlohmann::json estimate_json(const EstimateResult& r);
void print_estimate_table(std::ostream& os, const EstimateResult& r);
void print_estimate_csv(std::ostream& os, const EstimateResult& r);
// "sft, seq 4096, global batch 64 = micro 1 x dp 8 x accumulation 8, bf16, adamw, ZeRO-3, recompute none, ..."
std::string describe_training(const Scenario& s);
// "tp 2+sp . pp 1 . dp 4 . cp 1 (1f1b), 8 x h100-sxm-80gb on 1 node"
std::string describe_layout(const Scenario& s);
// "deepspeed (from the scenario; kernel_launch_gap_us overridden)" or "megatron-core (implied by the layout)".
std::string describe_framework(const TrainingSpec& t, const ParallelLayout& p);

}  // namespace trainsim
