// One training iteration of GPT-3 175B (tp 8, pp 8 x vpp 3, Megatron-LM's layout of Korthikanti et al. 2022,
// sequence 2048, 1536 sequences a step) replayed in `trainsim simulate`'s SimGrid model of a non-blocking
// fat-tree, at 64 x dp GPUs. SimGrid allows one engine per process, so each run of this binary times one size:
//   trainsim_sim_bench --benchmark_filter='SimulateGpt3/4096'
#include <benchmark/benchmark.h>

#include "models/scenario/scenario.hpp"
#include "models/step/step.hpp"
#include "sim/iteration/iteration_sim.hpp"

namespace {

using namespace trainsim;

void SimulateGpt3(benchmark::State& state) {
  const int gpus = static_cast<int>(state.range(0));
  const Scenario s = parse_scenario({{"model", "gpt3-175b"},
                                     {"training", {{"seq_len", 2048}, {"global_batch_size", 1536}, {"recompute", "selective"},
                                                   {"distributed_optimizer", true}, {"framework", "megatron-core"}}},
                                     {"parallel", {{"tp", 8}, {"pp", 8}, {"vpp", 3}, {"dp", gpus / 64}, {"sequence_parallel", true},
                                                   {"micro_batch_size", 1}}},
                                     {"hardware", {{"gpu", "a100-sxm-80gb"}, {"gpus_per_node", 8}, {"num_nodes", gpus / 8}}}});
  const StepModel model(s.model, s.training, s.hardware);
  sim::SimOptions options;
  options.iterations = 1;
  double flows = 0;
  for (auto _ : state) {
    const sim::SimulationResult r = sim::simulate_iterations(s, model, options);
    flows = static_cast<double>(r.flows);
    benchmark::DoNotOptimize(r.step_time_s);
  }
  state.counters["flows"] = flows;
  state.counters["flows_per_s"] = benchmark::Counter(flows, benchmark::Counter::kIsRate);
}
BENCHMARK(SimulateGpt3)->Arg(256)->Arg(1024)->Arg(4096)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

}  // namespace
