// Closed forms of ../shared/reference/reliability.json: Young/Daly intervals and the Llama 3 failure count.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <cmath>

#include "models/reliability/reliability.hpp"
#include "tests/models/reference_data.hpp"

using namespace trainsim;

TEST_CASE("Young and Daly intervals match reliability.json's closed-form checks") {
  auto ref = test::reference_file("reliability.json");
  if (!ref) {
    MESSAGE("skipped: ../shared/reference/reliability.json not found");
    return;
  }
  for (const auto& c : (*ref)["closed_form_checks"]) {
    CAPTURE(c["id"].get<std::string>());
    const double mtbf = c["mtbf_h"].get<double>() * 3600, delta = c["checkpoint_cost_s"].get<double>();
    // The file gives minutes to one decimal: within half of 0.1 min.
    CHECK(std::fabs(young_interval_s(delta, mtbf) / 60 - c["young_interval_min"].get<double>()) <= 0.05);
    CHECK(std::fabs(daly_interval_s(delta, mtbf) / 60 - c["daly_interval_min"].get<double>()) <= 0.05);
  }
}

TEST_CASE("Llama 3 shape: 2,048 nodes at 3.79 failures per 1,000 node-days for 54 days") {
  // 2048 x 3.79/1000 x 54 = 419.1 expected interruptions (the paper counted 419 unexpected ones).
  CHECK(expected_interruptions(2048, 3.79, 54) == trainsim::test::approx(419.14).epsilon(1e-4));
  // MTBF = 1 day / (2048 x 0.00379) = 11,131 s = 3.09 h, the figure behind young-daly-1.
  CHECK(job_mtbf_s(2048, 3.79) / 3600 == trainsim::test::approx(3.09).epsilon(0.002));
}

TEST_CASE("first-order waste: checkpoint share plus half an interval and the recovery per failure") {
  // delta 60 s, tau 1200 s, R 600 s, M 3 h: 60/1200 + (600 + 600)/10800 = 0.05 + 0.1111.
  CHECK(first_order_waste(60, 1200, 600, 10800) == trainsim::test::approx(0.05 + 1200.0 / 10800));
  // Daly's interval never does worse than Young's under the first-order model at these points.
  for (double delta : {30.0, 60.0, 300.0}) {
    const double m = 3.09 * 3600;
    CHECK(first_order_waste(delta, daly_interval_s(delta, m), 0, m) <= first_order_waste(delta, young_interval_s(delta, m), 0, m) + 1e-3);
  }
}
