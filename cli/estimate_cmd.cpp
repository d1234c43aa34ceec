// `trainsim estimate [SCENARIO]`: memory per GPU and per pipeline stage for one fixed layout.
#include <iostream>

#include "command.hpp"
#include "models/memory.hpp"
#include "models/memory_advice.hpp"
#include "models/step.hpp"
#include "reports/estimate_report.hpp"
#include "scenario_input.hpp"

namespace trainsim::cli {
namespace {

int run_estimate(const ScenarioInput& input) {
  EstimateResult r;
  r.scenario = load_scenario(input, &r.scenario_label);
  MemoryModel mm(r.scenario.model, r.scenario.training, r.scenario.hardware);
  r.memory = mm.estimate(r.scenario.parallel);
  r.suggestions = fit_suggestions(r.scenario);
  StepModel sm(r.scenario.model, r.scenario.training, r.scenario.hardware);
  r.step = sm.estimate(r.scenario.parallel);
  r.cost = sm.training_cost(r.step, r.scenario.parallel);
  if (input.format == "json") std::cout << estimate_json(r).dump(2) << "\n";
  else if (input.format == "csv") print_estimate_csv(std::cout, r);
  else print_estimate_table(std::cout, r);
  return kExitOk;
}

const RegisterCommand registered{{"estimate", "Will it fit? Memory per GPU and per pipeline stage for one layout",
                                  [](CLI::App& app) -> std::function<int()> {
                                    auto input = std::make_shared<ScenarioInput>();
                                    add_scenario_options(app, *input);
                                    return [input] { return run_estimate(*input); };
                                  }}};

}  // namespace
}  // namespace trainsim::cli
