#pragma once
// One H100 running one micro-batch of a Hugging Face config: the scenario the compute tests price layers on.
#include <nlohmann/json.hpp>

#include "models/scenario/scenario.hpp"

namespace trainsim::test {

// `training` as the scenario's section (mode, seq_len, recompute, framework, ...); one sequence a step.
inline Scenario one_h100(const nlohmann::json& model, nlohmann::json training) {
  training["global_batch_size"] = 1;
  return parse_scenario({{"model", model},
                         {"training", training},
                         {"parallel", {{"tp", 1}, {"pp", 1}, {"micro_batch_size", 1}}},
                         {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 1}}}});
}

// Llama-3.2-1B's shape.
inline nlohmann::json llama_1b() {
  return {{"model_type", "llama"}, {"num_hidden_layers", 16}, {"hidden_size", 2048}, {"num_attention_heads", 32}, {"num_key_value_heads", 8},
          {"intermediate_size", 8192}, {"vocab_size", 128256}, {"hidden_act", "silu"}};
}

}  // namespace trainsim::test
