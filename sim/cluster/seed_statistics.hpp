#pragma once
// A policy run with several seeds (failures, repairs and spot reclaims drawn anew each time): the means of its
// figures and their 95% confidence intervals, with the same estimator as `trainsim reliability` (summarize in
// sim/reliability/job_montecarlo.hpp), so the two commands' intervals mean one thing.
#include <string>
#include <utility>
#include <vector>

#include "cluster_sim.hpp"
#include "sim/reliability/job_montecarlo.hpp"

namespace trainsim::sim::cluster {

struct SeedStatistics {
  int seeds = 0;
  std::vector<std::pair<std::string, Statistic>> metrics;  // "mean_wait_s", "utilization", ... in table order
};

// The first run with its scalar figures replaced by the means over `runs` (its job records and time series kept:
// they are one run's), and the spread of each figure. `runs` must not be empty.
PolicyResult mean_over_seeds(const std::vector<PolicyResult>& runs, SeedStatistics* spread);

}  // namespace trainsim::sim::cluster
