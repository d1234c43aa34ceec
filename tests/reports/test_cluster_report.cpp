// The renderers of `trainsim cluster` on a run built by hand: the policy table's cells by the formatting rules (counts
// with thousands separators, percentages to 0.1, durations in their unit), the CSV and JSON contracts, the per-job and
// time-series CSV, and the Markdown and HTML escaping of names that come from traces.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "reports/cluster_document.hpp"
#include "reports/cluster_report.hpp"

using namespace trainsim;
namespace cl = trainsim::sim::cluster;

namespace {

// The head-of-line trace under FIFO on 16 GPUs, as tests/sim/CMakeLists.txt derives it: A (8 GPUs, 100 s) at 0,
// B (16 GPUs, 50 s) at 1 s waits until 100 s, C (8 GPUs, 10 s) at 2 s waits behind B until 150 s.
cl::PolicyResult head_of_line_fifo() {
  cl::PolicyResult p;
  p.name = "fifo";
  p.jobs = 3;
  p.utilization = 0.65625;  // (8·100 + 16·50 + 8·10) GPU-s over 16 GPUs x 160 s
  p.mean_wait_s = (0 + 99 + 148) / 3.0;
  p.p50_wait_s = 99;
  p.p99_wait_s = 147.02;
  p.mean_jct_s = (100 + 149 + 158) / 3.0;
  p.makespan_s = 160;
  p.goodput = 1;
  p.gpu_hours = (8 * 100 + 16 * 50 + 8 * 10) / 3600.0;
  for (int i = 0; i < 3; ++i) {
    cl::JobRecord r;
    r.index = i;
    p.records.push_back(r);
  }
  p.records[0].submit_s = 0, p.records[0].start_s = 0, p.records[0].end_s = 100, p.records[0].wait_s = 0;
  p.records[1].submit_s = 1, p.records[1].start_s = 100, p.records[1].end_s = 150, p.records[1].wait_s = 99;
  p.records[2].submit_s = 2;  // never started in this record: its times are empty cells
  return p;
}

ClusterRun run_of(std::vector<cl::PolicyResult> policies) {
  ClusterRun r;
  r.cluster_source = "--nodes";
  r.workload.source = "csv:head_of_line.csv";
  r.workload.rows = 3;
  r.workload.jobs = 3;
  r.policies = std::move(policies);
  r.wall_s.assign(r.policies.size(), 0.25);
  return r;
}

std::string text_of(void (*render)(std::ostream&, const ClusterRun&), const ClusterRun& r) {
  std::ostringstream os;
  render(os, r);
  return os.str();
}

}  // namespace

TEST_CASE("cluster policy table: each cell in its unit") {
  cl::PolicyResult big = head_of_line_fifo();
  big.name = "backfill+topology";
  big.jobs = 1234567;
  big.mean_wait_s = 3 * 86400;   // two days and more: days
  big.p50_wait_s = 3 * 3600;     // two hours and more: hours
  big.p99_wait_s = 0.25;         // under a second: milliseconds
  big.gpu_hours_lost = 12.345;
  const ClusterRun r = run_of({head_of_line_fifo(), big});
  const auto rows = policy_table_rows(r);
  REQUIRE(rows.size() == 2);
  REQUIRE(rows[0].size() == policy_table_header().size());
  // 82.33 s and 99 s stay in seconds below two minutes; 147 s and 160 s are minutes (2.5 and 2.7).
  CHECK(rows[0] == std::vector<std::string>{"fifo", "3", "65.6%", "82.33 s", "99.00 s", "2.5 min", "2.3 min", "2.7 min", "0", "0", "0.0",
                                            "100.0%", "0.25 s"});
  CHECK(rows[1][1] == "1,234,567");
  CHECK(rows[1][3] == "3.0 d");
  CHECK(rows[1][4] == "3.0 h");
  CHECK(rows[1][5] == "250.0 ms");
  CHECK(rows[1][10] == "12.3");
}

TEST_CASE("cluster CSV and JSON: the contract columns and keys, full precision") {
  const ClusterRun r = run_of({head_of_line_fifo()});
  std::istringstream csv(text_of(print_cluster_csv, r));
  std::string header, row, extra;
  std::getline(csv, header);
  std::getline(csv, row);
  CHECK(header.rfind("policy,jobs,rejected,unfinished,utilization,mean_wait_s,p50_wait_s,p99_wait_s,mean_jct_s", 0) == 0);
  CHECK(row.rfind("fifo,3,0,0,0.65625,82.3333,99,147.02,135.667,", 0) == 0);
  CHECK(!std::getline(csv, extra));  // one row per policy
  const nlohmann::json j = cluster_json(r);
  const auto& p = j.at("policies").at(0);
  for (const char* key : {"name", "jobs", "utilization", "mean_wait_s", "p50_wait_s", "p99_wait_s", "mean_jct_s", "makespan_s", "preemptions",
                          "failures", "gpu_hours_lost", "goodput"})
    CHECK_MESSAGE(p.contains(key), key);
  CHECK(p.at("p99_wait_s").get<double>() == 147.02);
  CHECK(p.at("seeds").get<int>() == 1);
  CHECK(j.at("workload").at("jobs").get<int>() == 3);
  CHECK(j.at("scheduler").at("admissions_per_day").is_null());  // no cap on admissions
}

TEST_CASE("cluster per-job CSV: a job with no start has empty time cells") {
  const ClusterRun r = run_of({head_of_line_fifo()});
  std::vector<cl::ClusterJob> jobs(3);
  jobs[0].id = "A", jobs[1].id = "B", jobs[2].id = "C,quoted";
  jobs[0].gpus = 8, jobs[1].gpus = 16, jobs[2].gpus = 8;
  std::ostringstream os;
  write_cluster_jobs_csv(os, r, jobs);
  std::istringstream in(os.str());
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  REQUIRE(lines.size() == 4);
  CHECK(lines[1].rfind("fifo,A,,,8,", 0) == 0);
  CHECK(lines[2].find(",1,100.000000,150.000000,99.000000,") != std::string::npos);  // submit, start, end, wait
  // "C,quoted" quoted as RFC 4180 asks; start, end, wait, JCT, slowdown empty.
  CHECK(lines[3].rfind("fifo,\"C,quoted\",,,8,", 0) == 0);
  CHECK(lines[3].find(",2,,,,,,") != std::string::npos);
}

TEST_CASE("cluster time series CSV: one row per sample and policy") {
  cl::PolicyResult p = head_of_line_fifo();
  p.series.push_back({0, 8, 16, 2, 1, 0});
  p.series.push_back({100, 16, 16, 1, 1, 0});
  const ClusterRun r = run_of({p});
  CHECK(text_of(write_cluster_timeseries_csv, r) ==
        "policy,t_s,allocated_gpus,capacity_gpus,queued,running,fragmented_gpus\nfifo,0,8,16,2,1,0\nfifo,100,16,16,1,1,0\n");
}

TEST_CASE("cluster Markdown and HTML: names from a trace cannot break the table or the page") {
  cl::PolicyResult p = head_of_line_fifo();
  p.name = "fifo|<b>";
  ClusterRun r = run_of({p});
  r.workload.source = "csv:a|b<script>.csv";
  const std::string md = text_of(print_cluster_markdown, r);
  CHECK(md.find("fifo\\|&lt;b&gt;") != std::string::npos);
  CHECK(md.find("<b>") == std::string::npos);
  CHECK(md.find("<script>") == std::string::npos);
  const std::string html = text_of(write_cluster_html, r);
  CHECK(html.find("fifo|&lt;b&gt;") != std::string::npos);
  CHECK(html.find("<script>.csv") == std::string::npos);
  CHECK(html.find("82.33 s") != std::string::npos);  // the table's cells, as the terminal shows them
}
