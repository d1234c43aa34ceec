// Compute model: GEMM efficiency (MAMF ceiling, roofline, tile/wave quantization), fused attention, and the
// per-layer op list, checked against hand counts and published measurements.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "models/compute/compute.hpp"
#include "models/scenario/scenario.hpp"

using namespace trainsim;
using Json = nlohmann::json;

namespace {
GpuSpec gpu(const char* name) { return parse_gpu(name, "/hardware/gpu"); }

Scenario scenario(const char* model, int seq_len) {
  return parse_scenario({{"model", model},
                         {"training", {{"seq_len", seq_len}, {"global_batch_size", 8}}},
                         {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 8}}}},
                        false);
}

ParallelLayout layout(int tp) {
  ParallelLayout p;
  p.tp = tp;
  p.micro_batch_size = 1;
  return p;
}

// The published figures alone: the traits with neutral fitted parameters (no power limit, copy-speed memory kernels).
GpuComputeTraits published(const GpuSpec& g) {
  GpuComputeTraits tr = gpu_compute_traits(g);
  apply_fitted_parameters(tr, g, FittedParameters{});
  return tr;
}
// What the shipped fitted parameters do to this GPU (models/calibration/fitted_parameters.hpp; the formula is tested below):
// tensor-core work takes slowdown(g) times longer, memory-bound kernels reach mem_eff() of the copy bandwidth.
double slowdown(const GpuSpec& g) { return gpu_compute_traits(g).tensor_slowdown; }
double mem_eff() { return shipped_fitted_parameters().values.memory_kernel_efficiency; }

double tflops(const GpuSpec& g, Precision p, const GemmShape& s) { return gemm_flops(s) / gemm_time(g, published(g), p, s) / 1e12; }

// Llama-3-8B per layer: Q 4096x4096, K and V 4096x1024, O 4096x4096, gate/up/down 3 x 4096x14336.
constexpr double kLlamaLayerMatrices = 4096.0 * 4096 * 2 + 2 * 4096.0 * 1024 + 3 * 4096.0 * 14336;  // 218,103,808
}  // namespace

TEST_CASE("gemm_flops counts 2·m·n·k per GEMM") {
  CHECK(gemm_flops({2, 3, 4, 5}) == trainsim::test::approx(2 * 2 * 3 * 4 * 5));
  CHECK(gemm_flops({8192, 8192, 8192}) == trainsim::test::approx(1.099511627776e12));
}

TEST_CASE("GEMM 8192^3 bf16 on H100 SXM matches the PyTorch and MAMF measurements") {
  const GpuSpec h100 = gpu("h100-sxm-80gb");
  const double got = tflops(h100, Precision::Bf16, {8192, 8192, 8192});
  // Hand: the ceiling is the MAMF point (stas00/ml-engineering: 792.1 TFLOP/s at 6144x17920x2816) with its own
  // quantization divided out: 128x256 tiles -> 48·70 = 3360 tiles, ceil(3360/132) = 26 waves -> 3360/3432; so
  // ceiling = 792.1/989.4 x 3432/3360 = 0.8177. 8192^3: 64·32 = 2048 tiles, 16 waves -> 2048/2112 = 0.970;
  // x the 989.4 TFLOP/s dense peak = 792.1 x 3432/3360 x 2048/2112 = 784.6 TFLOP/s.
  CHECK(got == trainsim::test::approx(792.1 * 3432.0 / 3360.0 * 2048.0 / 2112.0));
  // ../shared/reference/microbenchmarks.json: 798 TFLOP/s through PyTorch on H100 SXM, MAMF 792.1.
  CHECK(std::fabs(got / 798.0 - 1) < 0.05);
  CHECK(std::fabs(got / 792.1 - 1) < 0.05);
  CHECK(gemm_efficiency(h100, published(h100), Precision::Bf16, {8192, 8192, 8192}) == trainsim::test::approx(got / 989.4));
  // Under the shipped power limit the same GEMM takes slowdown(h100) times longer.
  CHECK(gemm_time(h100, Precision::Bf16, {8192, 8192, 8192}) == trainsim::test::approx(gemm_flops({8192, 8192, 8192}) / (got * 1e12) * slowdown(h100)));
}

TEST_CASE("A skinny GEMM (m = 16) is memory bound: time = bytes / the bandwidth a GEMM streams its operands at") {
  const GpuSpec h100 = gpu("h100-sxm-80gb");
  const GemmShape g{16, 8192, 8192};
  // bytes = 2·(16·8192 + 8192·8192 + 16·8192) = 134,742,016; achievable HBM 3.35 TB/s x (3.0/3.35) = 3.0 TB/s
  // (device-to-device copy measured on H100, microbenchmarks.json), of which a GEMM streams 0.72 (measured,
  // compute_detail.hpp kGemmStreamEfficiency): 2.16 TB/s -> 62.4 us.
  const double bytes = 2.0 * (16 * 8192 + 8192.0 * 8192 + 16 * 8192);
  CHECK(gemm_bytes(Precision::Bf16, g) == trainsim::test::approx(bytes));
  CHECK(gemm_time(h100, Precision::Bf16, g) == trainsim::test::approx(bytes / 2.16e12));
  // Memory-bound kernels (not GEMMs) run at the fitted fraction of the copy bandwidth.
  CHECK(memory_bound_time(h100, bytes) == trainsim::test::approx(bytes / (3.0e12 * mem_eff())));
  // 2.15 GFLOP in 62.4 us = 34.5 TFLOP/s: under 5% of peak, far below the 0.80 ceiling.
  CHECK(gemm_efficiency(h100, Precision::Bf16, g) == trainsim::test::approx(gemm_flops(g) / (bytes / 2.16e12) / 989.4e12));
  CHECK(gemm_efficiency(h100, Precision::Bf16, g) < 0.05);
}

TEST_CASE("GEMM wave quantization: one tile more than the SMs costs a second wave") {
  const GpuSpec h100 = gpu("h100-sxm-80gb");
  const GpuComputeTraits tr = gpu_compute_traits(h100);
  REQUIRE(tr.sms == 132);
  // 1536 x 2816 in 128x256 tiles = 12·11 = 132 tiles: one full wave. 896 x 4864 = 7·19 = 133 tiles: two waves,
  // 133/264 of the second one idle (either tile orientation gives the same).
  const GemmShape full{1536, 2816, 8192}, spill{896, 4864, 8192};
  CHECK(gemm_quantization(tr, full) == trainsim::test::approx(1.0));
  CHECK(gemm_quantization(tr, spill) == trainsim::test::approx(133.0 / 264.0));
  CHECK(gemm_efficiency(h100, Precision::Bf16, spill) < gemm_efficiency(h100, Precision::Bf16, full));
  CHECK(gemm_efficiency(h100, published(h100), Precision::Bf16, full) == trainsim::test::approx(792.1 / 989.4 * 3432.0 / 3360.0));
  // A100: 128x128 tiles over 108 SMs; 12·9 = 108 tiles fill one wave, 1 x 109 tiles need two.
  const GpuComputeTraits a100 = gpu_compute_traits(gpu("a100-sxm-80gb"));
  CHECK(gemm_quantization(a100, {1536, 1152, 4096}) == trainsim::test::approx(1.0));
  CHECK(gemm_quantization(a100, {128, 128 * 109, 4096}) == trainsim::test::approx(109.0 / 216.0));
}

TEST_CASE("GEMM ceilings from the presets' published points, fp8 and the fallback") {
  // Each MAMF point (microbenchmarks.json gemm_bf16_mamf) over the preset's dense peak, its own shape's tile/wave
  // quantization divided out. A100 SXM 6912x16384 in 128x128 tiles = 54·128 = 6912 tiles = 64 full waves of 108.
  const double a100_c = 267.9 / 312;
  // A100 PCIe 2304x5120: 18·40 = 720 tiles, 7 waves of 108 -> 720/756.
  const double a100_pcie_c = 256.4 / 312 * 756.0 / 720.0;
  // H100 6144x17920 in 128x256 tiles: 48·70 = 3360 tiles, 26 waves of 132 -> 3360/3432.
  const double h100_c = 792.1 / 989.4 * 3432.0 / 3360.0;
  // GH200 (the H200's row) 11264x19712: 88·77 = 6776 tiles, 52 waves of 132 -> 6776/6864.
  const double gh200_c = 821.0 / 989.4 * 6864.0 / 6776.0;
  const double b200_c = 1745.0 / 2250;  // no shape published: nothing divided out
  // MI300X 4096x10240 in 128x128 tiles: 32·80 = 2560 tiles, 9 waves of 304 CUs -> 2560/2736.
  const double mi300x_c = 781.9 / 1307.4 * 2736.0 / 2560.0;
  CHECK(gpu_compute_traits(gpu("a100-sxm-80gb")).gemm_ceiling == trainsim::test::approx(a100_c));
  CHECK(gpu_compute_traits(gpu("a100-pcie-40gb")).gemm_ceiling == trainsim::test::approx(a100_pcie_c));
  CHECK(gpu_compute_traits(gpu("a800-sxm-80gb")).gemm_ceiling == trainsim::test::approx(a100_c));
  CHECK(gpu_compute_traits(gpu("h800-sxm-80gb")).gemm_ceiling == trainsim::test::approx(h100_c));
  CHECK(gpu_compute_traits(gpu("h200-sxm-141gb")).gemm_ceiling == trainsim::test::approx(gh200_c));
  CHECK(gpu_compute_traits(gpu("b200-sxm-180gb")).gemm_ceiling == trainsim::test::approx(b200_c));
  CHECK(gpu_compute_traits(gpu("mi300x-192gb")).gemm_ceiling == trainsim::test::approx(mi300x_c));
  // No published point: the mean of the six distinct published ceilings (the A800's and H800's rows are copies of the
  // A100's and H100's; the H100 PCIe's is an assumed fraction, not a measurement), computed from the presets.
  const double mean = (a100_c + a100_pcie_c + h100_c + gh200_c + b200_c + mi300x_c) / 6;
  CHECK(mean_published_gemm_ceiling() == trainsim::test::approx(mean));
  const GpuSpec ascend = gpu("ascend-910b-64gb");
  CHECK(gpu_compute_traits(ascend).gemm_ceiling == trainsim::test::approx(mean));
  CHECK(gpu_compute_traits(ascend).sms == 0);  // unknown: no quantization
  CHECK(gemm_efficiency(ascend, published(ascend), Precision::Bf16, {8192, 8192, 8192}) == trainsim::test::approx(gpu_compute_traits(ascend).gemm_ceiling));
  // fp8 runs against the fp8 peak (2x) with the same ceiling: a compute-bound GEMM takes half the time.
  const GpuSpec h100 = gpu("h100-sxm-80gb");
  CHECK(gemm_time(h100, Precision::Fp8, {8192, 8192, 8192}) ==
        trainsim::test::approx(gemm_time(h100, Precision::Bf16, {8192, 8192, 8192}) * 989.4 / 1978.9));
  // fp32 training runs GEMMs as TF32 (494.7 TFLOP/s on H100).
  CHECK(gemm_time(h100, Precision::Fp32, {8192, 8192, 8192}) ==
        trainsim::test::approx(gemm_time(h100, Precision::Bf16, {8192, 8192, 8192}) * 989.4 / 494.7));
  // No fp8 on A100: the 16-bit peak.
  const GpuSpec a100 = gpu("a100-sxm-80gb");
  CHECK(gemm_time(a100, Precision::Fp8, {8192, 8192, 8192}) == trainsim::test::approx(gemm_time(a100, Precision::Bf16, {8192, 8192, 8192})));
}

TEST_CASE("compute: flash attention efficiencies") {
  // A100: FlashAttention-2 (Dao 2023) 50-73% forward -> 0.615; backward x 63/73.
  const GpuComputeTraits a100 = published(gpu("a100-sxm-80gb"));
  CHECK(flash_attention_efficiency(a100, 4096, false) == trainsim::test::approx(0.615));
  CHECK(flash_attention_efficiency(a100, 4096, true) == trainsim::test::approx(0.615 * 63 / 73));
  // H100: cuDNN bars of Shah et al. 2024 Fig. 5/6 at 4k: 518 and 499 TFLOP/s of 989; between 2k and 4k halfway in log2.
  const GpuComputeTraits h100 = published(gpu("h100-sxm-80gb"));
  CHECK(flash_attention_efficiency(h100, 4096, false) == trainsim::test::approx(518.0 / 989));
  CHECK(flash_attention_efficiency(h100, 4096, true) == trainsim::test::approx(499.0 / 989));
  CHECK(flash_attention_efficiency(h100, 2048 * std::sqrt(2.0), false) == trainsim::test::approx((484.0 + 518.0) / 2 / 989));
  CHECK(flash_attention_efficiency(h100, 100, false) == trainsim::test::approx(315.0 / 989));  // clamped to the table
  // FlashAttention-2 on Hopper: 0.558 of the table (measured flash / cuDNN on an H100, torch_microbench.json); on an
  // A100 the kernel choice does not matter (FlashAttention-2 fractions either way).
  CHECK(flash_attention_efficiency(h100, 4096, false, AttentionKernel::Flash2) == trainsim::test::approx(0.558 * 518.0 / 989));
  CHECK(flash_attention_efficiency(h100, 4096, true, AttentionKernel::Flash2) == trainsim::test::approx(0.558 * 499.0 / 989));
  CHECK(flash_attention_efficiency(a100, 4096, false, AttentionKernel::Flash2) == trainsim::test::approx(0.615));
}

TEST_CASE("layer_compute: Llama-3-8B, s = 4096, b = 1, tp = 1 against the hand count") {
  Scenario sc = scenario("llama3-8b", 4096);
  const GpuSpec h100 = gpu("h100-sxm-80gb");
  const double T = 4096;
  const double gemm_fwd = 2 * T * kLlamaLayerMatrices;                       // 1.7867e12
  const double attn_fwd = 4 * T * T * 128 * 32 * 0.5;                        // 1.3744e11, causal flash
  const LayerCompute lc = layer_compute(sc.model, sc.training, layout(1), h100, false);

  SUBCASE("forward FLOPs = 2·tokens·matrices + causal attention") {
    CHECK(std::fabs(lc.forward_flops / (gemm_fwd + attn_fwd) - 1) < 1e-3);
    CHECK(lc.attention_flops == trainsim::test::approx(attn_fwd * (1 + 2.5)));      // backward runs 2.5x the forward
  }
  SUBCASE("backward: dgrad + wgrad = 2x the forward GEMM FLOPs") {
    CHECK(lc.backward_flops - 2.5 * attn_fwd == trainsim::test::approx(2 * gemm_fwd));
    CHECK(lc.gemm_flops == trainsim::test::approx(3 * gemm_fwd));
  }
  SUBCASE("time splits add up, every part positive") {
    CHECK(lc.gemm_s + lc.attention_s + lc.memory_bound_s == trainsim::test::approx(lc.forward_s + lc.backward_s));
    CHECK(lc.gemm_s > 0);
    CHECK(lc.attention_s > 0);
    CHECK(lc.memory_bound_s > 0);
    CHECK(lc.recompute_s == 0);
    // GEMMs at ~0.78-0.80 of 989 TFLOP/s: the forward takes at least gemm_fwd / (0.801 · 989.4 TFLOP/s).
    CHECK(lc.forward_s > gemm_fwd / (792.1 / 989 * 989.4e12));
    CHECK(lc.backward_s > lc.forward_s);
  }
  SUBCASE("tp = 2 halves the GEMM and attention FLOPs per GPU") {
    const LayerCompute lc2 = layer_compute(sc.model, sc.training, layout(2), h100, false);
    CHECK(lc2.gemm_flops == trainsim::test::approx(lc.gemm_flops / 2));
    CHECK(lc2.attention_flops == trainsim::test::approx(lc.attention_flops / 2));
    CHECK(lc2.forward_s < lc.forward_s);
  }
  SUBCASE("recompute: full repeats the forward, selective the attention core") {
    TrainingSpec t = sc.training;
    t.recompute = Recompute::Full;
    // One GPU implies the plain loop, whose torch.utils.checkpoint stops before the down projection's GEMM
    // (2·T·h·f FLOPs, test_checkpoint_early_stop.cpp); Megatron's CheckpointFunction repeats the whole forward.
    const LayerCompute full = layer_compute(sc.model, t, layout(1), h100, false);
    CHECK(full.recompute_flops == trainsim::test::approx(lc.forward_flops - 2 * T * 4096 * 14336));
    TrainingSpec megatron = t;
    megatron.framework = *find_framework("megatron-core");
    const LayerCompute whole = layer_compute(sc.model, megatron, layout(1), h100, false);
    CHECK(whole.recompute_flops == trainsim::test::approx(lc.forward_flops));
    CHECK(whole.recompute_s == trainsim::test::approx(whole.forward_s));
    t.recompute = Recompute::Selective;
    const LayerCompute sel = layer_compute(sc.model, t, layout(1), h100, false);
    CHECK(sel.recompute_flops == trainsim::test::approx(attn_fwd));
    // At the clock this layer holds under the power limit (layer_power_traits: the step model's pricing).
    const double layer_slowdown = layer_power_traits(sc.model, t, layout(1), h100, gpu_compute_traits(h100)).tensor_slowdown;
    CHECK(layer_slowdown >= 1.0);
    CHECK(layer_slowdown <= slowdown(h100));  // never slower than a GEMM-only loop
    CHECK(sel.recompute_s == trainsim::test::approx(attn_fwd / (989.4e12 * 518.0 / 989) * layer_slowdown));
  }
  SUBCASE("without flash attention the s² work is not halved by the causal mask") {
    TrainingSpec t = sc.training;
    t.flash_attention = false;
    const LayerCompute nf = layer_compute(sc.model, t, layout(1), h100, false);
    CHECK(nf.forward_flops == trainsim::test::approx(gemm_fwd + 2 * attn_fwd));
    CHECK(nf.backward_flops == trainsim::test::approx(2 * gemm_fwd + 4 * attn_fwd));  // dgrad of both BMM inputs
    CHECK(nf.attention_s > lc.attention_s);  // scores through HBM
  }
  SUBCASE("LoRA skips the base wgrad; adapters add x·A and ·B with their own dgrad and wgrad") {
    TrainingSpec t = sc.training;
    t.mode = TrainingMode::Lora;
    const LayerCompute lo = layer_compute(sc.model, t, layout(1), h100, false);
    // r = 16 on q,k,v,o,gate,up,down: r·Σ(in + out) = 16·(8192 + 5120 + 5120 + 8192 + 3·18432) = 1,310,720
    // adapter parameters per layer (lora_parameters / 32); forward 2·T·that.
    const double adapters = 2 * T * 16 * (8192 + 5120 + 5120 + 8192 + 3 * 18432.0);
    CHECK(lo.forward_flops == trainsim::test::approx(gemm_fwd + adapters + attn_fwd));
    CHECK(lo.backward_flops == trainsim::test::approx(gemm_fwd + 2 * adapters + 2.5 * attn_fwd));
    CHECK(lo.backward_s < lc.backward_s);
    // QLoRA dequantizes the 218.1M linear weights (4.127 bits -> 16 bits) before forward and backward.
    t.mode = TrainingMode::Qlora;
    const LayerCompute q = layer_compute(sc.model, t, layout(1), h100, false);
    const double dequant = kLlamaLayerMatrices * (4.127 / 8 + 2);
    CHECK(q.memory_bound_s - lo.memory_bound_s == trainsim::test::approx(2 * dequant / (3.0e12 * mem_eff())));
  }
  SUBCASE("DPO: chosen + rejected through the policy, and the reference model's forward") {
    TrainingSpec t = sc.training;
    t.mode = TrainingMode::Dpo;
    const LayerCompute dpo = layer_compute(sc.model, t, layout(1), h100, false);
    CHECK(dpo.forward_flops == trainsim::test::approx(4 * lc.forward_flops));
    CHECK(dpo.backward_flops == trainsim::test::approx(2 * lc.backward_flops));
  }
  SUBCASE("DPO with LoRA: the reference forward is the base's, the adapters' work only in the policy") {
    TrainingSpec t = sc.training;
    t.mode = TrainingMode::Dpo;
    t.dpo_adapters = AdapterKind::Lora;
    const LayerCompute d = layer_compute(sc.model, t, layout(1), h100, false);
    // Two sequences through the policy (base + adapters) and through the reference (base only); the backward is
    // LoRA's (no base wgrad), for both sequences. Adapter FLOPs as in the LoRA subcase above.
    const double adapters = 2 * T * 16 * (8192 + 5120 + 5120 + 8192 + 3 * 18432.0);
    CHECK(d.forward_flops == trainsim::test::approx(2 * (gemm_fwd + adapters + attn_fwd) + 2 * (gemm_fwd + attn_fwd)));
    CHECK(d.backward_flops == trainsim::test::approx(2 * (gemm_fwd + 2 * adapters + 2.5 * attn_fwd)));
  }
  SUBCASE("context parallel: each rank holds s/cp queries against the full sequence, 1/cp of the work") {
    ParallelLayout p = layout(1);
    p.cp = 2;
    const LayerCompute c2 = layer_compute(sc.model, sc.training, p, h100, false);
    CHECK(c2.forward_flops == trainsim::test::approx((gemm_fwd + attn_fwd) / 2));
  }
}

TEST_CASE("layer_compute: Mixtral-8x7B top-2 runs 2/8 of all experts' FLOPs") {
  Scenario sc = scenario("mixtral-8x7b", 4096);
  const GpuSpec h100 = gpu("h100-sxm-80gb");
  const double T = 4096, h = 4096, f = 14336, E = 8;
  const double attention_proj = 2 * T * (4096.0 * 4096 * 2 + 2 * 4096.0 * 1024);
  const double router = 2 * T * h * E;
  const double attn = 4 * T * T * 128 * 32 * 0.5;
  const double all_experts = 2 * T * E * 3 * h * f;  // every token through all 8 experts
  auto experts_of = [&](const LayerCompute& lc) { return lc.forward_flops - attention_proj - router - attn; };
  const LayerCompute lc = layer_compute(sc.model, sc.training, layout(1), h100, true);
  CHECK(experts_of(lc) == trainsim::test::approx(2.0 / 8.0 * all_experts));
  // Balanced routing: expert parallelism moves the experts, not the work per GPU.
  ParallelLayout p = layout(1);
  p.ep = 4;
  CHECK(experts_of(layer_compute(sc.model, sc.training, p, h100, true)) == trainsim::test::approx(2.0 / 8.0 * all_experts));
  // tp = 2 with sequence parallel and expert-TP 2: half the attention/router... and half the expert work.
  p = layout(2);
  p.sequence_parallel = true;
  p.etp = 2;
  const LayerCompute t2 = layer_compute(sc.model, sc.training, p, h100, true);
  CHECK(t2.forward_flops == trainsim::test::approx((attention_proj + router + attn + 2.0 / 8.0 * all_experts) / 2));
  CHECK(lc.gemm_s + lc.attention_s + lc.memory_bound_s == trainsim::test::approx(lc.forward_s + lc.backward_s));
  // The overload with pre-resolved traits at the layer's clock (what the step model and the layout search use) gives
  // the same answer.
  const LayerCompute same = layer_compute(sc.model, sc.training, layout(1), h100,
                                          layer_power_traits(sc.model, sc.training, layout(1), h100, gpu_compute_traits(h100)), true);
  CHECK(same.forward_s == lc.forward_s);
  CHECK(same.backward_s == lc.backward_s);
}

TEST_CASE("edge_compute: LM head GEMM FLOPs and a memory-bound embedding") {
  Scenario sc = scenario("llama3-8b", 4096);
  const GpuSpec h100 = gpu("h100-sxm-80gb");
  const double T = 4096, h = 4096, V = 128256;
  const EdgeCompute e = edge_compute(sc.model, sc.training, layout(1), h100);
  CHECK(e.head_flops == trainsim::test::approx(3 * 2 * T * h * V));     // forward, dgrad, wgrad
  // Embedding forward: read T rows + write T x h (2 B each); backward: read dy, read+write fp32 rows.
  CHECK(e.embedding_s == trainsim::test::approx((2 * 2 * T * h + (2 * T * h + 8 * T * h)) / (3.0e12 * mem_eff())));
  TrainingSpec t = sc.training;
  t.mode = TrainingMode::Lora;
  const EdgeCompute lo = edge_compute(sc.model, t, layout(1), h100);
  CHECK(lo.head_flops == trainsim::test::approx(2 * 2 * T * h * V));    // frozen head: no wgrad
  CHECK(lo.embedding_s == trainsim::test::approx(2 * 2 * T * h / (3.0e12 * mem_eff())));  // frozen embedding: no backward
  CHECK(edge_compute(sc.model, sc.training, layout(2), h100).head_flops == trainsim::test::approx(e.head_flops / 2));
}

TEST_CASE("layer_ops: the op list sums to layer_compute, pass by pass and kind by kind") {
  const GpuSpec h100 = gpu("h100-sxm-80gb");
  struct Case {
    const char* model;
    TrainingMode mode;
    Precision precision;
    Recompute recompute;
    bool flash;
    int tp;
    bool sp;
  };
  const Case cases[] = {
      {"llama3-8b", TrainingMode::Sft, Precision::Bf16, Recompute::None, true, 1, false},
      {"llama3-8b", TrainingMode::Pretrain, Precision::Bf16, Recompute::Selective, true, 2, true},
      {"llama3-8b", TrainingMode::Pretrain, Precision::Fp8, Recompute::Full, true, 4, true},
      {"llama3-8b", TrainingMode::Lora, Precision::Bf16, Recompute::Full, true, 1, false},
      {"llama3-8b", TrainingMode::Qlora, Precision::Bf16, Recompute::Selective, false, 2, false},
      {"llama3-8b", TrainingMode::Dpo, Precision::Bf16, Recompute::Full, true, 2, false},
      {"gpt3-175b", TrainingMode::Pretrain, Precision::Fp16, Recompute::Selective, false, 8, true},
      {"mixtral-8x7b", TrainingMode::Pretrain, Precision::Bf16, Recompute::Full, true, 2, true},
      {"qwen3-30b-a3b", TrainingMode::Sft, Precision::Fp32, Recompute::None, true, 1, false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.model);
    CAPTURE(static_cast<int>(c.mode));
    CAPTURE(static_cast<int>(c.recompute));
    Scenario sc = scenario(c.model, 2048);
    TrainingSpec t = sc.training;
    t.mode = c.mode;
    t.precision = c.precision;
    t.recompute = c.recompute;
    t.flash_attention = c.flash;
    ParallelLayout p = layout(c.tp);
    p.sequence_parallel = c.sp;
    p.micro_batch_size = 2;
    if (sc.model.is_moe()) p.ep = 2, p.etp = c.tp;
    for (bool moe : {false, true}) {
      const GpuComputeTraits tr = gpu_compute_traits(h100);
      const LayerCompute lc = layer_compute(sc.model, t, p, h100, tr, moe);
      const std::vector<LayerOp> ops = layer_ops(sc.model, t, p, h100, tr, moe);
      REQUIRE(!ops.empty());
      double total = 0, fwd = 0, bwd = 0, rec = 0, gemm = 0, attention = 0, memory = 0, fwd_flops = 0, bwd_flops = 0;
      for (const LayerOp& op : ops) {
        CHECK(op.predicted_s >= 0);
        total += op.predicted_s;
        const std::string pass = op.pass;
        if (pass == "recompute") {
          rec += op.predicted_s;
          continue;
        }
        (pass == "forward" ? fwd : bwd) += op.predicted_s;
        (pass == "forward" ? fwd_flops : bwd_flops) += op.flops;
        (op.kind == LayerOp::Gemm ? gemm : op.kind == LayerOp::Attention ? attention : memory) += op.predicted_s;
        if (op.kind == LayerOp::Gemm) CHECK(op.flops == trainsim::test::approx(gemm_flops(op.gemm)));
        if (op.gemm_equivalent) CHECK(op.flops == trainsim::test::approx(gemm_flops(op.gemm)));  // FLOP-equivalent shape
        if (op.kind == LayerOp::MemoryBound) CHECK(op.bytes > 0);
      }
      CHECK(total == trainsim::test::approx(lc.forward_s + lc.backward_s + lc.recompute_s).epsilon(1e-12));
      CHECK(fwd == trainsim::test::approx(lc.forward_s).epsilon(1e-12));
      CHECK(bwd == trainsim::test::approx(lc.backward_s).epsilon(1e-12));
      CHECK(rec == trainsim::test::approx(lc.recompute_s).epsilon(1e-12));
      CHECK(gemm == trainsim::test::approx(lc.gemm_s).epsilon(1e-12));
      CHECK(attention == trainsim::test::approx(lc.attention_s).epsilon(1e-12));
      CHECK(memory == trainsim::test::approx(lc.memory_bound_s).epsilon(1e-12));
      CHECK(fwd_flops == trainsim::test::approx(lc.forward_flops).epsilon(1e-12));
      CHECK(bwd_flops == trainsim::test::approx(lc.backward_flops).epsilon(1e-12));
    }
  }
}

TEST_CASE("layer_ops: Llama-3-8B shapes, dtypes and passes by hand") {
  Scenario sc = scenario("llama3-8b", 4096);
  const GpuSpec h100 = gpu("h100-sxm-80gb");
  TrainingSpec t = sc.training;
  t.precision = Precision::Fp8;
  t.recompute = Recompute::Selective;
  const std::vector<LayerOp> ops = layer_ops(sc.model, t, layout(2), h100, false);
  auto find = [&](const std::string& name, const char* pass) -> const LayerOp* {
    for (const LayerOp& op : ops)
      if (op.name == name && std::string(op.pass) == pass) return &op;
    return nullptr;
  };
  // tp = 2: QKV has (32/2 + 2·8/2)·128 = 3072 outputs; gate+up 2·14336/2 = 14336; fp8 linear layers.
  const LayerOp* qkv = find("attention.qkv.fprop", "forward");
  REQUIRE(qkv);
  CHECK(qkv->gemm.m == 4096);
  CHECK(qkv->gemm.n == 3072);
  CHECK(qkv->gemm.k == 4096);
  CHECK(qkv->precision == Precision::Fp8);
  const LayerOp* wgrad = find("mlp.gate_up.wgrad", "backward");
  REQUIRE(wgrad);
  CHECK(wgrad->gemm.m == 14336);
  CHECK(wgrad->gemm.n == 4096);
  CHECK(wgrad->gemm.k == 4096);
  CHECK(find("mlp.down.dgrad", "backward"));
  CHECK(find("mlp.gate_up.fp8_cast", "forward"));
  // The fused attention core: 16-bit, listed with the FLOP-equivalent Q·K^T-shaped batched GEMM (causal half
  // of the keys); selective recompute repeats exactly it.
  const LayerOp* core = find("attention.core", "forward");
  REQUIRE(core);
  CHECK(core->kind == LayerOp::Attention);
  CHECK(core->gemm_equivalent);
  CHECK(core->precision == Precision::Bf16);
  CHECK(core->gemm.m == 4096);
  CHECK(core->gemm.n == 2048);
  CHECK(core->gemm.k == 128);
  CHECK(core->gemm.count == trainsim::test::approx(2 * 16));  // QK^T and AV for 16 heads
  const LayerOp* again = find("attention.core", "recompute");
  REQUIRE(again);
  CHECK(again->predicted_s == core->predicted_s);
  int recomputed = 0;
  for (const LayerOp& op : ops) recomputed += std::string(op.pass) == "recompute";
  CHECK(recomputed == 1);
  CHECK(std::string(to_string(LayerOp::MemoryBound)) == "memory");
}

TEST_CASE("gradient-accumulation fusion: Megatron's expert weight gradients read and write fp32 main_grad") {
  // Qwen3-30B-A3B (128 experts, top 8, expert FFN 768) at 128 tokens, ep 8: 128 x 8 routed tokens per rank, 8 ranks
  // send to each rank's 16 experts, 64 tokens each. The experts' gate+up weight gradient is 16 GEMMs of
  // m = 2 x 768, n = 2048, k = 64. Unfused it reads its two bf16 operands and writes its output once in bf16:
  // 2·(m·k + k·n) + 2·m·n bytes per expert; accumulated into main_grad (megatron/core/tensor_parallel/layers.py,
  // gradient_accumulation_fusion) it reads and writes the fp32 output: 2·(m·k + k·n) + 8·m·n. At 64 tokens both are
  // bound by that traffic (2·m·n·k FLOPs over 6.8 MB is 60 FLOP/byte, far under an H100 GEMM's ratio of rate to
  // bandwidth), so their times stand in the ratio of their bytes.
  auto expert_wgrad = [](nlohmann::json framework, int zero_stage) {
    const Scenario sc = parse_scenario({{"model", "qwen3-30b-a3b"},
                                        {"training", {{"seq_len", 128}, {"global_batch_size", 1}, {"zero_stage", zero_stage}, {"framework", framework}}},
                                        {"parallel", {{"ep", 8}, {"etp", 1}, {"micro_batch_size", 1}}},
                                        {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 8}}}},
                                       false);
    for (const LayerOp& op : layer_ops(sc.model, sc.training, sc.parallel, sc.hardware.gpu, true))
      if (op.name == "moe.experts.gate_up.wgrad") return op;
    FAIL("no expert wgrad");
    return LayerOp{};
  };
  const double m = 2 * 768, n = 2048, k = 64, experts = 16;
  const double operands = 2 * (m * k + k * n);
  const LayerOp fused = expert_wgrad("megatron-core", 0);
  const LayerOp unfused = expert_wgrad({{"preset", "megatron-core"}, {"wgrad_accumulation_fusion", false}}, 0);
  CHECK(fused.gemm.m == m);
  CHECK(fused.gemm.n == n);
  CHECK(fused.gemm.k == k);
  CHECK(fused.gemm.count == experts);
  CHECK(fused.bytes == trainsim::test::approx(experts * (operands + 8 * m * n)));
  CHECK(unfused.bytes == trainsim::test::approx(experts * (operands + 2 * m * n)));
  CHECK(fused.predicted_s / unfused.predicted_s == trainsim::test::approx((operands + 8 * m * n) / (operands + 2 * m * n)));
  // Megatron-FSDP shards the gradients and refuses the fusion (megatron/training/arguments.py): zero_stage 3 prices
  // the unfused GEMM.
  CHECK(expert_wgrad("megatron-core", 3).bytes == trainsim::test::approx(unfused.bytes));
}

TEST_CASE("split-K: a small output over a long k is two launches, as cuBLAS ran the LoRA projections") {
  // The census's LoRA layer (calibrate/measurements/corpus/census/kernel_census-*: Llama, hidden 4096, 8 KV heads of 128,
  // MLP 14336, rank 16, 256 tokens): every A projection's fprop (256 x 16 outputs, k = 4096 or 14336) ran as split-K
  // partials and a reduction, and so did the B dgrads with k = 4096 or 14336; the k and v B dgrads (k = 1024, 4x the
  // 256 rows) and the base model's GEMMs (k at most 4x their longer output side) ran as one kernel: per layer 7 more
  // forward launches and 5 more backward ones (compute_detail.hpp kSplitKDepth).
  const Scenario s = parse_scenario({{"model",
                                      {{"num_hidden_layers", 2}, {"hidden_size", 4096}, {"num_attention_heads", 32}, {"num_key_value_heads", 8},
                                       {"intermediate_size", 14336}, {"vocab_size", 32000}, {"hidden_act", "silu"}}},
                                     {"training", {{"mode", "lora"}, {"seq_len", 256}, {"global_batch_size", 1}, {"framework", "transformers"},
                                                   {"lora", {{"rank", 16}}}}},
                                     {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 1}}}});
  double split_fwd = 0, split_bwd = 0;
  auto kernels = [&](const std::string& name, const char* pass) {
    for (const auto& op : layer_ops(s.model, s.training, s.parallel, s.hardware.gpu, false))
      if (op.name == name && std::string(op.pass) == pass) return op.kernels;
    return -1.0;
  };
  for (const auto& op : layer_ops(s.model, s.training, s.parallel, s.hardware.gpu, false))
    if (op.kind == LayerOp::Gemm && op.kernels == 2) (std::string(op.pass) == "forward" ? split_fwd : split_bwd) += 1;
  CHECK(kernels("attention.q_lora.a.fprop", "forward") == 2);
  CHECK(kernels("mlp.down_lora.a.fprop", "forward") == 2);
  CHECK(kernels("attention.q_lora.b.dgrad", "backward") == 2);
  CHECK(kernels("attention.k_lora.b.dgrad", "backward") == 1);
  CHECK(kernels("attention.q.fprop", "forward") == 1);
  CHECK(split_fwd == 7);
  CHECK(split_bwd == 5);
}
