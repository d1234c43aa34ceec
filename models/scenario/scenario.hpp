#pragma once
// From a scenario JSON tree (sections already read from files by the caller) to a validated
// Scenario: presets expanded, units parsed, missing parallel degrees and batch sizes derived,
// impossible layouts rejected with the JSON path at fault. And back to JSON, fully resolved.
#include <nlohmann/json.hpp>
#include <string>

#include "models/scenario/spec.hpp"

namespace trainsim {

// `check_layout` = false (the layout search): the derived layout is a starting point only, so batch
// splits and divisibility are not checked; every explicitly given field is still read and checked.
Scenario parse_scenario(const nlohmann::json& document, bool check_layout = true);
// A GPU or fabric: preset name, {"preset": ..., overrides} or a full object. `path` is for errors.
GpuSpec parse_gpu(const nlohmann::json& value, const std::string& path);
FabricSpec parse_fabric(const nlohmann::json& value, const std::string& path);

// Renames a model section's alias keys (num_local_experts, n_routed_experts -> num_experts; attn_pdrop ->
// attention_dropout; resid_pdrop -> hidden_dropout) in place; both names with different values is an error.
void canonicalize_model_keys(nlohmann::json& section, const std::string& path);

// Training in a precision the GPU has no peak for (fp8 on an A100) is an input error at /training/precision.
// A note when a rank of the pipeline holds kUnbalancedPipeline x the even share of layers or more (Megatron's uneven
// split puts the remainder on the first and last virtual stages: 80 layers on pp 8 x vpp 4 leave rank 0 with 16 where
// 10 would be even); empty otherwise.
constexpr double kUnbalancedPipeline = 1.25;
std::string pipeline_balance_note(int num_layers, const ParallelLayout& p);
void check_precision_supported(const TrainingSpec& training, const GpuSpec& gpu);

// Commands that price one training iteration (plan, simulate, export, reliability, cluster jobs) take the supervised
// modes only; a PPO or GRPO step is estimate's (rlhf_step.hpp). Throws InputError at /training/mode for ppo and grpo.
void require_supervised_mode(const TrainingSpec& training, const std::string& command);

// Checks a layout against model, training and hardware; throws InputError naming /parallel/...
void validate_layout(const ModelSpec& model, const TrainingSpec& training, const ParallelLayout& layout,
                     const HardwareSpec& hardware);

nlohmann::json to_json(const ModelSpec& m);
nlohmann::json to_json(const TrainingSpec& t);
nlohmann::json to_json(const RlhfSpec& rl);
nlohmann::json to_json(const ParallelLayout& p);
nlohmann::json to_json(const HardwareSpec& h);
nlohmann::json to_json(const Scenario& s);  // {model, training, parallel, hardware}: re-loadable as a scenario
nlohmann::json defaults_to_json(const Scenario& s);

}  // namespace trainsim
