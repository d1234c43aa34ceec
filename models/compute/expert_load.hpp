#pragma once
// How unevenly routed tokens load the expert-parallel ranks. Dropless routing (Megatron-Core, DeepEP, torchtitan)
// runs every token on its chosen experts, and each MoE layer's combine all-to-all waits for the rank whose experts
// received the most: that rank sets the pace of the layer, and its activations the memory peak. Each expert's token
// count varies from micro-batch to micro-batch by sampling (top-k over a finite number of tokens: binomial) and, under
// a trained router, by what the router prefers for the batch at hand (training.moe_expert_load_cv).
#include "models/scenario/spec.hpp"

namespace trainsim {

// Expected largest of n independent standard normal variables (n >= 1): E[max] = integral of x n phi(x) Phi(x)^(n-1)
// by Simpson's rule (0.5642 for 2 = 1/sqrt(pi), 1.0294 for 4, 1.4236 for 8), tabulated up to n = 1024.
double expected_max_standard_normal(int n);

// The busiest expert-parallel rank's routed tokens over the mean, per MoE layer and micro-batch (1 without expert
// parallelism: one GPU holds every expert). An expert's token count varies with the router's coefficient of
// variation c (training.moe_expert_load_cv); a rank holds E/ep experts, so its load varies by c / sqrt(E/ep) (the
// experts taken as independent), and the largest of ep ranks lies expected_max_standard_normal(ep) of those above
// the mean: 1 + c sqrt(ep/E) E[max of ep], never above ep (every token on one rank). Uniform routing (c = 0, as
// Megatron's --moe-router-force-load-balancing draws it) adds only the binomial spread of n tokens an expert,
// c^2 = 1/n: under 2% at the 512 or more tokens an expert of the runs here, and not counted, since one token count
// for all of a rank's experts (the GEMM shapes) cannot carry the spread that comes with it.
double busiest_expert_rank_load(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p);

// Tokens each expert receives per micro-batch when every rank routes `routing_tokens` (its sequence-parallel share)
// to top-k experts: the ep x etp ranks' routed copies spread over the experts.
double balanced_tokens_per_expert(const ModelSpec& m, const ParallelLayout& p, double routing_tokens);
// The same on the busiest expert-parallel rank: balanced x busiest_expert_rank_load.
double expert_tokens_on_busiest_rank(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p, double routing_tokens);

}  // namespace trainsim
