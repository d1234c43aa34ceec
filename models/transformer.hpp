#pragma once
// Parameter counts of a decoder-only transformer, whole and per GPU under tensor, pipeline and
// expert parallelism. Shapes follow the Hugging Face implementations (Llama, Qwen2/3, Mixtral,
// GPT-2/Megatron GPT, BLOOM, MPT): Q = h x (a·d), K and V = h x (kv·d), O = (a·d) x h; plain MLP
// 2·h·f, gated (SwiGLU) MLP 3·h·f; a routed expert is a gated MLP of moe_intermediate_size.
// Megatron splits column-parallel weights and biases (QKV, fc1) and row-parallel weights (O, fc2)
// over tp and replicates row-parallel biases and norms (Shoeybi et al. 2019, §3).
#include "spec.hpp"

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
  double total = 0;              // all parameters
  double active = 0;             // parameters one token passes through (top-k experts + shared)
};

ModelParams count_parameters(const ModelSpec& m);

// How layers fall on pipeline stages, as Megatron-LM runs an uneven split (--decoder-first-pipeline-num-layers,
// --decoder-last-pipeline-num-layers; Llama 3, arXiv:2407.21783 §3.3.2: "we reduce one Transformer layer each
// from the first and the last stages", 126 = 7 + 14 x 8 + 7): L/pp each when pp divides L; otherwise the middle
// stages take ceil(L/pp) each (Megatron needs them equal) and the first and last stages share the rest, the
// first one the larger half (the last also holds the LM head and the loss). Every stage holds >= 1 layer
// when pp <= L.
struct PipelineSplit {
  int first = 0, middle = 0, last = 0;  // layers on stage 0, on each of stages 1..pp-2, on stage pp-1
  bool even = true;                     // pp divides L: no first/last flags needed
};
PipelineSplit pipeline_split(int num_layers, int pp);
// Transformer layers of pipeline stage `stage` (0-based), by pipeline_split.
int layers_in_stage(int num_layers, int pp, int stage);
// Index of the first layer of `stage`.
int first_layer_of_stage(int num_layers, int pp, int stage);

// Parameters held by one GPU of pipeline stage `stage`, split into dense parameters (data-parallel
// group dp·cp) and expert parameters (expert data-parallel group).
struct StageParams {
  double dense = 0;
  double expert = 0;
  double largest_layer = 0;  // unsharded (per tp rank) parameters of the stage's largest layer: ZeRO-3 gathers these
  double not_linear = 0;     // embeddings, norms, router: kept in 16 bits when QLoRA quantizes the linear layers
  int layers = 0;
  double total() const { return dense + expert; }
};
StageParams stage_parameters(const ModelSpec& m, const ModelParams& params, const ParallelLayout& p, int stage);

// LoRA adapter parameters for the whole model (rank r on each target module: r·(in + out)).
double lora_parameters(const ModelSpec& m, const LoraSpec& lora);

}  // namespace trainsim
