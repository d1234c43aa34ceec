#include "compute.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "calibration.hpp"
#include "linear_attention.hpp"
#include "recompute_policy.hpp"
#include "transformer.hpp"

namespace trainsim {

namespace {
double dd(int v) { return static_cast<double>(v); }

// ---- GEMM ceilings ------------------------------------------------------------------------------
// Each GPU preset carries its published GEMM measurement (presets/gpus.json, gemm_published: the best achieved
// bf16 GEMM over swept large shapes, "MAMF", stas00/ml-engineering, as in ../shared/reference/microbenchmarks.json
// gemm_bf16_mamf). GPUs without one take the mean ceiling of those rows, computed from the presets:
// A100 SXM 267.9/312 (quantization 1 at its shape), A100 PCIe 256.4/312, H100 SXM 792.1/989.4, GH200 821.0/989.4,
// B200 1745/2250, MI300X 781.9/1307.4, each with its own shape's tile/wave quantization divided out (0.781).
constexpr double kCeilMean = 0.7991;
// FlashAttention-2's efficiencies below were measured on an A100 SXM, whose MAMF shape 6912x16384x2048 fills
// whole waves of 128x128 tiles on 108 SMs (quantization 1): its ceiling 267.9 / 312 is their reference.
constexpr double kCeilA100Sxm = 267.9 / 312.0;

// ---- HBM: achievable fraction of the datasheet bandwidth ------------------------------------------
// GPUs whose preset has no measured device-to-device copy take the mean fraction of those that do
// (H100 80GB HBM3 ~3.0 TB/s of 3.35; H200 ~4.3 TB/s of 4.8: microbenchmarks.json pytorch_measurements).
constexpr double kHbmMean = (3.0 / 3.35 + 4.3 / 4.8) / 2.0;

// ---- Fused attention ------------------------------------------------------------------------------
// Ampere (and, scaled by GEMM ceiling, every GPU without a table): FlashAttention-2 (Dao 2023,
// arXiv:2307.08691) reaches "50-73% of the theoretical maximum FLOPs/s on A100" (abstract); §4.1: forward
// up to 73%, backward up to 63%. We take the middle of the stated range for the forward pass and the
// paper's backward/forward peak ratio (63/73) for the backward pass; the paper's per-length bars are not
// reproduced. The abstract also notes FlashAttention-2 gets "close to the efficiency of GEMM operations",
// which is why other GPUs scale these fractions by their GEMM ceiling relative to the A100's.
constexpr double kFa2Forward = (0.50 + 0.73) / 2.0;            // 0.615
constexpr double kFa2Backward = kFa2Forward * 63.0 / 73.0;     // 0.531
// Hopper: cuDNN fused attention (the default fused-attention backend of Transformer Engine and of PyTorch
// SDPA on H100), causal, head dim 128, as measured on H100 SXM5 by Shah et al. 2024 (FlashAttention-3,
// arXiv:2407.08608), Fig. 5 (forward, causal) and Fig. 6 (backward; published without causal masking),
// TFLOP/s at sequence lengths 512..16k, over the 989 TFLOP/s bf16 dense peak. cuDNN sits between
// FlashAttention-2 on H100 (335 TFLOP/s at best, "35% utilization") and FlashAttention-3 (up to 616 causal).
constexpr double kHopperSeqLog2[6] = {9, 10, 11, 12, 13, 14};
constexpr double kHopperFwdTflops[6] = {315, 410, 484, 518, 529, 539};
constexpr double kHopperBwdTflops[6] = {305, 408, 465, 499, 518, 516};
constexpr double kHopperTablePeak = 989;
// FlashAttention-2 on Hopper (the flash-attn package, PyTorch SDPA's flash backend) runs without Hopper's
// wgmma/TMA: measured on an H100 SXM (calibrate/measurements/h100-sxm-80gb-2026-11-22/torch_microbench.json,
// PyTorch 2.11), flash over cuDNN forward and backward at 4K-16K tokens per sequence (GQA and MHA, 8 pairs):
// 0.508-0.623, mean 0.558. Dao 2023 §4.1 agrees: FA2 "up to 335 TFLOP/s" on H100 against the table's 539.
constexpr double kFlash2OverFusedHopper = 0.558;

// FlashAttention-2's backward pass runs 5 matmuls against the forward's 2: 2.5x the FLOPs (Dao 2023, §4.1 FLOP
// count); causal masking skips fully masked blocks in both (attended_key_fraction, transformer.hpp).
constexpr double kFlashBackwardFlops = 2.5;
// Kernels of the fused attention backward beside the main one: FlashAttention-2 launches dot(dO, O), the
// dq/dk/dv kernel and the dq conversion (flash-attention csrc flash_bwd_launch_template.h); cuDNN's SDPA backward,
// profiled on an H100 with PyTorch 2.11, compute_dot_do_o, the bprop kernel, convert_dq_to_16bits and two
// fmha_reduce_head (calibrate/measurements/corpus/census). The forward is one kernel either way.
constexpr double kFlash2BackwardKernels = 3, kCudnnBackwardKernels = 5;

// A per-expert MoE loop (transformers Qwen3MoeSparseMoeBlock / MixtralSparseMoeBlock.forward) launches, per
// expert and beside the expert MLP's GEMMs and activation: torch.where on the routing mask (nonzero's count,
// scan and select), the indexing of the mask, the hidden states and the routing weights, the scaling multiply
// and index_add_; backward: index_select for index_add_, the multiply's two products and the weight gradient's
// reduction, a sorted index_put for each indexing, and the accumulation of every expert's input gradient.
// Profiled on an H100 with PyTorch 2.11 (calibrate/measurements/h100-sxm-80gb-2026-11-23, torch_moe_block.json,
// loop at 8192 tokens): 2,064 kernels forward and 4,625 backward for 128 experts, 16 and 36 per expert, less the
// expert MLP's 5 and 9.
constexpr double kLoopRoutingKernelsForward = 11, kLoopRoutingKernelsBackward = 27;

// QLoRA's NF4 weights (spec.hpp kNf4BytesPerParam) are dequantized to 16 bits before every forward and backward
// GEMM (bitsandbytes).

// ---- Eager (unfused) op sequences, HBM bytes per element and kernels ---------------------------------
// Where a framework runs the reference modeling code in eager PyTorch instead of a fused kernel, every torch
// op reads its inputs and writes its output through HBM and is a kernel of its own; autograd runs one
// backward kernel per op, reading the op's saved input and its output gradient and writing its input
// gradient. ab = bytes of a 16-bit (or fp32) activation, 4 = an fp32 intermediate.
// RMSNorm (transformers/models/llama/modeling_llama.py LlamaRMSNorm): cast to fp32 (ab+4), pow 2 (4+4),
// mean (4), mul by rsqrt (4+4), cast back (4+ab), mul weight (ab+ab), plus eps add and rsqrt on the per-token
// vector (no bytes to speak of): 8 kernels. Backward: mul weight (dx 2ab, dweight reduction reads 2ab), cast
// (ab+4), mul (8, and its rsqrt-factor reduction reads 8), rsqrt/add/mean on the vector then an expand (4),
// pow (read 8, write 4), the sum of x's two gradient paths (read 8, write 4), cast (4+ab): 11 kernels.
// fp32 training has no casts (.to(float32) of an fp32 tensor is free): 6 and 9 kernels.
struct EagerCost {
  double fwd_bytes, bwd_bytes, fwd_kernels, bwd_kernels;
};
EagerCost eager_rmsnorm_cost(double ab) {
  const bool casts = ab < 4;
  const double cast = casts ? ab + 4 : 0;
  return {cast + 8 + 4 + 8 + cast + 2 * ab, 4 * ab + cast + 16 + 4 + 12 + 12 + cast, casts ? 8.0 : 6.0, casts ? 11.0 : 9.0};
}
// RoPE (modeling_llama.py apply_rotary_pos_emb: x·cos + rotate_half(x)·sin), per element of q or k:
// rotate_half = neg of one half (ab) + cat (2ab), ·cos (2ab), ·sin (2ab), add (3ab): 10ab, 5 kernels per
// tensor (cos/sin are per token, shared by the heads: not counted). Backward: g·cos (2ab), g·sin (2ab), neg
// of a half (ab), the sum of the two paths (3ab), and the backward of each half's slice (x[..., :d/2]) as a
// zero fill of the whole gradient and a copy into its half (ab + 2ab for the two): 11ab, 8 kernels (profiled on
// an H100, transformers 5.17 Llama layer: two fills and two copies per tensor, calibrate/measurements/corpus/
// census). Fused (Transformer Engine, flash-attn's rotary): read and write once each way, one kernel per tensor.
EagerCost eager_rope_cost(double ab) { return {10 * ab, 11 * ab, 5, 8}; }
// Gated MLP activation (modeling_llama.py LlamaMLP act_fn(gate) * up), per element of the inner size:
// silu (2ab) then the product (3ab): 5ab, 2 kernels. Backward: d_up = g·silu(gate) (3ab), d_silu = g·up
// (3ab), silu backward (3ab): 9ab, 3 kernels. Fused (Megatron bias-SwiGLU): 3ab and 5ab, one kernel each.
// A plain GeLU is one kernel in eager PyTorch as well: the same either way.
EagerCost eager_gated_activation_cost(double ab) { return {5 * ab, 9 * ab, 2, 3}; }

// Smallest tile edge: the 16-row/column granularity of the tensor-core MMA shapes (PTX ISA mma.m16n8k16);
// cuBLAS picks narrower tiles for skinny operands instead of padding them to 128.
constexpr double kMinTileEdge = 16;

// ceil for the non-negative, far-below-2^63 values here, without a libm call (the search's hot path).
double ceil_pos(double x) {
  const double t = static_cast<double>(static_cast<long long>(x));
  return t < x ? t + 1 : t;
}
// ceil(a / b) given 1/b: the product may land a rounding error above an exact integer quotient.
double ceil_div(double a, double inv_b) { return ceil_pos(a * inv_b - 1e-9); }

// A GEMM cost model for one GPU and precision, with every division done once.
struct GemmCost {
  double seconds_per_flop = 0;   // 1 / (dense peak x ceiling); 1 / dense peak when `fit` gives the ceiling
  const GemmEfficiencyFit* fit = nullptr;  // calibration profile: measured ceiling at the shape
  double seconds_per_byte = 0;   // 1 / (HBM bandwidth x achievable fraction)
  double operand_bytes = 2, output_bytes = 2;
  double sms = 0, inv_sms = 0, tm = 0, tn = 0, inv_tm = 0, inv_tn = 0;  // sms = 0: no quantization
  Precision precision = Precision::Bf16;  // the dtype the GEMM runs in (layer_ops reports it)
};

// Output area the GPU actually computes: waves x SMs x tile area, for one tile orientation. A dimension
// smaller than the tile gets a tile of its own size rounded up to the MMA edge (one tile along it).
double padded_area(const GemmCost& c, const GemmShape& g, double tm, double inv_tm, double tn, double inv_tn) {
  double em = tm, tiles_m = 1, en = tn, tiles_n = 1;
  if (g.m < tm) em = ceil_div(g.m, 1 / kMinTileEdge) * kMinTileEdge;
  else tiles_m = ceil_div(g.m, inv_tm);
  if (g.n < tn) en = ceil_div(g.n, 1 / kMinTileEdge) * kMinTileEdge;
  else tiles_n = ceil_div(g.n, inv_tn);
  const double tiles = tiles_m * tiles_n * ceil_pos(g.count);
  return ceil_div(tiles, c.inv_sms) * c.sms * em * en;
}

double padded_area(const GemmCost& c, const GemmShape& g) {
  if (c.sms <= 0) return g.m * g.n * g.count;
  double area = padded_area(c, g, c.tm, c.inv_tm, c.tn, c.inv_tn);
  if (c.tm != c.tn) area = std::min(area, padded_area(c, g, c.tn, c.inv_tn, c.tm, c.inv_tm));  // transposed tile
  return area;
}

double cost_time(const GemmCost& c, const GemmShape& g) {
  if (g.m <= 0 || g.n <= 0 || g.k <= 0 || g.count <= 0) return 0;
  // Compute: every wave takes as long as one tile's 2·k·tile-area FLOPs at the per-SM rate, i.e.
  // FLOPs / (peak x ceiling x quantization) with quantization = m·n·count / padded area.
  double compute = 2 * g.k * padded_area(c, g) * c.seconds_per_flop;
  if (c.fit) compute /= c.fit->ceiling(g.m, g.n, g.k);  // measured ceiling (calibration.hpp), same quantization
  // Roofline: A and B read, C written once.
  const double memory = g.count * (c.operand_bytes * (g.m * g.k + g.k * g.n) + c.output_bytes * g.m * g.n) * c.seconds_per_byte;
  return std::max(compute, memory);
}

double interpolate_log2(const double (&x)[6], const double (&y)[6], double v) {
  if (v <= x[0]) return y[0];
  if (v >= x[5]) return y[5];
  for (int i = 1; i < 6; ++i) {
    if (v <= x[i]) {
      const double w = (v - x[i - 1]) / (x[i] - x[i - 1]);
      return y[i - 1] + w * (y[i] - y[i - 1]);
    }
  }
  return y[5];
}
}  // namespace

GpuComputeTraits gpu_compute_traits(const GpuSpec& gpu) {
  GpuComputeTraits tr;
  tr.sms = gpu.sms;
  tr.tile_m = gpu.gemm_tile_m, tr.tile_n = gpu.gemm_tile_n;
  tr.hbm_fraction = gpu.hbm_copy_bandwidth > 0 && gpu.memory_bandwidth > 0 ? gpu.hbm_copy_bandwidth / gpu.memory_bandwidth : kHbmMean;
  tr.hopper_attention_table = gpu.fused_attention == "hopper-cudnn";
  // Published GEMM points: with a shape, a GemmEfficiencyFit (the measurement with its own shape's quantization
  // divided out, as a calibration profile's point); without one, a shape-independent fraction of the peak.
  // 16-bit points set every precision's ceiling (fp8 and tf32 GEMMs: the same fraction of their own peaks).
  std::vector<GemmShape> shapes;
  std::vector<double> efficiencies, quantization;
  double unshaped = 0;
  int unshaped_count = 0;
  for (const auto& pg : gpu.gemm_published) {
    const double peak = gemm_peak_flops(gpu, pg.precision);
    const double eff = pg.tflops > 0 && peak > 0 ? pg.tflops * 1e12 / peak : pg.efficiency;
    if (!(eff > 0)) continue;
    if (pg.m > 0 && pg.n > 0 && pg.k > 0) {
      shapes.push_back({pg.m, pg.n, pg.k, 1});
      efficiencies.push_back(eff);
      quantization.push_back(gemm_quantization(tr, shapes.back()));
    } else {
      unshaped += eff;
      ++unshaped_count;
    }
  }
  if (!shapes.empty()) {
    tr.published_fit = std::make_shared<const GemmEfficiencyFit>(shapes, efficiencies, quantization);
    for (auto& f : tr.gemm_fit) f = tr.published_fit.get();
    tr.gemm_ceiling = (tr.published_fit->min_ceiling() + tr.published_fit->max_ceiling()) / 2;
    tr.gemm_row = "published: " + std::to_string(shapes.size()) + " GEMM point" + (shapes.size() > 1 ? "s" : "") + " of " + gpu.name;
  } else if (unshaped_count > 0) {
    tr.gemm_ceiling = unshaped / unshaped_count;
    tr.gemm_row = "published: the best GEMM of " + gpu.name + " (no shape)";
  } else {
    tr.gemm_ceiling = kCeilMean;
  }
  tr.attention_scale = tr.gemm_ceiling / kCeilA100Sxm;
  apply_fitted_parameters(tr, gpu, shipped_fitted_parameters().values);
  return tr;
}

double power_limited_fraction(double tdp_watts, double flops_per_s, double energy_pj_per_flop) {
  const double power = energy_pj_per_flop * 1e-12 * flops_per_s;
  if (!(tdp_watts > 0) || !(power > tdp_watts)) return 1.0;
  return std::cbrt(tdp_watts / power);
}

void apply_fitted_parameters(GpuComputeTraits& tr, const GpuSpec& gpu, const FittedParameters& params) {
  // The GEMMs' power: the 16-bit rate they reach at the top clock (ceiling x peak). Every precision draws the
  // same power at the same clock (fp8 doubles the rate per watt, tf32 halves it: NVIDIA's datasheet peaks at
  // one TDP), so the clock fraction holds for all of them.
  tr.tensor_slowdown = 1 / power_limited_fraction(gpu.tdp_watts, tr.gemm_ceiling * gemm_peak_flops(gpu, Precision::Bf16),
                                                  params.tensor_energy_pj_per_flop);
  tr.memory_kernel_efficiency = params.memory_kernel_efficiency;
  tr.checkpoint_hook_s = params.checkpoint_hook_us * 1e-6;
}

double gemm_flops(const GemmShape& g) { return 2 * g.m * g.n * g.k * g.count; }

double gemm_peak_flops(const GpuSpec& gpu, Precision p) {
  double peak = gpu.peak_flops(p);
  if (peak <= 0) peak = gpu.flops_bf16 > 0 ? gpu.flops_bf16 : gpu.flops_fp16;  // e.g. fp8 on an A100
  if (peak <= 0) peak = gpu.flops_fp32;
  return peak;
}

namespace {
GemmCost gemm_cost(const GpuSpec& gpu, const GpuComputeTraits& tr, Precision p) {
  GemmCost c;
  c.fit = tr.gemm_fit[static_cast<int>(p)];
  c.precision = p;
  c.seconds_per_flop = tr.tensor_slowdown / (gemm_peak_flops(gpu, p) * (c.fit ? 1.0 : tr.gemm_ceiling));
  c.seconds_per_byte = 1 / (gpu.memory_bandwidth * tr.hbm_fraction);
  c.operand_bytes = bytes_per_element(p);
  c.output_bytes = p == Precision::Fp8 ? 2.0 : c.operand_bytes;  // fp8 GEMMs write 16-bit outputs (Transformer Engine)
  if (tr.sms > 0 && tr.tile_m > 0 && tr.tile_n > 0) {
    c.sms = tr.sms, c.inv_sms = 1 / c.sms;
    c.tm = tr.tile_m, c.tn = tr.tile_n, c.inv_tm = 1 / c.tm, c.inv_tn = 1 / c.tn;
  }
  return c;
}

// fp32 GEMMs on the CUDA cores (FFMA): PyTorch's default for fp32 matmuls (torch.backends.cuda.matmul.allow_tf32
// is False), at the GPU's fp32 peak and the tensor-core GEMM ceiling (no shaped fit: the tf32 one does not apply).
GemmCost cuda_core_fp32_cost(const GpuSpec& gpu, const GpuComputeTraits& tr) {
  GemmCost c = gemm_cost(gpu, tr, Precision::Fp32);
  if (gpu.flops_fp32 <= 0) return c;
  c.fit = nullptr;
  c.seconds_per_flop = tr.tensor_slowdown / (gpu.flops_fp32 * tr.gemm_ceiling);
  return c;
}
}  // namespace

double gemm_bytes(Precision p, const GemmShape& g) {
  const double operand = bytes_per_element(p);
  const double output = p == Precision::Fp8 ? 2.0 : operand;
  return g.count * (operand * (g.m * g.k + g.k * g.n) + output * g.m * g.n);
}

double gemm_quantization(const GpuComputeTraits& tr, const GemmShape& g) {
  if (tr.sms <= 0 || g.m <= 0 || g.n <= 0 || g.count <= 0) return 1.0;
  GemmCost c;
  c.sms = tr.sms, c.inv_sms = 1 / c.sms;
  c.tm = tr.tile_m, c.tn = tr.tile_n, c.inv_tm = 1 / c.tm, c.inv_tn = 1 / c.tn;
  return g.m * g.n * g.count / padded_area(c, g);
}

double memory_bound_time(const GpuSpec& gpu, const GpuComputeTraits& tr, double bytes) {
  if (bytes <= 0) return 0;
  return bytes / (gpu.memory_bandwidth * tr.hbm_fraction * tr.memory_kernel_efficiency);
}

double memory_bound_time(const GpuSpec& gpu, double bytes) { return memory_bound_time(gpu, gpu_compute_traits(gpu), bytes); }

double gemm_time(const GpuSpec& gpu, const GpuComputeTraits& tr, Precision p, const GemmShape& g) {
  return cost_time(gemm_cost(gpu, tr, p), g);
}

double gemm_time(const GpuSpec& gpu, Precision p, const GemmShape& g) { return gemm_time(gpu, gpu_compute_traits(gpu), p, g); }

double gemm_efficiency(const GpuSpec& gpu, const GpuComputeTraits& tr, Precision p, const GemmShape& g) {
  const double time = gemm_time(gpu, tr, p, g);
  if (time <= 0) return tr.gemm_ceiling;
  return gemm_flops(g) / (time * gemm_peak_flops(gpu, p));
}

double gemm_efficiency(const GpuSpec& gpu, Precision p, const GemmShape& g) {
  return gemm_efficiency(gpu, gpu_compute_traits(gpu), p, g);
}

double flash_attention_efficiency(const GpuComputeTraits& tr, double seq_len, bool backward, AttentionKernel kernel) {
  if (tr.hopper_attention_table) {
    const double l = std::log2(std::max(seq_len, 1.0));
    const double fused = interpolate_log2(kHopperSeqLog2, backward ? kHopperBwdTflops : kHopperFwdTflops, l) / kHopperTablePeak;
    return (kernel == AttentionKernel::Flash2 ? fused * kFlash2OverFusedHopper : fused) / tr.tensor_slowdown;
  }
  return (backward ? kFa2Backward : kFa2Forward) * tr.attention_scale / tr.tensor_slowdown;
}

namespace {

// Time and FLOPs of a group of ops, split into GEMMs, attention core and memory-bound ops.
struct Acc {
  double gemm_s = 0, attention_s = 0, memory_s = 0;
  double gemm_flops = 0, attention_flops = 0;
  double kernels = 0;  // kernel launches
  double hook_s = 0;   // host time beside the launches (ZeRO-3's per-module fetch hooks)
  double time() const { return gemm_s + attention_s + memory_s; }
  double flops() const { return gemm_flops + attention_flops; }
  void add(const Acc& o, double times = 1) {
    gemm_s += times * o.gemm_s, attention_s += times * o.attention_s, memory_s += times * o.memory_s;
    gemm_flops += times * o.gemm_flops, attention_flops += times * o.attention_flops;
    kernels += times * o.kernels, hook_s += times * o.hook_s;
  }
  double host(double gap_s) const { return kernels * gap_s + hook_s; }
  // The GPU waits for the host where issuing this pass's kernels takes longer than running them. A
  // kernel cannot start before it is launched, and the host launches ahead of the GPU, so per pass
  // time = max(GPU time, host time); the layers of a stage are alike, so the per-layer max is the stack's.
  double host_exposed(double gap_s) const { return std::max(0.0, host(gap_s) - time()); }
};

// The host time a pass exposes when part of it, `loop` (the forward of a per-expert MoE loop, `iterations`
// experts), synchronises the host with the GPU once per expert: the GPU drains at each sync, so each
// expert's kernels run at the pace of their launches (max(kernels x gap, gap + GPU time): the first launch
// after a sync is always exposed), while the rest of the pass launches ahead as host_exposed says.
double host_exposed_with_syncs(const Acc& pass, const Acc& loop, double iterations, double gap_s) {
  if (iterations <= 0 || loop.kernels <= 0) return pass.host_exposed(gap_s);
  Acc rest = pass;
  rest.add(loop, -1);
  const double per_expert = std::max((loop.host(gap_s) - loop.time()) / iterations, gap_s);
  return rest.host_exposed(gap_s) + iterations * per_expert;
}

// Which LoRA target modules are adapted (PEFT names, as in lora_parameters).
struct LoraTargets {
  bool q = false, k = false, v = false, o = false, gate = false, up = false, down = false;
};
LoraTargets lora_targets(const TrainingSpec& t) {
  LoraTargets l;
  if (!t.uses_adapters()) return l;
  for (const auto& name : t.lora.target_modules) {
    if (name == "q_proj") l.q = true;
    else if (name == "k_proj") l.k = true;
    else if (name == "v_proj") l.v = true;
    else if (name == "o_proj") l.o = true;
    else if (name == "gate_proj") l.gate = true;
    else if (name == "up_proj") l.up = true;
    else if (name == "down_proj") l.down = true;
  }
  return l;
}

// Parameter-holding modules of a decoder layer in the Hugging Face modeling code, which DeepSpeed ZeRO-3 fetches
// one by one from its module hooks: `outside` the expert loop (norms, attention projections, dense MLP or
// router and shared expert) and `per_expert` (the expert MLP's Linears). PEFT's LoRA adds an A and a B Linear
// per adapted target.
struct HookedModules {
  double outside = 0, per_expert = 0;
};

HookedModules hooked_modules(const ModelSpec& m, const LoraTargets& l, bool moe_layer) {
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
std::string compose(const OpName& n, const char* role) {
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
  using OpList = std::conditional_t<Record, std::vector<RecordedOp>, NoRecord>;
  [[no_unique_address]] OpList fwd_ops, bwd_ops;  // Record: every op, forward and backward, in layer order
  bool in_adapter = false;                        // Record: the ops being added belong to an adapter
  // Framework traits: GEMMs with count > 1 run as a loop of count separate GEMMs (per-expert MoE loop), and
  // which memory-bound ops run as eager op sequences.
  bool serial_count = false;
  bool eager_rmsnorm = false, eager_rope = false, eager_activation = false;
  bool autocast_casts = false;  // fp32 parameters cast per use by torch.autocast (framework autocast_fp32_weights)
  // Bytes per element of the residual stream (norms, residual adds): ab, or 4 where full training keeps fp32
  // parameters under autocast: the embedding, the norms' weights and so the hidden states between the GEMMs are
  // fp32, and autocast casts each linear's fp32 input to 16 bits (stream_casts).
  double stream_bytes = 2;
  bool separate_projections = false;  // framework separate_projections: q/k/v and gate/up as separate GEMMs

  OpBuilder(const GemmCost& linear_cost, const GemmCost& high_cost, double spb, double activation_bytes, double rank)
      : linear(linear_cost), high(high_cost), seconds_per_byte(spb), ab(activation_bytes), lora_rank(rank) {}

  // `serial`: the count GEMMs run one after another, each its own kernel filling the GPU alone (tile/wave
  // quantization per GEMM), instead of one grouped kernel sharing waves.
  static double gemm(Acc& acc, const GemmCost& c, const GemmShape& g, bool serial = false) {
    const double t = serial ? g.count * cost_time(c, {g.m, g.n, g.k, 1}) : cost_time(c, g);
    acc.gemm_s += t;
    acc.gemm_flops += gemm_flops(g);
    acc.kernels += serial ? g.count : 1;
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
                   double seconds, bool serial = false) {
    if constexpr (Record) {
      const double bytes = g.count * (c.operand_bytes * (g.m * g.k + g.k * g.n) + c.output_bytes * g.m * g.n);
      record(backward, kind, name, role, g, c.precision, bytes, gemm_flops(g), seconds, false, serial ? g.count : 1);
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
  // An eager op sequence over `elements`, run `launches` times (a per-expert loop runs it once per expert).
  void memory(const OpName& name, double elements, const EagerCost& e, double launches = 1) {
    memory(name, e.fwd_bytes * elements, e.bwd_bytes * elements, launches * e.fwd_kernels, launches * e.bwd_kernels);
  }

  // A linear layer Y[T x out] = X[T x in] · W[in x out], `count` of them (local experts).
  // Backward: dgrad dX = dY · W^T (always: the gradient must reach earlier layers and adapters) and wgrad
  // dW = X^T · dY (only for trained weights). fp8 (Transformer Engine) casts the 16-bit input before the
  // forward GEMM and the output gradient before the backward GEMMs: read 2 + write 1 bytes per element.
  void dense(const OpName& name, double tokens, double in, double out, double count, bool trained, const GemmCost& c,
             Acc* also_fwd = nullptr, Acc* also_bwd = nullptr) {
    if (tokens <= 0 || in <= 0 || out <= 0 || count <= 0) return;
    Acc f, b;
    const bool serial = serial_count && count > 1;
    const GemmShape fprop{tokens, out, in, count}, dgrad{tokens, in, out, count}, wgrad{out, in, tokens, count};
    record_gemm(false, LayerOp::Gemm, name, "fprop", c, fprop, gemm(f, c, fprop, serial), serial);
    record_gemm(true, LayerOp::Gemm, name, "dgrad", c, dgrad, gemm(b, c, dgrad, serial), serial);
    if (trained) record_gemm(true, LayerOp::Gemm, name, "wgrad", c, wgrad, gemm(b, c, wgrad, serial), serial);
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

  // Norm: read x, write y (forward); read x and dy, write dx (backward). Per element of the residual stream.
  // An eager RMSNorm is the op sequence above; LayerNorm is one aten kernel in eager PyTorch as well.
  void norm(const OpName& name, double elements) {
    if (eager_rmsnorm) memory(name, elements, eager_rmsnorm_cost(stream_bytes));
    else memory(name, 2 * stream_bytes * elements, 3 * stream_bytes * elements);
  }
  // RoPE on the query and key elements (two tensors): fused, read and write once each way, one kernel per
  // tensor; eager, the op sequence of eager_rope_cost per tensor. Over an fp32 stream the eager sequence multiplies
  // by fp32 cos/sin (transformers' rotary embedding returns them in the hidden states' dtype), so q and k come out
  // fp32 and autocast casts them back to 16 bits for the attention kernel: two casts each way (the policy's only).
  void rope(const OpName& name, double elements) {
    if (!eager_rope) return memory(name, 2 * ab * elements, 2 * ab * elements, 2, 2);
    const bool fp32 = stream_bytes > ab;
    memory(name, elements, eager_rope_cost(fp32 ? stream_bytes : ab), 2);
    if (fp32) policy_only_memory({name.group, name.module, "cast"}, (stream_bytes + ab) * elements, (ab + stream_bytes) * elements, 2, 2);
  }
  // Residual add: read two, write one; backward sums the two incoming gradients the same way.
  void residual(const OpName& name, double elements) { memory(name, 3 * stream_bytes * elements, 3 * stream_bytes * elements); }
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
        dense({group, "gate"}, tokens, h, f, count, trained, linear);
        dense({group, "up"}, tokens, h, f, count, trained, linear);
      } else {
        dense({group, "gate_up"}, tokens, h, 2 * f, count, trained, linear);
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
      dense({group, "up"}, tokens, h, f, count, trained, linear);
      if (l.up) lora(group, "up_lora", tokens, h, f, count);
      module(act_module, [&] {  // GeLU: read x, write y; backward x, dy -> dx
        memory({group, "act"}, 2 * ab * tokens * f * count, 3 * ab * tokens * f * count, launches, launches);
      });
    }
    dense({group, "down"}, tokens, f, h, count, trained, linear);
    if (l.down) lora(group, "down_lora", tokens, f, h, count);
  }

  // Dense linear weights (parameters) of an MLP of per-GPU inner size f.
  static double mlp_weights(const ModelSpec& m, double f) { return (m.mlp == MlpKind::Gated ? 3.0 : 2.0) * m.hidden_size * f; }
};

Precision high_precision(Precision p) { return p == Precision::Fp8 ? Precision::Bf16 : p; }

// The per-layer walk behind layer_compute (Record = false) and layer_ops (Record = true, ops listed in `ops`).
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
  // ZeRO-3 fetched module by module from Python hooks: each module's hooks in every forward and backward.
  const double module_fetch_s;
  const HookedModules hooked;
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
        module_fetch_s(training.zero_stage >= 3 ? fw.zero3_module_fetch_us * 1e-6 : 0.0),
        hooked(hooked_modules(model, l, moe_layer)) {
    ob.eager_rmsnorm = !fw.fused_norm && m.norm == NormKind::RmsNorm;
    ob.track_modules = t.recompute == Recompute::Selective;
    ob.eager_rope = !fw.fused_rope;
    ob.autocast_casts = autocast_casts_weights(fw, t);
    ob.stream_bytes = ob.autocast_casts && trained ? 4.0 : ab;  // full training over fp32 parameters: an fp32 stream
    ob.separate_projections = fw.separate_projections;
    ob.eager_activation = !fw.fused_activation;
    ob.fwd.hook_s += hooked.outside * module_fetch_s, ob.bwd.hook_s += hooked.outside * module_fetch_s;
  }

  void attention_inputs() {
    // --- attention block
    // Per-head widths of Q·K^T and of P·V (head_dim both, except under MLA).
    ob.module(kRecomputeLayernorm, [&] { ob.norm({"attention", "norm"}, tokens_outside * h); });
    // Softmax attention's output gate (Qwen3-Next): a second q-sized half of the q projection, sigmoid(gate) x output.
    attention_weights = h * heads * d * 2 + 2 * h * kv_heads * d + h * gate;   // per GPU, for QLoRA dequantization
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
      ob.dense({"linear_attention", "delta_rule"}, kChunk, m.linear_key_head_dim, g.value_head_dim, chunk_products, true, ob.high);
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
        ob.norm({"attention", "q_norm"}, tokens * ql);
        ob.module(kRecomputeMlaUpProj, [&] { ob.dense({"attention", "q_up"}, tokens, ql, heads * dqk, 1, trained, ob.linear); });
      } else {
        ob.dense({"attention", "q"}, tokens, h, heads * dqk, 1, trained, ob.linear);
      }
      ob.dense({"attention", "kv_down"}, tokens, h, kvl + rope, 1, trained, ob.linear);
      ob.norm({"attention", "kv_norm"}, tokens * kvl);
      ob.module(kRecomputeMlaUpProj, [&] {
        ob.dense({"attention", "kv_up"}, tokens, kvl, heads * (m.qk_nope_head_dim + dv), 1, trained, ob.linear);
        const double rotated = tokens * (heads + 1) * rope;
        if (m.position_embedding == PositionEmbedding::Rope) ob.rope({"attention", "rope"}, rotated);
      });
      attention_weights = (ql > 0 ? h * ql + ql * heads * dqk : h * heads * dqk) + h * (kvl + rope) + kvl * heads * (m.qk_nope_head_dim + dv) +
                          heads * dv * h;
    } else {
      ob.stream_casts({"attention", "input_cast"}, tokens * h, ob.separate_projections ? 3 : 1);
      if (ob.separate_projections) {
        ob.dense({"attention", "q"}, tokens, h, heads * d + gate, 1, trained, ob.linear);
        ob.dense({"attention", "k"}, tokens, h, kv_heads * d, 1, trained, ob.linear);
        ob.dense({"attention", "v"}, tokens, h, kv_heads * d, 1, trained, ob.linear);
      } else {
        ob.dense({"attention", "qkv"}, tokens, h, (heads + 2 * kv_heads) * d + gate, 1, trained, ob.linear);   // fused QKV (column parallel)
      }
      if (l.q) ob.lora("attention", "q_lora", tokens, h, heads * d, 1);
      if (l.k) ob.lora("attention", "k_lora", tokens, h, kv_heads * d, 1);
      if (l.v) ob.lora("attention", "v_lora", tokens, h, kv_heads * d, 1);
      const double qk_elements = tokens * (heads + kv_heads) * d;
      if (m.qk_norm) ob.norm({"attention", "qk_norm"}, qk_elements);
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
        const double attended = attended_key_fraction(m, seq);
        const double fl = 2 * batch * s * seq * (dqk + dv) * attended;
        const double peak = gemm_peak_flops(gpu, high_p);
        f.attention_s = fl / (peak * flash_attention_efficiency(tr, s, false, fw.attention_kernel));
        f.attention_flops = fl;
        bk.attention_s = kFlashBackwardFlops * fl / (peak * flash_attention_efficiency(tr, s, true, fw.attention_kernel));
        bk.attention_flops = kFlashBackwardFlops * fl;
        f.kernels = 1;
        bk.kernels = fw.attention_kernel == AttentionKernel::Flash2 ? kFlash2BackwardKernels : kCudnnBackwardKernels;
        if constexpr (Record) {
          // A fused kernel has no GEMM shape of its own: listed as the batched Q·K^T-shaped GEMM (s x causal
          // fraction of the keys x head dim) with the kernel's FLOPs, the GEMM-equivalent a proxy run can time.
          const double keys = seq * attended, per_gemm = 2 * s * keys * dqk;
          const GemmShape fe{s, keys, dqk, fl / per_gemm}, be{s, keys, dqk, bk.attention_flops / per_gemm};
          ob.record(false, LayerOp::Attention, {"attention", "core"}, "", fe, high_p, 0, fl, f.attention_s, true);
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
      ob.dense({"attention", "out"}, tokens, heads * dv, h, 1, trained, ob.linear);   // output projection (row parallel)
      if (l.o) ob.lora("attention", "o_lora", tokens, heads * dv, h, 1);
    }
    if (m.hidden_dropout > 0) ob.dropout({"attention", "dropout"}, tokens_outside * h);
    ob.residual({"attention", "residual"}, tokens_outside * h);
  }

  void feed_forward() {
    // --- MLP block
    ob.module(kRecomputeLayernorm, [&] { ob.norm({"mlp", "norm"}, tokens_outside * h); });
    linear_weights = attention_weights;
    if (!moe_layer) {
      const double f = m.intermediate_size / tp;
      const double mlp_inputs = m.mlp == MlpKind::Gated && ob.separate_projections ? 2 : 1;  // gate and up read the stream
      ob.module(kRecomputeMlp, [&] {
        ob.stream_casts({"mlp", "input_cast"}, tokens * h, mlp_inputs);
        ob.mlp("mlp", m, l, tokens, f, 1, trained);
      });
      linear_weights += OpBuilder<Record>::mlp_weights(m, f);
    } else ob.module(kRecomputeMoe, [&] {
      // Router on the tokens this rank holds; tokens routed to top-k experts, balanced over E experts.
      // Expert parallel: E/ep local experts, each receiving routed·ep/E tokens of this rank's share; expert
      // tensor parallel all-gathers the tokens of the etp group and splits each expert's inner size by etp.
      const double E = m.num_experts, topk = m.num_experts_per_tok;
      const double routing_tokens = tokens / (sp ? tp : 1);
      const double routed = routing_tokens * topk;
      const double local_experts = E / p.ep;
      const double tokens_per_expert = routed * p.ep * p.etp / E;
      const double f_expert = dd(m.moe_intermediate_size) / p.etp;
      ob.stream_casts({"moe", "input_cast"}, routing_tokens * h, 1);
      ob.dense({"moe", "router"}, routing_tokens, h, E, 1, trained, ob.high);
      ob.memory({"moe", "router_topk"}, (ab + 4) * routing_tokens * E, (4 + 4 + ab) * routing_tokens * E);   // softmax/top-k in fp32
      // Permute and unpermute: read the tokens, write the top-k copies, and back (Megatron-Core token dispatcher).
      const double permute = 2 * ab * h * (routing_tokens + routed);
      // A grouped dispatcher permutes and unpermutes in one kernel each; a per-expert loop launches the routing
      // kernels above per expert.
      const double routing_kernels_fwd = fw.moe_grouped_gemm ? 2 : kLoopRoutingKernelsForward * local_experts;
      const double routing_kernels_bwd = fw.moe_grouped_gemm ? 2 : kLoopRoutingKernelsBackward * local_experts;
      const bool synced = !fw.moe_grouped_gemm && fw.moe_loop_host_sync;
      const Acc before = ob.fwd;
      ob.memory({"moe", "permute"}, permute, permute, routing_kernels_fwd, routing_kernels_bwd);
      // Grouped GEMM: each expert GEMM of the local experts in one kernel sharing waves; a loop: one GEMM per
      // expert, each with the per-expert token count as M (tile/wave quantization per expert) and its own launch.
      ob.serial_count = !fw.moe_grouped_gemm;
      // Experts in the parameters' dtype (moe_experts_in_weight_dtype) over fp32 parameters under autocast: fp32
      // GEMMs on the CUDA cores, no weight casts, fp32 activations between them.
      const bool fp32_experts = fw.moe_experts_in_weight_dtype && ob.autocast_casts && trained;
      const GemmCost linear = ob.linear;
      const double ab_saved = ob.ab;
      if (fp32_experts) ob.linear = cuda_core_fp32_cost(gpu, tr), ob.autocast_casts = false, ob.ab = 4;
      ob.mlp("moe.experts", m, l, tokens_per_expert, f_expert, local_experts, trained, kRecomputeMoeAct);
      if (fp32_experts) ob.linear = linear, ob.autocast_casts = true, ob.ab = ab_saved;
      if (!fw.moe_grouped_gemm && fw.moe_expert_weights_indexed && trained) {
        // Each expert's backward: a zero-filled gradient of the whole 3-D parameter, then accumulated (read two,
        // write one): four passes per expert over all the layer's local expert weights, in the gradient's dtype.
        const double weights = local_experts * OpBuilder<Record>::mlp_weights(m, f_expert);
        const double grad_bytes = ob.autocast_casts ? 4.0 : ob.ab;
        ob.memory({"moe", "experts", "weight_grad_scatter"}, 0, local_experts * 4 * grad_bytes * weights, 0, 2 * local_experts);
      }
      ob.serial_count = false;
      ob.fwd.hook_s += local_experts * hooked.per_expert * module_fetch_s;
      ob.bwd.hook_s += local_experts * hooked.per_expert * module_fetch_s;
      if (synced) {
        ob.synced_fwd = ob.fwd;
        ob.synced_fwd.add(before, -1);
        ob.synced_iterations = local_experts;
      }
      linear_weights += local_experts * OpBuilder<Record>::mlp_weights(m, f_expert);
      if (m.shared_expert_intermediate_size > 0) {
        const double fs = m.shared_expert_intermediate_size / tp;
        ob.module(kRecomputeSharedExperts, [&] { ob.mlp("moe.shared_expert", m, l, tokens, fs, 1, trained); });
        linear_weights += OpBuilder<Record>::mlp_weights(m, fs);
      }
    });
    if (m.hidden_dropout > 0) ob.dropout({"mlp", "dropout"}, tokens_outside * h);
    ob.residual({"mlp", "residual"}, tokens_outside * h);
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
      case Recompute::Full: out.recompute_s = ob.fwd.time(), out.recompute_flops = ob.fwd.flops(); break;
    }
    Acc all = forward;
    all.add(ob.bwd);
    out.gemm_s = all.gemm_s;
    out.attention_s = all.attention_s;
    out.memory_bound_s = all.memory_s;
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
    if (t.recompute == Recompute::Full) out.host_s += host_exposed_with_syncs(ob.fwd, ob.synced_fwd, ob.synced_iterations, hooked_gap);

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
                                  &LayerCompute::memory_bound_s, &LayerCompute::gemm_flops, &LayerCompute::attention_flops,
                                  &LayerCompute::kernels_forward, &LayerCompute::kernels_backward, &LayerCompute::host_s})
    mix(f);
  return out;
}

LayerCompute layer_compute(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p, const GpuSpec& gpu, bool moe_layer) {
  return layer_compute(m, t, p, gpu, gpu_compute_traits(gpu), moe_layer);
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
  return layer_ops(m, t, p, gpu, gpu_compute_traits(gpu), moe_layer);
}

const char* to_string(LayerOp::Kind k) {
  switch (k) {
    case LayerOp::Gemm: return "gemm";
    case LayerOp::Attention: return "attention";
    case LayerOp::MemoryBound: return "memory";
  }
  return "gemm";
}

EdgeCompute edge_compute(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p, const GpuSpec& gpu,
                         const GpuComputeTraits& tr) {
  const bool dpo = t.mode == TrainingMode::Dpo;
  const double passes_fwd = dpo ? 2 : 1;   // DPO: the reference model's forward as well
  const double s = dd(t.seq_len) / p.cp, b = dd(p.micro_batch_size) * t.sequences_per_sample();
  const double tokens = s * b, tp = p.tp, h = m.hidden_size;
  const bool sp = p.sequence_parallel && p.tp > 1;
  const double tokens_outside = tokens / (sp ? tp : 1);
  const double ab = activation_bytes(t.precision);
  const bool trained = t.trains_base_weights();
  EdgeCompute out;

  // Embedding (Megatron VocabParallelEmbedding): every TP rank reads the rows of its vocabulary shard
  // (1/tp of the tokens on average) and writes a full T x h output (zeros elsewhere) before the all-reduce
  // or reduce-scatter. Backward scatter-adds dy into the fp32 gradient rows of the shard (read + write 4 B)
  // when the embedding trains; a frozen embedding (LoRA/QLoRA) has no backward.
  double fwd = ab * tokens * h * (1 + 1 / tp);
  double bwd = trained ? ab * tokens * h + 2 * 4 * tokens * h / tp : 0;
  if (m.position_embedding == PositionEmbedding::Learned) {  // add learned positions: read two, write one
    fwd += 3 * ab * tokens * h;
    if (trained) bwd += ab * tokens * h + 2 * 4 * tokens * h;
  }
  if (m.hidden_dropout > 0) {
    fwd += (2 * ab + 1) * tokens_outside * h;
    if (trained) bwd += (2 * ab + 1) * tokens_outside * h;
  }
  out.embedding_s = memory_bound_time(gpu, tr, passes_fwd * fwd) + memory_bound_time(gpu, tr, bwd);

  // Head: final norm, LM head (vocab parallel, kept in 16 bits under fp8 as Megatron/TE do), cross-entropy.
  // Vocab-parallel cross-entropy reads the logits and keeps an fp32 softmax (forward), then reads it and
  // writes the 16-bit logit gradient (backward).
  const double vocab = dd(m.vocab_size) / tp;
  const Precision hp = high_precision(t.precision);
  const GemmShape head{tokens, vocab, h, 1};
  const double head_fwd = gemm_time(gpu, tr, hp, head);
  double head_bwd = gemm_time(gpu, tr, hp, {tokens, h, vocab, 1});
  double flops = passes_fwd * gemm_flops(head) + gemm_flops(head);
  if (trained) {
    head_bwd += gemm_time(gpu, tr, hp, {vocab, h, tokens, 1});
    flops += gemm_flops(head);
  }
  const double norm_fwd = 2 * ab * tokens_outside * h, norm_bwd = 3 * ab * tokens_outside * h;
  // Eager (the frameworks' torch ops): logits.float() reads ab and writes 4, log_softmax reads twice and writes
  // 4; backward: nll's dense fp32 gradient (write 4), log_softmax backward (read 4 + 4, write 4), the cast back
  // (read 4, write ab). Fused: read the logits, keep an fp32 softmax; read it, write the 16-bit gradient. Fused
  // keeping only the log-sum-exp: read the logits; read them again, write the gradient.
  const FrameworkTraits& fw = framework_for(t, p);
  const double fused_fwd = fw.cross_entropy_keeps_softmax ? ab + 4 : ab, fused_bwd = fw.cross_entropy_keeps_softmax ? 4 + ab : 2 * ab;
  const double ce_fwd = (fw.fused_cross_entropy ? fused_fwd : ab + 16) * tokens * vocab,
               ce_bwd = (fw.fused_cross_entropy ? fused_bwd : 20 + ab) * tokens * vocab;
  out.head_s = passes_fwd * (head_fwd + memory_bound_time(gpu, tr, norm_fwd + ce_fwd)) + head_bwd +
               memory_bound_time(gpu, tr, norm_bwd + ce_bwd);
  out.head_flops = flops;
  if (m.mtp_layers > 0) {
    // Each multi-token-prediction module (its transformer layer is counted with the stage's layers): norms on
    // the hidden state and the next token's embedding, the 2h -> h projection (column parallel), and the shared
    // head and loss once more.
    const GemmShape proj{tokens, h / tp, 2 * h, 1};
    double mtp_s = out.head_s + passes_fwd * gemm_time(gpu, tr, hp, proj) + gemm_time(gpu, tr, hp, {tokens, 2 * h, h / tp, 1}) +
                   memory_bound_time(gpu, tr, passes_fwd * 2 * norm_fwd + 2 * norm_bwd);
    double mtp_flops = out.head_flops + passes_fwd * gemm_flops(proj) + gemm_flops(proj);
    if (trained) mtp_s += gemm_time(gpu, tr, hp, {h / tp, 2 * h, tokens, 1}), mtp_flops += gemm_flops(proj);
    out.head_s += m.mtp_layers * mtp_s;
    out.head_flops += m.mtp_layers * mtp_flops;
  }
  return out;
}

EdgeCompute edge_compute(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p, const GpuSpec& gpu) {
  return edge_compute(m, t, p, gpu, gpu_compute_traits(gpu));
}

}  // namespace trainsim
