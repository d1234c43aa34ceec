#include "calibrate/import_gemm_csv.hpp"

#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <tuple>
#include <utility>

#include "import_common.hpp"
#include "models/compute/compute.hpp"
#include "models/core/errors.hpp"
#include "models/scenario/presets.hpp"
#include "models/scenario/scenario.hpp"

namespace trainsim {

namespace {

constexpr std::size_t kMaxFields = 256;
constexpr double kMaxDimension = 1099511627776.0;  // 2^40

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Comma-separated fields, trimmed; at most kMaxFields kept, all counted.
std::vector<std::string_view> split_csv(std::string_view line, std::size_t* count) {
  std::vector<std::string_view> out;
  *count = 0;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    if (out.size() < kMaxFields) out.push_back(trim_view(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    ++*count;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

// m, n, k: whole numbers from 1 to 2^40 ("8192", also "8192.0" or "8.192e3").
std::string dimension_problem(const char* name, std::string_view text, double* v) {
  std::string problem = read_positive(text, v);
  if (problem.empty() && *v != std::floor(*v)) problem = "is not a whole number";
  if (problem.empty() && *v > kMaxDimension) problem = "is more than 2^40";
  return problem.empty() ? problem : field_problem(name, text, problem);
}

std::string tflops_text(double tflops) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f TFLOP/s", tflops);
  return buf;
}

std::string ratio_text(double r) {
  char buf[64];
  std::snprintf(buf, sizeof buf, r < 10 ? "%.2fx" : "%.0fx", r);
  return buf;
}

std::string shape_text(const GemmPoint& p) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s %.0f x %.0f x %.0f", to_string(p.dtype), p.m, p.n, p.k);
  return buf;
}

class Parser {
 public:
  explicit Parser(const std::string& file_name) {
    csv_.file = file_name;
    csv_.value_column = "tflops";
  }

  void line(const LineReader::Line& l) {
    const long long number = l.number;
    if (l.too_long) return csv_.malformed.add(number, "", too_long_reason(l.length));
    const std::string_view t = trim_view(l.text);
    if (t.empty() || t[0] == '#') {
      ++csv_.comment_lines;
      return;
    }
    std::size_t count = 0;
    const std::vector<std::string_view> f = split_csv(t, &count);
    if (first_) {
      first_ = false;
      if (lower(t.substr(0, 4096)).find("dtype") != std::string::npos) return header(number, t, f, count);
    }
    auto bad = [&](const std::string& why) { csv_.malformed.add(number, t, why); };
    if (count != columns_) return bad(std::to_string(count) + " fields; the table has " + std::to_string(columns_));
    GemmPoint p;
    const std::string_view dtype_text = f[static_cast<std::size_t>(col_dtype_)];
    const std::string dtype = lower(dtype_text.substr(0, 16));
    bool known = false;
    for (GemmDtype d : {GemmDtype::Bf16, GemmDtype::Fp16, GemmDtype::Fp8, GemmDtype::Tf32})
      if (dtype_text.size() <= 16 && dtype == to_string(d)) p.dtype = d, known = true;
    if (!known)
      return bad("dtype \"" + printable(dtype_text, 40) + "\" is not bf16, fp16, fp8 or tf32" + (dtype == "fp32" ? " (fp32 GEMMs run as tf32)" : ""));
    for (auto [name, col, out] : {std::tuple<const char*, int, double*>{"m", col_m_, &p.m}, {"n", col_n_, &p.n}, {"k", col_k_, &p.k}})
      if (std::string problem = dimension_problem(name, f[static_cast<std::size_t>(col)], out); !problem.empty()) return bad(problem);
    const std::string_view value_text = f[static_cast<std::size_t>(col_value_)];
    double value = 0;
    if (std::string problem = read_positive(value_text, &value); !problem.empty()) return bad(field_problem(csv_.value_column, value_text, problem));
    p.tflops = csv_.value_column == "tflops" ? value : 2 * p.m * p.n * p.k / value / 1e12;
    if (!std::isfinite(p.tflops) || !(p.tflops > 0))
      return bad(field_problem(csv_.value_column, value_text, "gives a rate out of range for " + shape_text(p)));
    p.source = csv_.file + " line " + std::to_string(number);
    csv_.points.push_back(p);
    csv_.point_lines.push_back(number);
    csv_.point_values.push_back(printable(value_text, 40));
    ++csv_.rows;
  }

  GemmCsv finish(long long lines) {
    csv_.lines = lines;
    return std::move(csv_);
  }

 private:
  GemmCsv csv_;
  int col_dtype_ = 0, col_m_ = 1, col_n_ = 2, col_k_ = 3, col_value_ = 4;
  std::size_t columns_ = 5;
  bool first_ = true;

  void header(long long number, std::string_view t, const std::vector<std::string_view>& f, std::size_t count) {
    csv_.header = true;
    col_dtype_ = col_m_ = col_n_ = col_k_ = col_value_ = -1;
    for (std::size_t i = 0; i < f.size(); ++i) {
      const std::string name = lower(f[i].substr(0, 16));
      if (f[i].size() > 16) continue;
      const int idx = static_cast<int>(i);
      if (name == "dtype") col_dtype_ = idx;
      else if (name == "m") col_m_ = idx;
      else if (name == "n") col_n_ = idx;
      else if (name == "k") col_k_ = idx;
      else if (name == "tflops" && col_value_ < 0) col_value_ = idx, csv_.value_column = "tflops";
      else if (name == "time_s" && col_value_ < 0) col_value_ = idx, csv_.value_column = "time_s";
    }
    if (count > kMaxFields)
      throw InputError(csv_.file + ":" + std::to_string(number), std::to_string(count) + " columns", "a header of at most " + std::to_string(kMaxFields) + " columns");
    if (col_dtype_ < 0 || col_m_ < 0 || col_n_ < 0 || col_k_ < 0 || col_value_ < 0)
      throw InputError(csv_.file + ":" + std::to_string(number), "\"" + printable(t) + "\"", "a header with columns dtype, m, n, k and tflops or time_s");
    columns_ = count;
  }
};

GemmCsv parse(LineReader& reader, const std::string& file_name) {
  Parser parser(file_name);
  LineReader::Line l;
  while (reader.next(&l)) parser.line(l);
  return parser.finish(reader.lines());
}

// The check behind both check_gemm_peaks: `peak(dtype)` in FLOP/s and the GPU it belongs to.
template <class Peak>
std::vector<std::string> check_peaks(const GemmCsv& csv, Peak peak) {
  std::vector<std::string> warnings;
  std::vector<std::size_t> above;
  for (std::size_t i = 0; i < csv.points.size(); ++i) {
    const auto [flops, gpu] = peak(csv.points[i].dtype);
    if (!(flops > 0)) continue;
    const double r = csv.points[i].tflops * 1e12 / flops;
    if (r > 1 + kGemmPeakTolerance) above.push_back(i);
    else if (r > 1)
      warnings.push_back(csv.file + " line " + std::to_string(csv.point_lines[i]) + ": " + shape_text(csv.points[i]) + " at " +
                         tflops_text(csv.points[i].tflops) + " is " + ratio_text(r) + " the dense " + to_string(csv.points[i].dtype) + " peak of " +
                         gpu + " (" + tflops_text(flops / 1e12) + "): possible only at a clock above the datasheet's boost clock; check --gpu");
  }
  if (above.empty()) return warnings;
  const std::size_t i = above.front();
  const GemmPoint& p = csv.points[i];
  const auto [flops, gpu] = peak(p.dtype);
  std::string value = shape_text(p) + " at " + tflops_text(p.tflops);
  if (csv.value_column == "time_s") value += " (time_s " + csv.point_values[i] + ")";
  else value += " (tflops " + csv.point_values[i] + ")";
  value += ", " + ratio_text(p.tflops * 1e12 / flops) + " the dense " + to_string(p.dtype) + " peak of " + gpu + " (" + tflops_text(flops / 1e12) + ")";
  std::string hint = "a GEMM cannot run above its GPU's dense peak: was it measured on another GPU (--gpu), or is the column in other units "
                     "(tflops: 1e12 FLOP/s; time_s: seconds per GEMM)?";
  if (above.size() > 1) {
    hint += " " + std::to_string(above.size() - 1) + " more row" + (above.size() > 2 ? "s" : "") + " above the peak: line";
    for (std::size_t k = 1; k < above.size() && k <= 10; ++k) hint += (k > 1 ? ", " : " ") + std::to_string(csv.point_lines[above[k]]);
    if (above.size() > 11) hint += ", ...";
  }
  char limit[32];
  std::snprintf(limit, sizeof limit, "%.2f", 1 + kGemmPeakTolerance);
  throw InputError(csv.file + ":" + std::to_string(csv.point_lines[i]), value,
                   std::string("at most ") + limit + "x the dense peak (clock boost and rounding)", hint);
}

Precision precision_for(GemmDtype d) { return precision_of(d); }

}  // namespace

GemmCsv parse_gemm_csv(std::istream& in, const std::string& file_name) {
  LineReader reader(in);
  return parse(reader, file_name);
}

GemmCsv parse_gemm_csv(std::string_view text, const std::string& file_name) {
  LineReader reader(text);
  return parse(reader, file_name);
}

std::vector<std::string> check_gemm_peaks(const GemmCsv& csv, const GpuSpec& gpu, const std::string& gpu_label) {
  return check_peaks(csv, [&](GemmDtype d) { return std::pair<double, std::string>{gemm_peak_flops(gpu, precision_for(d)), gpu_label}; });
}

std::vector<std::string> check_gemm_peaks(const GemmCsv& csv) {
  // The fastest preset per dtype, found once (the presets are fixed for the process's life).
  static const std::array<std::pair<double, std::string>, kGemmDtypes> fastest = [] {
    std::array<std::pair<double, std::string>, kGemmDtypes> out{};
    for (const std::string& name : preset_names(PresetKind::Gpu)) {
      const GpuSpec gpu = parse_gpu(nlohmann::json(name), name);
      for (GemmDtype d : {GemmDtype::Bf16, GemmDtype::Fp16, GemmDtype::Fp8, GemmDtype::Tf32}) {
        const double peak = gemm_peak_flops(gpu, precision_for(d));
        auto& f = out[static_cast<std::size_t>(d)];
        if (peak > f.first) f = {peak, "the fastest GPU preset, " + name};
      }
    }
    return out;
  }();
  return check_peaks(csv, [&](GemmDtype d) { return fastest[static_cast<std::size_t>(d)]; });
}

void add_gemm_csv(CalibrationProfile& profile, const GemmCsv& csv) {
  if (csv.points.empty())
    throw InputError(csv.file, "no usable rows" + (csv.malformed.empty() ? std::string() : " (" + describe_malformed(csv.malformed, 3) + ")"),
                     "rows dtype,m,n,k,tflops (or time_s)");
  profile.gemm.insert(profile.gemm.end(), csv.points.begin(), csv.points.end());
}

}  // namespace trainsim
