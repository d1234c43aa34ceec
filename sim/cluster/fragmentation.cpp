#include "fragmentation.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace trainsim::sim::cluster {

namespace {
constexpr int kWhole = 1000;
}

std::vector<TaskClass> target_workload(const std::vector<ClusterJob>& jobs, bool gpu_sharing, double coverage) {
  // The paper's task classes are CPU and GPU requests with the GPU-type constraint; memory is not among them.
  using Key = std::tuple<int, int, std::int64_t, std::vector<std::string>>;
  std::map<Key, std::size_t> count;
  for (const ClusterJob& j : jobs) {
    const int milli = j.gpus == 0 ? 0 : shares_gpu(j, gpu_sharing) ? j.gpu_milli : kWhole;
    ++count[{j.gpus, milli, j.cpu_milli, j.gpu_types}];
  }
  std::vector<std::pair<Key, std::size_t>> ranked(count.begin(), count.end());
  // Most frequent first; equal counts in key order (the map's), so the result does not depend on job order.
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<TaskClass> out;
  const double total = static_cast<double>(jobs.size());
  double covered = 0;
  for (const auto& [key, n] : ranked) {
    if (total > 0 && covered >= coverage * total) break;
    TaskClass c;
    std::tie(c.gpus, c.gpu_milli, c.cpu_milli, c.gpu_types) = key;
    c.count = static_cast<std::int64_t>(n);
    covered += static_cast<double>(n);
    out.push_back(std::move(c));
  }
  for (TaskClass& c : out) c.share = static_cast<double>(c.count) / covered;
  return out;
}

bool fits_node(const NodeView& n, int gpus, int gpu_milli, std::int64_t cpu_milli, std::int64_t memory_mib) {
  if (n.cpu_limit > 0 && n.cpu_free < cpu_milli) return false;
  if (n.memory_limit > 0 && n.memory_free < memory_mib) return false;
  int usable = 0;
  for (int g = 0; g < n.gpus && usable < gpus; ++g) usable += n.gpu_free[g] >= gpu_milli;
  return usable >= gpus;
}

FragmentationMeasure::FragmentationMeasure(std::vector<TaskClass> workload) : workload_(std::move(workload)) {}

double FragmentationMeasure::of(const NodeView& n) const {
  std::vector<std::int16_t> free(n.gpu_free, n.gpu_free + n.gpus);
  std::sort(free.begin(), free.end());
  std::string key;
  key.reserve(n.gpu_model->size() + 9 + 2 * free.size());
  key.append(*n.gpu_model).push_back('\0');
  // Unlimited CPU keys as -1 (its free count means nothing); memory is no part of the task classes.
  const std::int64_t cpu = n.cpu_limit > 0 ? n.cpu_free : -1;
  key.append(reinterpret_cast<const char*>(&cpu), sizeof cpu);
  key.append(reinterpret_cast<const char*>(free.data()), free.size() * sizeof(std::int16_t));
  if (const auto it = memo_.find(key); it != memo_.end()) return it->second;
  const double f = compute(n);
  memo_.emplace(std::move(key), f);
  return f;
}

double FragmentationMeasure::compute(const NodeView& n) const {
  // In whole numbers (tasks x thousandths), divided once: two placements that strand the same GPUs compare equal,
  // exactly, so ties stay ties (a sum of fractional shares would order them by rounding).
  std::int64_t free_total = 0;
  for (int g = 0; g < n.gpus; ++g) free_total += n.gpu_free[g];
  if (free_total == 0) return 0;
  std::int64_t f = 0, tasks = 0;
  for (const TaskClass& m : workload_) {
    tasks += m.count;
    const bool typed = m.gpu_types.empty() || std::find(m.gpu_types.begin(), m.gpu_types.end(), *n.gpu_model) != m.gpu_types.end();
    if (m.gpus == 0 || !typed || !fits_node(n, m.gpus, m.gpu_milli, m.cpu_milli, 0)) {
      f += m.count * free_total;
      continue;
    }
    std::int64_t stranded = 0;
    for (int g = 0; g < n.gpus; ++g)
      if (n.gpu_free[g] < m.gpu_milli) stranded += n.gpu_free[g];
    f += m.count * stranded;
  }
  return tasks > 0 ? static_cast<double>(f) / static_cast<double>(tasks) : 0.0;
}

}  // namespace trainsim::sim::cluster
