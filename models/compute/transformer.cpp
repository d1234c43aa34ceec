#include "models/compute/transformer.hpp"

#include <algorithm>
#include <cmath>

#include "models/compute/linear_attention.hpp"

namespace trainsim {

namespace {
double dd(int v) { return static_cast<double>(v); }

LayerParams attention_and_norms(const ModelSpec& m) {
  LayerParams lp;
  lp.norms = 2 * dd(m.hidden_size) * (m.norm == NormKind::LayerNorm ? 2 : 1);
  if (m.is_mla()) {
    // DeepSeek-V2/V3 (modeling_deepseek.py): q_a_proj h x q_lora, q_a_layernorm, q_b_proj q_lora x n(nope+rope)
    // (or q_proj h x n(nope+rope)); kv_a_proj_with_mqa h x (kv_lora + rope), kv_a_layernorm, kv_b_proj
    // kv_lora x n(nope+v); o_proj n·v x h. Megatron-core splits the up-projections and o_proj over tp and
    // keeps the down-projections and their norms whole on every rank.
    const AttentionWeights w = attention_weights(m);
    lp.attention_split = w.split();
    lp.attention_replicated = w.whole + (m.q_lora_rank > 0 ? m.q_lora_rank : 0) + m.kv_lora_rank;  // and the latents' norms
    return lp;
  }
  const double q = dd(m.num_attention_heads) * m.head_dim, kv = dd(m.num_key_value_heads) * m.head_dim;
  lp.attention_split = attention_weights(m).split();
  if (m.attention_bias || m.qkv_bias) lp.attention_split += q + 2 * kv;
  if (m.attention_bias) lp.attention_replicated += dd(m.hidden_size);
  if (m.qk_norm) lp.attention_replicated += 2.0 * m.head_dim;
  // Hybrid models: per layer on average, the linear-attention layers' weights for their share (totals exact).
  const double linear = m.linear_attention_share();
  if (linear > 0) {
    lp.attention_split = (1 - linear) * lp.attention_split + linear * gated_delta_net_split_params(m);
    lp.attention_replicated = (1 - linear) * lp.attention_replicated + linear * gated_delta_net_replicated_params(m);
  }
  return lp;
}

// Weights and biases of an MLP of inner size f: gated has gate+up+down, plain fc1+fc2; the column biases split, the
// output bias replicated.
void add_mlp(const ModelSpec& m, double f, double* split, double* replicated) {
  *split += mlp_weights(m, f) + (m.mlp_bias ? (m.mlp == MlpKind::Gated ? 2 * f : f) : 0);
  if (m.mlp_bias) *replicated += dd(m.hidden_size);
}
}  // namespace

AttentionWeights attention_weights(const ModelSpec& m) {
  AttentionWeights w;
  const double h = dd(m.hidden_size), n = dd(m.num_attention_heads);
  if (m.is_mla()) {
    const double ql = m.q_lora_rank, kvl = m.kv_lora_rank, rope = m.qk_rope_head_dim, v = m.v_head_dim;
    w.query_output = (ql > 0 ? ql : h) * n * m.qk_head_dim() + kvl * n * (m.qk_nope_head_dim + v) + n * v * h;
    w.whole = (ql > 0 ? h * ql : 0) + h * (kvl + rope);
    return w;
  }
  const double q = n * m.head_dim;
  w.query_output = 2 * h * q + (m.attention_output_gate ? h * q : 0);  // the gate's half of q_proj (Qwen3-Next)
  w.key_value = 2 * h * dd(m.num_key_value_heads) * m.head_dim;
  w.kv_head = 2 * h * m.head_dim;
  return w;
}

double attended_key_fraction(const ModelSpec& m, double seq) {
  constexpr double kCausal = kCausalAttendedFraction;
  if (m.sliding_window <= 0 || m.sliding_layers <= 0 || m.num_hidden_layers <= 0 || seq <= m.sliding_window) return kCausal;
  const double w = m.sliding_window, sliding = w / seq - w * w / (2 * seq * seq);
  const double share = static_cast<double>(std::min(m.sliding_layers, m.num_hidden_layers)) / m.num_hidden_layers;
  return (1 - share) * kCausal + share * sliding;
}

double attended_key_fraction(const ModelSpec& m, double seq, double document_tokens) {
  const double whole = attended_key_fraction(m, seq);
  if (!(document_tokens > 0) || document_tokens >= seq || !(seq > 0)) return whole;
  const double tiled = std::ceil(document_tokens / kAttentionTileTokens) * kAttentionTileTokens;
  return std::min(whole, tiled * tiled / (2 * document_tokens * seq));
}

ModelParams count_parameters(const ModelSpec& m) {
  ModelParams p;
  const double h = dd(m.hidden_size);
  p.dense_layer = attention_and_norms(m);
  add_mlp(m, m.intermediate_size, &p.dense_layer.mlp_split, &p.dense_layer.mlp_replicated);
  if (m.is_moe()) {
    p.moe_layer = attention_and_norms(m);
    if (m.shared_expert_intermediate_size > 0)
      add_mlp(m, m.shared_expert_intermediate_size, &p.moe_layer.mlp_split, &p.moe_layer.mlp_replicated);
    p.moe_layer.router = h * m.num_experts;
    double expert_split = 0, expert_repl = 0;
    add_mlp(m, m.moe_intermediate_size, &expert_split, &expert_repl);
    p.moe_layer.expert = expert_split + expert_repl;
    p.moe_layer.experts = m.num_experts;
  }
  p.embedding = dd(m.vocab_size) * h;
  if (m.position_embedding == PositionEmbedding::Learned) p.position_embedding = dd(m.max_position_embeddings) * h;
  p.final_norm = h * (m.norm == NormKind::LayerNorm ? 2 : 1);
  p.lm_head = m.tie_word_embeddings ? 0 : dd(m.vocab_size) * h;

  const double outside = p.embedding + p.position_embedding + p.final_norm + p.lm_head;
  p.total = outside + m.num_dense_layers() * p.dense_layer.total() + m.num_moe_layers() * p.moe_layer.total();
  const double moe_active = p.moe_layer.total() - p.moe_layer.expert * (m.num_experts - m.num_experts_per_tok);
  p.active = outside + m.num_dense_layers() * p.dense_layer.total() + m.num_moe_layers() * moe_active;
  // Multi-token prediction: per module a layer of the last layer's kind, norms on the hidden state, the next
  // token's embedding and the output (DeepSeek-V3's enorm, hnorm, shared_head.norm), the 2h x h eh_proj.
  p.mtp_extra = 3 * h * (m.norm == NormKind::LayerNorm ? 2 : 1) + 2 * h * h;
  p.total += m.mtp_layers * (p.mtp_extra + (m.last_layer_moe() ? p.moe_layer.total() : p.dense_layer.total()));
  p.active += m.mtp_layers * (p.mtp_extra + (m.last_layer_moe() ? moe_active : p.dense_layer.total()));
  return p;
}

PipelineSplit pipeline_split(int slots, int stages) {
  PipelineSplit s;
  if (stages <= 1) {
    s.first = s.middle = s.last = slots;
    return s;
  }
  if (slots % stages == 0) {
    s.first = s.middle = s.last = slots / stages;
    return s;
  }
  s.even = false;
  if (stages == 2) {
    s.first = (slots + 1) / 2;
    s.last = slots - s.first;
    s.middle = 0;
    return s;
  }
  int middle = (slots + stages - 1) / stages;
  int rest = slots - (stages - 2) * middle;
  while (rest < 2 && middle > 1) rest = slots - (stages - 2) * --middle;  // leave >= 1 slot each to first and last
  s.middle = middle;
  s.first = (rest + 1) / 2;
  s.last = rest - s.first;
  return s;
}

int pipeline_slots(int num_layers, const ParallelLayout& p) {
  return num_layers + (p.embedding_in_pipeline_split ? 1 : 0) + (p.loss_in_pipeline_split ? 1 : 0);
}

int virtual_stages(const ParallelLayout& p) { return p.pp * std::max(1, p.vpp); }

namespace {
// Slots of virtual stage v and the slots before it, under the layout's split rule. Megatron (UnevenEnds): the
// PipelineSplit above. torchtitan (ExtraToMiddle, torchtitan/distributed/pipeline.py generate_split_points): every
// stage n / stages, one more on each of the first n % stages middle stages, the last stage the rest. NeMo AutoModel
// (ExtraToFirst, nemo_automodel/components/distributed/pipelining/functional.py generate_hf_model_fqn_per_model_part:
// divmod(num_layers, num_stages)): n / stages each, one more on each of the first n % stages stages.
int slots_of(const PipelineSplit& s, const ParallelLayout& p, int slots, int stages, int v) {
  if (p.split_rule == PipelineSplitRule::ExtraToFirst && stages > 1) return slots / stages + (v < slots % stages ? 1 : 0);
  if (p.split_rule == PipelineSplitRule::ExtraToMiddle && stages > 1) {
    const int base = slots / stages, extra = slots % stages;
    if (v == 0) return base;
    if (v < stages - 1) return base + (v <= extra ? 1 : 0);
    return slots - base * (stages - 1) - std::min(extra, stages - 2);
  }
  return v == 0 ? s.first : v == stages - 1 ? s.last : s.middle;
}
int slots_before(const PipelineSplit& s, const ParallelLayout& p, int slots, int stages, int v) {
  if (v <= 0) return 0;
  if (p.split_rule == PipelineSplitRule::ExtraToFirst && stages > 1) {
    if (v >= stages) return slots;
    return (slots / stages) * v + std::min(v, slots % stages);
  }
  if (p.split_rule == PipelineSplitRule::ExtraToMiddle && stages > 1) {
    if (v >= stages) return slots;
    return (slots / stages) * v + std::min(v - 1, slots % stages);
  }
  return s.first + (std::min(v, stages - 1) - 1) * s.middle + (v >= stages ? s.last : 0);
}
// Transformer layers among slots [a, b): the embedding slot is slot 0, the loss slot the last one.
int layers_among(int a, int b, int slots, const ParallelLayout& p) {
  const int lo = std::max(a, p.embedding_in_pipeline_split ? 1 : 0);
  const int hi = std::min(b, slots - (p.loss_in_pipeline_split ? 1 : 0));
  return std::max(0, hi - lo);
}
}  // namespace

int layers_in_virtual_stage(int num_layers, const ParallelLayout& p, int v) {
  const int slots = pipeline_slots(num_layers, p), stages = virtual_stages(p);
  const PipelineSplit s = pipeline_split(slots, stages);
  const int a = slots_before(s, p, slots, stages, v);
  return layers_among(a, a + slots_of(s, p, slots, stages, v), slots, p);
}

int first_layer_of_virtual_stage(int num_layers, const ParallelLayout& p, int v) {
  const int slots = pipeline_slots(num_layers, p), stages = virtual_stages(p);
  return layers_among(0, slots_before(pipeline_split(slots, stages), p, slots, stages, v), slots, p);
}

int layers_in_stage(int num_layers, const ParallelLayout& p, int stage) {
  int layers = 0;
  for (int v = stage; v < virtual_stages(p); v += p.pp) layers += layers_in_virtual_stage(num_layers, p, v);
  return layers;
}

int dense_layers_in_stage(int num_layers, int num_dense, const ParallelLayout& p, int stage) {
  int dense = 0;
  for (int v = stage; v < virtual_stages(p); v += p.pp) {
    const int first = first_layer_of_virtual_stage(num_layers, p, v);
    dense += std::clamp(num_dense - first, 0, layers_in_virtual_stage(num_layers, p, v));
  }
  return dense;
}

StageParams stage_parameters(const ModelSpec& m, const ModelParams& params, const ParallelLayout& p, int stage) {
  StageParams sp;
  sp.layers = layers_in_stage(m.num_hidden_layers, p, stage);
  // Dense layers are the first `first_k_dense_replace` ones (all of them for a dense model).
  const int dense_layers = dense_layers_in_stage(m.num_hidden_layers, m.num_dense_layers(), p, stage);
  const int moe_layers = sp.layers - dense_layers;
  const double tp = p.tp;
  auto shard = [&](const LayerParams& lp) {
    return (lp.attention_split + lp.mlp_split) / tp + lp.attention_replicated + lp.norms + lp.mlp_replicated + lp.router;
  };
  const double dense_layer = shard(params.dense_layer);
  const double moe_nonexpert = shard(params.moe_layer);
  const double moe_experts = params.moe_layer.expert * (m.num_experts / p.ep) / p.etp;
  sp.dense = dense_layers * dense_layer + moe_layers * moe_nonexpert;
  sp.expert = moe_layers * moe_experts;
  if (dense_layers > 0) sp.largest_layer = dense_layer;
  if (moe_layers > 0) sp.largest_layer = std::max(sp.largest_layer, moe_nonexpert + moe_experts);
  sp.not_linear = dense_layers * params.dense_layer.norms + moe_layers * (params.moe_layer.norms + params.moe_layer.router);
  double edges = 0;
  if (stage == 0) edges += params.embedding / tp + params.position_embedding;
  if (stage == p.pp - 1 && m.mtp_layers > 0) {
    // The MTP modules live on the last stage: their layers, and their projections (column parallel) and norms.
    if (m.last_layer_moe()) sp.dense += m.mtp_layers * moe_nonexpert, sp.expert += m.mtp_layers * moe_experts;
    else sp.dense += m.mtp_layers * dense_layer;
    sp.dense += m.mtp_layers * (2.0 * m.hidden_size * m.hidden_size / tp + (params.mtp_extra - 2.0 * m.hidden_size * m.hidden_size));
    sp.not_linear += m.mtp_layers * (params.mtp_extra - 2.0 * m.hidden_size * m.hidden_size);
  }
  if (stage == p.pp - 1) {
    edges += params.final_norm;
    // Megatron keeps a copy of a tied embedding on the last stage for the LM head when pp > 1.
    if (params.lm_head > 0) edges += params.lm_head / tp;
    else if (p.pp > 1) edges += params.embedding / tp;
  }
  sp.dense += edges;
  sp.not_linear += edges;
  sp.edges = edges;
  return sp;
}

double lora_parameters(const ModelSpec& m, const LoraSpec& lora, bool merged_experts) {
  const double h = dd(m.hidden_size), q = dd(m.num_attention_heads) * m.head_dim, kv = dd(m.num_key_value_heads) * m.head_dim;
  const double r = lora.rank;
  double per_layer_attn = 0, per_dense_mlp = 0, per_expert = 0;
  auto mlp_module = [&](const std::string& name, double f) {
    if (name == "gate_proj") return m.mlp == MlpKind::Gated ? r * (h + f) : 0.0;
    if (name == "up_proj") return r * (h + f);
    if (name == "down_proj") return r * (f + h);
    return 0.0;
  };
  for (const auto& t : lora.target_modules) {
    if (t == "q_proj") per_layer_attn += r * (h + q);
    else if (t == "k_proj" || t == "v_proj") per_layer_attn += r * (h + kv);
    else if (t == "o_proj") per_layer_attn += r * (dd(m.num_attention_heads) * m.value_head_dim() + h);
    else {
      per_dense_mlp += mlp_module(t, m.intermediate_size);
      per_expert += mlp_module(t, m.moe_intermediate_size);
    }
  }
  // PEFT adapts each expert's linear layers when they are targeted (and the shared expert as a dense MLP). Over 3-D
  // expert parameters its ParamWrapper takes the fused gate_up at twice the rank (peft 0.21 on transformers 5.17:
  // lora_A of 2r·E rows for gate_up_proj, r·E for down_proj) and adapts the router's weight as well.
  if (merged_experts && per_expert > 0) {
    const double f = m.moe_intermediate_size;
    bool up = false, down = false;
    for (const auto& t : lora.target_modules) {
      up = up || t == "gate_proj" || t == "up_proj";
      down = down || t == "down_proj";
    }
    per_expert = (up ? (m.mlp == MlpKind::Gated ? 2 * r * (h + 2 * f) : r * (h + f)) : 0.0) + (down ? r * (f + h) : 0.0);
  }
  const double router = merged_experts && per_expert > 0 ? r * (h + m.num_experts) : 0.0;
  double shared = 0;
  for (const auto& t : lora.target_modules) shared += m.shared_expert_intermediate_size > 0 ? mlp_module(t, m.shared_expert_intermediate_size) : 0;
  return m.num_hidden_layers * per_layer_attn + m.num_dense_layers() * per_dense_mlp +
         m.num_moe_layers() * (per_expert * m.num_experts + router + shared);
}

}  // namespace trainsim
