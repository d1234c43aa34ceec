// trainsim's own workload CSV: one job per row, columns by name (any order). Required id,submit_s,gpus,duration_s;
// optional user,queue,priority,gpu_milli,gpu_types ('|'-separated),walltime_s,checkpoint_interval_s,gang
// (true/false/1/0),elastic_min,elastic_max,recorded_wait_s,cpu_milli,memory_mib,account. An empty optional cell takes
// ClusterJob's default. A job of 0 GPUs must ask for CPU (a CPU-only pod beside the GPU jobs).
// For workloads written by hand or converted from a trace without an importer of its own.
#include <array>
#include <tuple>

#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"  // join
#include "sim/cluster/traces/trace_import.hpp"

namespace trainsim::sim::cluster {

using namespace trace_detail;

namespace {

enum Col { kId, kSubmit, kGpus, kDuration, kUser, kQueue, kPriority, kMilli, kTypes, kWalltime, kCheckpoint, kGang, kElasticMin, kElasticMax, kWait, kCpu, kMemory, kAccount, kCols };
constexpr std::array<const char*, kCols> kNames = {"id", "submit_s", "gpus", "duration_s", "user", "queue", "priority", "gpu_milli", "gpu_types",
                                                   "walltime_s", "checkpoint_interval_s", "gang", "elastic_min", "elastic_max", "recorded_wait_s",
                                                   "cpu_milli", "memory_mib", "account"};
constexpr long long kMaxHost = 1'000'000'000;  // cpu_milli and memory_mib: a million cores, a petabyte
constexpr int kRequired = 4;  // the first four

// Reads one row into `j`; the reason it cannot, naming the column, or nullptr.
const char* read_row(const std::vector<std::string>& f, const std::array<int, kCols>& at, ClusterJob& j) {
  auto cell = [&](Col c) { return at[c] < 0 ? std::string() : trim(f[at[c]]); };
  j.id = cell(kId);
  if (j.id.empty()) return "id empty";
  const auto submit = parse_seconds(cell(kSubmit));
  if (!submit) return "submit_s not a time from 0 to 1e12 s";
  for (const auto& [c, field, why] : {std::tuple{kCpu, &j.cpu_milli, "cpu_milli not a whole number from 0 to 1e9"},
                                      std::tuple{kMemory, &j.memory_mib, "memory_mib not a whole number from 0 to 1e9"}})
    if (const std::string v = cell(c); !v.empty()) {
      const auto n = parse_integer(v, 0, kMaxHost);
      if (!n) return why;
      *field = *n;
    }
  const auto gpus = parse_integer(cell(kGpus), j.cpu_milli > 0 ? 0 : 1, kMaxGpus);
  if (!gpus) return j.cpu_milli > 0 ? "gpus not a whole number from 0 to 1,000,000" : "gpus not a positive integer (at most 1,000,000)";
  const auto duration = parse_seconds(cell(kDuration));
  if (!duration) return "duration_s not a time from 0 to 1e12 s";
  j.submit_s = *submit;
  j.gpus = static_cast<int>(*gpus);
  j.duration_s = *duration;
  j.user = cell(kUser);
  j.queue = cell(kQueue);
  j.account = cell(kAccount);
  if (const std::string v = cell(kPriority); !v.empty()) {
    const auto p = parse_integer(v, -1'000'000'000, 1'000'000'000);
    if (!p) return "priority not an integer (within +-1e9)";
    j.priority = static_cast<int>(*p);
  }
  if (const std::string v = cell(kMilli); !v.empty() && j.gpus > 0) {
    const auto m = parse_integer(v, 1, 1000);
    if (!m) return "gpu_milli not a whole number from 1 to 1000";
    if (*m < 1000 && j.gpus != 1) return "gpu_milli below 1000 on a job of more than one GPU";  // shares are of one GPU
    j.gpu_milli = static_cast<int>(*m);
  }
  j.gpu_types = split_gpu_types(cell(kTypes));
  for (const auto& [c, field, why] : {std::tuple{kWalltime, &j.walltime_s, "walltime_s not a time from 0 to 1e12 s"},
                                      std::tuple{kCheckpoint, &j.checkpoint_interval_s, "checkpoint_interval_s not a time from 0 to 1e12 s"}})
    if (const std::string v = cell(c); !v.empty()) {
      const auto s = parse_seconds(v);
      if (!s) return why;
      *field = *s;
    }
  if (const std::string v = cell(kGang); !v.empty()) {
    if (v == "true" || v == "1") j.gang = true;
    else if (v == "false" || v == "0") j.gang = false;
    else return "gang not true, false, 1 or 0";
  }
  const std::string lo = cell(kElasticMin), hi = cell(kElasticMax);
  if (!lo.empty() || !hi.empty()) {
    const auto a = parse_integer(lo, 1, kMaxGpus), b = parse_integer(hi, 1, kMaxGpus);
    // An elastic job runs on any count from min to max; its gpus (the request) lies between.
    if (!a || !b || *a > j.gpus || *b < j.gpus) return "elastic_min and elastic_max not whole numbers with elastic_min <= gpus <= elastic_max";
    j.elastic_min = static_cast<int>(*a);
    j.elastic_max = static_cast<int>(*b);
  }
  if (const std::string v = cell(kWait); !v.empty()) {
    const auto w = parse_number(v);
    if (!w || *w > kMaxSeconds) return "recorded_wait_s not a number up to 1e12 s (negative: not recorded)";
    j.recorded_wait_s = *w >= 0 ? *w : -1;
  }
  return nullptr;
}

}  // namespace

Trace import_trainsim_csv(const std::string& path) {
  LineReader in(path, "trainsim workload CSV");
  std::vector<std::string> names(kNames.begin(), kNames.end());
  const std::string known = join(names, ",");
  const CsvColumns h = read_csv_header(in, known);
  std::array<int, kCols> at;
  at.fill(-1);
  for (std::size_t i = 0; i < h.names.size(); ++i) {
    int c = 0;
    while (c < kCols && h.names[i] != kNames[c]) ++c;
    if (c == kCols) {
      const std::string near = near_name(h.names[i], names);
      throw InputError(path + ":" + std::to_string(in.line_number()), "\"" + h.names[i] + "\"", "a known column: " + known,
                       near.empty() ? "unknown column" : "unknown column; did you mean \"" + near + "\"?");
    }
    at[c] = static_cast<int>(i);
  }
  for (int c = 0; c < kRequired; ++c) require_column(h, kNames[c], in, known);
  Trace t;
  for_each_csv_row(in, h.names.size(), t.report, [&](const std::vector<std::string>& f) {
    ClusterJob j;
    if (const char* why = read_row(f, at, j)) return t.report.skip(why);
    t.jobs.push_back(std::move(j));
  });
  finish(t);
  return t;
}

}  // namespace trainsim::sim::cluster
