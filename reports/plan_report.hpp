#pragma once
// Renders step-time estimates and layout-search results: JSON (contract keys), tables, CSV.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "models/layout/search.hpp"
#include "models/step/step.hpp"

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

// "tp2+sp pp1 dp4" (with cp, ep, etp, vpp, gpipe and offload when they apply).
std::string layout_text(const Plan& p);
// The Framework line: the scenario's framework, or the rule that implies one per layout and, when the plans shown
// are priced for more than one framework, which (so a ranking across stacks is not read as one within a stack).
std::string framework_summary(const PlanReport& r);
// The ranked plans as table cells (the terminal table, Markdown and HTML show the same).
const std::vector<std::string>& plan_table_header();
std::vector<std::vector<std::string>> plan_table_rows(const PlanReport& r);
// The fastest plan at each searched GPU count (SearchResult::best_per_count), with its memory headroom.
const std::vector<std::string>& per_count_header();
std::vector<std::vector<std::string>> per_count_rows(const PlanReport& r);
// The parts of a step breakdown with time on the critical path (compute always), in the tables' order.
std::vector<std::pair<std::string, double>> step_parts(const StepBreakdown& b);
// The step section of `trainsim estimate` (table form).
void print_step_table(std::ostream& os, const StepEstimate& s, const TrainingCost& c, const Scenario& scenario);

}  // namespace trainsim
