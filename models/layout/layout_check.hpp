#pragma once
// Whether a parallel layout can run a model: the divisibility rules of Megatron-LM / Megatron-core
// (tensor parallel splits heads, KV heads and FFN columns; pipeline splits layers; experts split over
// expert parallel ranks; context parallel splits the sequence in 2·cp chunks for load balance).
// `check_layout` is cheap (integer arithmetic, no allocation) so the layout search can call it for
// millions of candidates; `layout_error` turns a finding into an InputError for users.
#include "models/core/errors.hpp"
#include "models/scenario/spec.hpp"

namespace trainsim {

enum class LayoutIssue {
  None,
  WorldMismatch,       // tp·pp·cp·dp != GPUs
  TpHeads,             // tp does not divide num_attention_heads
  TpKvHeads,           // tp does not divide num_key_value_heads
  TpFfn,               // tp does not divide intermediate_size
  PpLayers,            // pp > num_hidden_layers
  VppLayers,           // more virtual stages (pp·vpp) than pipeline slots (layers, embedding, loss)
  VppSchedule,         // vpp > 1 needs the interleaved schedule, and interleaved needs pp > 1
  BidirectionalShape,  // dualpipe needs an even pp and an even number of micro-batches, at least 2 pp
  CpSeq,               // cp > 1: seq_len not divisible by 2·cp
  CpLinearAttention,   // cp > 1 on a model with linear-attention layers (their exchange is not modelled)
  SpSeq,               // sequence parallel: seq_len·... not divisible by tp
  EpDense,             // ep > 1 or etp > 1 on a dense model
  EpExperts,           // ep does not divide num_experts
  EpWorld,             // ep·etp does not divide GPUs per pipeline stage
  EtpFfn,              // etp does not divide moe_intermediate_size
  ZeroPipeline,        // ZeRO-2/3 with pp > 1 (unsupported by DeepSpeed and Megatron)
  DpReplicate,         // dp_replicate > 1 without ZeRO sharding, or not dividing dp and the expert data-parallel degree
  FrameworkParallel,   // tp, pp, cp or ep > 1 in a framework that does not run that dimension
  BatchSplit,          // global batch not divisible by micro-batch·dp
};

LayoutIssue check_layout(const ModelSpec& model, const TrainingSpec& training, const ParallelLayout& layout,
                         int num_gpus);
// The experts' part of check_layout: EpDense, EpExperts, EpWorld or EtpFfn, else None.
LayoutIssue expert_layout_issue(const ModelSpec& model, const ParallelLayout& layout, long long num_gpus);
InputError layout_error(LayoutIssue issue, const ModelSpec& model, const TrainingSpec& training,
                        const ParallelLayout& layout, int num_gpus);

}  // namespace trainsim
