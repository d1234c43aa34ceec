// The cluster simulator's speed (figures in the README): the Chronus trace (30,940 Philly-derived jobs,
// ../shared/traces) replayed under every policy on 160 nodes x 8 GPUs (its offered load is 1,106 GPUs busy
// on average over the submit span: 0.86 of 1,280), and a synthetic year of a 10,000-GPU cluster (100,000
// jobs fitted to the same trace, offering 0.8 of the GPUs within the year, failures on: it queues). One SimGrid engine per process: runs follow each
// other in it. The GPU model only prices the GPU-hours (A100 list price and TDP). And a queue far deeper than
// the cluster: 10,000 jobs submitted at once on 4 nodes, under FIFO, EASY and Slurm's backfill (a pass's cost
// in the queue's depth). And FGD's packing experiment on the Alibaba 2023 trace.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <random>

#include "sim/cluster/cluster_sim.hpp"
#include "sim/cluster/traces/trace_import.hpp"
#include "sim/cluster/workload/fill_workload.hpp"
#include "sim/cluster/workload/synthetic_workload.hpp"

namespace {

using namespace trainsim::sim::cluster;
using Json = nlohmann::json;

const std::string kChronus = std::string(TRAINSIM_SHARED_DIR) + "/traces/philly-derived-chronus/trace_job_Philly_MIX1.csv";

const Trace* chronus() {
  static const Trace* trace = std::filesystem::exists(kChronus) ? new Trace(import_trace("philly-chronus:" + kChronus)) : nullptr;
  return trace;
}

ClusterSpec nodes_of_8(int nodes, const std::string& failures) {
  Json c = {{"pools", {{{"gpu", "a100-sxm-80gb"}, {"gpus_per_node", 8}, {"nodes", nodes}}}}, {"failures", failures}};
  return parse_cluster(c, "/cluster", nullptr);
}

void ChronusAllPolicies(benchmark::State& state) {
  if (!chronus()) {
    state.SkipWithError("../shared/traces/philly-derived-chronus not found");
    return;
  }
  const ClusterSpec cluster = nodes_of_8(160, "none");
  const std::vector<std::string> all = {"fifo", "sjf", "sjf-estimate", "priority", "easy", "backfill", "multifactor", "las", "drf", "quota", "proportion", "backfill+topology", "fifo+spread"};
  for (auto _ : state)
    for (const std::string& p : all) {
      ClusterSimOptions o;
      o.policy = p;
      benchmark::DoNotOptimize(simulate_cluster(cluster, chronus()->jobs, o).makespan_s);
    }
  state.counters["policies"] = static_cast<double>(all.size());
  state.counters["jobs"] = static_cast<double>(chronus()->jobs.size());
}
BENCHMARK(ChronusAllPolicies)->Unit(benchmark::kSecond)->Iterations(1);

void SyntheticYear10kGpus(benchmark::State& state) {
  if (!chronus()) {
    state.SkipWithError("../shared/traces/philly-derived-chronus not found");
    return;
  }
  const ClusterSpec cluster = nodes_of_8(1250, "default");
  SyntheticSpec spec;
  spec.jobs = 100000;
  spec.span_s = 365 * 86400.0;
  spec.load = 0.8;
  spec.cluster_gpus = cluster.total_gpus();
  spec.max_gpus = cluster.total_gpus();
  const std::vector<ClusterJob> jobs = synthesize_workload(fit_workload(chronus()->jobs, "chronus"), spec, nullptr);
  PolicyResult r;
  for (auto _ : state) {
    ClusterSimOptions o;
    o.policy = state.range(0) == 0 ? "fifo" : "backfill";
    o.span_s = spec.span_s;
    r = simulate_cluster(cluster, jobs, o);
  }
  // A year that queues: the load delivered over the year, and how long jobs waited for it.
  state.counters["failures"] = r.failures;
  state.counters["delivered"] = r.utilization_in_span;
  state.counters["mean_wait_h"] = r.mean_wait_s / 3600;
  state.counters["p99_wait_h"] = r.p99_wait_s / 3600;
}
BENCHMARK(SyntheticYear10kGpus)->Arg(0)->Arg(1)->Unit(benchmark::kSecond)->Iterations(1);

// 10,000 jobs at time 0: 1 to 16 GPUs, 1 min to 2 h, walltimes twice the run (the README's figures).
void JobsAtOnce(benchmark::State& state) {
  const ClusterSpec cluster = nodes_of_8(4, "none");
  std::mt19937 rng(1);
  const int sizes[] = {1, 2, 4, 8, 16};
  std::vector<ClusterJob> jobs(10000);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    jobs[i].id = "j" + std::to_string(i);
    jobs[i].gpus = sizes[std::uniform_int_distribution<int>(0, 4)(rng)];
    jobs[i].duration_s = std::uniform_int_distribution<int>(60, 7200)(rng);
    jobs[i].walltime_s = 2 * jobs[i].duration_s;
  }
  const char* policy[] = {"fifo", "easy", "backfill"};
  for (auto _ : state) {
    ClusterSimOptions o;
    o.policy = policy[state.range(0)];
    benchmark::DoNotOptimize(simulate_cluster(cluster, jobs, o).makespan_s);
  }
  state.SetLabel(policy[state.range(0)]);
}
BENCHMARK(JobsAtOnce)->DenseRange(0, 2)->Unit(benchmark::kSecond)->Iterations(1);

// FGD's packing experiment on the Alibaba 2023 openb default list (8,152 pods, inflated to 130% of its 6,212 GPUs,
// never ending) under bin-packing and under FGD, whose fragmentation measure is memoised per node state.
void OpenbFill(benchmark::State& state) {
  const std::string dir = std::string(TRAINSIM_SHARED_DIR) + "/traces/alibaba-gpu-v2023-openb";
  if (!std::filesystem::exists(dir)) {
    state.SkipWithError("../shared/traces/alibaba-gpu-v2023-openb not found");
    return;
  }
  const Trace t = import_trace("alibaba-2023:" + dir, true);
  ClusterSpec cluster = cluster_from_trace_nodes(t.nodes, ClusterSpec{});
  cluster.gpu_sharing = true;
  const std::vector<ClusterJob> pods = fill_workload(t.jobs, 1.3, cluster.total_gpus(), true, 1e12, 1);
  const char* placement[] = {"priority+binpack", "priority+fgd"};
  double allocated = 0;
  for (auto _ : state) {
    ClusterSimOptions o;
    o.policy = placement[state.range(0)];
    o.horizon_s = pods.back().submit_s + 1;
    allocated = simulate_cluster(cluster, pods, o).allocated_at_end;
  }
  state.SetLabel(placement[state.range(0)]);
  state.counters["allocated"] = allocated;
  state.counters["pods"] = static_cast<double>(pods.size());
}
BENCHMARK(OpenbFill)->DenseRange(0, 1)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
