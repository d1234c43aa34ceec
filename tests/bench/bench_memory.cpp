// Memory evaluations per second: the inner loop of the layout search (one layout, most loaded stage).
#include <benchmark/benchmark.h>

#include <vector>

#include "models/memory/memory.hpp"
#include "models/scenario/scenario.hpp"

using namespace trainsim;
using Json = nlohmann::json;

namespace {

struct Case {
  Scenario scenario;
  std::vector<ParallelLayout> layouts;
};

// A model on 1024 A100s: layouts varying tp, pp and micro-batch (1F1B schedule).
Case make_case(const char* model, int gpus) {
  Case c{parse_scenario(Json{{"model", model},
                             {"training", {{"seq_len", 2048}, {"global_batch_size", 1536}, {"recompute", "selective"}}},
                             {"parallel", {{"tp", 8}, {"pp", 8}}},
                             {"hardware", {{"gpu", "a100-sxm-80gb"}, {"num_gpus", gpus}}}}),
         {}};
  for (int tp : {1, 2, 4, 8})
    for (int pp : {1, 2, 4, 8, 16, 32})
      for (int mbs : {1, 2, 4}) {
        ParallelLayout p = c.scenario.parallel;
        p.tp = tp;
        p.pp = pp;
        p.dp = gpus / (tp * pp);
        p.micro_batch_size = mbs;
        p.sequence_parallel = tp > 1;
        if (1536 % (mbs * p.dp)) continue;
        p.gradient_accumulation_steps = 1536 / (mbs * p.dp);
        c.layouts.push_back(p);
      }
  return c;
}

void BM_MemoryWorstStage(benchmark::State& state, const char* model) {
  Case c = make_case(model, 1024);
  MemoryModel mm(c.scenario.model, c.scenario.training, c.scenario.hardware);
  std::size_t i = 0;
  for (auto _ : state) {
    StageMemory w = mm.worst_stage(c.layouts[i]);
    benchmark::DoNotOptimize(w.total);
    if (++i == c.layouts.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["evals_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

BENCHMARK_CAPTURE(BM_MemoryWorstStage, gpt3_175b, "gpt3-175b");
BENCHMARK_CAPTURE(BM_MemoryWorstStage, mixtral_8x7b, "mixtral-8x7b");

}  // namespace
