#pragma once
// The rollout of an RL step (rlhf_step.hpp): serving engines (vLLM, as OpenRLHF, verl, NeMo RL and TRL run them)
// generating group_size responses to each prompt. Each engine holds the 16-bit weights split over its tp GPUs and
// a KV cache in what is left of its memory share; it prefills the prompts (compute bound), then decodes one token
// per running sequence per step (bound by reading the weights and the cache from HBM: Pope et al. 2022,
// "Efficiently Scaling Transformer Inference" §2), running as many sequences at once as the cache holds
// (continuous batching, Kwon et al. SOSP'23) and the rest in further waves.
//
// Response lengths: mean response_len, cut at max_response_len. Their tail is exponential (a sampled stop token
// ends a response with the same chance at every step), with the scale whose truncated mean is response_len; a
// wave of C sequences decodes until its longest ends, min(max, scale x ln C) steps, with fewer sequences running
// as the others finish. response_len == max_response_len: every response that long.
#include "models/comm/collectives.hpp"
#include "models/compute/compute.hpp"
#include "models/scenario/spec.hpp"

namespace trainsim {

struct RolloutEstimate {
  int tp = 1, engines = 1;
  double weights_bytes_per_gpu = 0;
  double kv_bytes_per_token = 0;   // per GPU of an engine (its share of every layer's cache)
  double kv_capacity_tokens = 0;   // per engine: tokens its cache holds
  long long samples_per_engine = 0;
  long long concurrent = 0;        // sequences an engine runs at once
  int waves = 0;                   // rounds of `concurrent` sequences per engine
  double length_scale = 0;         // tokens: the exponential tail's scale (0: every response max_response_len long)
  double decode_steps = 0;         // per full wave: steps until its longest response ends
  double prefill_s = 0, decode_s = 0, time_s = 0;
  double generated_tokens = 0;     // all engines
  bool fits = false;               // an engine holds its weights and one sequence of prompt_len + max_response_len
};

// KV-cache bytes one token adds on one GPU of an engine of `tp` GPUs (16-bit cache): keys and values of every
// softmax-attention layer, the key-value heads split over tp (a head per GPU at least); MLA's latent and rotary key
// on every GPU (vLLM keeps the whole latent per rank). Linear-attention layers keep a fixed state, not per token.
double kv_cache_bytes_per_token(const ModelSpec& m, int tp);

// The engines' part of an RL step. `tr`: the GPU's compute traits; `comm`: the node's collectives (tensor-parallel
// all-reduce inside an engine).
RolloutEstimate estimate_rollout(const ModelSpec& m, const RlhfSpec& rl, const GpuSpec& gpu, const GpuComputeTraits& tr,
                                 const CommModel& comm, int tp, int engines);

// The smallest power-of-two engine (at most `max_tp` GPUs, dividing `pool_gpus` and the attention heads) that
// holds the weights and one full-length sequence; 0 when none does.
int smallest_rollout_tp(const ModelSpec& m, const RlhfSpec& rl, const GpuSpec& gpu, int max_tp, int pool_gpus);

// The response lengths' exponential scale whose mean, cut at `max_len`, is `mean` (bisection); 0 when mean >= max_len.
double response_length_scale(double mean, double max_len);

}  // namespace trainsim
