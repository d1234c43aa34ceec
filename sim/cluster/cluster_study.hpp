#pragma once
// One `trainsim cluster` study: a workload shaped as asked (synthetic at a load, time-scaled, the FGD fill
// experiment, rigid), replayed under each policy with one or several seeds, with what a reader must know to trust
// the comparison (an oracle used, a policy without its settings, the control plane's admission capacity). The CLI
// reads flags and files into a ClusterRun and a workload; the renderers (reports/cluster_report.hpp) print it.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/scenario/spec.hpp"
#include "sim/cluster/cluster_sim.hpp"
#include "sim/cluster/cluster_spec.hpp"
#include "sim/cluster/policies/scheduler_policy.hpp"
#include "sim/cluster/seed_statistics.hpp"
#include "sim/cluster/traces/trace_import.hpp"
#include "sim/cluster/workload/model_jobs.hpp"
#include "sim/cluster/workload/synthetic_workload.hpp"

namespace trainsim::sim::cluster {

struct ClusterRun {
  std::string cluster_source;   // "the trace's node list", "--nodes", "scenario.json"
  ClusterSpec cluster;
  ImportReport workload;
  double time_scale = 1;        // trace times multiplied by this
  bool fill = false;            // jobs never ended (--fill): the allocation at the last arrival is the result
  double fill_to = 0;           // the workload was repeated until it asked for this fraction of the GPUs (0: not)
  std::string synthetic_note;   // "100000 jobs over 365 d at load 0.80 (...)" when the workload is synthetic
  std::vector<ModelJobInfo> model_jobs;  // jobs given as scenarios: their step within a leaf and across
  // What the trace itself recorded (Alibaba: scheduled minus creation time), for comparison; n = 0: none.
  int recorded_n = 0;
  double recorded_mean_wait_s = 0, recorded_p50_wait_s = 0, recorded_p99_wait_s = 0;
  std::vector<PolicyResult> policies;
  // With a scheduling cycle, its cost or an admission cap: per policy, the mean wait of the same runs under a scheduler
  // that passes at every event at no cost (the rest of each wait is the scheduler's own latency); empty otherwise.
  std::vector<double> ideal_mean_wait_s;
  double admissions_per_day = 0;  // the cycle's admission capacity (admissions per queue a cycle); 0: not capped
  double arrivals_per_day = 0;    // the workload's jobs a day over its submit span
  std::vector<double> wall_s;   // per policy, seconds the simulation took (all its seeds)
  int seeds = 1;                // runs per policy; > 1: `policies` hold the means and `spread` their intervals
  std::vector<SeedStatistics> spread;  // per policy (empty metrics with one seed)
  std::vector<AppliedDefault> defaults;
  // What a reader must know to trust the comparison: an oracle used, a policy running without what it needs.
  std::vector<std::string> notes;
};

// How the imported jobs become the replayed workload, in this order: drawn anew at a scale (synthetic), times
// multiplied (time_scale), inflated and never ending (fill), made rigid (no elastic range).
struct WorkloadShaping {
  bool synthetic = false;
  SyntheticSpec synthetic_spec;      // with synthetic: jobs, span, load, seed, model, block (cluster sizes filled in here)
  std::string synthetic_model_name;  // "blocks" or "poisson", as the note names it
  std::string trace_name;            // the trace the synthetic workload is fitted to ("KIND:PATH")
  double time_scale = 1;
  bool fill = false;
  double fill_to = 0;                // with fill: inflate to this fraction of the GPUs (0: the trace's pods only)
  std::string fill_to_path = "fill_to";  // where fill_to was given, for the error when it would draw too many pods
  std::uint64_t seed = 1;            // the fill's first draw
  bool rigid = false;
};

// The workload as replayed: its jobs (the first seed's draw under fill), the fill experiment's pods to redraw from
// for later seeds, and the span a synthetic workload's load is offered in (0: not synthetic).
struct ShapedWorkload {
  std::vector<ClusterJob> jobs;
  std::vector<ClusterJob> fill_pods;
  double synthetic_span_s = 0;
};

constexpr double kFillDurationS = 1e12;  // "never ends" under fill: far past any trace's last arrival

// Shapes `trace.jobs` (consumed) as asked and records the shape in `run` (workload report, synthetic note, fill,
// time scale, the waits the trace recorded).
ShapedWorkload shape_workload(Trace trace, const WorkloadShaping& shaping, ClusterRun& run);

struct StudyOptions {
  double horizon_s = 0, sample_interval_s = 0;
  std::uint64_t seed = 1;
  int seeds = 1;
};

// Progress of each policy's runs, for a bar per policy.
struct StudyProgress {
  std::function<void(const std::string& policy)> start;
  std::function<void(double fraction)> update;
  std::function<void()> finish;
};

// Each policy over the workload with every seed; fills run.policies, spread, wall_s, ideal waits and the notes.
void run_study(ClusterRun& run, const std::vector<PolicyChoice>& choices, const ShapedWorkload& workload, const StudyOptions& options,
               const StudyProgress& progress);

}  // namespace trainsim::sim::cluster
