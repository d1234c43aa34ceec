// Alibaba GPU cluster trace v2023 ("openb", the FGD paper, Weng et al., USENIX ATC'23), from
// github.com/alibaba/clusterdata @ 7a6c496e : cluster-trace-gpu-v2023/csv/ (research use; cite the paper).
// Schema and measured facts: ../shared/traces/README.md. Pods: name,cpu_milli,memory_mib,num_gpu,gpu_milli,
// gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time (seconds from the trace start); nodes:
// sn,cpu_milli,memory_mib,gpu,model. Columns are found by name: the gpuspec33 and multigpu50 variants share them.
#include <algorithm>
#include <filesystem>
#include <map>
#include <tuple>

#include "models/core/errors.hpp"
#include "sim/cluster/traces/trace_import.hpp"

namespace trainsim::sim::cluster {

using namespace trace_detail;

namespace {

constexpr const char* kPodList = "openb_pod_list_default.csv";
constexpr const char* kNodeList = "openb_node_list_all_node.csv";
constexpr const char* kPodColumns = "name,num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time[,gpu_spec,qos]";
constexpr long long kMaxGpusPerNode = 64;  // what a cluster's node pool accepts (cluster_spec.cpp)
constexpr int kMaxNodesPerPool = 1'000'000;
constexpr long long kMaxHostMilli = 1'000'000'000;  // cpu_milli and memory_mib: a million cores, a petabyte

// A pod's GPU request into `job` (a pod gets all its GPUs on one node at once: a gang); the skip reason, or null.
// `cpu_only`: keep pods that ask no GPU (they hold CPU and memory on GPU nodes, as in FGD's experiments).
const char* read_request(const std::string& num_gpu, const std::string& gpu_milli, bool cpu_only, ClusterJob* job) {
  const auto gpus = parse_integer(num_gpu, 0, kMaxGpus);
  if (!gpus) return "num_gpu not a whole number from 0 to 1,000,000";
  if (*gpus == 0) {
    if (!cpu_only) return "no GPU requested (CPU-only pod)";
    job->gpus = 0;
    job->gpu_milli = 0;
    job->gang = true;
    return nullptr;
  }
  // gpu_milli is per GPU: below 1000 on a 1-GPU pod, a share of one GPU; a multi-GPU pod takes whole GPUs.
  const auto m = parse_integer(gpu_milli, 1, 1000);
  if (!m) return "gpu_milli not a whole number from 1 to 1000";
  if (*gpus > 1 && *m != 1000) return "multi-GPU pod with gpu_milli other than 1000 (a share of several GPUs)";
  job->gpus = static_cast<int>(*gpus);
  job->gpu_milli = static_cast<int>(*m);
  job->gang = true;
  return nullptr;
}

// CPU (cpu_milli) and memory (memory_mib) of a pod or a node, from optional columns (-1 when absent, leaving the
// values as they are); the skip reason, or null.
template <typename Int>
const char* read_host(const std::vector<std::string>& f, int cpu, int memory, Int* cpu_milli, Int* memory_mib) {
  for (const auto& [col, out, why] : {std::tuple{cpu, cpu_milli, "cpu_milli not a whole number from 0 to 1e9"},
                                      std::tuple{memory, memory_mib, "memory_mib not a whole number from 0 to 1e9"}}) {
    if (col < 0) continue;
    const auto v = parse_integer(f[static_cast<std::size_t>(col)], 0, kMaxHostMilli);
    if (!v) return why;
    *out = *v;
  }
  return nullptr;
}

// Every pod in file order, a second apart (the fill experiment needs only the order and the requests, so the
// times, the phase and the resampled lists' missing columns do not matter): CPU-only and never-scheduled pods
// included, as FGD's experiments replay them.
void read_pods_in_order(LineReader& in, const CsvColumns& h, Trace& t) {
  const std::string known = "name,num_gpu,gpu_milli[,cpu_milli,memory_mib,gpu_spec,qos]";
  const int name = require_column(h, "name", in, known), num_gpu = require_column(h, "num_gpu", in, known),
            milli = require_column(h, "gpu_milli", in, known);
  const int spec = h.index("gpu_spec"), qos = h.index("qos"), cpu = h.index("cpu_milli"), memory = h.index("memory_mib");
  ImportReport& r = t.report;
  for_each_csv_row(in, h.names.size(), r, [&](const std::vector<std::string>& f) {
    ClusterJob j;
    if (const char* why = read_request(f[num_gpu], f[milli], /*cpu_only=*/true, &j)) return r.skip(why);
    if (const char* why = read_host(f, cpu, memory, &j.cpu_milli, &j.memory_mib)) return r.skip(why);
    j.id = trim(f[name]);
    j.submit_s = static_cast<double>(t.jobs.size());
    j.duration_s = 1;
    if (qos >= 0) j.queue = trim(f[qos]);
    if (spec >= 0) j.gpu_types = split_gpu_types(f[spec]);
    t.jobs.push_back(std::move(j));
  });
}

void read_pods(const std::string& file, bool order_only, Trace& t) {
  LineReader in(file, "Alibaba 2023 pod list (openb_pod_list_*.csv)");
  const CsvColumns h = read_csv_header(in, kPodColumns);
  // The resampled lists (openb_pod_list_multigpu50.csv and the like) keep only the resources: nothing to replay,
  // but enough for the fill experiment, which needs only the pods' order and requests.
  const bool timeless = h.index("creation_time") < 0 && h.index("name") >= 0 && h.index("num_gpu") >= 0;
  if (order_only) return read_pods_in_order(in, h, t);
  if (timeless)
    throw InputError(file + ":" + std::to_string(in.line_number()), "a pod list without creation_time, deletion_time, scheduled_time",
                     "a pod list with times: " + std::string(kPodColumns),
                     "the resampled openb_pod_list_*.csv files carry no times; use openb_pod_list_default.csv or a gpuspec one, or --fill");
  const int name = require_column(h, "name", in, kPodColumns), num_gpu = require_column(h, "num_gpu", in, kPodColumns),
            milli = require_column(h, "gpu_milli", in, kPodColumns), created = require_column(h, "creation_time", in, kPodColumns),
            deleted = require_column(h, "deletion_time", in, kPodColumns), scheduled = require_column(h, "scheduled_time", in, kPodColumns);
  const int spec = h.index("gpu_spec"), qos = h.index("qos");  // optional: empty (any GPU type, the default queue)
  const int cpu = h.index("cpu_milli"), memory = h.index("memory_mib");
  ImportReport& r = t.report;
  for_each_csv_row(in, h.names.size(), r, [&](const std::vector<std::string>& f) {
    ClusterJob j;
    if (const char* why = read_request(f[num_gpu], f[milli], /*cpu_only=*/false, &j)) return r.skip(why);
    if (const char* why = read_host(f, cpu, memory, &j.cpu_milli, &j.memory_mib)) return r.skip(why);
    // Pending pods were deleted before any node took them (a median 94 s after creation): requests given up.
    if (trim(f[scheduled]).empty()) return r.skip("never scheduled in the trace (no scheduled_time)");
    const auto create = parse_seconds(f[created]), start = parse_seconds(f[scheduled]), end = parse_seconds(f[deleted]);
    if (!create) return r.skip("creation_time not a time from 0 to 1e12 s");
    if (!start) return r.skip("scheduled_time not a time from 0 to 1e12 s");
    if (!end) return r.skip("deletion_time not a time from 0 to 1e12 s");
    if (*start < *create) return r.skip("scheduled_time before creation_time");
    if (*end < *start) return r.skip("deletion_time before scheduled_time");
    j.id = trim(f[name]);
    j.submit_s = *create;
    if (qos >= 0) j.queue = trim(f[qos]);
    if (spec >= 0) j.gpu_types = split_gpu_types(f[spec]);
    j.duration_s = *end - *start;  // as recorded; the 32 pods deleted at the trace's last instant (12,902,960 s) are cut there
    j.recorded_wait_s = *start - *create;
    t.jobs.push_back(std::move(j));
  });
}

// GPU nodes by (model, GPUs per node): one model comes in several sizes (T4 x2 and x4, V100M16 x1, x4 and x8).
void read_nodes(const std::string& file, Trace& t) {
  LineReader in(file, "Alibaba 2023 node list (openb_node_list_*.csv)");
  const std::string known = "sn,cpu_milli,memory_mib,gpu,model";
  const CsvColumns h = read_csv_header(in, known);
  const int gpu = require_column(h, "gpu", in, known), model = require_column(h, "model", in, known);
  const int cpu = h.index("cpu_milli"), memory = h.index("memory_mib");
  // Ordered: by model, then size, then host shape (CPU, memory).
  std::map<std::tuple<std::string, long long, long long, long long>, int> pools;
  // Node rows are not pods: they do not count in report.rows, and their skips are named "node list: ...".
  ImportReport nodes;
  for_each_csv_row(in, h.names.size(), nodes, [&](const std::vector<std::string>& f) {
    const auto g = parse_integer(f[gpu], 0, kMaxGpusPerNode);
    if (!g) return nodes.skip("gpu not a whole number from 0 to 64");
    if (*g == 0) return nodes.skip("CPU-only node");
    std::string name = trim(f[model]);
    if (name.empty()) return nodes.skip("GPU node without a model");
    long long cpu_milli = 0, memory_mib = 0;
    if (const char* why = read_host(f, cpu, memory, &cpu_milli, &memory_mib)) return nodes.skip(why);
    int& n = pools[{std::move(name), *g, cpu_milli, memory_mib}];
    if (n == kMaxNodesPerPool) return nodes.skip("more than 1,000,000 nodes of one model and size");
    ++n;
  });
  for (const auto& [why, n] : nodes.skipped) t.report.skipped.emplace_back("node list: " + why, n);  // never a pod's reason
  for (const auto& [key, n] : pools) t.nodes.push_back({std::get<0>(key), static_cast<int>(std::get<1>(key)), n, std::get<2>(key), std::get<3>(key)});
}

}  // namespace

Trace import_alibaba_2023(const std::string& path, bool order_only) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool dir = fs::is_directory(path, ec);
  const fs::path pods = dir ? fs::path(path) / kPodList : fs::path(path);
  // The node list lies beside the pod list; a pod list given alone may come without it.
  const fs::path nodes = (dir ? fs::path(path) : fs::path(path).parent_path()) / kNodeList;
  Trace t;
  read_pods(pods.string(), order_only, t);
  if (dir || fs::is_regular_file(nodes, ec)) read_nodes(nodes.string(), t);
  finish(t);
  return t;
}

}  // namespace trainsim::sim::cluster
