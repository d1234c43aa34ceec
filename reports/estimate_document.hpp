#pragma once
// `trainsim estimate` as documents: Markdown (tables to paste into a design doc) and a self-contained HTML
// report with charts (memory per GPU as stacked bars per pipeline stage against the GPU's capacity; the step
// time by part). Both show the numbers of the table and JSON forms, from the same result.
#include <ostream>

#include "estimate_report.hpp"

namespace trainsim {

void print_estimate_markdown(std::ostream& os, const EstimateResult& r);
void write_estimate_html(std::ostream& os, const EstimateResult& r);

}  // namespace trainsim
