// The GPU benchmarks' pure parts, tested without a GPU: nccl-tests' bus-bandwidth formulas and element counts,
// Google Benchmark JSON (hand-written and from Google Benchmark itself) to a calibration profile, the sweep's
// shapes from the model presets, timing statistics, random data, and the launcher/rendezvous helpers.
#include <benchmark/benchmark.h>
#include <doctest/doctest.h>

#include "../approx.hpp"

#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "calibrate/gpu/bench_driver.hpp"
#include "calibrate/gpu/cuda_util.hpp"
#include "calibrate/gpu/dynamic_libs.hpp"
#include "calibrate/gpu/launcher.hpp"
#include "calibrate/gpu/nccl_bench.hpp"
#include "calibrate/gpu/proxy_run.hpp"
#include "calibrate/gpu/results.hpp"
#include "calibrate/gpu/sweep.hpp"
#include "models/core/errors.hpp"
#include "models/scenario/scenario.hpp"
#include "models/step/step.hpp"

using namespace trainsim;
using namespace trainsim::gpu;
using Json = nlohmann::json;

TEST_CASE("bus bandwidth: nccl-tests' formulas reproduce an 8xH100 all_reduce_perf row") {
  // tests/calibrate/data/all_reduce_perf_8xh100.log: 1073741824 B in 3934.7 us -> algbw 272.89, busbw 477.56 GB/s.
  CHECK(algorithm_bandwidth(1073741824, 3934.7e-6) / 1e9 == trainsim::test::approx(272.89).epsilon(1e-4));
  CHECK(bus_bandwidth(Collective::AllReduce, 1073741824, 8, 3934.7e-6) / 1e9 == trainsim::test::approx(477.56).epsilon(1e-4));
  // Factors (nccl-tests doc/PERFORMANCE.md): all-reduce 2(n-1)/n, all-gather / reduce-scatter / all-to-all (n-1)/n, send/recv 1.
  CHECK(bus_bandwidth(Collective::AllGather, 8e9, 8, 1.0) == trainsim::test::approx(7e9));
  CHECK(bus_bandwidth(Collective::ReduceScatter, 4e9, 4, 1.0) == trainsim::test::approx(3e9));
  CHECK(bus_bandwidth(Collective::AllToAll, 2e9, 2, 1.0) == trainsim::test::approx(1e9));
  CHECK(bus_bandwidth(Collective::SendRecv, 5e9, 2, 1.0) == trainsim::test::approx(5e9));
  CHECK(bus_bandwidth(Collective::AllReduce, 1e9, 2, 0.0) == 0);
}

TEST_CASE("collective_counts: the elements each rank passes to NCCL, as nccl-tests counts the size") {
  // 1 MiB of bf16 = 524288 elements on 8 ranks.
  CollectiveCounts c = collective_counts(Collective::AllReduce, 1 << 20, 8, 2);
  CHECK(c.send_count == 524288);
  CHECK(c.recv_count == 524288);
  CHECK(c.bytes_used == 1 << 20);
  c = collective_counts(Collective::AllGather, 1 << 20, 8, 2);  // size = the gathered output
  CHECK(c.send_count == 65536);
  CHECK(c.recv_count == 524288);
  c = collective_counts(Collective::ReduceScatter, 1 << 20, 8, 2);  // size = the input
  CHECK(c.send_count == 524288);
  CHECK(c.recv_count == 65536);
  c = collective_counts(Collective::AllToAll, 1 << 20, 8, 2);
  CHECK(c.per_peer == 65536);
  CHECK(c.send_count == 524288);
  c = collective_counts(Collective::SendRecv, 1 << 20, 8, 2);
  CHECK(c.send_count == 524288);
  // Rounded down to whole elements per rank: 1000 bytes on 3 ranks -> 500 elements -> 166 per rank.
  c = collective_counts(Collective::AllGather, 1000, 3, 2);
  CHECK(c.send_count == 166);
  CHECK(c.bytes_used == 166 * 3 * 2);
  CHECK(collective_counts(Collective::AllToAll, 2, 8, 2).per_peer == 0);  // too small for the group
}

namespace {
Json gbench_doc() {
  // The shape of Google Benchmark 1.7's JSONReporter output, with the counters the GPU benchmarks attach.
  return Json::parse(R"({
    "context": {"date": "2026-11-21T10:00:00+00:00", "host_name": "gpu-01", "executable": "trainsim", "num_cpus": 16,
                "library_build_type": "release"},
    "benchmarks": [
      {"name": "hbm/copy/268435456", "run_name": "hbm/copy/268435456", "run_type": "iteration", "iterations": 20,
       "real_time": 190.0, "cpu_time": 180.0, "time_unit": "us", "bytes_moved": 536870912, "median_s": 1.8e-4, "samples": 20},
      {"name": "hbm/copy/1073741824", "run_name": "hbm/copy/1073741824", "run_type": "iteration", "iterations": 20,
       "real_time": 720.0, "cpu_time": 700.0, "time_unit": "us", "bytes_moved": 2147483648, "median_s": 7.158e-4, "samples": 20},
      {"name": "gemm/bf16/8192x8192x8192", "run_name": "gemm/bf16/8192x8192x8192", "run_type": "iteration", "iterations": 20,
       "real_time": 1380.0, "cpu_time": 5.0, "time_unit": "us", "m": 8192, "n": 8192, "k": 8192, "flops": 1099511627776,
       "median_s": 1.3778e-3, "samples": 20, "label": "grid; cuBLASLt heuristic 1 of 8"},
      {"name": "gemm/fp8/4096x6144x4096", "run_name": "gemm/fp8/4096x6144x4096", "run_type": "iteration", "iterations": 20,
       "real_time": 200.0, "cpu_time": 5.0, "time_unit": "us", "label": "llama3-8b tp1 attention.qkv.fprop"},
      {"name": "gemm/fp8/100x100x100", "run_name": "gemm/fp8/100x100x100", "run_type": "iteration", "iterations": 0,
       "real_time": 0, "cpu_time": 0, "time_unit": "us", "error_occurred": true,
       "error_message": "cuBLASLt offers no algorithm for GEMM fp8 100x100x100"},
      {"name": "gemm/bf16/8192x8192x8192_mean", "run_name": "gemm/bf16/8192x8192x8192", "run_type": "aggregate",
       "aggregate_name": "mean", "iterations": 3, "real_time": 1.0, "cpu_time": 1.0, "time_unit": "us"},
      {"name": "nccl/all-reduce/intra/8x8/1073741824", "run_name": "x", "run_type": "iteration", "iterations": 20,
       "real_time": 3934.7, "cpu_time": 10, "time_unit": "us", "bytes": 1073741824, "group_size": 8, "ranks_per_node": 8,
       "median_s": 3.9347e-3, "busbw": 4.7756e11},
      {"name": "nccl/all-reduce/intra/8x8/1048576", "run_name": "x", "run_type": "iteration", "iterations": 20,
       "real_time": 23.82, "cpu_time": 10, "time_unit": "us", "bytes": 1048576, "group_size": 8, "ranks_per_node": 8,
       "median_s": 2.382e-5},
      {"name": "nccl/all-gather/inter/16x8/268435456", "run_name": "x", "run_type": "iteration", "iterations": 20,
       "real_time": 7000.0, "cpu_time": 10, "time_unit": "us", "bytes": 268435456, "group_size": 16, "ranks_per_node": 8,
       "median_s": 6.9e-3},
      {"name": "nccl/all-gather/intra/8x4/1024", "run_name": "x", "run_type": "iteration", "iterations": 20,
       "real_time": 20.0, "cpu_time": 10, "time_unit": "us", "bytes": 1024, "group_size": 8, "ranks_per_node": 4, "median_s": 2e-5},
      {"name": "something/else", "run_name": "x", "run_type": "iteration", "iterations": 1, "real_time": 1, "cpu_time": 1, "time_unit": "ns"}
    ]})");
}

ProfileHeader header() {
  ProfileHeader h;
  h.gpu.name = "NVIDIA H100 80GB HBM3";
  h.gpu.preset = "h100-sxm-80gb";
  h.gpu.sms = 132;
  h.provenance.source = "measured";
  h.provenance.who = "alice";
  h.provenance.when = "2026-11-21T10:00:00Z";
  h.provenance.command = "trainsim calibrate run -o h100.json";
  h.intra_fabric = "nvlink4-nvswitch";
  h.library_versions = "CUDA runtime 13.0, cuBLASLt 13.1.0, NCCL 2.28.9";
  return h;
}
}  // namespace

TEST_CASE("Google Benchmark JSON -> calibration profile") {
  ConversionSummary s;
  const CalibrationProfile p = profile_from_benchmark_json(gbench_doc(), header(), &s);
  CHECK(p.gpu.name == "NVIDIA H100 80GB HBM3");
  CHECK(p.provenance.source == "measured");
  CHECK(p.provenance.who == "alice");
  CHECK(p.provenance.notes.find("2 GEMM shapes") != std::string::npos);
  CHECK(p.provenance.notes.find("gemm/fp8/100x100x100: cuBLASLt offers no algorithm") != std::string::npos);

  SUBCASE("GEMM: TFLOP/s = 2mnk / median; without counters, shape from the name and time from real_time") {
    REQUIRE(p.gemm.size() == 2);
    CHECK(s.gemm_points == 2);
    CHECK(p.gemm[0].dtype == GemmDtype::Bf16);
    CHECK(p.gemm[0].m == 8192);
    CHECK(p.gemm[0].tflops == trainsim::test::approx(2.0 * 8192 * 8192 * 8192 / 1.3778e-3 / 1e12));  // 798.0
    CHECK(p.gemm[0].source.find("grid; cuBLASLt heuristic 1 of 8") != std::string::npos);
    CHECK(p.gemm[0].source.find("median of 20 samples") != std::string::npos);
    CHECK(p.gemm[1].dtype == GemmDtype::Fp8);
    CHECK(p.gemm[1].n == 6144);
    CHECK(p.gemm[1].tflops == trainsim::test::approx(2.0 * 4096 * 6144 * 4096 / 200e-6 / 1e12));
  }
  SUBCASE("HBM: the largest copy, bytes read + written over the median") {
    CHECK(s.hbm);
    CHECK(p.hbm_bandwidth == trainsim::test::approx(2147483648.0 / 7.158e-4));  // 3.0 TB/s
    CHECK(p.hbm_source.find("1.00 GiB copied") != std::string::npos);
  }
  SUBCASE("collectives: one curve per placement, points by size, nccl-tests busbw") {
    REQUIRE(p.collectives.size() == 2);
    CHECK(s.collective_curves == 2);
    CHECK(s.collective_points == 3);
    const CollectiveCurve& ar = p.collectives[0];
    CHECK(ar.op == Collective::AllReduce);
    CHECK(ar.scope == CommScope::Intra);
    CHECK(ar.group_size == 8);
    CHECK(ar.fabric == "nvlink4-nvswitch");
    REQUIRE(ar.points.size() == 2);
    CHECK(ar.points[0].bytes == 1048576);  // sorted by size
    CHECK(ar.points[1].busbw / 1e9 == trainsim::test::approx(477.56).epsilon(1e-4));
    CHECK(ar.points[1].time_s == 3.9347e-3);
    const CollectiveCurve& ag = p.collectives[1];
    CHECK(ag.scope == CommScope::Inter);
    CHECK(ag.ranks_per_node == 8);
    CHECK(ag.fabric.empty());  // no inter-node fabric given
    CHECK(ag.points[0].busbw == trainsim::test::approx(268435456.0 / 6.9e-3 * 15 / 16));
  }
  SUBCASE("entries that errored or do not fit are listed; aggregates and other names ignored") {
    REQUIRE(s.skipped.size() == 2);
    CHECK(s.skipped[0].find("gemm/fp8/100x100x100") == 0);
    CHECK(s.skipped[1].find("nccl/all-gather/intra/8x4/1024: ranks per node") == 0);
  }
  SUBCASE("the profile is valid format version 1 and reads back") {
    const CalibrationProfile back = parse_calibration_profile(to_json(p), "h100.json");
    CHECK(back.gemm.size() == 2);
    CHECK(back.collectives.size() == 2);
    CHECK(back.hbm_bandwidth == trainsim::test::approx(p.hbm_bandwidth));
  }
  SUBCASE("not Google Benchmark output") {
    CHECK_THROWS_AS(profile_from_benchmark_json(Json::object(), header()), InputError);
    CHECK_THROWS_AS(profile_from_benchmark_json(Json::array(), header()), InputError);
  }
}

TEST_CASE("Google Benchmark's own JSON output converts: manual time, counters, labels and errors") {
  // The same path as `trainsim calibrate run`, with benchmarks that need no GPU.
  benchmark::RegisterBenchmark("gemm/bf16/1024x2048x512",
                               [](benchmark::State& st) {
                                 for (auto _ : st) st.SetIterationTime(1e-4);
                                 st.counters["m"] = 1024;
                                 st.counters["n"] = 2048;
                                 st.counters["k"] = 512;
                                 st.counters["median_s"] = 1e-4;
                                 st.counters["samples"] = 4;
                                 st.SetLabel("test shape; cuBLASLt heuristic 1 of 1");
                               })
      ->UseManualTime()
      ->Iterations(4);
  benchmark::RegisterBenchmark("gemm/tf32/64x64x64",
                               [](benchmark::State& st) {
                                 st.SkipWithError("cuBLASLt offers no algorithm");
                                 for (auto _ : st) {
                                 }
                               })
      ->UseManualTime()
      ->Iterations(4);
  benchmark::RegisterBenchmark("nccl/reduce-scatter/intra/4x4/4194304",
                               [](benchmark::State& st) {
                                 for (auto _ : st) st.SetIterationTime(2e-4);
                                 st.counters["bytes"] = 4194304;
                                 st.counters["group_size"] = 4;
                                 st.counters["ranks_per_node"] = 4;
                               })
      ->UseManualTime()
      ->Iterations(3)
      ->Unit(benchmark::kMicrosecond);
  std::size_t ran = 0;
  const Json doc = run_registered_benchmarks(&ran);
  CHECK(ran == 3);
  REQUIRE(doc.contains("benchmarks"));
  ConversionSummary s;
  const CalibrationProfile p = profile_from_benchmark_json(doc, header(), &s);
  REQUIRE(p.gemm.size() == 1);
  CHECK(p.gemm[0].tflops == trainsim::test::approx(2.0 * 1024 * 2048 * 512 / 1e-4 / 1e12));
  CHECK(p.gemm[0].source.find("test shape") != std::string::npos);
  REQUIRE(s.skipped.size() == 1);
  CHECK(s.skipped[0].find("cuBLASLt offers no algorithm") != std::string::npos);
  REQUIRE(p.collectives.size() == 1);
  // No median counter: Google Benchmark's mean manual time per iteration (200 us).
  CHECK(p.collectives[0].points[0].time_s == trainsim::test::approx(2e-4));
  CHECK(p.collectives[0].points[0].busbw == trainsim::test::approx(4194304.0 / 2e-4 * 3 / 4));
  // The registrations are cleared: a second run has nothing to do.
  std::size_t again = 1;
  run_registered_benchmarks(&again);
  CHECK(again == 0);
}

TEST_CASE("sweep: GEMM shapes from the model presets and TP degrees, plus a grid") {
  SUBCASE("Llama-3-8B at tp 1 and 2, by hand") {
    std::map<std::string, std::vector<double>> by_op;
    for (const auto& s : model_gemm_shapes("llama3-8b", 2, 4096)) by_op[s.op] = {s.m, s.n, s.k};
    // QKV: (32/2 + 2·8/2)·128 = 3072 outputs; gate+up 2·14336/2; LM head 128256/2 = 64128 (a multiple of 128).
    CHECK(by_op["attention.qkv.fprop"] == std::vector<double>{4096, 3072, 4096});
    CHECK(by_op["attention.qkv.dgrad"] == std::vector<double>{4096, 4096, 3072});
    CHECK(by_op["attention.qkv.wgrad"] == std::vector<double>{3072, 4096, 4096});
    CHECK(by_op["mlp.gate_up.fprop"] == std::vector<double>{4096, 14336, 4096});
    CHECK(by_op["mlp.down.fprop"] == std::vector<double>{4096, 4096, 7168});
    CHECK(by_op["lm_head.fprop"] == std::vector<double>{4096, 64128, 4096});
    CHECK(model_gemm_shapes("llama3-8b", 3, 4096).empty());   // 32 heads do not split 3 ways
    CHECK(!model_gemm_shapes("llama3-8b", 16, 4096).empty());  // KV heads replicated (16 > 8)
  }
  SUBCASE("MoE: the experts' GEMMs with their routed tokens") {
    bool expert = false;
    for (const auto& s : model_gemm_shapes("mixtral-8x7b", 1, 4096))
      if (s.op == "moe.experts.gate_up.fprop") {
        expert = true;
        CHECK(s.m == 4096.0 * 2 / 8);  // top-2 of 8 experts
        CHECK(s.n == 2 * 14336);
      }
    CHECK(expert);
  }
  SUBCASE("quick: one model at tp 1 and two grid cubes per dtype; fp8 only with multiples of 16") {
    SweepOptions o;
    o.quick = true;
    o.dtypes = {GemmDtype::Bf16, GemmDtype::Fp8, GemmDtype::Tf32};
    const std::vector<GemmCase> cases = gemm_sweep(o);
    std::set<std::string> seen;
    int bf16 = 0, fp8 = 0, tf32 = 0;
    for (const auto& c : cases) {
      CHECK(seen.insert(gemm_benchmark_name(c.dtype, c.m, c.n, c.k)).second);  // each once
      if (c.dtype == GemmDtype::Fp8) {
        ++fp8;
        CHECK(std::fmod(c.m, 16) == 0);
        CHECK(std::fmod(c.k, 16) == 0);
      }
      bf16 += c.dtype == GemmDtype::Bf16;
      tf32 += c.dtype == GemmDtype::Tf32;
    }
    CHECK(tf32 == 2);  // grid only
    CHECK(bf16 > 10);  // llama3-8b's layer and LM-head GEMMs + grid
    CHECK(fp8 == bf16);
    CHECK(cases.front().origin.find("llama3-8b tp1 ") == 0);
  }
  SUBCASE("full: every preset at tp 1, 2, 4, 8 stays a few thousand shapes") {
    SweepOptions o;
    o.dtypes = {GemmDtype::Bf16, GemmDtype::Fp16, GemmDtype::Fp8, GemmDtype::Tf32};
    const std::vector<GemmCase> cases = gemm_sweep(o);
    MESSAGE("full sweep: " << cases.size() << " GEMM cases");
    CHECK(cases.size() > 400);
    CHECK(cases.size() < 4000);
  }
  SUBCASE("an unknown model names the flag and the closest presets") {
    SweepOptions o;
    o.models = {"llama3-8bb"};
    try {
      gemm_sweep(o);
      FAIL("expected an InputError");
    } catch (const InputError& e) {
      CHECK(e.path() == "--models");
      CHECK(std::string(e.what()).find("llama3-8b") != std::string::npos);
    }
  }
  SUBCASE("sizes and groups") {
    SweepOptions o;
    const std::vector<double> sizes = collective_sizes(o);
    CHECK(sizes.size() == 23);  // 1 KiB .. 4 GiB
    CHECK(sizes.front() == 1024);
    CHECK(sizes.back() == 4294967296.0);
    o.max_collective_bytes = 1 << 30;
    CHECK(collective_sizes(o).back() == 1073741824.0);
    o.gpus = 8;
    CHECK(collective_group_sizes(o) == std::vector<int>{2, 4, 8});
    o.gpus = 6;
    CHECK(collective_group_sizes(o) == std::vector<int>{2, 4, 6});
    o.gpus = 1;
    CHECK(collective_group_sizes(o).empty());
    o.quick = true;
    o.gpus = 8;
    CHECK(collective_group_sizes(o) == std::vector<int>{8});
    CHECK(hbm_copy_sizes(o) == std::vector<double>{1073741824.0});
  }
  SUBCASE("lists and presets") {
    CHECK(split_list(" llama3-8b, qwen2.5-7b ,,") == std::vector<std::string>{"llama3-8b", "qwen2.5-7b"});
    CHECK(parse_int_list("1,2, 4,8", "--tp") == std::vector<int>{1, 2, 4, 8});
    CHECK_THROWS_AS(parse_int_list("1,two", "--tp"), InputError);
    CHECK_THROWS_AS(parse_int_list("0", "--tp"), InputError);
    CHECK(gpu_preset_for_device("NVIDIA H100 80GB HBM3", 85e9) == "h100-sxm-80gb");
    CHECK(gpu_preset_for_device("NVIDIA H100 PCIe", 85e9) == "h100-pcie-80gb");
    CHECK(gpu_preset_for_device("NVIDIA H200", 150e9) == "h200-sxm-141gb");
    CHECK(gpu_preset_for_device("NVIDIA A100-SXM4-40GB", 42e9) == "a100-sxm-40gb");
    CHECK(gpu_preset_for_device("NVIDIA A100-SXM4-80GB", 85e9) == "a100-sxm-80gb");
    CHECK(gpu_preset_for_device("Tesla V100-SXM2-16GB", 16e9).empty());
  }
}

TEST_CASE("timing statistics and random data") {
  const TimingStats s = timing_stats({3e-3, 1e-3, 2e-3, 4e-3});
  CHECK(s.median_s == trainsim::test::approx(2.5e-3));
  CHECK(s.mean_s == trainsim::test::approx(2.5e-3));
  CHECK(s.min_s == 1e-3);
  CHECK(s.max_s == 4e-3);
  CHECK(s.stddev_s == trainsim::test::approx(std::sqrt(5.0 / 3) * 1e-3));
  CHECK(s.samples == 4);
  CHECK(timing_stats({}).samples == 0);
  CHECK(timing_stats({5.0}).median_s == 5.0);
  // Every element: finite, non-zero, |x| in [2^-5, 2); both signs appear.
  for (ElementType t : {ElementType::Bf16, ElementType::Fp16, ElementType::Fp8E4M3, ElementType::Fp32}) {
    CAPTURE(to_string(t));
    std::uint64_t state = 42;
    int negative = 0;
    for (int i = 0; i < 2000; ++i) {
      const std::uint32_t bits = random_element_bits(t, state);
      unsigned char b[4];
      for (int j = 0; j < 4; ++j) b[j] = static_cast<unsigned char>(bits >> (8 * j));
      const float v = element_to_float(t, b);
      REQUIRE(std::isfinite(v));
      CHECK(std::fabs(v) >= 1.0f / 32);
      CHECK(std::fabs(v) < 2.0f);
      negative += v < 0;
    }
    CHECK(negative > 800);
    CHECK(negative < 1200);
  }
  const unsigned char one_bf16[2] = {0x80, 0x3F}, one_fp16[2] = {0x00, 0x3C}, one_e4m3[1] = {0x38};
  CHECK(element_to_float(ElementType::Bf16, one_bf16) == 1.0f);
  CHECK(element_to_float(ElementType::Fp16, one_fp16) == 1.0f);
  CHECK(element_to_float(ElementType::Fp8E4M3, one_e4m3) == 1.0f);
  CHECK(operand_type(GemmDtype::Fp8) == ElementType::Fp8E4M3);
  CHECK(output_type(GemmDtype::Fp8) == ElementType::Bf16);
  CHECK(output_type(GemmDtype::Tf32) == ElementType::Fp32);
}

TEST_CASE("launcher ranks and the NCCL id rendezvous") {
  auto env_of = [](std::map<std::string, std::string> vars) {
    return [vars](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  };
  LauncherRanks r = launcher_ranks(env_of({{"RANK", "9"}, {"WORLD_SIZE", "16"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "8"}}));
  CHECK(r.present);
  CHECK(r.rank == 9);
  CHECK(r.local_rank == 1);
  CHECK(r.nodes() == 2);
  r = launcher_ranks(env_of({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "8"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "3"},
                             {"OMPI_COMM_WORLD_LOCAL_SIZE", "8"}}));
  CHECK(r.present);
  CHECK(r.source.find("Open MPI") == 0);
  CHECK(!launcher_ranks(env_of({})).present);
  CHECK(!launcher_ranks(env_of({{"RANK", "0"}, {"WORLD_SIZE", "1"}})).present);
  CHECK(!launcher_ranks(env_of({{"RANK", "8"}, {"WORLD_SIZE", "8"}})).present);  // inconsistent
  CHECK(!launcher_ranks(env_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "8"}})).present);  // a batch script is no rank

  HostPort hp = rendezvous_address("node-01:29501");
  CHECK(hp.host == "node-01");
  CHECK(hp.port == 29501);
  hp = rendezvous_address("", env_of({{"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "29500"}}));
  CHECK(hp.port == 29501);
  CHECK_THROWS_AS(rendezvous_address("", env_of({})), std::invalid_argument);
  CHECK_THROWS_AS(rendezvous_address("node:99999"), std::invalid_argument);

  // Rank 0 hands 128 bytes (an ncclUniqueId's size) to two ranks over localhost, on a port the kernel reports free
  // (a port picked from the pid could be in use by another test's connections on a busy machine).
  const int port = [] {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    int p = 20000 + static_cast<int>(::getpid() % 20000);
    if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
      p = ntohs(a.sin_port);
    if (fd >= 0) ::close(fd);
    return p;
  }();
  std::vector<unsigned char> id(128);
  for (std::size_t i = 0; i < id.size(); ++i) id[i] = static_cast<unsigned char>(i * 7 + 1);
  LauncherRanks r0;
  r0.present = true, r0.world = 3, r0.local_world = 3;
  std::vector<unsigned char> got1, got2;
  std::string error;
  auto peer = [&](int rank, std::vector<unsigned char>* out) {
    LauncherRanks rr = r0;
    rr.rank = rr.local_rank = rank;
    try {
      *out = broadcast_over_tcp(rr, {"127.0.0.1", port}, {}, 20);
    } catch (const std::exception& e) {
      error = e.what();
    }
  };
  std::thread t1(peer, 1, &got1), t2(peer, 2, &got2);
  std::vector<unsigned char> sent;
  try {
    sent = broadcast_over_tcp(r0, {"127.0.0.1", port}, id, 20);
  } catch (const std::exception& e) {
    error = e.what();
  }
  t1.join();
  t2.join();
  CHECK(error.empty());
  CHECK(sent == id);
  CHECK(got1 == id);
  CHECK(got2 == id);
}

TEST_CASE("cuBLASLt and NCCL load on first use, every symbol resolves (no GPU needed)") {
  const CublasLtApi& lt = cublaslt();
  MESSAGE("cuBLASLt from " << lt.path << ", version " << lt.get_version());
  CHECK(lt.get_version() >= 110000);  // major * 10000 + minor * 100 + patch
  CHECK(std::string(lt.get_status_name(CUBLAS_STATUS_NOT_SUPPORTED)) == "CUBLAS_STATUS_NOT_SUPPORTED");
  const NcclApi& n = nccl();
  int v = 0;
  CHECK(n.get_version(&v) == ncclSuccess);
  MESSAGE("NCCL from " << n.path << ", version " << nccl_version());
  CHECK(v >= 20700);
  CHECK(std::string(n.get_error_string(ncclInvalidArgument)).size() > 0);
  CHECK(nccl_version().find('.') != std::string::npos);
}

TEST_CASE("proxy plan: the ops and TP collectives of N layers, predicted as the step model prices them") {
  const Scenario sc = parse_scenario({{"model", "llama3-8b"},
                                      {"training", {{"seq_len", 4096}, {"global_batch_size", 64}, {"recompute", "full"}}},
                                      {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 8}}},
                                      {"parallel", {{"tp", 2}, {"pp", 1}, {"micro_batch_size", 1}, {"sequence_parallel", true}}}});
  const ProxyPlan plan = plan_proxy(sc, nullptr, 2);
  CHECK(plan.layers == 2);
  CHECK(plan.dense_layers == 2);
  CHECK(plan.tp == 2);
  CHECK(plan.tp_bytes == 4096.0 * 4096 * 2);  // one micro-batch of activations, 16-bit
  const LayerCompute lc = layer_compute(sc.model, sc.training, sc.parallel, sc.hardware.gpu, false);
  double compute = 0, comm = 0;
  int collectives = 0;
  for (const ProxyItem& it : plan.items) {
    CHECK(it.row.count == (it.collective ? 2 * (2 + 1) * 2 : 2));  // full recompute: 2 forward passes + backward
    (it.collective ? comm : compute) += it.row.predicted_s;
    collectives += it.collective;
  }
  CHECK(collectives == 2);  // sequence parallel: all-gather and reduce-scatter
  CHECK(compute == trainsim::test::approx(2 * (lc.forward_s + lc.backward_s + lc.recompute_s)).epsilon(1e-12));
  // models/step/step.cpp: tp_comm_s = micro-batches x layers x (TP time per layer) on one pipeline stage.
  const StepModel sm(sc.model, sc.training, sc.hardware);
  const StepEstimate est = sm.estimate(sc.parallel);
  const double per_layer = est.breakdown.tp_comm_s / (sc.parallel.gradient_accumulation_steps * sc.model.num_hidden_layers);
  CHECK(comm == trainsim::test::approx(2 * per_layer).epsilon(1e-9));

  SUBCASE("MoE layers, and N capped by the model") {
    const Scenario mx = parse_scenario({{"model", "mixtral-8x7b"},
                                        {"training", {{"seq_len", 4096}, {"global_batch_size", 64}}},
                                        {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 8}}},
                                        {"parallel", {{"tp", 1}, {"pp", 1}, {"ep", 8}, {"micro_batch_size", 1}}}});
    const ProxyPlan p = plan_proxy(mx, nullptr, 1000);
    CHECK(p.layers == mx.model.num_hidden_layers);
    CHECK(p.moe_layers == p.layers);
    bool experts = false;
    for (const ProxyItem& it : p.items) experts = experts || it.row.name == "moe.experts.gate_up.fprop";
    CHECK(experts);
    for (const ProxyItem& it : p.items) CHECK(!it.collective);  // tp 1: no TP collectives
  }
}
