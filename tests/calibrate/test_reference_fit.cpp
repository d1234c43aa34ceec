// The fitted parameters: the power-limit formula by hand, the once-per-step gradient passes, and the least-squares fit
// recovering parameters it did not see from cases generated with them (calibrate/reference_fit.hpp).
#include <doctest/doctest.h>

#include "../approx.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "calibrate/reference_cases.hpp"
#include "calibrate/reference_fit.hpp"
#include "models/compute/compute.hpp"
#include "models/scenario/scenario.hpp"

using namespace trainsim;

namespace {
Scenario scenario(const char* model, const char* gpu, int gpus, nlohmann::json parallel, const char* framework) {
  return parse_scenario({{"model", model},
                         {"training", {{"seq_len", 4096}, {"global_batch_size", 64}, {"framework", framework}}},
                         {"parallel", parallel},
                         {"hardware", {{"gpu", gpu}, {"num_gpus", gpus}}}});
}

ReferenceCase synthetic(const std::string& id, const std::string& source, Scenario s, const FittedParameters& truth) {
  ReferenceCase c;
  c.id = id;
  c.source = source;
  c.metric = ReferenceMetric::IterationSeconds;
  c.scenario = std::move(s);
  c.measured = predict_case(c, &truth);
  return c;
}

// Six runs of three sources generated with `truth`, which tell the parameters apart: power-limited GEMMs (H100, H200;
// A100s over the limit too at 2.4 pJ/FLOP), eager memory-bound kernels (FSDP2 on a small model).
std::vector<ReferenceCase> cases_telling_apart(const FittedParameters& truth) {
  std::vector<ReferenceCase> cases;
  cases.push_back(synthetic("8b-h100-fsdp2", "a", scenario("llama3-8b", "h100-sxm-80gb", 8, {{"dp", 8}, {"micro_batch_size", 2}}, "fsdp2"), truth));
  cases.push_back(synthetic("7b-h100-fsdp2", "a", scenario("qwen2.5-7b", "h100-sxm-80gb", 8, {{"dp", 8}, {"micro_batch_size", 4}}, "fsdp2"), truth));
  cases.push_back(synthetic("8b-a100-mcore", "b", scenario("llama3-8b", "a100-sxm-80gb", 8, {{"tp", 2}, {"dp", 4}, {"micro_batch_size", 1}}, "megatron-core"), truth));
  cases.push_back(synthetic("70b-h100-mcore", "b", scenario("llama3-70b", "h100-sxm-80gb", 64, {{"tp", 8}, {"pp", 2}, {"dp", 4}, {"micro_batch_size", 1}}, "megatron-core"), truth));
  cases.push_back(synthetic("8b-h200-fsdp2", "c", scenario("llama3-8b", "h200-sxm-141gb", 16, {{"dp", 16}, {"micro_batch_size", 4}}, "fsdp2"), truth));
  cases.push_back(synthetic("7b-a100-fsdp", "c", scenario("qwen2.5-7b", "a100-sxm-80gb", 8, {{"dp", 8}, {"micro_batch_size", 8}}, "fsdp"), truth));
  return cases;
}
}  // namespace

TEST_CASE("power limit: the clock fraction a GPU holds is (TDP / power)^(1/3), by hand") {
  // 1.4 pJ/FLOP x 1000 TFLOP/s = 1400 W on a 700 W part: cbrt(0.5) = 0.7937.
  CHECK(power_limited_fraction(700, 1000e12, 1.4) == trainsim::test::approx(std::cbrt(0.5)));
  CHECK(power_limited_fraction(700, 1000e12, 0.5) == 1.0);  // 500 W: under the limit
  CHECK(power_limited_fraction(0, 1000e12, 1.4) == 1.0);    // unknown TDP: no limit
  CHECK(power_limited_fraction(700, 1000e12, 0) == 1.0);    // e = 0: no limit
  // In the traits: H100 SXM GEMMs at its published ceiling, 792.1/989.4 x 3432/3360 = 0.8177 of 989.4 TFLOP/s
  // (test_compute.cpp), at 1.5 pJ/FLOP draw 1213.6 W against 700 W: clock fraction cbrt(700 / 1213.6) = 0.8325.
  FittedParameters f;
  f.tensor_energy_pj_per_flop = 1.5;
  f.memory_kernel_efficiency = 0.8;
  const GpuSpec h100 = parse_gpu("h100-sxm-80gb", "/gpu");
  GpuComputeTraits tr = gpu_compute_traits(h100);
  apply_fitted_parameters(tr, h100, f);
  CHECK(1 / tr.tensor_slowdown == trainsim::test::approx(std::cbrt(700 / (1.5 * 792.1 * 3432.0 / 3360.0))));
  CHECK(tr.memory_kernel_efficiency == 0.8);
  // A100 SXM: 1.5 x 267.9 TFLOP/s = 401.9 W against 400 W: barely limited (0.9985); at 1.0 pJ/FLOP not at all.
  const GpuSpec a100 = parse_gpu("a100-sxm-80gb", "/gpu");
  GpuComputeTraits ta = gpu_compute_traits(a100);
  apply_fitted_parameters(ta, a100, f);
  CHECK(1 / ta.tensor_slowdown == trainsim::test::approx(std::cbrt(400 / (1.5 * 267.9))));
  f.tensor_energy_pj_per_flop = 1.0;
  apply_fitted_parameters(ta, a100, f);
  CHECK(ta.tensor_slowdown == 1.0);
}

TEST_CASE("power limit over a layer's duty: the average power meets the TDP, by hand and against an H100") {
  // TDP 700 W, tensor-core kernels drawing 1000 W at the top clock for 1 s and memory-bound kernels (0.54 x 700 =
  // 378 W) for 1 s: the average at the top clock is (1000 + 378) / 2 = 689 W, under the limit: the full rate.
  CHECK(power_limited_fraction(700, 1000, PowerDuty{1, 1, 0}) == 1.0);
  // 0.25 s of memory-bound kernels: 875.6 W at the top clock; r solves 1000 r^3 - 80.5 r - 700 = 0
  // (80.5 = 700 x 0.25 - 378 x 0.25): r = 0.918114 (bisection by hand), where the average power is the TDP.
  const double r = power_limited_fraction(700, 1000, PowerDuty{1, 0.25, 0});
  CHECK(r == trainsim::test::approx(0.918114).epsilon(1e-5));
  CHECK((1 / r * 1000 * r * r * r + 0.25 * 378) / (1 / r + 0.25) == trainsim::test::approx(700));
  // Pure tensor work: the cube root of the single-kernel form.
  CHECK(power_limited_fraction(700, 1400, PowerDuty{1, 0, 0}) == trainsim::test::approx(power_limited_fraction(700, 1400e12, 1.0)));
  // The H100 measurement (calibrate/measurements/corpus/census/gemm_power-*-2026-11-28.json): back to back, bf16
  // GEMMs held 0.869 of their top-clock rate, which puts their top-clock power at 700 / 0.869^3 W, 1.32 pJ/FLOP of
  // the 809 TFLOP/s ceiling. With the GPU idle 21% of the time (GEMMs 0.79 of it at 0.925 of their top-clock rate:
  // 0.731 at the top clock) they held 0.925; with copies 27% of the time, 0.92. The model: 0.930 and 0.915.
  const GpuSpec h100 = parse_gpu("h100-sxm-80gb", "/gpu");
  GpuComputeTraits tr = gpu_compute_traits(h100);
  FittedParameters measured;
  measured.tensor_energy_pj_per_flop = 1.32;
  apply_fitted_parameters(tr, h100, measured);
  CHECK(power_limited_fraction(tr.tdp_w, tr.tensor_power_w, PowerDuty{0.79 * 0.925, 0, 0.21}) == trainsim::test::approx(0.925).epsilon(0.01));
  CHECK(power_limited_fraction(tr.tdp_w, tr.tensor_power_w, PowerDuty{0.73 * 0.92, 0.27, 0}) == trainsim::test::approx(0.92).epsilon(0.01));
  // And back to back: 0.869 measured (695 of 800 TFLOP/s), which the preset's energy per FLOP was derived from.
  CHECK(1 / tr.tensor_slowdown == trainsim::test::approx(0.869).epsilon(0.002));
  // fp32 GEMMs on the CUDA cores draw 659 of 700 W at the top clock (kCudaCorePowerShare, measured): 1 s of them
  // beside 1 s of 1000 W tensor-core work averages 829.5 W at the top clock, over the limit; r solves
  // 1000 r^3 - (700 - 659) r - 700 = 0, r = 0.9033 (bisection by hand). Counted as tensor-core work instead it would be
  // the pure-tensor (700 / 1000)^(1/3) = 0.888.
  CHECK(power_limited_fraction(700, 1000, PowerDuty{1, 0, 0, 1}) == trainsim::test::approx(0.9033).epsilon(0.0005));
}

TEST_CASE("gradient norm, clipping and zeroing: memory-bound passes over the local gradients, once per step") {
  // Llama-3-8B on one H100 (8,030,261,248 parameters, fp32 gradients under autocast): a plain loop does none of it;
  // torch's clip_grad_norm_ reads the gradients for the norm and reads and writes them for the multiply (3 passes of
  // 4 bytes); Megatron's buffer zeroing writes them once more. Each pass at the multi-tensor kernels' bandwidth
  // (multi_tensor_time): the breakdown's overhead is exactly that, and the step grows by it.
  auto one_gpu = [](nlohmann::json framework) {
    return parse_scenario({{"model", "llama3-8b"},
                           {"training", {{"seq_len", 1024}, {"global_batch_size", 1}, {"recompute", "full"}, {"framework", framework}}},
                           {"parallel", {{"micro_batch_size", 1}}},
                           {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 1}}}});
  };
  const Scenario plain = one_gpu("pytorch");
  const Scenario clipped = one_gpu({{"preset", "pytorch"}, {"clip_grad_norm", true}, {"clip_scales_always", true}, {"zero_grad_memset", true}});
  const double params = 8030261248.0;
  const StepEstimate a = StepModel(plain.model, plain.training, plain.hardware).estimate(plain.parallel);
  const StepEstimate b = StepModel(clipped.model, clipped.training, clipped.hardware).estimate(clipped.parallel);
  CHECK(a.breakdown.overhead_s == 0.0);
  const GpuSpec& gpu = clipped.hardware.gpu;
  CHECK(b.breakdown.overhead_s == trainsim::test::approx(multi_tensor_time(gpu, gpu_compute_traits(gpu), 4 * params * 4.0)));
  CHECK(b.time_s - a.time_s == trainsim::test::approx(b.breakdown.overhead_s));
  // 128.5 GB at the H100's 3.35 TB/s, derated by the shipped copy and kernel efficiencies: tens of milliseconds.
  CHECK(b.breakdown.overhead_s > 4 * params * 4.0 / 3.35e12);
  CHECK(b.breakdown.overhead_s < 0.1);
}

TEST_CASE("the least-squares fit recovers parameters from cases generated with them, and cross-validates to zero error") {
  FittedParameters truth;
  truth.tensor_energy_pj_per_flop = 2.4;
  truth.memory_kernel_efficiency = 0.8;
  std::vector<ReferenceCase> cases = cases_telling_apart(truth);
  std::vector<const ReferenceCase*> all;
  for (const auto& c : cases) all.push_back(&c);

  const FittedParameters got = fit_parameters(all, fit_starting_point());
  CHECK(got.tensor_energy_pj_per_flop == trainsim::test::approx(2.4).epsilon(1e-3));
  CHECK(got.memory_kernel_efficiency == trainsim::test::approx(0.8).epsilon(1e-3));

  ReferenceSet set;
  set.cases = cases;
  const ReferenceFit fit = fit_reference(set, fit_starting_point());
  CHECK(fit.cases == 6);
  CHECK(fit.before.median > 0.01);  // the start is off ...
  CHECK(fit.in_sample.max < 1e-3);  // ... the fit is not
  CHECK(fit.cross_validated.max < 1e-2);
  CHECK(fit.sources.size() == 3);
}

TEST_CASE("the robust fit: one run with a mechanism the model lacks does not move the parameters for the rest") {
  // The cases of the test above, generated with known parameters, and a seventh from a source of its own that ran
  // 1.5x slower than the model can say (log 1.5 = 0.405, an unmodelled cost). Least squares spreads that residual
  // over every case: run once with the Huber stage removed, it lands on the range's edge, 3.0 pJ/FLOP, and 0.636
  // (25% and 20% off), leaving the slow run at 1.386. Huber's estimate counts it linearly beyond 1.345 sigma of the
  // least-squares residuals and stays within 5% of the parameters the other six were made with.
  FittedParameters truth;
  truth.tensor_energy_pj_per_flop = 2.4;
  truth.memory_kernel_efficiency = 0.8;
  std::vector<ReferenceCase> cases = cases_telling_apart(truth);
  ReferenceCase slow = synthetic("70b-h100-fsdp2-slow", "d", scenario("llama3-70b", "h100-sxm-80gb", 32, {{"dp", 32}, {"micro_batch_size", 1}}, "fsdp2"), truth);
  slow.measured *= 1.5;
  cases.push_back(slow);
  std::vector<const ReferenceCase*> all;
  for (const auto& c : cases) all.push_back(&c);

  double scale = 0;
  const FittedParameters got = fit_parameters(all, fit_starting_point(), {}, &scale);
  CHECK(scale > 0);
  CHECK(got.tensor_energy_pj_per_flop == trainsim::test::approx(2.4).epsilon(0.05));
  CHECK(got.memory_kernel_efficiency == trainsim::test::approx(0.8).epsilon(0.05));
  // The slow run keeps more of its error than least squares leaves it: the fit absorbed less of it.
  CHECK(time_ratio(slow, predict_case(slow, &got)) > 1.42);

  // Cases the model fits exactly leave no residual: no scale, the least-squares answer.
  cases.pop_back();
  all.pop_back();
  const FittedParameters exact = fit_parameters(all, fit_starting_point(), {}, &scale);
  CHECK(scale < 1e-9);
  CHECK(exact.tensor_energy_pj_per_flop == trainsim::test::approx(2.4).epsilon(1e-3));
}

TEST_CASE("the measured corpus: every *.json of its folder read like h100_single_gpu_runs.json, after the published files") {
  // One run that fitted (a fit verdict, a step time, allocated and reserved bytes: four rows) and one that ran out
  // of memory (a verdict only).
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "trainsim_measured_corpus_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const nlohmann::json scenario = {{"model", "llama3.1-8b"},
                                   {"training", {{"seq_len", 2048}, {"global_batch_size", 4}, {"framework", "transformers"}}},
                                   {"parallel", {{"tp", 1}, {"pp", 1}, {"dp", 1}, {"micro_batch_size", 4}}},
                                   {"hardware", {{"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 1}, {"num_nodes", 1}}}};
  nlohmann::json ran = scenario, oom = scenario;
  ran["id"] = "ran", ran["source"] = "measured here";
  ran["measured"] = {{"step_time_s", 0.25}, {"peak_allocated_bytes", 30e9}, {"peak_reserved_bytes", 32e9}};
  oom["id"] = "oom", oom["source"] = "measured here";
  oom["measured"] = {{"oom", true}};
  std::ofstream(dir / "gpu-x.json") << nlohmann::json{{"description", "test"}, {"cases", {ran, oom}}}.dump();
  std::ofstream(dir / "notes.txt") << "not a corpus file";
  const ReferenceSet set = load_reference_cases({TRAINSIM_SHARED_DIR "/reference", dir.string()});
  REQUIRE(!set.files.empty());
  CHECK(set.files.back() == "gpu-x.json");
  int rows = 0, verdicts = 0;
  for (const auto& c : set.cases) {
    if (c.file != "gpu-x.json") continue;
    ++rows;
    verdicts += c.verdict();
    CHECK(c.source == "measured here");
    if (c.metric == ReferenceMetric::IterationSeconds) CHECK(c.measured == 0.25);
  }
  CHECK(rows == 5);
  CHECK(verdicts == 2);

  // A later file measuring the same run again names it in `supersedes`: the earlier case's rows are shown, not counted
  // (not fitted, not in the summaries), and say which case replaced them.
  nlohmann::json again = ran;
  again["id"] = "ran-again", again["supersedes"] = "ran";
  again["measured"] = {{"step_time_s", 0.2}, {"peak_allocated_bytes", 30e9}, {"peak_reserved_bytes", 32e9}};
  std::ofstream(dir / "gpu-y.json") << nlohmann::json{{"description", "test"}, {"cases", {again}}}.dump();
  const ReferenceSet later = load_reference_cases({TRAINSIM_SHARED_DIR "/reference", dir.string()});
  int superseded = 0, counted_again = 0;
  for (const auto& c : later.cases) {
    if (c.id == "ran") superseded += !c.counted && c.superseded_by == "ran-again";
    if (c.id == "ran-again") counted_again += c.counted && c.superseded_by.empty();
    if (c.id == "oom") CHECK(c.counted);
  }
  CHECK(superseded == 4);
  CHECK(counted_again == 4);
  std::filesystem::remove_all(dir);
}
