// The tables `trainsim reliability` shows in the terminal, Markdown and HTML, on a study built by hand: percentages
// to 0.01, the confidence interval kept within what the metric can take, durations in their unit, the best interval
// marked, and what a fixed window leaves out.
#include <doctest/doctest.h>

#include <string>

#include "reports/reliability_report.hpp"

using namespace trainsim;

namespace {

sim::Statistic stat(double mean, double low, double high, double p05, double p95) {
  sim::Statistic s;
  s.n = 100;
  s.mean = mean, s.ci95_low = low, s.ci95_high = high, s.p05 = p05, s.p95 = p95;
  return s;
}

ReliabilityReport study() {
  ReliabilityReport r;
  sim::JobStatistics& st = r.base.stats;
  st.interruptions = stat(3.04, 2.7, 3.4, 1, 6);
  st.ettr = stat(0.9951, 0.99, 1.003, 0.98, 1.0);  // the normal interval crosses 100%: shown clipped
  st.wall_s = stat(10 * 86400, 9.9 * 86400, 10.1 * 86400, 9.8 * 86400, 10.4 * 86400);
  st.lost_gpu_hours = stat(1234.4, 1100, 1360, 600, 2200);
  for (double interval : {1800.0, 3600.0, 7200.0}) {
    sim::StudyRow row;
    row.config.interval_s = interval;
    row.stats.ettr = stat(interval == 3600 ? 0.95 : 0.94, 0.93, 0.96, 0.9, 0.97);
    r.sweep.rows.push_back(row);
  }
  r.sweep.best = 1;
  return r;
}

}  // namespace

TEST_CASE("reliability result table: each metric in its unit, the ETTR interval within 100%") {
  const ReliabilityReport r = study();
  const ReliabilityTable t = reliability_result_table(r);
  REQUIRE(t.rows.size() == 5);
  CHECK(t.rows[0] == std::vector<std::string>{"interruptions", "3.0", "[2.7, 3.4]", "1", "6"});
  CHECK(t.rows[1] == std::vector<std::string>{"ETTR", "99.51%", "[99.00%, 100.00%]", "98.00%", "100.00%"});
  CHECK(t.rows[2] == std::vector<std::string>{"time to train", "10.0 d", "[9.9 d, 10.1 d]", "9.8 d", "10.4 d"});
  CHECK(t.rows[3][0] == "lost GPU-hours");
  CHECK(t.rows[3][1] == "1234");
  CHECK(t.rows[4] == std::vector<std::string>{"lost cost", "-", "-", "-", "-"});  // no price: no cost, not $0
  for (const auto& row : t.rows) CHECK(row.size() == t.header.size());
}

TEST_CASE("reliability under a fixed window: no time to train, training done instead") {
  ReliabilityReport r = study();
  r.window_mode = true;
  const ReliabilityTable t = reliability_result_table(r);
  REQUIRE(t.rows.size() == 4);
  for (const auto& row : t.rows) CHECK(row[0] != "time to train");
}

TEST_CASE("reliability interval table: one row per interval, the best marked, its interval named") {
  const ReliabilityReport r = study();
  const ReliabilityTable t = reliability_interval_table(r);
  REQUIRE(t.rows.size() == 3);
  CHECK(t.rows[0][0] == "30.0 min");
  CHECK(t.rows[1][0] == "60.0 min");
  CHECK(t.rows[2][0] == "2.0 h");
  CHECK(t.rows[1][1] == "95.00%");
  CHECK(t.rows[0][5] == "");
  CHECK(t.rows[1][5] == "*");
  CHECK(reliability_best_interval(r) == "best interval by simulation: 60.0 min");
}
