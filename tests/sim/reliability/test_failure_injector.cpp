// The failure injector: counts and means against the rates, Weibull k = 1 against the exponential,
// cohort sampling against the minimum of n Weibull clocks, lemons, pool changes, and reset().
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "models/reliability/failure_model.hpp"
#include "sim/reliability/failure_injector.hpp"

using namespace trainsim;
using namespace trainsim::sim;

namespace {

FailureModel one_component(double per_node_day, const std::string& dist = "exponential", double shape = 1.0,
                           FailureScope scope = FailureScope::Node) {
  FailureModel m;
  m.name = "test";
  m.components = {{"part", scope, per_node_day, dist, shape, true, ""}};
  return m;
}

// Failures in [0, horizon) when every failed part is renewed in place.
int count_until(FailureInjector& inj, double horizon) {
  int n = 0;
  while (inj.peek().time_s < horizon) {
    inj.renew();
    ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("exponential failures: the count over a window matches nodes x rate x time") {
  // The Llama 3 shape: 2,048 nodes x 8 GPUs at 419 / (2,048 x 54) per node-day for 54 days = 419 expected.
  FailureInjector inj(failure_preset("llama3-405b"), 2048, 8);
  double total = 0;
  const int seeds = 100;
  for (int s = 0; s < seeds; ++s) {
    inj.reset(static_cast<std::uint64_t>(s) + 1);
    total += count_until(inj, 54 * 86400.0);
  }
  // Poisson(419): the mean of 100 runs has a standard error of 2.05; allow 4 of them.
  CHECK(total / seeds == trainsim::test::approx(419.0).epsilon(0.02));
}

TEST_CASE("Weibull with k = 1 draws exactly the exponential's failures") {
  FailureInjector e(one_component(0.01), 64, 8), w(one_component(0.01, "weibull", 1.0), 64, 8);
  e.reset(42);
  w.reset(42);
  double sum_e = 0, sum_w = 0;
  for (int i = 0; i < 2000; ++i) {
    const FailureEvent a = e.peek(), b = w.peek();
    REQUIRE(a.time_s == trainsim::test::approx(b.time_s).epsilon(1e-9));
    CHECK(a.node == b.node);
    sum_e += a.time_s;
    sum_w += b.time_s;
    e.renew();
    w.renew();
  }
  CHECK(sum_e == trainsim::test::approx(sum_w).epsilon(1e-9));
}

TEST_CASE("Weibull cohort: the first of n failures has the mean of the minimum of n Weibulls") {
  // min of n Weibull(k, eta) is Weibull(k, eta·n^(-1/k)): mean eta·n^(-1/k)·Gamma(1 + 1/k).
  for (double k : {0.5, 0.8, 2.0}) {
    CAPTURE(k);
    const double mean_days = 100, n = 256;
    const double eta = mean_days * 86400 / std::tgamma(1 + 1 / k);
    const double expected = eta * std::pow(n, -1 / k) * std::tgamma(1 + 1 / k);
    FailureInjector inj(one_component(1 / mean_days, "weibull", k), static_cast<int>(n), 8);
    double sum = 0;
    const int seeds = 40000;  // k = 0.5 has a coefficient of variation of 2.2: 1.1% standard error
    for (int s = 0; s < seeds; ++s) {
      inj.reset(static_cast<std::uint64_t>(s) + 7);
      sum += inj.peek().time_s;
    }
    CHECK(sum / seeds == trainsim::test::approx(expected).epsilon(0.04));
  }
}

TEST_CASE("Weibull renewals: the long-run rate is 1 / mean per part") {
  // Renewal theorem: failures / time -> n / mean, whatever the shape (checked with k = 2, wear-out).
  const double mean_days = 10;
  FailureInjector inj(one_component(1 / mean_days, "weibull", 2.0, FailureScope::Gpu), 16, 8);
  inj.reset(3);
  const double horizon = 2000 * 86400.0;
  const int n = count_until(inj, horizon);
  CHECK(n / (horizon / 86400) == trainsim::test::approx(16 * 8 / mean_days).epsilon(0.03));
}

TEST_CASE("lemon nodes fail more often until they are found") {
  FailureModel m = one_component(0.01);
  m.lemons = {4, 10.0, 0};
  FailureInjector inj(m, 100, 8);
  double total = 0, lemon = 0;
  const double horizon = 365 * 86400.0;
  for (int s = 0; s < 40; ++s) {
    inj.reset(static_cast<std::uint64_t>(s) + 11);
    while (inj.peek().time_s < horizon) {
      lemon += inj.peek().lemon ? 1 : 0;
      inj.renew();
      ++total;
    }
  }
  // (96 + 4 x 10) x 0.01 x 365 = 496.4 a run, 146 of them on lemons.
  CHECK(total / 40 == trainsim::test::approx(496.4).epsilon(0.03));
  CHECK(lemon / 40 == trainsim::test::approx(146.0).epsilon(0.06));
  // Found after 2 failures each: at most 8 lemon failures a run.
  m.lemons.detect_after = 2;
  FailureInjector found(m, 100, 8);
  found.reset(5);
  int lemon_failures = 0;
  while (found.peek().time_s < horizon) {
    lemon_failures += found.peek().lemon ? 1 : 0;
    found.renew();
  }
  CHECK(lemon_failures <= 8);
  CHECK_FALSE(found.is_lemon(0));
}

TEST_CASE("nodes out of the pool do not fail; the rate follows the pool") {
  FailureInjector inj(one_component(0.05, "weibull", 0.7), 100, 8);
  inj.reset(9);
  for (int n = 0; n < 50; ++n) inj.remove_node(n, 0);
  CHECK(inj.nodes_up() == 50);
  for (int i = 0; i < 500; ++i) {
    CHECK(inj.peek().node >= 50);
    inj.renew();
  }
  // take_down: the failed node leaves; restore brings it back.
  const int node = inj.peek().node;
  const double t = inj.peek().time_s;
  inj.take_down();
  CHECK_FALSE(inj.is_up(node));
  CHECK(inj.nodes_up() == 49);
  inj.restore_node(node, t);
  CHECK(inj.is_up(node));
  // The exponential count halves with half the pool.
  FailureInjector e(one_component(0.1), 200, 8);
  double full = 0, half = 0;
  for (int s = 0; s < 20; ++s) {
    e.reset(static_cast<std::uint64_t>(s));
    full += count_until(e, 100 * 86400.0);
    e.reset(static_cast<std::uint64_t>(s) + 1000);
    for (int n = 0; n < 100; ++n) e.remove_node(n, 0);
    half += count_until(e, 100 * 86400.0);
  }
  CHECK(half / full == trainsim::test::approx(0.5).epsilon(0.05));
}

TEST_CASE("reset() returns to the same start: a run depends only on its seed") {
  FailureModel m = failure_preset("llama3-405b");
  m.components[0].distribution = "weibull";
  m.components[0].shape = 0.7;
  m.lemons = {3, 20.0, 2};
  FailureInjector inj(m, 64, 8);
  auto trace = [&](std::uint64_t seed) {
    inj.reset(seed);
    std::vector<double> out;
    for (int i = 0; i < 300; ++i) {
      const FailureEvent f = inj.peek();
      out.push_back(f.time_s + f.node * 1e-3);
      if (i % 7 == 3) {  // mix in pool changes
        inj.take_down();
        inj.restore_node(f.node, f.time_s + 3600);
      } else {
        inj.renew();
      }
    }
    return out;
  };
  const auto a = trace(123);
  trace(456);
  trace(789);
  CHECK(trace(123) == a);
  inj = FailureInjector(m, 64, 8);  // a fresh injector gives the same run too
  CHECK(trace(123) == a);
}

TEST_CASE("pool changes between failures leave the failure rate of the nodes in the pool") {
  // 17 nodes of the default model (exponential parts, thinned while out). Every hour on average a node leaves
  // or comes back (at least 12 stay), as repairs, spares and drains do in the cluster simulator; failures must
  // still come at the rate of the parts in the pool: the count over a year against the integral of nodes in the
  // pool x the rate. Deciding the thinning again at every peek after a change rejected nearly every candidate.
  const FailureModel model = failure_preset("default");
  FailureInjector inj(model, 17, 8);
  const double rate = model.failures_per_1000_node_days(8) / 1000 / 86400;  // per node-second
  std::mt19937_64 rng(5);
  std::exponential_distribution<double> gap(1.0 / 3600);
  double events = 0, expected = 0;
  for (int s = 0; s < 100; ++s) {
    inj.reset(static_cast<std::uint64_t>(s) + 1);
    double t = 0, next_change = gap(rng);
    const double end = 365 * 86400.0;
    while (t < end) {
      const double tf = inj.peek().time_s;
      const double stop = std::min({tf, next_change, end});
      expected += (stop - t) * inj.nodes_up() * rate;
      t = stop;
      if (t >= end) break;
      if (tf <= next_change) {
        ++events;
        if (inj.peek().needs_replacement) {
          const int node = inj.peek().node;
          inj.take_down();
          inj.restore_node(node, t);  // a replacement at once: the pool keeps its size
        } else {
          inj.renew();
        }
      } else {
        const int node = static_cast<int>(rng() % 17);
        if (inj.is_up(node) && inj.nodes_up() > 12) inj.remove_node(node, t);
        else if (!inj.is_up(node)) inj.restore_node(node, t);
        next_change = t + gap(rng);
      }
    }
  }
  MESSAGE("failures ", events / 100, " a year against ", expected / 100, " expected");
  // Poisson: about 1,700 events, a standard error of 2.4%; allow 4 of them.
  CHECK(events == trainsim::test::approx(expected).epsilon(0.10));
}
