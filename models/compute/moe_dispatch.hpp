#pragma once
// How many bytes an MoE layer's token dispatch (and combine) sends per GPU, by dispatcher. The all-to-all
// dispatcher (Megatron-Core "alltoall", DeepSpeed-MoE, torchtitan) sends one copy of a token per routed
// expert; DeepEP (Megatron-Core "flex" with DeepEP, DeepSeek-V3 §3.2.2) sends a token once to each other node
// that holds one of its experts (over the network, to the GPU of the same local rank) and forwards it once to
// each GPU of that node that needs it (over NVLink), so top-k experts on the same node cost one transfer.
#include "models/comm/collectives.hpp"
#include "models/scenario/framework.hpp"

namespace trainsim {

// Expected number of the `groups` equal groups of `experts` experts that a token's `top_k` distinct experts
// fall in, the experts drawn uniformly without replacement: groups x (1 - C(E - E/groups, k) / C(E, k))
// (a hypergeometric miss probability per group).
double expected_groups_hit(double experts, double top_k, double groups);

// Per-GPU bytes of the dispatcher over the all-to-all dispatcher's (1 for alltoall): for DeepEP, the
// copies a token sends off its node (distinct other nodes hit) over the all-to-all's (top_k x the share of the
// expert-parallel group off the node); within one node, distinct other GPUs hit over top_k x (n-1)/n.
double dispatch_traffic_share(MoeDispatcher dispatcher, double experts, double top_k, GroupPlacement ep);

}  // namespace trainsim
