// Calibration profiles in the models: JSON binding, the alpha-beta fit, GEMM interpolation, a preset's own figures
// profiles, and the step model with and without a profile.
#include <doctest/doctest.h>

#include "../approx.hpp"

#include <cmath>

#include "calibrate/profile_io.hpp"
#include "models/calibration/calibration.hpp"
#include "models/core/errors.hpp"
#include "models/layout/search.hpp"
#include "models/scenario/scenario.hpp"
#include "models/step/step.hpp"

using namespace trainsim;
using Json = nlohmann::json;

namespace {
std::string data_file(const std::string& name) { return std::string(TRAINSIM_TEST_DATA_DIR) + "/" + name; }

// The built-in default scenario: Llama-3-8B full SFT on one 8xH100 node, FSDP full shard (ZeRO-3).
Scenario default_scenario() {
  return parse_scenario({{"model", "llama3-8b"},
                         {"training", {{"mode", "sft"}, {"seq_len", 4096}, {"global_batch_size", 64}, {"train_tokens", "1B"}, {"zero_stage", 3}}},
                         {"parallel", {{"micro_batch_size", 2}}},
                         {"hardware", {{"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 8}, {"num_nodes", 1}}}});
}

CalibrationProfile minimal_profile() {
  CalibrationProfile p;
  p.gpu.name = "NVIDIA H100 80GB HBM3";
  p.gpu.preset = "h100-sxm-80gb";
  return p;
}

// Synthetic all-reduce points on 8 ranks: alpha = 20 us, beta = 100 GB/s, factor 2·7/8 = 1.75.
//   1 MiB:   x = 1.75 · 1048576   = 1835008   -> t = 20 us + 18.35008 us   = 38.35008 us
//   16 MiB:  x = 1.75 · 16777216  = 29360128  -> t = 20 us + 293.60128 us  = 313.60128 us
//   256 MiB: x = 1.75 · 268435456 = 469762048 -> t = 20 us + 4697.62048 us = 4717.62048 us
std::vector<CollectivePoint> synthetic_points() {
  return {{1048576, 0, 38.35008e-6}, {16777216, 0, 313.60128e-6}, {268435456, 0, 4717.62048e-6}};
}

void check_same(const StepEstimate& a, const StepEstimate& b) {
  CHECK(a.time_s == b.time_s);
  CHECK(a.mfu == b.mfu);
  CHECK(a.breakdown.compute_s == b.breakdown.compute_s);
  CHECK(a.breakdown.recompute_s == b.breakdown.recompute_s);
  CHECK(a.breakdown.tp_comm_s == b.breakdown.tp_comm_s);
  CHECK(a.breakdown.dp_comm_s == b.breakdown.dp_comm_s);
  CHECK(a.breakdown.pp_comm_s == b.breakdown.pp_comm_s);
  CHECK(a.breakdown.optimizer_s == b.breakdown.optimizer_s);
}
}  // namespace

TEST_CASE("alpha-beta least squares recovers alpha and beta exactly from points on the line") {
  const AlphaBeta f = fit_alpha_beta(synthetic_points(), 1.75);
  CHECK(f.points == 3);
  CHECK(f.sizes == 3);
  CHECK_FALSE(f.alpha_from_defaults);
  CHECK(f.alpha_s == trainsim::test::approx(20e-6).epsilon(1e-9));
  CHECK(f.beta == trainsim::test::approx(100e9).epsilon(1e-9));
  CHECK(f.max_rel_error < 1e-9);

  // Send/recv (factor 1), alpha 5 us, beta 25 GB/s: 1 MB -> 5 + 40 = 45 us; 100 MB -> 5 + 4000 = 4005 us.
  const AlphaBeta p2p = fit_alpha_beta({{1e6, 0, 45e-6}, {1e8, 0, 4005e-6}}, 1.0);
  CHECK(p2p.alpha_s == trainsim::test::approx(5e-6).epsilon(1e-9));
  CHECK(p2p.beta == trainsim::test::approx(25e9).epsilon(1e-9));

  // One message size: alpha is given (the default model's latency), beta from the point:
  // 1 GiB at busbw 480 GB/s on 8 ranks -> t = 1073741824 · 1.75 / 480e9 = 3.9146 ms; with alpha = 15 us,
  // beta = x / (t - alpha) = 1879048192 / (3.9146e-3 - 15e-6) = 481.85 GB/s.
  const double t = 1073741824.0 * 1.75 / 480e9;
  const AlphaBeta one = fit_alpha_beta({{1073741824.0, 480e9, t}}, 1.75, 15e-6);
  CHECK(one.alpha_from_defaults);
  CHECK(one.alpha_s == trainsim::test::approx(15e-6));
  CHECK(one.beta == trainsim::test::approx(1073741824.0 * 1.75 / (t - 15e-6)));
  CHECK(one.max_rel_error < 1e-12);  // the single point is reproduced
}

TEST_CASE("GEMM interpolation: the measured value at a measured shape, the mean half way in log space") {
  // Ceilings 0.70 at 4096^3 and 0.80 at 16384^3 (quantization 1): 8192^3 is log2-equidistant from both
  // (distance sqrt(3) each), so inverse-distance weighting gives the mean 0.75.
  const GemmEfficiencyFit fit({{4096, 4096, 4096, 1}, {16384, 16384, 16384, 1}}, {0.70, 0.80}, {1.0, 1.0});
  CHECK(fit.ceiling(4096, 4096, 4096) == trainsim::test::approx(0.70).epsilon(1e-12));
  CHECK(fit.ceiling(16384, 16384, 16384) == trainsim::test::approx(0.80).epsilon(1e-12));
  CHECK(fit.ceiling(8192, 8192, 8192) == trainsim::test::approx(0.75).epsilon(1e-9));
  // Nearer to the first point: closer to its value, and never outside the measured range.
  const double near_first = fit.ceiling(4096, 4096, 8192);
  CHECK(near_first > 0.70);
  CHECK(near_first < 0.75);
  CHECK(fit.ceiling(64, 64, 64) >= 0.70);
  CHECK(fit.ceiling(1 << 20, 1 << 20, 1 << 20) <= 0.80);
  // The quantization of the measured shape is divided out: measured 0.6 at quantization 0.75 -> ceiling 0.8.
  const GemmEfficiencyFit q({{1000, 3000, 512, 1}}, {0.6}, {0.75});
  CHECK(q.ceiling(1000, 3000, 512) == trainsim::test::approx(0.8));
}

TEST_CASE("through the compute model a measured GEMM shape takes its measured time, slowed only by the power limit") {
  Scenario s = default_scenario();
  CalibrationProfile p = minimal_profile();
  p.gemm.push_back({GemmDtype::Bf16, 8192, 8192, 8192, 798.0, ""});
  p.gemm.push_back({GemmDtype::Bf16, 6144, 17920, 2816, 792.1, ""});
  const CalibrationFit fit(p, s.hardware);
  const GpuComputeTraits tr = gpu_compute_traits(s.hardware.gpu, &fit);
  // A microbenchmark runs seconds at a time; a training run holds the clock its power limit allows: the shipped
  // power model's slowdown (models/calibration/fitted_parameters.hpp) applies to measured and published ceilings alike.
  const double slow = tr.tensor_slowdown;
  REQUIRE(slow >= 1);
  auto tflops = [&](const GemmShape& g) { return gemm_flops(g) / gemm_time(s.hardware.gpu, tr, Precision::Bf16, g) / 1e12; };
  CHECK(tflops({8192, 8192, 8192}) == trainsim::test::approx(798.0 / slow));
  CHECK(tflops({6144, 17920, 2816}) == trainsim::test::approx(792.1 / slow));
  // Without a profile the same GEMM is 784.6 TFLOP/s (test_compute.cpp): the preset's MAMF point with its own
  // quantization (3360/3432) divided out, times this shape's (2048/2112).
  CHECK(gemm_flops({8192, 8192, 8192}) / gemm_time(s.hardware.gpu, Precision::Bf16, {8192, 8192, 8192}) / 1e12 ==
        trainsim::test::approx(792.1 * 3432.0 / 3360.0 * 2048.0 / 2112.0 / slow));
  // A skinny GEMM stays on the HBM roofline (16 x 8192 x 8192: 134.7 MB at 0.72 x 3.0 TB/s = 62.4 us).
  CHECK(gemm_time(s.hardware.gpu, tr, Precision::Bf16, {16, 8192, 8192}) == trainsim::test::approx(2.0 * (16 * 8192 + 8192.0 * 8192 + 16 * 8192) / 2.16e12));
  // fp16 has no points: the published ceiling, identical to no profile.
  CHECK(gemm_time(s.hardware.gpu, tr, Precision::Fp16, {8192, 8192, 8192}) == gemm_time(s.hardware.gpu, Precision::Fp16, {8192, 8192, 8192}));
}

TEST_CASE("calibrated collectives: the fit at the measured placement, default x measured/default elsewhere") {
  Scenario s = default_scenario();
  CalibrationProfile p = minimal_profile();
  p.collectives.push_back({Collective::AllReduce, CommScope::Intra, 8, 8, "", "", synthetic_points()});
  const CalibrationFit fit(p, s.hardware);
  const CommModel plain = make_comm_model(s.hardware);
  const CommModel cal = make_comm_model(s.hardware, &fit);
  const double bytes = 1073741824.0;
  const CollectiveCost at8 = collective_time(Collective::AllReduce, bytes, {8, 8}, cal);
  CHECK(std::string(at8.algorithm) == "calibrated");
  CHECK(at8.time_s == trainsim::test::approx(20e-6 + 1.75 * bytes / 100e9));  // 18.81 ms
  const double scale = at8.time_s / collective_time(Collective::AllReduce, bytes, {8, 8}, plain).time_s;
  CHECK(collective_time(Collective::AllReduce, bytes, {4, 4}, cal).time_s ==
        trainsim::test::approx(collective_time(Collective::AllReduce, bytes, {4, 4}, plain).time_s * scale));
  // Not measured: all-gather, and all-reduce across nodes; forced algorithms ignore the profile.
  CHECK(collective_time(Collective::AllGather, bytes, {8, 8}, cal).time_s == collective_time(Collective::AllGather, bytes, {8, 8}, plain).time_s);
  CHECK(collective_time(Collective::AllReduce, bytes, {16, 8}, cal).time_s == collective_time(Collective::AllReduce, bytes, {16, 8}, plain).time_s);
  CHECK(collective_time(Collective::AllReduce, bytes, {8, 8}, cal, CollectiveAlgorithm::Ring).time_s ==
        collective_time(Collective::AllReduce, bytes, {8, 8}, plain, CollectiveAlgorithm::Ring).time_s);

  const CalibrationCoverage cov = fit.coverage();
  bool intra_calibrated = false, inter_fallback = false;
  for (const auto& item : cov.items) {
    if (item.part == "all-reduce intra-node") intra_calibrated = item.calibrated;
    if (item.part == "all-reduce inter-node") inter_fallback = !item.calibrated;
  }
  CHECK(intra_calibrated);
  CHECK(inter_fallback);
}

TEST_CASE("profile JSON: round trip, units, and errors that name the JSON path") {
  CalibrationProfile p = minimal_profile();
  p.provenance = {"measured", "alice", "2026-11-21T10:00:00Z", "trainsim calibrate import ...", "test"};
  p.gemm.push_back({GemmDtype::Tf32, 4096, 4096, 4096, 392.7, "bench"});
  p.hbm_bandwidth = 3.0e12;
  p.collectives.push_back({Collective::AllGather, CommScope::Inter, 16, 8, "ib-ndr-400", "log", synthetic_points()});
  const CalibrationProfile back = parse_calibration_profile(to_json(p));
  CHECK(back.gpu.preset == "h100-sxm-80gb");
  CHECK(back.provenance.who == "alice");
  REQUIRE(back.gemm.size() == 1);
  CHECK(back.gemm[0].dtype == GemmDtype::Tf32);
  CHECK(back.hbm_bandwidth == 3.0e12);
  REQUIRE(back.collectives.size() == 1);
  CHECK(back.collectives[0].ranks_per_node == 8);
  CHECK(back.collectives[0].points[2].time_s == trainsim::test::approx(4717.62048e-6));
  // busbw derived from time with the all-gather factor 15/16: 268435456 · 15/16 / 4717.62048 us.
  CHECK(back.collectives[0].points[2].busbw == trainsim::test::approx(268435456.0 * 15 / 16 / 4717.62048e-6));

  Json doc = to_json(p);
  doc["hbm_bandwidth"] = "3.35TB/s";
  doc["collectives"][0]["points"][0] = {{"bytes", "1MiB"}, {"busbw", "48GB/s"}};
  const CalibrationProfile units = parse_calibration_profile(doc);
  CHECK(units.hbm_bandwidth == 3.35e12);
  CHECK(units.collectives[0].points[0].bytes == 1048576);
  CHECK(units.collectives[0].points[0].time_s == trainsim::test::approx(1048576.0 * 15 / 16 / 48e9));

  Json bad = to_json(p);
  bad["collectives"][0]["points"][1]["busbw"] = "fast";
  CHECK_THROWS_WITH_AS(parse_calibration_profile(bad, "x.json"), doctest::Contains("x.json#/collectives/0/points/1/busbw"), InputError);
  bad = to_json(p);
  bad["version"] = 2;
  CHECK_THROWS_WITH_AS(parse_calibration_profile(bad), doctest::Contains("/version: got 2"), InputError);
  bad = to_json(p);
  bad["provenance"]["source"] = "guessed";
  CHECK_THROWS_WITH_AS(parse_calibration_profile(bad), doctest::Contains("/provenance/source"), InputError);
  bad = to_json(p);
  bad["gemm"][0]["dtipe"] = "bf16";
  CHECK_THROWS_WITH_AS(parse_calibration_profile(bad), doctest::Contains("did you mean \"dtype\""), InputError);
  bad = to_json(p);
  bad["collectives"][0]["ranks_per_node"] = 16;
  CHECK_THROWS_WITH_AS(parse_calibration_profile(bad), doctest::Contains("/collectives/0/ranks_per_node"), InputError);
  CHECK_THROWS_WITH_AS(read_calibration_profile(std::string(TRAINSIM_TEST_DATA_DIR) + "/bad_profile.json"),
                       doctest::Contains("bad_profile.json#/gemm/0/m"), InputError);
}

TEST_CASE("a profile holding a preset's own published figures changes no answer (one source of truth)") {
  // h100_preset_figures.json holds exactly what presets/gpus.json gives the H100: its MAMF point and its copy
  // bandwidth. The default model turns the same point into a ceiling by the same rule, so nothing may move.
  const CalibrationProfile same = read_calibration_profile(data_file("h100_preset_figures.json"));
  const Scenario s = default_scenario();
  const CalibrationFit fit(same, s.hardware);
  const GpuComputeTraits tr = gpu_compute_traits(s.hardware.gpu, &fit);
  for (const GemmShape g : {GemmShape{8192, 8192, 8192}, GemmShape{4096, 14336, 4096}, GemmShape{512, 4096, 4096}, GemmShape{6144, 17920, 2816}})
    CHECK(gemm_time(s.hardware.gpu, tr, Precision::Bf16, g) == trainsim::test::approx(gemm_time(s.hardware.gpu, Precision::Bf16, g)).epsilon(1e-12));
  const StepModel none(s.model, s.training, s.hardware);
  const StepModel with(s.model, s.training, s.hardware, &same);
  check_same(none.estimate(s.parallel), with.estimate(s.parallel));
  // The coverage says what the profile replaced, and that it equals the published figure.
  const CalibrationCoverage cov = fit.coverage(&s.training);
  CHECK(cov.warnings.empty());
  REQUIRE(!cov.items.empty());
  CHECK(cov.items[0].part == "gemm bf16");
  CHECK(cov.items[0].calibrated);
}

TEST_CASE("step model: identical without a profile (or with an empty one), faster with a faster measured GEMM") {
  const Scenario s = default_scenario();
  const StepModel none(s.model, s.training, s.hardware);
  const StepModel null_profile(s.model, s.training, s.hardware, nullptr);
  const CalibrationProfile empty = minimal_profile();  // nothing measured: every part falls back
  const StepModel empty_profile(s.model, s.training, s.hardware, &empty);
  const StepEstimate base = none.estimate(s.parallel);
  check_same(base, null_profile.estimate(s.parallel));
  check_same(base, empty_profile.estimate(s.parallel));
  CHECK(CalibrationFit(empty, s.hardware).coverage().calibrated().empty());

  // h100_publications.json: bf16 GEMM ceilings 0.818 (the preset's MAMF point 6144x17920x2816: 792.1/989.4 over
  // quantization 3360/3432) and 0.832 (PyTorch's 8192^3: 798/989.4 over 2048/2112), HBM 3.0 TB/s as the default,
  // all-gather/reduce-scatter (what FSDP runs here) not measured. Only the 8192^3 point is new to the model: GEMMs
  // near that shape up to 1 - 0.818/0.832 = 1.7% faster, so the step is faster, by less than that.
  const CalibrationProfile h100 = read_calibration_profile(data_file("h100_publications.json"));
  const StepModel calibrated(s.model, s.training, s.hardware, &h100);
  const StepEstimate with = calibrated.estimate(s.parallel);
  CHECK(with.time_s < base.time_s);
  CHECK(with.time_s > base.time_s * (1 - 0.017));
  CHECK(with.breakdown.compute_s < base.breakdown.compute_s);
  CHECK(with.breakdown.optimizer_s == trainsim::test::approx(base.breakdown.optimizer_s));  // HBM unchanged (3.0 TB/s both)
  CHECK(with.mfu > base.mfu);

  // A measured all-gather and reduce-scatter far slower than the default (20 GB/s busbw on 8 ranks instead of
  // ~370) exposes FSDP's per-layer gathers: more data-parallel communication, a slower step.
  CalibrationProfile slow = minimal_profile();
  const double f = 7.0 / 8.0;
  for (Collective op : {Collective::AllGather, Collective::ReduceScatter})
    slow.collectives.push_back({op, CommScope::Intra, 8, 8, "", "",
                                {{1e6, 20e9, 30e-6 + f * 1e6 / 20e9}, {1e9, 20e9, 30e-6 + f * 1e9 / 20e9}}});
  const StepModel slow_model(s.model, s.training, s.hardware, &slow);
  const StepEstimate slow_est = slow_model.estimate(s.parallel);
  CHECK(slow_est.breakdown.dp_comm_s > base.breakdown.dp_comm_s);
  CHECK(slow_est.time_s > base.time_s);
  CHECK(slow_est.breakdown.compute_s == base.breakdown.compute_s);
}

TEST_CASE("the layout search uses the profile; without one its results are unchanged") {
  Scenario s = parse_scenario({{"model", "llama3-8b"},
                               {"training", {{"mode", "sft"}, {"seq_len", 4096}, {"global_batch_size", 64}, {"train_tokens", "1B"}, {"zero_stage", 3}}},
                               {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 8}}}},
                              false);
  SearchOptions plain;
  plain.threads = 1;
  plain.top = 3;
  SearchOptions with = plain;
  const CalibrationProfile empty = minimal_profile();
  with.calibration = &empty;
  const SearchResult a = search_plans(s, {8}, search_space_from(s), plain);
  const SearchResult b = search_plans(s, {8}, search_space_from(s), with);
  REQUIRE(a.plans.size() == b.plans.size());
  for (std::size_t i = 0; i < a.plans.size(); ++i) CHECK(a.plans[i].step.time_s == b.plans[i].step.time_s);
  const CalibrationProfile h100 = read_calibration_profile(data_file("h100_publications.json"));
  with.calibration = &h100;
  const SearchResult c = search_plans(s, {8}, search_space_from(s), with);
  REQUIRE(!c.plans.empty());
  CHECK(c.plans[0].step.time_s < a.plans[0].step.time_s);
}
