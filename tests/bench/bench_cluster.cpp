// The cluster simulator's speed (figures in the README): the Chronus trace (30,940 Philly-derived jobs,
// ../shared/traces) replayed under every policy on 160 nodes x 8 GPUs (its offered load is 1,106 GPUs busy
// on average over the submit span: 0.86 of 1,280), and a synthetic year of a 10,000-GPU cluster (100,000
// jobs fitted to the same trace, load 0.8, failures on). One SimGrid engine per process: runs follow each
// other in it. The GPU model only prices the GPU-hours (A100 list price and TDP). And a queue far deeper than
// the cluster: 10,000 jobs submitted at once on 4 nodes, under FIFO, EASY and Slurm's backfill (a pass's cost
// in the queue's depth).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <random>

#include "sim/cluster/cluster_sim.hpp"
#include "sim/cluster/synthetic_workload.hpp"
#include "sim/cluster/trace_import.hpp"

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
  int failures = 0;
  for (auto _ : state) {
    ClusterSimOptions o;
    o.policy = state.range(0) == 0 ? "fifo" : "backfill";
    failures = simulate_cluster(cluster, jobs, o).failures;
  }
  state.counters["failures"] = failures;
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

}  // namespace
