#include "calibrate/import_gemm_csv.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "import_common.hpp"
#include "models/errors.hpp"

namespace trainsim {

namespace {


std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    out.push_back(trim(line.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

bool parse_positive(const std::string& s, double* v) {
  const char* end = s.data() + s.size();
  auto r = std::from_chars(s.data(), end, *v);
  return r.ec == std::errc() && r.ptr == end && *v > 0;
}

}  // namespace

GemmCsv parse_gemm_csv(std::istream& in, const std::string& file_name) {
  GemmCsv csv;
  csv.file = file_name;
  int col_dtype = 0, col_m = 1, col_n = 2, col_k = 3, col_value = 4;
  std::size_t columns = 5;
  csv.value_column = "tflops";
  bool first = true;
  std::string line;
  long long number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    const std::vector<std::string> f = split_csv(t);
    if (first) {
      first = false;
      const std::string head = lower(t);
      if (head.find("dtype") != std::string::npos) {
        csv.header = true;
        col_dtype = col_m = col_n = col_k = col_value = -1;
        for (std::size_t i = 0; i < f.size(); ++i) {
          const std::string name = lower(f[i]);
          const int idx = static_cast<int>(i);
          if (name == "dtype") col_dtype = idx;
          else if (name == "m") col_m = idx;
          else if (name == "n") col_n = idx;
          else if (name == "k") col_k = idx;
          else if (name == "tflops" && col_value < 0) col_value = idx, csv.value_column = "tflops";
          else if (name == "time_s" && col_value < 0) col_value = idx, csv.value_column = "time_s";
        }
        if (col_dtype < 0 || col_m < 0 || col_n < 0 || col_k < 0 || col_value < 0)
          throw InputError(file_name + ":" + std::to_string(number), "\"" + t + "\"",
                           "a header with columns dtype, m, n, k and tflops or time_s");
        columns = f.size();
        continue;
      }
    }
    auto bad = [&](const std::string& why) { csv.malformed.push_back({number, t.size() > 120 ? t.substr(0, 117) + "..." : t, why}); };
    if (f.size() != columns) {
      bad(std::to_string(f.size()) + " fields; the table has " + std::to_string(columns));
      continue;
    }
    GemmPoint p;
    const std::string dtype = lower(f[static_cast<std::size_t>(col_dtype)]);
    bool known = false;
    for (GemmDtype d : {GemmDtype::Bf16, GemmDtype::Fp16, GemmDtype::Fp8, GemmDtype::Tf32})
      if (dtype == to_string(d)) p.dtype = d, known = true;
    if (!known) {
      bad("dtype \"" + f[static_cast<std::size_t>(col_dtype)] + "\" is not bf16, fp16, fp8 or tf32" + (dtype == "fp32" ? " (fp32 GEMMs run as tf32)" : ""));
      continue;
    }
    double value = 0;
    if (!parse_positive(f[static_cast<std::size_t>(col_m)], &p.m) || !parse_positive(f[static_cast<std::size_t>(col_n)], &p.n) ||
        !parse_positive(f[static_cast<std::size_t>(col_k)], &p.k)) {
      bad("m, n and k must be positive numbers");
      continue;
    }
    if (!parse_positive(f[static_cast<std::size_t>(col_value)], &value)) {
      bad(csv.value_column + " \"" + f[static_cast<std::size_t>(col_value)] + "\" is not a positive number");
      continue;
    }
    p.tflops = csv.value_column == "tflops" ? value : 2 * p.m * p.n * p.k / value / 1e12;
    p.source = file_name + " line " + std::to_string(number);
    csv.points.push_back(p);
    ++csv.rows;
  }
  csv.lines = number;
  return csv;
}

void add_gemm_csv(CalibrationProfile& profile, const GemmCsv& csv) {
  if (csv.points.empty())
    throw InputError(csv.file, "no usable rows" + (csv.malformed.empty() ? std::string() : " (" + describe_malformed(csv.malformed, 3) + ")"),
                     "rows dtype,m,n,k,tflops (or time_s)");
  profile.gemm.insert(profile.gemm.end(), csv.points.begin(), csv.points.end());
}

}  // namespace trainsim
