#include "calibrate/import_nccl_tests.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <regex>
#include <set>
#include <sstream>

#include "import_common.hpp"
#include "models/errors.hpp"
#include "models/json_reader.hpp"

namespace trainsim {

namespace {


std::string clip(const std::string& s) { return s.size() > 120 ? s.substr(0, 117) + "..." : s; }

std::vector<std::string> split_ws(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

bool parse_int(const std::string& s, long long* v) {
  const char* end = s.data() + s.size();
  auto r = std::from_chars(s.data(), end, *v);
  return r.ec == std::errc() && r.ptr == end;
}

bool parse_double(const std::string& s, double* v) {
  const char* end = s.data() + s.size();
  auto r = std::from_chars(s.data(), end, *v);
  return r.ec == std::errc() && r.ptr == end;
}

// nccl-library=21903 -> "2.19.3" (NCCL_VERSION_CODE = major*10000 + minor*100 + patch since 2.9).
std::string nccl_version_text(long long code) {
  if (code >= 20900) return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." + std::to_string(code % 100);
  return std::to_string(code / 1000) + "." + std::to_string(code / 100 % 10) + "." + std::to_string(code % 100);
}

// The first "<name>_perf" word in a text (a path or a command line).
std::string perf_name_in(const std::string& text) {
  static const std::regex re(R"(([A-Za-z0-9]+(?:_[A-Za-z0-9]+)*)_perf)");
  std::smatch m;
  if (std::regex_search(text, m, re)) return m[1].str() + "_perf";
  return "";
}

}  // namespace

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
  static const std::regex version_re(R"(nccl-tests version\s+(\S+))");
  static const std::regex library_re(R"(nccl-library=(\d+))");
  static const std::regex starting_re(R"(Collective test starting:\s*(\S+))");
  static const std::regex threads_re(R"(nThread\s+(\d+)\s+nGpus\s+(\d+))");
  static const std::regex rank_re(R"(^#\s*Rank\s+(\d+)\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+(\S+)\s+device\s+\d+\s+\[[^\]]*\]\s+(.+)$)");
  static const std::regex rank_start_re(R"(^#\s*Rank\s)");
  static const std::regex avg_re(R"(^#\s*Avg bus bandwidth\s*:\s*([0-9.eE+-]+))");

  NcclTestsLog log;
  log.file = file_name;
  std::string from_command;
  std::set<long long> ranks;
  std::set<std::string> hosts;
  bool in_table = false;
  std::string line;
  long long number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string t = trim(line);
    std::smatch m;
    if (t.empty()) continue;
    if (t[0] == '#') {
      if (std::regex_search(t, m, version_re)) log.tests_version = m[1].str();
      if (std::regex_search(t, m, library_re)) {
        long long code = 0;
        if (parse_int(m[1].str(), &code)) log.nccl_version = nccl_version_text(code);
      }
      if (std::regex_search(t, m, starting_re)) {
        log.test = perf_name_in(m[1].str());
        if (log.test.empty()) log.test = m[1].str();
        log.test_from = "collective test line";
      }
      if (std::regex_search(t, m, threads_re)) {
        long long a = 0, b = 0;
        if (parse_int(m[1].str(), &a) && parse_int(m[2].str(), &b)) log.threads_times_gpus = static_cast<int>(a * b);
      }
      if (std::regex_search(t, rank_start_re)) {
        if (std::regex_match(t, m, rank_re)) {
          long long r = 0;
          parse_int(m[1].str(), &r);
          ranks.insert(r);
          hosts.insert(m[2].str());
          const std::string gpu = trim(m[3].str());
          if (std::find(log.gpu_names.begin(), log.gpu_names.end(), gpu) == log.gpu_names.end()) log.gpu_names.push_back(gpu);
        } else {
          log.malformed.push_back({number, clip(t), "a Rank line without \"Rank N Group G Pid P on HOST device D [BUS] NAME\""});
        }
      }
      // The column header ("#  size  count  type ...") opens the table; the footer closes it.
      if (t.find("size") != std::string::npos && t.find("count") != std::string::npos && t.find("time") != std::string::npos) in_table = true;
      if (std::regex_search(t, m, avg_re)) {
        double v = 0;
        if (parse_double(m[1].str(), &v)) log.avg_busbw = v * 1e9;
        in_table = false;
      }
      if (t.find("Out of bounds values") != std::string::npos) in_table = false;
      continue;
    }
    // NCCL debug output is not part of the table, unless it was written into the middle of a row.
    const bool row_like = std::isdigit(static_cast<unsigned char>(t[0])) != 0;
    if (!row_like && (t.find("NCCL INFO") != std::string::npos || t.find("NCCL WARN") != std::string::npos)) {
      ++log.ignored_lines;
      continue;
    }
    const std::vector<std::string> f = split_ws(t);
    long long size = 0;
    if (!parse_int(f[0], &size)) {
      if (in_table || row_like) {
        log.malformed.push_back({number, clip(t), "not a result row: its first field is not a size in bytes"});
      } else {
        if (from_command.empty()) from_command = perf_name_in(t);
        ++log.ignored_lines;
      }
      continue;
    }
    // A result row: size count type [redop root] time algbw busbw #wrong time algbw busbw #wrong.
    const std::size_t n = f.size();
    if (n < 11 || n > 13) {
      log.malformed.push_back({number, clip(t), std::to_string(n) + " fields; a result row has 11 to 13"});
      continue;
    }
    long long count = 0;
    double time_us = 0, algbw = 0, busbw = 0, in_time = 0, in_algbw = 0, in_busbw = 0;
    if (!parse_int(f[1], &count)) {
      log.malformed.push_back({number, clip(t), "count \"" + f[1] + "\" is not an integer"});
      continue;
    }
    const char* names[] = {"out-of-place time", "out-of-place algbw", "out-of-place busbw", "in-place time", "in-place algbw", "in-place busbw"};
    double* values[] = {&time_us, &algbw, &busbw, &in_time, &in_algbw, &in_busbw};
    const std::size_t columns[] = {n - 8, n - 7, n - 6, n - 4, n - 3, n - 2};
    std::string problem;
    for (int i = 0; i < 6 && problem.empty(); ++i)
      if (!parse_double(f[columns[i]], values[i]) || *values[i] < 0) problem = std::string(names[i]) + " \"" + f[columns[i]] + "\" is not a number";
    long long wrong = 0;
    if (problem.empty() && f[n - 5] != "N/A" && !parse_int(f[n - 5], &wrong)) problem = "#wrong \"" + f[n - 5] + "\" is not a count";
    if (problem.empty() && wrong > 0) problem = "validation failed (#wrong = " + f[n - 5] + "): result not used";
    if (problem.empty() && size <= 0) problem = "size 0: nothing was timed";
    if (problem.empty() && !(time_us > 0)) problem = "out-of-place time 0";
    if (!problem.empty()) {
      log.malformed.push_back({number, clip(t), problem});
      continue;
    }
    ++log.rows;
    CollectivePoint p;
    p.bytes = static_cast<double>(size);
    // "509.3" us -> 509.3e-6 s read as one literal: the double nearest the printed value, no rounding twice.
    if (!parse_double(f[n - 8] + "e-6", &p.time_s)) p.time_s = time_us / 1e6;
    p.busbw = busbw * 1e9;
    log.points.push_back(p);
  }
  log.lines = number;
  log.ranks = static_cast<int>(ranks.size());
  log.nodes = static_cast<int>(hosts.size());
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
  return log;
}

void add_nccl_tests(CalibrationProfile& profile, const std::vector<NcclTestsLog>& logs, const NcclImportOptions& options) {
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
    for (auto& c : profile.collectives)
      if (c.op == log.op && c.scope == scope && c.group_size == ranks && c.ranks_per_node == per_node && c.fabric == fabric) curve = &c;
    if (!curve) {
      profile.collectives.push_back({log.op, scope, ranks, per_node, fabric, "", {}});
      curve = &profile.collectives.back();
    }
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
}

}  // namespace trainsim
