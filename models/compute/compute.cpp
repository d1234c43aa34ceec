#include "models/compute/compute.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "models/calibration/calibration.hpp"
#include "models/compute/compute_detail.hpp"
#include "models/compute/linear_attention.hpp"
#include "models/compute/recompute_policy.hpp"
#include "models/compute/transformer.hpp"
#include "models/scenario/presets.hpp"
#include "models/scenario/scenario.hpp"

namespace trainsim {

using compute_detail::dd;
using compute_detail::GemmCost;
using compute_detail::cost_time;
using compute_detail::gemm_cost;

namespace {

// ---- GEMM ceilings ------------------------------------------------------------------------------
// Each GPU preset carries its published GEMM measurement (presets/gpus.json, gemm_published: the best achieved
// bf16 GEMM over swept large shapes, "MAMF", stas00/ml-engineering, as in ../shared/reference/microbenchmarks.json
// gemm_bf16_mamf). GPUs without one take the mean ceiling of those measurements (mean_published_gemm_ceiling).
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

}  // namespace

namespace compute_detail {
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
}  // namespace compute_detail

namespace {

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

namespace {
// The GPU's published GEMM points (presets/gpus.json gemm_published) as its ceiling: with a shape, a
// GemmEfficiencyFit (the measurement with its own shape's quantization divided out, as a calibration profile's
// point); without one, a shape-independent fraction of the peak. 16-bit points set every precision's ceiling
// (fp8 and tf32 GEMMs: the same fraction of their own peaks). False where the GPU has none.
bool apply_published_gemms(const GpuSpec& gpu, GpuComputeTraits& tr) {
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
    return true;
  }
  if (unshaped_count > 0) {
    tr.gemm_ceiling = unshaped / unshaped_count;
    tr.gemm_row = "published: the best GEMM of " + gpu.name + " (no shape)";
    return true;
  }
  return false;
}

// What GEMM tile and wave quantization depend on.
GpuComputeTraits shape_traits(const GpuSpec& gpu) {
  GpuComputeTraits tr;
  tr.sms = gpu.sms;
  tr.tile_m = gpu.gemm_tile_m, tr.tile_n = gpu.gemm_tile_n;
  return tr;
}
}  // namespace

double mean_published_gemm_ceiling() {
  // Each distinct measurement once: a row with a measured rate (an `efficiency` row is an assumption carried over
  // from another GPU), the same row copied to a sibling preset (A800 from A100 SXM, H800 from H100 SXM) counted once.
  static const double mean = [] {
    std::vector<std::tuple<double, double, double, double>> seen;
    double sum = 0;
    int count = 0;
    for (const std::string& name : preset_names(PresetKind::Gpu)) {
      const GpuSpec gpu = parse_gpu(name, "/hardware/gpu");
      if (gpu.gemm_published.size() != 1 || !(gpu.gemm_published.front().tflops > 0)) continue;
      const PublishedGemm& pg = gpu.gemm_published.front();
      const auto key = std::make_tuple(pg.tflops, pg.m, pg.n, pg.k);
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
      seen.push_back(key);
      GpuComputeTraits tr = shape_traits(gpu);
      if (!apply_published_gemms(gpu, tr)) continue;
      sum += tr.gemm_ceiling;
      ++count;
    }
    return count > 0 ? sum / count : 1.0;
  }();
  return mean;
}

GpuComputeTraits gpu_compute_traits(const GpuSpec& gpu) {
  GpuComputeTraits tr = shape_traits(gpu);
  tr.hbm_fraction = gpu.hbm_copy_bandwidth > 0 && gpu.memory_bandwidth > 0 ? gpu.hbm_copy_bandwidth / gpu.memory_bandwidth : kHbmMean;
  tr.hopper_attention_table = gpu.fused_attention == "hopper-cudnn";
  if (!apply_published_gemms(gpu, tr)) tr.gemm_ceiling = mean_published_gemm_ceiling();
  tr.attention_scale = tr.gemm_ceiling / kCeilA100Sxm;
  apply_fitted_parameters(tr, gpu, shipped_fitted_parameters().values);
  return tr;
}

double power_limited_fraction(double tdp_watts, double flops_per_s, double energy_pj_per_flop) {
  return power_limited_fraction(tdp_watts, energy_pj_per_flop * 1e-12 * flops_per_s, PowerDuty{1, 0, 0});
}

double power_limited_fraction(double tdp_watts, double tensor_power_w, const PowerDuty& duty) {
  const double t = duty.tensor_s, other_s = duty.memory_s + duty.cuda_core_s + duty.idle_s;
  if (!(tdp_watts > 0) || !(tensor_power_w > 0) || !(t > 0)) return 1.0;
  const double other_j =
      (duty.memory_s * kMemoryKernelPowerShare + duty.cuda_core_s * kCudaCorePowerShare + duty.idle_s * kIdlePowerShare) * tdp_watts;
  if (t * tensor_power_w + other_j <= tdp_watts * (t + other_s)) return 1.0;
  // f(r) = P·r³ - a·r - TDP = 0 with a = (TDP·(M + I) - M·Pm - I·Pi) / T >= 0 (the rest draws less than the TDP):
  // f(0) < 0 < f(1) and f is convex for r > 0, so Newton from r = 1 falls monotonically onto the one root.
  const double a = std::max(0.0, (tdp_watts * other_s - other_j) / t);
  double r = 1;
  for (int i = 0; i < 50; ++i) {
    const double f = tensor_power_w * r * r * r - a * r - tdp_watts;
    const double step = f / (3 * tensor_power_w * r * r - a);
    r -= step;
    if (std::abs(step) < 1e-12) break;
  }
  return std::clamp(r, 0.0, 1.0);
}

void apply_fitted_parameters(GpuComputeTraits& tr, const GpuSpec& gpu, const FittedParameters& params) {
  // The GEMMs' power: the 16-bit rate they reach at the top clock (ceiling x peak). Every precision draws the
  // same power at the same clock (fp8 doubles the rate per watt, tf32 halves it: NVIDIA's datasheet peaks at
  // one TDP), so the clock fraction holds for all of them.
  tr.tdp_w = gpu.tdp_watts;
  tr.tensor_power_w = params.tensor_energy_pj_per_flop * 1e-12 * tr.gemm_ceiling * gemm_peak_flops(gpu, Precision::Bf16);
  tr.tensor_slowdown = 1 / power_limited_fraction(tr.tdp_w, tr.tensor_power_w, PowerDuty{1, 0, 0});  // a GEMM-only loop
  tr.memory_kernel_efficiency = params.memory_kernel_efficiency;
  tr.checkpoint_hook_s = params.checkpoint_hook_us * 1e-6;
  tr.grouped_gemm_call_s = params.grouped_gemm_call_us * 1e-6;
}

double gemm_flops(const GemmShape& g) { return 2 * g.m * g.n * g.k * g.count; }

double gemm_peak_flops(const GpuSpec& gpu, Precision p) {
  double peak = gpu.peak_flops(p);
  if (peak <= 0) peak = gpu.flops_bf16 > 0 ? gpu.flops_bf16 : gpu.flops_fp16;  // e.g. fp8 on an A100
  if (peak <= 0) peak = gpu.flops_fp32;
  return peak;
}

namespace compute_detail {
GemmCost gemm_cost(const GpuSpec& gpu, const GpuComputeTraits& tr, Precision p) {
  GemmCost c;
  c.fit = tr.gemm_fit[static_cast<int>(p)];
  c.precision = p;
  c.seconds_per_flop = tr.tensor_slowdown / (gemm_peak_flops(gpu, p) * (c.fit ? 1.0 : tr.gemm_ceiling));
  c.seconds_per_byte = 1 / (gpu.memory_bandwidth * tr.hbm_fraction * kGemmStreamEfficiency);
  c.operand_bytes = bytes_per_element(p);
  c.output_bytes = p == Precision::Fp8 ? 2.0 : c.operand_bytes;  // fp8 GEMMs write 16-bit outputs (Transformer Engine)
  if (tr.sms > 0 && tr.tile_m > 0 && tr.tile_n > 0) {
    c.sms = tr.sms, c.inv_sms = 1 / c.sms;
    c.tm = tr.tile_m, c.tn = tr.tile_n, c.inv_tm = 1 / c.tm, c.inv_tn = 1 / c.tn;
  }
  return c;
}

// The long-k case of gemm_launches (compute_detail.hpp): split where the output's tiles do not fill the SMs.
double split_k_launches(const GemmCost& c, double m, double n) {
  if (!c.tensor_cores || c.sms <= 0) return 1;
  return std::ceil(m / kSplitKTile) * std::ceil(n / kSplitKTile) < c.sms ? 2 : 1;
}

// fp32 GEMMs on the CUDA cores (FFMA): PyTorch's default for fp32 matmuls (torch.backends.cuda.matmul.allow_tf32
// is False), at kFfmaCeiling of the GPU's fp32 peak at the top clock (no shaped fit: the tf32 one does not apply),
// in kFfmaTile-square output tiles.
GemmCost cuda_core_fp32_cost(const GpuSpec& gpu, const GpuComputeTraits& tr) {
  GemmCost c = gemm_cost(gpu, tr, Precision::Fp32);
  if (gpu.flops_fp32 <= 0) return c;
  c.fit = nullptr;
  c.seconds_per_flop = 1 / (gpu.flops_fp32 * kFfmaCeiling);
  if (c.sms > 0) c.tm = c.tn = kFfmaTile, c.inv_tm = c.inv_tn = 1 / kFfmaTile;
  c.tensor_cores = false;
  return c;
}
}  // namespace compute_detail

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

double multi_tensor_time(const GpuSpec& gpu, const GpuComputeTraits& tr, double bytes) {
  if (bytes <= 0) return 0;
  return bytes / (gpu.memory_bandwidth * tr.hbm_fraction * kMultiTensorEfficiency);
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
  // Gradient accumulation through autograd (autograd_accumulation_share): the trained edges' gradients added into
  // .grad on the micro-batches after the first (read two, write one, in the parameters' dtype).
  const FrameworkTraits& fw = framework_for(t, p);
  const double accumulate = trained ? autograd_accumulation_share(t, p) * 3 * (autocast_casts_weights(fw, t) ? 4.0 : ab) : 0.0;
  bwd += accumulate * (dd(m.vocab_size) / tp * h + (m.position_embedding == PositionEmbedding::Learned ? dd(m.max_position_embeddings) * h : 0.0));
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
  const double fused_fwd = fw.cross_entropy_keeps_softmax ? ab + 4 : ab, fused_bwd = fw.cross_entropy_keeps_softmax ? 4 + ab : 2 * ab;
  const double ce_fwd = (fw.fused_cross_entropy ? fused_fwd : ab + 16) * tokens * vocab,
               ce_bwd = (fw.fused_cross_entropy ? fused_bwd : 20 + ab) * tokens * vocab;
  const double head_accumulate = accumulate * ((m.tie_word_embeddings ? 0.0 : vocab * h) + h);  // untied LM head, final norm
  out.head_s = passes_fwd * (head_fwd + memory_bound_time(gpu, tr, norm_fwd + ce_fwd)) + head_bwd +
               memory_bound_time(gpu, tr, norm_bwd + ce_bwd + head_accumulate);
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
  return edge_compute(m, t, p, gpu, layer_power_traits(m, t, p, gpu, gpu_compute_traits(gpu)));
}

}  // namespace trainsim
