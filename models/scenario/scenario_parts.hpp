#pragma once
// Internal: one parser per scenario section (scenario_*.cpp); scenario.cpp puts them together.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/scenario/spec.hpp"

namespace trainsim {

// `path`: where the section sits ("/model", or an RL reward or critic model under /training/rlhf).
ModelSpec parse_model(const nlohmann::json& section, std::vector<AppliedDefault>* defaults, std::vector<std::string>* notes,
                      const std::string& path = "/model");
// training.rlhf (modes ppo and grpo); `seq_len_given`: training.seq_len as written (0: absent), which bounds the
// response cap.
RlhfSpec parse_rlhf(const nlohmann::json& section, TrainingMode mode, int seq_len_given, std::vector<AppliedDefault>* defaults);
TrainingSpec parse_training(const nlohmann::json& section, const ModelSpec& model, std::vector<AppliedDefault>* defaults);
// num_gpus is 0 when neither num_nodes nor num_gpus was given (the layout may fix it).
HardwareSpec parse_hardware(const nlohmann::json& section, std::vector<AppliedDefault>* defaults, int* num_gpus_given);

// Degrees and batch sizes as written: 0 where the scenario left them out.
struct ParallelInput {
  ParallelLayout layout;  // fields hold the given value, or 0 when absent
  std::string schedule;   // empty when absent
  bool sequence_parallel_given = false;
};
ParallelInput parse_parallel(const nlohmann::json& section, std::vector<AppliedDefault>* defaults);
// Fills what was left out (dp, micro-batch, accumulation, global batch, schedule), records each default,
// and rejects contradictions and impossible layouts.
ParallelLayout derive_layout(const ParallelInput& in, const ModelSpec& model, TrainingSpec& training,
                             HardwareSpec& hardware, int num_gpus_given, std::vector<AppliedDefault>* defaults,
                             bool check = true);

}  // namespace trainsim
