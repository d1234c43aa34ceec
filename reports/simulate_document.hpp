#pragma once
// `trainsim simulate` as documents: Markdown (the step simulated beside analytic, the hottest links) and a
// self-contained HTML report: the step by part, simulated against analytic; the hottest links' utilization; the
// per-GPU timeline as a link to the Perfetto file when --trace wrote one.
#include <ostream>

#include "simulate_report.hpp"

namespace trainsim {

void print_simulate_markdown(std::ostream& os, const SimulateResult& r);
void write_simulate_html(std::ostream& os, const SimulateResult& r);

}  // namespace trainsim
