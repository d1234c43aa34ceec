// How grouped MoE experts reach the GPU (framework trait moe_gemm_streams): one grouped kernel whose tiles share
// the waves, or Transformer Engine's GroupedLinear, one cuBLAS call per expert round-robin over 4 streams
// (transformer_engine/common/gemm/cublaslt_gemm.cu multi_stream_cublas_gemm), checked by counting tiles and waves.
#include <doctest/doctest.h>

#include <string>

#include "models/compute/compute.hpp"
#include "models/core/errors.hpp"
#include "models/scenario/framework.hpp"
#include "models/scenario/scenario.hpp"

using namespace trainsim;

namespace {

// Qwen3-235B-A22B's experts as the Megatron MoE ModelZoo's tp 4, ep 8, etp 1 row runs them: 4,096 tokens a
// sequence, 1,024 a rank under sequence parallelism, routed to 8 experts each and sent to the 8 ranks of the
// expert-parallel group: 1,024 x 8 x 8 / 128 = 512 tokens for each of a rank's 16 experts.
Scenario qwen3_235b_tp4_ep8(const nlohmann::json& framework) {
  return parse_scenario({{"model", "qwen3-235b-a22b"},
                         {"training", {{"seq_len", 4096}, {"global_batch_size", 8}, {"framework", framework}}},
                         {"parallel", {{"tp", 4}, {"ep", 8}, {"etp", 1}, {"sequence_parallel", true}, {"micro_batch_size", 1}}},
                         {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 32}}}},
                        false);
}

// At the top clock (the GPU's own traits, no power limit), so that the waves alone set the ratios.
LayerOp expert_op(const Scenario& sc, const std::string& name) {
  const GpuComputeTraits tr = gpu_compute_traits(sc.hardware.gpu);
  for (const LayerOp& op : layer_ops(sc.model, sc.training, sc.parallel, sc.hardware.gpu, tr, true))
    if (op.name == name) return op;
  FAIL("no op " << name);
  return {};
}

}  // namespace

TEST_CASE("grouped experts on streams: Transformer Engine's four streams leave a third of the waves idle at 512 tokens an expert") {
  const Scenario grouped = qwen3_235b_tp4_ep8({{"preset", "megatron-core"}, {"moe_gemm_streams", 0}});
  const Scenario streams4 = qwen3_235b_tp4_ep8("megatron-core");  // the preset: 4 streams
  const Scenario streams1 = qwen3_235b_tp4_ep8({{"preset", "megatron-core"}, {"moe_gemm_streams", 1}});
  // gate+up fprop: 16 GEMMs of 512 x 3,072 outputs over k = 4,096. The H100 preset's 128 x 256 tiles cover one in
  // 4 x 12 = 48 tiles (or 2 x 24 transposed). One grouped kernel: 768 tiles in ceil(768 / 132) = 6 waves. Four
  // streams: 4 rounds of 4 GEMMs, 192 tiles a round in 2 waves, 8 waves. One stream: 16 GEMMs of 1 wave each.
  // The k loop of every wave is the same, so the times stand in the ratio of the waves.
  const LayerOp g = expert_op(grouped, "moe.experts.gate_up.fprop");
  const LayerOp s4 = expert_op(streams4, "moe.experts.gate_up.fprop");
  const LayerOp s1 = expert_op(streams1, "moe.experts.gate_up.fprop");
  CHECK(g.gemm.m == 512);
  CHECK(g.gemm.n == 3072);
  CHECK(g.gemm.count == 16);
  CHECK(s4.predicted_s / g.predicted_s == doctest::Approx(8.0 / 6));
  CHECK(s1.predicted_s / g.predicted_s == doctest::Approx(16.0 / 6));
  // The same FLOPs; one launch for the grouped kernel, one per expert on streams.
  CHECK(s4.flops == doctest::Approx(g.flops));
  CHECK(g.kernels == 1);
  CHECK(s4.kernels == 16);
  // down fprop: 512 x 4,096 outputs, 4 x 16 = 64 tiles an expert. Four rounds of 256 tiles in 2 waves each take 8
  // waves, as the grouped kernel's 1,024 tiles do: ceil(1024 / 132) = 8.
  CHECK(expert_op(streams4, "moe.experts.down.fprop").predicted_s ==
        doctest::Approx(expert_op(grouped, "moe.experts.down.fprop").predicted_s));
}

TEST_CASE("grouped experts on streams: each expert GEMM call costs the host, unless a CUDA graph replays the step") {
  // The expert GEMMs of one MoE layer and micro-batch: fprop and dgrad of gate+up and down, and the two weight
  // gradients, 6 ops of 16 calls each. On streams every call is made from C++ (kAtenLoopGemmHostS, 26 us) in place
  // of the one Python launch of a grouped kernel: the layer's host time grows by 16 x 26 us - 30.9 us (the preset's
  // forward launch gap) per forward GEMM op and 16 x 26 us - 21.4 us per backward one.
  const Scenario grouped = qwen3_235b_tp4_ep8({{"preset", "megatron-core"}, {"moe_gemm_streams", 0}});
  const Scenario streams4 = qwen3_235b_tp4_ep8("megatron-core");
  const GpuComputeTraits tr = gpu_compute_traits(grouped.hardware.gpu);
  const LayerCompute a = layer_compute(grouped.model, grouped.training, grouped.parallel, grouped.hardware.gpu, tr, true);
  const LayerCompute b = layer_compute(streams4.model, streams4.training, streams4.parallel, streams4.hardware.gpu, tr, true);
  CHECK(b.kernels_forward - a.kernels_forward == doctest::Approx(2 * 15));
  CHECK(b.kernels_backward - a.kernels_backward == doctest::Approx(4 * 15));
  // Host time is exposed only past the GPU time: the forward's 2 x (16 x 26 - 30.9) = 770 us more host time
  // against 1.3 ms of GPU work is (partly) exposed, where the grouped kernel's forward was not.
  CHECK(a.host_s == doctest::Approx(0.0));
  CHECK(b.host_s > 0);
  const Scenario graphed = qwen3_235b_tp4_ep8({{"preset", "megatron-core"}, {"cuda_graphs", true}});
  CHECK(layer_compute(graphed.model, graphed.training, graphed.parallel, graphed.hardware.gpu, tr, true).host_s == 0);
}

TEST_CASE("moe_gemm_streams: a whole number of streams") {
  CHECK_THROWS_WITH_AS(parse_framework(nlohmann::json{{"preset", "megatron-core"}, {"moe_gemm_streams", 2.5}}, "/training/framework"),
                       doctest::Contains("/training/framework/moe_gemm_streams"), InputError);
  CHECK_THROWS_WITH_AS(parse_framework(nlohmann::json{{"preset", "megatron-core"}, {"moe_gemm_streams", -1}}, "/training/framework"),
                       doctest::Contains("/training/framework/moe_gemm_streams"), InputError);
  CHECK(parse_framework(nlohmann::json{{"preset", "megatron-core"}, {"moe_gemm_streams", 1}}, "/training/framework").moe_gemm_streams == 1);
}
