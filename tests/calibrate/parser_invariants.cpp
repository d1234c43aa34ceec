#include "parser_invariants.hpp"

#include <cmath>
#include <exception>

#include "calibrate/import_gemm_csv.hpp"
#include "calibrate/import_nccl_tests.hpp"
#include "calibrate/training_log.hpp"
#include "models/core/errors.hpp"

namespace trainsim {
namespace {

bool finite_nonnegative(double v) { return std::isfinite(v) && v >= 0; }

// Message text: no control characters (NUL included) and valid UTF-8 (printable() escapes the rest).
bool printable_text(const std::string& s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7F) return false;
  }
  return printable(s, s.size() + 1) == s;
}

std::string check_malformed(const char* parser, const MalformedLines& m, long long lines) {
  if (m.listed().size() > kMaxListedMalformed || m.listed().size() > m.size()) return std::string(parser) + ": malformed list larger than its count";
  if (static_cast<long long>(m.size()) > lines) return std::string(parser) + ": more malformed lines than lines";
  long long previous = 0;
  for (const auto& l : m.listed()) {
    if (l.line <= previous || l.line > lines) return std::string(parser) + ": malformed line numbers out of order or range";
    previous = l.line;
    if (l.reason.empty()) return std::string(parser) + ": a malformed line without a reason";
    if (!printable_text(l.text) || !printable_text(l.reason)) return std::string(parser) + ": a message that is not printable: " + l.reason;
    if (l.text.size() > 4 * 120 + 8) return std::string(parser) + ": malformed text not cut";
  }
  return "";
}

}  // namespace

std::string check_training_log(std::string_view data) {
  const TrainingLog log = parse_training_log(data);
  long long newlines = 0;
  for (char c : data) newlines += c == '\n';
  if (log.lines < newlines || log.lines > newlines + 1) return "training log: line count";
  for (const auto& it : log.iterations) {
    if (!finite_nonnegative(it.time_s) || !finite_nonnegative(it.tflops_per_gpu) || !finite_nonnegative(it.tokens_per_s) ||
        !finite_nonnegative(it.samples_per_s))
      return "training log: an iteration with a negative or non-finite value";
    if (!(it.time_s > 0) && !(it.tokens_per_s > 0) && !(it.samples_per_s > 0)) return "training log: an iteration without a time or a throughput";
    if (it.iteration < 0 || it.line < 1 || it.line > log.lines) return "training log: iteration or line number out of range";
  }
  if (!finite_nonnegative(log.peak_memory_bytes)) return "training log: memory not finite";
  if (log.iterations.size() + log.malformed.size() > static_cast<std::size_t>(log.lines)) return "training log: more iterations than lines";
  for (int skip : {-1, 0, 1, 1000000}) {
    const LogSummary s = summarize(log, skip);
    if (s.used + s.warmup != s.iterations || s.iterations != static_cast<int>(log.iterations.size())) return "training log: summary counts";
    if (skip < 0 && !log.iterations.empty() && s.warmup < 1) return "training log: the warm-up was compared";
    if (s.used == 0 && (s.median_time_s != 0 || s.median_tokens_per_s_per_gpu != 0)) return "training log: a median from the warm-up";
    if (!finite_nonnegative(s.median_time_s) || !finite_nonnegative(s.p90_time_s)) return "training log: summary not finite";
  }
  return check_malformed("training log", log.malformed, log.lines);
}

std::string check_nccl(std::string_view data) {
  const NcclTestsLog log = parse_nccl_tests_log(data, "fuzz.log");
  for (const auto& p : log.points)
    if (!(p.bytes >= 1 && p.bytes <= 1125899906842624.0 && p.time_s >= 1e-9 && std::isfinite(p.time_s) && finite_nonnegative(p.busbw)))
      return "nccl-tests: a point out of range";
  if (log.rows != static_cast<long long>(log.points.size())) return "nccl-tests: rows and points differ";
  if (!finite_nonnegative(log.avg_busbw) || log.ranks < 0 || log.nodes < 0 || log.threads_times_gpus < 0) return "nccl-tests: header values";
  for (const auto& w : log.warnings)
    if (!printable_text(w)) return "nccl-tests: a warning that is not printable";
  if (std::string m = check_malformed("nccl-tests", log.malformed, log.lines); !m.empty()) return m;
  try {
    CalibrationProfile p;
    std::vector<std::string> warnings;
    add_nccl_tests(p, {log}, {}, &warnings);
    for (const auto& c : p.collectives) {
      const AlphaBeta f = fit_alpha_beta(c.points, bus_bandwidth_factor(c.op, c.group_size));
      if (!finite_nonnegative(f.alpha_s) || std::isnan(f.beta)) return "nccl-tests: a fit that is not a number";
    }
  } catch (const InputError&) {
  }
  return "";
}

std::string check_gemm(std::string_view data) {
  GemmCsv csv;
  try {
    csv = parse_gemm_csv(data, "fuzz.csv");
  } catch (const InputError&) {
    return "";
  }
  for (const auto& p : csv.points)
    if (!(p.m >= 1 && p.n >= 1 && p.k >= 1 && p.m == std::floor(p.m) && std::isfinite(p.tflops) && p.tflops > 0))
      return "gemm csv: a point out of range";
  if (csv.points.size() != csv.point_lines.size() || csv.points.size() != csv.point_values.size() || csv.rows != static_cast<long long>(csv.points.size()))
    return "gemm csv: points and their lines differ";
  if (std::string m = check_malformed("gemm csv", csv.malformed, csv.lines); !m.empty()) return m;
  try {
    check_gemm_peaks(csv);
    CalibrationProfile p;
    add_gemm_csv(p, csv);
  } catch (const InputError&) {
  }
  return "";
}



std::string check_parsers(std::string_view data) {
  try {
    for (auto check : {check_training_log, check_nccl, check_gemm})
      if (std::string problem = check(data); !problem.empty()) return problem;
  } catch (const std::exception& e) {
    return std::string("an exception other than InputError: ") + e.what();
  }
  return "";
}

}  // namespace trainsim
