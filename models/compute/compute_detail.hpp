#pragma once
// Internal to models/: the GEMM cost, the eager-op costs and the kernel counts that compute.cpp (the public cost
// functions) and the layer walk (layer_walk.cpp, op_builder.hpp) share. Not part of the API.
#include <algorithm>

#include "models/compute/compute.hpp"

namespace trainsim::compute_detail {

inline double dd(int v) { return static_cast<double>(v); }

// A GEMM cost model for one GPU and precision, with every division done once.
struct GemmCost {
  double seconds_per_flop = 0;   // 1 / (dense peak x ceiling); 1 / dense peak when `fit` gives the ceiling
  const GemmEfficiencyFit* fit = nullptr;  // calibration profile: measured ceiling at the shape
  double seconds_per_byte = 0;   // 1 / (HBM bandwidth x achievable fraction)
  double operand_bytes = 2, output_bytes = 2;
  double sms = 0, inv_sms = 0, tm = 0, tn = 0, inv_tm = 0, inv_tn = 0;  // sms = 0: no quantization
  Precision precision = Precision::Bf16;  // the dtype the GEMM runs in (layer_ops reports it)
  bool tensor_cores = true;      // false: cuBLAS's FFMA kernels (cuda_core_fp32_cost)
};
GemmCost gemm_cost(const GpuSpec& gpu, const GpuComputeTraits& tr, Precision p);
// fp32 GEMMs on the CUDA cores (FFMA): PyTorch's default for fp32 matmuls (torch.backends.cuda.matmul.allow_tf32
// is False), at kFfmaCeiling of the GPU's fp32 peak and its top clock (no shaped fit: the tf32 one does not apply).
GemmCost cuda_core_fp32_cost(const GpuSpec& gpu, const GpuComputeTraits& tr);
// What cuBLAS's FFMA kernels reach of the fp32 peak in a training step: two Mixtral-8x7B layers in full fine-tuning ran
// 8.66 TFLOP of FFMA expert GEMMs in 186 ms on an H100 SXM (PyTorch 2.11), 46.6 TFLOP/s, 0.70 of its 66.9
// (calibrate/measurements/corpus/census/kernel_times-*.json); one dense fp32 matmul of 8,192 to 131,072 rows reaches
// 0.75-0.77 (grouped_mm_rate-*.json), the step's shapes less. They hold the top clock: the CUDA cores draw less than
// the tensor cores (kCudaCorePowerShare), so no power limit slows them. Taken for every GPU, no other having been
// measured.
inline constexpr double kFfmaCeiling = 0.70;
// Host time per GEMM of a loop that runs inside one op's C++ code, between the host sync that sizes it and the next
// op: ATen's _grouped_mm_fallback (torch's grouped_mm over fp32 tensors, which has no grouped kernel) reads the group
// offsets to the host (offs.cpu()) and calls at::mm_out once per expert. Measured on an H100 SXM with PyTorch 2.11
// (calibrate/measurements/corpus/census/grouped_mm_rate-*.json): at 64 tokens per expert, where each GEMM's GPU time is
// 5-9 us, the loop over 128 Qwen3-30B-A3B experts took 26.5 (gate_up) and 28.4 us (down) per expert in the forward and
// 21.5 and 25.4 in the input-gradient backward; 26 us, their median rounded. Split-K launches inside one GEMM are
// included (the measured time is per at::mm_out).
inline constexpr double kAtenLoopGemmHostS = 26e-6;
// Output tile edge of cuBLAS's FFMA kernels at MoE expert shapes: profiled on an H100 (PyTorch 2.11, four
// Qwen3-30B-A3B layers over fp32 parameters, 128 tokens per expert), 2,572 of the 3,845 FFMA GEMM launches were
// sm80_xmma_gemm_f32f32 tilesize64x64x8 kernels, the rest 128x64 and 64x128 (calibrate/measurements/corpus/census/
// kernel_times-*.json).
inline constexpr double kFfmaTile = 64;
// cuBLAS splits the reduction of a tensor-core GEMM whose output is too small to fill the SMs and whose k is long: the
// partial products, then a reduction kernel (cublasLt::splitKreduce_kernel), two launches for one GEMM. Profiled on an
// H100 with PyTorch 2.11 (calibrate/measurements/corpus/census/kernel_census-*, 256 tokens): every LoRA A projection
// (256 x 16 outputs, k = 4,096 or 14,336) and the B dgrads with k = 4,096-14,336 split, those with k = 1,024 (4x the
// 256 rows) did not; a Qwen2 layer's gate and up dgrads (256 x 1,536 outputs in 96 64x64 tiles, k = 8,960: 5.8x)
// split, a Llama layer's (256 x 2,048, 128 tiles, k = 8,192: 4x) did not, nor any GEMM with k at most its longer
// output side. Split: k > kSplitKDepth x max(m, n) and fewer kSplitKTile-square output tiles than SMs. The reduction's
// GPU time (the partials of a small output) is not counted; its launch is.
inline constexpr double kSplitKDepth = 4, kSplitKTile = 64;
double split_k_launches(const GemmCost& c, double m, double n);  // 2 where a long-k GEMM splits, else 1 (compute.cpp)
// Per GEMM of m x n outputs over k; the common case (k not long) decided inline: the layout search prices millions.
inline double gemm_launches(const GemmCost& c, double m, double n, double k) {
  return k <= kSplitKDepth * std::max(m, n) ? 1.0 : split_k_launches(c, m, n);
}
// A GEMM bound by its operands' traffic (few tokens against large weights: MoE experts at tens of tokens each,
// adapters, small models) streams them at this fraction of a device-to-device copy's bandwidth: measured on an H100
// (PyTorch 2.11), bf16 grouped GEMMs at 64 tokens per expert, Mixtral-8x7B and Qwen3-30B-A3B expert shapes, moved
// their A + B + C at 0.81, 0.70, 0.78 and 0.58 of the copy's 3.0 TB/s; 0.72 their mean
// (calibrate/measurements/corpus/grouped_mm_rate.py). Taken for every GPU, no other having been measured.
inline constexpr double kGemmStreamEfficiency = 0.72;
// Seconds of one GEMM shape (count identical GEMMs together): the tile waves' compute or the operands' HBM
// traffic, whichever is slower.
double cost_time(const GemmCost& c, const GemmShape& g);

// FlashAttention-2's backward pass runs 5 matmuls against the forward's 2: 2.5x the FLOPs (Dao 2023, §4.1 FLOP
// count); causal masking skips fully masked blocks in both (attended_key_fraction, transformer.hpp).
inline constexpr double kFlashBackwardFlops = 2.5;
// Launches of the fused attention: FlashAttention-2's forward is one kernel and its backward launches dot(dO, O), the
// dq/dk/dv kernel and the dq conversion (flash-attention csrc flash_bwd_launch_template.h). cuDNN's SDPA, profiled
// per decoder layer on an H100 with PyTorch 2.11 (calibrate/measurements/corpus/census/kernel_census-*: the layer's
// only cudaMemset launches): forward the fprop kernel and one memset; backward compute_dot_do_o, the bprop kernel,
// convert_dq_to_16bits, two fmha_reduce_head and four memsets of its accumulators. A memset takes no GPU time to
// speak of, but the host launches it like any kernel, and the presets' launch gaps are wall time over every launch
// the profiler counts.
inline constexpr double kFlash2ForwardKernels = 1, kFlash2BackwardKernels = 3;
inline constexpr double kCudnnForwardKernels = 2, kCudnnBackwardKernels = 9;

// A per-expert MoE loop (transformers Qwen3MoeSparseMoeBlock / MixtralSparseMoeBlock.forward) launches, per
// expert and beside the expert MLP's GEMMs and activation: torch.where on the routing mask (nonzero's count,
// scan and select), the indexing of the mask, the hidden states and the routing weights, the scaling multiply
// and index_add_; backward: index_select for index_add_, the multiply's two products and the weight gradient's
// reduction, a sorted index_put for each indexing, and the accumulation of every expert's input gradient.
// Profiled on an H100 with PyTorch 2.11 (calibrate/measurements/h100-sxm-80gb-2026-11-23, torch_moe_block.json,
// loop at 8192 tokens): 2,064 kernels forward and 4,625 backward for 128 experts, 16 and 36 per expert, less the
// expert MLP's 5 and 9.
inline constexpr double kLoopRoutingKernelsForward = 11, kLoopRoutingKernelsBackward = 27;
// torch.sort on the GPU (aten/src/ATen/native/cuda/Sort.h, should_use_small_sort): up to 4,096 elements one in-place
// key/value kernel; more, cub's radix sort over the int64 keys: a histogram, an exclusive sum and 8 one-sweep passes,
// 9 kernels more. Profiled on an H100 (calibrate/measurements/corpus/census/kernel_census-*): a Qwen3-30B-A3B layer's
// forward at 2,048 tokens (16,384 routed rows) ran 8 DeviceRadixSortOnesweep kernels, a histogram and an exclusive
// sum where Mixtral's (4,096 rows) ran one radixSortKVInPlace.
inline constexpr double kSortInPlaceRows = 4096, kLargeSortExtraKernels = 9;

// QLoRA's NF4 weights (spec.hpp kNf4BytesPerParam) are dequantized to 16 bits before every forward and backward
// GEMM (bitsandbytes).

// ---- Eager (unfused) op sequences, HBM bytes per element and kernels ---------------------------------
// Where a framework runs the reference modeling code in eager PyTorch instead of a fused kernel, every torch
// op reads its inputs and writes its output through HBM and is a kernel of its own; autograd runs one
// backward kernel per op, reading the op's saved input and its output gradient and writing its input
// gradient. ab = bytes of a 16-bit (or fp32) activation, 4 = an fp32 intermediate.
// RMSNorm (transformers/models/llama/modeling_llama.py LlamaRMSNorm): cast to fp32 (ab+4), pow 2 (4+4),
// mean (4), mul by rsqrt (4+4), cast back (4+ab), mul weight (ab+ab), plus eps add and rsqrt on the per-token
// vector (no bytes to speak of): 8 kernels. Backward, autograd's formulas (torch tools/autograd/derivatives.yaml,
// FunctionsManual.cpp) op by op:
//   mul weight: dx = g·w (2ab), dw = (g·x̂) summed over the tokens (product 3ab, reduction reads ab): 3 kernels;
//   cast back's backward (ab+4);
//   mul by rsqrt: g·r (8), and g·x summed over the hidden size for r (12 + 4): 3 kernels;
//   rsqrt: -0.5·g·r³ on the per-token vector: 3 kernels (a scalar multiply, pow 3, the product), no bytes;
//   mean: the expanded gradient over the hidden size (write 4): 1 kernel;
//   pow 2: g·(2·x.pow(1)), where pow(x, 1) is a copy (8), the scalar multiply (8) and the product (12): 3 kernels;
//   the sum of x's two gradient paths (12): 1 kernel; the first cast's backward (4+ab).
// 16 kernels (14 without the casts). fp32 training has no casts (.to(float32) of an fp32 tensor is free): 6 and 14
// kernels. Profiled on an H100 (calibrate/measurements/corpus/census/kernel_census-*, transformers 5.17 Llama layer
// over fp32 parameters): per layer's two norms, the 2 pow, 4 scalar multiplies, 2 + 2 reductions and 2
// device-to-device copies (pow(x, 1)) of this sequence, beside its products.
struct EagerCost {
  double fwd_bytes, bwd_bytes, fwd_kernels, bwd_kernels;
};
inline EagerCost eager_rmsnorm_cost(double ab) {
  const bool casts = ab < 4;
  const double cast = casts ? ab + 4 : 0;
  return {cast + 8 + 4 + 8 + cast + 2 * ab, 6 * ab + cast + 24 + 4 + 28 + 12 + cast, casts ? 8.0 : 6.0, casts ? 16.0 : 14.0};
}
// RoPE (modeling_llama.py apply_rotary_pos_emb: x·cos + rotate_half(x)·sin), per element of q or k:
// rotate_half = neg of one half (ab) + cat (2ab), ·cos (2ab), ·sin (2ab), add (3ab): 10ab, 5 kernels per
// tensor (cos/sin are per token, shared by the heads: not counted). Backward: g·cos (2ab), g·sin (2ab), neg
// of a half (ab), the sum of the two paths (3ab), and the backward of each half's slice (x[..., :d/2]) as a
// zero fill of the whole gradient and a copy into its half (ab + 2ab for the two): 11ab, 8 kernels (profiled on
// an H100, transformers 5.17 Llama layer: two fills and two copies per tensor, calibrate/measurements/corpus/
// census). Fused (Transformer Engine, flash-attn's rotary): read and write once each way, one kernel per tensor.
inline EagerCost eager_rope_cost(double ab) { return {10 * ab, 11 * ab, 5, 8}; }
// Gated MLP activation (modeling_llama.py LlamaMLP act_fn(gate) * up), per element of the inner size:
// silu (2ab) then the product (3ab): 5ab, 2 kernels. Backward: d_up = g·silu(gate) (3ab), d_silu = g·up
// (3ab), silu backward (3ab): 9ab, 3 kernels. Fused (Megatron bias-SwiGLU): 3ab and 5ab, one kernel each.
// A plain GeLU is one kernel in eager PyTorch as well: the same either way.
inline EagerCost eager_gated_activation_cost(double ab) { return {5 * ab, 9 * ab, 2, 3}; }


}  // namespace trainsim::compute_detail
