#include "models/reliability/failure_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"
#include "models/core/name_registry.hpp"
#include "models/reliability/reliability_limits.hpp"

namespace trainsim {

// ---- Distribution registry -----------------------------------------------------------------------
// The registry and every built-in distribution live in this file, so a static library that pulls in
// the registry (anything that looks a distribution up) also keeps the registrations below.

namespace {
NameRegistry<DistributionInfo>& distribution_registry() {
  static NameRegistry<DistributionInfo> all;
  return all;
}
}  // namespace

double TimeDistribution::cumulative_hazard(double) const { return std::numeric_limits<double>::quiet_NaN(); }
double TimeDistribution::inverse_cumulative_hazard(double) const { return std::numeric_limits<double>::quiet_NaN(); }

const std::vector<DistributionInfo>& time_distributions() { return distribution_registry().entries(); }

const DistributionInfo* find_distribution(const std::string& name) { return distribution_registry().find(name); }

RegisterDistribution::RegisterDistribution(DistributionInfo info) { distribution_registry().add(std::move(info)); }

std::unique_ptr<TimeDistribution> make_distribution(const std::string& name, double mean_s, double shape, const std::string& path,
                                                    bool for_failures) {
  // Failure times list only the distributions with a hazard.
  std::vector<std::string> names;
  for (const auto& d : time_distributions())
    if (!for_failures || d.for_failures) names.push_back(d.name);
  const DistributionInfo* info = find_distribution(name);
  if (!info || (for_failures && !info->for_failures))
    throw InputError(path, "\"" + name + "\"", "one of " + join(names),
                     info ? "failure times need a closed-form hazard; " + name + " is for repair times" : std::string());
  if (!(shape > 0) || !std::isfinite(shape)) throw InputError(path, Json(shape).dump(), "a positive shape");
  if (!(mean_s > 0) || !std::isfinite(mean_s)) throw InputError(path, Json(mean_s).dump(), "a positive mean duration");
  return info->make(mean_s, shape);
}

namespace {

// Exponential: S(t) = exp(-t/mean), H(t) = t/mean (a constant hazard: Poisson failures).
class Exponential final : public TimeDistribution {
 public:
  explicit Exponential(double mean) : mean_(mean) {}
  double mean() const override { return mean_; }
  double quantile(double u) const override { return -mean_ * std::log1p(-u); }
  bool has_hazard() const override { return true; }
  bool memoryless() const override { return true; }
  double cumulative_hazard(double t) const override { return t / mean_; }
  double inverse_cumulative_hazard(double h) const override { return h * mean_; }

 private:
  double mean_;
};

// Weibull with shape k and scale eta: S(t) = exp(-(t/eta)^k), mean = eta·Gamma(1 + 1/k)
// (e.g. Schroeder & Gibson, DSN 2006, fit k ~ 0.7-0.8 to HPC node times between failures). k = 1 is the exponential.
class Weibull final : public TimeDistribution {
 public:
  Weibull(double mean, double k) : mean_(mean), k_(k), eta_(mean / std::tgamma(1.0 + 1.0 / k)) {}
  double mean() const override { return mean_; }
  double quantile(double u) const override { return eta_ * std::pow(-std::log1p(-u), 1.0 / k_); }
  bool has_hazard() const override { return true; }
  bool memoryless() const override { return k_ == 1.0; }
  double cumulative_hazard(double t) const override { return std::pow(t / eta_, k_); }
  double inverse_cumulative_hazard(double h) const override { return eta_ * std::pow(h, 1.0 / k_); }

 private:
  double mean_, k_, eta_;
};

// Inverse of the standard normal CDF: P. J. Acklam's rational approximation (relative error < 1.2e-9).
double normal_quantile(double p) {
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02,
                             -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01,
                             -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00,
                             4.374664141464968e+00, 2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00};
  const double low = 0.02425, high = 1 - low;
  if (p < low) {
    const double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > high) {
    const double q = std::sqrt(-2 * std::log1p(-p));
    return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  const double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

// Lognormal with log-standard-deviation sigma: mu = ln(mean) - sigma^2/2 keeps the mean. Repair times of
// hardware are long-tailed (Schroeder & Gibson, DSN 2006, find lognormal fits best).
class Lognormal final : public TimeDistribution {
 public:
  Lognormal(double mean, double sigma) : mean_(mean), sigma_(sigma), mu_(std::log(mean) - sigma * sigma / 2) {}
  double mean() const override { return mean_; }
  double quantile(double u) const override { return std::exp(mu_ + sigma_ * normal_quantile(u)); }

 private:
  double mean_, sigma_, mu_;
};

class Fixed final : public TimeDistribution {
 public:
  explicit Fixed(double mean) : mean_(mean) {}
  double mean() const override { return mean_; }
  double quantile(double) const override { return mean_; }

 private:
  double mean_;
};

const RegisterDistribution reg_exponential{{"exponential", "constant hazard (Poisson failures); mean = 1/rate", true,
                                            [](double mean, double) { return std::make_unique<Exponential>(mean); }}};
const RegisterDistribution reg_weibull{{"weibull", "Weibull with shape k (k < 1 infant mortality, k = 1 exponential, k > 1 wear-out)", true,
                                        [](double mean, double k) { return std::make_unique<Weibull>(mean, k); }}};
const RegisterDistribution reg_lognormal{{"lognormal", "lognormal with log-sd sigma (shape), for repair times", false,
                                          [](double mean, double sigma) { return std::make_unique<Lognormal>(mean, sigma); }}};
const RegisterDistribution reg_fixed{{"fixed", "always the mean", false, [](double mean, double) { return std::make_unique<Fixed>(mean); }}};

}  // namespace

// ---- Failure model ------------------------------------------------------------------------------

const char* to_string(FailureScope s) { return s == FailureScope::Gpu ? "gpu" : "node"; }

double FailureModel::node_rate_per_day(int gpus_per_node) const {
  double r = 0;
  for (const auto& c : components) r += c.rate_per_day * (c.scope == FailureScope::Gpu ? gpus_per_node : 1);
  return r;
}

double FailureModel::job_rate_per_day(int nodes, int gpus_per_node) const {
  // Lemon nodes count before operators find them (detection lowers the long-run rate).
  const int bad = std::min(lemons.count, nodes);
  return node_rate_per_day(gpus_per_node) * (nodes - bad + bad * lemons.rate_factor);
}

double FailureModel::job_mtbf_s(int nodes, int gpus_per_node) const {
  const double r = job_rate_per_day(nodes, gpus_per_node);
  return r > 0 ? 86400.0 / r : std::numeric_limits<double>::infinity();
}

double FailureModel::expected_failures(int nodes, int gpus_per_node, double horizon_s) const {
  if (!(horizon_s > 0)) return 0;
  const int bad = std::clamp(lemons.count, 0, std::max(0, nodes));
  double total = 0;
  for (const auto& c : components) {
    if (!(c.rate_per_day > 0)) continue;
    const double units = c.scope == FailureScope::Gpu ? gpus_per_node : 1;
    const double mean = 86400.0 / c.rate_per_day;
    double per_unit = horizon_s / mean, per_lemon = per_unit * lemons.rate_factor;
    const DistributionInfo* info = find_distribution(c.distribution);
    if (info && info->for_failures && c.shape > 0) {
      const auto d = info->make(mean, c.shape);
      per_unit = std::max(per_unit, d->cumulative_hazard(horizon_s));
      per_lemon = std::max(per_lemon, lemons.rate_factor * d->cumulative_hazard(horizon_s));
    }
    total += units * ((nodes - bad) * per_unit + bad * per_lemon);
  }
  return total;
}

void FailureModel::scale_rates(double factor) {
  for (auto& c : components) c.rate_per_day *= factor;
}

double FailureModel::share(std::size_t component, int gpus_per_node) const {
  const double total = node_rate_per_day(gpus_per_node);
  if (component >= components.size() || total <= 0) return 0;
  const auto& c = components[component];
  return c.rate_per_day * (c.scope == FailureScope::Gpu ? gpus_per_node : 1) / total;
}

namespace {

// Llama 3 405B pre-training (The Llama 3 Herd of Models, arXiv 2407.21783, §3.3.4 and Table 5): 419
// unexpected interruptions in 54 days on 16,384 H100s = 2,048 nodes x 8. Node-days 2,048 x 54 = 110,592;
// GPU-days 16,384 x 54 = 884,736. The 18 published categories, grouped into six components:
constexpr double kLlama3NodeDays = 2048.0 * 54.0, kLlama3GpuDays = 16384.0 * 54.0;
std::vector<FailureComponent> llama3_components() {
  return {
      {"gpu", FailureScope::Gpu, (148.0 + 19 + 17 + 6 + 6) / kLlama3GpuDays, "exponential", 1.0, true,
       "faulty GPU 148, GPU SRAM 19, GPU system processor 17, GPU thermal 6, silent data corruption 6 (= 196)"},
      {"hbm", FailureScope::Gpu, 72.0 / kLlama3GpuDays, "exponential", 1.0, true, "GPU HBM3 memory 72"},
      {"software", FailureScope::Node, (54.0 + 7 + 2) / kLlama3NodeDays, "exponential", 1.0, false,
       "software bug 54, NCCL watchdog timeout 7, dependency 2 (= 63; restarted in place)"},
      {"host", FailureScope::Node, (32.0 + 3 + 3 + 2 + 2 + 2 + 2) / kLlama3NodeDays, "exponential", 1.0, true,
       "host maintenance 32, SSD 3, power supply 3, server chassis 2, IO expansion board 2, CPU 2, system memory 2 (= 46)"},
      {"switch_cable", FailureScope::Node, 35.0 / kLlama3NodeDays, "exponential", 1.0, true, "network switch / cable 35"},
      {"nic", FailureScope::Node, 7.0 / kLlama3NodeDays, "exponential", 1.0, true, "NIC 7"},
  };
}

FailureModel llama3_preset() {
  FailureModel m;
  m.name = "llama3-405b";
  m.source = "The Llama 3 Herd of Models (arXiv 2407.21783), §3.3.4 and Table 5: 419 unexpected interruptions in 54 days on "
             "2,048 nodes x 8 H100 = 3.79 per 1,000 node-days";
  m.components = llama3_components();
  return m;
}

FailureModel default_preset() {
  FailureModel m = llama3_preset();
  m.name = "default";
  m.source = "about 4 job-killing failures per 1,000 node-days with Llama 3's mix of causes; published fleets span about 3 "
             "(Llama 3, H100, 3.79) to 16 (OPT-175B, A100 in 2021, 2 machine losses a day on 124 nodes), BLOOM's A100s about 4.5";
  m.scale_rates(kDefaultFailuresPer1000NodeDays / m.failures_per_1000_node_days(8));
  return m;
}

// BLOOM-176B (huggingface.co/blog/bloom-megatron-deepspeed): "1-2 GPU failures per week" on 384 A100s
// (48 nodes, 4 spare nodes). The midpoint, 1.5 a week: 1.5 / 7 / 384 per GPU-day = 4.46 per 1,000 node-days.
FailureModel bloom_preset() {
  FailureModel m;
  m.name = "bloom-176b";
  m.source = "huggingface.co/blog/bloom-megatron-deepspeed: 1-2 GPU failures a week on 384 A100 (midpoint 1.5)";
  m.components = {{"gpu", FailureScope::Gpu, 1.5 / 7.0 / 384.0, "exponential", 1.0, true, "GPU failures (1-2 a week on 384 GPUs)"}};
  return m;
}

// OPT-175B (facebookresearch/metaseq, projects/OPT/chronicles): about 2 machine losses a day on 992 A100
// (124 nodes): 2 / 124 = 16.1 per 1,000 node-days; causes were not broken down.
FailureModel opt_preset() {
  FailureModel m;
  m.name = "opt-175b";
  m.source = "facebookresearch/metaseq projects/OPT/chronicles: ~2 machine losses a day on 992 A100 (124 nodes)";
  m.components = {{"host", FailureScope::Node, 2.0 / 124.0, "exponential", 1.0, true, "machine losses of unrecorded cause"}};
  return m;
}

struct Preset {
  const char* name;
  FailureModel (*make)();
};
const Preset kPresets[] = {{"default", default_preset}, {"llama3-405b", llama3_preset}, {"bloom-176b", bloom_preset}, {"opt-175b", opt_preset}};

}  // namespace

std::vector<std::string> failure_preset_names() {
  std::vector<std::string> out;
  for (const auto& p : kPresets) out.push_back(p.name);
  return out;
}

FailureModel failure_preset(const std::string& name, const std::string& path) {
  for (const auto& p : kPresets)
    if (name == p.name) return p.make();
  throw InputError(path, "\"" + name + "\"", "a failure preset (" + join(failure_preset_names()) + ")",
                   "closest: " + join(closest_names(name, failure_preset_names(), 2)));
}

namespace {

void check_distribution(const FailureComponent& c, const std::string& path) {
  // Validates the name and shape now, so a bad one is reported with its JSON path.
  (void)make_distribution(c.distribution, 1.0, c.shape, path, true);
}

void parse_component(const Json& v, const std::string& path, FailureComponent* c, bool is_new) {
  JsonReader r(v, path, nullptr);
  r.mark_read({"failures_per_1000_node_days", "failures_per_1000_gpu_days", "distribution", "shape", "needs_replacement", "causes"});
  const bool node_rate = r.has("failures_per_1000_node_days"), gpu_rate = r.has("failures_per_1000_gpu_days");
  if (node_rate && gpu_rate)
    throw InputError(path, json_value_text(v), "one of failures_per_1000_node_days or failures_per_1000_gpu_days", "not both");
  if (is_new && !node_rate && !gpu_rate)
    throw InputError(path + "/failures_per_1000_node_days", "nothing", "a rate for the new component",
                     "give failures_per_1000_node_days or failures_per_1000_gpu_days");
  namespace lim = reliability_limits;
  if (node_rate) {
    c->scope = FailureScope::Node;
    c->rate_per_day = lim::read_number(r, "failures_per_1000_node_days", 0, "", lim::kComponentRate) / 1000.0;
  }
  if (gpu_rate) {
    c->scope = FailureScope::Gpu;
    c->rate_per_day = lim::read_number(r, "failures_per_1000_gpu_days", 0, "", lim::kComponentRate) / 1000.0;
  }
  r.mark_read({"failures_per_1000_node_days", "failures_per_1000_gpu_days"});
  if (r.has("distribution")) c->distribution = r.get_string("distribution", c->distribution, "");
  if (r.has("shape")) c->shape = lim::read_number(r, "shape", c->shape, "", lim::kWeibullShape);
  if (r.has("needs_replacement")) c->needs_replacement = r.get_bool("needs_replacement", c->needs_replacement, "");
  if (r.has("causes")) c->causes = r.get_string("causes", c->causes, "");
  r.mark_read({"distribution", "shape", "needs_replacement", "causes"});
  r.reject_unknown();
  check_distribution(*c, path + "/distribution");
}

}  // namespace

FailureModel parse_failure_model(const Json& value, const std::string& path, int gpus_per_node, std::vector<AppliedDefault>* defaults) {
  if (value.is_null()) {
    if (defaults)
      defaults->push_back({path, "\"default\"", "about 4 job-killing failures per 1,000 node-days (published fleets: about 3 to 16)"});
    return failure_preset("default", path);
  }
  if (value.is_string()) return failure_preset(value.get<std::string>(), path);
  JsonReader r(value, path, defaults);
  r.mark_read({"preset", "components", "distribution", "shape", "failures_per_1000_node_days", "lemon_nodes", "source"});
  const std::string preset = r.get_string("preset", "default", r.has("components") ? "" : "the default fleet's mix of causes");
  FailureModel m = failure_preset(preset, r.child_path("preset"));
  if (r.has("components")) {
    const Json& comps = r.raw("components");
    if (!comps.is_object()) throw InputError(r.child_path("components"), json_value_text(comps), "an object {name: {rate, distribution, ...}}");
    for (auto it = comps.begin(); it != comps.end(); ++it) {
      auto c = std::find_if(m.components.begin(), m.components.end(), [&](const FailureComponent& x) { return x.name == it.key(); });
      const bool is_new = c == m.components.end();
      if (is_new) {
        m.components.push_back({});
        c = m.components.end() - 1;
        c->name = it.key();
      }
      parse_component(it.value(), r.child_path("components") + "/" + it.key(), &*c, is_new);
    }
    m.name = preset + " (modified)";
  }
  namespace lim = reliability_limits;
  if (r.has("distribution") || r.has("shape")) {
    const std::string dist = r.get_string("distribution", "weibull", "");
    const double shape = lim::read_number(r, "shape", 1.0, "", lim::kWeibullShape);
    for (auto& c : m.components) {
      c.distribution = dist;
      c.shape = shape;
    }
    FailureComponent probe;
    probe.distribution = dist;
    probe.shape = shape;
    check_distribution(probe, r.child_path("distribution"));
  }
  r.mark_read({"distribution", "shape"});
  if (r.has("failures_per_1000_node_days")) {
    const double target = lim::read_number(r, "failures_per_1000_node_days", 0, "", lim::kFailuresPer1000NodeDays);
    const double now = m.failures_per_1000_node_days(gpus_per_node);
    if (now <= 0) throw InputError(r.child_path("failures_per_1000_node_days"), Json(target).dump(), "a model with at least one component to scale");
    m.scale_rates(target / now);
  }
  if (r.has("lemon_nodes")) {
    JsonReader l(r.raw("lemon_nodes"), r.child_path("lemon_nodes"), defaults);
    l.mark_read({"count", "rate_factor", "detect_after"});
    m.lemons.count = lim::read_int(l, "count", 0, "", lim::kLemonNodes);
    m.lemons.rate_factor = lim::read_number(l, "rate_factor", 10.0, l.has("count") ? "a lemon node fails 10 times as often as the rest" : "",
                                            lim::kLemonFactor);
    m.lemons.detect_after = lim::read_int(l, "detect_after", 0, "", lim::kLemonDetectAfter);
    l.reject_unknown();
  }
  if (r.has("source")) m.source = r.get_string("source", m.source, "");
  r.mark_read({"source"});
  r.reject_unknown();
  return m;
}

Json to_json(const FailureModel& m, int gpus_per_node) {
  Json comps = Json::array();
  for (std::size_t i = 0; i < m.components.size(); ++i) {
    const auto& c = m.components[i];
    Json j = {{"name", c.name},
              {"scope", to_string(c.scope)},
              {c.scope == FailureScope::Gpu ? "failures_per_1000_gpu_days" : "failures_per_1000_node_days", 1000.0 * c.rate_per_day},
              {"share", m.share(i, gpus_per_node)},
              {"distribution", c.distribution},
              {"needs_replacement", c.needs_replacement}};
    if (c.distribution == "weibull") j["shape"] = c.shape;
    if (!c.causes.empty()) j["causes"] = c.causes;
    comps.push_back(j);
  }
  Json j = {{"preset", m.name},
            {"failures_per_1000_node_days", m.failures_per_1000_node_days(gpus_per_node)},
            {"components", comps},
            {"source", m.source}};
  if (m.lemons.count > 0)
    j["lemon_nodes"] = {{"count", m.lemons.count}, {"rate_factor", m.lemons.rate_factor}, {"detect_after", m.lemons.detect_after}};
  return j;
}

}  // namespace trainsim
