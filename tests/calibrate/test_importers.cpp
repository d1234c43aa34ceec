// Importers of measurements users already have: nccl-tests text output and GEMM tables. The sample files
// in data/ are written by hand in the formats nccl-tests and a CSV export print; the expected values are
// read off their lines.
//
// data/all_reduce_perf_8xh100.log: all_reduce_perf -b 1K -e 4G -f 2 on 8 H100s of one node, generated from
// time = 20 us + size * 1.75 / 480 GB/s (1.75 = 2(n-1)/n, n = 8) and printed with nccl-tests' rounding
// (time to 2, 1 or 0 decimals in us by magnitude, algbw and busbw to 2 decimals in GB/s).
// data/all_gather_perf_2x8_malformed.log: all_gather_perf -b 1M -e 1G -f 2 under mpirun on 2 nodes x 8 GPUs,
// time = 60 us + size * (15/16) / 360 GB/s; no "Collective test starting" line (the command line is echoed at
// the top instead), NCCL INFO output, and four broken lines: 29 (garbled time), 31 (truncated row),
// 34 (a row overwritten by NCCL INFO output from another rank) and 36 (#wrong = 2).
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "calibrate/import_gemm_csv.hpp"
#include "calibrate/import_nccl_tests.hpp"
#include "models/errors.hpp"

using namespace trainsim;

namespace {
std::string data(const std::string& name) { return std::string(TRAINSIM_TEST_DATA_DIR) + "/" + name; }

NcclTestsLog read_log(const std::string& name) {
  std::ifstream in(data(name));
  REQUIRE(in);
  return parse_nccl_tests_log(in, data(name));
}

GemmCsv read_csv(const std::string& name) {
  std::ifstream in(data(name));
  REQUIRE(in);
  return parse_gemm_csv(in, name);
}
}  // namespace

TEST_CASE("nccl-tests all_reduce_perf on 8 GPUs: header, ranks, rows and footer") {
  const NcclTestsLog log = read_log("all_reduce_perf_8xh100.log");
  CHECK(log.test == "all_reduce_perf");
  CHECK(log.test_from == "collective test line");
  CHECK(log.op_known);
  CHECK(log.op == Collective::AllReduce);
  CHECK(log.tests_version == "2.13.9");
  CHECK(log.nccl_version == "2.19.3");  // nccl-library=21903
  CHECK(log.ranks == 8);
  CHECK(log.nodes == 1);
  CHECK(log.threads_times_gpus == 8);
  REQUIRE(log.gpu_names.size() == 1);
  CHECK(log.gpu_names[0] == "NVIDIA H100 80GB HBM3");
  CHECK(log.malformed.empty());
  CHECK(log.ignored_lines == 0);
  REQUIRE(log.rows == 23);  // 1 KiB .. 4 GiB, doubling
  REQUIRE(log.points.size() == 23);
  // First row: 1024 B in 20.00 us, busbw 0.09 GB/s (out-of-place columns).
  CHECK(log.points[0].bytes == 1024);
  CHECK(log.points[0].time_s == doctest::Approx(20.00e-6));
  CHECK(log.points[0].busbw == doctest::Approx(0.09e9));
  // Row 134217728: out-of-place 509.3 us and 461.15 GB/s (the in-place 504.2 / 465.81 are not used).
  CHECK(log.points[17].bytes == 134217728);
  CHECK(log.points[17].time_s == doctest::Approx(509.3e-6));
  CHECK(log.points[17].busbw == doctest::Approx(461.15e9));
  CHECK(log.points[22].bytes == 4294967296.0);
  CHECK(log.points[22].time_s == doctest::Approx(15679e-6));
  CHECK(log.avg_busbw == doctest::Approx(212.137e9));

  // Into a profile: one intra-node curve of 8 ranks, and its alpha-beta fit recovers the generating
  // 20 us and 480 GB/s within the printing precision (the 4 GiB row alone: 4294967296 * 1.75 / 15679 us
  // minus the latency = 479.97 GB/s).
  CalibrationProfile p;
  add_nccl_tests(p, {log}, {"nvlink4-nvswitch", ""});
  REQUIRE(p.collectives.size() == 1);
  const CollectiveCurve& c = p.collectives[0];
  CHECK(c.op == Collective::AllReduce);
  CHECK(c.scope == CommScope::Intra);
  CHECK(c.group_size == 8);
  CHECK(c.ranks_per_node == 8);
  CHECK(c.fabric == "nvlink4-nvswitch");
  CHECK(p.gpu.name == "NVIDIA H100 80GB HBM3");
  const AlphaBeta f = fit_alpha_beta(c.points, bus_bandwidth_factor(c.op, c.group_size));
  CHECK(f.sizes == 23);
  CHECK(f.alpha_s == doctest::Approx(20e-6).epsilon(0.005));
  CHECK(f.beta == doctest::Approx(480e9).epsilon(0.005));
  CHECK(f.max_rel_error < 0.005);
}

TEST_CASE("nccl-tests log with malformed lines: each counted with its line number, the rest used") {
  const NcclTestsLog log = read_log("all_gather_perf_2x8_malformed.log");
  CHECK(log.test == "all_gather_perf");
  CHECK(log.test_from == "command line");  // "$ mpirun ... ./build/all_gather_perf -b 1M ..."
  CHECK(log.op == Collective::AllGather);
  CHECK(log.ranks == 16);
  CHECK(log.nodes == 2);  // dgx-h100-08, dgx-h100-09
  REQUIRE(log.malformed.size() == 4);
  CHECK(log.malformed[0].line == 29);
  CHECK(log.malformed[0].reason.find("8x5.21") != std::string::npos);
  CHECK(log.malformed[1].line == 31);
  CHECK(log.malformed[1].reason.find("4 fields") != std::string::npos);
  CHECK(log.malformed[2].line == 34);
  CHECK(log.malformed[3].line == 36);
  CHECK(log.malformed[3].reason.find("#wrong = 2") != std::string::npos);
  CHECK(log.ignored_lines == 3);  // the echoed command line and two NCCL INFO lines
  CHECK(log.rows == 8);           // 11 sizes (1 MiB .. 1 GiB) less the three broken rows
  CHECK(describe_malformed(log.malformed).starts_with("4 malformed lines: line 29 ("));

  // 16 ranks on 2 nodes: an inter-node curve with 8 ranks per node; the fit recovers 60 us and 360 GB/s.
  CalibrationProfile p;
  add_nccl_tests(p, {log});
  REQUIRE(p.collectives.size() == 1);
  CHECK(p.collectives[0].scope == CommScope::Inter);
  CHECK(p.collectives[0].group_size == 16);
  CHECK(p.collectives[0].ranks_per_node == 8);
  const AlphaBeta f = fit_alpha_beta(p.collectives[0].points, bus_bandwidth_factor(Collective::AllGather, 16));
  CHECK(f.alpha_s == doctest::Approx(60e-6).epsilon(0.01));
  CHECK(f.beta == doctest::Approx(360e9).epsilon(0.005));
}

TEST_CASE("nccl-tests: the operation from the file name; logs without rows or ranks are errors") {
  const std::string rows =
      "#  Rank  0 Group  0 Pid 1 on host-a device  0 [0x18] NVIDIA A100-SXM4-80GB\n"
      "#  Rank  1 Group  0 Pid 1 on host-a device  1 [0x2a] NVIDIA A100-SXM4-80GB\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "     1048576        262144     float    none      -1    10.00  104.86  104.86      0    10.00  104.86  104.86    N/A\n";
  std::istringstream in(rows);
  const NcclTestsLog log = parse_nccl_tests_log(in, "results/sendrecv_perf_2gpu.txt");
  CHECK(log.test == "sendrecv_perf");
  CHECK(log.test_from == "file name");
  CHECK(log.op == Collective::SendRecv);
  CHECK(log.rows == 1);
  CHECK(log.gpu_names == std::vector<std::string>{"NVIDIA A100-SXM4-80GB"});

  std::istringstream empty("# nccl-tests version 2.13.9 nccl-headers=21903 nccl-library=21903\n# Collective test starting: all_reduce_perf\n");
  const NcclTestsLog none = parse_nccl_tests_log(empty, "empty.log");
  CalibrationProfile p;
  CHECK_THROWS_AS(add_nccl_tests(p, {none}), InputError);

  std::istringstream unknown("     1048576        262144     float    none      -1    10.00  104.86  104.86      0    10.00  104.86  104.86      0\n");
  const NcclTestsLog what = parse_nccl_tests_log(unknown, "results.txt");
  CHECK_FALSE(what.op_known);
  CHECK_THROWS_WITH_AS(add_nccl_tests(p, {what}), doctest::Contains("all_reduce_perf"), InputError);
}

TEST_CASE("GEMM CSV with tflops: rows used, malformed rows counted with line numbers") {
  const GemmCsv csv = read_csv("gemm_h100.csv");
  CHECK(csv.header);
  CHECK(csv.value_column == "tflops");
  REQUIRE(csv.rows == 4);
  CHECK(csv.points[0].dtype == GemmDtype::Bf16);
  CHECK(csv.points[0].m == 8192);
  CHECK(csv.points[0].tflops == doctest::Approx(798.0));
  CHECK(csv.points[3].dtype == GemmDtype::Fp8);
  CHECK(csv.points[3].tflops == doctest::Approx(1310.5));
  REQUIRE(csv.malformed.size() == 3);
  CHECK(csv.malformed[0].line == 6);  // 4 fields
  CHECK(csv.malformed[1].line == 8);  // fp32 (GEMMs in fp32 training run as tf32)
  CHECK(csv.malformed[1].reason.find("tf32") != std::string::npos);
  CHECK(csv.malformed[2].line == 9);  // n = "x"
  CalibrationProfile p;
  add_gemm_csv(p, csv);
  CHECK(p.gemm.size() == 4);
}

TEST_CASE("GEMM CSV with time_s: TFLOP/s = 2·m·n·k / time") {
  const GemmCsv csv = read_csv("gemm_times.csv");
  CHECK(csv.value_column == "time_s");
  REQUIRE(csv.rows == 1);
  // 2 · 8192^3 = 1.099511627776e12 FLOP in 1.4 ms = 785.365 TFLOP/s.
  CHECK(csv.points[0].tflops == doctest::Approx(1.099511627776e12 / 1.4e-3 / 1e12));
  REQUIRE(csv.malformed.size() == 1);  // a note with a comma in it: 7 fields
  CHECK(csv.malformed[0].line == 3);

  std::istringstream none("dtype,m,n,k,tflops\nbf16,1,2\n");
  const GemmCsv bad = parse_gemm_csv(none, "none.csv");
  CalibrationProfile p;
  CHECK_THROWS_AS(add_gemm_csv(p, bad), InputError);
  std::istringstream header("kind,m,n,k,tflops\n");
  CHECK_NOTHROW(parse_gemm_csv(header, "noheader.csv"));  // no "dtype": a data row (malformed), not a header
  std::istringstream wrong_header("dtype,m,n,k,speed\n");
  CHECK_THROWS_AS(parse_gemm_csv(wrong_header, "bad.csv"), InputError);
}
