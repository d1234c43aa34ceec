#pragma once
// `trainsim reliability` as documents: Markdown (the terminal table's sections as pipe tables, the same cells)
// and a self-contained HTML report with charts: ETTR against the checkpoint interval with Young's, Daly's and the
// simulated best interval marked; the Monte-Carlo distribution of the time lost per run; the what-ifs as bars of
// where the wall clock goes; the sensitivities; and, with --frontier, ETTR against the blocking checkpoint cost.
#include <ostream>

#include "reliability_report.hpp"

namespace trainsim {

void print_reliability_markdown(std::ostream& os, const ReliabilityReport& r);
void write_reliability_html(std::ostream& os, const ReliabilityReport& r);

}  // namespace trainsim
