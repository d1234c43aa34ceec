// Job-level failures in the cluster simulator (sim/cluster/job_failures.hpp): the presets follow from the trace
// summaries in ../shared/traces/ by the documented formula, and a large workload on a cluster with room for all of it
// shows the probabilities the model states (each run fails with probability p; a job fails for good after r retries
// with p^(r+1)), the failure point's mean, and the retries' backoff, within a few standard errors.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "models/core/errors.hpp"
#include "sim/cluster/cluster_sim.hpp"
#include "sim/cluster/cluster_spec.hpp"

using namespace trainsim;
using namespace trainsim::sim::cluster;
using Json = nlohmann::json;

namespace {

// One row of a summary CSV by its first column, as {column: text}.
std::map<std::string, std::string> csv_row(const std::string& path, const std::string& id) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in, "cannot read " << path);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::stringstream hs(line);
  for (std::string cell; std::getline(hs, cell, ',');) header.push_back(cell);
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ls(line);
    for (std::string cell; std::getline(ls, cell, ',');) cells.push_back(cell);
    if (!cells.empty() && cells[0] == id) {
      std::map<std::string, std::string> row;
      for (std::size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
      return row;
    }
  }
  FAIL("no row " << id << " in " << path);
  return {};
}

// A cluster large enough that no job waits: 2,000 nodes of 8 GPUs.
ClusterSpec roomy(const Json& job_failures) {
  return parse_cluster({{"pools", {{{"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 8}, {"nodes", 2000}}}}, {"job_failures", job_failures},
                        {"recovery", {{"restart", "0s"}, {"warmup", "0s"}}}},
                       "/cluster", nullptr);
}

std::vector<ClusterJob> one_gpu_jobs(int n, double duration_s) {
  std::vector<ClusterJob> jobs(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    jobs[static_cast<std::size_t>(i)].id = "j" + std::to_string(i);
    jobs[static_cast<std::size_t>(i)].submit_s = i * 0.001;
    jobs[static_cast<std::size_t>(i)].duration_s = duration_s;
  }
  return jobs;
}

PolicyResult fifo(const ClusterSpec& c, const std::vector<ClusterJob>& jobs) {
  ClusterSimOptions o;
  o.policy = "fifo";
  o.seed = 7;
  return simulate_cluster(c, jobs, o);
}

}  // namespace

TEST_CASE("job-failure presets are the trace summaries' rates: p = failed jobs' share, mean point = (F/C)(c/f)") {
  const std::string traces = std::string(TRAINSIM_SHARED_DIR) + "/traces/";
  struct Case {
    const char* preset;
    std::string file, row, fail_rate, complete_rate;
  };
  for (const Case& k : {Case{"helios", traces + "helios-summary/helios_cluster_summary.csv", "total", "fail_rate_gpu", "complete_rate_gpu"},
                        Case{"acme-seren", traces + "acme-summary/cluster_summary.csv", "Seren", "fail_rate_gpu", "complete_rate_gpu"},
                        Case{"acme-kalos", traces + "acme-summary/cluster_summary.csv", "Kalos", "fail_rate_gpu", "complete_rate_gpu"}}) {
    CAPTURE(k.preset);
    const auto row = csv_row(k.file, k.row);
    const double f = std::stod(row.at(k.fail_rate)), c = std::stod(row.at(k.complete_rate));
    const double F = std::stod(row.at("fail_gpu_time")), C = std::stod(row.at("complete_gpu_time"));
    const JobFailureSpec spec = parse_job_failures(Json(k.preset), "/cluster/job_failures", nullptr);
    CHECK(spec.attempt_failure_probability == doctest::Approx(f).epsilon(1e-9));
    CHECK(spec.failure_point_mean == doctest::Approx(F / C * (c / f)).epsilon(1e-9));
    CHECK(spec.retries == 0);  // Slurm requeues no job that exited with an error
  }
  // Helios by hand: 0.155 of GPU jobs failed; 7.288e9 / 3.999e10 GPU-s x 0.624 / 0.155 = 0.1822 x 4.026 = 0.7336.
  CHECK(parse_job_failures(Json("helios"), "/j", nullptr).failure_point_mean == doctest::Approx(0.7336).epsilon(1e-3));
}

TEST_CASE("job-failure settings: overrides on a preset, none, and clear errors") {
  const JobFailureSpec s = parse_job_failures({{"preset", "helios"}, {"retries", 6}, {"retry_backoff", "20s"}}, "/j", nullptr);
  CHECK(s.retries == 6);
  CHECK(s.backoff_s(1) == 20);
  CHECK(s.backoff_s(3) == 80);     // 20 x 2^2
  CHECK(s.backoff_s(10) == 360);   // capped at Kubernetes' 6 minutes
  CHECK_FALSE(parse_job_failures(Json("none"), "/j", nullptr).on());
  CHECK_THROWS_WITH_AS(parse_job_failures(Json("helio"), "/cluster/job_failures", nullptr),
                       doctest::Contains("/cluster/job_failures/preset: got \"helio\"; expected a job-failure preset"), InputError);
  CHECK_THROWS_WITH_AS(parse_job_failures({{"attempt_failure_probability", 1.5}}, "/j", nullptr), doctest::Contains("/j/attempt_failure_probability"),
                       InputError);
  CHECK_THROWS_WITH_AS(parse_job_failures({{"preset", "helios"}, {"retry_backoff", "10min"}}, "/j", nullptr), doctest::Contains("/j/retry_backoff_max"),
                       InputError);
}

// 20,000 jobs of 100 s of work, one GPU each, none waiting (the cluster holds them all). (Separate test cases, not
// subcases: SimGrid ends its actors by exceptions, which doctest's subcase bookkeeping misreads.)
constexpr int kJobs = 20000;
constexpr double kWorkS = 100;

TEST_CASE("no retries: p of the jobs fail, each after m of its work on average") {
  const int n = kJobs;
  const double d = kWorkS;
  const PolicyResult r = fifo(roomy({{"attempt_failure_probability", 0.3}, {"failure_point_mean", 0.25}}), one_gpu_jobs(n, d));
  const double sigma = std::sqrt(0.3 * 0.7 / n);
  CHECK(std::abs(static_cast<double>(r.failed_jobs) / n - 0.3) < 4 * sigma);
  CHECK(r.job_errors == r.failed_jobs);
  CHECK(r.job_retries == 0);
  CHECK(r.jobs + r.failed_jobs == n);
  // The failure point is U^3 of the 100 s (Beta(1/3, 1), mean 1/4): 25 s of GPU time per failed job; its standard
  // deviation sqrt(1/7 - 1/16) = 0.2835 of the run.
  const double mean_s = r.failed_gpu_hours * 3600 / r.failed_jobs;
  CHECK(std::abs(mean_s - 25.0) < 4 * 28.35 / std::sqrt(r.failed_jobs));
  // Goodput: only the finished jobs' work is useful; allocated = finished + failed GPU time (no waits, no restarts).
  CHECK(r.goodput == doctest::Approx(r.jobs * d / (r.jobs * d + r.failed_gpu_hours * 3600)).epsilon(1e-6));
}

TEST_CASE("two retries: p^3 of the jobs fail for good; retries p + p^2 per job") {
  const int n = kJobs;
  const double d = kWorkS;
  const PolicyResult r = fifo(roomy({{"attempt_failure_probability", 0.3}, {"retries", 2}}), one_gpu_jobs(n, d));
  const double p3 = 0.3 * 0.3 * 0.3;
  CHECK(std::abs(static_cast<double>(r.failed_jobs) / n - p3) < 4 * std::sqrt(p3 * (1 - p3) / n));
  const double retries = 0.3 + 0.09;  // P(first run fails) + P(first two fail)
  CHECK(std::abs(static_cast<double>(r.job_retries) / n - retries) < 0.02);
  CHECK(r.job_errors == r.job_retries + r.failed_jobs);
  CHECK(r.jobs + r.failed_jobs == n);
}

TEST_CASE("a retry waits its backoff: every job that met an error waited at least 100 s, the others not at all") {
  const double d = kWorkS;
  const PolicyResult r = fifo(roomy({{"attempt_failure_probability", 0.5}, {"retries", 1}, {"retry_backoff", "100s"}}), one_gpu_jobs(2000, d));
  int with_errors = 0;
  for (const JobRecord& rec : r.records) {
    if (rec.failed) continue;
    if (rec.job_errors > 0) {
      ++with_errors;
      CHECK(rec.wait_s >= 100 - 1e-6);
    } else {
      CHECK(rec.wait_s < 1e-6);
    }
  }
  CHECK(std::abs(with_errors - 500) < 80);  // a quarter of 2,000 failed once and then finished (0.5 x 0.5), 4 sd = 78
}

TEST_CASE("without job failures nothing changes: the same run twice, and with a zero probability") {
  const std::vector<ClusterJob> jobs = one_gpu_jobs(500, 50);
  const PolicyResult a = fifo(roomy("none"), jobs);
  const PolicyResult b = fifo(roomy({{"attempt_failure_probability", 0}}), jobs);
  CHECK(a.jobs == 500);
  CHECK(b.jobs == 500);
  CHECK(a.job_errors == 0);
  CHECK(a.mean_jct_s == b.mean_jct_s);
  CHECK(a.gpu_hours == b.gpu_hours);
}
