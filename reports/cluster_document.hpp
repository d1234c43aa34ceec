#pragma once
// `trainsim cluster` as documents: Markdown (the policy comparison table) and a self-contained HTML report with
// charts per policy: allocated GPUs and queue length over time, the wait-time distribution (CDF), and the
// fragmentation (free GPUs no waiting job can use), beside the comparison table.
#include <ostream>

#include "cluster_report.hpp"

namespace trainsim {

void print_cluster_markdown(std::ostream& os, const ClusterRun& r);
void write_cluster_html(std::ostream& os, const ClusterRun& r);

}  // namespace trainsim
