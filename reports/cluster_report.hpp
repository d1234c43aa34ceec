#pragma once
// Renderers of `trainsim cluster`: the policy comparison as a table, JSON (contract keys policies[].{name,
// jobs, utilization, mean_wait_s, p50_wait_s, p99_wait_s, mean_jct_s, makespan_s, preemptions, failures,
// gpu_hours_lost, goodput}) and CSV; the per-job CSV and the time series CSV for pandas.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "sim/cluster/cluster_study.hpp"

namespace trainsim {

using sim::cluster::ClusterRun;  // sim/cluster/cluster_study.hpp

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
