#pragma once
#include <algorithm>
// Parameter counts of a decoder-only transformer, whole and per GPU under tensor, pipeline and
// expert parallelism. Shapes follow the Hugging Face implementations (Llama, Qwen2/3, Mixtral,
// GPT-2/Megatron GPT, BLOOM, MPT): Q = h x (a·d), K and V = h x (kv·d), O = (a·d) x h; plain MLP
// 2·h·f, gated (SwiGLU) MLP 3·h·f; a routed expert is a gated MLP of moe_intermediate_size.
// Megatron splits column-parallel weights and biases (QKV, fc1) and row-parallel weights (O, fc2)
// over tp and replicates row-parallel biases and norms (Shoeybi et al. 2019, §3).
#include "models/scenario/spec.hpp"

namespace trainsim {

struct LayerParams {
  double attention_split = 0;    // Q,K,V,O weights, column biases: divided by tp
  double attention_replicated = 0;  // O bias, QK-norm weights: on every tp rank
  double norms = 0;              // the two per-layer norms (replicated)
  double mlp_split = 0;          // dense MLP, or shared experts in an MoE layer: divided by tp
  double mlp_replicated = 0;     // fc2 bias
  double router = 0;             // MoE router h x E (replicated)
  double expert = 0;             // one routed expert (divided by etp)
  int experts = 0;               // routed experts in this layer

  double total() const { return attention_split + attention_replicated + norms + mlp_split + mlp_replicated + router + expert * experts; }
};

struct ModelParams {
  LayerParams dense_layer;
  LayerParams moe_layer;
  double embedding = 0;          // token embedding V·h (vocab-parallel: divided by tp)
  double position_embedding = 0; // learned positions (replicated)
  double final_norm = 0;
  double lm_head = 0;            // 0 when tied to the embedding
  double mtp_extra = 0;          // per MTP module beside its transformer layer: two input norms, the 2h x h projection, its final norm
  double total = 0;              // all parameters (MTP modules included; they share the embedding and LM head)
  double active = 0;             // parameters one token passes through (top-k experts + shared)
};

ModelParams count_parameters(const ModelSpec& m);

// The GEMM weights of one softmax or MLA attention block (no biases or norms), as count_parameters and the layer walk
// both read them: Q (with the output gate's half) and O split over tp; K and V split over tp, at least one KV head's
// pair on each rank (Megatron replicates KV heads when tp exceeds them); MLA's down-projections whole on every rank.
struct AttentionWeights {
  double query_output = 0;  // split over tp
  double key_value = 0;     // split over tp, at least kv_head per rank
  double kv_head = 0;       // one KV head's K and V
  double whole = 0;         // on every rank
  double split() const { return query_output + key_value; }
  double per_rank(double tp) const { return query_output / tp + std::max(key_value / tp, kv_head) + whole; }
};
AttentionWeights attention_weights(const ModelSpec& m);
// An MLP's GEMM weights at inner size f: gate, up and down (gated) or fc1 and fc2.
inline double mlp_weights(const ModelSpec& m, double f) { return (m.mlp == MlpKind::Gated ? 3.0 : 2.0) * m.hidden_size * f; }

// Of the seq x seq query-key pairs of a sequence, the share a layer attends to, averaged over the layers: 1/2
// for causal attention (s(s+1)/2 pairs, the +1 dropped), and for a causal window of w < s keys
// (w(w+1)/2 + (s - w)·w pairs) w/s - w²/(2s²), weighted by the sliding layers' share. A stage is taken to hold
// the model's mix of layers (exact when its layers are a whole number of the pattern's periods).
double attended_key_fraction(const ModelSpec& m, double seq);
// The same under a per-document mask over packed rows of `seq` tokens (TrainingSpec::document_tokens; 0: none): each
// query attends within its document, and a tiled kernel (FlashAttention's varlen, cuDNN's THD, FlexAttention's
// block mask) computes whole kAttentionTileTokens-square tiles, so a document of d tokens costs the causal work of
// ceil(d / tile) tiles a side: (ceil(d/tile)·tile)² / 2 pairs for its d queries, a fraction of the row's keys.
double attended_key_fraction(const ModelSpec& m, double seq, double document_tokens);
inline constexpr double kAttentionTileTokens = 128;  // FlashAttention-2/3, cuDNN and FlexAttention's 128-token blocks
constexpr double kCausalAttendedFraction = 0.5;  // causal attention without a window

// How layers fall on pipeline stages, as Megatron-LM runs an uneven split (--decoder-first-pipeline-num-layers,
// --decoder-last-pipeline-num-layers; Llama 3, arXiv:2407.21783 §3.3.2: "we reduce one Transformer layer each
// from the first and the last stages", 126 = 7 + 14 x 8 + 7): n/stages each when stages divides n; otherwise the
// middle stages take ceil(n/stages) each (Megatron needs them equal) and the first and last stages share the
// rest, the first one the larger half (the last also holds the LM head and the loss). Every stage holds >= 1
// slot when stages <= n.
struct PipelineSplit {
  int first = 0, middle = 0, last = 0;  // slots on stage 0, on each of stages 1..stages-2, on the last stage
  bool even = true;                     // stages divides n: no first/last flags needed
};
PipelineSplit pipeline_split(int slots, int stages);

// Under torchtitan's rule (ParallelLayout::split_rule ExtraToMiddle) every virtual stage takes n / stages slots and
// each of the first n % stages middle stages one more (80 layers on 32 virtual stages: 2, then 16 x 3, then 2s).
// With interleaving (vpp model chunks per rank) the split applies to the pp·vpp virtual stages; virtual stage
// v runs on pipeline rank v mod pp as its chunk v / pp (Megatron-core's interleaved order), so rank 0 holds
// the first virtual stage and rank pp-1 the last. Megatron's --account-for-embedding/loss-in-pipeline-split
// count the embedding and the loss as one slot each, at the first and the last slot; otherwise every slot is
// a transformer layer. An uneven interleaved split is what --pipeline-model-parallel-layout expresses (Megatron
// MR 2795: 94 layers on pp 8 x vpp 4 for Qwen3-235B).
int pipeline_slots(int num_layers, const ParallelLayout& p);
int virtual_stages(const ParallelLayout& p);
// Transformer layers of virtual stage v (0 <= v < pp·vpp), and the index of its first layer.
int layers_in_virtual_stage(int num_layers, const ParallelLayout& p, int v);
int first_layer_of_virtual_stage(int num_layers, const ParallelLayout& p, int v);
// Transformer layers held by pipeline rank `stage` (all its chunks), and how many of them are among the first
// `num_dense` layers of the model (the dense layers of an MoE model with first_k_dense_replace).
int layers_in_stage(int num_layers, const ParallelLayout& p, int stage);
int dense_layers_in_stage(int num_layers, int num_dense, const ParallelLayout& p, int stage);

// Parameters held by one GPU of pipeline stage `stage`, split into dense parameters (data-parallel
// group dp·cp) and expert parameters (expert data-parallel group).
struct StageParams {
  double dense = 0;
  double expert = 0;
  double largest_layer = 0;  // unsharded (per tp rank) parameters of the stage's largest layer: ZeRO-3 gathers these
  double not_linear = 0;     // embeddings, norms, router: kept in 16 bits when QLoRA quantizes the linear layers
  double edges = 0;          // outside the transformer layers: embeddings, final norm, LM head (per tp rank)
  int layers = 0;
  double total() const { return dense + expert; }
};
StageParams stage_parameters(const ModelSpec& m, const ModelParams& params, const ParallelLayout& p, int stage);

// LoRA adapter parameters for the whole model (rank r on each target module: r·(in + out)). `merged_experts`: peft's
// ParamWrapper over 3-D expert parameters (merges_expert_adapters, transformers 5.x), which adapts per expert the
// fused gate_up at rank 2r over (hidden + 2f) and down at rank r, and the router's weight at rank r, per MoE layer.
double lora_parameters(const ModelSpec& m, const LoraSpec& lora, bool merged_experts = false);

}  // namespace trainsim
