#pragma once
// One job of a shared cluster's workload, as the cluster simulator sees it: when it arrives, whose it is,
// what it asks for (GPUs, a GPU type, a gang), how long it runs, and how it checkpoints. Trace importers
// (trace_import.hpp) and the synthetic generator produce these; nothing here knows a scheduling policy.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace trainsim::sim::cluster {

struct ClusterJob {
  std::string id;              // the trace's own id (pod name, job id)
  double submit_s = 0;         // arrival, seconds from the trace's start
  std::string user;            // "" when the trace has none
  std::string queue;           // "" = the default queue
  std::string account;         // Slurm account ("": its user's account in cluster.accounts, if any)
  int priority = 0;            // larger runs first under `priority`
  int gpus = 1;                // whole GPUs; 1 for a fractional request (see gpu_milli)
  int gpu_milli = 1000;        // thousandths of one GPU when gpus == 1 and the job shares a GPU (Alibaba 2023)
  std::vector<std::string> gpu_types;  // allowed GPU models (empty: any)
  // Host resources on its node(s) (Kubernetes requests; Alibaba 2023's cpu_milli and memory_mib): thousandths of a
  // CPU core and MiB; 0: none asked. A job asking 0 GPUs (a CPU-only pod) holds only these.
  std::int64_t cpu_milli = 0, memory_mib = 0;
  bool gang = true;            // all GPUs at once or none
  // An elastic job runs on elastic_min + k·elastic_step GPUs up to elastic_max (0: not elastic), the request
  // `gpus` among them: it starts smaller when the request does not fit, continues on fewer GPUs after a node
  // fails, and grows to elastic_max while nothing waits (as Volcano's minAvailable jobs and TorchElastic do).
  int elastic_min = 0, elastic_max = 0;
  int elastic_step = 1;               // GPUs added or removed together (a data-parallel replica)
  // Throughput relative to the request on elastic_min + k·elastic_step GPUs (the step model's, for a job
  // given as a scenario); empty: in proportion to the GPUs (a trace's job, whose scaling is unknown).
  std::vector<double> elastic_speed;
  double walltime_s = 0;       // requested limit (0: none given); backfill's estimate when known
  double checkpoint_interval_s = 0;  // work between checkpoints (0: the cluster's default)
  // Seconds the job runs on its requested GPUs at full speed (measured: a trace's end minus start).
  double duration_s = 0;
  // What the trace recorded, for comparing a replay with the real cluster (negative: not recorded).
  double recorded_wait_s = -1;
  // Run time over more than one leaf switch over run time under one (model_jobs.hpp; 1 for a trace's jobs,
  // whose recorded durations say nothing of placement).
  double cross_leaf_slowdown = 1;

  bool elastic() const { return elastic_min > 0 && elastic_max >= gpus && elastic_min <= gpus && elastic_max > elastic_min && gpu_milli >= 1000; }
  // The largest size an elastic job may run on with at most `gpus_free` GPUs (0: below elastic_min).
  int elastic_size_at_most(int gpus_free) const;
  // Throughput on `g` GPUs relative to the request (1 at g == gpus).
  double speed_on(int g) const;
};

// Whether the job takes a share of one GPU (a fractional request on a cluster with GPU sharing), and the GPUs it
// holds: that share, else its whole GPUs. One definition for placement, policies and accounting.
inline bool shares_gpu(const ClusterJob& j, bool sharing) { return sharing && j.gpus == 1 && j.gpu_milli < 1000; }
inline double gpus_held(const ClusterJob& j, bool sharing) { return shares_gpu(j, sharing) ? j.gpu_milli / 1000.0 : j.gpus; }

// Rows an importer read and skipped, and why ("no GPU requested": 1,088, ...), in first-seen order.
struct ImportReport {
  std::string source;          // "alibaba-2023:DIR", ...
  std::uint64_t rows = 0;      // data rows read (header excluded)
  std::uint64_t jobs = 0;      // jobs produced
  std::vector<std::pair<std::string, std::uint64_t>> skipped;
  std::uint64_t skipped_total() const;
  void skip(const std::string& reason);  // counts one row under `reason`
};

// A node list that came with a trace (Alibaba 2023's openb_node_list_*.csv): one entry per GPU model and node shape.
struct TraceNodePool {
  std::string gpu_model;  // e.g. "G2", "T4"
  int gpus_per_node = 0;
  int nodes = 0;
  std::int64_t cpu_milli = 0, memory_mib = 0;  // per node (0: not given)
};

}  // namespace trainsim::sim::cluster
