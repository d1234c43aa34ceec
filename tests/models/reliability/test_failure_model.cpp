// Failure model: presets against ../shared/reference/reliability.json, the distribution registry,
// Weibull k = 1 against the exponential, and the scenario's "failures" value.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <cmath>

#include "models/core/errors.hpp"
#include "models/reliability/failure_model.hpp"
#include "models/reliability/reliability.hpp"
#include "tests/models/reference_data.hpp"

using namespace trainsim;

namespace {
// Mean of a distribution by integrating its quantile function over (0, 1) (midpoint rule).
double integrated_mean(const TimeDistribution& d, int n = 200000) {
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += d.quantile((i + 0.5) / n);
  return sum / n;
}
double count_of(const FailureModel& m, const std::string& name, double node_days, double gpu_days) {
  for (const auto& c : m.components)
    if (c.name == name) return c.rate_per_day * (c.scope == FailureScope::Gpu ? gpu_days : node_days);
  return -1;
}
}  // namespace

TEST_CASE("llama3-405b preset: the published breakdown as rates per node-day and GPU-day") {
  // Llama 3 paper §3.3.4, Table 5: 419 unexpected interruptions in 54 days on 2,048 nodes x 8 H100.
  const FailureModel m = failure_preset("llama3-405b");
  const double node_days = 2048.0 * 54, gpu_days = 16384.0 * 54;
  CHECK(m.failures_per_1000_node_days(8) == trainsim::test::approx(1000.0 * 419 / node_days));
  CHECK(m.failures_per_1000_node_days(8) == trainsim::test::approx(3.79).epsilon(0.001));
  // The job's expected interruptions over the window: exactly 419, and the closed form agrees.
  CHECK(m.job_rate_per_day(2048, 8) * 54 == trainsim::test::approx(419.0));
  CHECK(m.job_mtbf_s(2048, 8) == trainsim::test::approx(job_mtbf_s(2048, m.failures_per_1000_node_days(8))));
  // Each component reproduces the categories it sums.
  CHECK(count_of(m, "gpu", node_days, gpu_days) == trainsim::test::approx(148 + 19 + 17 + 6 + 6));
  CHECK(count_of(m, "hbm", node_days, gpu_days) == trainsim::test::approx(72));
  CHECK(count_of(m, "software", node_days, gpu_days) == trainsim::test::approx(54 + 7 + 2));
  CHECK(count_of(m, "host", node_days, gpu_days) == trainsim::test::approx(32 + 3 + 3 + 2 + 2 + 2 + 2));
  CHECK(count_of(m, "switch_cable", node_days, gpu_days) == trainsim::test::approx(35));
  CHECK(count_of(m, "nic", node_days, gpu_days) == trainsim::test::approx(7));
  for (const auto& c : m.components) CHECK(c.needs_replacement == (c.name != "software"));

  auto ref = test::reference_file("reliability.json");
  if (!ref) {
    MESSAGE("skipped the reference comparison: ../shared/reference/reliability.json not found");
    return;
  }
  for (const auto& run : (*ref)["runs"]) {
    if (run["id"] != "llama3-405b") continue;
    double total = 0;
    for (auto it = run["unexpected_breakdown"].begin(); it != run["unexpected_breakdown"].end(); ++it) total += it.value().get<double>();
    CHECK(total == trainsim::test::approx(run["interruptions_unexpected"].get<double>()));
    double modelled = 0;
    for (const auto& c : m.components) modelled += c.rate_per_day * (c.scope == FailureScope::Gpu ? gpu_days : node_days);
    CHECK(modelled == trainsim::test::approx(total));
    CHECK(run["gpus"].get<double>() == trainsim::test::approx(16384));
  }
}

TEST_CASE("bloom-176b, opt-175b and default presets") {
  // BLOOM (huggingface.co/blog/bloom-megatron-deepspeed): 1-2 GPU failures a week on 384 GPUs, midpoint 1.5.
  const FailureModel bloom = failure_preset("bloom-176b");
  CHECK(bloom.job_rate_per_day(48, 8) * 7 == trainsim::test::approx(1.5));
  CHECK(bloom.failures_per_1000_node_days(8) == trainsim::test::approx(4.464).epsilon(0.001));
  // OPT-175B chronicles: ~2 machine losses a day on 124 nodes (992 GPUs).
  const FailureModel opt = failure_preset("opt-175b");
  CHECK(opt.job_rate_per_day(124, 8) == trainsim::test::approx(2.0));
  // Default: 4 per 1,000 node-days with Llama 3's mix, inside the published range.
  const FailureModel def = failure_preset("default");
  CHECK(def.failures_per_1000_node_days(8) == trainsim::test::approx(kDefaultFailuresPer1000NodeDays));
  CHECK(def.share(0, 8) == trainsim::test::approx(failure_preset("llama3-405b").share(0, 8)));
  for (const auto* m : {&bloom, &opt, &def}) {
    CHECK(m->failures_per_1000_node_days(8) >= kPublishedFailuresPer1000NodeDaysLow);
    CHECK(m->failures_per_1000_node_days(8) <= kPublishedFailuresPer1000NodeDaysHigh + 0.2);
  }
  CHECK_THROWS_WITH_AS(failure_preset("llama3"), doctest::Contains("closest: llama3-405b"), InputError);
}

TEST_CASE("lemon nodes raise the job's rate") {
  FailureModel m = failure_preset("default");
  const double base = m.job_rate_per_day(100, 8);
  m.lemons = {4, 10.0, 0};
  CHECK(m.job_rate_per_day(100, 8) == trainsim::test::approx(base * (96 + 4 * 10.0) / 100));
  CHECK(m.job_mtbf_s(100, 8) == trainsim::test::approx(86400 / m.job_rate_per_day(100, 8)));
}

TEST_CASE("distribution registry: names, means, hazards") {
  std::vector<std::string> names;
  for (const auto& d : time_distributions()) names.push_back(d.name);
  CHECK(names == std::vector<std::string>{"exponential", "fixed", "lognormal", "weibull"});
  CHECK(find_distribution("weibull")->for_failures);
  CHECK_FALSE(find_distribution("lognormal")->for_failures);
  CHECK_THROWS_WITH_AS(make_distribution("gamma", 1, 1, "/x"), doctest::Contains("/x: got \"gamma\"; expected one of exponential, fixed"),
                       InputError);
  CHECK_THROWS_WITH_AS(make_distribution("lognormal", 1, 1, "/x", true), doctest::Contains("closed-form hazard"), InputError);
  CHECK_THROWS_AS(make_distribution("weibull", 1, 0, "/x"), InputError);

  for (double k : {0.5, 0.7, 1.0, 1.5, 3.0}) {
    CAPTURE(k);
    auto w = make_distribution("weibull", 3600, k, "/x", true);
    CHECK(w->mean() == trainsim::test::approx(3600));
    CHECK(integrated_mean(*w) == trainsim::test::approx(3600).epsilon(k < 0.6 ? 0.01 : 0.002));
    for (double t : {10.0, 3600.0, 86400.0}) CHECK(w->inverse_cumulative_hazard(w->cumulative_hazard(t)) == trainsim::test::approx(t));
  }
  auto ln = make_distribution("lognormal", 86400, 1.0, "/x");
  CHECK(integrated_mean(*ln) == trainsim::test::approx(86400).epsilon(0.005));
  CHECK(ln->quantile(0.5) == trainsim::test::approx(86400 * std::exp(-0.5)).epsilon(1e-6));  // median e^mu
  CHECK(make_distribution("fixed", 42, 1, "/x")->quantile(0.9) == 42);
}

TEST_CASE("Weibull with k = 1 equals the exponential") {
  // In distribution (so in mean): S(t) = exp(-(t/eta)^1) with eta = mean / Gamma(2) = mean.
  auto e = make_distribution("exponential", 5000, 1, "/x", true);
  auto w = make_distribution("weibull", 5000, 1, "/x", true);
  CHECK(w->mean() == e->mean());
  CHECK(w->memoryless());
  for (double u : {0.01, 0.3, 0.5, 0.9, 0.999}) CHECK(w->quantile(u) == trainsim::test::approx(e->quantile(u)).epsilon(1e-12));
  for (double t : {1.0, 5000.0, 1e6}) CHECK(w->cumulative_hazard(t) == trainsim::test::approx(e->cumulative_hazard(t)).epsilon(1e-12));
}

TEST_CASE("the scenario's failures value") {
  std::vector<AppliedDefault> defaults;
  CHECK(parse_failure_model(nullptr, "/reliability/failures", 8, &defaults).name == "default");
  CHECK(defaults.size() == 1);
  CHECK(parse_failure_model("bloom-176b", "/f", 8, nullptr).name == "bloom-176b");

  const nlohmann::json j = {{"preset", "llama3-405b"},
                            {"failures_per_1000_node_days", 8},
                            {"distribution", "weibull"},
                            {"shape", 0.8},
                            {"components", {{"gpu", {{"failures_per_1000_gpu_days", 1.0}}}, {"fan", {{"failures_per_1000_node_days", 0.5}}}}},
                            {"lemon_nodes", {{"count", 3}, {"rate_factor", 20}, {"detect_after", 2}}}};
  const FailureModel m = parse_failure_model(j, "/f", 8, nullptr);
  CHECK(m.failures_per_1000_node_days(8) == trainsim::test::approx(8.0));
  CHECK(m.components.size() == 7);
  CHECK(m.components.back().name == "fan");
  for (const auto& c : m.components) {
    CHECK(c.distribution == "weibull");
    CHECK(c.shape == 0.8);
  }
  CHECK(m.lemons.count == 3);
  CHECK(m.lemons.rate_factor == 20);
  CHECK(m.lemons.detect_after == 2);

  CHECK_THROWS_WITH_AS(parse_failure_model({{"presett", "default"}}, "/reliability/failures", 8, nullptr),
                       doctest::Contains("/reliability/failures/presett: got \"default\"; expected no such field here") , InputError);
  CHECK_THROWS_WITH_AS(parse_failure_model({{"components", {{"gpu", {{"distribution", "lognormal"}}}}}}, "/f", 8, nullptr),
                       doctest::Contains("/f/components/gpu/distribution"), InputError);
  CHECK_THROWS_WITH_AS(parse_failure_model({{"components", {{"pump", {{"shape", 2}}}}}}, "/f", 8, nullptr),
                       doctest::Contains("/f/components/pump/failures_per_1000_node_days: got nothing"), InputError);
  CHECK_THROWS_WITH_AS(parse_failure_model("nope", "/f", 8, nullptr), doctest::Contains("/f: got \"nope\"; expected a failure preset"), InputError);
}

TEST_CASE("expected failures over a horizon: nodes x rate x time, more early on for Weibull k < 1") {
  const FailureModel llama = failure_preset("llama3-405b");
  // The Llama 3 run: 2,048 nodes x 8 GPUs for 54 days, 419 failures.
  CHECK(llama.expected_failures(2048, 8, 54 * 86400.0) == trainsim::test::approx(419).epsilon(0.001));
  CHECK(llama.expected_failures(2048, 8, 54 * 86400.0) == trainsim::test::approx(54 * 86400.0 / llama.job_mtbf_s(2048, 8)).epsilon(1e-9));
  // Lemons count at their factor.
  FailureModel lemons = llama;
  lemons.lemons = {8, 10.0, 0};
  CHECK(lemons.expected_failures(2048, 8, 86400.0) == trainsim::test::approx(86400.0 / lemons.job_mtbf_s(2048, 8)).epsilon(1e-9));
  // Weibull k = 0.7: new parts fail early (the cumulative hazard exceeds time / mean over a short horizon).
  FailureModel w = llama;
  for (auto& c : w.components) {
    c.distribution = "weibull";
    c.shape = 0.7;
  }
  CHECK(w.expected_failures(2048, 8, 54 * 86400.0) > 1.5 * 419);
  CHECK(w.expected_failures(2048, 8, 0) == 0);
}

TEST_CASE("failure inputs outside their plausible range are errors naming the path") {
  using Json = nlohmann::json;
  CHECK_THROWS_WITH_AS(parse_failure_model(Json{{"failures_per_1000_node_days", 5000}}, "/reliability/failures", 8, nullptr),
                       doctest::Contains("/reliability/failures/failures_per_1000_node_days: got 5000; expected a rate from 0.01 to 1000"),
                       InputError);
  CHECK_THROWS_WITH_AS(parse_failure_model(Json{{"failures_per_1000_node_days", 0}}, "/f", 8, nullptr),
                       doctest::Contains("/f/failures_per_1000_node_days: got 0"), InputError);
  CHECK_THROWS_WITH_AS(parse_failure_model(Json{{"shape", 0.1}}, "/f", 8, nullptr),
                       doctest::Contains("/f/shape: got 0.1; expected a Weibull shape k from 0.5 to 10"), InputError);
  CHECK_THROWS_WITH_AS(parse_failure_model(Json{{"components", {{"gpu", {{"failures_per_1000_gpu_days", -1}}}}}}, "/f", 8, nullptr),
                       doctest::Contains("/f/components/gpu/failures_per_1000_gpu_days: got -1"), InputError);
  CHECK_THROWS_WITH_AS(parse_failure_model(Json{{"lemon_nodes", {{"count", 2}, {"rate_factor", 1e5}}}}, "/f", 8, nullptr),
                       doctest::Contains("/f/lemon_nodes/rate_factor: got 100000.0; expected a rate factor from 1 to 1000"), InputError);
  CHECK_THROWS_WITH_AS(parse_failure_model(Json{{"lemon_nodes", {{"count", 2.5}}}}, "/f", 8, nullptr),
                       doctest::Contains("/f/lemon_nodes/count: got 2.5"), InputError);
  // In range: accepted.
  CHECK(parse_failure_model(Json{{"failures_per_1000_node_days", 16}, {"shape", 0.5}}, "/f", 8, nullptr).failures_per_1000_node_days(8) ==
        trainsim::test::approx(16));
}
