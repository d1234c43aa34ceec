#include "models/memory/memory.hpp"

#include <algorithm>
#include <initializer_list>

#include "models/compute/expert_load.hpp"
#include "models/compute/linear_attention.hpp"
#include "models/compute/lora_targets.hpp"
#include "models/compute/recompute_policy.hpp"
#include "models/scenario/framework.hpp"
#include "models/step/pipeline_schedule.hpp"

namespace trainsim {

namespace {
double dd(int v) { return static_cast<double>(v); }

// Bytes per parameter of the weights used in compute. fp8 (Transformer Engine) keeps bf16 weights and
// an fp8 cast of them for the GEMMs.
double weight_bytes(Precision p) { return p == Precision::Fp8 ? 3.0 : bytes_per_element(p); }

}  // namespace

ModelStates full_model_states(double dense_params, double expert_params, double dense_group, double expert_group,
                              const TrainingSpec& t, Precision grad_precision) {
  const double gb = bytes_per_element(grad_precision);
  const bool shard_opt = t.zero_stage >= 1 || t.distributed_optimizer;
  auto sharded = [&](double bytes_per_param, bool shard) {
    return shard ? dense_params * bytes_per_param / dense_group + expert_params * bytes_per_param / expert_group
                 : (dense_params + expert_params) * bytes_per_param;
  };
  return {sharded(weight_bytes(t.precision), t.zero_stage >= 3), sharded(gb, t.zero_stage >= 2),
          sharded(optimizer_state_bytes(t).total(), shard_opt)};
}

namespace {
// LM head parameters on this rank (the last stage's; tied or not, its gradient is produced first in backward).
double head_params(const ModelSpec& m, const ParallelLayout& p, int stage) {
  return stage == p.pp - 1 ? dd(m.vocab_size) * m.hidden_size / p.tp : 0.0;
}
}  // namespace

LayerActivations layer_activations(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p, bool moe_layer) {
  // Korthikanti et al. 2022, §4.1: per layer 34·s·b·h + 5·a·s²·b bytes with 16-bit activations, of which
  // 10·s·b·h sit outside the tensor-parallel region (norm inputs, QKV and fc1 inputs, dropout masks)
  // and 24·s·b·h + 5·a·s²·b inside it. Generalised here to GQA, any FFN size, gated MLPs, MoE routing,
  // dropout on/off and FlashAttention; it reduces to the paper's terms for GPT.
  const double s = dd(t.seq_len) / p.cp;                         // context parallel splits the sequence
  const double b = dd(p.micro_batch_size) * t.sequences_per_sample();
  const double h = dd(m.hidden_size), a = dd(m.num_attention_heads);
  const double q = a * m.head_dim, kv = dd(m.num_key_value_heads) * m.head_dim;
  const double sb = s * b, tp = dd(p.tp);
  const bool sp = p.sequence_parallel && p.tp > 1;
  const double hidden_mask = m.hidden_dropout > 0 ? 1.0 : 0.0;   // 1-byte dropout masks
  // Bytes per stored element: activations in the training dtype (fp32 training keeps 4-byte activations),
  // and the inputs saved for the weight-gradient GEMMs, which fp8 training keeps in fp8 (Transformer Engine's
  // Linear caches its fp8-quantized input for backward). 16-bit training: 2 and 2, the paper's terms.
  const double e = activation_bytes(t.precision), g = saved_gemm_input_bytes(t.precision);
  const double gated = m.mlp == MlpKind::Gated ? 2 : 1;          // activation-function inputs (gate and up)
  const FrameworkTraits& fw = framework_for(t, p);
  // Eager modeling code saves more than fused kernels: an eager RMSNorm keeps its input cast to fp32 for the
  // backward of pow and mul (4 bytes where a fused norm keeps the 16-bit input) and the normalized input cast back
  // for the weight's product (a tensor beside the norm's output), and an eager gated activation keeps the
  // activation's output for the product's backward (transformers LlamaRMSNorm / LlamaMLP, torch's composite rms_norm).
  //
  // A frozen base (LoRA, QLoRA) keeps less: autograd saves a tensor only for a gradient some input needs (PyTorch's
  // generated functions guard each save with should_compute_output, tools/autograd/gen_variable_type.py guard_for;
  // Transformer Engine's Linear keeps its input only when its weight requires grad). A frozen linear keeps nothing
  // of its input, an adapter on it keeps that input, and a frozen eager norm's weight product keeps nothing of the
  // normalized input. Under autocast over fp32 adapters (autocast_casts_weights, the layer walk's casts too) peft casts
  // each adapter's input to the adapters' dtype (LoraLayer._cast_input_dtype) and autocast casts it back for the GEMM,
  // which keeps that copy: one per adapter (three of the QKV input) where 16-bit adapters share the one tensor.
  const bool frozen = t.uses_adapters();
  const bool adapter_copies = frozen && autocast_casts_weights(fw, t);
  const LoraTargets lora_on = lora_targets(t);
  auto linear_inputs = [&](std::initializer_list<bool> adapted) {  // bytes per element of one input the group keeps
    if (!frozen) return g;
    const double n = dd(static_cast<int>(std::count(adapted.begin(), adapted.end(), true)));
    return n == 0 ? 0.0 : adapter_copies ? n * e : g;
  };
  const double qkv_in = linear_inputs({lora_on.q, lora_on.k, lora_on.v});
  const double fc1_in = m.mlp == MlpKind::Gated ? linear_inputs({lora_on.gate, lora_on.up}) : linear_inputs({lora_on.up});
  const double fc2_in = linear_inputs({lora_on.down});
  // The attention output stays (FlashAttention's backward reads it; counted for the unfused path alike); an adapter that
  // casts it keeps a copy beside it.
  const double out_in = g + (adapter_copies && lora_on.o ? e : 0.0);
  const bool eager_rms = !fw.fused_norm && m.norm == NormKind::RmsNorm;
  const double norm_in = eager_rms ? std::max(4.0, e) + (frozen ? 0.0 : e) : e;
  const double act_out = !fw.fused_activation && m.mlp == MlpKind::Gated ? e : 0.0;

  double outside = sb * h * (norm_in + qkv_in + norm_in) + hidden_mask * sb * h;   // LN1 input, QKV input, LN2 input; attention-out mask
  double inside = e * sb * q + 2 * e * sb * kv + out_in * sb * q;  // Q, K, V (attention inputs), out-projection input
  double replicated = 0;                                          // whole on every TP rank (MLA's down-projections)
  // What each of Megatron's recompute modules drops, per rank (summed below, dropped under selective recompute):
  // the norms' outputs (QKV input, MLP or router input), a dense MLP's inside, an MoE block's routing and expert
  // activations (its input kept), the experts' activation outputs, the shared experts' inside, MLA's Q, K, V.
  double norm_outputs = qkv_in * sb * h, mlp_inner = 0, moe_inner = 0, moe_act = 0, shared_inner = 0, mla_up = 0;
  if (m.is_mla()) {
    // Q and K of n·(nope + rope), V and the out-projection input of n·v; the latents on every rank: q_down output
    // (q norm input) and q norm output (q_up input), kv_down output (kv norm input, rotary key) and kv norm output.
    const double n = a, ql = m.q_lora_rank, kvl = m.kv_lora_rank;
    inside = 2 * e * sb * n * m.qk_head_dim() + e * sb * n * m.v_head_dim + g * sb * n * m.v_head_dim;
    mla_up = (2 * e * sb * n * m.qk_head_dim() + e * sb * n * m.v_head_dim) / tp;
    replicated = sb * ((e + g) * ql + e * (kvl + m.qk_rope_head_dim) + g * kvl);
  }
  double core = 0;                                                // attention scores, recomputed by `selective`
  if (t.flash_attention) {
    core = 4 * sb * a;                                            // log-sum-exp in fp32 (Dao et al. 2022)
  } else {
    core = e * a * s * sb;                                        // softmax output
    if (m.attention_dropout > 0) core += (1 + e) * a * s * sb;    // dropout mask (1 B) + dropout output
  }
  if (m.attention_output_gate) inside += 2 * e * sb * q;          // the gate's input and the output it multiplies
  // Hybrid models, per layer on average: Gated DeltaNet layers keep, for its share of the layers, the conv's input
  // and output (q, k, v), z, the gates' inputs (16-bit) and values (fp32), the delta rule's output and out_proj's
  // input; no attention scores (the chunk states are recomputed in backward, flash-linear-attention).
  if (const double linear = m.linear_attention_share(); linear > 0) {
    const GatedDeltaNetDims gd = gated_delta_net_dims(m);
    const double linear_inside = e * sb * (2 * gd.conv_dim + 2 * gd.value_dim + 2 * gd.value_heads) + 8 * sb * gd.value_heads + g * sb * gd.value_dim;
    inside = (1 - linear) * inside + linear * linear_inside;
    core *= 1 - linear;
  }
  if (!moe_layer) {
    outside += fc1_in * sb * h + hidden_mask * sb * h;            // fc1 input, MLP-out mask
    inside += (gated * e + act_out + fc2_in) * sb * m.intermediate_size;  // act input(s) (and output), fc2 input
    norm_outputs += fc1_in * sb * h;
    mlp_inner = (gated * e + act_out + fc2_in) * sb * m.intermediate_size / tp;
  } else {
    const double tokens = sb / (sp ? tp : 1);                     // tokens this rank routes
    const double routed = tokens * m.num_experts_per_tok;         // expert inputs it routes
    // Expert tensor parallelism all-gathers the routed tokens of the etp group after the all-to-all (Megatron's
    // MoEAlltoAllTokenDispatcher, gather_from_sequence_parallel_region over the expert-TP group): each rank's
    // experts keep etp times the rows, each etp-th of the inner size wide; the busiest rank its load's multiple of
    // them (expert_load.hpp).
    const double expert_rows = routed * p.etp * busiest_expert_rank_load(m, t, p);
    // Router input (the router GEMM stays in 16/32 bits), fp32 routing probabilities, mask.
    outside += e * sb * h + 4 * sb * m.num_experts + hidden_mask * sb * h;
    // Expert outputs are kept for the weighted combine unless the probabilities scale the activation instead.
    const double kept_outputs = fw.moe_probs_in_activation ? 0.0 : e * routed * h;
    // The activation's inputs: 16-bit, or fp8 with an fp32 scale per 1x128 tile (moe_act_input_fp8, DeepSeek-V3 §3.3.2).
    const double act_in = fw.moe_act_input_fp8 && t.precision == Precision::Fp8 ? 1 + 4.0 / 128 : e;
    double expert = g * expert_rows * h                          // permuted expert inputs
                    + (gated * act_in + act_out + g) * expert_rows * m.moe_intermediate_size / p.etp
                    + kept_outputs;
    inside += (gated * e + act_out + g) * sb * m.shared_expert_intermediate_size;
    outside += expert * (sp ? tp : 1);                            // already per rank: undo the SP division below
    norm_outputs += e * sb * h;
    shared_inner = (gated * e + act_out + g) * sb * m.shared_expert_intermediate_size / tp;
    moe_inner = expert + 4 * sb * m.num_experts / (sp ? tp : 1) + shared_inner;
    moe_act = (act_out + g) * expert_rows * m.moe_intermediate_size / p.etp;
    // LoRA merged into 3-D expert weights (peft's ParamWrapper): each forward's W + s·B·A of every local expert, in
    // 16 bits, kept by the experts' GEMMs until the layer's backward.
    if (merges_expert_adapters(fw, t)) {
      const double merged = e * dd(m.num_experts) / p.ep * mlp_weights(m, m.moe_intermediate_size / p.etp);
      outside += merged * (sp ? tp : 1);
      moe_inner += merged;
    }
  }
  norm_outputs /= sp ? tp : 1;
  double lora = 0;
  if (t.uses_adapters()) lora = e * sb * t.lora.rank * dd(static_cast<int>(t.lora.target_modules.size()));

  // DTensor's column-parallel linears keep their all-gathered input: the QKV input and a dense MLP's fc1 input
  // whole on every rank, not the sequence shard counted in `outside`.
  double gathered = 0;
  if (sp && fw.dtensor_tensor_parallel) gathered = g * sb * h * (moe_layer ? 1 : 2) * (1 - 1 / tp);

  LayerActivations out;
  out.full = outside / (sp ? tp : 1) + gathered + (inside + core) / tp + replicated + lora;
  switch (t.recompute) {
    case Recompute::None: out.stored = out.full; break;
    case Recompute::Selective:
      if (fw.selective_recompute == SelectiveRecompute::EveryOtherMatmul) {
        // The block's input, the odd-numbered matmuls' outputs, the attention output and its fp32 log-sum-exp.
        const PerOpCheckpoint c = every_other_matmul(m, moe_layer, tp);
        out.stored = e * sb * h / (sp ? tp : 1) + e * sb * c.saved_outputs_per_token + e * sb * a * m.value_head_dim() / tp +
                     (t.flash_attention ? 4 * sb * a / tp : core / tp);
      } else {
        // Megatron's recompute modules; the MoE block contains its activation and shared experts.
        const unsigned mods = t.recompute_modules;
        const bool moe = mods & kRecomputeMoe;
        double dropped = 0;
        if (mods & kRecomputeCoreAttn) dropped += core / tp;
        if (mods & kRecomputeLayernorm) dropped += norm_outputs;
        if (mods & kRecomputeMlp) dropped += mlp_inner;
        if (mods & kRecomputeMlaUpProj) dropped += mla_up;
        if (moe) dropped += moe_inner;
        if (!moe && (mods & kRecomputeMoeAct)) dropped += moe_act;
        if (!moe && (mods & kRecomputeSharedExperts)) dropped += shared_inner;
        out.stored = out.full - dropped;
      }
      break;
    case Recompute::Full: out.stored = e * sb * h / (sp ? tp : 1); break;  // only the layer input
  }
  return out;
}

double layers_in_flight(const ParallelLayout& p, int num_layers, int stage) {
  const double layers = layers_in_stage(num_layers, p, stage);
  if (p.pp == 1) return layers;
  return layers * pipeline_schedule(p.schedule).micro_batches_in_flight(p, stage, p.gradient_accumulation_steps);
}

namespace {

// ZeRO-3 parameter offload (DeepSpeed offload_param): the GPU's 16-bit shard lives in host memory or on NVMe; the
// layers being gathered (counted below with ZeRO-3's gathers) are all the GPU keeps.
void offload_param_shard(const TrainingSpec& t, StageMemory* out) {
  const OffloadDevice where = t.params_offloaded();
  if (where == OffloadDevice::None) return;
  (where == OffloadDevice::Nvme ? out->nvme : out->host) += out->weights;
  out->weights = 0;
}

}  // namespace

MemoryModel::MemoryModel(const ModelSpec& m, const TrainingSpec& t, const HardwareSpec& h, MemoryAllowances a)
    : model(m), training(t), hardware(h), allowances(a), params(count_parameters(m)) {
  if (t.uses_adapters()) lora_params = lora_parameters(m, t.lora), lora_params_merged = lora_parameters(m, t.lora, true);
}

double MemoryModel::adapter_params(const FrameworkTraits& fw) const {
  return merges_expert_adapters(fw, training) ? lora_params_merged : lora_params;
}

MemoryModel::LayoutActivations MemoryModel::activations_for(const ParallelLayout& p) const {
  LayoutActivations a;
  a.dense = layer_activations(model, training, p, false);
  if (model.is_moe()) a.moe = layer_activations(model, training, p, true);
  return a;
}

StageMemory MemoryModel::stage(const ParallelLayout& p, int stage) const { return this->stage(p, stage, activations_for(p)); }

StageMemory MemoryModel::stage(const ParallelLayout& p, int stage, const LayoutActivations& acts) const {
  StageMemory out = stage_states(p, stage, acts);
  if (pairs_stages(p) && p.pp - 1 - stage != stage) {
    // The rank's second stage: its own copy of those parameters, gradients and optimizer states, and its half of
    // the micro-batches' activations (micro_batches_in_flight counts each stage's share); one layer recomputes at a time.
    const StageMemory other = stage_states(p, p.pp - 1 - stage, acts);
    out.layers += other.layers;
    out.parameters += other.parameters;
    out.weights += other.weights, out.gradients += other.gradients, out.optimizer += other.optimizer;
    out.host += other.host, out.nvme += other.nvme;
    out.activations_layers += other.activations_layers;
    out.activations_edges += other.activations_edges;
    out.activations_recompute = std::max(out.activations_recompute, other.activations_recompute);
    out.activations = out.activations_layers + out.activations_recompute + out.activations_edges;
    out.weights_held_by_autograd += other.weights_held_by_autograd;
    out.layer_microbatches_in_flight += other.layer_microbatches_in_flight;
  }
  const TrainingSpec& t = training;
  int groups = 0;
  for (int g : {p.tp, p.pp, p.cp, p.dp, p.ep, p.etp, p.dp_replicate}) groups += g > 1;  // hybrid sharding: a replica group too
  out.cuda_context = allowances.cuda_context_bytes;
  out.nccl = allowances.nccl_bytes_per_group * groups;
  out.fragmentation = allowances.fragmentation * out.activations;
  out.other = out.cuda_context + out.nccl + out.fragmentation;
  out.total = out.weights + out.gradients + out.optimizer + out.activations + out.other;
  // A paged optimizer's states never exhaust the GPU by themselves: what does not fit pages out to host memory.
  if (t.paged_optimizer && out.total > hardware.gpu.memory_bytes) {
    out.paged = std::min(out.optimizer, out.total - hardware.gpu.memory_bytes);
    out.optimizer -= out.paged;
    out.host += out.paged;
    out.total -= out.paged;
  }
  return out;
}

StageMemory MemoryModel::stage_states(const ParallelLayout& p, int stage, const LayoutActivations& acts) const {
  const ModelSpec& m = model;
  const TrainingSpec& t = training;
  StageMemory out;
  out.stage = stage;
  const StageParams sp = stage_parameters(m, params, p, stage);
  out.layers = sp.layers;
  out.parameters = sp.total();

  // ZeRO partitions over the data-parallel ranks that hold the same parameters: dp·cp for dense ones
  // (Megatron shards over the dp×cp group), the expert data-parallel group for experts.
  const double n_dense = dd(p.zero_shard_ranks()), n_expert = dd(p.expert_zero_shard_ranks());  // hybrid sharding: within a replica
  const bool shard_opt = t.zero_stage >= 1 || t.distributed_optimizer;
  const bool shard_grad = t.zero_stage >= 2, shard_weights = t.zero_stage >= 3;
  const FrameworkTraits& fw = framework_for(t, p);
  const Precision grad_precision = gradient_precision(t, p);
  const double gb = bytes_per_element(grad_precision);
  double optimizer = 0;
  double grad_partition = 0;  // the gradients ZeRO-2/3 partitions (an offloaded optimizer takes them to the host)
  if (t.trains_base_weights()) {
    // Rajbhandari et al. 2020 (ZeRO), §5: Ψ·(2 + 2 + K) bytes, divided by N_d stage by stage.
    const ModelStates states = full_model_states(sp.dense, sp.expert, n_dense, n_expert, t, grad_precision);
    // FSDP's shards are the fp32 master copy (in `optimizer`): no 16-bit shard beside them (without a master copy the
    // shards are the 16-bit parameters).
    const bool master_is_shard = shard_weights && t.precision != Precision::Fp32 && fw.fp32_sharded_parameters && t.master_weights;
    out.weights = master_is_shard ? 0.0 : states.weights;
    // Under autocast over fp32 parameters the fp32 copy is the parameter (counted with the optimizer's master) and
    // the 16-bit copies live while autograd holds them for each linear's backward: every layer's without full
    // recompute (the 16-bit weights counted above), else only the LM head's and the layer being recomputed.
    if (autocast_casts_weights(fw, t) && t.recompute == Recompute::Full)
      out.weights = (head_params(m, p, stage) + sp.largest_layer) * weight_bytes(t.precision);
    offload_param_shard(t, &out);
    out.gradients = states.gradients;
    if (shard_grad) grad_partition = states.gradients;
    optimizer = states.optimizer;
    if (t.has_reference_copy()) {  // the frozen reference model: 16-bit weights, sharded like the policy's
      out.weights += sp.total() * bytes_per_element(t.precision) / (shard_weights ? n_dense : 1);
      // Built as a training model, it also holds its wrapper's gradient buffer, sharded like the policy's gradients.
      if (fw.reference_model_gradient_buffer) out.gradients += sp.total() * gb / (shard_grad ? n_dense : 1);
    }
  } else {
    // LoRA / QLoRA: the frozen base holds only weights; adapters train in fp32.
    const double linear = sp.total() - sp.not_linear;
    const double base_linear_bytes = t.quantized_base() ? kNf4BytesPerParam : bytes_per_element(t.precision);
    const double base_bytes = linear * base_linear_bytes + sp.not_linear * bytes_per_element(t.precision);
    out.weights = shard_weights ? base_bytes / n_dense : base_bytes;
    offload_param_shard(t, &out);
    const double adapters = adapter_params(fw) * sp.layers / m.num_hidden_layers / p.tp;
    out.weights += adapters * kAdapterWeightBytes / (shard_weights ? n_dense : 1);
    out.gradients = adapters * kAdapterGradBytes / (shard_grad ? n_dense : 1);
    optimizer = adapters * kAdapterOptimizerBytes / (shard_opt ? n_dense : 1);
  }
  const bool stage_kept_unsharded = shard_weights && p.pp > 1 && fw.pipeline_keeps_unsharded;
  if (stage_kept_unsharded) {
    // Kept gathered across the stage's micro-batches (torchtitan's FSDP2 under pp): the whole stage's unsharded
    // weights, and its gradients accumulated unsharded in fp32 until the last backward.
    out.weights += sp.total() * bytes_per_element(t.precision);
    if (t.trains_base_weights()) out.gradients += sp.total() * 4.0;
  } else if (shard_weights) {
    // FSDP / ZeRO-3 gather the layer being computed and prefetch the next one, and hold one layer's
    // unsharded gradients until its reduce-scatter.
    out.weights += 2 * sp.largest_layer * bytes_per_element(t.precision);
    if (t.trains_base_weights()) out.gradients += sp.largest_layer * gb;
    // FSDP's root unit (embeddings, final norm, LM head) stays gathered from the forward's end through the backward.
    if (fw.root_unit_stays_gathered) out.weights += sp.edges * bytes_per_element(t.precision);
  }
  const double offloaded = t.offload_optimizer ? t.offload_fraction : 0.0;
  (t.optimizer_offload_device == OffloadDevice::Nvme ? out.nvme : out.host) += optimizer * offloaded;
  out.optimizer = optimizer * (1 - offloaded);
  // ZeRO-Offload with partitioned gradients (stage >= 2): each reduced gradient partition is copied to an fp32
  // buffer in host memory for the CPU step (Ren et al. 2021, §4; DeepSpeed's stage 2 and 3 CPU offload), so the
  // GPU keeps only the unsharded working gradients counted above, not the partition.
  if (offloaded > 0 && grad_partition > 0) {
    out.gradients -= grad_partition * offloaded;
    out.host += grad_partition / gb * 4.0 * offloaded;
  }
  // Megatron's HybridDeviceOptimizer (offload_keeps_device_master) steps beside a pinned host copy of each gradient
  // in its dtype, and, without the precision-aware optimizer (offload_master_on_device), host copies of a master that
  // stays on the GPU (in fp32 training the master is the parameter).
  const OptimizerStateBytes state_bytes = optimizer_state_bytes(t);
  if (offloaded > 0 && fw.offload_keeps_device_master && t.trains_base_weights() && state_bytes.total() > 0) {
    const double stepped_params = optimizer * offloaded / state_bytes.total();
    const bool master_on_device = offload_master_on_device(t, p);
    if (master_on_device) out.optimizer += stepped_params * state_bytes.master;
    const double host_copies = gb + (state_bytes.master == 0 ? bytes_per_element(t.precision) : 0.0);
    out.host += stepped_params * host_copies;  // pinned host memory
  }

  // Activations: stored layer activations times the layer-micro-batches in flight.
  const int dense_layers = dense_layers_in_stage(m.num_hidden_layers, m.num_dense_layers(), p, stage);
  const LayerActivations& dense = acts.dense;
  LayerActivations per_layer = dense;
  if (m.is_moe() && dense_layers < sp.layers) {
    const LayerActivations& moe = acts.moe;
    // Average over the stage's mix of dense and MoE layers.
    per_layer.stored = (dense.stored * dense_layers + moe.stored * (sp.layers - dense_layers)) / sp.layers;
    per_layer.full = std::max(dense.full * (dense_layers > 0), moe.full);
  }
  out.layer_microbatches_in_flight = layers_in_flight(p, m.num_hidden_layers, stage);
  out.activations_layers = per_layer.stored * out.layer_microbatches_in_flight;
  if (stage == p.pp - 1 && m.mtp_layers > 0) {  // the multi-token-prediction modules' layers, as many micro-batches
    const double in_flight = p.pp == 1 ? 1.0 : pipeline_schedule(p.schedule).micro_batches_in_flight(p, stage, p.gradient_accumulation_steps);
    out.activations_layers += m.mtp_layers * (m.last_layer_moe() ? acts.moe : acts.dense).stored * in_flight;
  }
  // While a layer is recomputed before its backward, what it dropped is back: the whole layer under full
  // recompute, the dropped modules' activations under selective.
  if (t.recompute == Recompute::Full) out.activations_recompute = per_layer.full;
  if (t.recompute == Recompute::Selective) out.activations_recompute = std::max(0.0, per_layer.full - per_layer.stored);

  const double s = dd(t.seq_len) / p.cp, b = dd(p.micro_batch_size) * t.sequences_per_sample();
  const bool seq_par = p.sequence_parallel && p.tp > 1;
  const double h = m.hidden_size;
  if (stage == 0 && m.hidden_dropout > 0)  // embedding dropout mask, for every micro-batch in flight
    out.activations_edges += s * b * h / (seq_par ? p.tp : 1) * out.layer_microbatches_in_flight / std::max(1, sp.layers);
  if (stage == p.pp - 1) {
    // Final norm input and LM-head input, then the logits, one micro-batch at a time. A fused cross-entropy
    // keeps the vocab-parallel LM head's output (16 bits, under fp8 too: Megatron runs the output layer outside
    // fp8) and either the fp32 softmax for backward (Megatron's vocab_parallel_cross_entropy, the gradient
    // written over it) or the 16-bit gradient beside the logits (a per-token log-sum-exp kernel). Unfused
    // (logits.float(), then log_softmax and nll_loss: torchtitan, transformers), the loss's backward peaks at
    // three fp32 tensors of the logits' shape: the saved log-softmax, the nll gradient and the log-softmax
    // gradient.
    const double e = activation_bytes(t.precision);
    // DTensor's loss_parallel holds four (its backward: log-probabilities, zeros_like, exp and their sum), and
    // its LM head keeps the all-gathered input.
    const bool dtensor = fw.dtensor_tensor_parallel && p.tp > 1;
    const double per_logit = !fw.fused_cross_entropy ? (dtensor ? 4 : 3) * 4.0 : e + (fw.cross_entropy_keeps_softmax ? 4 : e);
    const double head_input = e * s * b * h / (seq_par && !dtensor ? p.tp : 1), norm_input = e * s * b * h / (seq_par ? p.tp : 1);
    // Multi-token prediction: each module's head keeps its own logits (their backward runs after the forward).
    out.activations_edges += (1 + m.mtp_layers) * (norm_input + head_input + per_logit * s * b * m.vocab_size / p.tp);
  }
  out.activations = out.activations_layers + out.activations_recompute + out.activations_edges;
  // zero_grad(set_to_none=True) with one micro-batch a step and unsharded gradients: no gradient exists when the
  // backward starts, with every activation alive, but the LM head's, produced first; the others appear layer by layer
  // as the activations they replace are freed. The peak is the larger end of that exchange: activations plus the
  // head's gradient, or every gradient once the activations are gone.
  if (!fw.zero_grad_memset && t.trains_base_weights() && t.zero_stage < 2 && p.gradient_accumulation_steps == 1 && p.pp == 1)
    out.gradients = std::max(head_params(m, p, stage) * gb, out.gradients - out.activations);
  // DeepSpeed releases a ZeRO-3 gather by swapping the parameter's .data; torch's linear has saved the weight's
  // transpose, a view of the gathered storage, so without DeepSpeed's memory-efficient linear each layer whose
  // activations are kept holds its gathered 16-bit weights until its backward (deepspeed/runtime/zero/linear.py),
  // and the LM head its own. Full recompute keeps no view: the forward runs without autograd.
  if (shard_weights && !stage_kept_unsharded && !fw.memory_efficient_linear && t.recompute != Recompute::Full && !t.quantized_base() && sp.layers > 0) {
    const double micro_batches_per_layer = out.layer_microbatches_in_flight / sp.layers;
    const double head = stage == p.pp - 1 ? dd(m.vocab_size) * m.hidden_size / p.tp : 0.0;
    out.weights_held_by_autograd = ((sp.total() - sp.edges) * micro_batches_per_layer + head) * bytes_per_element(t.precision);
    out.weights += out.weights_held_by_autograd;
  }
  return out;
}

StageMemory MemoryModel::worst_stage(const ParallelLayout& p) const {
  const LayoutActivations acts = activations_for(p);
  StageMemory worst = stage(p, 0, acts);
  // Stage 0 holds the most micro-batches and the embedding, the last stage the logits; of the middle
  // stages (equal layers: pipeline_split) the first holds the most micro-batches. Those three decide.
  if (p.pp > 1) {
    for (int s : {p.pp - 1, 1}) {
      if (s <= 0 || s >= p.pp) continue;
      StageMemory cand = stage(p, s, acts);
      if (cand.total > worst.total) worst = cand;
    }
  }
  return worst;
}

MemoryEstimate MemoryModel::estimate(const ParallelLayout& p) const {
  MemoryEstimate e;
  e.params = params;
  e.trainable_parameters = training.trains_base_weights() ? params.total : adapter_params(framework_for(training, p));
  e.capacity = hardware.gpu.memory_bytes;
  const LayoutActivations acts = activations_for(p);
  for (int s = 0; s < p.pp; ++s) {
    e.stages.push_back(stage(p, s, acts));
    if (s == 0 || e.stages.back().total > e.worst.total) e.worst = e.stages.back();
  }
  e.device_fits = e.worst.total <= e.capacity;
  e.host_per_node = host_per_node(e.worst.host);
  e.host_capacity = hardware.host_memory_bytes;
  e.host_fits = host_fits(e.worst.host);
  e.fits = e.device_fits && e.host_fits;
  return e;
}

double MemoryModel::host_per_node(double host_per_gpu) const {
  return host_per_gpu * std::min(hardware.gpus_per_node, std::max(1, hardware.num_gpus));
}

bool MemoryModel::host_fits(double host_per_gpu) const {
  return hardware.host_memory_bytes <= 0 || host_per_node(host_per_gpu) <= hardware.host_memory_bytes;
}

}  // namespace trainsim
