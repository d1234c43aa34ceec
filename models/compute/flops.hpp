#pragma once
// Model FLOPs per iteration with Megatron-LM's formula, the basis of MFU (model FLOPs utilisation)
// and HFU (hardware FLOPs utilisation, which also counts recomputation).
#include "models/scenario/framework.hpp"
#include "models/scenario/spec.hpp"

namespace trainsim {

// Forward + backward model FLOPs of one iteration over `sequences` sequences (Narayanan et al. SC'21,
// Appendix; the general form in ../shared/reference/README.md):
//   12·B·s·L·h²·(1 + (f/h)·g + n_kv/n_heads + s/h + V/(2·L·h)),  g = 3/2 for gated MLPs.
// For MoE layers f·g counts the top-k routed experts and the shared expert; attention projections use
// the model's head_dim (a·d may differ from h). LoRA/QLoRA skip weight gradients of the frozen base
// (forward + dgrad = 2/3 of the dense work); DPO adds the reference model's forward (1/3).
double model_flops_per_iteration(const ModelSpec& m, const TrainingSpec& t, double sequences);

// The same plus recomputation: full recompute adds a forward pass (4/3 of the model FLOPs; Megatron's
// 96·B·s·L·h² form), selective adds the attention-score work of the forward pass (4·B·s²·a·d per layer), or
// under torchtitan's per-op policy the recomputed matmuls' share of the weight GEMMs (recompute_policy.hpp).
double hardware_flops_per_iteration(const ModelSpec& m, const TrainingSpec& t, double sequences,
                                    SelectiveRecompute selective = SelectiveRecompute::AttentionCore);

}  // namespace trainsim
