#pragma once
// Renders a PPO / GRPO step (models/rlhf/rlhf_step.hpp): the `rlhf` JSON object (a contract for scripts), the terminal
// section, and the phase rows the Markdown and HTML reports share.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "models/rlhf/rlhf_step.hpp"

namespace trainsim {

nlohmann::json rlhf_json(const RlhfStepEstimate& e, const Scenario& s);
void print_rlhf_section(std::ostream& os, const RlhfStepEstimate& e, const Scenario& s);
// {phase, seconds, share} for the step's phases and their parts, ending with the step; parts indented (a terminal) or
// named with their phase ("rollout: decode", for Markdown and HTML, which drop leading spaces).
std::vector<std::vector<std::string>> rlhf_phase_rows(const RlhfStepEstimate& e, bool indent);
// The phases alone (rollout, scoring, training, sync) with their seconds, for charts.
std::vector<std::pair<std::string, double>> rlhf_phases(const RlhfStepEstimate& e);
// "41.2 s a step (rollout 62%), 2,048 samples, 53.0K tokens/s" for a report's facts.
std::string rlhf_line(const RlhfStepEstimate& e);
// The RL run's time and cost (rlhf.steps), or what is missing.
std::string rlhf_cost_line(const RlhfStepEstimate& e);

}  // namespace trainsim
