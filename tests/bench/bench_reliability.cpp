// The speed check: 10,000 Monte-Carlo runs of a 54-day, 16,384-GPU job (the Llama 3 shape:
// 2,048 nodes x 8 H100, the paper's failure breakdown, ~419 failures a run), on 1 and 2 threads.
#include <benchmark/benchmark.h>

#include "models/failure_model.hpp"
#include "models/reliability.hpp"
#include "sim/job_montecarlo.hpp"

using namespace trainsim;
using namespace trainsim::sim;

namespace {

JobSimConfig llama3_job() {
  JobSimConfig c;
  c.nodes = 2048;
  c.gpus_per_node = 8;
  c.window_s = 54 * 86400.0;
  c.blocking_s = 60;
  c.interval_s = daly_interval_s(60, failure_preset("llama3-405b").job_mtbf_s(2048, 8));
  // The itemised recovery with 21 spares and lognormal repairs, as the example scenario has it.
  c.detection_s = 60;
  c.drain_s = 30;
  c.reschedule_s = 120;
  c.restart_s = 180;
  c.reload_s = 10;
  c.warmup_s = 60;
  c.spare_nodes = 21;
  c.repair = std::shared_ptr<const TimeDistribution>(make_distribution("lognormal", 24 * 3600.0, 1.0, "repair"));
  return c;
}

void BM_MonteCarloLlama3_54d_16kGpus(benchmark::State& state) {
  const FailureModel model = failure_preset("llama3-405b");
  const JobSimConfig config = llama3_job();
  MonteCarloOptions o;
  o.runs = 10000;
  o.threads = static_cast<int>(state.range(0));
  double interruptions = 0, ettr = 0;
  for (auto _ : state) {
    const JobStatistics s = summarize_runs(run_job_montecarlo(config, model, o), 16384);
    interruptions = s.interruptions.mean;
    ettr = s.ettr.mean;  // used by the counters below (no DoNotOptimize on a double: GCC's "+r" constraint mangles it)
  }
  state.counters["interruptions"] = interruptions;
  state.counters["ettr_percent"] = 100 * ettr;
  state.counters["runs_per_s"] = benchmark::Counter(static_cast<double>(o.runs) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MonteCarloLlama3_54d_16kGpus)->Arg(1)->Arg(2)->Unit(benchmark::kSecond)->UseRealTime();

// One run of the same job: the cost per simulated failure.
void BM_OneRunLlama3(benchmark::State& state) {
  const FailureModel model = failure_preset("llama3-405b");
  JobSimulator sim(llama3_job(), model);
  std::uint64_t seed = 1;
  for (auto _ : state) benchmark::DoNotOptimize(sim.run(run_seed(7, seed++)).wall_s);
}
BENCHMARK(BM_OneRunLlama3)->Unit(benchmark::kMicrosecond);

}  // namespace
