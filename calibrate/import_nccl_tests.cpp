#include "calibrate/import_nccl_tests.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <set>

#include "import_common.hpp"
#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"

namespace trainsim {

namespace {

constexpr std::size_t npos = std::string_view::npos;
constexpr double kMaxBytes = 1125899906842624.0;  // 1 PiB: no GPU buffer comes near it

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum(char c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' || c == '\n'; }

// Whitespace-separated fields; only the first `keep` are kept, all are counted.
std::vector<std::string_view> split_ws(std::string_view s, std::size_t keep, std::size_t* count) {
  std::vector<std::string_view> out;
  *count = 0;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_space(s[i])) ++i;
    if (i >= s.size()) break;
    const std::size_t b = i;
    while (i < s.size() && !is_space(s[i])) ++i;
    if (out.size() < keep) out.push_back(s.substr(b, i - b));
    ++*count;
  }
  return out;
}

// The text after `key` up to the next blank (blanks after the key skipped).
std::string_view word_after(std::string_view line, std::size_t pos) {
  while (pos < line.size() && is_space(line[pos])) ++pos;
  std::size_t e = pos;
  while (e < line.size() && !is_space(line[e])) ++e;
  return line.substr(pos, e - pos);
}

// nccl-library=21903 -> "2.19.3" (NCCL_VERSION_CODE = major*10000 + minor*100 + patch since 2.9).
std::string nccl_version_text(long long code) {
  if (code >= 20900) return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." + std::to_string(code % 100);
  return std::to_string(code / 1000) + "." + std::to_string(code / 100 % 10) + "." + std::to_string(code % 100);
}

// The first "<name>_perf" word in a text (a path or a command line): the name is letters and digits in groups
// joined by '_' (at most 64 characters), right before "_perf".
std::string perf_name_in(std::string_view text) {
  for (std::size_t p = text.find("_perf"); p != npos; p = text.find("_perf", p + 1)) {
    std::size_t b = p;
    while (b > 0 && p - b < 64 && (is_alnum(text[b - 1]) || text[b - 1] == '_')) --b;
    while (b < p && text[b] == '_') ++b;  // the name starts with a letter or digit
    if (b < p && text[p - 1] != '_') return std::string(text.substr(b, p - b)) + "_perf";
  }
  return "";
}

// A cursor over a "#  Rank  0 Group  0 Pid 412345 on dgx-h100-01 device  0 [0x18] NVIDIA H100 80GB HBM3" line.
struct Cursor {
  std::string_view s;
  std::size_t i = 0;
  bool blanks() {  // at least one
    const std::size_t b = i;
    while (i < s.size() && is_space(s[i])) ++i;
    return i > b;
  }
  bool literal(std::string_view word) {
    if (s.substr(i, word.size()) != word) return false;
    i += word.size();
    return true;
  }
  std::string_view digits() {
    const std::size_t b = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    return s.substr(b, i - b);
  }
  std::string_view word() {
    const std::size_t b = i;
    while (i < s.size() && !is_space(s[i])) ++i;
    return s.substr(b, i - b);
  }
};

struct RankLine {
  long long rank = 0;
  std::string_view host, gpu;
};

// regex ^#\s*Rank\s+(\d+)\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+(\S+)\s+device\s+\d+\s+\[[^\]]*\]\s+(.+)$
std::string parse_rank_line(std::string_view t, RankLine* r) {
  const std::string expected = "a Rank line without \"Rank N Group G Pid P on HOST device D [BUS] NAME\"";
  Cursor c{t, 1};
  c.blanks();
  if (!c.literal("Rank") || !c.blanks()) return expected;
  const std::string_view rank = c.digits();
  if (rank.empty() || !c.blanks() || !c.literal("Group") || !c.blanks() || c.digits().empty() || !c.blanks() || !c.literal("Pid") ||
      !c.blanks() || c.digits().empty() || !c.blanks() || !c.literal("on") || !c.blanks())
    return expected;
  r->host = c.word();
  if (r->host.empty() || !c.blanks() || !c.literal("device") || !c.blanks() || c.digits().empty() || !c.blanks() || !c.literal("["))
    return expected;
  const std::size_t close = t.find(']', c.i);
  if (close == npos) return expected;
  c.i = close + 1;
  if (!c.blanks()) return expected;
  r->gpu = trim_view(t.substr(c.i));
  if (r->gpu.empty()) return expected;
  if (std::string problem = read_count(rank, &r->rank); !problem.empty()) return field_problem("rank", rank, problem);
  return "";
}

// What to say about one value of a result row; empty when it is usable. Times and bandwidths must be finite and
// not negative (busbw prints as 0.00 at tiny sizes), the out-of-place time above 0.
std::string row_value_problem(const char* name, std::string_view text, double* v, bool positive) {
  const std::string problem = positive ? read_positive(text, v) : read_number(text, v);
  if (!problem.empty()) return field_problem(name, text, problem);
  if (*v < 0) return field_problem(name, text, "is negative");
  return "";
}

std::string bytes_text(double b) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f B", b);
  return buf;
}

std::string us_text(double s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f us", s * 1e6);
  return buf;
}

class Parser {
 public:
  explicit Parser(const std::string& file_name) { log_.file = file_name; }

  void line(const LineReader::Line& l) {
    if (l.too_long) return log_.malformed.add(l.number, "", too_long_reason(l.length));
    const std::string_view t = trim_view(l.text);
    if (t.empty()) return;
    if (t[0] == '#') return comment(l.number, t);
    // NCCL debug output is not part of the table, unless it was written into the middle of a row.
    const bool row_like = is_digit(t[0]) || (t[0] == '-' && t.size() > 1 && is_digit(t[1]));
    if (!row_like && (t.find("NCCL INFO") != npos || t.find("NCCL WARN") != npos)) {
      ++log_.ignored_lines;
      return;
    }
    std::size_t n = 0;
    const std::vector<std::string_view> f = split_ws(t, 13, &n);
    if (f.empty()) return;  // blanks only
    long long size = 0;
    const std::string size_problem = read_count(f[0], &size);
    const bool integer = size_problem.empty() || size_problem != "is not a whole number";
    if (!integer) {
      if (in_table_ || row_like) {
        log_.malformed.add(l.number, t, "not a result row: its first field is not a size in bytes");
      } else {
        if (from_command_.empty()) from_command_ = perf_name_in(t);
        ++log_.ignored_lines;
      }
      return;
    }
    row(l.number, t, f, n, size, size_problem);
  }

  NcclTestsLog finish(long long lines) {
    log_.lines = lines;
    log_.ranks = static_cast<int>(ranks_.size());
    log_.nodes = static_cast<int>(hosts_.size());
    return std::move(log_);
  }

  std::string from_command_;

 private:
  NcclTestsLog log_;
  std::set<long long> ranks_;
  std::set<std::string, std::less<>> hosts_, gpus_;
  bool in_table_ = false;

  void comment(long long number, std::string_view t) {
    if (const std::size_t k = t.find("nccl-tests version"); k != npos) log_.tests_version = printable(word_after(t, k + 18), 32);
    if (const std::size_t k = t.find("nccl-library="); k != npos) {
      std::size_t e = k + 13;
      while (e < t.size() && is_digit(t[e])) ++e;
      long long code = 0;
      if (read_count(t.substr(k + 13, e - k - 13), &code).empty()) log_.nccl_version = nccl_version_text(code);
    }
    if (const std::size_t k = t.find("Collective test starting:"); k != npos) {
      const std::string_view name = word_after(t, k + 25);
      log_.test = perf_name_in(name);
      if (log_.test.empty()) log_.test = printable(name, 64);
      log_.test_from = "collective test line";
    }
    if (const std::size_t k = t.find("nThread"); k != npos) threads(number, t, k);
    std::size_t r = 1;
    while (r < t.size() && is_space(t[r])) ++r;
    if (t.substr(r, 4) == "Rank" && r + 4 < t.size() && is_space(t[r + 4])) {
      RankLine rank;
      if (std::string problem = parse_rank_line(t, &rank); !problem.empty()) {
        log_.malformed.add(number, t, problem);
      } else {
        ranks_.insert(rank.rank);
        hosts_.emplace(rank.host);
        if (gpus_.emplace(rank.gpu).second) log_.gpu_names.push_back(printable(rank.gpu, 80));
      }
    }
    // The column header ("#  size  count  type ...") opens the table; the footer closes it.
    if (t.find("size") != npos && t.find("count") != npos && t.find("time") != npos) in_table_ = true;
    if (t.substr(r, 17) == "Avg bus bandwidth") {
      std::size_t k = r + 17;
      while (k < t.size() && is_space(t[k])) ++k;
      if (k < t.size() && t[k] == ':') {
        const std::string_view value = word_after(t, k + 1);
        double v = 0;
        const std::string problem = read_number(value, &v);
        if (problem.empty() && v >= 0) log_.avg_busbw = v * 1e9;
        else log_.malformed.add(number, t, field_problem("Avg bus bandwidth", value, problem.empty() ? "is negative" : problem));
      }
      in_table_ = false;
    }
    if (t.find("Out of bounds values") != npos) in_table_ = false;
  }

  // "nThread 1 nGpus 8 minBytes ..." (regex nThread\s+(\d+)\s+nGpus\s+(\d+))
  void threads(long long number, std::string_view t, std::size_t k) {
    Cursor c{t, k + 7};
    if (!c.blanks()) return;
    const std::string_view a = c.digits();
    if (a.empty() || !c.blanks() || !c.literal("nGpus") || !c.blanks()) return;
    const std::string_view b = c.digits();
    if (b.empty()) return;
    long long x = 0, y = 0;
    if (!read_count(a, &x).empty() || !read_count(b, &y).empty() || x > 1000000 || y > 1000000 || x * y > 1000000)
      return log_.malformed.add(number, t, "nThread \"" + printable(a, 24) + "\" x nGpus \"" + printable(b, 24) + "\" is out of range (at most 1000000 ranks)");
    log_.threads_times_gpus = static_cast<int>(x * y);
  }

  // A result row: size count type [redop root] time algbw busbw #wrong time algbw busbw #wrong.
  void row(long long number, std::string_view t, const std::vector<std::string_view>& f, std::size_t n, long long size,
           const std::string& size_problem) {
    if (n < 11 || n > 13) return log_.malformed.add(number, t, std::to_string(n) + " fields; a result row has 11 to 13");
    long long count = 0;
    if (std::string problem = read_count(f[1], &count); !problem.empty()) return log_.malformed.add(number, t, field_problem("count", f[1], problem));
    const char* names[] = {"out-of-place time", "out-of-place algbw", "out-of-place busbw", "in-place time", "in-place algbw", "in-place busbw"};
    double time_us = 0, algbw = 0, busbw = 0, in_time = 0, in_algbw = 0, in_busbw = 0;
    double* values[] = {&time_us, &algbw, &busbw, &in_time, &in_algbw, &in_busbw};
    const std::size_t columns[] = {n - 8, n - 7, n - 6, n - 4, n - 3, n - 2};
    std::string problem;
    if (!size_problem.empty()) problem = field_problem("size", f[0], size_problem);
    else if (static_cast<double>(size) > kMaxBytes) problem = field_problem("size", f[0], "is more than 1 PiB");
    for (int i = 0; i < 6 && problem.empty(); ++i) problem = row_value_problem(names[i], f[columns[i]], values[i], false);
    long long wrong = 0;
    if (problem.empty() && f[n - 5] != "N/A") {
      if (std::string p = read_count(f[n - 5], &wrong); !p.empty()) problem = field_problem("#wrong", f[n - 5], p);
    }
    if (problem.empty() && wrong > 0) problem = "validation failed (#wrong = " + std::string(f[n - 5]) + "): result not used";
    long long in_wrong = 0;  // not used, but a row whose last field is garbage is not a row
    if (problem.empty() && f[n - 1] != "N/A") {
      if (std::string p = read_count(f[n - 1], &in_wrong); !p.empty()) problem = field_problem("in-place #wrong", f[n - 1], p);
    }
    if (problem.empty() && size == 0) problem = "size 0: nothing was timed";
    if (problem.empty() && !(time_us > 0)) problem = "out-of-place time 0";
    CollectivePoint p;
    p.bytes = static_cast<double>(size);
    p.busbw = busbw * 1e9;
    if (problem.empty()) {
      // "509.3" us -> 509.3e-6 s read as one literal: the double nearest the printed value, no rounding twice.
      const std::string literal = std::string(f[n - 8]) + "e-6";
      if (!read_positive(literal, &p.time_s).empty()) p.time_s = time_us / 1e6;
      // No collective completes in less than a nanosecond (a kernel launch alone takes microseconds).
      if (!(p.time_s >= 1e-9)) problem = field_problem("out-of-place time (us)", f[n - 8], "is below 1 ns");
      else if (!std::isfinite(p.busbw)) problem = field_problem("out-of-place busbw (GB/s)", f[n - 6], "is out of range");
    }
    if (!problem.empty()) return log_.malformed.add(number, t, problem);
    ++log_.rows;
    log_.points.push_back(p);
  }
};

NcclTestsLog parse(LineReader& reader, const std::string& file_name) {
  Parser parser(file_name);
  LineReader::Line l;
  while (reader.next(&l)) parser.line(l);
  const std::string from_command = parser.from_command_;
  NcclTestsLog log = parser.finish(reader.lines());
  if (log.test.empty() && !from_command.empty()) {
    log.test = from_command;
    log.test_from = "command line";
  }
  if (log.test.empty()) {
    log.test = perf_name_in(file_name);
    if (!log.test.empty()) log.test_from = "file name";
    else {  // "all_reduce.txt", "allreduce-8gpu.log"
      Collective op;
      std::string base = file_name.substr(file_name.find_last_of('/') == std::string::npos ? 0 : file_name.find_last_of('/') + 1);
      for (const char* name : {"all_reduce", "allreduce", "all_gather", "allgather", "reduce_scatter", "reducescatter", "alltoall", "all_to_all", "sendrecv"})
        if (base.find(name) != std::string::npos && parse_collective_name(name, &op)) {
          log.op_known = true, log.op = op, log.test_from = "file name";
          log.test = std::string(to_string(op));
          break;
        }
    }
  }
  if (!log.op_known && !log.test.empty()) log.op_known = nccl_test_collective(log.test, &log.op);
  // Points with busbw printed as 0.00 at tiny sizes: recompute from the time (nccl-tests' definition).
  if (log.op_known) {
    const int group = log.ranks > 0 ? log.ranks : log.threads_times_gpus;
    const double factor = bus_bandwidth_factor(log.op, group);
    for (auto& p : log.points)
      if (!(p.busbw > 0) && factor > 0) p.busbw = p.bytes * factor / p.time_s;
  }
  const std::vector<std::string> falls = falling_times(log.points);
  if (!falls.empty()) {
    std::string w = (log.test.empty() ? std::string("the curve") : log.test);
    if (log.ranks > 0) w += ", " + std::to_string(log.ranks) + " ranks on " + std::to_string(log.nodes) + " node" + (log.nodes == 1 ? "" : "s");
    w += ": the time falls as the message grows, by more than the " +
                    std::to_string(static_cast<int>(kCollectiveTimeFallTolerance * 100 + 0.5)) + "% measurement noise: ";
    for (std::size_t i = 0; i < falls.size() && i < 3; ++i) w += (i ? "; " : "") + falls[i];
    if (falls.size() > 3) w += "; and " + std::to_string(falls.size() - 3) + " more";
    w += ". Check the log (units, a truncated or interrupted run, other jobs on the GPUs); the alpha-beta fit of this curve is not reliable";
    log.warnings.push_back(w);
  }
  return log;
}

}  // namespace

std::vector<std::string> falling_times(const std::vector<CollectivePoint>& points) {
  std::vector<CollectivePoint> sorted = points;
  std::stable_sort(sorted.begin(), sorted.end(), [](const CollectivePoint& a, const CollectivePoint& b) { return a.bytes < b.bytes; });
  std::vector<std::string> out;
  double slowest = 0, slowest_bytes = 0;  // the largest time at any smaller message size
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    for (; j < sorted.size() && sorted[j].bytes == sorted[i].bytes; ++j) {
      const double t = sorted[j].time_s;
      if (slowest > 0 && t < slowest * (1 - kCollectiveTimeFallTolerance))
        out.push_back(bytes_text(slowest_bytes) + " took " + us_text(slowest) + ", " + bytes_text(sorted[j].bytes) + " " + us_text(t) + " (" +
                      std::to_string(static_cast<int>(100 * (1 - t / slowest) + 0.5)) + "% less)");
    }
    for (std::size_t k = i; k < j; ++k)
      if (sorted[k].time_s > slowest) slowest = sorted[k].time_s, slowest_bytes = sorted[k].bytes;
    i = j;
  }
  return out;
}

bool nccl_test_collective(const std::string& test, Collective* op) {
  if (test == "all_reduce_perf") *op = Collective::AllReduce;
  else if (test == "all_gather_perf") *op = Collective::AllGather;
  else if (test == "reduce_scatter_perf") *op = Collective::ReduceScatter;
  else if (test == "alltoall_perf" || test == "all_to_all_perf") *op = Collective::AllToAll;
  else if (test == "sendrecv_perf") *op = Collective::SendRecv;
  else return false;
  return true;
}

NcclTestsLog parse_nccl_tests_log(std::istream& in, const std::string& file_name) {
  LineReader reader(in);
  return parse(reader, file_name);
}

NcclTestsLog parse_nccl_tests_log(std::string_view text, const std::string& file_name) {
  LineReader reader(text);
  return parse(reader, file_name);
}

void add_nccl_tests(CalibrationProfile& profile, const std::vector<NcclTestsLog>& logs, const NcclImportOptions& options,
                    std::vector<std::string>* warnings) {
  std::vector<int> merged(profile.collectives.size() + logs.size(), 0);  // logs added to each curve
  for (const NcclTestsLog& log : logs) {
    if (!log.op_known)
      throw InputError(log.file, log.test.empty() ? "no test name" : "\"" + log.test + "\"",
                       "the output of all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf or sendrecv_perf",
                       "the operation is read from the '# Collective test starting:' line, an echoed command line or the file name");
    if (log.points.empty())
      throw InputError(log.file, "no result rows" + (log.malformed.empty() ? std::string() : " (" + describe_malformed(log.malformed, 3) + ")"),
                       "nccl-tests result rows (size count type ... time algbw busbw #wrong ...)");
    int ranks = log.ranks, nodes = log.nodes;
    if (ranks == 0) ranks = log.threads_times_gpus, nodes = 1;  // no Rank lines: one process, nThread x nGpus
    if (ranks < 2)
      throw InputError(log.file, std::to_string(ranks) + " rank" + (ranks == 1 ? "" : "s"), "a run on 2 or more ranks (one rank measures no communication)",
                       ranks == 0 ? "the log has no '#  Rank' lines and no nThread/nGpus header" : "");
    if (nodes < 1) nodes = 1;
    if (ranks % nodes)
      throw InputError(log.file, std::to_string(ranks) + " ranks on " + std::to_string(nodes) + " nodes", "the same number of ranks on every node");
    const CommScope scope = nodes > 1 ? CommScope::Inter : CommScope::Intra;
    const int per_node = ranks / nodes;
    const std::string fabric = scope == CommScope::Intra ? options.intra_fabric : options.inter_fabric;
    CollectiveCurve* curve = nullptr;
    std::size_t index = 0;
    for (std::size_t i = 0; i < profile.collectives.size(); ++i) {
      const CollectiveCurve& c = profile.collectives[i];
      if (c.op == log.op && c.scope == scope && c.group_size == ranks && c.ranks_per_node == per_node && c.fabric == fabric)
        curve = &profile.collectives[i], index = i;
    }
    if (!curve) {
      profile.collectives.push_back({log.op, scope, ranks, per_node, fabric, "", {}});
      curve = &profile.collectives.back(), index = profile.collectives.size() - 1;
    }
    if (index >= merged.size()) merged.resize(index + 1, 0);
    if (!curve->points.empty()) ++merged[index];  // a curve already in the profile counts as one more source
    ++merged[index];
    std::string source = log.file + ": " + log.test;
    if (!log.tests_version.empty()) source += ", nccl-tests " + log.tests_version;
    if (!log.nccl_version.empty()) source += ", NCCL " + log.nccl_version;
    source += ", " + std::to_string(ranks) + " ranks on " + std::to_string(nodes) + " node" + (nodes > 1 ? "s" : "");
    if (!log.gpu_names.empty()) source += " (" + join(log.gpu_names, ", ") + ")";
    source += ", " + std::to_string(log.rows) + " rows, out-of-place";
    curve->source = curve->source.empty() ? source : curve->source + "; " + source;
    curve->points.insert(curve->points.end(), log.points.begin(), log.points.end());
    if (profile.gpu.name.empty() && !log.gpu_names.empty()) profile.gpu.name = log.gpu_names.front();
  }
  if (!warnings) return;
  for (std::size_t i = 0; i < profile.collectives.size() && i < merged.size(); ++i) {
    if (merged[i] == 0) continue;  // not touched by these logs
    const CollectiveCurve& c = profile.collectives[i];
    const std::string name = std::string(to_string(c.op)) + " " + to_string(c.scope) + "-node, " + std::to_string(c.group_size) + " ranks";
    // Each log was checked on its own when it was read; a curve merged from several is checked as a whole.
    if (merged[i] >= 2) {
      const std::vector<std::string> falls = falling_times(c.points);
      if (!falls.empty()) {
        std::string w = name + ", merged from several logs: the time falls as the message grows: " + falls.front();
        if (falls.size() > 1) w += "; and " + std::to_string(falls.size() - 1) + " more";
        warnings->push_back(w);
      }
    }
    // What the model will make of the curve: a fit that misses a measured point by more than kFitWarnError
    // prices collectives that far off.
    const AlphaBeta f = fit_alpha_beta(c.points, bus_bandwidth_factor(c.op, c.group_size));
    if (f.sizes >= 2 && !(f.max_rel_error <= kFitWarnError)) {
      char buf[256];
      std::snprintf(buf, sizeof buf, ": the alpha-beta fit (latency %.2f us, busbw %.4g GB/s) misses a measured point by %.0f%%", f.alpha_s * 1e6,
                    f.beta / 1e9, 100 * f.max_rel_error);
      warnings->push_back(name + buf + "; plans priced from this curve will be off by as much");
    }
  }
}

}  // namespace trainsim
