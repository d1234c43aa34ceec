// The speed checks: 10,000 Monte-Carlo runs of a 54-day, 16,384-GPU job (the Llama 3 shape:
// 2,048 nodes x 8 H100, the paper's failure breakdown, ~419 failures a run), on 1 and 2 threads; and the
// whole study `trainsim reliability` runs on the example scenario (the run as configured, the
// checkpoint-interval sweep, the what-ifs and the sensitivities, 10,000 runs each), with its parts.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>

#include "models/reliability/failure_model.hpp"
#include "models/reliability/reliability.hpp"
#include "models/scenario/scenario.hpp"
#include "sim/reliability/job_montecarlo.hpp"
#include "sim/reliability/job_setup.hpp"
#include "sim/reliability/reliability_study.hpp"
#include "sim/reliability/shared_failures.hpp"

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

// The parts of a study's run: drawing its ~420 failures once (the tape), the spare pool over them, one
// recovery timeline, and one variant's fold over that timeline.
void BM_StudyPartsLlama3(benchmark::State& state) {
  const FailureModel model = failure_preset("llama3-405b");
  const JobSimConfig config = llama3_job();
  FailureTape tape(model, config.nodes, config.gpus_per_node, config.repair);
  PoolReplay pool(&tape, 1.0, config.spare_nodes);
  Timeline timeline(&pool, TimelineKey::of(config, 1.0));
  const int part = static_cast<int>(state.range(0));
  std::uint64_t seed = 1;
  auto prepare = [&] {
    tape.reset(run_seed(7, seed++));
    pool.reset();
    timeline.reset();
    return fold(config, timeline);  // draws the tape and builds the timeline as far as the run goes
  };
  for (auto _ : state) {
    if (part == 0) {  // tape + timeline + fold
      benchmark::DoNotOptimize(prepare().wall_s);
    } else if (part == 1) {  // pool replay + timeline + fold (tape drawn)
      state.PauseTiming();
      prepare();
      state.ResumeTiming();
      pool.reset();
      timeline.reset();
      benchmark::DoNotOptimize(fold(config, timeline).wall_s);
    } else {  // fold only
      state.PauseTiming();
      prepare();
      state.ResumeTiming();
      benchmark::DoNotOptimize(fold(config, timeline).wall_s);
    }
  }
  state.SetLabel(part == 0 ? "tape+pool+timeline+fold" : part == 1 ? "pool+timeline+fold" : "fold");
}
BENCHMARK(BM_StudyPartsLlama3)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

// The example scenario as `trainsim reliability` builds it.
ReliabilityJob example_job() {
  const std::filesystem::path here = std::filesystem::path(__FILE__).parent_path();
  std::ifstream in(here / "../../scenarios/examples/llama3-405b-reliability-16k-h100.json");
  const nlohmann::json doc = nlohmann::json::parse(in);
  const Scenario s = parse_scenario(doc, true);
  return build_reliability_job(s, parse_reliability_settings(doc, s.hardware.gpus_per_node));
}

// The whole study of `trainsim reliability scenarios/examples/llama3-405b-reliability-16k-h100.json --runs 10000`:
// the run as configured, the interval sweep (15 rows), the what-ifs (6 rows) and the sensitivities (12 rows),
// every variant 10,000 runs on the same seeds. Arg: threads.
void BM_ReliabilityStudyLlama3Example(benchmark::State& state) {
  const ReliabilityJob job = example_job();
  MonteCarloOptions mc;
  mc.runs = 10000;
  mc.threads = static_cast<int>(state.range(0));
  const StudyOptions options;  // what-ifs and sensitivities, no frontier
  double ettr = 0, best = 0;
  for (auto _ : state) {
    const Study study = run_study(job, options, mc);
    ettr = study.base.stats.ettr.mean;
    best = study.sweep.best_interval_s();
  }
  state.counters["ettr_percent"] = 100 * ettr;
  state.counters["best_interval_s"] = best;
}
BENCHMARK(BM_ReliabilityStudyLlama3Example)->Arg(1)->Arg(2)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

}  // namespace
