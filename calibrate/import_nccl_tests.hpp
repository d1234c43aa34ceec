#pragma once
// Reads the text output of NVIDIA's nccl-tests (all_reduce_perf, all_gather_perf, reduce_scatter_perf,
// alltoall_perf, sendrecv_perf) that users already have, into collective curves of a calibration profile.
//
// The format (NVIDIA/nccl-tests src/common.cu; doc/PERFORMANCE.md for algbw / busbw):
//   # nccl-tests version 2.13.8 nccl-headers=21903 nccl-library=21903
//   # Collective test starting: all_reduce_perf
//   # nThread 1 nGpus 8 minBytes 1024 maxBytes 4294967296 step: 2(factor) warmup iters: 5 iters: 20 ...
//   #  Rank  0 Group  0 Pid  12345 on    node-01 device  0 [0x18] NVIDIA H100 80GB HBM3
//   #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
//   #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
//      134217728      33554432     float     sum      -1   1234.5  108.72  190.27      0   1230.1  109.1  190.9      0
//   # Out of bounds values : 0 OK
//   # Avg bus bandwidth    : 123.456
// Rows use the out-of-place time and busbw (the first of the two column groups). Older versions without the
// redop/root columns are read too (the columns are taken from the end of the row). The operation comes from
// the "# Collective test starting:" line, else from a command line echoed in the log (".../all_reduce_perf
// -b 8 ..."), else from the file name. Ranks are the "#  Rank" lines, nodes their distinct host names.
//
// A row that cannot be read (a value that is not a number, negative, NaN or infinite, out of range or absurdly
// long; a size of 0 or below; a time of 0), a row with validation errors (#wrong > 0), text inside the table
// that is not a row, a Rank or header line that cannot be read, and lines longer than kMaxLineBytes are counted
// as malformed with their line numbers and reasons; NCCL debug output (NCCL INFO / WARN) and text outside the
// table are counted as ignored. A curve whose time falls as the message grows by more than measurement noise
// (kCollectiveTimeFallTolerance) gets a warning naming the sizes.
//
// The reader is a hand-written scanner (no std::regex): linear in the input, no recursion, bounded memory per
// line; any bytes are safe. parse_nccl_tests_log(std::string_view, ...) is the entry point for fuzzing.
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "calibrate/import_common.hpp"
#include "models/calibration/calibration.hpp"

namespace trainsim {

struct NcclTestsLog {
  std::string file;
  std::string test;               // "all_reduce_perf"; empty when not found
  std::string test_from;          // "collective test line", "command line", "file name"
  bool op_known = false;
  Collective op = Collective::AllReduce;
  std::string tests_version;      // "2.13.8"
  std::string nccl_version;       // "2.19.3" (from nccl-library=21903)
  int ranks = 0, nodes = 0;       // from the Rank lines (0 when there are none)
  int threads_times_gpus = 0;     // nThread x nGpus of the header (per process)
  std::vector<std::string> gpu_names;  // distinct device names of the Rank lines
  std::vector<CollectivePoint> points; // out-of-place, in file order
  double avg_busbw = 0;           // "# Avg bus bandwidth", bytes/s; 0 when absent
  long long lines = 0, rows = 0, ignored_lines = 0;
  MalformedLines malformed;
  std::vector<std::string> warnings;  // e.g. the time falls as the message grows
};

// `file_name` names the log in messages and is used to detect the operation as a last resort.
NcclTestsLog parse_nccl_tests_log(std::istream& in, const std::string& file_name);
NcclTestsLog parse_nccl_tests_log(std::string_view text, const std::string& file_name);  // the same, from text in memory

// A larger message may take less time than a smaller one by measurement noise: nccl-tests prints the mean of a
// few (default 20) runs, whose spread on latency-bound sizes is a few percent, and NCCL changes protocol (LL,
// LL128, Simple) and algorithm (ring, tree, NVLS) with the size, which can make the next size a few percent
// faster. A time more than 10% below that of a smaller message is neither.
constexpr double kCollectiveTimeFallTolerance = 0.10;
// Where the time of a curve falls as the message grows by more than the tolerance, one text per size pair
// ("4194304 B took 35.29 us, 8388608 B 20.10 us (43% less)"); empty when it does not.
std::vector<std::string> falling_times(const std::vector<CollectivePoint>& points);

// The operation an nccl-tests binary name measures ("all_reduce_perf" -> all-reduce); false for tests
// trainsim does not model (broadcast, reduce, gather, scatter, hypercube).
bool nccl_test_collective(const std::string& test, Collective* op);

struct NcclImportOptions {
  std::string intra_fabric, inter_fabric;  // fabric preset names to record on the curves (empty: any)
};

// Adds one curve per (op, scope, ranks, ranks per node) to `profile`, merging logs of the same placement;
// the GPU name comes from the logs when the profile has none. Throws InputError (naming the file) for a log
// without rows, without a known operation, with a single rank, or with ranks spread unevenly over nodes.
// An alpha-beta fit of a clean nccl-tests curve is within a few percent of every point (the 8-GPU sample in
// tests/calibrate/data: 0.5%); NCCL's protocol and algorithm switches add some, but a fit that misses a point by
// more than 25% no longer describes the measurement.
constexpr double kFitWarnError = 0.25;
// Curves built from several logs are checked again as merged (falling_times), and every curve these logs
// touched is fitted (fit_alpha_beta): a fit off by more than kFitWarnError at a measured point is reported.
// What is found goes to `warnings`.
void add_nccl_tests(CalibrationProfile& profile, const std::vector<NcclTestsLog>& logs, const NcclImportOptions& options = {},
                    std::vector<std::string>* warnings = nullptr);

}  // namespace trainsim
