#pragma once
// Renderers of `trainsim simulate`: table, JSON (contract keys step.time_s, analytic.step.time_s,
// step.breakdown, links[].{id, bytes, utilization}), CSV, and the Chrome-trace / Perfetto timeline.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "models/step.hpp"
#include "sim/iteration_sim.hpp"

namespace trainsim {

struct SimulateResult {
  std::string scenario_label;
  Scenario scenario;
  StepEstimate analytic;
  sim::SimulationResult simulated;
  double wall_s = 0;  // how long the simulation took
};

nlohmann::json simulate_json(const SimulateResult& r);
void print_simulate_table(std::ostream& os, const SimulateResult& r);
void print_simulate_csv(std::ostream& os, const SimulateResult& r);
// Chrome trace event format (JSON array of complete events, microseconds): one track per GPU.
void write_chrome_trace(std::ostream& os, const sim::SimulationResult& r);

}  // namespace trainsim
