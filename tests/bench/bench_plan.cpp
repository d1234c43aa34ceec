// Layout evaluations per second (memory + step time of one layout) and the full GPT-3 175B search.
#include <benchmark/benchmark.h>

#include <vector>

#include "models/layout/search.hpp"
#include "models/memory/memory.hpp"
#include "models/scenario/scenario.hpp"
#include "models/step/step.hpp"

using namespace trainsim;
using Json = nlohmann::json;

namespace {

// GPT-3 175B, seq 2048, global batch 1536 on 1024 A100s (Narayanan et al. SC'21 / Calculon's case).
Scenario gpt3_scenario() {
  return parse_scenario({{"model", "gpt3-175b"},
                         {"training", {{"seq_len", 2048}, {"global_batch_size", 1536}, {"train_tokens", "300B"}}},
                         {"hardware", {{"gpu", "a100-sxm-80gb"}, {"num_gpus", 1024}}}},
                        false);
}

// One full evaluation of a layout: worst-stage memory, per-layer work, step time, training cost.
void BM_LayoutEvaluation(benchmark::State& state) {
  Scenario s = gpt3_scenario();
  s.training.recompute = Recompute::Selective;
  std::vector<ParallelLayout> layouts;
  for (int tp : {2, 4, 8})
    for (int pp : {4, 8, 16})
      for (int mbs : {1, 2}) {
        ParallelLayout p;
        p.tp = tp;
        p.pp = pp;
        p.dp = 1024 / (tp * pp);
        p.micro_batch_size = mbs;
        p.sequence_parallel = true;
        p.gradient_accumulation_steps = 1536 / (mbs * p.dp);
        if (1536 % (mbs * p.dp)) continue;
        layouts.push_back(p);
      }
  MemoryModel mm(s.model, s.training, s.hardware);
  StepModel sm(s.model, s.training, s.hardware);
  std::size_t i = 0;
  for (auto _ : state) {
    const ParallelLayout& p = layouts[i];
    StageMemory mem = mm.worst_stage(p);
    StepEstimate st = sm.estimate(p);
    TrainingCost c = sm.training_cost(st, p);
    benchmark::DoNotOptimize(mem.total + c.cost);
    if (++i == layouts.size()) i = 0;
  }
  state.counters["evals_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_LayoutEvaluation);

// The whole search of `trainsim plan` for the GPT-3 case, on 1 and 2 threads.
void BM_FullSearchGpt3(benchmark::State& state) {
  Scenario s = gpt3_scenario();
  SearchSpace space = search_space_from(s);
  SearchOptions so;
  so.threads = static_cast<int>(state.range(0));
  long long searched = 0;
  for (auto _ : state) {
    SearchResult r = search_plans(s, {1024}, space, so);
    searched = r.searched;
    benchmark::DoNotOptimize(r.plans.data());
  }
  state.counters["layouts"] = static_cast<double>(searched);
  state.counters["layouts_per_s"] = benchmark::Counter(static_cast<double>(searched * state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FullSearchGpt3)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
