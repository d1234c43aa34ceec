#include "job_failures.hpp"

#include <algorithm>
#include <cmath>

#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"
#include "models/core/name_registry.hpp"
#include "models/core/units.hpp"

namespace trainsim::sim::cluster {

namespace {

using Json = nlohmann::json;

// The GPU-job rows of the summaries in ../shared/traces/ (fail_rate_gpu, complete_rate_gpu, fail_gpu_time,
// complete_gpu_time). Philly's row is left out: its failed jobs held 1.2x the completed jobs' GPU time at half their
// count, so a failed run would have to go on 2.4 times as long as a whole job: failed jobs there were not of the
// completed jobs' sizes, which the failure point's derivation assumes.
const NameRegistry<JobFailurePreset>& presets() {
  static const NameRegistry<JobFailurePreset> all = [] {
    NameRegistry<JobFailurePreset> r;
    r.add({"helios", 0.155, 0.624, 7288334702.0, 39994296320.0,
           "Helios (SenseTime, 4 clusters, 6,220 GPUs, 2020; Hu et al., SC'21): helios-summary/helios_cluster_summary.csv, row total"});
    r.add({"acme-seren", 0.429, 0.497, 2675447459.0, 4560592618.0,
           "Acme Seren (Shanghai AI Lab, 2023; Hu et al., NSDI'24): acme-summary/cluster_summary.csv, row Seren"});
    r.add({"acme-kalos", 0.397, 0.541, 426292851.0, 1667685146.0,
           "Acme Kalos (Shanghai AI Lab, 2023; Hu et al., NSDI'24): acme-summary/cluster_summary.csv, row Kalos"});
    return r;
  }();
  return all;
}

double preset_failure_point(const JobFailurePreset& p) { return p.fail_gpu_time / p.complete_gpu_time * (p.complete_rate / p.fail_rate); }

}  // namespace

const std::vector<JobFailurePreset>& job_failure_presets() { return presets().entries(); }

double JobFailureSpec::failure_point(Rng& rng) const {
  // Beta(a, 1) is U^(1/a): mean a / (a + 1) = m gives a = m / (1 - m).
  const double m = std::clamp(failure_point_mean, 1e-6, 1 - 1e-6);
  return std::pow(rng.uniform(), (1 - m) / m);
}

double JobFailureSpec::backoff_s(int retry) const {
  return std::min(retry_backoff_max_s, retry_backoff_s * std::ldexp(1.0, std::clamp(retry, 1, 60) - 1));
}

JobFailureSpec parse_job_failures(const Json& value, const std::string& path, std::vector<AppliedDefault>* defaults) {
  JobFailureSpec f;
  if (value.is_string() && value.get<std::string>() == "none") return f;
  Json object = value.is_string() ? Json{{"preset", value}} : value;
  if (!object.is_object())
    throw InputError(path, json_value_text(value), "a preset name (" + join(presets().names()) + "), \"none\", or an object {preset, retries, ...}");
  JsonReader r(object, path, defaults);
  double probability = 0, point = 0.5;
  f.name = "custom";
  if (r.has("preset")) {
    const std::string name = r.get_string("preset", "", "");
    const JobFailurePreset* p = presets().find(name);
    if (!p) presets().unknown(path + "/preset", name, {"a job-failure preset"});
    f.name = p->name;
    probability = p->fail_rate;
    point = preset_failure_point(*p);
  }
  f.attempt_failure_probability = r.get_number("attempt_failure_probability", probability, "", 0, 0.99);
  f.failure_point_mean = r.get_number("failure_point_mean", point, "", 0.01, 0.99);
  f.retries = r.get_int("retries", 0, "", 0, 100);
  f.retry_backoff_s = r.get_quantity("retry_backoff", Quantity::Time, 10, "", {0, 86400});
  f.retry_backoff_max_s = r.get_quantity("retry_backoff_max", Quantity::Time, 360, "", {0, 86400});
  r.reject_unknown();
  if (f.retry_backoff_max_s < f.retry_backoff_s)
    throw InputError(path + "/retry_backoff_max", format_quantity(f.retry_backoff_max_s, Quantity::Time),
                     "at least retry_backoff (" + format_quantity(f.retry_backoff_s, Quantity::Time) + ")");
  if (!f.on()) f.name = "none";
  return f;
}

Json to_json(const JobFailureSpec& f) {
  if (!f.on()) return "none";
  // The keys parse_job_failures reads (times in seconds), so the resolved scenario reads back the same.
  Json j = {{"attempt_failure_probability", f.attempt_failure_probability},
            {"failure_point_mean", f.failure_point_mean},
            {"retries", f.retries},
            {"retry_backoff", f.retry_backoff_s},
            {"retry_backoff_max", f.retry_backoff_max_s}};
  if (f.name != "custom") j["preset"] = f.name;
  return j;
}

}  // namespace trainsim::sim::cluster
