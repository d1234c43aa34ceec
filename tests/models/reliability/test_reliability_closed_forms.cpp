// The closed forms added beside Young/Daly: Daly's complete model, its exact optimum (Lambert W), and
// the mean work lost per failure.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <cmath>
#include <initializer_list>
#include <utility>

#include "models/reliability/reliability.hpp"

using namespace trainsim;

TEST_CASE("Lambert W0") {
  CHECK(lambert_w0(0) == trainsim::test::approx(0));
  CHECK(lambert_w0(std::exp(1.0)) == trainsim::test::approx(1.0));  // 1·e^1 = e
  CHECK(lambert_w0(-std::exp(-1.0)) == trainsim::test::approx(-1.0));
  for (double x : {-0.3678, -0.3, -0.1, 0.5, 10.0}) {
    const double w = lambert_w0(x);
    CHECK(w * std::exp(w) == trainsim::test::approx(x).epsilon(1e-12));
  }
}

TEST_CASE("Daly's complete model: the exact optimum, close to Daly's series and Young's") {
  // reliability.json's cases: M 3.09 h with delta 60 s and 300 s; M 28.8 h with 60 s.
  for (auto [m_h, delta] : {std::pair{3.09, 60.0}, std::pair{3.09, 300.0}, std::pair{28.8, 60.0}}) {
    const double m = m_h * 3600;
    const double opt = optimal_interval_s(delta, m);
    CAPTURE(m_h);
    CAPTURE(delta);
    // It maximises the complete model ...
    CHECK(expected_ettr(delta, opt, 0, m) >= expected_ettr(delta, opt * 1.02, 0, m));
    CHECK(expected_ettr(delta, opt, 0, m) >= expected_ettr(delta, opt * 0.98, 0, m));
    // ... and Daly's perturbation series approximates it to a fraction of a percent here.
    CHECK(daly_interval_s(delta, m) == trainsim::test::approx(opt).epsilon(0.01));
  }
}

TEST_CASE("complete model vs first-order waste where the first-order assumptions hold") {
  // M = 24 h >> tau = 1 h >> delta = 30 s, R = 5 min: the two agree to a few hundredths of a point.
  const double m = 86400, tau = 3600, delta = 30, r = 300;
  CHECK(expected_ettr(delta, tau, r, m) == trainsim::test::approx(1 - first_order_waste(delta, tau, r, m)).epsilon(0.001));
  // No failures: only the checkpoint pauses are lost.
  CHECK(expected_ettr(delta, tau, r, INFINITY) == trainsim::test::approx(tau / (tau + delta)));
}

TEST_CASE("mean work lost per failure tends to half an interval") {
  // BLOOM: 3-hour checkpoints, failures days apart: about 1.5 h per crash.
  CHECK(expected_lost_work_s(60, 3 * 3600, 5 * 86400) / 3600 == trainsim::test::approx(1.5).epsilon(0.02));
  // With M >> tau the limit (tau^2/2 + tau·delta)/(tau + delta).
  const double tau = 1000, delta = 100;
  CHECK(expected_lost_work_s(delta, tau, 1e9) == trainsim::test::approx((tau * tau / 2 + tau * delta) / (tau + delta)).epsilon(1e-4));
}

TEST_CASE("first-order ETTR: none where the first-order waste exceeds 100% (never a negative ETTR)") {
  // The audit saw "1 - first-order waste -674.57%" (a waste of 7.75). Here an MTBF of 10 min against a recovery
  // of 9 min and a 60 s checkpoint every 268 s (Young's interval): a waste of 1.35.
  const double delta = 60, tau = 268, r = 540, m = 600;
  CHECK(first_order_waste(delta, tau, r, m) > 1);
  CHECK_FALSE(first_order_ettr(delta, tau, r, m).has_value());
  CHECK_FALSE(first_order_ettr(4000, 600, 300, 180).has_value());  // a waste of 10
  CHECK_FALSE(first_order_ettr(60, INFINITY, 300, 3600).has_value());  // never checkpointing: infinite waste
  // Where it holds, 1 - waste.
  REQUIRE(first_order_ettr(30, 3600, 300, 86400).has_value());
  CHECK(*first_order_ettr(30, 3600, 300, 86400) == trainsim::test::approx(1 - first_order_waste(30, 3600, 300, 86400)));
  // The complete model stays a number in [0, 1] however frequent the failures.
  for (double mtbf : {1.0, 60.0, 600.0}) {
    const double e = expected_ettr(60, 268, 540, mtbf);
    CHECK(e >= 0);
    CHECK(e <= 1);
  }
  // Without failures or without checkpoints it has its limits, never NaN.
  CHECK(expected_ettr(60, INFINITY, 300, INFINITY) == 1.0);
  CHECK(expected_ettr(60, INFINITY, 300, 3600) == 0.0);
}
