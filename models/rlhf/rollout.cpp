#include "models/rlhf/rollout.hpp"

#include <algorithm>
#include <cmath>

#include "models/compute/transformer.hpp"

namespace trainsim {
namespace {

constexpr double kCacheBytes = 2;   // 16-bit keys and values
constexpr double kWeightBytes = 2;  // 16-bit weights (bf16 generation)
constexpr int kDecodeBuckets = 128; // the decode integral in this many slices

int softmax_layers(const ModelSpec& m) { return m.num_hidden_layers - m.linear_attention_layers; }

// H_n = 1 + 1/2 + ... + 1/n: summed up to 1,000, beyond it ln n + Euler's constant + 1/(2n) (error below 1e-13).
double harmonic_number(double n) {
  if (n > 1000) return std::log(n) + 0.5772156649015329 + 0.5 / n;
  double h = 0;
  for (int i = 1; i <= static_cast<int>(n); ++i) h += 1.0 / i;
  return h;
}

// Attention-core FLOPs of one token against `context` keys on every softmax layer: Q·K^T and A·V, 2 FLOPs a
// multiply-add (Kaplan et al. 2020 Table 1's 2·n_ctx·d_attn per layer and pass, with d_qk and d_v apart for MLA).
double attention_flops_per_token(const ModelSpec& m, double context) {
  return 2.0 * context * m.num_attention_heads * (m.qk_head_dim() + m.value_head_dim()) * softmax_layers(m);
}

// What one GPU of an engine reads and computes per step, and the engine's tensor-parallel all-reduces.
struct EngineWork {
  const ModelSpec& m;
  const GpuSpec& gpu;
  const GpuComputeTraits& tr;
  const CommModel& comm;
  int tp;
  ModelParams params = count_parameters(m);
  double expert_params = params.moe_layer.expert * params.moe_layer.experts * m.num_moe_layers();
  // A token's multiply-adds: the parameters it passes through, less the embedding lookup (no FLOPs) unless the
  // table doubles as the LM head.
  double matmul_params = params.active - (m.tie_word_embeddings ? 0.0 : params.embedding);

  // Weight bytes one GPU reads in a step serving `tokens` tokens: every dense weight, and of each MoE layer's
  // experts those some token is routed to, E·(1 - (1 - k/E)^tokens) in expectation (uniform routing).
  double weight_bytes(double tokens) const {
    double touched = 0;
    if (m.is_moe() && m.num_experts > 0) {
      const double e = m.num_experts, k = m.num_experts_per_tok;
      touched = e * (1 - std::pow(1 - k / e, std::max(tokens, 0.0))) * params.moe_layer.expert * m.num_moe_layers();
    }
    return kWeightBytes * (params.total - expert_params + touched) / tp;
  }
  double rate() const { return gemm_peak_flops(gpu, Precision::Bf16) / tr.tensor_slowdown; }
  double compute_s(double flops, double tokens) const {
    const double h = m.hidden_size;
    const double eff = gemm_efficiency(gpu, tr, Precision::Bf16, GemmShape{std::max(tokens, 1.0), 4 * h / tp, h, 1});
    return flops / tp / (rate() * std::max(eff, 1e-3));
  }
  // Two all-reduces of the tokens' hidden states per layer (attention and MLP outputs, Megatron-style tensor parallel).
  double allreduce_s(double tokens) const {
    if (tp <= 1) return 0;
    const double bytes = tokens * m.hidden_size * kWeightBytes;
    return 2.0 * m.num_hidden_layers * collective_time(Collective::AllReduce, bytes, {tp, std::min(tp, comm.gpus_per_node)}, comm).time_s;
  }
};

// Prefill of `sequences` prompts (a group shares one prefill under prefix caching).
double prefill_s(const EngineWork& w, const RlhfSpec& rl, double sequences) {
  const double prompts = rl.prefix_caching ? std::ceil(sequences / rl.group_size) : sequences;
  const double tokens = prompts * rl.prompt_len;
  // Causal: a prompt token attends to half the prompt on average.
  const double flops = tokens * (2 * w.matmul_params + attention_flops_per_token(w.m, rl.prompt_len / 2.0));
  const double memory = memory_bound_time(w.gpu, w.tr, w.weight_bytes(tokens));
  return std::max(w.compute_s(flops, tokens), memory) + w.allreduce_s(tokens);
}

// Decode of `sequences` responses: steps until the longest ends, the running count falling as C·exp(-s/scale).
double decode_s(const EngineWork& w, const RlhfSpec& rl, double sequences, double scale, double kv_per_token, double* steps_out) {
  const double max_len = rl.max_response_len;
  // Expected longest of C exponential lengths: scale x H_C (the C-th harmonic number), cut at the maximum.
  const double steps = scale > 0 ? std::min(max_len, scale * harmonic_number(sequences)) : max_len;
  *steps_out = steps;
  double total = 0;
  const double slice = steps / kDecodeBuckets;
  for (int b = 0; b < kDecodeBuckets; ++b) {
    const double s = (b + 0.5) * slice;
    const double running = std::max(1.0, scale > 0 ? sequences * std::exp(-s / scale) : sequences);
    const double context = rl.prompt_len + s;
    const double bytes = w.weight_bytes(running) + running * context * kv_per_token;
    const double flops = running * (2 * w.matmul_params + attention_flops_per_token(w.m, context));
    total += slice * (std::max(memory_bound_time(w.gpu, w.tr, bytes), w.compute_s(flops, running)) + w.allreduce_s(running));
  }
  return total;
}

// An engine GPU's memory: every weight resident in 16 bits (all experts), and the KV cache in the rest of its share.
struct EngineMemory {
  double weights_bytes, kv_bytes_per_token, kv_capacity_tokens;
  bool fits;  // room for one sequence of prompt_len + max_response_len
};
EngineMemory engine_memory(const ModelSpec& m, const RlhfSpec& rl, const GpuSpec& gpu, int tp, const ModelParams& params) {
  EngineMemory e;
  e.weights_bytes = kWeightBytes * params.total / tp;
  e.kv_bytes_per_token = kv_cache_bytes_per_token(m, tp);
  e.kv_capacity_tokens = std::max(0.0, (rl.gpu_memory_utilization * gpu.memory_bytes - e.weights_bytes) / e.kv_bytes_per_token);
  e.fits = e.kv_capacity_tokens >= rl.prompt_len + rl.max_response_len;
  return e;
}

}  // namespace

double response_length_scale(double mean, double max_len) {
  if (!(mean < max_len) || mean <= 0) return 0;
  // Mean of min(X, M) for X ~ Exp(scale): scale·(1 - exp(-M/scale)), increasing in scale from 0 to M.
  double lo = 0, hi = mean;
  while (hi * (1 - std::exp(-max_len / hi)) < mean) hi *= 2;
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    (mid * (1 - std::exp(-max_len / mid)) < mean ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

double kv_cache_bytes_per_token(const ModelSpec& m, int tp) {
  const int layers = softmax_layers(m);
  if (m.is_mla()) return kCacheBytes * (m.kv_lora_rank + m.qk_rope_head_dim) * layers;
  const int heads = std::max(1, (m.num_key_value_heads + tp - 1) / tp);
  return kCacheBytes * 2.0 * heads * m.head_dim * layers;
}

RolloutEstimate estimate_rollout(const ModelSpec& m, const RlhfSpec& rl, const GpuSpec& gpu, const GpuComputeTraits& tr,
                                 const CommModel& comm, int tp, int engines) {
  RolloutEstimate r;
  r.tp = std::max(1, tp);
  r.engines = std::max(1, engines);
  const EngineWork work{m, gpu, tr, comm, r.tp};
  const EngineMemory mem = engine_memory(m, rl, gpu, r.tp, work.params);
  r.weights_bytes_per_gpu = mem.weights_bytes;
  r.kv_bytes_per_token = mem.kv_bytes_per_token;
  r.kv_capacity_tokens = mem.kv_capacity_tokens;
  r.fits = mem.fits;
  r.samples_per_engine = (rl.samples_per_step() + r.engines - 1) / r.engines;
  r.length_scale = response_length_scale(rl.response_len, rl.max_response_len);
  r.generated_tokens = static_cast<double>(rl.samples_per_step()) * rl.response_len;
  if (!r.fits) return r;
  // Running sequences: what the cache holds at a finished response's length each (finished ones free their blocks),
  // at most the engine's max_num_seqs.
  const double per_sequence = rl.mean_sample_tokens();
  r.concurrent = std::max<long long>(1, std::min<long long>({r.samples_per_engine, static_cast<long long>(r.kv_capacity_tokens / per_sequence),
                                                             static_cast<long long>(rl.max_num_seqs)}));
  // Full waves cost alike: priced once; the last wave runs what is left.
  const long long full = r.samples_per_engine / r.concurrent, rest = r.samples_per_engine % r.concurrent;
  r.waves = static_cast<int>(full + (rest > 0 ? 1 : 0));
  const double c = static_cast<double>(r.concurrent);
  r.prefill_s = static_cast<double>(full) * prefill_s(work, rl, c);
  r.decode_s = static_cast<double>(full) * decode_s(work, rl, c, r.length_scale, r.kv_bytes_per_token, &r.decode_steps);
  if (rest > 0) {
    double steps = 0;
    r.prefill_s += prefill_s(work, rl, static_cast<double>(rest));
    r.decode_s += decode_s(work, rl, static_cast<double>(rest), r.length_scale, r.kv_bytes_per_token, &steps);
    if (full == 0) r.decode_steps = steps;
  }
  r.time_s = r.prefill_s + r.decode_s;
  return r;
}

int smallest_rollout_tp(const ModelSpec& m, const RlhfSpec& rl, const GpuSpec& gpu, int max_tp, int pool_gpus) {
  const ModelParams params = count_parameters(m);
  for (int tp = 1; tp <= max_tp && tp <= pool_gpus; tp *= 2)
    if (pool_gpus % tp == 0 && m.num_attention_heads % tp == 0 && engine_memory(m, rl, gpu, tp, params).fits) return tp;
  return 0;
}

}  // namespace trainsim
