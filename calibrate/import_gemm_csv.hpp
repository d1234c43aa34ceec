#pragma once
// Reads a measured GEMM table into the GEMM points of a calibration profile. CSV, one GEMM shape per row:
//   dtype,m,n,k,tflops        achieved TFLOP/s (1e12 FLOP/s, 2*m*n*k / time)
//   dtype,m,n,k,time_s        seconds per GEMM (TFLOP/s = 2*m*n*k / time_s / 1e12)
// with a header row naming the columns (any order, extra columns ignored; without a header the first form is
// assumed). dtype is bf16, fp16, fp8 or tf32 (the dtype fp32 training runs its GEMMs in). Blank lines and
// lines starting with '#' are comments. Rows that cannot be read are counted with their line numbers and the
// reason: a wrong number of fields, an unknown dtype, m, n or k that is not a whole number from 1 to 2^40, a
// value that is not a number, negative, zero, NaN or infinite, out of range or absurdly long; lines longer than
// kMaxLineBytes are not read. A hand-written scanner: linear, no recursion, bounded memory per line, any bytes
// are safe. parse_gemm_csv(std::string_view, ...) is the entry point for fuzzing.
//
// Values above the GPU's dense peak are physically impossible (check_gemm_peaks): the import is refused.
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "calibrate/import_common.hpp"
#include "models/calibration/calibration.hpp"

namespace trainsim {

struct GemmCsv {
  std::string file;
  std::vector<GemmPoint> points;
  std::vector<long long> point_lines;   // the line of each point
  std::vector<std::string> point_values;  // the value field of each point as written (printable)
  std::string value_column;        // "tflops" or "time_s"
  bool header = false;             // false: the columns were assumed to be dtype,m,n,k,tflops
  long long lines = 0, rows = 0;
  long long comment_lines = 0;     // blank lines and lines starting with '#'
  MalformedLines malformed;
};

// Throws InputError (naming the file and line) for a header row without the required columns.
GemmCsv parse_gemm_csv(std::istream& in, const std::string& file_name);
GemmCsv parse_gemm_csv(std::string_view text, const std::string& file_name);  // the same, from text in memory

// A measured GEMM may exceed the datasheet dense peak by at most this fraction: datasheet peaks are computed at
// the boost clock NVIDIA quotes (H100 SXM: 989.4 TFLOP/s bf16 = 132 SMs x 4096 FLOP/clock x 1.83 GHz), and an
// H100 SXM may run its SMs at up to 1.98 GHz (+8.2%); the values printed in a table add rounding. Anything
// further above is impossible: the wrong GPU preset, or a column in other units.
constexpr double kGemmPeakTolerance = 0.10;

// Checks each point against the dense peak of `gpu` for its dtype (gemm_peak_flops). Throws InputError naming
// the file, line, value and peak for a point above (1 + kGemmPeakTolerance) x the peak; returns one warning per
// point above the peak but within the tolerance. `gpu_label` names the GPU in messages ("h100-sxm-80gb").
std::vector<std::string> check_gemm_peaks(const GemmCsv& csv, const GpuSpec& gpu, const std::string& gpu_label);
// Without a GPU: the same against the fastest GPU preset for each dtype (catches wrong units, not a wrong GPU).
std::vector<std::string> check_gemm_peaks(const GemmCsv& csv);

// Appends the points (source: "FILE line N") to the profile. Throws InputError naming the file when the table
// has no usable row.
void add_gemm_csv(CalibrationProfile& profile, const GemmCsv& csv);

}  // namespace trainsim
