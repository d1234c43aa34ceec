// libFuzzer target: any bytes as a scenario file (or a sweep file). Bad input must end in an InputError (exit code 2
// in the CLI); a scenario that parses must give a memory estimate, step time and cost that pass the result check
// (no NaN, no infinity, nothing negative); a sweep that parses numbers its points within the bound. Anything else (a crash, a hang, another exception, a sanitizer
// report) is a finding.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cli/sweep/sweep_spec.hpp"
#include "models/core/errors.hpp"
#include "models/core/json_text.hpp"
#include "models/memory/memory.hpp"
#include "models/scenario/scenario.hpp"
#include "models/step/step.hpp"
#include "reports/estimate_report.hpp"
#include "reports/result_check.hpp"
#include "sim/cluster/cluster_spec.hpp"

using namespace trainsim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  nlohmann::json doc;
  try {
    doc = parse_json_text(text, "fuzz.json", "scenario");
  } catch (const InputError&) {
    return 0;
  }
  // A sweep file (`trainsim sweep`): parsed, or an InputError; its points numbered within the bound, each with an
  // input per axis and the arguments it runs with.
  if (doc.is_object() && doc.contains("axes")) {
    try {
      const cli::sweep::Spec spec = cli::sweep::parse_spec(doc, "fuzz/sweep.json");
      const std::size_t n = spec.count();
      std::size_t axes = 0;
      for (const auto& g : spec.axes) axes += g.size();
      if (n < 1 || n > 10'000'000) std::abort();
      for (std::size_t i : {std::size_t{0}, n / 2, n - 1}) {
        const cli::sweep::Point p = spec.point(i);
        if (p.index != i || p.inputs.size() != axes || (spec.command != "export" && p.args.size() < 2)) std::abort();
      }
    } catch (const InputError&) {
    }
  }
  // The cluster section (`trainsim cluster`): parsed on its own, its description passes the result check.
  if (doc.is_object() && doc.contains("cluster")) {
    try {
      check_result_numbers(sim::cluster::to_json(sim::cluster::parse_cluster(doc["cluster"], "/cluster", nullptr)), "cluster");
    } catch (const InputError&) {
    }
  }
  for (bool check_layout : {true, false}) {
    try {
      EstimateResult r;
      r.scenario = parse_scenario(doc, check_layout);
      if (!check_layout) continue;  // the search's starting point: parsed, nothing more to run
      MemoryModel mm(r.scenario.model, r.scenario.training, r.scenario.hardware);
      r.memory = mm.estimate(r.scenario.parallel);
      StepModel sm(r.scenario.model, r.scenario.training, r.scenario.hardware);
      r.step = sm.estimate(r.scenario.parallel);
      r.cost = sm.training_cost(r.step, r.scenario.parallel);
      if (r.scenario.training.is_rl()) r.rlhf = estimate_rlhf_step(r.scenario);
      check_result_numbers(estimate_json(r), "estimate");
    } catch (const InputError&) {
    }
  }
  return 0;
}
