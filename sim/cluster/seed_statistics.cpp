#include "seed_statistics.hpp"

#include <cmath>
#include <limits>
#include <type_traits>

namespace trainsim::sim::cluster {

PolicyResult mean_over_seeds(const std::vector<PolicyResult>& runs, SeedStatistics* spread) {
  PolicyResult out = runs.front();
  spread->seeds = static_cast<int>(runs.size());
  spread->metrics.clear();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // Each figure's mean replaces the first run's (counts rounded), its interval kept within [0, highest].
  auto figure = [&](const char* name, auto member, double highest) {
    std::vector<double> v;
    for (const PolicyResult& r : runs) v.push_back(static_cast<double>(r.*member));
    const Statistic st = summarize(v, 0.0, highest);
    using Field = std::remove_reference_t<decltype(out.*member)>;
    out.*member = std::is_integral_v<Field> ? static_cast<Field>(std::lround(st.mean)) : static_cast<Field>(st.mean);
    spread->metrics.push_back({name, st});
  };
  figure("utilization", &PolicyResult::utilization, 1.0);
  figure("utilization_in_span", &PolicyResult::utilization_in_span, 1.0);
  figure("mean_wait_s", &PolicyResult::mean_wait_s, kInf);
  figure("p50_wait_s", &PolicyResult::p50_wait_s, kInf);
  figure("p99_wait_s", &PolicyResult::p99_wait_s, kInf);
  figure("mean_jct_s", &PolicyResult::mean_jct_s, kInf);
  figure("makespan_s", &PolicyResult::makespan_s, kInf);
  figure("preemptions", &PolicyResult::preemptions, kInf);
  figure("failures", &PolicyResult::failures, kInf);
  figure("gpu_hours_lost", &PolicyResult::gpu_hours_lost, kInf);
  figure("goodput", &PolicyResult::goodput, 1.0);
  figure("mean_job_ettr", &PolicyResult::mean_job_ettr, 1.0);
  figure("gpu_hours", &PolicyResult::gpu_hours, kInf);
  figure("energy_kwh", &PolicyResult::energy_kwh, kInf);
  figure("cost_usd", &PolicyResult::cost_usd, kInf);
  figure("allocated_at_end", &PolicyResult::allocated_at_end, 1.0);  // the fill experiment's allocation ratio
  figure("waiting_gpus_at_end", &PolicyResult::waiting_gpus_at_end, kInf);
  return out;
}

}  // namespace trainsim::sim::cluster
