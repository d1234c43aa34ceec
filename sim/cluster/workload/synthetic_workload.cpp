#include "sim/cluster/workload/synthetic_workload.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "models/core/errors.hpp"
#include "models/core/statistics.hpp"
#include "models/core/units.hpp"
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
  std::vector<const ClusterJob*> ordered;
  for (const ClusterJob& j : jobs)
    if (j.duration_s > 0 && j.gpus >= 1) ordered.push_back(&j);
  std::stable_sort(ordered.begin(), ordered.end(), [](const ClusterJob* a, const ClusterJob* b) { return a->submit_s < b->submit_s; });
  for (std::size_t i = 0; i < ordered.size(); ++i)
    fit.sequence.push_back({i > 0 ? ordered[i]->submit_s - ordered[i - 1]->submit_s : 0.0, ordered[i]->gpus, ordered[i]->duration_s, ordered[i]->user});
  for (const auto& [gpus, st] : by_size) {
    const LogStats& use = st.n >= kMinJobsPerClass ? st : all;
    fit.sizes.push_back({gpus, static_cast<double>(st.n) / n, use.mean(), use.sd(), use.max, st.n});
  }
  for (const auto& [u, k] : users) fit.users.push_back({u, static_cast<double>(k) / n});
  return fit;
}

double load_in_span(const std::vector<ClusterJob>& jobs, double cluster_gpus, double span_s, double scale) {
  if (cluster_gpus <= 0 || span_s <= 0) return 0;
  const double start = jobs.empty() ? 0.0 : jobs.front().submit_s;
  double gpu_s = 0;
  for (const ClusterJob& j : jobs) gpu_s += j.gpus * std::clamp(span_s - (j.submit_s - start), 0.0, scale * j.duration_s);
  return gpu_s / (cluster_gpus * span_s);
}

double scale_to_load_in_span(std::vector<ClusterJob>& jobs, double load, double cluster_gpus, double span_s) {
  // The load reached as every job runs from its arrival to the span's end bounds what any scale offers.
  const double most = load_in_span(jobs, cluster_gpus, span_s, std::numeric_limits<double>::infinity());
  if (load > most * (1 - 1e-9))
    throw InputError("--load", format_number(load, 4),
                     "a load these jobs can offer within the span: at most " + format_number(most, 4) +
                         " (every job running from its arrival to the span's end); more jobs or a shorter span offer more");
  // The offered load is continuous and non-decreasing in the scale: bisect on it (in log space: scales span decades).
  double lo = 1e-12, hi = 1;
  while (load_in_span(jobs, cluster_gpus, span_s, hi) < load) hi *= 2;
  for (int i = 0; i < 200 && hi / lo > 1 + 1e-12; ++i) {
    const double mid = std::sqrt(lo * hi);
    (load_in_span(jobs, cluster_gpus, span_s, mid) < load ? lo : hi) = mid;
  }
  for (ClusterJob& j : jobs) j.duration_s = std::max(1.0, j.duration_s * hi);
  return hi;
}

namespace {

// Moving-block bootstrap: blocks of `block_jobs` consecutive trace jobs from uniform random starts, jobs larger
// than the cluster left out, until `jobs`; then the gaps stretched to the span and the durations to the load.
std::vector<ClusterJob> block_bootstrap(const WorkloadFit& fit, const SyntheticSpec& spec, double* duration_scale) {
  std::vector<const WorkloadFit::Job*> fitting;
  for (const auto& j : fit.sequence)
    if (j.gpus <= spec.max_gpus) fitting.push_back(&j);
  if (fitting.empty()) throw InputError("--synthetic", fit.source, "a trace with jobs that fit the cluster (" + std::to_string(spec.max_gpus) + " GPUs at most)");
  const std::size_t n = fit.sequence.size();
  const std::size_t block = spec.block_jobs > 0 ? static_cast<std::size_t>(spec.block_jobs)
                                                : std::max<std::size_t>(1, static_cast<std::size_t>(std::lround(std::sqrt(static_cast<double>(n)))));
  Rng rng(spec.seed);
  std::vector<ClusterJob> out;
  out.reserve(static_cast<std::size_t>(spec.jobs));
  double t = 0;
  while (out.size() < static_cast<std::size_t>(spec.jobs)) {
    const std::size_t start = n > block ? static_cast<std::size_t>(rng.uniform() * static_cast<double>(n - block + 1)) : 0;
    double gap = 0;  // a job left out passes its gap on, so the block keeps its own time span
    for (std::size_t i = start; i < std::min(n, start + block) && out.size() < static_cast<std::size_t>(spec.jobs); ++i) {
      const WorkloadFit::Job& j = fit.sequence[i];
      gap += i == start && out.empty() ? 0.0 : j.gap_s;
      if (j.gpus > spec.max_gpus) continue;
      t += gap;
      gap = 0;
      ClusterJob c;
      c.id = "synthetic-" + std::to_string(out.size());
      c.submit_s = t;
      c.gpus = j.gpus;
      c.duration_s = j.duration_s;
      c.user = j.user;
      out.push_back(std::move(c));
    }
  }
  // The time between blocks is the gap before each block's first job in the trace: a block of a quiet hour
  // arrives as quietly. Stretch the whole to the span, scale the durations to the load.
  const double stretch = t > 0 ? spec.span_s / t : 1.0;
  for (ClusterJob& c : out) c.submit_s *= stretch;
  const double scale = scale_to_load_in_span(out, spec.load, spec.cluster_gpus, spec.span_s);
  if (duration_scale) *duration_scale = scale;
  return out;
}

// Coefficient of variation of the gaps, and the share of gaps under one second.
std::pair<double, double> gap_shape(const std::vector<double>& gaps) {
  if (gaps.size() < 2) return {0, 0};
  double m = 0, same = 0;
  for (double g : gaps) m += g, same += g < 1;
  m /= static_cast<double>(gaps.size());
  double v = 0;
  for (double g : gaps) v += (g - m) * (g - m);
  v /= static_cast<double>(gaps.size() - 1);
  return {m > 0 ? std::sqrt(v) / m : 0, same / static_cast<double>(gaps.size())};
}

}  // namespace

WorkloadComparison compare_workloads(const WorkloadFit& fit, const std::vector<ClusterJob>& synthetic, double duration_scale) {
  WorkloadComparison c;
  std::vector<double> gaps, durations;
  for (std::size_t i = 1; i < fit.sequence.size(); ++i) gaps.push_back(fit.sequence[i].gap_s);
  for (const auto& j : fit.sequence) durations.push_back(j.duration_s);
  std::tie(c.trace_gap_cv, c.trace_same_second) = gap_shape(gaps);
  c.trace_median_duration_s = quantile(durations, 0.5);
  gaps.clear(), durations.clear();
  for (std::size_t i = 1; i < synthetic.size(); ++i) gaps.push_back(synthetic[i].submit_s - synthetic[i - 1].submit_s);
  for (const auto& j : synthetic) durations.push_back(duration_scale > 0 ? j.duration_s / duration_scale : j.duration_s);
  std::tie(c.synthetic_gap_cv, c.synthetic_same_second) = gap_shape(gaps);
  c.synthetic_median_duration_s = quantile(durations, 0.5);
  return c;
}

std::vector<ClusterJob> synthesize_workload(const WorkloadFit& fit, const SyntheticSpec& spec, double* duration_scale) {
  if (spec.model == SyntheticModel::Blocks) return block_bootstrap(fit, spec, duration_scale);
  // Sizes the cluster cannot hold are left out of the mix (their share goes to the rest).
  std::vector<WorkloadFit::SizeClass> sizes;
  double kept = 0;
  for (const auto& c : fit.sizes)
    if (c.gpus <= spec.max_gpus) sizes.push_back(c), kept += c.share;
  if (sizes.empty() || kept <= 0) throw InputError("--synthetic", fit.source, "a trace with jobs that fit the cluster (" + std::to_string(spec.max_gpus) + " GPUs at most)");
  WorkloadFit mix = fit;
  mix.sizes = sizes;
  for (auto& c : mix.sizes) c.share /= kept;
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
    // Truncated at the class's longest job (at least half the mass is kept); a class of one duration has a zero
    // log-sd and a log-mean that rounding may put a hair above its maximum: never a draw loop without an end.
    double x = std::min(c.log_mean, c.log_max);
    if (c.log_sd > 1e-9) {
      x = c.log_mean + c.log_sd * standard_normal(rng);
      while (x > c.log_max) x = c.log_mean + c.log_sd * standard_normal(rng);
    }
    j.duration_s = std::exp(x);
    double v = rng.uniform();
    std::size_t w = 0;
    while (w + 1 < mix.users.size() && v > mix.users[w].second) v -= mix.users[w].second, ++w;
    if (!mix.users.empty()) j.user = mix.users[w].first;
    out.push_back(std::move(j));
  }
  const double scale = scale_to_load_in_span(out, spec.load, spec.cluster_gpus, spec.span_s);
  if (duration_scale) *duration_scale = scale;
  return out;
}

}  // namespace trainsim::sim::cluster
