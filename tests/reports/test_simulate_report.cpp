// The renderers of `trainsim simulate` on results built by hand: the per-op table (analytic beside the fabric), the
// CSV, the Perfetto timeline's events in microseconds, and which GPUs the page's timeline thumbnail shows.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "reports/simulate_report.hpp"

using namespace trainsim;
using Json = nlohmann::json;

namespace {

// The FSDP all-gather of tests/sim/CMakeLists.txt's oversubscribed case: one call over 64 ranks of 436.2 MB takes
// 1.410 ms analytically and 5.640 ms on a 4:1 spine.
sim::OpTiming fsdp_gather() {
  sim::OpTiming t;
  t.scope = "dense layer";
  t.op.dim = ParallelDim::Dp;
  t.op.collective = Collective::AllGather;
  t.op.pass = Pass::Forward;
  t.op.bytes = 436.2e6;
  t.op.calls = 1;
  t.op.group = GroupPlacement{64, 8};
  t.analytic_s = 1.410e-3;
  t.simulated_s = 5.640e-3;
  return t;
}

}  // namespace

TEST_CASE("simulate op rows: label, group, MB per call, calls, both times in ms and their ratio") {
  SimulateResult r;
  r.simulated.ops.push_back(fsdp_gather());
  sim::OpTiming step_op = fsdp_gather();
  step_op.scope = "step";
  step_op.op.pass = Pass::Step;  // a per-step op names no pass
  step_op.op.calls = 2.5;        // a fraction of calls shows two decimals
  step_op.analytic_s = 0;        // no analytic time: no ratio
  r.simulated.ops.push_back(step_op);
  const auto rows = simulate_op_rows(r);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0] == std::vector<std::string>{"dense layer forward dp all-gather", "64", "436.2", "1", "1.410", "5.640", "4.00"});
  CHECK(rows[1][0] == "step dp all-gather");
  CHECK(rows[1][3] == "2.50");
  CHECK(rows[1][6] == "-");
  CHECK(rows[0].size() == simulate_op_header().size());
}

TEST_CASE("simulate CSV: the step, then each op and link, simulated before analytic") {
  SimulateResult r;
  r.simulated.step_time_s = 4.5;
  r.analytic.time_s = 4.0;
  r.simulated.ops.push_back(fsdp_gather());
  r.simulated.links.push_back({"leaf0-up", 2.5e9, 0.75});
  std::ostringstream os;
  print_simulate_csv(os, r);
  const std::string csv = os.str();
  CHECK(csv.rfind("section,key,simulated,analytic\nstep,time_s,4.5,4\n", 0) == 0);
  CHECK(csv.find("op_call_s,dense layer forward dp all-gather,0.00564,0.00141\n") != std::string::npos);
  CHECK(csv.find("link_bytes,leaf0-up,2.5e+09,\nlink_utilization,leaf0-up,0.75,\n") != std::string::npos);
}

TEST_CASE("Perfetto timeline: a thread name per GPU, complete events in microseconds, one JSON document") {
  std::ostringstream os;
  ChromeTraceWriter w(os, 2);
  w.add({1, "forward mb0", "compute", 0.5, 0.25});
  w.add({0, "dp bucket", "dp", 1.0, 0.002});
  w.finish();
  CHECK(w.events() == 4);
  const Json doc = Json::parse(os.str());
  const Json& ev = doc.at("traceEvents");
  REQUIRE(ev.size() == 4);
  CHECK(ev[1].at("args").at("name") == "GPU 1");
  CHECK(ev[2].at("ph") == "X");
  CHECK(ev[2].at("tid") == 1);
  CHECK(ev[2].at("ts").get<double>() == 500000.0);  // 0.5 s
  CHECK(ev[2].at("dur").get<double>() == 250000.0);
  CHECK(ev[3].at("cat") == "dp");
  CHECK(ev[3].at("dur").get<double>() == doctest::Approx(2000.0));
}

TEST_CASE("timeline thumbnail: the first rank of each pipeline stage, at most eight stages spread evenly") {
  ParallelLayout p;
  p.tp = 8, p.pp = 4, p.dp = 2;  // 64 GPUs, pp outermost in the default rank order: stage k starts at 16k
  CHECK(timeline_gpus(p) == std::vector<int>{0, 16, 32, 48});
  p.pp = 32, p.dp = 1;           // 256 GPUs, 32 stages of 8: stages 0, 31/7 = 4, 8, 13, 17, 22, 26, 31 (floor of k·31/7)
  CHECK(timeline_gpus(p) == std::vector<int>{0, 32, 64, 104, 136, 176, 208, 248});
  p.rank_order = "pp-tp-cp-ep-dp";  // pp innermost: the first eight GPUs
  CHECK(timeline_gpus(p) == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
}
