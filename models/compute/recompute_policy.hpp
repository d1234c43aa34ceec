#pragma once
// What `training.recompute: "selective"` keeps and repeats, per framework (FrameworkTraits::selective_recompute):
// Megatron's attention-core recomputation (Korthikanti et al. 2022, memory.cpp / layer_walk.cpp), or torchtitan's
// per-op selective activation checkpointing, modelled here.
//
// torchtitan (torchtitan/models/llama3/parallelize_llama.py, _custom_policy with selective_ac_option "op"):
// inside each checkpointed transformer block it saves the outputs of aten.mm, the fused attention kernels and
// reduce-scatters, except every second aten.mm (the counter restarts per block and per forward), and
// recomputes everything else: the elementwise ops and the even-numbered matmuls. The block's input is saved
// as the checkpoint's input. The block's matmuls in module order: wq, wk, wv, wo, then w1, w3, w2 (gated MLP)
// or w1, w2, or for an MoE block the router, the experts (grouped_mm, not aten.mm: recomputed), and the
// shared expert's.
#include <cstddef>
#include <string>
#include <vector>

#include "models/scenario/spec.hpp"

namespace trainsim {

// Megatron's names of the recompute modules, in its order, with their bits.
struct RecomputeModuleName {
  const char* name;
  unsigned bit;
};
const std::vector<RecomputeModuleName>& recompute_module_names();
std::vector<std::string> recompute_module_list(unsigned modules);  // the names of the set bits
// "none", "full", "selective", or "selective (layernorm, moe_act)" where the modules are not the default core_attn.
std::string recompute_text(const TrainingSpec& t);

// The recompute choices `plan` tries when the scenario leaves recompute open: none, the framework's selective,
// full, and for MoE models two sets of Megatron's modules that its MoE best practices use (Megatron-MoE-ModelZoo
// best_practice/qwen3/readme.md: "norm, act" in its H100 rows, "--recompute-modules layernorm moe" for long
// context), with MLA's up-projections where the model has MLA.
struct RecomputeChoice {
  Recompute mode;
  unsigned modules;
};
constexpr std::size_t kMaxSearchedRecomputeChoices = 5;  // what searched_recompute_choices returns at most
std::vector<RecomputeChoice> searched_recompute_choices(const ModelSpec& m);

struct PerOpCheckpoint {
  double recomputed_gemm_fraction = 0;  // of the block's forward linear-GEMM FLOPs, repeated in backward
  double saved_outputs_per_token = 0;   // elements per token saved from the odd-numbered matmuls, per TP rank
};

// Per token of one block on one tensor-parallel rank (column/row splits by tp; MLA's down-projections whole).
PerOpCheckpoint every_other_matmul(const ModelSpec& m, bool moe_layer, double tp);

}  // namespace trainsim
