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

#include "../approx.hpp"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "calibrate/import_gemm_csv.hpp"
#include "calibrate/import_nccl_tests.hpp"
#include "models/core/errors.hpp"
#include "models/scenario/scenario.hpp"

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
  CHECK(log.points[0].time_s == trainsim::test::approx(20.00e-6));
  CHECK(log.points[0].busbw == trainsim::test::approx(0.09e9));
  // Row 134217728: out-of-place 509.3 us and 461.15 GB/s (the in-place 504.2 / 465.81 are not used).
  CHECK(log.points[17].bytes == 134217728);
  CHECK(log.points[17].time_s == trainsim::test::approx(509.3e-6));
  CHECK(log.points[17].busbw == trainsim::test::approx(461.15e9));
  CHECK(log.points[22].bytes == 4294967296.0);
  CHECK(log.points[22].time_s == trainsim::test::approx(15679e-6));
  CHECK(log.avg_busbw == trainsim::test::approx(212.137e9));

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
  CHECK(f.alpha_s == trainsim::test::approx(20e-6).epsilon(0.005));
  CHECK(f.beta == trainsim::test::approx(480e9).epsilon(0.005));
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
  CHECK(f.alpha_s == trainsim::test::approx(60e-6).epsilon(0.01));
  CHECK(f.beta == trainsim::test::approx(360e9).epsilon(0.005));
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
  CHECK(csv.points[0].tflops == trainsim::test::approx(798.0));
  CHECK(csv.points[3].dtype == GemmDtype::Fp8);
  CHECK(csv.points[3].tflops == trainsim::test::approx(1310.5));
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
  CHECK(csv.points[0].tflops == trainsim::test::approx(1.099511627776e12 / 1.4e-3 / 1e12));
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

// ---- Regression tests: untrusted input, impossible values -------------------------------------------------

namespace {
const std::string kRanks =
    "# Collective test starting: all_reduce_perf\n"
    "#  Rank  0 Group  0 Pid 1 on host-a device  0 [0x18] NVIDIA H100 80GB HBM3\n"
    "#  Rank  1 Group  0 Pid 1 on host-a device  1 [0x2a] NVIDIA H100 80GB HBM3\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
std::string row(const std::string& size, const std::string& time, const std::string& busbw = "1.00") {
  return "  " + size + "  262144  float  sum  -1  " + time + "  1.00  " + busbw + "  0  10.00  1.00  1.00  0\n";
}
std::string reason_at(const MalformedLines& m, long long line) {
  for (const auto& l : m.listed())
    if (l.line == line) return l.reason;
  return "(line " + std::to_string(line) + " not malformed)";
}
}  // namespace

TEST_CASE("nccl-tests rows with NaN, infinite, negative, out-of-range or 30,000-digit values are malformed with their reason") {
  const std::string digits(30000, '9');
  const std::string text = kRanks + row("1048576", "10.00") +   // line 5: used
                           row("2097152", "nan") + row("4194304", "inf") + row("8388608", "-5.0") + row("16777216", "1e400") +
                           row("33554432", digits) + row("-67108864", "30.00") + row(digits, "30.00") + row("134217728", "40.00", "nan") +
                           row("0", "1.00") + row("268435456", "1e-9") + row("536870912", "60.00");  // line 16: used
  const NcclTestsLog log = parse_nccl_tests_log(std::string_view(text), "all_reduce_perf.log");
  CHECK(log.rows == 2);
  REQUIRE(log.points.size() == 2);
  for (const auto& p : log.points) CHECK((std::isfinite(p.time_s) && p.time_s > 0 && std::isfinite(p.busbw) && p.busbw > 0));
  CHECK(log.malformed.size() == 10);
  CHECK(reason_at(log.malformed, 6) == "out-of-place time \"nan\" is not finite");
  CHECK(reason_at(log.malformed, 7) == "out-of-place time \"inf\" is not finite");
  CHECK(reason_at(log.malformed, 8) == "out-of-place time \"-5.0\" is negative");
  CHECK(reason_at(log.malformed, 9) == "out-of-place time \"1e400\" is out of range");
  CHECK(reason_at(log.malformed, 10).ends_with("has 30000 characters (a number has at most 64)"));
  CHECK(reason_at(log.malformed, 11) == "size \"-67108864\" is negative");
  CHECK(reason_at(log.malformed, 12).ends_with("has 30000 digits (at most 18)"));
  CHECK(reason_at(log.malformed, 13) == "out-of-place busbw \"nan\" is not finite");
  CHECK(reason_at(log.malformed, 14) == "size 0: nothing was timed");
  CHECK(reason_at(log.malformed, 15) == "out-of-place time (us) \"1e-9\" is below 1 ns");
}

TEST_CASE("nccl-tests: megabyte lines, NUL bytes and invalid UTF-8 are counted, never a stack overflow or a hang") {
  std::string name;  // "$ a_a_a_..._perf": the old std::regex for the test name recursed per character
  while (name.size() < 200000) name += "a_";
  std::string text = "$ " + name + "\n" + kRanks;                                                    // 1, 2-5
  text += "#  Rank  2 Group  0 Pid 1 on host-a device  2 [0x3a] " + std::string(300000, 'H') + "\n";  // 6: a 300 kB GPU name
  text += "#  Rank " + std::string(30000, '3') + " Group  0 Pid 1 on host-a device  3 [0x3b] NVIDIA H100 80GB HBM3\n";  // 7
  text += "     1048576  262144  float  sum  -1  10.00  1.00  1.00  0  10.00  1.00  1.00  0" + std::string(1, '\0') + "\xff\n";  // 8
  text += std::string(kMaxLineBytes + 1, '7') + "\n";  // 9
  text += row("2097152", "12.00");                     // 10
  const NcclTestsLog log = parse_nccl_tests_log(std::string_view(text), "x.log");
  CHECK(log.test == "all_reduce_perf");
  CHECK(log.ranks == 3);
  REQUIRE(log.gpu_names.size() == 2);
  CHECK(log.gpu_names[1].size() < 100);  // cut for messages
  CHECK(log.rows == 1);
  REQUIRE(log.malformed.size() == 3);
  CHECK(reason_at(log.malformed, 7).ends_with("has 30000 digits (at most 18)"));
  CHECK(reason_at(log.malformed, 8) == "in-place #wrong \"0\\x00\\xff\" is not a whole number");
  CHECK(log.malformed[1].text.ends_with("\\x00\\xff"));
  CHECK(reason_at(log.malformed, 9) == "line of 1048577 bytes: longer than the 1 MiB limit, not read");
  CHECK(log.ignored_lines == 1);
  std::istringstream in(text);
  CHECK(parse_nccl_tests_log(in, "x.log").malformed.size() == 3);  // the stream reads the same
  // Found by fuzzing: a line of vertical tabs and form feeds (blank, but not to the old trim) read field 0 of none.
  CHECK(parse_nccl_tests_log(std::string_view(kRanks + "\v\f\v\n" + row("1048576", "10.00")), "x.log").rows == 1);
  // Found by fuzzing: two problems on one comment line were listed as two entries with the same line number.
  const NcclTestsLog two = parse_nccl_tests_log(
      std::string_view(kRanks + "#  Avg bus bandwidth    : -1 nThread 9999999 nGpus 8\n" + row("1048576", "10.00")), "x.log");
  REQUIRE(two.malformed.size() == 1);
  CHECK(two.malformed[0].line == 5);
  CHECK(two.malformed[0].reason ==
        "nThread \"9999999\" x nGpus \"8\" is out of range (at most 1000000 ranks); Avg bus bandwidth \"-1\" is negative");
}

TEST_CASE("nccl-tests: a curve whose time falls as the message grows is flagged, measurement noise is not") {
  // 5% faster at a larger size: noise (the tolerance is 10%).
  CHECK(falling_times({{1048576, 0, 20e-6}, {2097152, 0, 19e-6}, {4194304, 0, 21e-6}}).empty());
  // 4 MiB took 35.29 us, 8 MiB 20.10 us: 43% less.
  const std::vector<std::string> f = falling_times({{4194304, 0, 35.29e-6}, {1048576, 0, 23.82e-6}, {8388608, 0, 20.10e-6}, {16777216, 0, 81.17e-6}});
  REQUIRE(f.size() == 1);
  CHECK(f[0] == "4194304 B took 35.29 us, 8388608 B 20.10 us (43% less)");

  const std::string text = kRanks + row("1048576", "23.82") + row("2097152", "27.65") + row("4194304", "35.29") + row("8388608", "20.10") +
                           row("16777216", "81.17") + row("1073741824", "1.00");
  const NcclTestsLog log = parse_nccl_tests_log(std::string_view(text), "all_reduce_perf.log");
  REQUIRE(log.warnings.size() == 1);
  CHECK(log.warnings[0].starts_with("all_reduce_perf, 2 ranks on 1 node: the time falls as the message grows, by more than the 10% measurement noise: "
                                    "4194304 B took 35.29 us, 8388608 B 20.10 us (43% less); 16777216 B took 81.17 us, 1073741824 B 1.00 us (99% less)"));
  // The fit cannot make sense of it (1 GiB in 1 us is 1.9 PB/s): the import says so.
  CalibrationProfile p;
  std::vector<std::string> warnings;
  add_nccl_tests(p, {log}, {}, &warnings);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].starts_with("all-reduce intra-node, 2 ranks: the alpha-beta fit (latency "));
  CHECK(warnings[0].find("misses a measured point by") != std::string::npos);

  // The clean sample: no warning.
  CalibrationProfile q;
  warnings.clear();
  const NcclTestsLog clean = read_log("all_reduce_perf_8xh100.log");
  CHECK(clean.warnings.empty());
  add_nccl_tests(q, {clean}, {}, &warnings);
  CHECK(warnings.empty());
  // Two clean logs of the same placement that disagree: flagged as merged.
  const std::string slow = kRanks + row("1048576", "50.00") + row("2097152", "60.00");
  const std::string fast = kRanks + row("4194304", "20.00") + row("8388608", "22.00");
  CalibrationProfile m;
  warnings.clear();
  add_nccl_tests(m, {parse_nccl_tests_log(std::string_view(slow), "a.log"), parse_nccl_tests_log(std::string_view(fast), "b.log")}, {}, &warnings);
  REQUIRE(!warnings.empty());
  CHECK(warnings[0] == "all-reduce intra-node, 2 ranks, merged from several logs: the time falls as the message grows: "
                       "2097152 B took 60.00 us, 4194304 B 20.00 us (67% less); and 1 more");
}

TEST_CASE("GEMM CSV: NaN, infinite, negative, fractional, huge and 30,000-digit values are malformed with their reason") {
  const std::string digits(30000, '8');
  const std::string text = "dtype,m,n,k,tflops\n"
                           "bf16,8192,8192,8192,798.0\n"       // 2: used
                           "bf16,8192,8192,8192,inf\n"         // 3
                           "bf16,8192,8192,8192,nan\n"         // 4
                           "bf16,8192,8192,8192,-798\n"        // 5
                           "bf16,8192,8192,8192,1e400\n"       // 6
                           "bf16,inf,8192,8192,798\n"          // 7
                           "bf16,8192.5,8192,8192,798\n"       // 8
                           "bf16,1e15,8192,8192,798\n"         // 9
                           "bf16,-8192,8192,8192,798\n"        // 10
                           "bf16,8192,8192,8192," + digits + "\n"  // 11
                           + "bf" + std::string(1, '\0') + "16,8192,8192,8192,798\n" +  // 12
                           "bf16,8192,8192,8192,0\n";          // 13
  const GemmCsv csv = parse_gemm_csv(std::string_view(text), "t.csv");
  CHECK(csv.rows == 1);
  CHECK(csv.malformed.size() == 11);  // lines 3 to 13
  CHECK(reason_at(csv.malformed, 3) == "tflops \"inf\" is not finite");
  CHECK(reason_at(csv.malformed, 4) == "tflops \"nan\" is not finite");
  CHECK(reason_at(csv.malformed, 5) == "tflops \"-798\" is negative");
  CHECK(reason_at(csv.malformed, 6) == "tflops \"1e400\" is out of range");
  CHECK(reason_at(csv.malformed, 7) == "m \"inf\" is not finite");
  CHECK(reason_at(csv.malformed, 8) == "m \"8192.5\" is not a whole number");
  CHECK(reason_at(csv.malformed, 9) == "m \"1e15\" is more than 2^40");
  CHECK(reason_at(csv.malformed, 10) == "m \"-8192\" is negative");
  CHECK(reason_at(csv.malformed, 11).ends_with("has 30000 characters (a number has at most 64)"));
  CHECK(reason_at(csv.malformed, 12) == "dtype \"bf\\x0016\" is not bf16, fp16, fp8 or tf32");
  CHECK(reason_at(csv.malformed, 13) == "tflops \"0\" is zero");

  // time_s so small that the rate overflows.
  const GemmCsv t = parse_gemm_csv(std::string_view("dtype,m,n,k,time_s\nbf16,1099511627776,1099511627776,1099511627776,1e-300\n"), "t.csv");
  REQUIRE(t.malformed.size() == 1);
  CHECK(t.malformed[0].reason == "time_s \"1e-300\" gives a rate out of range for bf16 1099511627776 x 1099511627776 x 1099511627776");
  // A header of a megabyte of commas is refused by name, not split into a million fields.
  CHECK_THROWS_WITH_AS(parse_gemm_csv(std::string_view("dtype" + std::string(500000, ',') + "\n"), "wide.csv"), doctest::Contains("wide.csv:1: got 500001 columns"),
                       InputError);
}

TEST_CASE("GEMM above the GPU's dense peak: refused with the file, line and value; within the clock-boost tolerance: a warning") {
  const GpuSpec h100 = parse_gpu(nlohmann::json("h100-sxm-80gb"), "--gpu");  // bf16 dense peak 989.4 TFLOP/s
  const GemmCsv ok = read_csv("gemm_h100.csv");
  CHECK(check_gemm_peaks(ok, h100, "h100-sxm-80gb").empty());
  CHECK(check_gemm_peaks(ok).empty());

  const GemmCsv impossible = parse_gemm_csv(std::string_view("dtype,m,n,k,tflops\nbf16,4096,4096,4096,700\nbf16,8192,8192,8192,100000\n"), "gemm.csv");
  REQUIRE(impossible.rows == 2);  // parsed: the value is a number, only the GPU makes it impossible
  CHECK_THROWS_WITH_AS(check_gemm_peaks(impossible, h100, "h100-sxm-80gb"),
                       "gemm.csv:3: got bf16 8192 x 8192 x 8192 at 100000.0 TFLOP/s (tflops 100000), 101x the dense bf16 peak of h100-sxm-80gb "
                       "(989.4 TFLOP/s); expected at most 1.10x the dense peak (clock boost and rounding) (a GEMM cannot run above its GPU's "
                       "dense peak: was it measured on another GPU (--gpu), or is the column in other units (tflops: 1e12 FLOP/s; time_s: "
                       "seconds per GEMM)?)",
                       InputError);
  // Without a GPU preset: still above the fastest GPU preset's bf16 peak.
  CHECK_THROWS_WITH_AS(check_gemm_peaks(impossible), doctest::Contains("gemm.csv:3: got bf16 8192 x 8192 x 8192 at 100000.0 TFLOP/s"), InputError);
  // The H100 table read as an A100's: 798 / 312 = 2.56x.
  CHECK_THROWS_WITH_AS(check_gemm_peaks(ok, parse_gpu(nlohmann::json("a100-sxm-80gb"), "--gpu"), "a100-sxm-80gb"),
                       doctest::Contains("gemm_h100.csv:3: got bf16 8192 x 8192 x 8192 at 798.0 TFLOP/s (tflops 798.0), 2.56x the dense bf16 peak"), InputError);
  // Seconds written as milliseconds: 1.4 "s" is fine (0.79 TFLOP/s is slow, not impossible); 1.4e-6 s is 785,000 TFLOP/s.
  const GemmCsv times = parse_gemm_csv(std::string_view("dtype,m,n,k,time_s\nbf16,8192,8192,8192,1.4e-6\n"), "times.csv");
  CHECK_THROWS_WITH_AS(check_gemm_peaks(times, h100, "h100-sxm-80gb"), doctest::Contains("(time_s 1.4e-6), 794x the dense bf16 peak"), InputError);

  // 5% above the datasheet (an H100 SXM may clock 8% above the clock its datasheet peak assumes): a warning.
  const GemmCsv boost = parse_gemm_csv(std::string_view("dtype,m,n,k,tflops\nbf16,8192,8192,8192,1040\nbf16,8192,8192,8192,1088\n"), "boost.csv");
  const std::vector<std::string> w = check_gemm_peaks(boost, h100, "h100-sxm-80gb");
  REQUIRE(w.size() == 2);
  CHECK(w[0] == "boost.csv line 2: bf16 8192 x 8192 x 8192 at 1040.0 TFLOP/s is 1.05x the dense bf16 peak of h100-sxm-80gb (989.4 TFLOP/s): "
                "possible only at a clock above the datasheet's boost clock; check --gpu");
  // 11% above: refused.
  const GemmCsv over = parse_gemm_csv(std::string_view("dtype,m,n,k,tflops\nbf16,8192,8192,8192,1100\n"), "over.csv");
  CHECK_THROWS_AS(check_gemm_peaks(over, h100, "h100-sxm-80gb"), InputError);
}
