#include "models/compute/expert_load.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <vector>

namespace trainsim {

namespace {

constexpr std::size_t kQuadratureMaxN = 1024;

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// E[max] for n = 1..kQuadratureMaxN at once: Simpson's rule on [-8, 9] (the integrand is below 1e-12 outside), the
// powers Phi^(n-1) carried from one n to the next.
const std::array<double, kQuadratureMaxN + 1>& quadrature_table() {
  static const std::array<double, kQuadratureMaxN + 1> table = [] {
    constexpr std::size_t kIntervals = 3400;  // even; step 0.005
    constexpr double kLo = -8, kHi = 9, kStep = (kHi - kLo) / kIntervals;
    std::vector<double> x(kIntervals + 1), weight(kIntervals + 1), cdf(kIntervals + 1), power(kIntervals + 1);
    for (std::size_t i = 0; i <= kIntervals; ++i) {
      x[i] = kLo + static_cast<double>(i) * kStep;
      const double simpson = (i == 0 || i == kIntervals) ? 1.0 : (i % 2 ? 4.0 : 2.0);
      weight[i] = simpson * kStep / 3 * x[i] * std::exp(-0.5 * x[i] * x[i]) / std::sqrt(2 * std::numbers::pi);
      cdf[i] = normal_cdf(x[i]);
      power[i] = 1;  // Phi^(n-1) for n = 1
    }
    std::array<double, kQuadratureMaxN + 1> out{};
    for (std::size_t n = 1; n <= kQuadratureMaxN; ++n) {
      double sum = 0;
      for (std::size_t i = 0; i <= kIntervals; ++i) {
        sum += weight[i] * power[i];
        power[i] *= cdf[i];
      }
      out[n] = static_cast<double>(n) * sum;
    }
    return out;
  }();
  return table;
}

// The same integral for one n beyond the table, Phi^(n-1) as exp((n-1) log Phi).
double expected_max_by_quadrature(int n) {
  constexpr int kIntervals = 3400;
  constexpr double kLo = -8, kHi = 9, kStep = (kHi - kLo) / kIntervals;
  double sum = 0;
  for (int i = 0; i <= kIntervals; ++i) {
    const double x = kLo + i * kStep, cdf = normal_cdf(x);
    if (cdf <= 0) continue;
    const double simpson = (i == 0 || i == kIntervals) ? 1.0 : (i % 2 ? 4.0 : 2.0);
    sum += simpson * x * std::exp(-0.5 * x * x + (n - 1) * std::log(cdf)) / std::sqrt(2 * std::numbers::pi);
  }
  return n * sum * kStep / 3;
}

}  // namespace

double expected_max_standard_normal(int n) {
  if (n <= 1) return 0;
  if (static_cast<std::size_t>(n) <= kQuadratureMaxN) return quadrature_table()[static_cast<std::size_t>(n)];
  return expected_max_by_quadrature(n);
}

double busiest_expert_rank_load(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p) {
  if (!m.is_moe() || p.ep <= 1 || !(t.moe_expert_load_cv > 0)) return 1;
  const double local_experts = static_cast<double>(m.num_experts) / p.ep;
  const double rank_cv = t.moe_expert_load_cv / std::sqrt(std::max(1.0, local_experts));
  return std::min(1 + rank_cv * expected_max_standard_normal(p.ep), static_cast<double>(p.ep));
}

double balanced_tokens_per_expert(const ModelSpec& m, const ParallelLayout& p, double routing_tokens) {
  if (!m.is_moe()) return 0;
  return routing_tokens * m.num_experts_per_tok * p.ep * p.etp / static_cast<double>(m.num_experts);
}

double expert_tokens_on_busiest_rank(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p, double routing_tokens) {
  const double balanced = balanced_tokens_per_expert(m, p, routing_tokens);
  return balanced * busiest_expert_rank_load(m, t, p);
}

}  // namespace trainsim
