#pragma once
// Per-GPU compute time of a transformer layer and of the pipeline edges (embedding, LM head) for one
// micro-batch: every GEMM, the attention core and the memory-bound ops, each timed on its own.
//
// GEMMs: time = max(compute, memory), compute = FLOPs / (dense peak x ceiling x quantization) where the
// ceiling is the best published bf16 GEMM ("MAMF") over the dense peak, and quantization is the tile and
// wave quantization of the output tiles over the SMs; memory = HBM bytes / achievable HBM bandwidth
// (the roofline). Memory-bound ops: bytes / achievable HBM bandwidth. Flash attention: FLOPs / (peak x
// an attention efficiency of its own). Every constant is cited in compute.cpp.
//
// Pure, allocation-free and cheap: the layout search calls layer_compute millions of times. Resolve
// GpuComputeTraits once per GPU and use the overloads that take it to skip the name lookup.
//
// With a calibration profile (models/calibration/calibration.hpp: gpu_compute_traits(gpu, fit)) a GEMM dtype that was
// measured takes its ceiling from the profile's fit at the GEMM's shape instead of the published one; the
// quantization and roofline stay, and hbm_fraction becomes the measured copy bandwidth / datasheet.
#include <memory>
#include <string>
#include <vector>

#include "models/calibration/fitted_parameters.hpp"
#include "models/scenario/framework.hpp"
#include "models/scenario/spec.hpp"

namespace trainsim {

class GemmEfficiencyFit;  // models/calibration/calibration.hpp

struct GemmShape {
  double m = 0, n = 0, k = 0;  // C[m x n] = A[m x k] * B[k x n]
  double count = 1;            // identical GEMMs run together (local experts, batched attention heads)
};

// What the compute model knows about a GPU beyond its datasheet, resolved once from the GpuSpec's traits
// (SM count, GEMM tile, published GEMM ceilings, copy bandwidth, fused-attention table: presets/gpus.json).
struct GpuComputeTraits {
  std::string gemm_row = "fallback: the mean published ceiling";  // where the GEMM ceiling comes from
  double gemm_ceiling = 0;   // best achieved dense GEMM / dense peak, in (0, 1], where no shaped fit applies
  int sms = 0;               // streaming multiprocessors (CUs); 0 = unknown: no tile/wave quantization
  int tile_m = 128, tile_n = 128;  // output tile of the large-shape GEMM kernels
  double hbm_fraction = 0;   // achievable fraction of GpuSpec::memory_bandwidth (device-to-device copy)
  bool hopper_attention_table = false;  // per-length fused-attention table measured on H100 applies
  double attention_scale = 1;  // other GPUs: FlashAttention-2's A100 fractions x (ceiling / A100 ceiling)
  // GEMM ceilings by shape per training precision (index: Precision; Fp32 = the tf32 fit), nullptr = gemm_ceiling.
  // Published points with a shape (GpuSpec::gemm_published) give a fit owned here; a calibration profile's
  // measured dtypes replace them (gpu_compute_traits(gpu, const CalibrationFit*): owned by that fit). Either
  // way the same GemmEfficiencyFit turns a point into a ceiling, so a profile holding the published point
  // gives the published answer.
  const GemmEfficiencyFit* gemm_fit[4] = {nullptr, nullptr, nullptr, nullptr};
  std::shared_ptr<const GemmEfficiencyFit> published_fit;
  // The fitted parameters (models/calibration/fitted_parameters.hpp) as this GPU feels them: tensor-core work (GEMMs,
  // fused attention) takes tensor_slowdown (>= 1) times longer under the power limit; memory-bound kernels
  // reach hbm_fraction x memory_kernel_efficiency of the datasheet bandwidth.
  // tensor_slowdown is the clock a pure GEMM loop holds; a layer of a training step, whose memory-bound kernels and
  // host gaps draw less, holds its own (layer_power_traits).
  double tensor_slowdown = 1;
  double tdp_w = 0;            // the power limit (GpuSpec::tdp_watts); 0: none known
  double tensor_power_w = 0;   // tensor-core kernels' power at the top clock: e x ceiling x bf16 peak
  double memory_kernel_efficiency = 1;
  double checkpoint_hook_s = 0;  // FittedParameters::checkpoint_hook_us, seconds
  double grouped_gemm_call_s = 0;  // FittedParameters::grouped_gemm_call_us, seconds
};
// The published traits with the shipped fitted parameters applied.
GpuComputeTraits gpu_compute_traits(const GpuSpec& gpu);
// The GEMM ceiling of a GPU without a published GEMM: the mean of the presets' distinct published measurements, each
// with its own shape's quantization divided out (A100 SXM, A100 PCIe, H100 SXM, GH200, B200, MI300X).
double mean_published_gemm_ceiling();
// Sets tensor_slowdown and memory_kernel_efficiency from `params` (after the GEMM ceiling is final: a
// calibration profile's measured ceiling sets the power the GEMMs draw).
void apply_fitted_parameters(GpuComputeTraits& tr, const GpuSpec& gpu, const FittedParameters& params);
// Clock fraction a GPU holds while its tensor cores run `flops_per_s` (at the top clock) under its power limit:
// min(1, (TDP / (e x flops_per_s))^(1/3)), dynamic power growing as the cube of the clock (P ~ C·V²·f with V
// rising with f). 1 when the TDP or e is unknown (0).
double power_limited_fraction(double tdp_watts, double flops_per_s, double energy_pj_per_flop);

// What the rest of a workload draws beside its tensor-core kernels, as shares of the TDP, measured on one H100 SXM
// at 700 W (calibrate/measurements/corpus/census/gemm_power-*.json): device-to-device copies at 3.0 TB/s drew
// 379 W at the top clock (0.54), the board between kernels at the top clock 99-120 W (0.156, their mean).
inline constexpr double kMemoryKernelPowerShare = 0.54;
inline constexpr double kIdlePowerShare = 0.156;
// fp32 GEMMs on the CUDA cores (FFMA): two Mixtral-8x7B layers in full fine-tuning, 189 of their 239 ms of GPU time
// in FFMA expert GEMMs, held the top clock at 659 W on a 700 W H200 SXM, unlimited (0.94;
// calibrate/measurements/corpus/census/step_power-*.json).
inline constexpr double kCudaCorePowerShare = 659.0 / 700.0;
// A workload's seconds at the top clock by the power they draw: tensor-core kernels (GEMMs, fused attention),
// memory-bound kernels, fp32 GEMMs on the CUDA cores, and the GPU waiting (for the host, between kernels).
struct PowerDuty {
  double tensor_s = 0, memory_s = 0, idle_s = 0, cuda_core_s = 0;
};
// The clock fraction r a GPU holds under its power limit when the limit holds the average power over the workload
// (the limiter averages over longer than one kernel): the tensor-core time T stretches to T/r at power P·r³, the
// rest keeps its own power, and r solves (T/r·P·r³ + M·Pm + I·Pi) / (T/r + M + I) = TDP; 1 when the average at the
// top clock is within the limit. Pure tensor work gives (TDP / P)^(1/3) as above. Checked against the same
// H100: GEMMs with copies or idle gaps taking 21-51% of the time held 0.92-0.99 of their top-clock rate against
// 0.87 back to back.
double power_limited_fraction(double tdp_watts, double tensor_power_w, const PowerDuty& duty);

double gemm_flops(const GemmShape& g);  // 2·m·n·k·count
// HBM bytes of the GEMM(s): A and B read, C written, once each (operands at the precision's element
// size; fp8 GEMMs write 16-bit outputs as Transformer Engine does).
double gemm_bytes(Precision p, const GemmShape& g);
// Tile and wave quantization: useful output area / (waves · SMs · tile area), the better of the two
// tile orientations; 1 when the SM count is unknown.
double gemm_quantization(const GpuComputeTraits& tr, const GemmShape& g);
// Dense peak the GEMM runs against: fp32 as TF32, fp8 falling back to 16-bit on GPUs without fp8.
double gemm_peak_flops(const GpuSpec& gpu, Precision p);

// Achieved fraction of the GPU's dense peak for this GEMM in this dtype (0..1].
double gemm_efficiency(const GpuSpec& gpu, Precision p, const GemmShape& g);
double gemm_efficiency(const GpuSpec& gpu, const GpuComputeTraits& tr, Precision p, const GemmShape& g);
double gemm_time(const GpuSpec& gpu, Precision p, const GemmShape& g);
double gemm_time(const GpuSpec& gpu, const GpuComputeTraits& tr, Precision p, const GemmShape& g);
// Memory-bound op moving `bytes` through HBM (read + write).
double memory_bound_time(const GpuSpec& gpu, double bytes);
double memory_bound_time(const GpuSpec& gpu, const GpuComputeTraits& tr, double bytes);
// The optimizer step and the passes over the gradients beside it run as multi-tensor kernels (PyTorch's fused and
// foreach optimizers and norms, apex's and Transformer Engine's fused Adam: one launch streams many tensors):
// fused AdamW over fp32 parameters, gradients and moments moved the bytes optimizer_step_bytes counts at 0.92-0.94
// of a device-to-device copy's bandwidth in four models on one H100 (Llama-3.2-1B, Qwen2.5-1.5B, two hand-written
// decoders: calibrate/measurements/corpus/census/kernel_times-*-2026-11-28.json, torch_decoder-*), 0.93 their mean.
// Unlike an eager layer's many small kernels (memory_kernel_efficiency), they stream at this measured rate.
inline constexpr double kMultiTensorEfficiency = 0.93;
double multi_tensor_time(const GpuSpec& gpu, const GpuComputeTraits& tr, double bytes);

// Fraction of the dense 16-bit peak a fused (flash) attention kernel reaches with `seq_len` query tokens
// per GPU, causal, head dim 128: forward or backward; on Hopper the framework's kernel (cuDNN-class or
// FlashAttention-2) matters.
double flash_attention_efficiency(const GpuComputeTraits& tr, double seq_len, bool backward,
                                  AttentionKernel kernel = AttentionKernel::Fused);

struct LayerCompute {          // one transformer layer, one micro-batch, one GPU, seconds and FLOPs
  double forward_s = 0;        // GEMMs + attention core + memory-bound ops of the forward pass (+ DPO reference forward)
  double backward_s = 0;       // dgrad + wgrad (+ memory-bound backward ops)
  double recompute_s = 0;      // extra forward work under training.recompute (selective: attention core; full: whole layer forward)
  double forward_flops = 0, backward_flops = 0, recompute_flops = 0;   // executed FLOPs on this GPU (GEMMs + attention)
  double gemm_s = 0, attention_s = 0, memory_bound_s = 0;              // split of forward_s + backward_s, for breakdowns
  double cuda_core_gemm_s = 0;  // of gemm_s: fp32 GEMMs on the CUDA cores (FFMA), which draw less power than the tensor cores
  // Detail (FLOPs, forward + backward, recompute excluded): GEMMs of the projections/MLP/experts/adapters
  // and the attention core (QK^T, AV).
  double gemm_flops = 0, attention_flops = 0;
  // Kernels launched per pass (layer_ops' ops, each weighted by its `kernels`), and the time the GPU waits
  // for the host to launch them (eager frameworks): per pass max(0, kernels x launch gap - GPU time),
  // summed over forward, backward and recompute. Not part of forward_s / backward_s / recompute_s.
  double kernels_forward = 0, kernels_backward = 0;
  double host_s = 0;
};
LayerCompute layer_compute(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p, const GpuSpec& gpu, bool moe_layer);
LayerCompute layer_compute(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p, const GpuSpec& gpu,
                           const GpuComputeTraits& tr, bool moe_layer);

// The same per-layer work as a list of operations, one per GEMM (fprop, dgrad, wgrad), attention core and
// memory-bound op, each with the time layer_compute adds for it: built by the same walk, so the sum of
// layer_share x predicted_s over the list equals forward_s + backward_s + recompute_s (and, per kind, gemm_s /
// attention_s / memory_bound_s over the forward and backward passes). For the proxy run on hardware
// (calibrate/gpu) and for reports; allocates, unlike layer_compute.
struct LayerOp {
  enum Kind { Gemm, Attention, MemoryBound };  // the LayerCompute part the op adds to
  std::string name;              // "attention.qkv.fprop", "mlp.down.wgrad", "attention.core", "mlp.norm", ...
  Kind kind = Gemm;
  const char* pass = "forward";  // "forward", "backward" or "recompute" (DPO's reference forward: "forward", reference = true)
  GemmShape gemm;                // GEMMs (count > 1: batched, e.g. local experts) and unfused attention; zero for memory-bound ops
  Precision precision = Precision::Bf16;  // what the GEMM runs in (fp8 linear layers, 16-bit attention and adapters)
  double bytes = 0;              // HBM bytes read + written (memory-bound ops; GEMMs: A + B + C once; fused attention: 0)
  double flops = 0;
  double predicted_s = 0;
  double layer_share = 1;        // share of the layers that run it (hybrid attention: each kind's own ops; else 1)
  // Fused (flash) attention has no GEMM of its own: `gemm` is then the FLOP-equivalent batched Q·K^T-shaped
  // GEMM (s x causal share of the keys x head dim, count = FLOPs / (2·m·n·k)), priced by the attention model.
  bool gemm_equivalent = false;
  bool reference = false;        // DPO: the frozen reference model's forward
  double kernels = 1;            // kernel launches the op stands for (a per-expert loop: one per expert; eager op sequences: each op)
};
const char* to_string(LayerOp::Kind k);  // "gemm", "attention", "memory"
// `tr` at the clock one training layer holds under the power limit: the layer (the MoE layer of a MoE model) priced at
// the top clock gives the duty, power_limited_fraction the clock, tensor_slowdown its inverse. Every price of a
// training step's layers and edges is made with these traits (layer_compute / layer_ops / edge_compute callers).
GpuComputeTraits layer_power_traits(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p, const GpuSpec& gpu,
                                    GpuComputeTraits tr);
// The convenience forms price at layer_power_traits(gpu_compute_traits(gpu)).
std::vector<LayerOp> layer_ops(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p, const GpuSpec& gpu, bool moe_layer);
std::vector<LayerOp> layer_ops(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p, const GpuSpec& gpu,
                               const GpuComputeTraits& tr, bool moe_layer);

struct EdgeCompute {           // the non-layer work of one micro-batch on the first / last pipeline stage
  double embedding_s = 0;      // forward + backward of the (vocab-parallel) embedding lookup: memory bound
  double head_s = 0;           // final norm + LM-head GEMM forward + backward (dgrad, wgrad unless frozen) + cross-entropy;
                               // per multi-token-prediction module its norms, projection and the head and loss again
  double head_flops = 0;
};
EdgeCompute edge_compute(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p, const GpuSpec& gpu);
EdgeCompute edge_compute(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p, const GpuSpec& gpu,
                         const GpuComputeTraits& tr);

}  // namespace trainsim
