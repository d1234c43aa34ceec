// The per-layer compute model: one transformer layer walked op by op (attention by kind, its core, the output,
// the MLP or MoE block, QLoRA's dequantization), its passes assembled; layer_compute sums it, layer_ops lists it.
#include <algorithm>
#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "models/calibration/calibration.hpp"
#include "models/compute/compute.hpp"
#include "models/compute/expert_load.hpp"
#include "models/compute/linear_attention.hpp"
#include "models/compute/op_builder.hpp"
#include "models/compute/recompute_policy.hpp"
#include "models/compute/transformer.hpp"

namespace trainsim {
namespace {

using namespace compute_detail;

// One transformer layer walked op by op (OpBuilder): the attention block's input projections by attention kind, the
// attention core, the output projection, the MLP or MoE block, QLoRA's dequantization, then the passes assembled
// (forward, DPO's reference forward, recompute, backward, the host's exposed launch time) and, when recording, the
// op list. One member per step, in the layer's order; the members hold what the steps share.
template <bool Record>
struct LayerWalk {
  const ModelSpec& m;
  const TrainingSpec& t;
  const ParallelLayout& p;
  const GpuSpec& gpu;
  const GpuComputeTraits& tr;
  const bool moe_layer, linear_attention;
  const bool dpo = t.mode == TrainingMode::Dpo;
  const double seq = t.seq_len, cp = p.cp, tp = p.tp;
  const double s = seq / cp;                                      // query tokens of this rank (context parallel)
  const double b = dd(p.micro_batch_size) * t.sequences_per_sample();
  const double tokens = s * b;                                    // tokens through the TP-region GEMMs
  const bool sp = p.sequence_parallel && p.tp > 1;
  const double tokens_outside = tokens / (sp ? tp : 1);           // norms, residuals, dropout: split by SP
  const double h = m.hidden_size, d = m.head_dim;
  const double heads = dd(m.num_attention_heads) / tp;
  // Megatron replicates KV heads when tp exceeds their number (at least one group per rank).
  const double kv_heads = std::max(dd(m.num_key_value_heads) / tp, 1.0);
  const bool trained = t.trains_base_weights();
  const LoraTargets l = lora_targets(t);
  const Precision high_p = high_precision(t.precision);
  OpBuilder<Record> ob;
  const double ab;
  const FrameworkTraits& fw;
  const bool merged_adapters;  // LoRA merged into 3-D expert weights (merges_expert_adapters)
  // ZeRO-3 fetched module by module from Python hooks: each module's hooks in every forward and backward.
  const double module_fetch_s;
  const HookedModules hooked;
  // Full recompute stops after the layer's last saved tensor (framework checkpoint_early_stop, OpBuilder::unrecomputed):
  // only torch.utils.checkpoint without reentrance (checkpoint_saved_tensor_hooks) stops early.
  const bool early_stop;
  // Per-head widths of Q·K^T and of P·V (head_dim both, except under MLA).
  const double dqk = m.qk_head_dim(), dv = m.value_head_dim();
  // Softmax attention's output gate (Qwen3-Next): a second q-sized half of the q projection, sigmoid(gate) x output.
  const double gate = m.attention_output_gate ? heads * d : 0.0;
  double attention_weights = 0;  // per GPU, for QLoRA dequantization
  double linear_weights = 0;     // the attention's and the MLP's or experts'

  LayerWalk(const ModelSpec& model, const TrainingSpec& training, const ParallelLayout& layout, const GpuSpec& g, const GpuComputeTraits& traits,
            bool moe, bool linear)
      : m(model), t(training), p(layout), gpu(g), tr(traits), moe_layer(moe && model.is_moe()), linear_attention(linear),
        ob(gemm_cost(g, traits, training.precision), gemm_cost(g, traits, high_precision(training.precision)),
           1 / (g.memory_bandwidth * traits.hbm_fraction * traits.memory_kernel_efficiency), activation_bytes(training.precision),
           training.uses_adapters() ? dd(training.lora.rank) : 0.0),
        ab(ob.ab),
        fw(framework_for(training, layout)),
        merged_adapters(merges_expert_adapters(fw, training)),
        module_fetch_s(training.zero_stage >= 3 ? fw.zero3_module_fetch_us * 1e-6 : 0.0),
        hooked(hooked_modules(model, l, moe_layer)),
        early_stop(training.recompute == Recompute::Full && fw.checkpoint_saved_tensor_hooks && fw.checkpoint_early_stop) {
    ob.eager_rmsnorm = !fw.fused_norm && m.norm == NormKind::RmsNorm;
    ob.grouped_gemm_call_s = tr.grouped_gemm_call_s;
    ob.track_modules = t.recompute == Recompute::Selective;
    ob.eager_rope = !fw.fused_rope;
    ob.autocast_casts = autocast_casts_weights(fw, t);
    ob.stream_bytes = ob.autocast_casts && trained ? 4.0 : ab;  // full training over fp32 parameters: an fp32 stream
    ob.separate_projections = fw.separate_projections;
    ob.wgrad_output_bytes = wgrad_accumulation_bytes(t, p);  // Megatron's gradient_accumulation_fusion into main_grad
    ob.grad_accumulation_share = autograd_accumulation_share(t, p);  // a plain loop's .grad += per micro-batch
    ob.grad_accumulation_bytes = ob.autocast_casts ? 4.0 : ab;        // .grad in its parameter's dtype
    ob.trains_norms = trained;
    ob.eager_activation = !fw.fused_activation;
    ob.fwd.hook_s += hooked.outside * module_fetch_s, ob.bwd.hook_s += hooked.outside * module_fetch_s;
  }

  void attention_inputs() {
    // --- attention block
    // Per-head widths of Q·K^T and of P·V (head_dim both, except under MLA).
    ob.module(kRecomputeLayernorm, [&] { ob.norm({"attention", "norm"}, tokens_outside * h, h); });
    // Softmax attention's output gate (Qwen3-Next): a second q-sized half of the q projection, sigmoid(gate) x output.
    attention_weights = trainsim::attention_weights(m).per_rank(tp);  // per GPU, for QLoRA dequantization
    if (linear_attention) {
      // Gated DeltaNet (linear_attention.hpp), its heads split by tp: input projections (column parallel), the
      // causal depthwise conv and SiLU over q, k, v, the fp32 gates per value head (g = -exp(A)·softplus(a + dt),
      // beta = sigmoid(b)), the chunked gated delta rule, a gated RMSNorm per head, out_proj (row parallel).
      const GatedDeltaNetDims g = gated_delta_net_dims(m);
      ob.dense({"linear_attention", "in_proj_qkvz"}, tokens, h, (2 * g.key_dim + 2 * g.value_dim) / tp, 1, trained, ob.linear);
      ob.dense({"linear_attention", "in_proj_ba"}, tokens, h, 2 * g.value_heads / tp, 1, trained, ob.high);
      ob.memory({"linear_attention", "conv"}, 2 * ab * tokens * g.conv_dim / tp, 3 * ab * tokens * g.conv_dim / tp);
      ob.memory({"linear_attention", "gates"}, (2 * ab + 8) * tokens * g.value_heads / tp, (3 * ab + 8) * tokens * g.value_heads / tp);
      // Per chunk of 64 tokens and value head, four products of chunk x key x value dims (K·K^T, V·K^T, the state
      // update, S·Q: Megatron's 4·d_v² FLOPs per token and head), run as small batched GEMMs (flash-linear-attention's
      // chunk kernels); backward twice the forward.
      constexpr double kChunk = 64;
      const double chunk_products = 4 * tokens * g.value_heads / tp / kChunk;
      ob.activation_gemm({"linear_attention", "delta_rule"}, kChunk, m.linear_key_head_dim, g.value_head_dim, chunk_products, ob.high);
      ob.memory({"linear_attention", "norm_gate"}, 3 * ab * tokens * g.value_dim / tp, 5 * ab * tokens * g.value_dim / tp);
      ob.dense({"linear_attention", "out_proj"}, tokens, g.value_dim / tp, h, 1, trained, ob.linear);
      attention_weights = gated_delta_net_split_params(m) / tp;
    } else if (m.is_mla()) {
      // Multi-head latent attention as Megatron-core runs it: the down-projections (and their norms) whole on every
      // TP rank over all the layer's tokens, the up-projections split by heads; RoPE on the rotary part of each
      // head's query and on the key's shared rotary part.
      const double ql = m.q_lora_rank, kvl = m.kv_lora_rank, rope = m.qk_rope_head_dim;
      // Megatron's mla_up_proj recompute module: the up-projections and the rotary embedding.
      if (ql > 0) {
        ob.dense({"attention", "q_down"}, tokens, h, ql, 1, trained, ob.linear);
        ob.norm({"attention", "q_norm"}, tokens * ql, ql, ab);
        ob.module(kRecomputeMlaUpProj, [&] { ob.dense({"attention", "q_up"}, tokens, ql, heads * dqk, 1, trained, ob.linear); });
      } else {
        ob.dense({"attention", "q"}, tokens, h, heads * dqk, 1, trained, ob.linear);
      }
      ob.dense({"attention", "kv_down"}, tokens, h, kvl + rope, 1, trained, ob.linear);
      ob.norm({"attention", "kv_norm"}, tokens * kvl, kvl, ab);
      ob.module(kRecomputeMlaUpProj, [&] {
        ob.dense({"attention", "kv_up"}, tokens, kvl, heads * (m.qk_nope_head_dim + dv), 1, trained, ob.linear);
        const double rotated = tokens * (heads + 1) * rope;
        if (m.position_embedding == PositionEmbedding::Rope) ob.rope({"attention", "rope"}, rotated);
      });
    } else {
      ob.stream_casts({"attention", "input_cast"}, tokens * h, ob.separate_projections ? 3 : 1);
      const bool qkv_bias = m.qkv_bias || m.attention_bias;
      if (ob.separate_projections) {
        ob.dense({"attention", "q"}, tokens, h, heads * d + gate, 1, trained, ob.linear, nullptr, nullptr, qkv_bias);
        ob.dense({"attention", "k"}, tokens, h, kv_heads * d, 1, trained, ob.linear, nullptr, nullptr, qkv_bias);
        ob.dense({"attention", "v"}, tokens, h, kv_heads * d, 1, trained, ob.linear, nullptr, nullptr, qkv_bias);
      } else {  // fused QKV (column parallel)
        ob.dense({"attention", "qkv"}, tokens, h, (heads + 2 * kv_heads) * d + gate, 1, trained, ob.linear, nullptr, nullptr, qkv_bias);
      }
      if (l.q) ob.lora("attention", "q_lora", tokens, h, heads * d, 1);
      if (l.k) ob.lora("attention", "k_lora", tokens, h, kv_heads * d, 1);
      if (l.v) ob.lora("attention", "v_lora", tokens, h, kv_heads * d, 1);
      const double qk_elements = tokens * (heads + kv_heads) * d;
      if (m.qk_norm) ob.norm({"attention", "qk_norm"}, qk_elements, d, ab, 2);  // q_norm and k_norm
      if (m.position_embedding == PositionEmbedding::Rope) ob.rope({"attention", "rope"}, qk_elements);  // rotate Q, K
    }
  }

  void attention_core() {
    // Attention core. Under context parallelism each rank's s query tokens attend to the whole sequence;
    // Megatron-Core splits the sequence into 2·cp chunks and gives rank i chunks i and 2·cp-1-i, so every
    // rank does 1/cp of the causal work (Megatron-Core "context parallelism" user guide).
    if (!linear_attention) ob.module(kRecomputeCoreAttn, [&] {
      Acc f, bk;
      const double batch = b * heads;  // independent (sequence, head) problems on this rank
      if (t.flash_attention) {
        // QK^T and AV: 2·s_q·s_k·(d_qk + d_v) per head over the pairs attended: half of them when causal, fewer
        // under a sliding window (FlashAttention skips the masked blocks).
        // Per-document masks over packed rows: the work of each document's tiles, run at a kernel of its length.
        const double attended = attended_key_fraction(m, seq, t.document_tokens);
        const double kernel_len = t.document_tokens > 0 ? std::min(s, t.document_tokens) : s;
        const double fl = 2 * batch * s * seq * (dqk + dv) * attended;
        const double peak = gemm_peak_flops(gpu, high_p);
        f.attention_s = fl / (peak * flash_attention_efficiency(tr, kernel_len, false, fw.attention_kernel));
        f.attention_flops = fl;
        bk.attention_s = kFlashBackwardFlops * fl / (peak * flash_attention_efficiency(tr, kernel_len, true, fw.attention_kernel));
        bk.attention_flops = kFlashBackwardFlops * fl;
        const bool flash2 = fw.attention_kernel == AttentionKernel::Flash2;
        f.kernels = flash2 ? kFlash2ForwardKernels : kCudnnForwardKernels;
        bk.kernels = flash2 ? kFlash2BackwardKernels : kCudnnBackwardKernels;
        if constexpr (Record) {
          // A fused kernel has no GEMM shape of its own: listed as the batched Q·K^T-shaped GEMM (s x causal
          // fraction of the keys x head dim) with the kernel's FLOPs, the GEMM-equivalent a proxy run can time.
          const double keys = seq * attended, per_gemm = 2 * s * keys * dqk;
          const GemmShape fe{s, keys, dqk, fl / per_gemm}, be{s, keys, dqk, bk.attention_flops / per_gemm};
          ob.record(false, LayerOp::Attention, {"attention", "core"}, "", fe, high_p, 0, fl, f.attention_s, true, f.kernels);
          ob.record(true, LayerOp::Attention, {"attention", "core"}, "", be, high_p, 0, bk.attention_flops, bk.attention_s, true, bk.kernels);
        }
      } else {
        // Unfused: batched GEMMs over the full s_q x s_k score matrix (masking does not save work) and a
        // softmax (+ dropout) over it, all through HBM.
        Acc g;
        const GemmShape qk{s, seq, dqk, batch}, pv{s, dv, seq, batch};
        ob.record_gemm(false, LayerOp::Attention, {"attention", "qk"}, "", ob.high, qk, OpBuilder<Record>::gemm(g, ob.high, qk));  // S = Q·K^T
        ob.record_gemm(false, LayerOp::Attention, {"attention", "pv"}, "", ob.high, pv, OpBuilder<Record>::gemm(g, ob.high, pv));  // O = P·V
        f.attention_s = g.gemm_s, f.attention_flops = g.gemm_flops, f.kernels = g.kernels + 1;  // + the softmax
        Acc gb;
        const GemmShape dp{s, seq, dv, batch}, dvg{seq, dv, s, batch}, dq{s, dqk, seq, batch}, dk{seq, dqk, s, batch};
        ob.record_gemm(true, LayerOp::Attention, {"attention", "dp"}, "", ob.high, dp, OpBuilder<Record>::gemm(gb, ob.high, dp));  // dP = dO·V^T
        ob.record_gemm(true, LayerOp::Attention, {"attention", "dv"}, "", ob.high, dvg, OpBuilder<Record>::gemm(gb, ob.high, dvg));  // dV = P^T·dO
        ob.record_gemm(true, LayerOp::Attention, {"attention", "dq"}, "", ob.high, dq, OpBuilder<Record>::gemm(gb, ob.high, dq));  // dQ = dS·K
        ob.record_gemm(true, LayerOp::Attention, {"attention", "dk"}, "", ob.high, dk, OpBuilder<Record>::gemm(gb, ob.high, dk));  // dK = dS^T·Q
        bk.attention_s = gb.gemm_s, bk.attention_flops = gb.gemm_flops, bk.kernels = gb.kernels + 1;
        const double scores = batch * s * seq;
        double fb = 2 * ab * scores, bb = 3 * ab * scores;   // softmax: read/write; backward: read P, dP, write dS
        if (m.attention_dropout > 0) fb += (2 * ab + 1) * scores, bb += (2 * ab + 1) * scores;
        const double tfb = ob.mem(fb), tbb = ob.mem(bb);
        f.attention_s += tfb;
        bk.attention_s += tbb;
        ob.record_memory(false, LayerOp::Attention, {"attention", "softmax"}, "", fb, tfb);
        ob.record_memory(true, LayerOp::Attention, {"attention", "softmax"}, "", bb, tbb);
      }
      ob.fwd.add(f), ob.bwd.add(bk);
    });
  }

  void attention_output() {
    if (!linear_attention) {
      // sigmoid(gate) x output: read both, write one; backward reads them and dy, writes two gradients.
      if (gate > 0) ob.memory({"attention", "output_gate"}, 3 * ab * tokens * gate, 5 * ab * tokens * gate);
      ob.dense({"attention", "out"}, tokens, heads * dv, h, 1, trained, ob.linear, nullptr, nullptr, m.attention_bias);   // row parallel
      if (l.o) ob.lora("attention", "o_lora", tokens, heads * dv, h, 1);
    }
    if (m.hidden_dropout > 0) ob.dropout({"attention", "dropout"}, tokens_outside * h);
    ob.residual({"attention", "residual"}, tokens_outside * h);
  }

  void feed_forward() {
    // --- MLP block
    ob.module(kRecomputeLayernorm, [&] { ob.norm({"mlp", "norm"}, tokens_outside * h, h); });
    linear_weights = attention_weights;
    if (!moe_layer) {
      const double f = m.intermediate_size / tp;
      const double mlp_inputs = m.mlp == MlpKind::Gated && ob.separate_projections ? 2 : 1;  // gate and up read the stream
      // torch.utils.checkpoint's early stop: the down projection is the layer's last saving op (its input and weight)
      // unless an adapter or dropout follows it; a 16-bit aten linear saves them before its GEMM runs, an fp8 linear
      // (an autograd Function, torchao's Float8Linear) after.
      ob.down_not_recomputed = early_stop && !l.down && !(m.hidden_dropout > 0) && ob.linear.operand_bytes >= 2;
      ob.module(kRecomputeMlp, [&] {
        ob.stream_casts({"mlp", "input_cast"}, tokens * h, mlp_inputs);
        ob.mlp("mlp", m, l, tokens, f, 1, trained);
      });
      ob.down_not_recomputed = false;
      linear_weights += mlp_weights(m, f);
    } else ob.module(kRecomputeMoe, [&] {
      // Router on the tokens this rank holds; tokens routed to top-k experts over E experts.
      // Expert parallel: E/ep local experts, each receiving routed·ep/E tokens of this rank's share, more on the
      // busiest rank, whose pace the layer keeps (expert_load.hpp); expert tensor parallel all-gathers the tokens of
      // the etp group and splits each expert's inner size by etp.
      const double E = m.num_experts, topk = m.num_experts_per_tok;
      const double routing_tokens = tokens / (sp ? tp : 1);
      const double routed = routing_tokens * topk;
      const double local_experts = E / p.ep;
      const double tokens_per_expert = expert_tokens_on_busiest_rank(m, t, p, routing_tokens);
      const double f_expert = dd(m.moe_intermediate_size) / p.etp;
      ob.stream_casts({"moe", "input_cast"}, routing_tokens * h, 1);
      ob.dense({"moe", "router"}, routing_tokens, h, E, 1, trained, ob.high);
      ob.memory({"moe", "router_topk"}, (ab + 4) * routing_tokens * E, (4 + 4 + ab) * routing_tokens * E);   // softmax/top-k in fp32
      // Permute and unpermute: read the tokens, write the top-k copies, and back (Megatron-Core token dispatcher).
      const double permute = 2 * ab * h * (routing_tokens + routed);
      // Grouped experts: the framework's dispatch and combine kernels (Megatron's fused permute and unpermute, one
      // each; transformers' eager ops), a sort of the routed rows where it sorts; a per-expert loop launches the
      // routing kernels above per expert.
      const double sort_kernels = fw.moe_dispatch_sorts && routed > kSortInPlaceRows ? kLargeSortExtraKernels : 0.0;
      const double routing_kernels_fwd = fw.moe_grouped_gemm ? fw.moe_dispatch_kernels_forward + sort_kernels : kLoopRoutingKernelsForward * local_experts;
      const double routing_kernels_bwd = fw.moe_grouped_gemm ? fw.moe_dispatch_kernels_backward : kLoopRoutingKernelsBackward * local_experts;
      const bool synced = !fw.moe_grouped_gemm && fw.moe_loop_host_sync;
      const Acc before = ob.fwd;
      ob.memory({"moe", "permute"}, permute, permute, routing_kernels_fwd, routing_kernels_bwd);
      // Grouped GEMM: each expert GEMM of the local experts in one kernel sharing waves, or one cuBLAS call per
      // expert over the framework's streams (moe_gemm_streams); a loop: one GEMM per expert, each with the per-expert
      // token count as M (tile/wave quantization per expert) and its own launch.
      ob.serial_count = !fw.moe_grouped_gemm;
      ob.gemm_streams = fw.moe_grouped_gemm ? fw.moe_gemm_streams : 0;
      // Experts in the parameters' dtype (moe_experts_in_weight_dtype) over fp32 parameters under autocast: fp32
      // GEMMs on the CUDA cores, no weight casts, fp32 activations between them.
      const bool fp32_experts = fw.moe_experts_in_weight_dtype && ob.autocast_casts && trained;
      const GemmCost linear = ob.linear;
      const double ab_saved = ob.ab;
      // torch's grouped_mm has no fp32 kernel: it loops over the experts, one FFMA GEMM each (serial_gemms).
      if (fp32_experts) ob.linear = cuda_core_fp32_cost(gpu, tr), ob.autocast_casts = false, ob.ab = 4, ob.serial_gemms = true;
      if (merged_adapters) {
        // peft's ParamWrapper (moe_expert_adapter_merge_passes): the experts' GEMMs run on the merged 16-bit weights
        // and their weight gradients are computed (no autocast casts: the frozen base is 16-bit), no adapters on
        // the tokens; the merge and the reduction into the factors are passes over the expert weights.
        const bool casts = ob.autocast_casts;
        ob.autocast_casts = false;
        ob.mlp("moe.experts", m, LoraTargets{}, tokens_per_expert, f_expert, local_experts, true, kRecomputeMoeAct);
        ob.autocast_casts = casts;
        expert_adapter_merge(local_experts * mlp_weights(m, f_expert));
      } else {
        ob.mlp("moe.experts", m, l, tokens_per_expert, f_expert, local_experts, trained, kRecomputeMoeAct);
      }
      if (fp32_experts) ob.linear = linear, ob.autocast_casts = true, ob.ab = ab_saved, ob.serial_gemms = false;
      if (!fw.moe_grouped_gemm && fw.moe_expert_weights_indexed && trained) {
        // Each expert's backward: a zero-filled gradient of the whole 3-D parameter, then accumulated (read two,
        // write one): four passes per expert over all the layer's local expert weights, in the gradient's dtype.
        const double weights = local_experts * mlp_weights(m, f_expert);
        const double grad_bytes = ob.autocast_casts ? 4.0 : ob.ab;
        ob.memory({"moe", "experts", "weight_grad_scatter"}, 0, local_experts * 4 * grad_bytes * weights, 0, 2 * local_experts);
      }
      ob.serial_count = false;
      ob.gemm_streams = 0;
      ob.fwd.hook_s += local_experts * hooked.per_expert * module_fetch_s;
      ob.bwd.hook_s += local_experts * hooked.per_expert * module_fetch_s;
      if (synced) {
        ob.synced_fwd = ob.fwd;
        ob.synced_fwd.add(before, -1);
        ob.synced_iterations = local_experts;
      }
      linear_weights += local_experts * mlp_weights(m, f_expert);
      if (m.shared_expert_intermediate_size > 0) {
        const double fs = m.shared_expert_intermediate_size / tp;
        ob.module(kRecomputeSharedExperts, [&] { ob.mlp("moe.shared_expert", m, l, tokens, fs, 1, trained); });
        linear_weights += mlp_weights(m, fs);
      }
    });
    if (m.hidden_dropout > 0) ob.dropout({"mlp", "dropout"}, tokens_outside * h);
    if (early_stop) ob.not_recomputed([&] { ob.residual({"mlp", "residual"}, tokens_outside * h); });  // saves nothing
    else ob.residual({"mlp", "residual"}, tokens_outside * h);
  }

  // The merge of LoRA into 3-D expert weights: in the forward, W + s·B·A read and written (two passes, policy work the
  // DPO reference does not run); in the backward, the rest of the framework's passes (the merged weight's gradient
  // copied and reduced into B and A).
  void expert_adapter_merge(double weights) {
    const double passes = fw.moe_expert_adapter_merge_passes, forward_passes = std::min(2.0, passes);
    const Acc before = ob.fwd;
    ob.memory({"moe", "experts", "adapter_merge"}, forward_passes * ab * weights, (passes - forward_passes) * ab * weights, 1, 3);
    Acc merge = ob.fwd;
    merge.add(before, -1);
    ob.adapter_fwd.add(merge);
  }

  void qlora_dequantize() {
    if (t.quantized_base()) {
      // Dequantize the layer's NF4 linear weights to 16 bits for the forward GEMMs and again for backward.
      const double bytes = linear_weights * (kNf4BytesPerParam + ab);
      ob.memory({"qlora", "dequantize"}, bytes, bytes);
    }
  }

  LayerCompute assemble([[maybe_unused]] std::vector<LayerOp>* ops) {
    // --- assemble
    LayerCompute out;
    Acc forward = ob.fwd;
    if (dpo) {  // the frozen reference model's forward on the same chosen + rejected batch (no adapters)
      Acc reference = ob.fwd;
      reference.add(ob.adapter_fwd, -1);
      forward.add(reference);
    }
    out.forward_s = forward.time();
    out.forward_flops = forward.flops();
    out.backward_s = ob.bwd.time();
    out.backward_flops = ob.bwd.flops();
    // What "selective" repeats: the attention core (Megatron), or under torchtitan's per-op policy every
    // memory-bound op of the forward and the even-numbered matmuls, taken as their share of the block's linear
    // GEMM FLOPs (recompute_policy.hpp); the attention output is saved.
    const bool per_op = t.recompute == Recompute::Selective && fw.selective_recompute == SelectiveRecompute::EveryOtherMatmul;
    const double gemm_share = per_op ? every_other_matmul(m, moe_layer, tp).recomputed_gemm_fraction : 0.0;
    // Megatron's policy: the recompute modules' forward work; the MoE block contains its activation and shared
    // experts (module_fwd counts nested work in both).
    const unsigned mods = t.recompute_modules;
    const unsigned counted = mods & kRecomputeMoe ? mods & ~(kRecomputeMoeAct | kRecomputeSharedExperts) : mods;
    const Acc& core = ob.module_fwd[std::countr_zero(unsigned(kRecomputeCoreAttn))];
    Acc recomputed = ob.fwd;  // what full recompute repeats
    recomputed.add(ob.unrecomputed, -1);
    Acc selective;
    for (unsigned bit : {kRecomputeCoreAttn, kRecomputeLayernorm, kRecomputeMlp, kRecomputeMoe, kRecomputeMoeAct, kRecomputeSharedExperts,
                         kRecomputeMlaUpProj})
      if (counted & bit) selective.add(ob.module_fwd[std::countr_zero(bit)]);
    if (per_op) {
      selective = Acc{};
      selective.gemm_s = gemm_share * ob.fwd.gemm_s, selective.gemm_flops = gemm_share * ob.fwd.gemm_flops;
      selective.memory_s = ob.fwd.memory_s;
      selective.kernels = ob.fwd.kernels - core.kernels;
    }
    switch (t.recompute) {
      case Recompute::None: break;
      case Recompute::Selective: out.recompute_s = selective.time(), out.recompute_flops = selective.flops(); break;
      case Recompute::Full: out.recompute_s = recomputed.time(), out.recompute_flops = recomputed.flops(); break;
    }
    Acc all = forward;
    all.add(ob.bwd);
    out.gemm_s = all.gemm_s;
    out.attention_s = all.attention_s;
    out.memory_bound_s = all.memory_s;
    out.cuda_core_gemm_s = all.cuda_core_s;
    out.gemm_flops = all.gemm_flops;
    out.attention_flops = all.attention_flops;
    out.kernels_forward = forward.kernels;
    out.kernels_backward = ob.bwd.kernels;
    const double gap = fw.launch_gap_s();
    // Full recompute through torch.utils.checkpoint's saved-tensor hooks: host time per kernel of the forward and
    // of the recompute beside the launch (the fitted checkpoint_hook_us).
    const double hooked_gap = gap + (t.recompute == Recompute::Full && fw.checkpoint_saved_tensor_hooks && gap > 0 ? tr.checkpoint_hook_s : 0.0);
    // A per-expert loop that syncs the host runs in every forward of the layer: the policy's, the DPO reference's
    // and full recompute's. Backward has no sync (autograd launches ahead).
    const double forwards = dpo ? 2 : 1;
    Acc synced_forward = ob.synced_fwd;
    synced_forward.add(ob.synced_fwd, forwards - 1);
    out.host_s = host_exposed_with_syncs(forward, synced_forward, forwards * ob.synced_iterations, hooked_gap) + ob.bwd.host_exposed(fw.backward_launch_gap_s());
    if (t.recompute == Recompute::Selective) out.host_s += selective.host_exposed(gap);
    if (t.recompute == Recompute::Full) out.host_s += host_exposed_with_syncs(recomputed, ob.synced_fwd, ob.synced_iterations, hooked_gap);

    if constexpr (Record) {
      // The same ops as the sums above: forward; the DPO reference forward (every forward op but the adapters);
      // recompute (full: the policy forward, selective: the attention core) before the backward that needs it;
      // backward (listed in layer order).
      ops->clear();
      ops->reserve(2 * ob.fwd_ops.size() + ob.bwd_ops.size() + (dpo ? ob.fwd_ops.size() : 0));
      for (const RecordedOp& r : ob.fwd_ops) ops->push_back(r.op);
      if (dpo) {
        for (const RecordedOp& r : ob.fwd_ops) {
          if (r.adapter) continue;
          LayerOp o = r.op;
          o.name = "reference." + o.name;
          o.reference = true;
          ops->push_back(std::move(o));
        }
      }
      if (t.recompute != Recompute::None) {
        for (const RecordedOp& r : ob.fwd_ops) {
          const bool core_op = r.modules & kRecomputeCoreAttn;
          if (t.recompute == Recompute::Selective && (per_op ? core_op : !(r.modules & mods))) continue;
          if (t.recompute == Recompute::Full && !r.recomputed) continue;
          LayerOp o = r.op;
          o.pass = "recompute";
          if (per_op && o.kind == LayerOp::Gemm) {  // the policy's share of each GEMM (see above)
            o.predicted_s *= gemm_share, o.flops *= gemm_share, o.bytes *= gemm_share;
          }
          ops->push_back(std::move(o));
        }
      }
      for (const RecordedOp& r : ob.bwd_ops) ops->push_back(r.op);
    }
    return out;
  }
};

template <bool Record>
LayerCompute layer_walk(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p, const GpuSpec& gpu, const GpuComputeTraits& tr,
                        bool moe_layer, bool linear_attention, std::vector<LayerOp>* ops) {
  LayerWalk<Record> w(m, t, p, gpu, tr, moe_layer, linear_attention);
  w.attention_inputs();
  w.attention_core();
  w.attention_output();
  w.feed_forward();
  w.qlora_dequantize();
  return w.assemble(ops);
}

}  // namespace

LayerCompute layer_compute(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p, const GpuSpec& gpu,
                           const GpuComputeTraits& tr, bool moe_layer) {
  const double linear = m.linear_attention_share();
  if (linear <= 0) return layer_walk<false>(m, t, p, gpu, tr, moe_layer, false, nullptr);
  // A hybrid model's layer on average: each attention kind's walk weighted by its share of the layers (every
  // field is a per-layer sum; a stage is taken to hold the model's mix).
  const LayerCompute a = layer_walk<false>(m, t, p, gpu, tr, moe_layer, false, nullptr);
  const LayerCompute b = layer_walk<false>(m, t, p, gpu, tr, moe_layer, true, nullptr);
  LayerCompute out;
  auto mix = [&](double LayerCompute::*f) { out.*f = (1 - linear) * a.*f + linear * b.*f; };
  for (double LayerCompute::*f : {&LayerCompute::forward_s, &LayerCompute::backward_s, &LayerCompute::recompute_s, &LayerCompute::forward_flops,
                                  &LayerCompute::backward_flops, &LayerCompute::recompute_flops, &LayerCompute::gemm_s, &LayerCompute::attention_s,
                                  &LayerCompute::memory_bound_s, &LayerCompute::cuda_core_gemm_s, &LayerCompute::gemm_flops, &LayerCompute::attention_flops,
                                  &LayerCompute::kernels_forward, &LayerCompute::kernels_backward, &LayerCompute::host_s})
    mix(f);
  return out;
}

LayerCompute layer_compute(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p, const GpuSpec& gpu, bool moe_layer) {
  return layer_compute(m, t, p, gpu, layer_power_traits(m, t, p, gpu, gpu_compute_traits(gpu)), moe_layer);
}

GpuComputeTraits layer_power_traits(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p, const GpuSpec& gpu,
                                    GpuComputeTraits tr) {
  tr.tensor_slowdown = 1;
  if (!(tr.tdp_w > 0) || !(tr.tensor_power_w > 0)) return tr;
  const LayerCompute top = layer_compute(m, t, p, gpu, tr, m.is_moe());
  tr.tensor_slowdown = 1 / power_limited_fraction(tr.tdp_w, tr.tensor_power_w,
                                                  PowerDuty{top.gemm_s - top.cuda_core_gemm_s + top.attention_s, top.memory_bound_s,
                                                            top.host_s, top.cuda_core_gemm_s});
  return tr;
}

std::vector<LayerOp> layer_ops(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p, const GpuSpec& gpu,
                               const GpuComputeTraits& tr, bool moe_layer) {
  std::vector<LayerOp> ops;
  const double linear = m.linear_attention_share();
  layer_walk<true>(m, t, p, gpu, tr, moe_layer, false, &ops);
  if (linear <= 0) return ops;
  // A hybrid model: the ops both kinds of layer run once, each kind's own ops with its share of the layers.
  std::vector<LayerOp> linear_ops;
  layer_walk<true>(m, t, p, gpu, tr, moe_layer, true, &linear_ops);
  auto key = [](const LayerOp& o) { return o.name + '/' + o.pass; };
  std::vector<std::string> softmax_keys, linear_keys;
  for (const LayerOp& o : ops) softmax_keys.push_back(key(o));
  for (const LayerOp& o : linear_ops) linear_keys.push_back(key(o));
  auto in = [](const std::vector<std::string>& keys, const std::string& k) { return std::find(keys.begin(), keys.end(), k) != keys.end(); };
  for (LayerOp& o : ops)
    if (!in(linear_keys, key(o))) o.layer_share = 1 - linear;
  for (LayerOp& o : linear_ops)
    if (!in(softmax_keys, key(o))) {
      o.layer_share = linear;
      ops.push_back(std::move(o));
    }
  return ops;
}

std::vector<LayerOp> layer_ops(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p, const GpuSpec& gpu, bool moe_layer) {
  return layer_ops(m, t, p, gpu, layer_power_traits(m, t, p, gpu, gpu_compute_traits(gpu)), moe_layer);
}

const char* to_string(LayerOp::Kind k) {
  switch (k) {
    case LayerOp::Gemm: return "gemm";
    case LayerOp::Attention: return "attention";
    case LayerOp::MemoryBound: return "memory";
  }
  return "gemm";
}


}  // namespace trainsim
