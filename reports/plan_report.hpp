#pragma once
// Renders step-time estimates and layout-search results: JSON (contract keys), tables, CSV.
#include <nlohmann/json.hpp>
#include <ostream>

#include "models/search.hpp"
#include "models/step.hpp"

namespace trainsim {

nlohmann::json step_json(const StepEstimate& s);          // {time_s, tokens_per_s, mfu, hfu, model_flops, hardware_flops, breakdown}
nlohmann::json training_cost_json(const TrainingCost& c);  // {iterations, time_to_train_s, gpu_hours, cost, energy_kwh}
nlohmann::json layout_json(const ParallelLayout& p, const TrainingSpec& t);
nlohmann::json plan_json(const Plan& p);

struct PlanReport {
  Scenario scenario;
  std::string scenario_label;
  SearchResult result;
  double seconds = 0;  // search wall time
  int threads = 1;
  std::string budget_text;  // --budget as given ("$250000", "30d"); empty: none
};
nlohmann::json plan_report_json(const PlanReport& r);
void print_plan_table(std::ostream& os, const PlanReport& r);
void print_plan_csv(std::ostream& os, const PlanReport& r);

// The step section of `trainsim estimate` (table form).
void print_step_table(std::ostream& os, const StepEstimate& s, const TrainingCost& c, const Scenario& scenario);

}  // namespace trainsim
