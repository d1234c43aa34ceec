// libFuzzer target: any bytes as a cluster trace, read by each importer (alibaba-2023, philly-chronus, swf, csv)
// through import_trace. Bytes after a line "#nodes" become the Alibaba node list beside the pod list. Bad input
// must end in an InputError or in counted skips; what is imported must keep the importers' promises (jobs sorted,
// counts that add up, every number finite and in range). Anything else (a crash, a hang, another exception, a
// sanitizer report, a broken promise) is a finding. Linked with replay_main.cpp it is also a plain program
// that replays files and folders (the sim.cluster_trace_fuzz_replay test over the committed corpus).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include "models/core/errors.hpp"
#include "sim/cluster/traces/trace_import.hpp"

namespace fs = std::filesystem;
using namespace trainsim;
using namespace trainsim::sim::cluster;

namespace {

const fs::path& work_dir() {
  // Never destroyed, so that the exit handler can still read it (libFuzzer ends with exit()).
  static const fs::path* dir = [] {
    auto* d = new fs::path(fs::temp_directory_path() / ("trainsim-fuzz-cluster-trace-" + std::to_string(getpid())));
    fs::create_directories(*d);
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(*dir, ec);
    });
    return d;
  }();
  return *dir;
}

void write(const fs::path& p, std::string_view bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

[[noreturn]] void broken(const std::string& kind, const std::string& what) {
  std::fprintf(stderr, "broken promise (%s): %s\n", kind.c_str(), what.c_str());
  std::abort();
}

bool seconds(double v) { return std::isfinite(v) && v >= 0 && v <= trace_detail::kMaxSeconds; }

void check(const std::string& kind, const Trace& t) {
  const ImportReport& r = t.report;
  if (r.jobs != t.jobs.size()) broken(kind, "report.jobs is not the number of jobs");
  std::uint64_t node_skips = 0;
  for (const auto& [why, n] : r.skipped) {
    if (n == 0 || why.empty()) broken(kind, "an empty skip reason or count");
    if (why.starts_with("node list: ")) node_skips += n;
  }
  if (r.rows != r.jobs + r.skipped_total() - node_skips) broken(kind, "rows != jobs + skipped rows");
  if (!std::is_sorted(t.jobs.begin(), t.jobs.end(), [](const ClusterJob& a, const ClusterJob& b) { return a.submit_s < b.submit_s; }))
    broken(kind, "jobs not sorted by submit time");
  for (const ClusterJob& j : t.jobs) {
    if (j.gpus < 1 || j.gpus > trace_detail::kMaxGpus) broken(kind, "gpus out of range");
    if (j.gpu_milli < 1 || j.gpu_milli > 1000 || (j.gpu_milli < 1000 && j.gpus != 1)) broken(kind, "gpu_milli out of range");
    if (!seconds(j.submit_s) || !seconds(j.duration_s) || !seconds(j.walltime_s) || !seconds(j.checkpoint_interval_s))
      broken(kind, "a time not finite or out of range");
    if (j.recorded_wait_s != -1 && !seconds(j.recorded_wait_s)) broken(kind, "recorded_wait_s neither -1 nor a time");
    if ((j.elastic_min != 0 || j.elastic_max != 0) && !(1 <= j.elastic_min && j.elastic_min <= j.gpus && j.gpus <= j.elastic_max))
      broken(kind, "elastic range not around gpus");
    for (const std::string& g : j.gpu_types)
      if (g.empty()) broken(kind, "an empty GPU type");
  }
  for (const TraceNodePool& p : t.nodes)
    if (p.gpu_model.empty() || p.gpus_per_node < 1 || p.nodes < 1) broken(kind, "an empty node pool");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::size_t split = text.find("\n#nodes\n");
  const fs::path file = work_dir() / "trace.csv", nodes = work_dir() / "openb_node_list_all_node.csv";
  write(file, text.substr(0, split));
  std::error_code ec;
  if (split == std::string_view::npos) fs::remove(nodes, ec);
  else write(nodes, text.substr(split + 8));
  for (const std::string& kind : trace_kinds()) {
    try {
      check(kind, import_trace(kind + ":" + file.string()));
    } catch (const InputError&) {
    }
  }
  return 0;
}
