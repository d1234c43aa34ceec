#pragma once
// `trainsim plan` as documents: Markdown (the ranked plans and the Pareto front as tables) and a self-contained
// HTML report with charts: time to train against GPUs and against cost (the Pareto front highlighted, each
// point's layout on hover, the front's likely band dashed), and the top plans' step breakdowns side by side.
#include <ostream>

#include "plan_report.hpp"

namespace trainsim {

void print_plan_markdown(std::ostream& os, const PlanReport& r);
void write_plan_html(std::ostream& os, const PlanReport& r);

}  // namespace trainsim
