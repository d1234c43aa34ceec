// EASY backfilling's walk by request shape (waiting_shapes.hpp) against its definition: the min-tree against a
// scan of every position, and a whole run against the job-by-job walk over the same mixed workload (two GPU
// models, host resources, shared GPUs, elastic and non-gang jobs, walltimes and none, node failures that requeue
// jobs). The job-by-job walk is what EASY runs when a per-job rule applies; a cap on admissions per pass that no
// pass reaches selects it without changing any start, so the two runs must agree job by job.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <cfloat>
#include <limits>
#include <random>

#include "sim/cluster/cluster_sim.hpp"
#include "sim/cluster/cluster_spec.hpp"
#include "sim/cluster/policies/waiting_shapes.hpp"

using namespace trainsim::sim::cluster;
using Json = nlohmann::json;

TEST_CASE("the min-tree finds the first position at or after p holding at most a limit, as a scan does") {
  std::mt19937 rng(7);
  MinTree tree;
  std::vector<double> values;
  const double empty = std::numeric_limits<double>::infinity();
  for (int step = 0; step < 4000; ++step) {
    const int op = std::uniform_int_distribution<int>(0, 9)(rng);
    if (op == 0 || values.empty()) {  // grow, new positions empty
      const std::size_t n = values.size() + std::uniform_int_distribution<std::size_t>(1, 40)(rng);
      values.resize(n, empty);
      tree.resize(n);
    } else if (op < 5) {
      const std::size_t at = std::uniform_int_distribution<std::size_t>(0, values.size() - 1)(rng);
      const double v = std::uniform_int_distribution<int>(0, 3)(rng) == 0 ? empty : std::uniform_int_distribution<int>(1, 100)(rng);
      values[at] = v;
      tree.set(at, v);
    } else {
      const std::size_t from = std::uniform_int_distribution<std::size_t>(0, values.size() + 2)(rng);
      const double limit = std::uniform_int_distribution<int>(0, 4)(rng) == 0 ? DBL_MAX : std::uniform_int_distribution<int>(0, 110)(rng);
      std::size_t want = values.size();
      for (std::size_t i = from; i < values.size(); ++i)
        if (values[i] <= limit) {
          want = i;
          break;
        }
      REQUIRE(tree.first_at_most(from, limit) == want);
    }
  }
}

namespace {

ClusterSpec mixed_cluster(bool failures) {
  Json c = {{"pools",
             {{{"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 8}, {"nodes", 6}, {"cpus_per_node", 64}, {"memory_per_node", "512 GiB"}},
              {{"gpu", "a100-sxm-80gb"}, {"gpus_per_node", 4}, {"nodes", 4}, {"cpus_per_node", 32}, {"memory_per_node", "256 GiB"}}}},
            {"network", {{"nodes_per_leaf", 2}}},
            {"gpu_sharing", true},
            {"failures", failures ? "default" : "none"}};
  ClusterSpec spec = parse_cluster(c, "/cluster", nullptr);
  if (failures) spec.failures.scale_rates(200);  // requeues within a run of a few weeks
  return spec;
}

// Bursts of arrivals (a deep queue after each) of every kind of request the shape walk must tell apart.
std::vector<ClusterJob> mixed_jobs(unsigned seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int sizes[] = {1, 2, 3, 4, 8, 12, 16};
  std::vector<ClusterJob> jobs(2500);
  double t = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    ClusterJob& j = jobs[i];
    if (i % 500 == 0) t += pick(0, 20000);
    j.id = "j" + std::to_string(i);
    j.submit_s = t + pick(0, 600);
    j.user = "u" + std::to_string(pick(0, 5));
    j.gpus = sizes[pick(0, 6)];
    j.duration_s = pick(60, 9000);
    j.walltime_s = pick(0, 4) == 0 ? 0 : j.duration_s * (1 + pick(0, 20) / 10.0);
    if (pick(0, 3) == 0) j.gpu_types = {pick(0, 1) == 0 ? "h100-sxm-80gb" : "a100-sxm-80gb"};
    j.cpu_milli = 1000 * std::vector<int>{0, 4, 16, 30}[static_cast<std::size_t>(pick(0, 3))];
    j.memory_mib = 1024 * std::vector<int>{0, 64, 200}[static_cast<std::size_t>(pick(0, 2))];
    const int kind = pick(0, 19);
    if (kind == 0) j.gpus = 1, j.gpu_milli = 250 * pick(1, 3);                         // a share of one GPU
    if (kind == 1 && j.gpus >= 2) j.elastic_min = j.gpus / 2, j.elastic_max = 2 * j.gpus;  // elastic
    if (kind == 2) j.gang = false;                                                    // pods started one by one
  }
  std::stable_sort(jobs.begin(), jobs.end(), [](const ClusterJob& a, const ClusterJob& b) { return a.submit_s < b.submit_s; });
  return jobs;
}

void same_runs(const ClusterSpec& spec, const std::vector<ClusterJob>& jobs, const std::string& policy) {
  ClusterSimOptions o;
  o.policy = policy;
  o.seed = 11;
  const PolicyResult by_shape = simulate_cluster(spec, jobs, o);
  ClusterSpec job_by_job = spec;
  job_by_job.cycle.admissions_per_queue = 1 << 20;
  const PolicyResult reference = simulate_cluster(job_by_job, jobs, o);
  REQUIRE(by_shape.records.size() == reference.records.size());
  int started_late = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const JobRecord &a = by_shape.records[i], &b = reference.records[i];
    INFO(policy << " job " << jobs[i].id);
    // Equal up to rounding: runs that follow each other in one process read an offset SimGrid clock, and an
    // elastic job's progress is summed from it (a different decision moves a time by seconds, not 1e-9 s).
    CHECK(a.start_s == doctest::Approx(b.start_s).epsilon(1e-12));
    CHECK(a.end_s == doctest::Approx(b.end_s).epsilon(1e-12));
    CHECK(a.wait_s == doctest::Approx(b.wait_s).epsilon(1e-12));
    CHECK(a.failures == b.failures);
    CHECK(a.resizes == b.resizes);
    started_late += a.first_wait_s > 0;
  }
  // The workload queues (else the walk would have had nothing to skip).
  CHECK(started_late > static_cast<int>(jobs.size()) / 4);
}

}  // namespace

TEST_CASE("EASY's walk by request shape starts the jobs the job-by-job walk starts, at the same times") {
  const std::vector<ClusterJob> jobs = mixed_jobs(3);
  same_runs(mixed_cluster(false), jobs, "easy");
  same_runs(mixed_cluster(false), jobs, "easy+spread");
  same_runs(mixed_cluster(true), jobs, "easy");
  same_runs(mixed_cluster(true), jobs, "easy+topology");
}
