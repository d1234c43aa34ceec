#include "reliability.hpp"

#include <cmath>

namespace trainsim {

double job_mtbf_s(double nodes, double failures_per_1000_node_days) {
  const double per_day = nodes * failures_per_1000_node_days / 1000.0;
  return per_day > 0 ? 86400.0 / per_day : INFINITY;
}

double expected_interruptions(double nodes, double failures_per_1000_node_days, double days) {
  return nodes * failures_per_1000_node_days / 1000.0 * days;
}

double young_interval_s(double checkpoint_cost_s, double mtbf_s) { return std::sqrt(2 * checkpoint_cost_s * mtbf_s); }

double daly_interval_s(double checkpoint_cost_s, double mtbf_s) {
  if (checkpoint_cost_s >= 2 * mtbf_s) return mtbf_s;
  const double x = checkpoint_cost_s / (2 * mtbf_s);
  return std::sqrt(2 * checkpoint_cost_s * mtbf_s) * (1 + std::sqrt(x) / 3 + x / 9) - checkpoint_cost_s;
}

double first_order_waste(double checkpoint_cost_s, double interval_s, double recovery_s, double mtbf_s) {
  return checkpoint_cost_s / interval_s + (interval_s / 2 + recovery_s) / mtbf_s;
}

}  // namespace trainsim
