// Slurm's priority/multifactor in the cluster simulator (sim/cluster/policies/multifactor_priority.hpp) on cases worked out by
// hand from the formula of Slurm's priority_multifactor guide: the decayed usage, Fair Tree's ranks, and the order the
// `multifactor` policy starts jobs in against arrival-order backfill.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/cluster/cluster_sim.hpp"
#include "sim/cluster/cluster_spec.hpp"
#include "sim/cluster/policies/multifactor_priority.hpp"

using namespace trainsim;
using namespace trainsim::sim::cluster;
using Json = nlohmann::json;

namespace {

// A pass with jobs and a clock set by hand: what MultifactorPriority reads, nothing more.
class StubPass final : public SchedulingPass {
 public:
  explicit StubPass(ClusterSpec c) : spec_(std::move(c)) {}
  double t = 0;
  std::vector<ClusterJob> jobs;
  std::vector<int> waiting_jobs, running_jobs;
  double now() const override { return t; }
  const std::vector<int>& waiting() const override { return waiting_jobs; }
  const std::vector<int>& running() const override { return running_jobs; }
  const ClusterJob& job(int j) const override { return jobs[static_cast<std::size_t>(j)]; }
  const JobStatus& status(int) const override { return status_; }
  bool is_waiting(int j) const override { return std::find(waiting_jobs.begin(), waiting_jobs.end(), j) != waiting_jobs.end(); }
  std::uint64_t queue_entries() const override { return ++entries_; }  // always changed: the ranking reads the whole queue
  bool fits(int) const override { return false; }
  bool fits_without(int, const std::vector<int>&) const override { return false; }
  bool start(int) override { return false; }
  void preempt(int) override {}
  double reserve(int, double) override { return 0; }
  bool start_beside_reservations(int) override { return false; }
  void wake_at(double) override {}
  double free_gpus() const override { return 0; }
  double total_gpus() const override { return 16; }
  double expected_runtime(int) const override { return 0; }
  double history_estimate(int) const override { return 0; }
  double gpus(int j) const override { return job(j).gpus; }
  const ClusterSpec& cluster() const override { return spec_; }

 private:
  ClusterSpec spec_;
  JobStatus status_;
  mutable std::uint64_t entries_ = 0;
};

ClusterSpec cluster(int nodes, const Json& priority) {
  return parse_cluster({{"pools", {{{"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 8}, {"nodes", nodes}}}}, {"scheduler", {{"priority", priority}}}},
                       "/cluster", nullptr);
}

ClusterJob job(const std::string& id, double submit, int gpus, double duration, const std::string& user, int priority = 0) {
  ClusterJob j;
  j.id = id;
  j.submit_s = submit;
  j.gpus = gpus;
  j.duration_s = duration;
  j.user = user;
  j.priority = priority;
  return j;
}

// Start times by job id under a policy.
std::map<std::string, double> starts(const ClusterSpec& c, const std::vector<ClusterJob>& jobs, const std::string& policy) {
  ClusterSimOptions o;
  o.policy = policy;
  const PolicyResult r = simulate_cluster(c, jobs, o);
  std::map<std::string, double> out;
  for (const JobRecord& rec : r.records) out[jobs[static_cast<std::size_t>(rec.index)].id] = rec.start_s;
  return out;
}

}  // namespace

TEST_CASE("usage decays with the half-life: 8 GPUs held for one half-life from nothing, then idle for another") {
  const double T = 3600;
  StubPass pass(cluster(2, {{"decay_half_life", "1h"}}));
  pass.jobs = {job("a", 0, 8, 1e6, "alice")};
  pass.running_jobs = {0};
  MultifactorPriority mf;
  mf.order(pass, 1);
  mf.note_running(pass);
  pass.t = T;
  mf.order(pass, 1);
  // The decayed integral of 8 GPUs over [0, T]: 8 T (1 - 2^-1) / ln 2 = 4 T / ln 2 = 5.7708 T GPU-seconds.
  CHECK(mf.usage("alice") == doctest::Approx(4 * T / std::log(2.0)).epsilon(1e-12));
  pass.running_jobs.clear();
  mf.note_running(pass);
  pass.t = 2 * T;
  mf.order(pass, 1);
  CHECK(mf.usage("alice") == doctest::Approx(2 * T / std::log(2.0)).epsilon(1e-12));  // halved
}

TEST_CASE("Fair Tree ranks: no usage ranks first; the factors by hand") {
  StubPass pass(cluster(2, Json::object()));
  // alice used 8 GPUs, bob 2, carol nothing (yet known by a waiting job): usage shares 0.8, 0.2, 0; level fairshare
  // (1/3) / share = 0.417, 1.667, infinite -> ranks 1, 2, 3 of 3 -> fairshare factors 1/3, 2/3, 1.
  pass.jobs = {job("a", 0, 8, 1e6, "alice"), job("b", 0, 2, 1e6, "bob"), job("c", 0, 4, 100, "carol"), job("a2", 0, 4, 100, "alice"),
               job("b2", 0, 4, 100, "bob")};
  pass.running_jobs = {0, 1};
  MultifactorPriority mf;
  mf.order(pass, 1);
  mf.note_running(pass);
  pass.running_jobs.clear();
  pass.waiting_jobs = {3, 4, 2};
  pass.t = 600;
  const std::vector<int> order = mf.order(pass, 3);
  CHECK(mf.factors(pass, 3).fairshare == doctest::Approx(1.0 / 3));
  CHECK(mf.factors(pass, 4).fairshare == doctest::Approx(2.0 / 3));
  CHECK(mf.factors(pass, 2).fairshare == doctest::Approx(1.0));
  // Same size (4 of 16 GPUs: 0.25 x 1000), same age: fair-share alone orders them, carol, bob, alice.
  CHECK(order == std::vector<int>{2, 4, 3});
  // The priority by hand for carol: 1000 x 600 / 14 d + 10000 x 1 + 1000 x 0.25 + 0 x qos = 10250.496.
  CHECK(mf.factors(pass, 2).priority == doctest::Approx(1000 * 600 / (14 * 86400.0) + 10000 + 250).epsilon(1e-12));
}

TEST_CASE("multifactor starts the job of the user who has not run first; arrival-order backfill does not") {
  // One 8-GPU node. alice's A1 runs 0-1000 s; her A2 arrives at 10 s, bob's B1 at 20 s, both 8 GPUs. At 1000 s alice
  // holds all the usage: her fair-share factor is 1/2, bob's 1 (no usage), so B1 outranks A2 by 5000 (age differs by
  // 10 s: 0.008) and starts first.
  const std::vector<ClusterJob> jobs = {job("A1", 0, 8, 1000, "alice"), job("A2", 10, 8, 100, "alice"), job("B1", 20, 8, 100, "bob")};
  const ClusterSpec c = cluster(1, Json::object());
  const auto fifo_order = starts(c, jobs, "backfill");
  CHECK(fifo_order.at("A2") == doctest::Approx(1000));
  CHECK(fifo_order.at("B1") == doctest::Approx(1100));
  const auto mf = starts(c, jobs, "multifactor");
  CHECK(mf.at("B1") == doctest::Approx(1000));
  CHECK(mf.at("A2") == doctest::Approx(1100));
}

TEST_CASE("job size: large first by default, small first with favor_small; QOS alone orders by priority") {
  // One 8-GPU node busy until 100 s. S (2 GPUs, 50 s) arrives at 1 s, L (8 GPUs, 50 s) at 2 s. Size only: L's factor
  // 8/8 = 1 beats S's 0.25, so L starts at 100 and S after it at 150. With favor_small S (0.75) beats L (0): S starts
  // at 100 beside nothing else that fits, and L at 150 when S ends.
  const std::vector<ClusterJob> jobs = {job("X", 0, 8, 100, "u"), job("S", 1, 2, 50, "u"), job("L", 2, 8, 50, "u")};
  const Json size_only = {{"weight_age", 0}, {"weight_fairshare", 0}, {"weight_job_size", 1000}};
  auto large = starts(cluster(1, size_only), jobs, "multifactor");
  CHECK(large.at("L") == doctest::Approx(100));
  CHECK(large.at("S") == doctest::Approx(150));
  Json small = size_only;
  small["favor_small"] = true;
  auto favoured = starts(cluster(1, small), jobs, "multifactor");
  CHECK(favoured.at("S") == doctest::Approx(100));
  CHECK(favoured.at("L") == doctest::Approx(150));
  // QOS only: the later job of priority 5 before the earlier one of priority 1.
  const std::vector<ClusterJob> q = {job("X", 0, 8, 100, "u"), job("P1", 1, 8, 50, "u", 1), job("P5", 2, 8, 50, "u", 5)};
  auto qos = starts(cluster(1, {{"weight_age", 0}, {"weight_fairshare", 0}, {"weight_job_size", 0}, {"weight_qos", 1000}}), q, "multifactor");
  CHECK(qos.at("P5") == doctest::Approx(100));
  CHECK(qos.at("P1") == doctest::Approx(150));
}
