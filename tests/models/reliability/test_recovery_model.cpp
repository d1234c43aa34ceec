// Recovery model: the durations from a failure to training again, spares, the scenario's object.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include "models/core/errors.hpp"
#include "models/reliability/recovery_model.hpp"

using namespace trainsim;
using Json = nlohmann::json;

TEST_CASE("recovery: detection + drain + (spare swap) + restart + reload + warm-up") {
  RecoverySettings s;
  const RecoveryTimes hw = recovery_times(s, 40, true), sw = recovery_times(s, 40, false);
  CHECK(hw.total() == trainsim::test::approx(60 + 30 + 120 + 180 + 40 + 60));
  CHECK(sw.total() == trainsim::test::approx(60 + 30 + 180 + 40 + 60));  // software restarts in place: no swap
  CHECK(mean_recovery_s(s, 40, 0.85) == trainsim::test::approx(0.85 * hw.total() + 0.15 * sw.total()));
  s.fixed_total_s = 600;
  CHECK(recovery_times(s, 40, true).total() == 600);
  CHECK(recovery_times(s, 40, true).fixed);
  CHECK(mean_recovery_s(s, 40, 0.3) == 600);
}

TEST_CASE("default spares: one per 100 nodes, at least one") {
  CHECK(default_spare_nodes(1) == 1);
  CHECK(default_spare_nodes(48) == 1);
  CHECK(default_spare_nodes(2048) == 21);
}

TEST_CASE("the scenario's recovery object") {
  std::vector<AppliedDefault> d;
  RecoverySettings s = parse_recovery_settings(Json{{"detection", "nccl-timeout"}, {"restart", "5min"}, {"repair", {{"mean", "8h"}, {"distribution", "weibull"}, {"shape", 1.5}}}},
                                               "/reliability/recovery", &d);
  CHECK(s.detection_s == 600);
  CHECK(s.restart_s == 300);
  CHECK(s.repair_mean_s == 8 * 3600);
  CHECK(s.repair_distribution == "weibull");
  CHECK(parse_recovery_settings(Json{{"detection", "45s"}}, "/r", nullptr).detection_s == 45);
  CHECK(parse_recovery_settings(Json{{"total", "10m"}}, "/r", nullptr).fixed_total_s == 600);
  bool known = false;
  CHECK(detection_seconds("heartbeat", &known) == 60);
  CHECK(known);
  // Defaults are recorded, not silent.
  d.clear();
  parse_recovery_settings(nullptr, "/reliability/recovery", &d);
  CHECK(d.size() == 6);
  CHECK_THROWS_WITH_AS(parse_recovery_settings(Json{{"detection", "soon"}}, "/r", nullptr), doctest::Contains("/r/detection: got \"soon\""), InputError);
  CHECK_THROWS_WITH_AS(parse_recovery_settings(Json{{"repair", {{"distribution", "gamma"}}}}, "/r", nullptr),
                       doctest::Contains("/r/repair/distribution: got \"gamma\""), InputError);
  CHECK_THROWS_WITH_AS(parse_recovery_settings(Json{{"restrat", "1m"}}, "/r", nullptr), doctest::Contains("did you mean \"restart\""), InputError);
}

TEST_CASE("recovery inputs outside their plausible range are errors naming the path") {
  CHECK_THROWS_WITH_AS(parse_recovery_settings(Json{{"total", "30d"}}, "/reliability/recovery", nullptr),
                       doctest::Contains("/reliability/recovery/total: got \"30d\"; expected a duration from 0 to 7 days"), InputError);
  CHECK_THROWS_WITH_AS(parse_recovery_settings(Json{{"restart", "1y"}}, "/r", nullptr), doctest::Contains("/r/restart: got \"1y\""), InputError);
  CHECK_THROWS_WITH_AS(parse_recovery_settings(Json{{"repair", {{"mean", "10y"}}}}, "/r", nullptr),
                       doctest::Contains("/r/repair/mean: got \"10y\"; expected a mean repair time from 1 min to 1 year"), InputError);
  CHECK_THROWS_WITH_AS(parse_recovery_settings(Json{{"repair", {{"shape", 50}}}}, "/r", nullptr), doctest::Contains("/r/repair/shape: got 50"),
                       InputError);
  CHECK(parse_recovery_settings(Json{{"detection", "20min"}}, "/r", nullptr).detection_s == 1200);
}
