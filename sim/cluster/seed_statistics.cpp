#include "seed_statistics.hpp"

#include <cmath>
#include <limits>

namespace trainsim::sim::cluster {

PolicyResult mean_over_seeds(const std::vector<PolicyResult>& runs, SeedStatistics* spread) {
  PolicyResult out = runs.front();
  spread->seeds = static_cast<int>(runs.size());
  spread->metrics.clear();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  auto figure = [&](const char* name, auto get, auto set, double highest) {
    std::vector<double> v;
    for (const PolicyResult& r : runs) v.push_back(static_cast<double>(get(r)));
    const Statistic s = summarize(v, 0.0, highest);
    set(out, s.mean);
    spread->metrics.push_back({name, s});
  };
  figure("utilization", [](const PolicyResult& r) { return r.utilization; }, [](PolicyResult& r, double m) { r.utilization = m; }, 1.0);
  figure("mean_wait_s", [](const PolicyResult& r) { return r.mean_wait_s; }, [](PolicyResult& r, double m) { r.mean_wait_s = m; }, kInf);
  figure("p50_wait_s", [](const PolicyResult& r) { return r.p50_wait_s; }, [](PolicyResult& r, double m) { r.p50_wait_s = m; }, kInf);
  figure("p99_wait_s", [](const PolicyResult& r) { return r.p99_wait_s; }, [](PolicyResult& r, double m) { r.p99_wait_s = m; }, kInf);
  figure("mean_jct_s", [](const PolicyResult& r) { return r.mean_jct_s; }, [](PolicyResult& r, double m) { r.mean_jct_s = m; }, kInf);
  figure("makespan_s", [](const PolicyResult& r) { return r.makespan_s; }, [](PolicyResult& r, double m) { r.makespan_s = m; }, kInf);
  figure("preemptions", [](const PolicyResult& r) { return r.preemptions; },
         [](PolicyResult& r, double m) { r.preemptions = static_cast<int>(std::lround(m)); }, kInf);
  figure("failures", [](const PolicyResult& r) { return r.failures; }, [](PolicyResult& r, double m) { r.failures = static_cast<int>(std::lround(m)); }, kInf);
  figure("gpu_hours_lost", [](const PolicyResult& r) { return r.gpu_hours_lost; }, [](PolicyResult& r, double m) { r.gpu_hours_lost = m; }, kInf);
  figure("goodput", [](const PolicyResult& r) { return r.goodput; }, [](PolicyResult& r, double m) { r.goodput = m; }, 1.0);
  figure("mean_job_ettr", [](const PolicyResult& r) { return r.mean_job_ettr; }, [](PolicyResult& r, double m) { r.mean_job_ettr = m; }, 1.0);
  figure("gpu_hours", [](const PolicyResult& r) { return r.gpu_hours; }, [](PolicyResult& r, double m) { r.gpu_hours = m; }, kInf);
  figure("energy_kwh", [](const PolicyResult& r) { return r.energy_kwh; }, [](PolicyResult& r, double m) { r.energy_kwh = m; }, kInf);
  figure("cost_usd", [](const PolicyResult& r) { return r.cost_usd; }, [](PolicyResult& r, double m) { r.cost_usd = m; }, kInf);
  return out;
}

}  // namespace trainsim::sim::cluster
