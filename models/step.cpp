#include "step.hpp"

#include <algorithm>
#include <cmath>

#include "accuracy_bands.hpp"
#include "calibration.hpp"
#include "compute.hpp"
#include "flops.hpp"
#include "memory.hpp"

namespace trainsim {

namespace {
double dd(int v) { return static_cast<double>(v); }

// Bytes the optimizer step moves through memory per local parameter: read and write the fp32 master
// copy and the states, read the gradient, write the 16-bit weights (Adam: 4+4 + 2·(4+4) + 4 + 2 = 30).
double optimizer_step_bytes(const TrainingSpec& t) {
  const double master = t.precision == Precision::Fp32 ? 0 : 8;
  const double grad = t.precision == Precision::Fp32 ? 4 : bytes_per_element(t.grad_precision);
  const double weights = bytes_per_element(t.precision);
  switch (t.optimizer) {
    case OptimizerKind::Adam: return master + 16 + grad + weights;
    case OptimizerKind::Adam8bit: return master + 4 + grad + weights;
    case OptimizerKind::Sgd: return master + 8 + grad + weights;
  }
  return master + 16 + grad + weights;
}

// A collective over `bytes` issued in buckets of `bucket_bytes`: ceil(bytes / bucket) calls of equal size
// (the framework fills buckets in order; equal calls keep the total bytes), each paying the collective's
// latency, which grows with the group (collectives.hpp). bucket_bytes <= 0: one call. `one` is a single
// call: the part no overlap can hide (the last gradient bucket is ready only when the backward ends, the
// first parameter bucket is needed before the forward starts).
struct BucketedTime {
  double total = 0, one = 0;
};
BucketedTime bucketed_time(Collective op, double bytes, double bucket_bytes, GroupPlacement group, const CommModel& comm) {
  if (bytes <= 0) return {};
  const double calls = bucket_bytes > 0 ? std::max(1.0, std::ceil(bytes / bucket_bytes)) : 1.0;
  const double one = collective_time(op, bytes / calls, group, comm).time_s;
  return {calls * one, one};
}

// Overlap is not free: a running NCCL collective holds one thread block per channel on an SM of its own, and
// the GEMMs it hides behind run on the rest. NVIDIA/nccl #892 (an 8-GPU NVSwitch Hopper node, NCCL 2.18)
// logs "16 coll channels": 16 of an H100's 132 SMs (12%), of an A100's 108 (15%). With a share f of the SMs
// taken, compute w and a collective c that run together take max(c, w + f·c): the exposed part is
// max(c - w, f·c), never zero. (Fitting the channel count to the reference runs, as a fitted parameter, made
// the leave-one-source-out error worse: 7.1% against 5.9% median; NCCL's own figure stays.)
constexpr double kNcclChannels = 16;
double comm_sm_share(const GpuComputeTraits& tr) { return tr.sms > 0 ? std::min(0.5, kNcclChannels / tr.sms) : 0.0; }
double overlapped(double comm, double compute, double sm_share) {
  if (comm <= 0) return 0;
  return std::max(comm - compute, sm_share * comm);
}

// PCIe link between a GPU and its host, one direction, as NCCL-style achievable bandwidth: Hopper and
// later parts sit on PCIe Gen5 x16, earlier ones on Gen4 x16 (NVIDIA datasheets).
double host_link_bandwidth(const GpuSpec& g) { return g.flops_fp8 > 0 && g.memory_bandwidth > 3e12 ? 53e9 : 26e9; }
}  // namespace

StepModel::StepModel(const ModelSpec& m, const TrainingSpec& t, const HardwareSpec& h, const CalibrationProfile* calibration,
                     const FittedParameters* fitted)
    : model_(m), training_(t), hardware_(h),
      calibration_(calibration ? std::make_shared<const CalibrationFit>(*calibration, h) : nullptr),
      comm_(make_comm_model(h, calibration_.get())), traits_(gpu_compute_traits(h.gpu, calibration_.get())),
      params_(count_parameters(m)) {
  // gpu_compute_traits applied the shipped fitted parameters; an explicit set replaces them.
  if (fitted) apply_fitted_parameters(traits_, h.gpu, *fitted);
  iteration_overhead_s_ = (fitted ? *fitted : shipped_fitted_parameters().values).iteration_overhead_ms * 1e-3;
  if (t.uses_adapters()) adapter_params_ = lora_parameters(m, t.lora);
  band_megatron_ = &accuracy_band("megatron", band_gpu_class(h.gpu));
  band_pytorch_ = &accuracy_band("pytorch", band_gpu_class(h.gpu));
}

StepModel::LayoutWork StepModel::work(const ParallelLayout& p) const {
  LayoutWork w;
  w.dense = layer_compute(model_, training_, p, hardware_.gpu, traits_, false);
  w.moe = model_.is_moe() ? layer_compute(model_, training_, p, hardware_.gpu, traits_, true) : w.dense;
  w.edge = edge_compute(model_, training_, p, hardware_.gpu, traits_);
  return w;
}

StepEstimate StepModel::estimate(const ParallelLayout& p) const { return estimate(p, work(p)); }

StepEstimate StepModel::estimate(const ParallelLayout& p, const LayoutWork& work) const {
  const ModelSpec& m = model_;
  const TrainingSpec& t = training_;
  const GpuSpec& gpu = hardware_.gpu;
  const FrameworkTraits& fw = framework_for(t, p);
  const LayoutGroups groups = group_placements(p, hardware_.gpus_per_node);
  const int micro_batches = p.gradient_accumulation_steps;
  const bool sp = p.sequence_parallel && p.tp > 1;
  const bool dpo = t.mode == TrainingMode::Dpo;
  const double sm_share = comm_sm_share(traits_);

  const LayerCompute& dense = work.dense;
  const LayerCompute& moe = work.moe;
  const EdgeCompute& edge = work.edge;

  // Activations crossing TP / PP boundaries: s/cp tokens of b sequences, 16-bit.
  const double tokens = dd(t.seq_len) / p.cp * p.micro_batch_size * t.sequences_per_sample();
  const double act_bytes = tokens * m.hidden_size * 2;
  // Forward passes that communicate: the forward, its recomputation under full recompute, and the DPO
  // reference model's forward; backward communicates once.
  const double fwd_passes = 1.0 + (t.recompute == Recompute::Full ? 1.0 : 0.0) + (dpo ? 1.0 : 0.0);

  // Tensor parallel (Shoeybi et al. 2019; Korthikanti et al. 2022 §4.2.2): per layer two all-reduces in
  // forward and two in backward; with sequence parallelism each becomes an all-gather + reduce-scatter of
  // the same volume. Not overlapped with compute (Megatron's default without --tp-comm-overlap).
  double tp_layer = 0;
  if (p.tp > 1) {
    const double one = sp ? collective_time(Collective::AllGather, act_bytes, groups.tp, comm_).time_s +
                                collective_time(Collective::ReduceScatter, act_bytes, groups.tp, comm_).time_s
                          : collective_time(Collective::AllReduce, act_bytes, groups.tp, comm_).time_s;
    tp_layer = 2 * one * (fwd_passes + 1);
  }
  // Context parallel (ring attention): each rank passes its K and V chunk around the ring, cp-1 steps in
  // forward and twice that in backward (K/V and their gradients); overlapped with the attention of the
  // chunk in hand, so only what exceeds the attention time is exposed.
  auto cp_exposed = [&](const LayerCompute& lc) {
    if (p.cp == 1) return 0.0;
    const double kv_bytes = dd(t.seq_len) / p.cp * p.micro_batch_size * t.sequences_per_sample() * m.num_key_value_heads *
                            (m.qk_head_dim() + m.value_head_dim()) * 2 / p.tp;  // K and V, 16-bit
    const double step = collective_time(Collective::SendRecv, kv_bytes, groups.cp, comm_).time_s;
    return overlapped((p.cp - 1) * step * (fwd_passes + 2), lc.attention_s, sm_share);
  };
  // Expert parallel: dispatch and combine all-to-all per MoE layer, forward and backward.
  double ep_layer = 0;
  if (m.is_moe() && p.ep > 1) {
    const double routed_bytes = tokens / (sp ? p.tp : 1) * m.num_experts_per_tok * m.hidden_size * 2;
    ep_layer = 2 * collective_time(Collective::AllToAll, routed_bytes, groups.ep, comm_).time_s * (fwd_passes + 1);
  }
  // ZeRO-3 / FSDP: every micro-batch gathers each layer's weights in forward and backward and
  // reduce-scatters its gradients. Gathers go one layer per call (FSDP units) or in the framework's prefetch
  // buckets; reduce-scatters one layer per call, or in gradient buckets filled across the stage's layers
  // (DeepSpeed: a layer's share of the stage's bucketed reduce). Where the framework prefetches and reduces on
  // side streams they hide behind the layer's own compute; otherwise they all add.
  const double dp_ranks = dd(p.dp) * p.cp;
  const GroupPlacement dp_group = strided_group_placement(p.dp * p.cp, p.tp, static_cast<int>(p.world()), hardware_.gpus_per_node);
  const double grad_bytes_per_param = t.precision == Precision::Fp32 ? 4.0 : bytes_per_element(t.grad_precision);
  const double stage_layers = dd(m.num_hidden_layers) / p.pp;
  // One layer's (or one prefetch bucket's) gather and reduce: with overlap, the first gather of a micro-batch's
  // forward has no earlier layer to hide behind and the last reduce-scatter comes after the last backward,
  // so each micro-batch exposes one of each (zero3_edge below).
  struct Zero3Layer {
    double exposed = 0, first_gather = 0, last_reduce = 0;
  };
  auto zero3_layer = [&](const LayerCompute& lc, double layer_params) {
    Zero3Layer z;
    if (t.zero_stage < 3 || dp_ranks == 1) return z;
    const bool by_layer = fw.param_gather_unit == GatherUnit::Layer;  // one call per layer: bucket 0
    const double param_bytes = layer_params * bytes_per_element(t.precision);
    const BucketedTime gather = bucketed_time(Collective::AllGather, param_bytes,
                                              by_layer ? 0.0 : fw.param_gather_bucket(m.hidden_size) * bytes_per_element(t.precision), dp_group, comm_);
    BucketedTime reduce;
    if (t.trains_base_weights()) {
      const double grad_bytes = layer_params * grad_bytes_per_param;
      if (by_layer) {
        reduce = bucketed_time(Collective::ReduceScatter, grad_bytes, 0.0, dp_group, comm_);
      } else {
        reduce = bucketed_time(Collective::ReduceScatter, grad_bytes * stage_layers, fw.grad_bucket(m.hidden_size) * grad_bytes_per_param, dp_group, comm_);
        reduce.total /= stage_layers;
      }
    }
    if (!fw.overlap_param_gather) {
      z.exposed = gather.total * fwd_passes + gather.total + reduce.total;
      return z;
    }
    z.exposed = overlapped(gather.total * fwd_passes, lc.forward_s + lc.recompute_s, sm_share) +
                overlapped(gather.total + reduce.total, lc.backward_s, sm_share);
    z.first_gather = gather.one;
    z.last_reduce = reduce.one;
    return z;
  };
  const double dense_layer_params = (params_.dense_layer.attention_split + params_.dense_layer.mlp_split) / p.tp +
                                    params_.dense_layer.attention_replicated + params_.dense_layer.norms + params_.dense_layer.mlp_replicated;
  const double moe_layer_params = (params_.moe_layer.attention_split + params_.moe_layer.mlp_split) / p.tp + params_.moe_layer.router +
                                  params_.moe_layer.expert * (m.num_experts / p.ep) / p.etp;

  struct LayerTime {
    double compute, host, recompute, tp, cp, ep, dp;
    double total() const { return compute + host + recompute + tp + cp + ep + dp; }
  };
  // With tp_comm_overlap (Megatron --tp-comm-overlap, Transformer Engine userbuffers) the all-gather and
  // reduce-scatter are split into chunks pipelined with the GEMMs they feed: only what exceeds the
  // layer's GEMM time stays exposed. Only frameworks that have it overlap.
  const bool tp_overlap = p.tp_comm_overlap && fw.tp_comm_overlap_available;
  auto tp_exposed = [&](const LayerCompute& lc) { return tp_overlap ? overlapped(tp_layer, lc.gemm_s, sm_share) : tp_layer; };
  const Zero3Layer dense_z3 = zero3_layer(dense, dense_layer_params), moe_z3 = zero3_layer(moe, moe_layer_params);
  const LayerTime dense_t{dense.forward_s + dense.backward_s, dense.host_s, dense.recompute_s, tp_exposed(dense), cp_exposed(dense), 0.0,
                          dense_z3.exposed};
  const LayerTime moe_t{moe.forward_s + moe.backward_s, moe.host_s, moe.recompute_s, tp_exposed(moe), cp_exposed(moe), ep_layer,
                        moe_z3.exposed};
  // Per micro-batch and stage: the first layer's gather (a dense layer where the model starts with one) and
  // the last layer's reduce-scatter, which nothing overlaps.
  const Zero3Layer& first_z3 = m.num_dense_layers() > 0 ? dense_z3 : moe_z3;
  const double zero3_edge = first_z3.first_gather * fwd_passes + first_z3.last_reduce;

  // Pipeline point-to-point: each stage boundary passes activations forward and their gradients back,
  // once per model chunk (vpp) per micro-batch; with sequence parallelism each TP rank sends its 1/tp.
  double p2p = 0;
  if (p.pp > 1) p2p = 2.0 * p.vpp * collective_time(Collective::SendRecv, act_bytes / (sp ? p.tp : 1), groups.pp, comm_).time_s;

  // Per micro-batch time of every stage; the slowest sets the pace (Narayanan et al. SC'21, §2.2):
  // iteration = m·t_max + (Σ t_s − t_max)/v, i.e. (m + (p−1)/v)·t for equal stages.
  double sum = 0, worst = -1;
  LayerTime worst_parts{};
  double worst_edges = 0, worst_p2p = 0;
  for (int s = 0; s < p.pp; ++s) {
    const int layers = layers_in_stage(m.num_hidden_layers, p, s);
    const int dense_layers = dense_layers_in_stage(m.num_hidden_layers, m.num_dense_layers(), p, s);
    const int moe_layers = layers - dense_layers;
    const double edges = (s == 0 ? edge.embedding_s : 0.0) + (s == p.pp - 1 ? edge.head_s : 0.0);
    const double ts = dense_layers * dense_t.total() + moe_layers * moe_t.total() + zero3_edge + edges + p2p;
    sum += ts;
    if (ts > worst) {
      worst = ts;
      worst_edges = edges;
      worst_p2p = p2p;
      worst_parts = {dense_layers * dense_t.compute + moe_layers * moe_t.compute, dense_layers * dense_t.host + moe_layers * moe_t.host,
                     dense_layers * dense_t.recompute + moe_layers * moe_t.recompute,
                     dense_layers * dense_t.tp + moe_layers * moe_t.tp, dense_layers * dense_t.cp + moe_layers * moe_t.cp,
                     moe_layers * moe_t.ep, dense_layers * dense_t.dp + moe_layers * moe_t.dp + zero3_edge};
    }
  }
  const double pipeline = p.pp == 1 ? micro_batches * worst : micro_batches * worst + (sum - worst) / p.vpp;

  StepBreakdown b;
  b.compute_s = micro_batches * (worst_parts.compute + worst_edges);
  b.host_s = micro_batches * worst_parts.host;
  b.recompute_s = micro_batches * worst_parts.recompute;
  b.tp_comm_s = micro_batches * worst_parts.tp;
  b.cp_comm_s = micro_batches * worst_parts.cp;
  b.ep_comm_s = micro_batches * worst_parts.ep;
  b.pp_comm_s = micro_batches * worst_p2p;
  b.dp_comm_s = micro_batches * worst_parts.dp;
  b.bubble_s = pipeline - micro_batches * worst;

  // Data-parallel gradient synchronisation after the last micro-batch (ZeRO-3 did it per layer above), in
  // the framework's buckets (Megatron's grow with dp). Where the framework overlaps (Megatron
  // --overlap-grad-reduce / --overlap-param-gather, DDP) the gradient reduction hides behind the last
  // backward pass and the parameter all-gather behind the next forward pass, and what does not fit is
  // exposed; elsewhere (DeepSpeed below ZeRO-3, its pipeline engine) both add in full.
  const StageParams sp0 = stage_parameters(m, params_, p, 0);
  const double trainable_dense = t.trains_base_weights() ? sp0.dense : adapter_params_ * sp0.layers / m.num_hidden_layers / p.tp;
  const double trainable_expert = t.trains_base_weights() ? sp0.expert : 0.0;
  const double last_backward = worst_parts.compute * 2.0 / 3.0;  // backward is ~2/3 of forward+backward
  const double first_forward = worst_parts.compute / 3.0;
  if (t.zero_stage < 3) {
    const bool sharded = t.zero_stage >= 1 || t.distributed_optimizer;
    // With overlap, the last gradient bucket (filled by the first layers, last in backward) and the first
    // parameter bucket (needed by the first forward) stay exposed: one call each at least.
    BucketedTime reduce, gather;
    auto sync = [&](double params, GroupPlacement group, double ranks) {
      const double bucket = std::max(fw.grad_bucket(m.hidden_size), fw.grad_bucket_elements_per_dp_rank * ranks);
      const BucketedTime r = bucketed_time(sharded ? Collective::ReduceScatter : Collective::AllReduce, params * grad_bytes_per_param,
                                           bucket * grad_bytes_per_param, group, comm_);
      reduce.total += r.total;
      reduce.one = std::max(reduce.one, r.one);
      if (sharded) {
        const BucketedTime g = bucketed_time(Collective::AllGather, params * bytes_per_element(t.precision), bucket * bytes_per_element(t.precision), group, comm_);
        gather.total += g.total;
        gather.one = std::max(gather.one, g.one);
      }
    };
    if (dp_ranks > 1) sync(trainable_dense, dp_group, dp_ranks);
    if (trainable_expert > 0 && p.expert_dp() > 1) sync(trainable_expert, groups.edp, p.expert_dp());
    // The other buckets overlap the pass and delay the exposed one if they outlast it.
    b.dp_comm_s += (fw.overlap_grad_reduce ? reduce.one + overlapped(reduce.total - reduce.one, last_backward, sm_share) : reduce.total) +
                   (fw.overlap_grad_reduce && fw.overlap_param_gather ? gather.one + overlapped(gather.total - gather.one, first_forward, sm_share)
                                                                      : gather.total);
  }

  // Optimizer step over the parameters this GPU updates.
  const bool sharded_states = t.zero_stage >= 1 || t.distributed_optimizer;
  const double local_params = (trainable_dense / (sharded_states ? dp_ranks : 1.0)) +
                              (trainable_expert / (sharded_states ? dd(p.expert_dp()) : 1.0));
  if (t.offload_optimizer) {
    const OffloadAssumptions host;
    b.optimizer_s = local_params * (grad_bytes_per_param + bytes_per_element(t.precision)) / host_link_bandwidth(gpu) +
                    local_params * optimizer_step_bytes(t) / host.host_memory_bandwidth_per_gpu;
  } else {
    b.optimizer_s = memory_bound_time(gpu, traits_, local_params * optimizer_step_bytes(t));
  }

  b.overhead_s = iteration_overhead_s_;
  b.total_s = pipeline + (b.dp_comm_s - micro_batches * worst_parts.dp) + b.optimizer_s + b.overhead_s;

  StepEstimate e;
  e.breakdown = b;
  e.time_s = b.total_s;
  e.band = megatron_family(fw) ? band_megatron_ : band_pytorch_;
  e.time_s_low = e.time_s * e.band->low;
  e.time_s_high = e.time_s * e.band->high;
  const double sequences = t.global_batch_size;
  e.tokens_per_s = t.tokens_per_step() / e.time_s;
  e.model_flops = model_flops_per_iteration(m, t, sequences);
  e.hardware_flops = hardware_flops_per_iteration(m, t, sequences, fw.selective_recompute);
  const double peak = gpu.peak_flops(t.precision) * hardware_.num_gpus;
  e.mfu = e.model_flops / (e.time_s * peak);
  e.hfu = e.hardware_flops / (e.time_s * peak);
  return e;
}

TrainingCost StepModel::training_cost(const StepEstimate& step, const ParallelLayout&) const {
  TrainingCost c;
  const double tokens_per_iteration = training_.tokens_per_step();
  if (training_.train_tokens <= 0 || tokens_per_iteration <= 0) return c;
  c.iterations = std::ceil(training_.train_tokens / tokens_per_iteration);
  c.time_to_train_s = c.iterations * step.time_s;
  c.gpu_hours = c.time_to_train_s * hardware_.num_gpus / 3600.0;
  c.priced = hardware_.has_price();
  c.cost = c.priced ? c.gpu_hours * hardware_.price_per_gpu_hour : 0;
  c.energy_known = hardware_.gpu.tdp_watts > 0;
  c.energy_kwh = hardware_.gpu.tdp_watts * c.gpu_hours / 1000.0;
  return c;
}

}  // namespace trainsim
