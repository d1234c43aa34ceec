#pragma once
// Reads a measured GEMM table into the GEMM points of a calibration profile. CSV, one GEMM shape per row:
//   dtype,m,n,k,tflops        achieved TFLOP/s (1e12 FLOP/s, 2*m*n*k / time)
//   dtype,m,n,k,time_s        seconds per GEMM (TFLOP/s = 2*m*n*k / time_s / 1e12)
// with a header row naming the columns (any order, extra columns ignored; without a header the first form is
// assumed). dtype is bf16, fp16, fp8 or tf32 (the dtype fp32 training runs its GEMMs in). Blank lines and
// lines starting with '#' are comments. Rows that cannot be read are counted with their line numbers.
#include <istream>
#include <string>
#include <vector>

#include "calibrate/import_common.hpp"
#include "models/calibration.hpp"

namespace trainsim {

struct GemmCsv {
  std::string file;
  std::vector<GemmPoint> points;
  std::string value_column;        // "tflops" or "time_s"
  bool header = false;             // false: the columns were assumed to be dtype,m,n,k,tflops
  long long lines = 0, rows = 0;
  std::vector<MalformedLine> malformed;
};

GemmCsv parse_gemm_csv(std::istream& in, const std::string& file_name);

// Appends the points (source: "FILE line N") to the profile. Throws InputError naming the file when the table
// has no usable row.
void add_gemm_csv(CalibrationProfile& profile, const GemmCsv& csv);

}  // namespace trainsim
