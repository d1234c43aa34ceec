#include "models/reliability/reliability.hpp"

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

std::optional<double> first_order_ettr(double checkpoint_cost_s, double interval_s, double recovery_s, double mtbf_s) {
  const double waste = first_order_waste(checkpoint_cost_s, interval_s, recovery_s, mtbf_s);
  if (!(waste >= 0 && waste <= 1)) return std::nullopt;
  return 1 - waste;
}

double expected_ettr(double checkpoint_cost_s, double interval_s, double recovery_s, double mtbf_s) {
  if (!std::isfinite(mtbf_s)) return std::isfinite(interval_s) ? interval_s / (interval_s + checkpoint_cost_s) : 1.0;
  if (!std::isfinite(interval_s)) return 0.0;
  const double m = mtbf_s;
  return interval_s / (m * std::exp(recovery_s / m) * std::expm1((interval_s + checkpoint_cost_s) / m));
}

double lambert_w0(double x) {
  const double e_inv = std::exp(-1.0);
  if (x <= -e_inv) return -1.0;
  // Start: the branch-point series near -1/e, log otherwise; then Halley's iteration.
  double w = x < -0.25 ? -1.0 + std::sqrt(2.0 * (1.0 + std::exp(1.0) * x)) : (x < 1.0 ? x : std::log(x));
  for (int i = 0; i < 64; ++i) {
    const double ew = std::exp(w), f = w * ew - x;
    const double step = f / (ew * (w + 1) - (w + 2) * f / (2 * w + 2));
    w -= step;
    if (std::fabs(step) <= 1e-15 * (1 + std::fabs(w))) break;
  }
  return w;
}

double optimal_interval_s(double checkpoint_cost_s, double mtbf_s) {
  if (!std::isfinite(mtbf_s)) return INFINITY;
  // d/dtau [tau / (e^((tau+delta)/M) - 1)] = 0  <=>  e^((tau+delta)/M)·(1 - tau/M) = 1; with y = 1 - tau/M,
  // y·e^-y = e^(-1 - delta/M), so y = -W0(-e^(-1 - delta/M)).
  const double w = lambert_w0(-std::exp(-1.0 - checkpoint_cost_s / mtbf_s));
  return mtbf_s * (1 + w);
}

double expected_lost_work_s(double checkpoint_cost_s, double interval_s, double mtbf_s) {
  const double l = 1 / mtbf_s, tau = interval_s, c = interval_s + checkpoint_cost_s;
  const double p_fail = -std::expm1(-l * c);
  if (p_fail <= 0) return tau / 2;
  const double in_compute = (-std::expm1(-l * tau) - l * tau * std::exp(-l * tau)) / l;  // integral of x·l·e^(-l·x) over [0, tau]
  const double in_checkpoint = tau * (std::exp(-l * tau) - std::exp(-l * c));
  return (in_compute + in_checkpoint) / p_fail;
}

}  // namespace trainsim
