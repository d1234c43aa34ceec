#pragma once
// Internal to models/: the layer walk's op builder (layer_walk.cpp). One walk over a transformer layer's ops adds
// each op's time, FLOPs, HBM bytes and kernels to its pass (Acc) and, when Record, lists the op (LayerOp) for the
// proxy run and the reports; recompute modules and eager op sequences are tracked as the ops go by.
#include <bit>
#include <cmath>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "models/compute/compute_detail.hpp"
#include "models/compute/lora_targets.hpp"
#include "models/compute/recompute_policy.hpp"
#include "models/scenario/framework.hpp"

namespace trainsim::compute_detail {

// Time and FLOPs of a group of ops, split into GEMMs, attention core and memory-bound ops.
struct Acc {
  double gemm_s = 0, attention_s = 0, memory_s = 0;
  double cuda_core_s = 0;  // of gemm_s: fp32 GEMMs on the CUDA cores (FFMA)
  double gemm_flops = 0, attention_flops = 0;
  double kernels = 0;  // kernel launches
  double hook_s = 0;   // host time beside the launches (ZeRO-3's per-module fetch hooks)
  // GEMM loops inside one op's C++ code (aten_loop): their launches (of `kernels`), GPU time (of time()) and the
  // host time they expose.
  double loop_kernels = 0, loop_s = 0, loop_exposed_s = 0;
  // Grouped experts run as one GEMM call per expert from C++ with no sync before it (streamed_gemm): their launches
  // (of `kernels`) and the host time of the calls (each the fitted grouped_gemm_call_us) instead of Python launch gaps.
  double cpp_gemm_host_s = 0, cpp_launches = 0;
  double time() const { return gemm_s + attention_s + memory_s; }
  double flops() const { return gemm_flops + attention_flops; }
  void add(const Acc& o, double times = 1) {
    gemm_s += times * o.gemm_s, attention_s += times * o.attention_s, memory_s += times * o.memory_s;
    cuda_core_s += times * o.cuda_core_s;
    gemm_flops += times * o.gemm_flops, attention_flops += times * o.attention_flops;
    kernels += times * o.kernels, hook_s += times * o.hook_s;
    loop_kernels += times * o.loop_kernels, loop_s += times * o.loop_s, loop_exposed_s += times * o.loop_exposed_s;
    cpp_gemm_host_s += times * o.cpp_gemm_host_s, cpp_launches += times * o.cpp_launches;
  }
  // Host time of the kernels launched from Python (each `gap_s`), the C++ loops' launches excepted, and of the
  // per-expert GEMM calls made from C++ (none where a CUDA graph replays the step: gap_s = 0).
  double host(double gap_s) const {
    return (kernels - loop_kernels - cpp_launches) * gap_s + (gap_s > 0 ? cpp_gemm_host_s : 0.0) + hook_s;
  }
  // The GPU waits for the host where issuing this pass's kernels takes longer than running them. A
  // kernel cannot start before it is launched, and the host launches ahead of the GPU, so per pass
  // time = max(GPU time, host time); the layers of a stage are alike, so the per-layer max is the stack's.
  // A C++ loop starts from a host sync, so the host is never ahead when it begins: its own exposed time adds, and
  // the Python launches hide behind the rest of the pass only. Not behind a loop's GPU time either: the pass's
  // Python launches follow a loop whose lead the next sync takes (an MoE layer's forward launches its attention
  // after the down projection's loop, which at 128 tokens per expert is itself host-bound, and its backward after
  // the gate/up weight gradient's).
  double host_exposed(double gap_s) const { return std::max(0.0, host(gap_s) - (time() - loop_s)) + loop_exposed_s; }
};

// A loop of `count` GEMMs of `seconds` GPU time in all, launched by one op's C++ code after a host sync (ATen's
// _grouped_mm_fallback): each GEMM starts when both its launch (kAtenLoopGemmHostS after the previous) and the
// previous GEMM are done, so the host time per GEMM beyond its GPU time is exposed, and at least the first launch
// after the sync is.
inline void aten_loop(Acc& acc, double seconds, double count, double launches) {
  acc.loop_kernels += launches;
  acc.loop_s += seconds;
  acc.loop_exposed_s += std::max(kAtenLoopGemmHostS, count * std::max(0.0, kAtenLoopGemmHostS - seconds / count));
}

// The host time a pass exposes when part of it, `loop` (the forward of a per-expert MoE loop, `iterations`
// experts), synchronises the host with the GPU once per expert: the GPU drains at each sync, so each
// expert's kernels run at the pace of their launches (max(kernels x gap, gap + GPU time): the first launch
// after a sync is always exposed), while the rest of the pass launches ahead as host_exposed says.
inline double host_exposed_with_syncs(const Acc& pass, const Acc& loop, double iterations, double gap_s) {
  if (iterations <= 0 || loop.kernels <= 0) return pass.host_exposed(gap_s);
  Acc rest = pass;
  rest.add(loop, -1);
  const double per_expert = std::max((loop.host(gap_s) - loop.time()) / iterations, gap_s);
  return rest.host_exposed(gap_s) + iterations * per_expert;
}

// Parameter-holding modules of a decoder layer in the Hugging Face modeling code, which DeepSpeed ZeRO-3 fetches
// one by one from its module hooks: `outside` the expert loop (norms, attention projections, dense MLP or
// router and shared expert) and `per_expert` (the expert MLP's Linears). PEFT's LoRA adds an A and a B Linear
// per adapted target.
struct HookedModules {
  double outside = 0, per_expert = 0;
};

inline HookedModules hooked_modules(const ModelSpec& m, const LoraTargets& l, bool moe_layer) {
  const double mlp = m.mlp == MlpKind::Gated ? 3 : 2;
  const double mlp_adapters = 2.0 * (l.gate + l.up + l.down);
  HookedModules out;
  out.outside = 2 + (m.qk_norm ? 2 : 0) + 2.0 * (l.q + l.k + l.v + l.o);             // input and post-attention norms
  out.outside += m.is_mla() ? (m.q_lora_rank > 0 ? 3 : 1) + 3 + 1 : 4;               // MLA: q (down, norm, up), kv (down, norm, up), out
  if (!moe_layer) return out.outside += mlp + mlp_adapters, out;
  out.outside += 1 + (m.shared_expert_intermediate_size > 0 ? mlp + mlp_adapters : 0);  // router, shared expert
  out.per_expert = mlp + mlp_adapters;
  return out;
}

// The name of an op in up to three parts ("mlp", "gate_up", "a") plus a role ("fprop", "dgrad", "wgrad"),
// joined by '.'; turned into a string only when layer_ops records the walk.
struct OpName {
  const char* group = "";
  const char* module = "";
  const char* sub = "";
};
inline std::string compose(const OpName& n, const char* role) {
  std::string s;
  for (const char* part : {n.group, n.module, n.sub, role}) {
    if (!part || !*part) continue;
    if (!s.empty()) s += '.';
    s += part;
  }
  return s;
}

// An op the recording walk saw, with what the assembly needs to know about it.
struct RecordedOp {
  LayerOp op;
  bool adapter = false;  // LoRA adapter forward work (not run by the DPO reference forward)
  bool recomputed = true;  // full recompute repeats it (false: after the layer's last saved tensor, see not_recomputed)
  unsigned modules = 0;  // forward: the Megatron recompute modules it belongs to (RecomputeModule bits; core_attn: the attention core)
};
struct NoRecord {};

// Builds the forward and backward work of a layer (or the edges) op by op. One walk serves both callers:
// Record = false is what layer_compute (and so the layout search) runs, allocation-free, every recording
// statement discarded at compile time; Record = true also lists each op with the time it adds (layer_ops).
template <bool Record>
struct OpBuilder {
  GemmCost linear;      // weight GEMMs, in the training precision (fp8 under Transformer Engine)
  GemmCost high;        // attention core, router, adapters, LM head: 16-bit (fp32 if training in fp32)
  double seconds_per_byte;  // memory-bound ops
  double ab;            // bytes per activation element: 2, or 4 in fp32
  double lora_rank;
  Acc fwd, bwd;         // the policy model's forward / backward
  Acc adapter_fwd;      // of which policy-only work: LoRA adapters, autocast's weight casts (not run by the DPO reference forward)
  Acc module_fwd[7];    // of which each of Megatron's recompute modules (by RecomputeModule bit; nested ones counted in both)
  unsigned open_modules = 0;  // Record: the modules the ops being added belong to
  bool track_modules = false;  // count module_fwd (selective recompute needs it; the search's other modes skip it)
  Acc synced_fwd;       // of which a per-expert loop that syncs the host once per expert (moe_loop_host_sync)
  double synced_iterations = 0;  // experts in that loop
  // Of which the work after the layer's last saved tensor, which torch.utils.checkpoint without reentrance does not
  // recompute (its early stop, on by default since PyTorch 2.1: the recompute raises _StopRecomputationError once
  // every tensor the forward saved is saved again). An aten linear saves its inputs before it runs its GEMM, so the
  // GEMM of a layer's last saving op is not rerun either (fprop_not_recomputed).
  Acc unrecomputed;
  bool fprop_not_recomputed = false;  // the next dense() call's forward GEMM is counted in unrecomputed
  bool down_not_recomputed = false;   // mlp(): so is its down projection's (the layer's last saving op)
  using OpList = std::conditional_t<Record, std::vector<RecordedOp>, NoRecord>;
  [[no_unique_address]] OpList fwd_ops, bwd_ops;  // Record: every op, forward and backward, in layer order
  bool in_adapter = false;                        // Record: the ops being added belong to an adapter
  // Framework traits: GEMMs with count > 1 run as a loop of count separate GEMMs (per-expert MoE loop), and
  // which memory-bound ops run as eager op sequences.
  bool serial_count = false;
  // Grouped GEMMs with count > 1 run as count GEMM calls from C++ over this many CUDA streams (framework
  // moe_gemm_streams: Transformer Engine's GroupedLinear 4, the grouped_gemm package's cuBLAS mode 1); 0: one
  // grouped kernel.
  double gemm_streams = 0;
  double grouped_gemm_call_s = 0;  // host time of one streamed expert GEMM call (GpuComputeTraits)
  bool serial_gemms = false;  // only the GEMMs run one per expert (grouped_mm's loop over fp32 experts)
  bool eager_rmsnorm = false, eager_rope = false, eager_activation = false;
  bool autocast_casts = false;  // fp32 parameters cast per use by torch.autocast (framework autocast_fp32_weights)
  // Bytes per element of the residual stream (norms, residual adds): ab, or 4 where full training keeps fp32
  // parameters under autocast: the embedding, the norms' weights and so the hidden states between the GEMMs are
  // fp32, and autocast casts each linear's fp32 input to 16 bits (stream_casts).
  double stream_bytes = 2;
  bool separate_projections = false;  // framework separate_projections: q/k/v and gate/up as separate GEMMs
  // HBM bytes per element of a weight-gradient GEMM's output: 0 = written once in the GEMM's own output dtype; under
  // wgrad_accumulation_fusion, read and written in the gradient buffer's dtype (8 in fp32).
  double wgrad_output_bytes = 0;
  // Gradient accumulation through autograd (autograd_accumulation_share): the share of micro-batches that add each
  // trained parameter's new gradient into .grad, and the gradient's bytes per element (its parameter's dtype).
  double grad_accumulation_share = 0, grad_accumulation_bytes = 4;
  bool trains_norms = false;  // the norms' weights train (their gradients accumulate too)

  OpBuilder(const GemmCost& linear_cost, const GemmCost& high_cost, double spb, double activation_bytes, double rank)
      : linear(linear_cost), high(high_cost), seconds_per_byte(spb), ab(activation_bytes), lora_rank(rank) {}

  // `serial`: the count GEMMs run one after another, each its own kernel filling the GPU alone (tile/wave
  // quantization per GEMM), instead of one grouped kernel sharing waves.
  // Launches of `g`: one per GEMM of a serial loop (or the one grouped kernel), each split-K GEMM two (gemm_launches);
  // a GEMM adding a bias in its epilogue is not split (cuBLASLt's bias kernels: a Qwen2 layer's biased k and v
  // projections, 256 x 256 outputs at k = 1,536, ran unsplit, calibrate/measurements/corpus/census/kernel_census-*).
  static double launches(const GemmCost& c, const GemmShape& g, bool serial, bool bias = false) {
    if (!serial && g.count > 1) return 1;
    return (serial ? g.count : 1) * (bias ? 1.0 : gemm_launches(c, g.m, g.n, g.k));
  }
  static double gemm(Acc& acc, const GemmCost& c, const GemmShape& g, bool serial = false, bool bias = false) {
    const double t = serial ? g.count * cost_time(c, {g.m, g.n, g.k, 1}) : cost_time(c, g);
    acc.gemm_s += t;
    if (!c.tensor_cores) acc.cuda_core_s += t;
    acc.gemm_flops += gemm_flops(g);
    acc.kernels += launches(c, g, serial, bias);
    return t;
  }
  // count GEMMs as separate cuBLAS calls from a C++ loop, round-robin over `streams` CUDA streams (Transformer
  // Engine's multi_stream_cublas_gemm; the grouped_gemm package's CublasGroupedGemm on one stream): up to `streams`
  // GEMMs run at once and share the SMs, so the tiles of each such round fill waves together, and each GEMM is a call
  // of its own on the host. A GEMM of few tokens per expert leaves SMs idle that one grouped kernel would fill.
  static double streamed_gemm(Acc& acc, const GemmCost& c, const GemmShape& g, double streams, double call_s, bool bias) {
    const double rounds = std::floor(g.count / streams), rest = g.count - rounds * streams;
    const double t = rounds * cost_time(c, {g.m, g.n, g.k, streams}) + (rest > 0 ? cost_time(c, {g.m, g.n, g.k, rest}) : 0.0);
    acc.gemm_s += t;
    if (!c.tensor_cores) acc.cuda_core_s += t;
    acc.gemm_flops += gemm_flops(g);
    const double n = launches(c, g, true, bias);
    acc.kernels += n, acc.cpp_launches += n, acc.cpp_gemm_host_s += g.count * call_s;
    return t;
  }
  double mem(double bytes) const { return bytes * seconds_per_byte; }

  // Record = true: lists one op. `bytes` are its HBM bytes (GEMMs: the roofline's A + B + C).
  void record([[maybe_unused]] bool backward, [[maybe_unused]] LayerOp::Kind kind, [[maybe_unused]] const OpName& name,
              [[maybe_unused]] const char* role, [[maybe_unused]] const GemmShape& g, [[maybe_unused]] Precision precision,
              [[maybe_unused]] double bytes, [[maybe_unused]] double flops, [[maybe_unused]] double seconds,
              [[maybe_unused]] bool equivalent = false, [[maybe_unused]] double kernels = 1) {
    if constexpr (Record) {
      RecordedOp r;
      r.op.name = compose(name, role);
      r.op.kind = kind;
      r.op.pass = backward ? "backward" : "forward";
      r.op.gemm = g;
      r.op.precision = precision;
      r.op.bytes = bytes;
      r.op.flops = flops;
      r.op.predicted_s = seconds;
      r.op.gemm_equivalent = equivalent;
      r.op.kernels = kernels;
      r.adapter = in_adapter && !backward;
      r.modules = backward ? 0u : open_modules;
      (backward ? bwd_ops : fwd_ops).push_back(std::move(r));
    }
  }
  void record_gemm(bool backward, LayerOp::Kind kind, const OpName& name, const char* role, const GemmCost& c, const GemmShape& g,
                   double seconds, bool serial = false, bool bias = false) {
    if constexpr (Record) {
      const double bytes = g.count * (c.operand_bytes * (g.m * g.k + g.k * g.n) + c.output_bytes * g.m * g.n);
      record(backward, kind, name, role, g, c.precision, bytes, gemm_flops(g), seconds, false, launches(c, g, serial, bias));
    }
  }
  void record_memory(bool backward, LayerOp::Kind kind, const OpName& name, const char* role, double bytes, double seconds,
                     double kernels = 1) {
    if constexpr (Record) {
      if (bytes > 0) record(backward, kind, name, role, {0, 0, 0, 0}, high.precision, bytes, 0, seconds, false, kernels);
    }
  }

  // A memory-bound op: `fwd_kernels` / `bwd_kernels` launches move its bytes (one for a fused kernel).
  void memory(const OpName& name, double fwd_bytes, double bwd_bytes, double fwd_kernels = 1, double bwd_kernels = 1) {
    const double tf = mem(fwd_bytes), tb = mem(bwd_bytes);
    fwd.memory_s += tf;
    bwd.memory_s += tb;
    if (fwd_bytes > 0) fwd.kernels += fwd_kernels;
    if (bwd_bytes > 0) bwd.kernels += bwd_kernels;
    record_memory(false, LayerOp::MemoryBound, name, "", fwd_bytes, tf, fwd_kernels);
    record_memory(true, LayerOp::MemoryBound, name, "", bwd_bytes, tb, bwd_kernels);
  }
  // Autograd's add of a micro-batch's gradients into .grad for `tensors` parameter tensors of `params` elements in
  // all (read two gradients, write one; one kernel each), on average per micro-batch: grad_accumulation_share of it.
  void accumulate_gradients(const OpName& name, double params, double tensors) {
    if (!(grad_accumulation_share > 0) || !(tensors > 0)) return;
    const double bytes = grad_accumulation_share * 3 * grad_accumulation_bytes * params, kernels = grad_accumulation_share * tensors;
    const double t = mem(bytes);
    bwd.memory_s += t;
    bwd.kernels += kernels;
    record_memory(true, LayerOp::MemoryBound, name, "grad_accumulate", bytes, t, kernels);
  }
  // An eager op sequence over `elements`, run `launches` times (a per-expert loop runs it once per expert).
  void memory(const OpName& name, double elements, const EagerCost& e, double launches = 1) {
    memory(name, e.fwd_bytes * elements, e.bwd_bytes * elements, launches * e.fwd_kernels, launches * e.bwd_kernels);
  }

  // A linear layer Y[T x out] = X[T x in] · W[in x out], `count` of them (local experts).
  // Backward: dgrad dX = dY · W^T (always: the gradient must reach earlier layers and adapters) and wgrad
  // dW = X^T · dY (only for trained weights). fp8 (Transformer Engine) casts the 16-bit input before the
  // forward GEMM and the output gradient before the backward GEMMs: read 2 + write 1 bytes per element.
  // `bias`: the layer adds a bias (its fprop's epilogue; linear_bias()).
  void dense(const OpName& name, double tokens, double in, double out, double count, bool trained, const GemmCost& c,
             Acc* also_fwd = nullptr, Acc* also_bwd = nullptr, bool bias = false) {
    if (tokens <= 0 || in <= 0 || out <= 0 || count <= 0) return;
    Acc f, b;
    const bool serial = (serial_count || serial_gemms) && count > 1;
    const bool streamed = !serial && gemm_streams > 0 && count > 1;
    // serial_gemms: each of fprop, dgrad and wgrad is one grouped_mm call, a C++ loop over the experts.
    auto priced = [&](Acc& acc, const GemmCost& cost, const GemmShape& g, bool biased) {
      if (streamed) return streamed_gemm(acc, cost, g, gemm_streams, grouped_gemm_call_s, biased);
      const double t = gemm(acc, cost, g, serial, biased);
      if (serial_gemms && serial) aten_loop(acc, t, g.count, launches(cost, g, true, biased));
      return t;
    };
    const GemmShape fprop{tokens, out, in, count}, dgrad{tokens, in, out, count}, wgrad{out, in, tokens, count};
    const bool per_gemm = serial || streamed;  // a launch per GEMM
    if (fprop_not_recomputed) {  // priced apart to be counted in unrecomputed as well
      Acc g;
      record_gemm(false, LayerOp::Gemm, name, "fprop", c, fprop, priced(g, c, fprop, bias), per_gemm, bias);
      f.add(g), unrecomputed.add(g);
      if constexpr (Record) fwd_ops.back().recomputed = false;
      fprop_not_recomputed = false;
    } else {
      record_gemm(false, LayerOp::Gemm, name, "fprop", c, fprop, priced(f, c, fprop, bias), per_gemm, bias);
    }
    record_gemm(true, LayerOp::Gemm, name, "dgrad", c, dgrad, priced(b, c, dgrad, false), per_gemm);
    if (trained) {
      GemmCost cw = c;  // the output read and written in the gradient buffer where the GEMM accumulates into it
      if (wgrad_output_bytes > 0) cw.output_bytes = wgrad_output_bytes;
      record_gemm(true, LayerOp::Gemm, name, "wgrad", cw, wgrad, priced(b, cw, wgrad, false), per_gemm);
    }
    if (trained) accumulate_gradients(name, in * out * count, serial_count ? count : 1);
    if (c.operand_bytes < 2) {  // fp8
      const double fb = 3 * tokens * in * count, bb = 3 * tokens * out * count;
      const double tf = mem(fb), tb = mem(bb), casts = serial ? count : 1;
      f.memory_s += tf;
      b.memory_s += tb;
      f.kernels += casts;
      b.kernels += casts;
      record_memory(false, LayerOp::MemoryBound, name, "fp8_cast", fb, tf, casts);
      record_memory(true, LayerOp::MemoryBound, name, "fp8_cast", bb, tb, casts);
    }
    if (autocast_casts && trained) {
      // torch.autocast over fp32 parameters: the weight cast to 16 bits in every forward (read 4, write 2 bytes per
      // parameter) and its gradient cast back to fp32 in backward (read 2, write 4). The frozen 16-bit DPO reference
      // casts nothing: counted with the policy-only forward work (adapter_fwd).
      const double weights = in * out * count, tf = mem(6 * weights), tb = mem(6 * weights), casts = serial ? count : 1;
      f.memory_s += tf, f.kernels += casts;
      b.memory_s += tb, b.kernels += casts;
      if (also_fwd != &adapter_fwd) adapter_fwd.memory_s += tf, adapter_fwd.kernels += casts;
      const bool was = in_adapter;
      in_adapter = true;
      record_memory(false, LayerOp::MemoryBound, name, "autocast_cast", 6 * weights, tf, casts);
      in_adapter = was;
      record_memory(true, LayerOp::MemoryBound, name, "autocast_cast", 6 * weights, tb, casts);
    }
    fwd.add(f), bwd.add(b);
    if (also_fwd) also_fwd->add(f);
    if (also_bwd) also_bwd->add(b);
    if (bias) linear_bias(name, tokens, out, count, trained);
  }

  // A product of two activations priced as a linear layer whose second operand takes a gradient too (linear
  // attention's chunked delta rule): both operands' gradients, and no parameter whose gradient accumulates.
  void activation_gemm(const OpName& name, double tokens, double in, double out, double count, const GemmCost& c) {
    const double share = grad_accumulation_share;
    grad_accumulation_share = 0;
    dense(name, tokens, in, out, count, true, c);
    grad_accumulation_share = share;
  }

  // LoRA adapter on a linear layer with per-GPU dims in x out (PEFT: y += B·A·x · alpha/r): X·A (in x r)
  // then ·B (r x out), both trained; the scaled adapter output is added to the base output (scale: read +
  // write, add: read two + write one per output element) and the input gradients are summed in backward.
  // Under tensor parallelism a column-parallel layer keeps A whole and splits B, a row-parallel one splits A
  // and keeps B whole: callers pass the full input (column) or full output (row) dimension.
  // Under autocast (fp32 adapters, autocast_casts) PEFT casts the input to the adapter's dtype
  // (LoraLayer._cast_input_dtype: read ab, write 4 per input element) and autocast casts it back to 16 bits for
  // lora_A (read 4, write ab), both undone in backward; the scaling and the add are two kernels (profiled on an
  // H100 with peft 0.21: 102 forward kernels per Llama layer with seven adapters against 49 without,
  // calibrate/measurements/corpus/census).
  void lora(const char* group, const char* module, double tokens, double in, double out, double count) {
    if (lora_rank <= 0) return;
    if constexpr (Record) in_adapter = true;
    dense({group, module, "a"}, tokens, in, lora_rank, count, true, high, &adapter_fwd);
    dense({group, module, "b"}, tokens, lora_rank, out, count, true, high, &adapter_fwd);
    const double round_trip = autocast_casts ? 2 * (ab + 4) * tokens * in * count : 0.0;
    const double f = (2 + 3) * ab * tokens * out * count + round_trip, b = 2 * ab * tokens * out * count + 3 * ab * tokens * in * count + round_trip;
    const double ft = mem(f), bt = mem(b), casts = autocast_casts ? 2 : 0;
    fwd.memory_s += ft, adapter_fwd.memory_s += ft;
    bwd.memory_s += bt;
    fwd.kernels += 2 + casts, adapter_fwd.kernels += 2 + casts;
    bwd.kernels += 1 + casts;
    record_memory(false, LayerOp::MemoryBound, {group, module, "add"}, "", f, ft, 2 + casts);
    record_memory(true, LayerOp::MemoryBound, {group, module, "add"}, "", b, bt, 1 + casts);
    if constexpr (Record) in_adapter = false;
  }

  // Runs `body`, counting the forward work it adds towards recompute module `bit` (sections may nest).
  template <class Body>
  void module(unsigned bit, Body&& body) {
    if (bit == 0 || (!Record && !track_modules)) return body();
    const Acc before = fwd;
    const unsigned open = open_modules;
    open_modules |= bit;
    body();
    open_modules = open;
    Acc added = fwd;
    added.add(before, -1);
    module_fwd[std::countr_zero(bit)].add(added);
  }

  // Runs `body`, whose forward work full recompute through torch.utils.checkpoint does not repeat (unrecomputed).
  template <class Body>
  void not_recomputed(Body&& body) {
    const Acc before = fwd;
    [[maybe_unused]] const std::size_t first = recorded_forward_ops();
    body();
    Acc added = fwd;
    added.add(before, -1);
    unrecomputed.add(added);
    if constexpr (Record)
      for (std::size_t i = first; i < fwd_ops.size(); ++i) fwd_ops[i].recomputed = false;
  }
  std::size_t recorded_forward_ops() const {
    if constexpr (Record) return fwd_ops.size();
    else return 0;
  }

  // Norm: read x, write y (forward); read x and dy, write dx (backward). Per element of the residual stream, or, for
  // the norms inside attention (Qwen3's per-head q and k norms, MLA's latent norms), of a projection's output: those
  // read the GEMM's 16-bit output whatever the stream (input_bytes = ab), so an eager RMSNorm casts it to fp32 and back
  // (transformers Qwen3Attention: q_norm(q_proj(x))). An eager RMSNorm is the op sequence above; LayerNorm is one aten
  // kernel in eager PyTorch as well.
  // `tensors`: separate norm modules over the elements (Qwen3's q_norm and k_norm: two), each its own launches.
  // `weights`: each norm module's weight elements (their gradients accumulate where the norms train).
  void norm(const OpName& name, double elements, double weights, double input_bytes = 0, double tensors = 1) {
    const double io = input_bytes > 0 ? input_bytes : stream_bytes;
    if (eager_rmsnorm) memory(name, elements, eager_rmsnorm_cost(io), tensors);
    else memory(name, 2 * io * elements, 3 * io * elements, tensors, tensors);
    if (trains_norms) accumulate_gradients(name, tensors * weights, tensors);
  }
  // RoPE on the query and key elements (two tensors): fused, read and write once each way, one kernel per
  // tensor; eager, the op sequence of eager_rope_cost per tensor. Over an fp32 stream the eager sequence multiplies
  // by fp32 cos/sin (transformers' rotary embedding returns them in the hidden states' dtype), so q and k come out
  // fp32 and autocast casts them back to 16 bits for the attention kernel: two casts each way (the policy's only).
  // Its backward then hands fp32 gradients of q·cos and rotate_half(q)·sin to 16-bit q: autograd casts each to q's
  // dtype (the engine's validate_outputs), two casts per tensor (read 4, write ab).
  void rope(const OpName& name, double elements) {
    if (!eager_rope) return memory(name, 2 * ab * elements, 2 * ab * elements, 2, 2);
    const bool fp32 = stream_bytes > ab;
    memory(name, elements, eager_rope_cost(fp32 ? stream_bytes : ab), 2);
    if (fp32) {
      policy_only_memory({name.group, name.module, "cast"}, (stream_bytes + ab) * elements, (ab + stream_bytes) * elements, 2, 2);
      memory({name.group, name.module, "grad_cast"}, 0, 2 * (stream_bytes + ab) * elements, 0, 4);
    }
  }
  // Residual add: read two, write one; backward sums the two incoming gradients the same way. Over an fp32 stream
  // the branch's output is 16-bit (autocast's GEMM), so its gradient is cast to it (read 4, write ab): one more kernel.
  void residual(const OpName& name, double elements) {
    const double cast = stream_bytes > ab ? (stream_bytes + ab) * elements : 0.0;
    memory(name, 3 * stream_bytes * elements, 3 * stream_bytes * elements + cast, 1, cast > 0 ? 2 : 1);
  }
  // Biases of `count` linear layers with `out` outputs each over `tokens` tokens (Qwen2's q, k, v): the GEMM adds
  // them in its epilogue (cuBLASLt's bias kernels), so forward costs only autocast's cast of an fp32 bias (a kernel,
  // no bytes to speak of; the policy's only), and backward reduces the output gradient over the tokens (read ab per
  // output element, one kernel) and casts it back to fp32. Profiled on an H100 (calibrate/measurements/corpus/census/
  // kernel_census-*: a Qwen2 layer launched 3 more forward kernels and 6 more backward than a Llama layer of its size).
  void linear_bias(const OpName& name, double tokens, double out, double count, bool trained) {
    if (tokens <= 0 || out <= 0 || count <= 0) return;
    const bool casts = autocast_casts && trained;
    const double launches = serial_count ? count : 1;  // a per-expert loop: each expert's own
    if (casts) policy_only_memory({name.group, name.module, "bias_cast"}, 6 * out * count, 0, launches, 0);
    if (trained) memory({name.group, name.module, "bias_grad"}, 0, ab * tokens * out * count + (casts ? 6 * out * count : 0), 0, (casts ? 2 : 1) * launches);
    if (trained) accumulate_gradients(name, out * count, launches);
  }
  // Autocast's casts of an fp32 stream (stream_bytes 4) to 16 bits for each of `consumers` linear layers reading
  // it (q, k, v: three): read 4, write ab per element each; backward casts each input gradient back (read ab, write
  // 4) and sums the consumers' gradients (read 8, write 4 per extra consumer). Nothing over a 16-bit stream.
  // Policy-only work: the frozen 16-bit DPO reference has a 16-bit stream and casts nothing (adapter_fwd).
  void stream_casts(const OpName& name, double elements, double consumers) {
    if (stream_bytes <= ab || consumers <= 0) return;
    const double cast = (stream_bytes + ab) * elements;
    policy_only_memory(name, consumers * cast, consumers * cast + (consumers - 1) * 3 * stream_bytes * elements, consumers, 2 * consumers - 1);
  }
  // A memory-bound op the policy runs and the DPO reference forward does not (counted in adapter_fwd as well).
  void policy_only_memory(const OpName& name, double fwd_bytes, double bwd_bytes, double fwd_kernels, double bwd_kernels) {
    const bool was = in_adapter;
    in_adapter = true;
    memory(name, fwd_bytes, bwd_bytes, fwd_kernels, bwd_kernels);
    in_adapter = was;
    adapter_fwd.memory_s += mem(fwd_bytes);
    adapter_fwd.kernels += fwd_kernels;
  }
  // Dropout: read x, write y and a 1-byte mask; backward reads dy and the mask, writes dx.
  void dropout(const OpName& name, double elements) { memory(name, (2 * ab + 1) * elements, (2 * ab + 1) * elements); }

  // MLP on `tokens` tokens with per-GPU inner size f, `count` copies (local experts).
  // `act_module`: the recompute module the activation function belongs to (0: none of its own).
  void mlp(const char* group, const ModelSpec& m, const LoraTargets& l, double tokens, double f, double count, bool trained,
           unsigned act_module = 0) {
    if (tokens <= 0 || f <= 0 || count <= 0) return;
    const double h = m.hidden_size;
    const double launches = serial_count ? count : 1;  // memory-bound kernels of a per-expert loop: one per expert
    if (m.mlp == MlpKind::Gated) {
      // Gate and up projections as one GEMM; a per-expert loop runs the modeling code's expert module, whose
      // gate_proj and up_proj are two Linear layers (transformers Qwen3MoeMLP / MixtralBlockSparseTop2MLP), as
      // do the frameworks with separate_projections.
      if (serial_count || (separate_projections && count == 1)) {
        dense({group, "gate"}, tokens, h, f, count, trained, linear, nullptr, nullptr, m.mlp_bias);
        dense({group, "up"}, tokens, h, f, count, trained, linear, nullptr, nullptr, m.mlp_bias);
      } else {
        dense({group, "gate_up"}, tokens, h, 2 * f, count, trained, linear, nullptr, nullptr, m.mlp_bias);
      }
      if (l.gate) lora(group, "gate_lora", tokens, h, f, count);
      if (l.up) lora(group, "up_lora", tokens, h, f, count);
      // SwiGLU/GeGLU: read gate and up, write the product; backward reads gate, up, dy and writes two grads.
      // Eager: the activation and the product as separate ops (eager_gated_activation).
      module(act_module, [&] {
        if (eager_activation) memory({group, "act"}, tokens * f * count, eager_gated_activation_cost(ab), launches);
        else memory({group, "act"}, 3 * ab * tokens * f * count, 5 * ab * tokens * f * count, launches, launches);
      });
    } else {
      dense({group, "up"}, tokens, h, f, count, trained, linear, nullptr, nullptr, m.mlp_bias);
      if (l.up) lora(group, "up_lora", tokens, h, f, count);
      module(act_module, [&] {  // GeLU: read x, write y; backward x, dy -> dx
        memory({group, "act"}, 2 * ab * tokens * f * count, 3 * ab * tokens * f * count, launches, launches);
      });
    }
    fprop_not_recomputed = down_not_recomputed;
    dense({group, "down"}, tokens, f, h, count, trained, linear, nullptr, nullptr, m.mlp_bias);
    if (l.down) lora(group, "down_lora", tokens, f, h, count);
  }
};

}  // namespace trainsim::compute_detail
