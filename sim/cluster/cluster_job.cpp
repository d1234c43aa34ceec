#include "cluster_job.hpp"

#include <algorithm>

namespace trainsim::sim::cluster {

int ClusterJob::elastic_size_at_most(int gpus_free) const {
  const int top = std::min(gpus_free, elastic_max);
  if (top < elastic_min) return 0;
  const int step = std::max(1, elastic_step);
  return elastic_min + (top - elastic_min) / step * step;
}

double ClusterJob::speed_on(int g) const {
  if (g == gpus || gpus <= 0) return 1.0;
  const int step = std::max(1, elastic_step);
  const std::size_t k = static_cast<std::size_t>(std::max(0, (g - elastic_min) / step));
  if (k < elastic_speed.size()) return elastic_speed[k];
  return static_cast<double>(g) / gpus;
}

}  // namespace trainsim::sim::cluster
