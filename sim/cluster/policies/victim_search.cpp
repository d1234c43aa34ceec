#include "sim/cluster/policies/victim_search.hpp"

namespace trainsim::sim::cluster {

std::vector<int> minimal_victims(const SchedulingPass& pass, int job, const std::vector<int>& candidates) {
  std::vector<int> victims;
  bool enough = false;
  for (int r : candidates) {
    victims.push_back(r);
    if ((enough = pass.fits_without(job, victims))) break;
  }
  if (!enough) return {};
  for (std::size_t k = victims.size(); k-- > 0;) {
    std::vector<int> without = victims;
    without.erase(without.begin() + static_cast<std::ptrdiff_t>(k));
    if (pass.fits_without(job, without)) victims = without;
  }
  return victims;
}

bool start_by_preempting(SchedulingPass& pass, int job, const std::vector<int>& candidates) {
  const std::vector<int> victims = minimal_victims(pass, job, candidates);
  if (victims.empty()) return false;
  for (int r : victims) pass.preempt(r);
  return pass.start(job);
}

}  // namespace trainsim::sim::cluster
