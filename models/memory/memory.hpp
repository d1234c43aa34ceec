#pragma once
// Per-GPU memory of a training job, for every pipeline stage: model states (weights, gradients,
// optimizer states under ZeRO / distributed optimizer / offload), activations of the micro-batches in
// flight (Korthikanti et al. 2022), and an allowance for what the framework itself holds.
#include <vector>

#include "models/compute/transformer.hpp"
#include "models/core/units.hpp"
#include "models/scenario/spec.hpp"

namespace trainsim {

struct FrameworkTraits;  // framework.hpp

// Allowances for memory no formula gives exactly; documented in the README's memory section.
struct MemoryAllowances {
  double cuda_context_bytes = 0.75 * kBytesPerGiB;  // CUDA context + cuBLAS/cuDNN workspaces (~0.5-1 GiB on nvidia-smi)
  double nccl_bytes_per_group = 0.25 * kBytesPerGiB;  // NCCL channel buffers per communicator of size > 1
  double fragmentation = 0.10;  // PyTorch caching-allocator slack, as a fraction of activation memory
};

// Bytes of weights, gradients and optimizer states for parameters trained in full (pretrain, SFT, DPO
// policy), ZeRO-sharded: stage >= 1 (or the distributed optimizer) divides optimizer states by the
// data-parallel group, stage >= 2 also gradients, stage 3 also weights (Rajbhandari et al. 2020, Fig. 1).
struct ModelStates {
  double weights = 0, gradients = 0, optimizer = 0;
  double total() const { return weights + gradients + optimizer; }
};
ModelStates full_model_states(double dense_params, double expert_params, double dense_group, double expert_group,
                              const TrainingSpec& t, Precision grad_precision);

// Activation bytes of one transformer layer for one micro-batch on one GPU.
struct LayerActivations {
  double stored = 0;     // kept from forward to backward under the chosen recompute mode
  double full = 0;       // everything, as with no recompute: the working set while recomputing a layer
};
LayerActivations layer_activations(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p, bool moe_layer);

// Layer-micro-batches whose activations stage `stage` holds at its peak: 1F1B keeps pp - stage
// micro-batches; interleaved 1F1B keeps Megatron's warm-up count of model chunks; GPipe all of them.
double layers_in_flight(const ParallelLayout& p, int num_layers, int stage);

// What a memory figure counts. nvidia-smi's used memory: everything (Device). PyTorch's caching allocator,
// torch.cuda.max_memory_reserved (torchtitan's "memory:"): the segments it holds, fragmentation included, without
// the CUDA context and NCCL's buffers, which are allocated beside it (AllocatorReserved).
// torch.cuda.max_memory_allocated (Megatron's "max allocated"): live tensors only (AllocatorAllocated).
enum class MemoryCounter { Device, AllocatorReserved, AllocatorAllocated };

struct StageMemory {
  int stage = 0;
  int layers = 0;
  double parameters = 0;  // parameters whose weights live on this GPU (before ZeRO-3 sharding)
  double weights = 0, gradients = 0, optimizer = 0, activations = 0, other = 0, total = 0;
  double host = 0;        // host memory this GPU uses (offloaded optimizer states and parameters)
  double nvme = 0;        // NVMe this GPU's offloaded states take (ZeRO-Infinity)
  double paged = 0;       // part of `host`: a paged optimizer's states paged out because the GPU is full
  // Detail
  double activations_layers = 0;   // transformer layers, micro-batches in flight
  double activations_recompute = 0;  // working set of one layer being recomputed (full recompute)
  double activations_edges = 0;    // embedding output, final norm, logits and cross-entropy
  double weights_held_by_autograd = 0;  // part of `weights`: ZeRO-3 gathers kept alive by saved views (memory_efficient_linear false)
  double layer_microbatches_in_flight = 0;
  double cuda_context = 0, nccl = 0, fragmentation = 0;

  // The part of `total` a counter sees.
  double counted(MemoryCounter c) const {
    switch (c) {
      case MemoryCounter::Device: return total;
      case MemoryCounter::AllocatorReserved: return total - cuda_context - nccl;
      case MemoryCounter::AllocatorAllocated: return total - other;
    }
    return total;
  }
};

struct MemoryEstimate {
  std::vector<StageMemory> stages;
  StageMemory worst;      // the most loaded stage
  double capacity = 0;    // device memory
  // Host memory per node: what the node's GPUs offload (the most loaded stage's host bytes on every GPU of
  // the node), against hardware.host_memory; capacity 0 = not given, not checked.
  double host_per_node = 0, host_capacity = 0;
  bool device_fits = false, host_fits = true;
  bool fits = false;      // device_fits && host_fits
  ModelParams params;
  double trainable_parameters = 0;
};

// Precomputed per-scenario values so the layout search can evaluate stages without allocating.
struct MemoryModel {
  MemoryModel(const ModelSpec& m, const TrainingSpec& t, const HardwareSpec& h, MemoryAllowances a = {});
  StageMemory stage(const ParallelLayout& p, int stage) const;
  // The most loaded stage only (what decides whether a layout fits).
  StageMemory worst_stage(const ParallelLayout& p) const;
  MemoryEstimate estimate(const ParallelLayout& p) const;
  // Host bytes one node holds when each of its GPUs holds `host_per_gpu`, and whether that fits the node.
  double host_per_node(double host_per_gpu) const;
  bool host_fits(double host_per_gpu) const;

  // Per-layer activations do not depend on the stage: computed once per layout.
  struct LayoutActivations {
    LayerActivations dense, moe;
  };
  LayoutActivations activations_for(const ParallelLayout& p) const;
  // Under a bidirectional schedule (DualPipe) row `stage` is pipeline rank `stage`, holding stages stage and
  // pp - 1 - stage.
  StageMemory stage(const ParallelLayout& p, int stage, const LayoutActivations& acts) const;
  // One pipeline stage's states and activations, before the per-GPU allowances (context, NCCL, fragmentation).
  StageMemory stage_states(const ParallelLayout& p, int stage, const LayoutActivations& acts) const;

  const ModelSpec& model;
  const TrainingSpec& training;
  const HardwareSpec& hardware;
  MemoryAllowances allowances;
  ModelParams params;
  // Adapter parameters on the tokens, and with the experts adapted through merged 3-D weights (lora_parameters);
  // adapter_params picks the one of the layout's framework.
  double lora_params = 0, lora_params_merged = 0;
  double adapter_params(const FrameworkTraits& fw) const;
};

}  // namespace trainsim
