#include "models/compute/flops.hpp"

#include "models/compute/linear_attention.hpp"
#include "models/compute/recompute_policy.hpp"
#include "models/compute/transformer.hpp"

namespace trainsim {

namespace {
struct ForwardFlops {
  double layers = 0;     // transformer layers, all of them
  double attention = 0;  // of which the s² attention-score terms (QK^T and AV)
  double dense_linear = 0, moe_linear = 0;  // of which the weight GEMMs of the dense / MoE layers
  double dense_mlp = 0, moe_block = 0, shared = 0, mla_up = 0;  // of which the dense MLPs, MoE blocks, shared experts, MLA up-projections
  double head = 0;       // LM head
};

// Forward FLOPs of one sequence: 2 FLOPs per multiply-add over every weight a token passes through,
// plus attention scores 2·2·s²·a·d per layer (counted without the causal half, as Megatron does).
ForwardFlops forward_flops_per_sequence(const ModelSpec& m, double s) {
  const double h = m.hidden_size, q = double(m.num_attention_heads) * m.head_dim, kv = double(m.num_key_value_heads) * m.head_dim;
  const double gate = m.mlp == MlpKind::Gated ? 3.0 : 2.0;
  double attn_proj = 2 * s * (h * q + 2 * h * kv + q * h + (m.attention_output_gate ? h * q : 0.0));
  double scores = 2 * 2 * s * s * q;
  if (m.is_mla()) {  // every projection weight once per token; scores Q·K^T over qk dims, P·V over v dims
    const double n = m.num_attention_heads, ql = m.q_lora_rank, kvl = m.kv_lora_rank;
    attn_proj = 2 * s * ((ql > 0 ? h * ql + ql * n * m.qk_head_dim() : h * n * m.qk_head_dim()) + h * (kvl + m.qk_rope_head_dim) +
                         kvl * n * (m.qk_nope_head_dim + m.v_head_dim) + n * m.v_head_dim * h);
    scores = 2 * s * s * n * (m.qk_head_dim() + m.v_head_dim);
  }
  const double dense_mlp = 2 * s * gate * h * m.intermediate_size;
  const double moe_mlp = 2 * s * (gate * h * (double(m.num_experts_per_tok) * m.moe_intermediate_size + m.shared_expert_intermediate_size) +
                                  h * m.num_experts);  // experts a token visits, shared expert, router
  ForwardFlops f;
  // Sliding windows cut the pairs attended; Megatron's full-square count scaled by the same share.
  scores *= attended_key_fraction(m, s) / kCausalAttendedFraction;
  // Linear-attention layers: no s² term, their token-linear work instead (per layer on average).
  const double linear = m.linear_attention_share();
  if (linear > 0) {
    attn_proj = (1 - linear) * attn_proj + linear * s * gated_delta_net_forward_flops_per_token(m);
    scores *= 1 - linear;
  }
  // Multi-token prediction (Megatron's count): each module one more layer of the last layer's kind, its norms
  // (3h) and 2h x h projection, and the logits once more.
  const int mtp = m.mtp_layers, layers = m.num_hidden_layers + mtp;
  const int dense_layers = m.num_dense_layers() + (m.last_layer_moe() ? 0 : mtp), moe_layers = m.num_moe_layers() + (m.last_layer_moe() ? mtp : 0);
  f.attention = layers * scores;
  f.layers = layers * (attn_proj + scores) + dense_layers * dense_mlp + moe_layers * moe_mlp + mtp * 2 * s * (3 * h + 2 * h * h);
  f.dense_linear = dense_layers * (attn_proj + dense_mlp);
  f.moe_linear = moe_layers * (attn_proj + moe_mlp);
  f.head = 2 * s * h * m.vocab_size * (1 + mtp);
  f.dense_mlp = dense_layers * dense_mlp;
  f.moe_block = moe_layers * moe_mlp;
  f.shared = moe_layers * 2 * s * gate * h * m.shared_expert_intermediate_size;
  if (m.is_mla())
    f.mla_up = layers * 2 * s * m.num_attention_heads * (m.q_lora_rank * m.qk_head_dim() + m.kv_lora_rank * (m.qk_nope_head_dim + m.v_head_dim));
  return f;
}

double passes(const TrainingSpec& t) {
  // forward (1) + backward: dgrad (1) + wgrad (1); frozen base weights have no wgrad.
  double p = t.uses_adapters() ? 2.0 : 3.0;
  if (t.mode == TrainingMode::Dpo) p += 1.0;  // reference model forward
  return p;
}

double sequences_processed(const TrainingSpec& t, double sequences) {
  return sequences * t.sequences_per_sample();
}
}  // namespace

double model_flops_per_iteration(const ModelSpec& m, const TrainingSpec& t, double sequences) {
  const ForwardFlops f = forward_flops_per_sequence(m, t.seq_len);
  return sequences_processed(t, sequences) * passes(t) * (f.layers + f.head);
}

double hardware_flops_per_iteration(const ModelSpec& m, const TrainingSpec& t, double sequences, SelectiveRecompute selective) {
  const ForwardFlops f = forward_flops_per_sequence(m, t.seq_len);
  double extra = 0;
  if (t.recompute == Recompute::Full) extra = f.layers;
  else if (t.recompute == Recompute::Selective && selective == SelectiveRecompute::AttentionCore) {
    // Megatron's recompute modules: the GEMM work of those that have any (norms and activations have none).
    const unsigned mods = t.recompute_modules;
    if (mods & kRecomputeCoreAttn) extra += f.attention;
    if (mods & kRecomputeMlp) extra += f.dense_mlp;
    if (mods & kRecomputeMoe) extra += f.moe_block;
    else if (mods & kRecomputeSharedExperts) extra += f.shared;
    if (mods & kRecomputeMlaUpProj) extra += f.mla_up;
  }
  else if (t.recompute == Recompute::Selective)  // per-op: the even-numbered matmuls' share of each layer's weight GEMMs
    extra = f.dense_linear * every_other_matmul(m, false, 1).recomputed_gemm_fraction +
            f.moe_linear * every_other_matmul(m, true, 1).recomputed_gemm_fraction;
  return model_flops_per_iteration(m, t, sequences) + sequences_processed(t, sequences) * extra;
}

}  // namespace trainsim
