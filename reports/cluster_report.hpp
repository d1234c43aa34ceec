#pragma once
// Renderers of `trainsim cluster`: the policy comparison as a table, JSON (contract keys policies[].{name,
// jobs, utilization, mean_wait_s, p50_wait_s, p99_wait_s, mean_jct_s, makespan_s, preemptions, failures,
// gpu_hours_lost, goodput}) and CSV; the per-job CSV and the time series CSV for pandas.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "models/spec.hpp"
#include "sim/cluster/cluster_sim.hpp"
#include "sim/cluster/seed_statistics.hpp"
#include "sim/cluster/cluster_spec.hpp"
#include "sim/cluster/model_jobs.hpp"
#include "sim/cluster/trace_import.hpp"

namespace trainsim {

struct ClusterRun {
  std::string cluster_source;   // "the trace's node list", "--nodes", "scenario.json"
  sim::cluster::ClusterSpec cluster;
  sim::cluster::ImportReport workload;
  double time_scale = 1;        // trace times multiplied by this
  bool fill = false;            // jobs never ended (--fill): the allocation at the last arrival is the result
  double fill_to = 0;           // the workload was repeated until it asked for this fraction of the GPUs (0: not)
  std::string synthetic_note;   // "100000 jobs over 365 d at load 0.80 (...)" when the workload is synthetic
  std::vector<sim::cluster::ModelJobInfo> model_jobs;  // jobs given as scenarios: their step within a leaf and across
  // What the trace itself recorded (Alibaba: scheduled minus creation time), for comparison; n = 0: none.
  int recorded_n = 0;
  double recorded_mean_wait_s = 0, recorded_p50_wait_s = 0, recorded_p99_wait_s = 0;
  std::vector<sim::cluster::PolicyResult> policies;
  // With a scheduling cycle, its cost or an admission cap: per policy, the mean wait of the same runs under a scheduler
  // that passes at every event at no cost (the rest of each wait is the scheduler's own latency); empty otherwise.
  std::vector<double> ideal_mean_wait_s;
  double admissions_per_day = 0;  // the cycle's admission capacity (admissions per queue a cycle); 0: not capped
  double arrivals_per_day = 0;    // the workload's jobs a day over its submit span
  std::vector<double> wall_s;   // per policy, seconds the simulation took (all its seeds)
  int seeds = 1;                // runs per policy; > 1: `policies` hold the means and `spread` their intervals
  std::vector<sim::cluster::SeedStatistics> spread;  // per policy (empty metrics with one seed)
  std::vector<AppliedDefault> defaults;
  // What a reader must know to trust the comparison: an oracle used, a policy running without what it needs.
  std::vector<std::string> notes;
};

nlohmann::json cluster_json(const ClusterRun& r);
// The policy comparison as table cells (terminal table, Markdown and HTML show the same).
const std::vector<std::string>& policy_table_header();
std::vector<std::vector<std::string>> policy_table_rows(const ClusterRun& r);
// "160 nodes, 1,280 GPUs (scenario.json): h100 160; 32 nodes per leaf switch, ..." and the workload, one line each.
std::string cluster_text(const ClusterRun& r);
std::string workload_text(const ClusterRun& r);
void print_cluster_table(std::ostream& os, const ClusterRun& r);
void print_cluster_csv(std::ostream& os, const ClusterRun& r);
// One row per job and policy: policy, id, submit_s, start_s, end_s, wait_s, jct_s, slowdown, gpus, preemptions,
// failures, gpu_hours_lost, leaves (empty cells for a job that never started or never ended).
void write_cluster_jobs_csv(std::ostream& os, const ClusterRun& r, const std::vector<sim::cluster::ClusterJob>& jobs);
// One row per sample and policy: policy, t_s, allocated_gpus, capacity_gpus, queued, running, fragmented_gpus.
void write_cluster_timeseries_csv(std::ostream& os, const ClusterRun& r);

}  // namespace trainsim
