#pragma once
// The step as a stream of operations, the one source of step facts: per layer kind and micro-batch the
// compute of each pass (models/compute/compute.hpp) and every communication op (parallel dimension, collective,
// bytes and calls, group, analytic time of one call, the compute it may hide behind); per stage and
// micro-batch the pipeline send/recv; per step the data-parallel synchronisation, the optimizer and the
// host overhead. StepModel::stream builds it, fold_step folds it into the analytic step time, and the
// iteration simulator (sim/) replays the same ops on a simulated fabric instead of folding them.
//
// Fixed capacity and no allocation: the layout search builds and folds one per candidate.
#include <stdexcept>
#include <string>

#include "models/comm/collectives.hpp"
#include "models/compute/compute.hpp"
#include "models/scenario/spec.hpp"

namespace trainsim {

enum class ParallelDim : unsigned char { Tp, Cp, Ep, Pp, Dp };
const char* to_string(ParallelDim d);  // "tp", "cp", "ep", "pp", "dp"

// Passes of one micro-batch through a layer. Reference: DPO's frozen reference model forward. Recompute: the
// forward recomputed before the backward under full recompute. Step: once per iteration, outside the layers.
enum class Pass : unsigned char { Forward, Reference, Recompute, Backward, Step };
const char* to_string(Pass p);

// What a communication op may run under, on a stream of its own. The fold takes the ops that share a window
// in a layer (or a step) together: c of communication under w of compute exposes max(c - w, f·c), f the SM
// share NCCL takes (step.cpp). None: the op blocks the compute stream.
enum class OverlapWindow : unsigned char {
  None,
  LayerGemms,      // the layer's GEMMs, forward and backward (TP comm overlap: userbuffers)
  LayerAttention,  // the layer's attention core (ring attention passes K/V while it computes)
  LayerForward,    // the layer's forward passes (ZeRO-3 / FSDP prefetch of the next layer's weights)
  LayerBackward,   // the layer's backward (ZeRO-3 / FSDP gather and reduce-scatter)
  LastBackward,    // the last micro-batch's backward (DP gradient buckets; the last bucket stays exposed)
  FirstForward,    // the first forward of the next step (parameter all-gather; the first bucket stays exposed)
  PairedChunk,     // the other direction's chunk running beside it (DualPipe: a forward and a backward chunk together)
};
const char* to_string(OverlapWindow w);

// No default member initializers: a CommList leaves its unused slots uninitialised (the search builds one
// stream per candidate); write CommOp{} for a zeroed op.
struct CommOp {
  ParallelDim dim;
  Collective collective;
  Pass pass;
  OverlapWindow window;
  double bytes;  // one call's buffer, as collective_time counts it
  double calls;  // per layer and micro-batch (layer ops), per stage and micro-batch (stage ops), per step
  GroupPlacement group;
  double call_s;  // analytic time of one call (collectives.hpp)
  double total_s() const { return calls * call_s; }
};

// The most collectives one layer's list holds: per pass (4 at most: forward, DPO's reference, full recompute,
// backward) TP all-gather + reduce-scatter, CP, EP all-to-all, the expert-TP all-gather + reduce-scatter, ZeRO-3
// gather; then ZeRO-3 reduce and HSDP all-reduce. (Megatron's `moe` recompute module adds the MoE block's three once
// more, but only under selective recompute, which has 3 passes: 3 x 7 + 3 + 2 = 26.)
inline constexpr int kLayerCommOps = 4 * 7 + 2;

template <int Capacity>
struct CommList {
  CommOp ops[Capacity];
  int size = 0;
  // A list fuller than its capacity is a bug in the op stream's construction (the capacities are the most ops
  // a layer, stage or step can have): it fails loudly rather than dropping an op from the step time.
  void add(const CommOp& op) {
    if (!(op.calls > 0)) return;
    if (size >= Capacity) throw std::logic_error("CommList: more than " + std::to_string(Capacity) + " collectives in one list");
    ops[size++] = op;
  }
  const CommOp* begin() const { return ops; }
  const CommOp* end() const { return ops + size; }
};

// One layer of a kind (dense or MoE), one micro-batch, one GPU.
struct LayerStream {
  LayerCompute compute;
  CommList<kLayerCommOps> comm;
};

// ZeRO-3's per micro-batch remainder on a stage: the first layer's gathers (one call per forward-type pass)
// have no earlier layer to hide behind, and its last reduce-scatter comes after the last backward. Zero
// unless the framework overlaps them (otherwise every call already blocks).
struct Zero3Edge {
  double forward_s = 0, backward_s = 0;          // analytic time: the gathers before, the reduce-scatter after
  double forward_bytes = 0, backward_bytes = 0;  // their buffers
};
struct StepStream {
  LayerStream dense, moe;   // moe = dense for a dense model
  bool first_layer_dense = true;  // the stage's first layer: ZeRO-3's first gather of a micro-batch hides behind nothing
  EdgeCompute edge;         // embedding on the first stage, LM head and loss on the last
  CommList<2> stage_comm;   // per stage and micro-batch: pipeline send/recv, and the TP gather of a scattered one
  CommList<8> step_comm;    // per step: DP gradient reduction and parameter gather, dense and expert groups
  int dense_step_comm = 0;  // step_comm's first ops: the dense group's; the rest: the expert group's
  // ZeRO-3's units outside the layers, per micro-batch (zero without ZeRO-3): the first stage's embedding, the last
  // stage's final norm and LM head (both on one stage without a pipeline), gathered before the stage's first layer
  // and reduce-scattered after its last backward, with no layer to hide behind in either direction.
  Zero3Edge zero3_first, zero3_last;
  int micro_batches = 1;
  double optimizer_s = 0;   // optimizer step (memory bound, or host bound when offloaded)
  double overhead_s = 0;    // once per step beside the optimizer: gradient norm, clipping and zeroing (step.cpp)
  double sm_share = 0;      // share of the SMs a running collective takes from the compute it hides behind
};


Zero3Edge zero3_edge(const LayerStream& first);

// Compute of a window in a layer, seconds.
double window_compute(const LayerCompute& lc, OverlapWindow w);

// Where the step's time goes for one pipeline stage and micro-batch (seconds), before the schedule.
struct StageTime {
  double compute = 0, host = 0, recompute = 0, tp = 0, cp = 0, ep = 0, pp = 0, dp = 0, edges = 0;
  double total() const { return compute + host + recompute + tp + cp + ep + pp + dp + edges; }
};
StageTime fold_stage(const StepStream& s, int dense_layers, int moe_layers, bool first_stage, bool last_stage);

struct StepBreakdown {  // seconds per iteration on the critical path; only exposed communication counts
  double compute_s = 0;      // forward + backward of every micro-batch on the slowest stage
  double host_s = 0;         // GPU idle waiting for eager kernel launches (framework kernel_launch_gap_us)
  double recompute_s = 0;    // recomputed forward work (selective / full)
  double tp_comm_s = 0;      // tensor-parallel all-reduce / all-gather + reduce-scatter (sequence parallel)
  double cp_comm_s = 0;      // context-parallel K/V exchange not hidden behind attention
  double ep_comm_s = 0;      // MoE dispatch and combine all-to-all
  double pp_comm_s = 0;      // pipeline send/recv of activations and gradients
  double dp_comm_s = 0;      // gradient reduce / parameter gather not hidden behind compute (and ZeRO-3 gathers)
  double bubble_s = 0;       // pipeline fill and drain
  double optimizer_s = 0;    // optimizer step (memory bound, or PCIe/host bound when offloaded)
  double overhead_s = 0;     // fp16 unscale, gradient norm, clipping and zeroing, once per iteration (framework traits, step_stream.cpp)
  double total_s = 0;
};

// The analytic step: every stage per micro-batch (fold_stage), the pipeline schedule over them (SC'21 §2.2:
// m·t_max + (Σ t_s − t_max)/v), then the step ops, the optimizer and the overhead.
StepBreakdown fold_step(const StepStream& s, const ModelSpec& m, const ParallelLayout& p);

}  // namespace trainsim
