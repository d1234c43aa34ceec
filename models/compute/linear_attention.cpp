#include "models/compute/linear_attention.hpp"

namespace trainsim {

GatedDeltaNetDims gated_delta_net_dims(const ModelSpec& m) {
  GatedDeltaNetDims d;
  d.key_dim = static_cast<double>(m.linear_num_key_heads) * m.linear_key_head_dim;
  d.value_dim = static_cast<double>(m.linear_num_value_heads) * m.linear_value_head_dim;
  d.value_heads = m.linear_num_value_heads;
  d.value_head_dim = m.linear_value_head_dim;
  d.conv_dim = 2 * d.key_dim + d.value_dim;
  d.kernel = m.linear_conv_kernel_dim;
  return d;
}

double gated_delta_net_split_params(const ModelSpec& m) {
  const GatedDeltaNetDims d = gated_delta_net_dims(m);
  const double h = m.hidden_size;
  return h * d.in_proj() + d.conv_dim * d.kernel + d.value_dim * h;
}

double gated_delta_net_replicated_params(const ModelSpec& m) {
  const GatedDeltaNetDims d = gated_delta_net_dims(m);
  return 2 * d.value_heads + d.value_head_dim;  // A_log, dt_bias; RMSNormGated's weight
}

double gated_delta_net_forward_flops_per_token(const ModelSpec& m) {
  const GatedDeltaNetDims d = gated_delta_net_dims(m);
  const double h = m.hidden_size;
  return 2 * (h * d.in_proj() + d.kernel * d.conv_dim + 4 * d.value_heads * d.value_head_dim * d.value_head_dim + d.value_dim * h);
}

}  // namespace trainsim
