#pragma once
// Gated DeltaNet linear attention (Yang et al. 2024, arXiv 2412.06464), as Qwen3-Next runs it on most of its
// layers (transformers modeling_qwen3_next.py Qwen3NextGatedDeltaNet; Megatron-core's gated_delta_net): the
// token-linear work and weights of one such layer. Per token: in_proj_qkvz (h -> 2·key_dim + 2·value_dim),
// in_proj_ba (h -> 2 value heads: the gates' inputs), a causal depthwise conv of linear_conv_kernel_dim taps
// over q, k and v, the gated delta rule over value heads (a state of key x value dims per head), a gated RMSNorm
// per value head, out_proj (value_dim -> h). key_dim = linear_num_key_heads x linear_key_head_dim, value_dim =
// linear_num_value_heads x linear_value_head_dim.
#include "models/scenario/spec.hpp"

namespace trainsim {

struct GatedDeltaNetDims {
  double key_dim = 0, value_dim = 0, value_heads = 0, value_head_dim = 0, conv_dim = 0, kernel = 0;
  double in_proj() const { return 2 * key_dim + 2 * value_dim + 2 * value_heads; }  // output width of both input projections
};
GatedDeltaNetDims gated_delta_net_dims(const ModelSpec& m);

// Weights of one layer's linear attention: both input projections, the conv taps, out_proj (split by tp), and
// per value head A_log and dt_bias plus the gated norm's weight (replicated).
double gated_delta_net_split_params(const ModelSpec& m);
double gated_delta_net_replicated_params(const ModelSpec& m);

// Forward FLOPs of one token through one layer's linear attention, Megatron-LM's count
// (megatron/training/training.py num_floating_point_operations): 2 x (h·in_proj + kernel·conv_dim
// + 4·value_heads·value_head_dim² (K·K^T, V·K^T, the state update and S·Q) + value_dim·h).
double gated_delta_net_forward_flops_per_token(const ModelSpec& m);

}  // namespace trainsim
