#pragma once
// Which of a decoder layer's linears carry a LoRA adapter (PEFT's module names, as in lora_parameters): read by
// the layer walk (the adapters' GEMMs) and the activation memory (what a frozen base keeps for backward).
#include "models/scenario/spec.hpp"

namespace trainsim {

struct LoraTargets {
  bool q = false, k = false, v = false, o = false, gate = false, up = false, down = false;
};

inline LoraTargets lora_targets(const TrainingSpec& t) {
  LoraTargets l;
  if (!t.uses_adapters()) return l;
  for (const auto& name : t.lora.target_modules) {
    if (name == "q_proj") l.q = true;
    else if (name == "k_proj") l.k = true;
    else if (name == "v_proj") l.v = true;
    else if (name == "o_proj") l.o = true;
    else if (name == "gate_proj") l.gate = true;
    else if (name == "up_proj") l.up = true;
    else if (name == "down_proj") l.down = true;
  }
  return l;
}

}  // namespace trainsim
