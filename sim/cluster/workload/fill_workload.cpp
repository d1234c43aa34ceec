#include "sim/cluster/workload/fill_workload.hpp"

#include <string>
#include <utility>

#include "sim/random.hpp"

namespace trainsim::sim::cluster {

std::vector<ClusterJob> fill_workload(const std::vector<ClusterJob>& pods, double fill_to, double cluster_gpus, bool gpu_sharing,
                                      double duration_s, std::uint64_t seed) {
  std::vector<ClusterJob> out = pods;
  Rng rng(run_seed(seed, 0, 23));
  auto draw = [&rng](std::size_t n) { return static_cast<std::size_t>(rng.next() % n); };
  if (fill_to > 0 && !pods.empty()) {
    double asked = 0;
    for (const ClusterJob& j : out) asked += gpus_held(j, gpu_sharing);
    const double target = fill_to * cluster_gpus;
    if (asked > target) {
      while (!out.empty() && asked > target) {
        const std::size_t k = draw(out.size());
        asked -= gpus_held(out[k], gpu_sharing);
        out[k] = std::move(out.back());
        out.pop_back();
      }
    } else if (asked > 0) {  // (pods that ask no GPU would never reach the target)
      for (std::size_t added = 1;; ++added) {
        ClusterJob j = pods[draw(pods.size())];
        if (asked + gpus_held(j, gpu_sharing) > target) break;
        asked += gpus_held(j, gpu_sharing);
        j.id += "#" + std::to_string(added);
        out.push_back(std::move(j));
      }
    }
  }
  // Fisher-Yates.
  for (std::size_t i = out.size(); i > 1; --i) std::swap(out[i - 1], out[draw(i)]);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].submit_s = static_cast<double>(i);
    out[i].duration_s = duration_s;
  }
  return out;
}

}  // namespace trainsim::sim::cluster
