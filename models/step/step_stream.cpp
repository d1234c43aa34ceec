// StepModel::stream: the step as an op stream (models/step/op_stream.hpp). The compute of each layer kind comes
// from the layer walk; this file adds every communication op, one function per parallel dimension, and the
// once-per-step optimizer and gradient passes. estimate() folds the stream; the iteration simulator replays it.
#include <algorithm>
#include <cmath>

#include "models/calibration/calibration.hpp"
#include "models/compute/compute.hpp"
#include "models/compute/expert_load.hpp"
#include "models/compute/moe_dispatch.hpp"
#include "models/memory/memory.hpp"
#include "models/scenario/framework.hpp"
#include "models/step/pipeline_schedule.hpp"
#include "models/step/step.hpp"

namespace trainsim {

namespace {
double dd(int v) { return static_cast<double>(v); }

// Bytes the optimizer step moves through memory per local parameter: read and write the master copy and the
// states, read the gradient, write the 16-bit weights (Adam over fp32 states: 4+4 + 2·(4+4) + 4 + 2 = 30; fp8 training
// keeps 16-bit weights too); without a master copy (master_weights_dtype "none") it reads and writes the 16-bit weights
// themselves (bf16 throughout: 2+2 + 2·(2+2) + 2 = 14).
double optimizer_step_bytes(const TrainingSpec& t, const ParallelLayout& p) {
  const double weight = bytes_per_element(high_precision(t.precision));
  const double weights = (t.master_weights || t.precision == Precision::Fp32 ? 1 : 2) * weight;
  return 2 * optimizer_state_bytes(t).total() + bytes_per_element(gradient_precision(t, p)) + weights;
}

// An optimizer step's bytes of memory per parameter, on the GPU or (offloaded) on the host. Fused (FusedAdam,
// DeepSpeed's CPUAdam, torch's fused kernels): one pass. torch.optim's foreach path on the GPU and its single-tensor
// loop on the host (FrameworkTraits::optimizer_foreach, host_optimizer_fused false) run one pass per elementwise op
// (the parameter is the fp32 master where there is one, the gradient takes its dtype), with p bytes a parameter and
// s a moment:
// - torch/optim/adam.py _single_tensor_adam with decoupled weight decay: param.mul_ 2p, exp_avg.lerp_(grad) 2s + p,
//   exp_avg_sq.mul_ 2s, .addcmul_(grad, grad) 2s + p, sqrt() 2s, / bias correction 2s, add_(eps) 2s,
//   param.addcdiv_(exp_avg, denom) 2p + 2s: 6p + 14s (80 B for fp32);
// - torch/optim/sgd.py _single_tensor_sgd with weight decay and momentum: grad.add(param) 3p, buf.mul_ 2s,
//   buf.add_(grad) 2s + p, param.add_(buf) 2p + s: 6p + 5s.
// 8-bit Adam has no torch host loop (bitsandbytes' own kernel): one pass.
double optimizer_pass_bytes(const TrainingSpec& t, const ParallelLayout& p, bool fused) {
  if (fused || t.optimizer == OptimizerKind::Adam8bit) return optimizer_step_bytes(t, p);
  const OptimizerStateBytes b = optimizer_state_bytes(t);
  const double param = b.master > 0 ? b.master : bytes_per_element(high_precision(t.precision));
  const double moment = bytes_per_element(t.moment_precision);
  return t.optimizer == OptimizerKind::Sgd ? 6 * param + 5 * moment : 6 * param + 14 * moment;
}

// Overlap is not free: a running NCCL collective holds one thread block per channel on an SM of its own, and
// the GEMMs it hides behind run on the rest. NVIDIA/nccl #892 (an 8-GPU NVSwitch Hopper node, NCCL 2.18)
// logs "16 coll channels": 16 of an H100's 132 SMs (12%), of an A100's 108 (15%). With a share f of the SMs
// taken, compute w and a collective c that run together take max(c, w + f·c): the exposed part is
// max(c - w, f·c), never zero. (Fitting the channel count to the reference runs, as a fitted parameter, made
// the leave-one-source-out error worse: 7.1% against 5.9% median; NCCL's own figure stays.)
constexpr double kNcclChannels = 16;
double comm_sm_share(const GpuComputeTraits& tr) { return tr.sms > 0 ? std::min(0.5, kNcclChannels / tr.sms) : 0.0; }

// A GPU's share of its node's NVMe (the local-nvme storage tier's per-node bandwidth over the node's GPUs).
double nvme_bandwidth_per_gpu(const HardwareSpec& h) {
  return find_storage_tier("local-nvme")->per_node_bandwidth / std::max(1, std::min(h.gpus_per_node, h.num_gpus));
}

// What every dimension's ops share: the layout's groups, the passes that communicate, the activation size.
struct StreamContext {
  const ModelSpec& m;
  const TrainingSpec& t;
  const ParallelLayout& p;
  const CommModel& comm;
  const FrameworkTraits& fw;
  StepStream& s;
  LayoutGroups groups;
  bool sp;
  // A bidirectional pipeline (DualPipe) runs a forward and a backward chunk of two micro-batches together, each
  // one's all-to-all and pipeline send/recv under the other's compute (DeepSeek-V3 §3.2.1).
  bool paired_chunks;
  // Forward-type passes that communicate as the forward does: the forward, the DPO reference model's
  // forward, the forward recomputed under full recompute; then the backward.
  Pass passes[4];
  int n_passes = 0;
  // Activations crossing TP / PP boundaries: s/cp tokens of b sequences, 16-bit.
  double tokens;
  double act_bytes;

  StreamContext(const ModelSpec& m_, const TrainingSpec& t_, const ParallelLayout& p_, const CommModel& c, const FrameworkTraits& f, StepStream& s_,
                int gpus_per_node)
      : m(m_), t(t_), p(p_), comm(c), fw(f), s(s_), groups(group_placements(p_, gpus_per_node)), sp(p_.sequence_parallel && p_.tp > 1),
        paired_chunks(pairs_stages(p_)) {
    passes[n_passes++] = Pass::Forward;
    if (t.mode == TrainingMode::Dpo) passes[n_passes++] = Pass::Reference;
    if (t.recompute == Recompute::Full) passes[n_passes++] = Pass::Recompute;
    passes[n_passes++] = Pass::Backward;
    tokens = dd(t.seq_len) / p.cp * p.micro_batch_size * t.sequences_per_sample();
    act_bytes = tokens * m.hidden_size * 2;
  }
  CommOp op(ParallelDim dim, Collective c, Pass pass, OverlapWindow w, double bytes, double calls, GroupPlacement g) const {
    return CommOp{dim, c, pass, w, bytes, calls, g, collective_time(c, bytes, g, comm).time_s};
  }
  // The same op in every pass of a layer: priced once.
  void each_pass(CommList<kLayerCommOps>& list, CommOp o, double backward_calls) const {
    for (int i = 0; i < n_passes; ++i) {
      o.pass = passes[i];
      const double calls = o.calls;
      if (o.pass == Pass::Backward) o.calls = backward_calls;
      list.add(o);
      o.calls = calls;
    }
  }
  template <class Add>
  void each_layer(Add&& add) {
    add(s.dense, false);
    if (m.is_moe()) add(s.moe, true);
  }
};

// Tensor parallel (Shoeybi et al. 2019; Korthikanti et al. 2022 §4.2.2): per layer two all-reduces in
// each pass; with sequence parallelism each becomes an all-gather + reduce-scatter of the same volume.
// Blocking (Megatron's default) unless tp_comm_overlap (Megatron --tp-comm-overlap, Transformer Engine
// userbuffers) pipelines them in chunks with the GEMMs they feed, in frameworks that have it.
void add_tensor_parallel(StreamContext& c) {
  const ParallelLayout& p = c.p;
  if (p.tp <= 1) return;
  const OverlapWindow w = p.tp_comm_overlap && c.fw.tp_comm_overlap_available ? OverlapWindow::LayerGemms : OverlapWindow::None;
  const CommOp first = c.op(ParallelDim::Tp, c.sp ? Collective::AllGather : Collective::AllReduce, Pass::Forward, w, c.act_bytes, 2, c.groups.tp);
  const CommOp second = c.sp ? c.op(ParallelDim::Tp, Collective::ReduceScatter, Pass::Forward, w, c.act_bytes, 2, c.groups.tp) : CommOp{};
  c.each_layer([&](LayerStream& layer, bool) {
    c.each_pass(layer.comm, first, 2);
    c.each_pass(layer.comm, second, 2);
  });
}

// Context parallel (ring attention): each rank passes its K and V chunk around the ring, cp-1 steps in
// each forward and twice that in backward (K/V and their gradients), under the attention of the chunk in hand.
void add_context_parallel(StreamContext& c) {
  const ParallelLayout& p = c.p;
  const ModelSpec& m = c.m;
  if (p.cp <= 1) return;
  const double kv_bytes = c.tokens * m.num_key_value_heads * (m.qk_head_dim() + m.value_head_dim()) * 2 / p.tp;  // K and V, 16-bit
  const CommOp ring = c.op(ParallelDim::Cp, Collective::SendRecv, Pass::Forward, OverlapWindow::LayerAttention, kv_bytes, p.cp - 1.0, c.groups.cp);
  c.each_layer([&](LayerStream& layer, bool) { c.each_pass(layer.comm, ring, 2.0 * (p.cp - 1)); });
}

// Expert parallel: dispatch and combine all-to-all per MoE layer and pass.
void add_expert_parallel(StreamContext& c) {
  const ParallelLayout& p = c.p;
  const ModelSpec& m = c.m;
  const TrainingSpec& t = c.t;
  if (!m.is_moe() || p.ep <= 1) return;
  // DeepEP sends a token once per node and GPU holding its experts, not once per expert (moe_dispatch.hpp).
  const double share = dispatch_traffic_share(c.fw.moe_dispatcher, m.num_experts, m.num_experts_per_tok, c.groups.ep);
  // The busiest rank receives (and in the combine sends back) its load's multiple of the mean, and the all-to-all
  // ends when it has (expert_load.hpp).
  const double routing_tokens = c.tokens / (c.sp ? p.tp : 1);
  const double busiest = busiest_expert_rank_load(m, t, p);
  const double routed_bytes = routing_tokens * m.num_experts_per_tok * m.hidden_size * 2 * share * busiest;
  const OverlapWindow w = c.paired_chunks ? OverlapWindow::PairedChunk : OverlapWindow::None;
  const CommOp a2a = c.op(ParallelDim::Ep, Collective::AllToAll, Pass::Forward, w, routed_bytes, 2, c.groups.ep);
  c.each_pass(c.s.moe.comm, a2a, 2);
  // Expert tensor parallelism: after the all-to-all the etp group all-gathers its routed tokens, and reduce-scatters
  // the experts' partial outputs before the combine (Megatron's MoEAlltoAllTokenDispatcher over the expert-TP group,
  // token_dispatcher.py); the backward runs each as the other. Every rank's routed rows, 16-bit, etp times over.
  CommOp etp_gather{}, etp_scatter{};
  if (p.etp > 1) {
    const double gathered = routing_tokens * m.num_experts_per_tok * m.hidden_size * 2 * p.etp * busiest;
    etp_gather = c.op(ParallelDim::Ep, Collective::AllGather, Pass::Forward, w, gathered, 1, c.groups.etp);
    etp_scatter = c.op(ParallelDim::Ep, Collective::ReduceScatter, Pass::Forward, w, gathered, 1, c.groups.etp);
    c.each_pass(c.s.moe.comm, etp_gather, 1);
    c.each_pass(c.s.moe.comm, etp_scatter, 1);
  }
  // Recomputing the whole MoE block (Megatron's `moe` recompute module) dispatches and combines again.
  if (t.recompute == Recompute::Selective && (t.recompute_modules & kRecomputeMoe) && c.fw.selective_recompute == SelectiveRecompute::AttentionCore) {
    for (CommOp again : {a2a, etp_gather, etp_scatter}) {  // add() skips the etp pair's zeroed ops
      again.pass = Pass::Recompute;
      c.s.moe.comm.add(again);
    }
  }
}

// The data-parallel groups: ZeRO's shard group (the inner data-parallel ranks under hybrid sharding) and the
// replicas across which each shard's gradients are all-reduced, for the dense and the expert weights.
struct DataParallelGroups {
  double dp_ranks;
  GroupPlacement dp, replica, edp, expert_replica;
  DataParallelGroups(const ParallelLayout& p, const LayoutGroups& groups, int gpus_per_node) {
    const GroupPlacement dp_full = strided_group_placement(p.dp * p.cp, p.tp, static_cast<int>(p.world()), gpus_per_node);
    dp_ranks = dd(p.zero_shard_ranks());
    dp = GroupPlacement{p.zero_shard_ranks(), std::min(p.zero_shard_ranks(), dp_full.ranks_per_node)};
    replica = GroupPlacement{p.dp_replicate, std::max(1, dp_full.ranks_per_node / p.zero_shard_ranks())};
    edp = GroupPlacement{p.expert_zero_shard_ranks(), std::min(p.expert_zero_shard_ranks(), groups.edp.ranks_per_node)};
    expert_replica = GroupPlacement{p.dp_replicate, std::max(1, groups.edp.ranks_per_node / p.expert_zero_shard_ranks())};
  }
};

// ZeRO-3 / FSDP: every micro-batch gathers each layer's weights in every pass and reduce-scatters its
// gradients. Gathers go one layer per call (FSDP units) or in the framework's prefetch buckets;
// reduce-scatters one layer per call, or in gradient buckets filled across the stage's layers (DeepSpeed: a
// layer's share of the stage's bucketed reduce). Where the framework prefetches and reduces on side streams
// they hide behind the layer's own passes; otherwise they block. Under hybrid sharding each shard's gradients
// are then all-reduced across the replicas. `fetch_s_per_byte`: parameter offload's PCIe (and NVMe) time per
// gathered byte, hidden where the gather is.
void add_zero3(StreamContext& c, const DataParallelGroups& g, const ModelParams& params, double fetch_s_per_byte) {
  const ParallelLayout& p = c.p;
  const ModelSpec& m = c.m;
  const TrainingSpec& t = c.t;
  const FrameworkTraits& fw = c.fw;
  const double grad_bytes_per_param = bytes_per_element(gradient_precision(t, p));
  const double stage_layers = dd(m.num_hidden_layers) / p.pp;
  const double dense_layer_params = (params.dense_layer.attention_split + params.dense_layer.mlp_split) / p.tp + params.dense_layer.attention_replicated +
                                    params.dense_layer.norms + params.dense_layer.mlp_replicated;
  const double moe_layer_params = (params.moe_layer.attention_split + params.moe_layer.mlp_split) / p.tp + params.moe_layer.router +
                                  params.moe_layer.expert * (m.num_experts / p.ep) / p.etp;
  const bool by_layer = fw.param_gather_unit == GatherUnit::Layer;  // one call per layer
  const bool overlap = fw.overlap_param_gather;
  // A collective over `bytes` in buckets of `bucket` bytes: ceil(bytes / bucket) equal calls (bucket 0: one call).
  auto bucketed = [&](Pass pass, OverlapWindow w, Collective coll, double bytes, double bucket, double per) {
    if (bytes <= 0) return CommOp{};
    const double calls = bucket > 0 ? std::max(1.0, std::ceil(bytes / bucket)) : 1.0;
    return c.op(ParallelDim::Dp, coll, pass, w, bytes / calls, calls / per, g.dp);
  };
  // Kept gathered across a pipeline stage's micro-batches (pipeline_keeps_unsharded): one gather before the
  // first forward and one reduce-scatter after the last backward per step, i.e. 1/m of a call per micro-batch.
  const bool once_per_step = p.pp > 1 && fw.pipeline_keeps_unsharded;
  const double per_microbatch = once_per_step ? 1.0 / std::max(1, p.gradient_accumulation_steps) : 1.0;
  c.each_layer([&](LayerStream& layer, bool moe_layer) {
    const double layer_params = moe_layer ? moe_layer_params : dense_layer_params;
    const double param_bytes = layer_params * bytes_per_element(t.precision);
    const double gather_bucket = by_layer ? 0.0 : fw.param_gather_bucket(m.hidden_size) * bytes_per_element(t.precision);
    CommOp gather = bucketed(Pass::Forward, overlap ? OverlapWindow::LayerForward : OverlapWindow::None, Collective::AllGather, param_bytes, gather_bucket, 1.0);
    gather.calls *= per_microbatch;
    gather.call_s += gather.bytes * fetch_s_per_byte;
    for (int i = 0; i < (once_per_step ? 1 : c.n_passes); ++i) {
      gather.pass = c.passes[i];
      if (overlap && gather.pass == Pass::Backward) gather.window = OverlapWindow::LayerBackward;
      layer.comm.add(gather);
    }
    if (!t.trains_base_weights()) return;
    const OverlapWindow w = overlap ? OverlapWindow::LayerBackward : OverlapWindow::None;
    // Gradients kept unsharded until the last backward are reduced in fp32 (the accumulator's type).
    const double grad_bytes = layer_params * (once_per_step ? 4.0 : grad_bytes_per_param);
    CommOp reduce = by_layer ? bucketed(Pass::Backward, w, Collective::ReduceScatter, grad_bytes, 0.0, 1.0)
                             : bucketed(Pass::Backward, w, Collective::ReduceScatter, grad_bytes * stage_layers,
                                        fw.grad_bucket(m.hidden_size) * grad_bytes_per_param, stage_layers);
    reduce.calls *= per_microbatch;
    if (g.dp_ranks > 1) layer.comm.add(reduce);
    if (p.dp_replicate > 1) {
      // HSDP: the reduce-scattered shard, all-reduced across the replicas after each reduce-scatter (FSDP's
      // post-backward: reduce-scatter within the shard group, then all-reduce across replicate ranks).
      layer.comm.add(c.op(ParallelDim::Dp, Collective::AllReduce, Pass::Backward, w, reduce.bytes / g.dp_ranks, reduce.calls, g.replica));
    }
  });

  // The units outside the layers (FSDP's root module, DeepSpeed's embedding and head modules): gathered before the
  // stage's first layer, once more for their backward unless the root stays gathered (root_unit_stays_gathered), and
  // reduce-scattered after the stage's last backward, every micro-batch, with no layer's compute beside them.
  auto unit = [&](double unit_params) {
    Zero3Edge e;
    if (!(unit_params > 0)) return e;
    const double gather_bytes = unit_params * bytes_per_element(t.precision);
    const double gathers = (fw.root_unit_stays_gathered ? 1.0 : 2.0) * per_microbatch;
    e.forward_bytes = gathers * gather_bytes;
    e.forward_s = gathers * (collective_time(Collective::AllGather, gather_bytes, g.dp, c.comm).time_s + gather_bytes * fetch_s_per_byte);
    if (!t.trains_base_weights() || g.dp_ranks <= 1) return e;
    const double grad_bytes = unit_params * (once_per_step ? 4.0 : grad_bytes_per_param);
    e.backward_bytes = per_microbatch * grad_bytes;
    e.backward_s = per_microbatch * collective_time(Collective::ReduceScatter, grad_bytes, g.dp, c.comm).time_s;
    if (p.dp_replicate > 1)
      e.backward_s += per_microbatch * collective_time(Collective::AllReduce, grad_bytes / g.dp_ranks, g.replica, c.comm).time_s;
    return e;
  };
  // Megatron keeps a copy of a tied embedding on the last stage for the LM head when pp > 1 (stage_parameters).
  // Without a pipeline both ends are one unit, as FSDP's root module holds them.
  const double first = params.embedding / p.tp + params.position_embedding;
  const double last = params.final_norm + (params.lm_head > 0 ? params.lm_head / p.tp : p.pp > 1 ? params.embedding / p.tp : 0.0);
  c.s.zero3_first = unit(p.pp > 1 ? first : first + last);
  c.s.zero3_last = p.pp > 1 ? unit(last) : Zero3Edge{};
}

// Data-parallel gradient synchronisation after the last micro-batch (below ZeRO-3), in the framework's buckets
// (Megatron's grow with dp). Where the framework overlaps (Megatron --overlap-grad-reduce /
// --overlap-param-gather, DDP) the gradient reduction hides behind the last backward pass and the parameter
// all-gather behind the next forward pass, and what does not fit is exposed; elsewhere (DeepSpeed below ZeRO-3,
// its pipeline engine) both block.
//
// Buckets fill in the order gradients arrive, the reverse of the parameters' (Megatron param_and_grad_buffer.py
// _compute_default_per_buffer_param_layout walks params[::-1] and closes a bucket once it holds bucket_size
// elements; PyTorch DDP and DeepSpeed's reduce buckets follow the backward too), so the token embedding, the first
// parameter and the last gradient, closes the last bucket: at least `tail_params` elements (the embedding on this
// rank) reduce after the backward has ended, and gather first, before the next forward can start. The fold keeps
// that one call exposed (op_stream.cpp), so it is a call of its own here.
void add_gradient_sync(StreamContext& c, const DataParallelGroups& g, double trainable_dense, double trainable_expert, bool sharded,
                       double dense_tail_params) {
  const ParallelLayout& p = c.p;
  const FrameworkTraits& fw = c.fw;
  const double grad_bytes_per_param = bytes_per_element(gradient_precision(c.t, p));
  const OverlapWindow reduce_w = fw.overlap_grad_reduce ? OverlapWindow::LastBackward : OverlapWindow::None;
  const OverlapWindow gather_w = fw.overlap_grad_reduce && fw.overlap_param_gather ? OverlapWindow::FirstForward : OverlapWindow::None;
  // Reductions a step: one, or one per micro-batch where ZeRO-2 reduces as each backward goes (the gather stays once).
  const double reduces = c.t.zero_stage == 2 && fw.zero2_reduce_per_micro_batch ? std::max(1, p.gradient_accumulation_steps) : 1;
  auto sync = [&](double params, GroupPlacement group, GroupPlacement replicas, double tail_params) {
    const double bucket = std::max(fw.grad_bucket(c.m.hidden_size), fw.grad_bucket_elements_per_dp_rank * group.size);
    const double calls = bucket > 0 ? std::max(1.0, std::ceil(params / bucket)) : 1.0;
    // Equal buckets, or where the embedding is larger than one, a last bucket of its size and the rest in equal buckets.
    const double tail = tail_params > params / calls ? std::min(params, tail_params) : 0.0;
    const double rest = params - tail, rest_calls = rest > 0 ? (bucket > 0 ? std::max(1.0, std::ceil(rest / bucket)) : 1.0) : 0.0;
    for (const auto& [part, n] : {std::pair{tail, tail > 0 ? 1.0 : 0.0}, std::pair{rest, rest_calls}}) {
      if (!(n > 0)) continue;
      if (group.size > 1) {
        c.s.step_comm.add(c.op(ParallelDim::Dp, sharded ? Collective::ReduceScatter : Collective::AllReduce, Pass::Step, reduce_w,
                               part * grad_bytes_per_param / n, n * reduces, group));
        if (sharded)
          c.s.step_comm.add(c.op(ParallelDim::Dp, Collective::AllGather, Pass::Step, gather_w, part * bytes_per_element(c.t.precision) / n, n, group));
      }
    }
    // Distributed-optimizer instances (hybrid sharding): each reduce-scattered shard all-reduced across them.
    if (replicas.size > 1)
      c.s.step_comm.add(c.op(ParallelDim::Dp, Collective::AllReduce, Pass::Step, reduce_w, params * grad_bytes_per_param / group.size / calls, calls * reduces, replicas));
  };
  if (p.dp * p.cp > 1 && trainable_dense > 0) sync(trainable_dense, g.dp, g.replica, dense_tail_params);
  c.s.dense_step_comm = c.s.step_comm.size;
  if (trainable_expert > 0 && p.expert_dp() > 1) sync(trainable_expert, g.edp, g.expert_replica, 0.0);
}
}  // namespace

StepStream StepModel::stream(const ParallelLayout& p, const LayoutWork& work) const {
  const ModelSpec& m = model_;
  const TrainingSpec& t = training_;
  const GpuSpec& gpu = hardware_.gpu;
  StepStream s;
  s.dense.compute = work.dense;
  s.moe.compute = work.moe;
  s.edge = work.edge;
  s.first_layer_dense = m.num_dense_layers() > 0;
  s.micro_batches = p.gradient_accumulation_steps;
  s.sm_share = comm_sm_share(traits_);

  StreamContext c(m, t, p, comm_, framework_for(t, p), s, hardware_.gpus_per_node);
  add_tensor_parallel(c);
  add_context_parallel(c);
  add_expert_parallel(c);
  const DataParallelGroups groups(p, c.groups, hardware_.gpus_per_node);
  // Parameter offload: each gather first brings this GPU's shard of it over PCIe (from NVMe through host memory),
  // seconds per byte of the gathered buffer; it hides where the gather does (prefetched behind the previous layer).
  const OffloadDevice params_at = t.params_offloaded();
  const double fetch_s_per_byte =
      params_at == OffloadDevice::None ? 0.0
                                       : (1 / host_link_bandwidth(gpu) + (params_at == OffloadDevice::Nvme ? 1 / nvme_bandwidth_per_gpu(hardware_) : 0.0)) / groups.dp_ranks;
  if (t.zero_stage >= 3 && (p.dp * p.cp > 1 || params_at != OffloadDevice::None)) add_zero3(c, groups, params_, fetch_s_per_byte);

  // Pipeline point-to-point: each stage boundary passes activations forward and their gradients back, once
  // per model chunk (vpp) per micro-batch; with sequence parallelism each TP rank sends its 1/tp. A stage pairs its
  // send with its receive in one batched call (two transfers a micro-batch on its path), or, in DeepSpeed's engine,
  // waits on each of the four alone (FrameworkTraits::pipeline_p2p_blocking). Scattered without SP
  // (pipeline_p2p_scatter_gather), each TP rank sends its 1/tp too and the receiver all-gathers each tensor it
  // receives (an activation and a gradient a micro-batch and chunk) over its TP group.
  if (p.pp > 1) {
    const OverlapWindow w = c.paired_chunks ? OverlapWindow::PairedChunk : OverlapWindow::None;
    const bool scattered = !c.sp && p.tp > 1 && c.fw.pipeline_p2p_scatter_gather;
    s.stage_comm.add(c.op(ParallelDim::Pp, Collective::SendRecv, Pass::Forward, w, c.act_bytes / (c.sp || scattered ? p.tp : 1),
                          (c.fw.pipeline_p2p_blocking ? 4.0 : 2.0) * p.vpp, c.groups.pp));
    if (scattered) s.stage_comm.add(c.op(ParallelDim::Pp, Collective::AllGather, Pass::Forward, w, c.act_bytes, 2.0 * p.vpp, c.groups.tp));
  }

  // The first rank's parameters: stage 0's, and under a bidirectional schedule the last stage's too (its second
  // copy of the model: the two copies' gradients join the data-parallel reduction).
  StageParams sp0 = stage_parameters(m, params_, p, 0);
  if (c.paired_chunks) {
    const StageParams last = stage_parameters(m, params_, p, p.pp - 1);
    sp0.dense += last.dense, sp0.expert += last.expert, sp0.layers += last.layers;
  }
  const double adapters = merges_expert_adapters(c.fw, t) ? merged_adapter_params_ : adapter_params_;
  const double trainable_dense = t.trains_base_weights() ? sp0.dense : adapters * sp0.layers / m.num_hidden_layers / p.tp;
  const double trainable_expert = t.trains_base_weights() ? sp0.expert : 0.0;
  const bool sharded = t.zero_stage >= 1 || t.distributed_optimizer;
  // The token embedding on this rank (stage 0's, split over tp), when it trains.
  const double embedding_params = t.trains_base_weights() ? params_.embedding / p.tp + params_.position_embedding : 0.0;
  if (t.zero_stage < 3) add_gradient_sync(c, groups, trainable_dense, trainable_expert, sharded, embedding_params);

  // Optimizer step over the parameters this GPU updates.
  const double grad_bytes_per_param = bytes_per_element(gradient_precision(t, p));
  const double local_params =
      (trainable_dense / (sharded ? groups.dp_ranks : 1.0)) + (trainable_expert / (sharded ? dd(p.expert_zero_shard_ranks()) : 1.0));
  // Offloaded, the host's share of the parameters crosses PCIe (gradients down, weights up) and steps at the host's
  // memory bandwidth; the rest steps on the GPU. The two parts are counted one after the other.
  const double host_share = t.offload_optimizer ? t.offload_fraction : 0.0;
  s.optimizer_s = multi_tensor_time(gpu, traits_, (1 - host_share) * local_params * optimizer_pass_bytes(t, p, !c.fw.optimizer_foreach));
  if (host_share > 0) {
    const OffloadAssumptions host;
    // What comes back up: the 16-bit weights, or the fp32 master the GPU keeps (offload_master_on_device), which
    // the GPU then copies into its 16-bit weights (read 4, write 2 bytes a parameter).
    const double master = offload_master_on_device(t, p) ? optimizer_state_bytes(t).master : 0.0;
    const double uploaded = master > 0 ? master : bytes_per_element(t.precision);
    if (master > 0) s.optimizer_s += multi_tensor_time(gpu, traits_, host_share * local_params * (master + bytes_per_element(t.precision)));
    s.optimizer_s += host_share * local_params * (grad_bytes_per_param + uploaded) / host_link_bandwidth(gpu) +
                     host_share * local_params * optimizer_pass_bytes(t, p, c.fw.host_optimizer_fused) / host.host_memory_bandwidth_per_gpu;
    // On NVMe (ZeRO-Infinity), the states are read into host memory and written back around the CPU step, not
    // overlapped (DeepSpeed's offload_optimizer pipeline_read / pipeline_write default to false).
    if (t.optimizer_offload_device == OffloadDevice::Nvme)
      s.optimizer_s += host_share * local_params * 2 * optimizer_state_bytes(t).total() / nvme_bandwidth_per_gpu(hardware_);
  }
  // Paged out (a paged optimizer on a full GPU), the states page in for the step and back out, over PCIe.
  if (paging_) s.optimizer_s += 2 * paging_->worst_stage(p).paged / host_link_bandwidth(gpu);
  // Once per step beside the optimizer, memory-bound passes over gradients (framework traits): fp16's loss scaling
  // checks them for inf/nan and unscales them, the norm reads the gradients the optimizer updates (the shard under
  // ZeRO, all-reduced as a scalar), clipping that scales on every step reads and writes them again, and zeroing a
  // contiguous buffer writes every local gradient (Megatron's buffer holds the stage's whole gradients, sharded
  // optimizer or not).
  const FrameworkTraits& fw = c.fw;
  const double gradient_passes = (t.precision == Precision::Fp16 ? fw.loss_scale_grad_passes : 0.0) +
                                 (fw.clip_grad_norm ? (fw.clip_scales_always ? 3.0 : 1.0) : 0.0);
  const double memset_bytes = fw.zero_grad_memset ? (trainable_dense + trainable_expert) * grad_bytes_per_param : 0.0;
  s.overhead_s = multi_tensor_time(gpu, traits_, gradient_passes * local_params * grad_bytes_per_param + memset_bytes);
  return s;
}

}  // namespace trainsim
