#include "synthetic_workload.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "models/errors.hpp"
#include "sim/random.hpp"

namespace trainsim::sim::cluster {

namespace {

constexpr int kMinJobsPerClass = 10;  // a GPU count with fewer jobs takes the whole trace's duration fit

struct LogStats {
  double sum = 0, sum_sq = 0, max = -1e300;
  int n = 0;
  void add(double x) { sum += x, sum_sq += x * x, max = std::max(max, x), ++n; }
  double mean() const { return sum / n; }
  double sd() const { return n > 1 ? std::sqrt(std::max(0.0, (sum_sq - sum * sum / n) / n)) : 0.0; }  // the MLE
};

double standard_normal(Rng& rng) {  // Box-Muller
  const double u = rng.uniform(), v = rng.uniform();
  return std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * v);
}

}  // namespace

namespace {
double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }
}  // namespace

// E[X | X <= e^b] of a lognormal (mu, sigma): e^(mu + sigma^2/2) Phi((b - mu - sigma^2)/sigma) / Phi((b - mu)/sigma).
double WorkloadFit::SizeClass::mean_duration() const {
  if (log_sd <= 0) return std::exp(std::min(log_mean, log_max));
  const double full = std::exp(log_mean + log_sd * log_sd / 2);
  const double kept = normal_cdf((log_max - log_mean) / log_sd);
  return kept > 0 ? full * normal_cdf((log_max - log_mean - log_sd * log_sd) / log_sd) / kept : std::exp(log_max);
}

double WorkloadFit::mean_gpu_seconds() const {
  double m = 0;
  for (const SizeClass& c : sizes) m += c.share * c.gpus * c.mean_duration();
  return m;
}

WorkloadFit fit_workload(const std::vector<ClusterJob>& jobs, const std::string& source) {
  std::map<int, LogStats> by_size;
  LogStats all;
  std::map<std::string, int> users;
  int n = 0;
  for (const ClusterJob& j : jobs) {
    if (!(j.duration_s > 0) || j.gpus < 1) continue;
    const double x = std::log(j.duration_s);
    by_size[j.gpus].add(x);
    all.add(x);
    ++users[j.user];
    ++n;
  }
  if (n == 0) throw InputError("--synthetic", source, "a trace with jobs of positive duration to fit");
  WorkloadFit fit;
  fit.source = source;
  for (const auto& [gpus, st] : by_size) {
    const LogStats& use = st.n >= kMinJobsPerClass ? st : all;
    fit.sizes.push_back({gpus, static_cast<double>(st.n) / n, use.mean(), use.sd(), use.max, st.n});
  }
  for (const auto& [u, k] : users) fit.users.push_back({u, static_cast<double>(k) / n});
  return fit;
}

std::vector<ClusterJob> synthesize_workload(const WorkloadFit& fit, const SyntheticSpec& spec, double* duration_scale) {
  // Sizes the cluster cannot hold are left out of the mix (their share goes to the rest).
  std::vector<WorkloadFit::SizeClass> sizes;
  double kept = 0;
  for (const auto& c : fit.sizes)
    if (c.gpus <= spec.max_gpus) sizes.push_back(c), kept += c.share;
  if (sizes.empty() || kept <= 0) throw InputError("--synthetic", fit.source, "a trace with jobs that fit the cluster (" + std::to_string(spec.max_gpus) + " GPUs at most)");
  WorkloadFit mix = fit;
  mix.sizes = sizes;
  for (auto& c : mix.sizes) c.share /= kept;
  // One factor on every duration so that jobs x E[gpus x duration] = load x GPUs x span.
  const double scale = spec.load * spec.cluster_gpus * spec.span_s / (spec.jobs * mix.mean_gpu_seconds());
  if (duration_scale) *duration_scale = scale;
  Rng rng(spec.seed);
  const double rate = spec.jobs / spec.span_s;
  std::vector<ClusterJob> out;
  out.reserve(static_cast<std::size_t>(spec.jobs));
  double t = 0;
  for (int i = 0; i < spec.jobs; ++i) {
    t += rng.exponential() / rate;
    double u = rng.uniform();
    std::size_t k = 0;
    while (k + 1 < mix.sizes.size() && u > mix.sizes[k].share) u -= mix.sizes[k].share, ++k;
    const auto& c = mix.sizes[k];
    ClusterJob j;
    j.id = "synthetic-" + std::to_string(i);
    j.submit_s = t;
    j.gpus = c.gpus;
    double x = c.log_mean + c.log_sd * standard_normal(rng);
    while (x > c.log_max) x = c.log_mean + c.log_sd * standard_normal(rng);  // truncated (at least half the mass is kept)
    j.duration_s = std::max(1.0, scale * std::exp(x));
    double v = rng.uniform();
    std::size_t w = 0;
    while (w + 1 < mix.users.size() && v > mix.users[w].second) v -= mix.users[w].second, ++w;
    if (!mix.users.empty()) j.user = mix.users[w].first;
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace trainsim::sim::cluster
