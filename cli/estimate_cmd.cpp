// `trainsim estimate [SCENARIO]`: memory per GPU and per pipeline stage for one fixed layout.
#include <iostream>

#include "calibrate/profile_io.hpp"
#include "command.hpp"
#include "models/memory/memory.hpp"
#include "models/memory/memory_advice.hpp"
#include "models/step/step.hpp"
#include "output.hpp"
#include "reports/estimate_document.hpp"
#include "reports/estimate_report.hpp"
#include "scenario_input.hpp"

namespace trainsim::cli {
namespace {

int run_estimate(const ScenarioInput& input) {
  EstimateResult r;
  std::optional<LoadedCalibration> calibration;
  r.scenario = load_scenario(input, &r.scenario_label, true, &calibration);
  MemoryModel mm(r.scenario.model, r.scenario.training, r.scenario.hardware);
  r.memory = mm.estimate(r.scenario.parallel);
  r.suggestions = fit_suggestions(r.scenario);
  StepModel sm(r.scenario.model, r.scenario.training, r.scenario.hardware, calibration ? &calibration->profile : nullptr);
  r.step = sm.estimate(r.scenario.parallel);
  r.cost = sm.training_cost(r.step, r.scenario.parallel);
  if (r.scenario.training.is_rl()) r.rlhf = estimate_rlhf_step(r.scenario, calibration ? &calibration->profile : nullptr);
  if (r.scenario.data.given) {
    r.data_feed = estimate_data_feed(r.scenario, r.step.time_s);
    if (r.data_feed->starves)
      r.scenario.notes.push_back("data: the feed is slower than the GPUs (" + r.data_feed->bottleneck + " bound): a step takes " +
                                 format_seconds(r.data_feed->feed_bound_step_s) + ", not the " + format_seconds(r.step.time_s) +
                                 " the GPUs need; the step time and cost above are the GPUs'");
  }
  // What the profile replaced and what fell back to the defaults, for this scenario's hardware and precision.
  std::optional<CalibrationCoverage> coverage;
  if (calibration) coverage = CalibrationFit(calibration->profile, r.scenario.hardware).coverage(&r.scenario.training);
  nlohmann::json j = estimate_json(r);
  if (calibration) j["calibration"] = calibration_summary_json(calibration->path, calibration->profile, *coverage);
  emit_result(input.format, j, "estimate",
              {[&](std::ostream& os) {
                 print_estimate_table(os, r);
                 if (calibration) print_calibration_summary(os, calibration->path, calibration->profile, *coverage);
               },
               [&](std::ostream& os) { print_estimate_csv(os, r); },
               [&](std::ostream& os) { print_estimate_markdown(os, r); },
               [&](std::ostream& os) { write_estimate_html(os, r); }},
              input.report);
  return kExitOk;
}

const RegisterCommand registered{{"estimate", "Will it fit? Memory per GPU and per pipeline stage for one layout",
                                  [](CLI::App& app) -> std::function<int()> {
                                    auto input = std::make_shared<ScenarioInput>();
                                    add_scenario_options(app, *input);
                                    add_calibration_option(app, *input);
                                    return [input] { return run_estimate(*input); };
                                  }}};

}  // namespace
}  // namespace trainsim::cli
