#include "models/compute/expert_load.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <vector>

namespace trainsim {

namespace {

constexpr std::size_t kQuadratureMaxN = 1024;

// Simpson's rule on [-8, 9], step 0.005: the integrand x n phi Phi^(n-1) is below 1e-12 outside for every n here.
constexpr int kIntervals = 3400;
constexpr double kLo = -8, kHi = 9, kStep = (kHi - kLo) / kIntervals;

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// x_i and its Simpson weight times x phi(x): the integral is n times the sum over i of this times Phi(x_i)^(n-1).
double abscissa(int i) { return kLo + i * kStep; }
double weighted_density(int i) {
  const double x = abscissa(i), simpson = (i == 0 || i == kIntervals) ? 1.0 : (i % 2 ? 4.0 : 2.0);
  return simpson * kStep / 3 * x * std::exp(-0.5 * x * x) / std::sqrt(2 * std::numbers::pi);
}

// E[max] for n = 1..kQuadratureMaxN at once, the powers Phi^(n-1) carried from one n to the next.
const std::array<double, kQuadratureMaxN + 1>& quadrature_table() {
  static const std::array<double, kQuadratureMaxN + 1> table = [] {
    std::vector<double> weight(kIntervals + 1), cdf(kIntervals + 1), power(kIntervals + 1, 1.0);
    for (int i = 0; i <= kIntervals; ++i) {
      weight[static_cast<std::size_t>(i)] = weighted_density(i);
      cdf[static_cast<std::size_t>(i)] = normal_cdf(abscissa(i));
    }
    std::array<double, kQuadratureMaxN + 1> out{};
    for (std::size_t n = 1; n <= kQuadratureMaxN; ++n) {
      double sum = 0;
      for (std::size_t i = 0; i < weight.size(); ++i) {
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
  double sum = 0;
  for (int i = 0; i <= kIntervals; ++i)
    if (const double cdf = normal_cdf(abscissa(i)); cdf > 0) sum += weighted_density(i) * std::exp((n - 1) * std::log(cdf));
  return n * sum;
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
