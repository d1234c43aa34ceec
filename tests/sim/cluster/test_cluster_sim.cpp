// The cluster simulator on hand-built cases whose answers follow from the policies' definitions (worked
// out in the comments): FIFO's head-of-line blocking, EASY backfilling, gang all-or-nothing, bin-packing
// against spreading, gang-aware preemption that frees a whole node (volcano-sh/volcano#3291), and a failure
// costing the work since the last checkpoint plus the recovery.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "models/core/errors.hpp"
#include "models/scenario/scenario.hpp"
#include "models/step/step.hpp"
#include "sim/cluster/cluster_sim.hpp"
#include "sim/cluster/cluster_spec.hpp"
#include "sim/cluster/cluster_state.hpp"
#include "sim/cluster/policies/backfill_plan.hpp"
#include "sim/cluster/seed_statistics.hpp"
#include "sim/cluster/workload/model_jobs.hpp"
#include "sim/cluster/workload/synthetic_workload.hpp"
#include "sim/reliability/job_montecarlo.hpp"

#include <algorithm>
#include <limits>
#include <random>
#include <cmath>

using namespace trainsim;
using namespace trainsim::sim::cluster;
using Json = nlohmann::json;

namespace {

// Two 8-GPU nodes, each under its own leaf switch; no failures unless asked.
ClusterSpec two_nodes(Json extra = Json::object()) {
  Json c = {{"pools", {{{"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 8}, {"nodes", 2}}}}, {"network", {{"nodes_per_leaf", 1}}}};
  for (auto& [k, v] : extra.items()) c[k] = v;
  return parse_cluster(c, "/cluster", nullptr);
}

// One 8-GPU node.
ClusterSpec one_node(Json extra = Json::object()) {
  Json c = {{"pools", {{{"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 8}, {"nodes", 1}}}}};
  for (auto& [k, v] : extra.items()) c[k] = v;
  return parse_cluster(c, "/cluster", nullptr);
}

ClusterJob job(const std::string& id, double submit, int gpus, double duration, int priority = 0) {
  ClusterJob j;
  j.id = id;
  j.submit_s = submit;
  j.gpus = gpus;
  j.duration_s = duration;
  j.priority = priority;
  return j;
}

PolicyResult run(const ClusterSpec& c, const std::vector<ClusterJob>& jobs, const std::string& policy) {
  ClusterSimOptions o;
  o.policy = policy;
  return simulate_cluster(c, jobs, o);
}

}  // namespace

TEST_CASE("FIFO blocks behind its head job; EASY backfilling fills the hole without delaying it") {
  // A (8 GPUs, 100 s) starts at 0; B asks for all 16 at t=1 and waits for A; C (8 GPUs, 10 s) at t=2.
  // FIFO: C waits behind B although 8 GPUs are free: B runs 100-150, C 150-160.
  // Backfill: B's reservation is at 100 (A's end); C ends at 12 < 100, so it starts at 2 and B still starts at 100.
  const ClusterSpec c = two_nodes();
  const std::vector<ClusterJob> jobs = {job("A", 0, 8, 100), job("B", 1, 16, 50), job("C", 2, 8, 10)};
  const PolicyResult fifo = run(c, jobs, "fifo");
  CHECK(fifo.records[1].start_s == doctest::Approx(100));
  CHECK(fifo.records[2].start_s == doctest::Approx(150));
  CHECK(fifo.records[2].end_s == doctest::Approx(160));
  CHECK(fifo.makespan_s == doctest::Approx(160));
  CHECK(fifo.mean_wait_s == doctest::Approx((0 + 99 + 148) / 3.0));
  const PolicyResult easy = run(c, jobs, "easy");
  CHECK(easy.records[2].start_s == doctest::Approx(2));
  CHECK(easy.records[1].start_s == doctest::Approx(100));  // the head job is not delayed
  CHECK(easy.makespan_s == doctest::Approx(150));
  // Utilization: 8x100 + 16x50 + 8x10 = 1,680 GPU-s of 16 x 150 in service.
  CHECK(easy.utilization == doctest::Approx(1680.0 / (16 * 150)));
  CHECK(easy.goodput == doctest::Approx(1.0));
}

TEST_CASE("Slurm's backfill loop runs every bf_interval, tests bf_max_job_test jobs and plans bf_window ahead") {
  // The case above (A 8 GPUs 0-100 s, B 16 GPUs from t=1, C 8 GPUs 10 s at t=2) under `backfill`, Slurm's loop:
  // the loop runs at t=1 (B reserved at 100) and next at 31: C, which ends at 41 before B's reservation, starts
  // then, not at its arrival. With backfill_interval 1 s it starts at 2 as under EASY. With backfill_depth 1 the
  // loop tests B alone: C waits for B (starts at 150). With a backfill_window of 60 s, B's start at 100 lies
  // beyond it: B is not reserved, and C, even running 200 s, starts at 2 and delays B to 202 (Slurm's warning:
  // a window shorter than the time limits lets jobs starve).
  const std::vector<ClusterJob> jobs = {job("A", 0, 8, 100), job("B", 1, 16, 50), job("C", 2, 8, 10)};
  CHECK(run(two_nodes(), jobs, "backfill").records[2].start_s == doctest::Approx(31));
  Json sched = {{"backfill_interval", 1}};
  CHECK(run(two_nodes({{"scheduler", sched}}), jobs, "backfill").records[2].start_s == doctest::Approx(2));
  sched["backfill_depth"] = 1;
  CHECK(run(two_nodes({{"scheduler", sched}}), jobs, "backfill").records[2].start_s == doctest::Approx(150));
  const Json window = {{"backfill_interval", 1}, {"backfill_window", 60}};
  const PolicyResult starved = run(two_nodes({{"scheduler", window}}), {job("A", 0, 8, 100), job("B", 1, 16, 50), job("C", 2, 8, 200)}, "backfill");
  CHECK(starved.records[2].start_s == doctest::Approx(2));
  CHECK(starved.records[1].start_s == doctest::Approx(202));
}

TEST_CASE("a job that would delay the reserved head job is not backfilled") {
  // As above, but C runs 200 s: it would end after the reservation at 100 and needs GPUs B needs then.
  const ClusterSpec c = two_nodes();
  const PolicyResult easy = run(c, {job("A", 0, 8, 100), job("B", 1, 16, 50), job("C", 2, 8, 200)}, "easy");
  CHECK(easy.records[1].start_s == doctest::Approx(100));
  CHECK(easy.records[2].start_s == doctest::Approx(150));
}

TEST_CASE("backfill reserves the head job's nodes, not a GPU count") {
  // Two 4-GPU nodes. A (3 GPUs, 100 s) takes node 0 and B (3 GPUs, 200 s) node 1 at t=0: one GPU free on each.
  // H (4 GPUs, t=1) needs a whole node: node 0 at 100 s when A ends. C (1 GPU, 1,000 s, t=2) would end after
  // that, so it may only use a GPU outside H's reservation: node 1's. H starts at 100 as under FIFO; counting
  // GPUs instead (2 free, 5 at 100 s, one spare) put C on node 0 and H waited for B until 200 s.
  Json c = {{"pools", {{{"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 4}, {"nodes", 2}}}}};
  const ClusterSpec spec = parse_cluster(c, "/cluster", nullptr);
  const std::vector<ClusterJob> jobs = {job("A", 0, 3, 100), job("B", 0, 3, 200), job("H", 1, 4, 10), job("C", 2, 1, 1000)};
  const PolicyResult fifo = run(spec, jobs, "fifo");
  CHECK(fifo.records[2].start_s == doctest::Approx(100));
  const PolicyResult easy = run(spec, jobs, "easy");
  CHECK(easy.records[2].start_s == doctest::Approx(100));
  CHECK(easy.records[3].start_s == doctest::Approx(2));  // backfilled beside the reservation
  CHECK(fifo.records[3].start_s == doctest::Approx(100));  // FIFO: C waits behind H, then fits beside it on node 1
  const PolicyResult slurm = run(spec, jobs, "backfill");  // Slurm's loop: C at its next run (31 s), on node 1
  CHECK(slurm.records[2].start_s == doctest::Approx(100));
  CHECK(slurm.records[3].start_s == doctest::Approx(31));
}

TEST_CASE("bin-packing looks at every pool: a small job takes the fullest node anywhere, keeping a whole node free") {
  // Pools a (A100) and b (H100), one 8-GPU node each. X (6 GPUs, H100 only) runs on b from t=0. Y (2 GPUs, any
  // type, t=1) goes on b's node, the fullest that fits; taking a's empty node (the first pool's) left W (8 GPUs,
  // t=2) waiting for Y's end at 1,001 s.
  Json c = {{"pools", {{{"name", "a"}, {"gpu", "a100-sxm-80gb"}, {"gpus_per_node", 8}, {"nodes", 1}},
                       {{"name", "b"}, {"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 8}, {"nodes", 1}}}}};
  const ClusterSpec spec = parse_cluster(c, "/cluster", nullptr);
  ClusterJob x = job("X", 0, 6, 5000);
  x.gpu_types = {"h100-sxm-80gb"};
  const std::vector<ClusterJob> jobs = {x, job("Y", 1, 2, 1000), job("W", 2, 8, 100)};
  const PolicyResult r = run(spec, jobs, "fifo");
  CHECK(r.records[2].start_s == doctest::Approx(2));
  const PolicyResult spread = run(spec, jobs, "fifo+spread");  // spreading takes the emptiest node: a's
  CHECK(spread.records[2].start_s == doctest::Approx(1001));
}

TEST_CASE("gangs are all or nothing; bin-packing keeps a whole node free where spreading does not") {
  // X and Y take 4 GPUs each at t=0. Binpack puts both on node 0 and keeps node 1 whole: W (8 GPUs, t=1) starts
  // at once. Spread puts them on different nodes: 8 GPUs are free, but no node has 8, and W waits until 100.
  // Z (12 GPUs: one whole node and 4 more) never starts on part of its GPUs: it waits for a whole node and a half.
  const ClusterSpec c = two_nodes();
  const std::vector<ClusterJob> jobs = {job("X", 0, 4, 100), job("Y", 0, 4, 100), job("W", 1, 8, 10), job("Z", 2, 12, 10)};
  const PolicyResult pack = run(c, jobs, "backfill+binpack");
  CHECK(pack.records[2].start_s == doctest::Approx(1));
  CHECK(pack.records[3].start_s == doctest::Approx(100));
  const PolicyResult spread = run(c, jobs, "backfill+spread");
  CHECK(spread.records[2].start_s == doctest::Approx(100));
  CHECK(spread.records[3].start_s == doctest::Approx(110));  // W (8) and Z (12) do not fit together: Z after W
  CHECK(pack.mean_wait_s < spread.mean_wait_s);
}

TEST_CASE("gang-aware preemption frees one whole node, not scattered GPUs (volcano-sh/volcano#3291)") {
  // Four low-priority 4-GPU jobs alternate between the nodes under spread: L1 node 0 (t=0), L3 node 1 (t=1),
  // L2 node 0 (t=2), L4 node 1 (t=3). H (priority 10, a whole node) arrives at t=4. Evicting the most recent
  // first would free L4 + L2, 8 GPUs on two nodes, and H still could not start. The minimal set for the
  // placement is L4 + L3, node 1: H starts at once and L1, L2 run on.
  const ClusterSpec c = two_nodes();
  const std::vector<ClusterJob> jobs = {job("L1", 0, 4, 1000), job("L3", 1, 4, 1000), job("L2", 2, 4, 1000), job("L4", 3, 4, 1000),
                                        job("H", 4, 8, 50, 10)};
  const PolicyResult r = run(c, jobs, "priority+spread");
  CHECK(r.records[4].start_s == doctest::Approx(4));
  CHECK(r.preemptions == 2);
  CHECK(r.records[0].preemptions == 0);
  CHECK(r.records[2].preemptions == 0);
  CHECK(r.records[1].preemptions == 1);
  CHECK(r.records[3].preemptions == 1);
  // The victims restart after H (t=54) with restart + warm-up (180 + 60 s): no checkpoint yet, all work lost.
  CHECK(r.records[1].end_s == doctest::Approx(54 + 240 + 1000));
}

TEST_CASE("a failure costs the work since the last checkpoint plus the recovery") {
  // One 8-GPU job of 1,000 s checkpointing every 100 s; its node fails at 250 s (hardware). It keeps 200 s of
  // work and loses 50. A spare replaces the node after the reschedule time (120 s, at 370); the job then pays
  // detection 60 + drain 30 + restart 180 + warm-up 60 = 330 s before working again: it ends at
  // 370 + 330 + 800 = 1,500 = 1,000 + 50 lost + 450 of recovery (the recovery model's defaults).
  Json extra = {{"failure_events", {{{"node", 0}, {"at", "250s"}}}}};
  Json c = {{"pools", {{{"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 8}, {"nodes", 1}, {"spare_nodes", 1}}}},
            {"failure_events", {{{"node", 0}, {"at", "250s"}}}}, {"recovery", {{"repair", {{"distribution", "fixed"}, {"mean", "1000s"}}}}}};
  ClusterJob j = job("J", 0, 8, 1000);
  j.checkpoint_interval_s = 100;
  const PolicyResult r = run(parse_cluster(c, "/cluster", nullptr), {j}, "fifo");
  CHECK(r.failures == 1);
  CHECK(r.records[0].failures == 1);
  CHECK(r.records[0].end_s == doctest::Approx(1500));
  CHECK(r.gpu_hours_lost == doctest::Approx((50 + 330) * 8 / 3600.0));
  CHECK(r.goodput == doctest::Approx(8000.0 / (8 * (250 + 1130))));
  // Without a spare the job waits for the repair (fixed 1,000 s: back at 1,250): 1,250 + 330 + 800.
  c["pools"][0]["spare_nodes"] = 0;
  const PolicyResult wait = run(parse_cluster(c, "/cluster", nullptr), {j}, "fifo");
  CHECK(wait.records[0].end_s == doctest::Approx(2380));
}

TEST_CASE("runs in one process do not disturb each other") {
  const ClusterSpec c = two_nodes();
  const std::vector<ClusterJob> jobs = {job("A", 0, 8, 100), job("B", 1, 16, 50), job("C", 2, 8, 10)};
  const PolicyResult a = run(c, jobs, "fifo");
  const PolicyResult b = run(c, jobs, "fifo");
  CHECK(a.makespan_s == b.makespan_s);
  CHECK(a.mean_wait_s == b.mean_wait_s);
}

TEST_CASE("a job larger than any pool is rejected, not left waiting; the reason names a GPU type no pool has") {
  const PolicyResult r = run(two_nodes(), {job("A", 0, 8, 10), job("huge", 1, 64, 10)}, "fifo");
  CHECK(r.jobs == 1);
  CHECK(r.rejected == 1);
  CHECK(r.unfinished == 0);
  REQUIRE(r.rejected_reasons.size() == 1);
  CHECK(r.rejected_reasons[0].first == "larger than any pool it may use");
  // A job asking for a GPU type no pool has is not "larger than any pool"; an elastic job whose minimum fits runs.
  ClusterJob typed = job("typed", 2, 1, 10), elastic = job("elastic", 3, 24, 10);
  typed.gpu_types = {"b200"};
  elastic.elastic_min = 8, elastic.elastic_max = 32, elastic.elastic_step = 8;
  const PolicyResult t = run(two_nodes(), {typed, elastic}, "fifo");
  REQUIRE(t.rejected_reasons.size() == 1);
  CHECK(t.rejected_reasons[0].first == "no pool has a GPU type it accepts");
  CHECK(t.records[1].finished);
}

TEST_CASE("bad policy names are input errors naming the known ones") {
  ClusterSimOptions o;
  o.policy = "fifoo";
  std::string msg;
  try {
    simulate_cluster(two_nodes(), {job("A", 0, 8, 10)}, o);
  } catch (const InputError& e) {
    msg = e.what();
  }
  CHECK(msg.find("--policy") != std::string::npos);
  CHECK(msg.find("backfill") != std::string::npos);
  o.policy = "fifo+packed";
  msg.clear();
  try {
    simulate_cluster(two_nodes(), {job("A", 0, 8, 10)}, o);
  } catch (const InputError& e) {
    msg = e.what();
  }
  CHECK(msg.find("topology") != std::string::npos);
}

TEST_CASE("topology placement keeps a gang under the fewest leaf switches") {
  // Four 8-GPU nodes, two per leaf; node 0 busy. A 16-GPU job: binpack takes nodes 1 and 2 (two leaves),
  // topology takes nodes 2 and 3 (one leaf).
  Json c = {{"pools", {{{"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 8}, {"nodes", 4}}}}, {"network", {{"nodes_per_leaf", 2}}}};
  const ClusterSpec spec = parse_cluster(c, "/cluster", nullptr);
  ClusterState state(spec);
  state.allocate(state.place(job("busy", 0, 8, 1), PlacementKind::Binpack));
  CHECK(state.place(job("gang", 0, 16, 1), PlacementKind::Binpack).leaves == 2);
  CHECK(state.place(job("gang", 0, 16, 1), PlacementKind::Topology).leaves == 1);
}

TEST_CASE("quotas are honoured, idle quota is lent, and borrowed GPUs are returned by preemption") {
  // Queues a and b, 8 GPUs guaranteed each on 16. b submits two 8-GPU jobs at t=0 while a is idle: the second
  // borrows a's quota. a's job arrives at t=10 within its quota: b's borrowing job (the most recent) is evicted
  // and a's job starts at once. With b's borrowing limit 0, b's second job waits although a is idle.
  Json queues = {{{"name", "a"}, {"quota_gpus", 8}}, {{"name", "b"}, {"quota_gpus", 8}}};
  const ClusterSpec c = two_nodes({{"queues", queues}});
  ClusterJob b1 = job("b1", 0, 8, 1000), b2 = job("b2", 0, 8, 1000), a1 = job("a1", 10, 8, 100);
  b1.queue = b2.queue = "b";
  a1.queue = "a";
  const PolicyResult r = run(c, {b1, b2, a1}, "quota");
  CHECK(r.records[1].start_s == doctest::Approx(0));  // borrowed
  CHECK(r.records[2].start_s == doctest::Approx(10));  // returned
  CHECK(r.preemptions == 1);
  CHECK(r.records[0].preemptions + r.records[1].preemptions == 1);
  queues[1]["borrowing_limit_gpus"] = 0;
  const PolicyResult strict = run(two_nodes({{"queues", queues}}), {b1, b2, a1}, "quota");
  CHECK(strict.records[1].start_s == doctest::Approx(1000));  // waits for b1 although 8 GPUs are idle until 10
  CHECK(strict.records[2].start_s == doctest::Approx(10));
  CHECK(strict.preemptions == 0);
}

TEST_CASE("Kueue cohorts: queues borrow only within their cohort; a lending limit keeps part of the unused quota") {
  // Queues a and b, 8 GPUs guaranteed each on 16 (no GPU unguaranteed). a submits two 8-GPU jobs at t=0 while b is
  // idle. In one cohort, a2 borrows b's unused quota and starts at 0; in cohorts x and y it may not borrow across, and
  // starts when a1 ends at 100, though 8 GPUs stay idle.
  ClusterJob a1 = job("a1", 0, 8, 100), a2 = job("a2", 0, 8, 100);
  a1.queue = a2.queue = "a";
  Json one = {{{"name", "a"}, {"quota_gpus", 8}}, {{"name", "b"}, {"quota_gpus", 8}}};
  CHECK(run(two_nodes({{"queues", one}}), {a1, a2}, "quota").records[1].start_s == doctest::Approx(0));
  Json two = {{{"name", "a"}, {"quota_gpus", 8}, {"cohort", "x"}}, {{"name", "b"}, {"quota_gpus", 8}, {"cohort", "y"}}};
  CHECK(run(two_nodes({{"queues", two}}), {a1, a2}, "quota").records[1].start_s == doctest::Approx(100));
  // One cohort, b lending at most 4 of its 8: a's 4-GPU job borrows 4 at once; its 8-GPU job would borrow 8 > 4 and
  // waits until a1 ends at 100 (then a holds 4 + 8 = 12: 4 borrowed, within the limit).
  ClusterJob small = job("a-small", 0, 4, 100), big = job("a-big", 0, 8, 100);
  small.queue = big.queue = "a";
  Json lending = {{{"name", "a"}, {"quota_gpus", 8}}, {{"name", "b"}, {"quota_gpus", 8}, {"lending_limit_gpus", 4}}};
  const PolicyResult r = run(two_nodes({{"queues", lending}}), {a1, small, big}, "quota");
  CHECK(r.records[1].start_s == doctest::Approx(0));
  CHECK(r.records[2].start_s == doctest::Approx(100));
}

TEST_CASE("Kueue reclaim within the cohort; a queue outside every cohort borrows nothing") {
  // Queues a (8 GPUs) and b (8) in cohort x on 16 GPUs; queue c is not listed (no quota, cohort ""). b1 runs within
  // b's quota from 0; b2 borrows a's unused quota at t=1 (same cohort); a1 arrives at t=10 within a's quota and
  // takes it back: b2, the cohort's borrower, is preempted. c1 may borrow only what cohort "" lends: no queue there
  // lends and every GPU is some queue's quota, so it never starts (Kueue would keep it pending), and the run rejects
  // it when nothing else runs.
  Json queues = {{{"name", "a"}, {"quota_gpus", 8}, {"cohort", "x"}}, {{"name", "b"}, {"quota_gpus", 8}, {"cohort", "x"}}};
  ClusterJob b1 = job("b1", 0, 8, 1000), cjob = job("c1", 0, 8, 50), b2 = job("b2", 1, 8, 1000), a1 = job("a1", 10, 8, 100);
  b1.queue = b2.queue = "b";
  cjob.queue = "c";
  a1.queue = "a";
  const PolicyResult r = run(two_nodes({{"queues", queues}}), {b1, cjob, b2, a1}, "quota");
  CHECK(r.records[0].start_s == doctest::Approx(0));
  CHECK(r.records[2].start_s == doctest::Approx(1));   // b2 borrows a's unused quota (cohort x)
  CHECK(r.records[3].start_s == doctest::Approx(10));  // a1 takes it back
  CHECK(r.records[2].preemptions == 1);
  CHECK(r.records[0].preemptions == 0);
  CHECK(r.records[1].start_s < 0);
  CHECK(r.rejected == 1);
}

TEST_CASE("per-user limits: a user's job beyond them waits without holding back other users' jobs, under every ordering") {
  // One 8-GPU node; every user may run 1 job (Slurm MaxJobsPerUser=1), alice at most 4 GPUs (MaxTRESPerUser).
  // alice's A1 (1 GPU, 100 s) starts at 0; her A2 is held by the job limit and, not eligible, does not block bob's
  // B1 (t=1), which starts at once; A2 starts when A1 ends at 100. A 5-GPU job of alice can never start: rejected.
  Json limits = {{"max_running_jobs", 1}, {"users", {{"alice", {{"max_running_jobs", 1}, {"max_gpus", 4}}}}}};
  ClusterJob a1 = job("A1", 0, 1, 100), a2 = job("A2", 0, 1, 100), b1 = job("B1", 1, 1, 100), a5 = job("A5", 0, 5, 10);
  a1.user = a2.user = a5.user = "alice";
  b1.user = "bob";
  for (const char* policy : {"fifo", "backfill", "multifactor", "priority"}) {
    const std::string name = policy;
    CAPTURE(name);
    const PolicyResult r = run(one_node({{"user_limits", limits}}), {a1, a2, a5, b1}, policy);
    CHECK(r.records[0].start_s == doctest::Approx(0));
    CHECK(r.records[1].start_s == doctest::Approx(100));
    CHECK(r.records[3].start_s == doctest::Approx(1));
    CHECK(r.records[2].start_s < 0);
    REQUIRE(r.rejected_reasons.size() == 1);
    CHECK(r.rejected_reasons[0].first == "more GPUs than its user's limit (max_gpus)");
  }
  // Without limits all three 1-GPU jobs start on arrival.
  const PolicyResult free = run(one_node(), {a1, a2, b1}, "fifo");
  CHECK(free.records[1].start_s == doctest::Approx(0));
  // The GPU limit alone: alice's two 3-GPU jobs would hold 6 > 4, so the second waits for the first (100 s).
  ClusterJob a3 = job("A3", 0, 3, 100), a4 = job("A4", 0, 3, 100);
  a3.user = a4.user = "alice";
  const PolicyResult g = run(one_node({{"user_limits", {{"max_gpus", 4}}}}), {a3, a4}, "fifo");
  CHECK(g.records[1].start_s == doctest::Approx(100));
}

TEST_CASE("account limits: a group cap on an account's users together, under every ordering") {
  // One 8-GPU node; account "vision" (alice and bob) may hold 4 GPUs at once (Slurm GrpTRES=gres/gpu=4). alice's
  // A (3 GPUs, 100 s) starts at 0; bob's B (2 GPUs, t=1) would bring vision to 5 > 4 and waits for A's end (100);
  // carol, in no account, starts C (2 GPUs, t=2) at once beside A. A job of dave naming the account itself in the
  // trace (6 GPUs > 4) can never start: rejected with the reason.
  Json accounts = {{"vision", {{"max_gpus", 4}, {"users", {"alice", "bob"}}}}};
  ClusterJob a = job("A", 0, 3, 100), b = job("B", 1, 2, 100), c = job("C", 2, 2, 100), d = job("D", 0, 6, 10);
  a.user = "alice", b.user = "bob", c.user = "carol", d.user = "dave", d.account = "vision";
  for (const char* policy : {"fifo", "backfill", "multifactor", "priority"}) {
    const std::string name = policy;
    CAPTURE(name);
    const PolicyResult r = run(one_node({{"accounts", accounts}}), {a, d, b, c}, policy);
    CHECK(r.records[0].start_s == doctest::Approx(0));
    CHECK(r.records[2].start_s == doctest::Approx(100));
    CHECK(r.records[3].start_s == doctest::Approx(2));
    CHECK(r.records[1].start_s < 0);
    REQUIRE(r.rejected_reasons.size() == 1);
    CHECK(r.rejected_reasons[0].first == "more GPUs than its account's limit (max_gpus)");
  }
  // GrpJobs: vision may run one job at a time; bob's B then waits for A although GPUs are free.
  const PolicyResult jobs = run(one_node({{"accounts", {{"vision", {{"max_running_jobs", 1}, {"users", {"alice", "bob"}}}}}}}), {a, b}, "fifo");
  CHECK(jobs.records[1].start_s == doctest::Approx(100));
  // A user in two accounts has no default account: an error naming the path.
  std::string msg;
  try {
    one_node({{"accounts", {{"x", {{"users", {"alice"}}}}, {"y", {{"users", {"alice"}}}}}}});
  } catch (const InputError& e) {
    msg = e.what();
  }
  CHECK(msg.find("/cluster/accounts/y/users/0") != std::string::npos);
  CHECK(msg.find("a user of one account only") != std::string::npos);
}

TEST_CASE("Volcano proportion: a queue's capability caps it and a guarantee is kept for its queue") {
  // 16 GPUs. Queue a with capability 8 and three 8-GPU jobs of 100 s, alone: deserved min(16, 8, 24) = 8, so one job
  // runs at a time (0, 100, 200) while 8 GPUs stay idle; without the capability two run at once (0, 0, 100).
  ClusterJob a1 = job("a1", 0, 8, 100), a2 = job("a2", 0, 8, 100), a3 = job("a3", 0, 8, 100);
  a1.queue = a2.queue = a3.queue = "a";
  const PolicyResult capped = run(two_nodes({{"queues", {{{"name", "a"}, {"capability_gpus", 8}}}}}), {a1, a2, a3}, "proportion");
  CHECK(capped.records[0].start_s == doctest::Approx(0));
  CHECK(capped.records[1].start_s == doctest::Approx(100));
  CHECK(capped.records[2].start_s == doctest::Approx(200));
  const PolicyResult free = run(two_nodes({{"queues", {{{"name", "a"}}}}}), {a1, a2, a3}, "proportion");
  CHECK(free.records[1].start_s == doctest::Approx(0));
  // Queue b guaranteed 8 GPUs and idle: a's real capability is 16 - 8 = 8, one job at a time again.
  const PolicyResult kept = run(two_nodes({{"queues", {{{"name", "a"}}, {{"name", "b"}, {"guarantee_gpus", 8}}}}}), {a1, a2, a3}, "proportion");
  CHECK(kept.records[1].start_s == doctest::Approx(100));
  // Weights 3 : 1, both queues asking two 8-GPU jobs: water-filling gives a 12 and b 4, too little for b's gang, so
  // b waits for a's first job (1000 s). With b guaranteed 8, a's real capability is 8 and b's share is raised to 8:
  // a1 and b1 both start at 0.
  ClusterJob x1 = job("x1", 0, 8, 1000), x2 = job("x2", 0, 8, 1000), y1 = job("y1", 0, 8, 1000), y2 = job("y2", 0, 8, 1000);
  x1.queue = x2.queue = "a", y1.queue = y2.queue = "b";
  const PolicyResult weighted = run(two_nodes({{"queues", {{{"name", "a"}, {"weight", 3}}, {{"name", "b"}, {"weight", 1}}}}}), {x1, x2, y1, y2}, "proportion");
  CHECK(weighted.records[0].start_s == doctest::Approx(0));
  CHECK(weighted.records[2].start_s == doctest::Approx(1000));
  const PolicyResult floor = run(two_nodes({{"queues", {{{"name", "a"}, {"weight", 3}}, {{"name", "b"}, {"weight", 1}, {"guarantee_gpus", 8}}}}}), {x1, x2, y1, y2}, "proportion");
  CHECK(floor.records[0].start_s == doctest::Approx(0));
  CHECK(floor.records[2].start_s == doctest::Approx(0));
  CHECK(floor.records[1].start_s == doctest::Approx(1000));
}

TEST_CASE("Volcano proportion: deserved shares water-filled by weight; a queue below its share reclaims") {
  // 16 GPUs, queues a (weight 1) and b (weight 3). At t=0 only a asks: two 8-GPU jobs, deserved 16, both run. b's
  // 8-GPU job at t=10 makes the requests a 16, b 8: round 1 gives a 16 x 1/4 = 4 and b 12, capped at its 8; round 2
  // gives a the 4 left: a 8, b 8. a is above its share, b below: b reclaims a's most recent job and starts at 10.
  Json queues = {{{"name", "a"}, {"weight", 1}}, {{"name", "b"}, {"weight", 3}}};
  ClusterJob a1 = job("a1", 0, 8, 1000), a2 = job("a2", 1, 8, 1000), b1 = job("b1", 10, 8, 100);
  a1.queue = a2.queue = "a";
  b1.queue = "b";
  const PolicyResult r = run(two_nodes({{"queues", queues}}), {a1, a2, b1}, "proportion");
  CHECK(r.records[0].start_s == doctest::Approx(0));
  CHECK(r.records[1].start_s == doctest::Approx(1));
  CHECK(r.records[2].start_s == doctest::Approx(10));
  CHECK(r.records[1].preemptions == 1);  // a2, the most recently started
  CHECK(r.records[0].preemptions == 0);
  // Without reclaim (fifo), b1 waits for a1 to end at 1000.
  CHECK(run(two_nodes({{"queues", queues}}), {a1, a2, b1}, "fifo").records[2].start_s == doctest::Approx(1000));
  // Weights 3 : 1 the other way round: a deserves 12 of 16 (its request 16 capped by 16 x 3/4), b 4 < its 8-GPU job:
  // b1 does not start (it would pass its share) until a1 ends at 1000: a's request falls to 8, so b deserves 8.
  Json swapped = {{{"name", "a"}, {"weight", 3}}, {{"name", "b"}, {"weight", 1}}};
  const PolicyResult s = run(two_nodes({{"queues", swapped}}), {a1, a2, b1}, "proportion");
  CHECK(s.preemptions == 0);
  CHECK(s.records[2].start_s == doctest::Approx(1000));
}

TEST_CASE("drf gives a freed GPU to the tenant with the smallest share; FIFO to the earliest job") {
  // One node of 2 GPUs. Alice runs A1 (100 s) and A2 (1,000 s) from t=0; A3 (alice, t=1) and B1 (bob, t=2) wait.
  // At t=100 one GPU frees: FIFO starts A3 (earlier); DRF starts B1 (bob holds 0 GPUs, alice 1), A3 at 200.
  Json c = {{"pools", {{{"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 2}, {"nodes", 1}}}}};
  const ClusterSpec spec = parse_cluster(c, "/cluster", nullptr);
  std::vector<ClusterJob> jobs = {job("A1", 0, 1, 100), job("A2", 0, 1, 1000), job("A3", 1, 1, 100), job("B1", 2, 1, 100)};
  for (int i = 0; i < 3; ++i) jobs[static_cast<std::size_t>(i)].user = "alice";
  jobs[3].user = "bob";
  const PolicyResult fifo = run(spec, jobs, "fifo");
  CHECK(fifo.records[2].start_s == doctest::Approx(100));
  CHECK(fifo.records[3].start_s == doctest::Approx(200));
  const PolicyResult drf = run(spec, jobs, "drf");
  CHECK(drf.records[3].start_s == doctest::Approx(100));
  CHECK(drf.records[2].start_s == doctest::Approx(200));
}

TEST_CASE("las runs new jobs before ones with much attained service, preempting them; waits count the time re-queued") {
  // One 8-GPU node, threshold 3,600 GPU-s. L (8 GPUs, 10,000 s) runs from 0 and crosses the threshold at 450 s.
  // N (8 GPUs, 100 s) arrives at 1,000: it is in the first queue, L in the second: L is evicted, N runs
  // 1,000-1,100, L restarts (restart + warm-up 240 s, work since its last hourly checkpoint lost: all 1,000 s).
  const ClusterSpec spec = one_node();
  const PolicyResult r = run(spec, {job("L", 0, 8, 10000), job("N", 1000, 8, 100)}, "las");
  CHECK(r.records[1].start_s == doctest::Approx(1000));
  CHECK(r.records[0].preemptions == 1);
  CHECK(r.records[0].end_s == doctest::Approx(1100 + 240 + 10000));
  // Waits count the time re-queued: L waits again from 1,000 to 1,100 (100 s; its first wait 0), N 0. Mean wait
  // 50 s, mean first wait 0.
  CHECK(r.records[0].wait_s == doctest::Approx(100));
  CHECK(r.records[0].first_wait_s == doctest::Approx(0));
  CHECK(r.mean_wait_s == doctest::Approx(50));
  CHECK(r.mean_first_wait_s == doctest::Approx(0));
  const PolicyResult fifo = run(spec, {job("L", 0, 8, 10000), job("N", 1000, 8, 100)}, "fifo");
  CHECK(fifo.records[1].start_s == doctest::Approx(10000));
}

TEST_CASE("a Poisson synthetic workload keeps the trace's mix and offers the asked load") {
  // Fixture: 1-GPU jobs of e^4 and e^6 s (log-mean 5, log-sd 1 by maximum likelihood), 8-GPU jobs all e^3 s
  // (log-sd 0), 30 and 10 of them: shares 0.75 and 0.25.
  std::vector<ClusterJob> trace;
  for (int i = 0; i < 30; ++i) trace.push_back(job("s" + std::to_string(i), i, 1, std::exp(i % 2 ? 4.0 : 6.0)));
  for (int i = 0; i < 10; ++i) trace.push_back(job("b" + std::to_string(i), i, 8, std::exp(3.0)));
  const WorkloadFit fit = fit_workload(trace, "fixture");
  REQUIRE(fit.sizes.size() == 2);
  CHECK(fit.sizes[0].share == doctest::Approx(0.75));
  CHECK(fit.sizes[0].log_mean == doctest::Approx(5));
  CHECK(fit.sizes[0].log_sd == doctest::Approx(1));
  CHECK(fit.sizes[1].log_sd == doctest::Approx(0).epsilon(1e-6));
  // E[gpus x duration] = 0.75 m1 + 0.25 x 8 e^3, m1 the mean of the lognormal (5, 1) truncated at the class's
  // longest job e^6: e^(5 + 1/2) Phi((6 - 5 - 1)/1) / Phi((6 - 5)/1) = e^5.5 x 0.5 / 0.841345 (Phi(1), a table value).
  CHECK(fit.sizes[0].log_max == doctest::Approx(6));
  CHECK(fit.mean_gpu_seconds() == doctest::Approx(0.75 * std::exp(5.5) * 0.5 / 0.841345 + 2 * std::exp(3.0)).epsilon(1e-5));
  SyntheticSpec spec;
  spec.model = SyntheticModel::Poisson;
  spec.jobs = 20000;
  spec.span_s = 30 * 86400.0;
  spec.load = 0.6;
  spec.cluster_gpus = 64;
  spec.max_gpus = 64;
  double scale = 0;
  const std::vector<ClusterJob> jobs = synthesize_workload(fit, spec, &scale);
  double offered = 0;
  int big = 0;
  for (const ClusterJob& j : jobs) {
    offered += j.gpus * j.duration_s, big += j.gpus == 8;
    CHECK(j.duration_s <= scale * std::exp(6.0) * (1 + 1e-9));  // never beyond the trace's longest (scaled)
  }
  CHECK(offered / (64 * 30 * 86400.0) == doctest::Approx(0.6).epsilon(0.05));
  CHECK(big / 20000.0 == doctest::Approx(0.25).epsilon(0.05));
  CHECK(jobs.back().submit_s == doctest::Approx(30 * 86400.0).epsilon(0.03));
  CHECK(std::is_sorted(jobs.begin(), jobs.end(), [](const ClusterJob& a, const ClusterJob& b) { return a.submit_s < b.submit_s; }));
}

TEST_CASE("a block-bootstrap synthetic workload keeps the trace's bursts, sizes and durations, and offers the asked load") {
  // Fixture: every 1,000 s a burst of 9 one-GPU jobs in the same second (a sweep, 300 s each), then one 8-GPU job
  // (5,000 s) 500 s later: 100 bursts. 8 of every 10 gaps are 0 (within a burst; the burst's first job and the
  // 8-GPU job come 500 s after the job before): a Poisson process of the same rate would have almost none under a
  // second (P(gap < 1 s) = 1 - e^(-1/100) = 1%).
  std::vector<ClusterJob> trace;
  for (int b = 0; b < 100; ++b) {
    for (int k = 0; k < 9; ++k) trace.push_back(job("s", b * 1000.0, 1, 300));
    trace.push_back(job("big", b * 1000.0 + 500, 8, 5000));
  }
  const WorkloadFit fit = fit_workload(trace, "fixture");
  SyntheticSpec spec;
  spec.jobs = 5000;
  spec.span_s = 7 * 86400.0;
  spec.load = 0.5;
  spec.cluster_gpus = 64;
  spec.max_gpus = 64;
  spec.block_jobs = 20;
  double scale = 0;
  const std::vector<ClusterJob> jobs = synthesize_workload(fit, spec, &scale);
  REQUIRE(jobs.size() == 5000);
  const WorkloadComparison c = compare_workloads(fit, jobs, scale);
  CHECK(c.trace_same_second == doctest::Approx(800.0 / 999));  // 8 x 100 zero gaps of the 999
  CHECK(c.synthetic_same_second == doctest::Approx(0.8).epsilon(0.02));
  CHECK(c.synthetic_median_duration_s == doctest::Approx(300));
  double offered = 0;
  int big = 0;
  for (const ClusterJob& j : jobs) offered += j.gpus * j.duration_s, big += j.gpus == 8;
  CHECK(load_in_span(jobs, 64, 7 * 86400.0) == doctest::Approx(0.5).epsilon(1e-6));  // exact by construction
  // The jobs arriving late run past the week: the whole GPU-time is more than the load within it.
  CHECK(offered / (64 * 7 * 86400.0) > 0.5);
  CHECK(big / 5000.0 == doctest::Approx(0.1).epsilon(0.02));
  CHECK(jobs.back().submit_s == doctest::Approx(7 * 86400.0));
  CHECK(std::is_sorted(jobs.begin(), jobs.end(), [](const ClusterJob& a, const ClusterJob& b) { return a.submit_s < b.submit_s; }));
  // Poisson over the same fit: the bursts are gone.
  spec.model = SyntheticModel::Poisson;
  const std::vector<ClusterJob> poisson = synthesize_workload(fit, spec, &scale);
  CHECK(compare_workloads(fit, poisson, scale).synthetic_same_second < 0.05);
}

TEST_CASE("one job alone on a cluster loses what the single-job Monte-Carlo of `trainsim reliability` says") {
  // 16 nodes of 8 GPUs and one spare, 20 days of work, hourly checkpoints at no cost, 50 failures per 1,000
  // node-days (about 16 a run), the recovery defaults (detection 60 s, drain 30, reschedule 120, restart 180,
  // warm-up 60), repairs lognormal with a mean of 24 h. The job's ETTR (work / wall time) from the cluster run
  // and from the Monte-Carlo of sim/reliability/job_montecarlo (the engine of `trainsim reliability`) must agree within
  // their 99% confidence intervals: same failures, checkpoints, spares and repairs, two different simulators.
  // Without a spare as well: every hardware failure then waits for a repair (ETTR about 0.52 in both).
  const double work = 20 * 86400.0;
  Json failures = {{"preset", "default"}, {"failures_per_1000_node_days", 50}};
  for (const int spares : {1, 0}) {
  CAPTURE(spares);
  Json c = {{"pools", {{{"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 8}, {"nodes", 16}, {"spare_nodes", spares}}}}, {"failures", failures},
            {"checkpoint_interval", "1h"}};
  const ClusterSpec spec = parse_cluster(c, "/cluster", nullptr);
  ClusterJob j = job("train", 0, 128, work);
  auto mean_ci = [](const std::vector<double>& v) {
    double m = 0, s2 = 0;
    for (double x : v) m += x;
    m /= static_cast<double>(v.size());
    for (double x : v) s2 += (x - m) * (x - m);
    return std::pair<double, double>{m, 2.576 * std::sqrt(s2 / static_cast<double>(v.size() - 1) / static_cast<double>(v.size()))};
  };
  std::vector<double> cluster_ettr;
  int failures_seen = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    ClusterSimOptions o;
    o.policy = "fifo";
    o.seed = seed;
    const PolicyResult r = simulate_cluster(spec, {j}, o);
    cluster_ettr.push_back(work / r.records[0].end_s);
    CHECK(r.mean_job_ettr == doctest::Approx(work / r.records[0].end_s));  // started at 0: reliability's ETTR
    failures_seen += r.failures;
  }
  trainsim::sim::JobSimConfig cfg;
  cfg.nodes = 16;
  cfg.gpus_per_node = 8;
  cfg.work_s = work;
  cfg.interval_s = 3600;
  const RecoverySettings rs = spec.recovery;
  cfg.detection_s = rs.detection_s, cfg.drain_s = rs.drain_s, cfg.reschedule_s = rs.reschedule_s, cfg.restart_s = rs.restart_s, cfg.warmup_s = rs.warmup_s;
  cfg.spare_nodes = spares;
  cfg.repair = std::shared_ptr<const TimeDistribution>(make_distribution(rs.repair_distribution, rs.repair_mean_s, rs.repair_shape, "repair"));
  trainsim::sim::JobSimulator mc(cfg, spec.failures);
  std::vector<double> mc_ettr;
  for (std::uint64_t seed = 1; seed <= 600; ++seed) mc_ettr.push_back(mc.run(seed).ettr());
  const auto [cm, cci] = mean_ci(cluster_ettr);
  const auto [mm, mci] = mean_ci(mc_ettr);
  MESSAGE("ETTR cluster ", cm, " +- ", cci, " (", failures_seen / 60.0, " failures a run), Monte-Carlo ", mm, " +- ", mci);
  if (spares == 1) CHECK(failures_seen / 60.0 == doctest::Approx(16 * 20 * 0.05).epsilon(0.15));
  CHECK(std::abs(cm - mm) <= cci + mci);
  }
}

TEST_CASE("spot nodes are reclaimed as a Poisson process over their time in service, and cost their jobs the wait") {
  // One spot node of 8 GPUs reclaimed once an hour on average (24 per node-day), away 600 s each time; one 8-GPU
  // job of 20,000 s checkpointing every 100 s. Over many runs the reclaims must match rate x time in service
  // (end - 600 s per reclaim) within 3 Poisson standard deviations. Each reclaim costs the job the 600 s away,
  // at most 100 s of rolled-back work and at most the 240 s restart + warm-up: the end lies in
  // [20,000 + 600 n, 20,000 + 940 n].
  Json c = {{"pools", {{{"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 8}, {"nodes", 1}, {"spot", true}, {"reclaims_per_node_day", 24},
                         {"reclaimed_for", "600s"}}}}};
  const ClusterSpec spec = parse_cluster(c, "/cluster", nullptr);
  ClusterJob j = job("J", 0, 8, 20000);
  j.checkpoint_interval_s = 100;
  double reclaims = 0, in_service = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    ClusterSimOptions o;
    o.seed = seed;
    const PolicyResult r = simulate_cluster(spec, {j}, o);
    const int n = r.spot_reclaims;
    CHECK(r.records[0].reclaims == n);
    CHECK(r.records[0].end_s >= 20000 + 600.0 * n - 1e-6);
    CHECK(r.records[0].end_s <= 20000 + 940.0 * n + 1e-6);
    reclaims += n;
    in_service += r.records[0].end_s - 600.0 * n;
  }
  const double expected = in_service / 3600;
  MESSAGE("spot reclaims ", reclaims, " against ", expected, " expected");
  CHECK(std::abs(reclaims - expected) <= 3 * std::sqrt(expected));
  // A spot pool needs its rates: no default.
  Json bad = c;
  bad["pools"][0].erase("reclaims_per_node_day");
  CHECK_THROWS_AS(parse_cluster(bad, "/cluster", nullptr), InputError);
}

TEST_CASE("energy and emissions follow the allocated GPU-hours and the grid's intensity by hour") {
  // One 8-GPU job of 2 h on H100s (700 W TDP, the preset's): 8 x 0.7 kW x 2 h = 11.2 kWh. The grid at 100 g/kWh in
  // hour 0 and 300 in hour 1: 5.6 kW x (1 h x 100 + 1 h x 300) = 2,240 g. Started at hour 23 instead: 5.6 x (0 + 100).
  std::vector<double> hourly(24, 0.0);
  hourly[0] = 100, hourly[1] = 300;
  const ClusterSpec c = two_nodes({{"carbon_intensity", hourly}});
  const PolicyResult r = run(c, {job("J", 0, 8, 7200)}, "fifo");
  CHECK(r.energy_kwh == doctest::Approx(11.2));
  CHECK(r.carbon_kg == doctest::Approx(2.24));
  const PolicyResult late = run(two_nodes({{"carbon_intensity", hourly}, {"carbon_start_hour", 23}}), {job("J", 0, 8, 7200)}, "fifo");
  CHECK(late.carbon_kg == doctest::Approx(0.56));
}

TEST_CASE("a job over more leaf switches runs slower by its cross-leaf factor; topology placement avoids it") {
  // Four 8-GPU nodes, two per leaf. B (16 GPUs, 1,000 s, 1.5x slower across leaves): topology puts it under one
  // leaf (1,000 s), spread over two (1,500 s). A failure at 600 s under spread: 600 s at 1.5x is 400 s of work,
  // on a checkpoint (every 100 s), all kept; the rerun does the other 600 s of work at 1.5x.
  Json c = {{"pools", {{{"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 8}, {"nodes", 4}}}}, {"network", {{"nodes_per_leaf", 2}}}};
  ClusterJob b = job("B", 0, 16, 1000);
  b.cross_leaf_slowdown = 1.5;
  b.checkpoint_interval_s = 100;
  const ClusterSpec spec = parse_cluster(c, "/cluster", nullptr);
  CHECK(run(spec, {b}, "fifo+topology").records[0].end_s == doctest::Approx(1000));
  CHECK(run(spec, {b}, "fifo+spread").records[0].end_s == doctest::Approx(1500));
  c["failure_events"] = {{{"node", 0}, {"at", "600s"}, {"kind", "software"}}};
  const PolicyResult r = run(parse_cluster(c, "/cluster", nullptr), {b}, "fifo+spread");
  // Restart in place after detection 60 + drain 30 + restart 180 + warm-up 60 = 330 s, then 600 s of work x 1.5.
  CHECK(r.records[0].end_s == doctest::Approx(600 + 330 + 600 * 1.5));
}

TEST_CASE("a job given as a scenario: GPUs from its layout, duration from the step model, the cross-leaf factor from the estimate at 1/oversubscription") {
  // Mixtral 8x7B with ep 8 on 64 H100s: its all-to-all crosses nodes. The factor must be the ratio of the step
  // model's two estimates (the inter-node bandwidth as given, and divided by the spine's 4), computed here
  // independently; on a non-blocking spine it is 1.
  const Json scenario = {{"model", "mixtral-8x7b"},
                         {"training", {{"seq_len", 4096}, {"global_batch_size", 256}, {"train_tokens", "5B"}}},
                         {"parallel", {{"tp", 2}, {"ep", 8}, {"pp", 1}, {"micro_batch_size", 1}}},
                         {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 64}}}};
  Json c = {{"pools", {{{"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 8}, {"nodes", 16}}}}, {"network", {{"nodes_per_leaf", 8}, {"oversubscription", 4}}}};
  const Json jobs = Json::array({{{"id", "moe"}, {"scenario", scenario}}});
  const std::vector<ClusterJob> tapered = jobs_from_scenarios(jobs, "", "/cluster/jobs", parse_cluster(c, "/cluster", nullptr));
  REQUIRE(tapered.size() == 1);
  const Scenario s = parse_scenario(scenario);
  HardwareSpec slow = s.hardware;
  slow.inter_node.bandwidth /= 4;
  const StepModel full(s.model, s.training, s.hardware);
  const StepEstimate step = full.estimate(s.parallel);
  CHECK(tapered[0].gpus == 64);
  CHECK(tapered[0].duration_s == doctest::Approx(full.training_cost(step, s.parallel).time_to_train_s));
  CHECK(tapered[0].cross_leaf_slowdown == doctest::Approx(StepModel(s.model, s.training, slow).estimate(s.parallel).time_s / step.time_s));
  CHECK(tapered[0].cross_leaf_slowdown > 1.2);
  c["network"]["oversubscription"] = 1;
  CHECK(jobs_from_scenarios(jobs, "", "/cluster/jobs", parse_cluster(c, "/cluster", nullptr))[0].cross_leaf_slowdown == doctest::Approx(1));
}

TEST_CASE("releasing a whole GPU frees that GPU, not one that shared jobs have filled") {
  // One node of 2 GPUs with sharing on. A half-GPU pod takes GPU 0, A takes the idle GPU 1 whole, a second pod
  // fills GPU 0. When A ends, GPU 1 is idle again and GPU 0 stays full: one whole GPU free, not the shared one.
  Json c = {{"pools", {{{"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 2}, {"nodes", 1}}}}, {"gpu_sharing", true}};
  const ClusterSpec spec = parse_cluster(c, "/cluster", nullptr);
  ClusterState state(spec);
  ClusterJob half = job("pod", 0, 1, 1);
  half.gpu_milli = 500;
  state.allocate(state.place(half, PlacementKind::Binpack));
  const Placement a = state.place(job("A", 0, 1, 1), PlacementKind::Binpack);
  state.allocate(a);
  state.allocate(state.place(half, PlacementKind::Binpack));
  CHECK(state.free_whole(0) == 0);
  state.release(a);
  CHECK(state.free_whole(0) == 1);
  CHECK(state.free_milli(0, 0) == 0);
  CHECK(state.free_milli(0, 1) == 1000);
  CHECK(state.allocated_milli() == 1000);
}

namespace {
ClusterJob elastic(const std::string& id, double submit, int gpus, double duration, int min_gpus, int max_gpus) {
  ClusterJob j = job(id, submit, gpus, duration);
  j.elastic_min = min_gpus;
  j.elastic_max = max_gpus;
  return j;
}
}  // namespace

TEST_CASE("an elastic job starts on the GPUs it finds and grows when a node frees, if the restart pays") {
  // Two 8-GPU nodes. A (8 GPUs, 1,000 s) holds node 0. B asks 16 GPUs (elastic 8-16, 1,000 s on 16) at t=1: it
  // starts at once on node 1, at half speed (a trace job's speed is in proportion to its GPUs). When A ends at
  // 1,000, B has done 999 x 0.5 = 499.5 s of its work; growing costs a restart + warm-up (180 + 60 s, the recovery
  // defaults) and runs the other 500.5 s at full speed: it ends at 1,000 + 240 + 500.5 = 1,740.5, not at 2,001
  // on 8 GPUs nor at 2,000 had it waited for 16 as a rigid job does.
  const ClusterSpec c = two_nodes();
  const PolicyResult r = run(c, {job("A", 0, 8, 1000), elastic("B", 1, 16, 1000, 8, 16)}, "fifo");
  CHECK(r.records[1].start_s == doctest::Approx(1));
  CHECK(r.records[1].end_s == doctest::Approx(1740.5));
  CHECK(r.records[1].resizes == 1);
  CHECK(r.resizes == 1);
  CHECK(r.gpu_hours_lost == doctest::Approx(240 * 16 / 3600.0));  // the resize's restart on 16 GPUs; no work rolled back
  const PolicyResult rigid = run(c, {job("A", 0, 8, 1000), job("B", 1, 16, 1000)}, "fifo");
  CHECK(rigid.records[1].end_s == doctest::Approx(2000));
  // Where the rest of the work is shorter than the restart, it does not grow: B with 200 s of work left at
  // 1,000 (on 8 GPUs: 400 s) finishes at 1,401 on half the GPUs rather than at 1,000 + 240 + 200.
  const PolicyResult short_rest = run(c, {job("A", 0, 8, 1000), elastic("B", 1, 16, 700, 8, 16)}, "fifo");
  CHECK(short_rest.records[1].end_s == doctest::Approx(1 + 1400));
  CHECK(short_rest.records[1].resizes == 0);
}

TEST_CASE("an elastic job continues on fewer GPUs after a node fails, and grows back when it is repaired") {
  // J: 16 GPUs over two nodes (elastic 8-16), 1,000 s, checkpoints every 100 s; node 1 fails at 250 s, no spare,
  // repair 1,000 s. It keeps 200 s of work (loses 50), recovers in detection 60 + drain 30 + restart 180 +
  // warm-up 60 = 330 s without waiting for a node, and works on node 0 at half speed: by the repair at 1,250 it
  // has done (1,000 - 330) x 0.5 = 335 s more, 465 s left. Growing back (240 s) ends it at 1,250 + 240 + 465 =
  // 1,955, where the rigid job waits for the repair and ends at 2,380.
  Json c = {{"pools", {{{"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 8}, {"nodes", 2}}}},
            {"failure_events", {{{"node", 1}, {"at", "250s"}}}}, {"recovery", {{"repair", {{"distribution", "fixed"}, {"mean", "1000s"}}}}}};
  ClusterJob j = elastic("J", 0, 16, 1000, 8, 16);
  j.checkpoint_interval_s = 100;
  const ClusterSpec spec = parse_cluster(c, "/cluster", nullptr);
  const PolicyResult r = run(spec, {j}, "fifo");
  CHECK(r.failures == 1);
  CHECK(r.records[0].resizes == 2);
  CHECK(r.records[0].end_s == doctest::Approx(1955));
  // Lost: 50 s of work on 16 GPUs, the recovery's 330 s on the 8 kept, the growth's 240 s on 16.
  CHECK(r.gpu_hours_lost == doctest::Approx((50 * 16 + 330 * 8 + 240 * 16) / 3600.0));
  ClusterJob rigid = j;
  rigid.elastic_min = rigid.elastic_max = 0;
  CHECK(run(spec, {rigid}, "fifo").records[0].end_s == doctest::Approx(2380));
  // Below elastic_min it cannot continue: with elastic_min 16 it waits for the repair as the rigid job does.
  ClusterJob firm = elastic("J", 0, 16, 1000, 16, 24);
  firm.checkpoint_interval_s = 100;
  CHECK(run(spec, {firm}, "fifo").records[0].end_s == doctest::Approx(2380));
}

TEST_CASE("an elastic job grown past its request gives the extra GPUs back when a job waits") {
  // E asks 8 GPUs (elastic 8-16, 1,000 s on 8) and nothing waits: it grows to 16 at once (restart 240 s, then 500 s
  // at twice the speed, ending at 740). W (8 GPUs, 100 s) arrives at 300 and does not fit: E checkpoints (it has
  // done (300 - 240) x 2 = 120 s), gives node 1 back and restarts on 8; W runs 300-400. When W ends, E grows again
  // (880 s of work: 240 + 440 beats the 880 + 140 s left on 8) and ends at 400 + 240 + 440 = 1,080.
  const PolicyResult r = run(two_nodes(), {elastic("E", 0, 8, 1000, 8, 16), job("W", 300, 8, 100)}, "fifo");
  CHECK(r.records[1].start_s == doctest::Approx(300));
  CHECK(r.records[1].end_s == doctest::Approx(400));
  CHECK(r.records[0].resizes == 3);
  CHECK(r.records[0].end_s == doctest::Approx(1080));
}

TEST_CASE("an elastic job given as a scenario resizes by data-parallel replicas at the step model's speed") {
  // Llama-3-8B, tp 2 on 16 H100s (dp 8): a replica is 2 GPUs. Each replica keeps its micro-batches, so on half the
  // replicas the step takes about as long (the gradient all-reduce a little less) and tokens/s halves: the speed
  // lies in [0.5, 0.55]; on 24 GPUs (dp 12) in [1.35, 1.5].
  const Json scenario = {{"model", "llama3-8b"},
                         {"training", {{"seq_len", 4096}, {"global_batch_size", 64}, {"train_tokens", "1B"}}},
                         {"parallel", {{"tp", 2}, {"pp", 1}, {"micro_batch_size", 1}}},
                         {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 16}}}};
  const Json c = {{"pools", {{{"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 8}, {"nodes", 4}}}}};
  const Json jobs = Json::array({{{"id", "sft"}, {"scenario", scenario}, {"elastic_min", 8}, {"elastic_max", 24}}});
  const std::vector<ClusterJob> out = jobs_from_scenarios(jobs, "", "/cluster/jobs", parse_cluster(c, "/cluster", nullptr));
  REQUIRE(out.size() == 1);
  CHECK(out[0].elastic());
  CHECK(out[0].elastic_step == 2);
  CHECK(out[0].elastic_speed.size() == 9);  // 8, 10, ..., 24 GPUs
  CHECK(out[0].speed_on(16) == doctest::Approx(1));
  CHECK(out[0].speed_on(8) >= 0.5);
  CHECK(out[0].speed_on(8) <= 0.55);
  CHECK(out[0].speed_on(24) >= 1.35);
  CHECK(out[0].speed_on(24) <= 1.5);
  // Sizes that are not whole replicas are input errors naming the path.
  Json odd = jobs;
  odd[0]["elastic_min"] = 7;
  CHECK_THROWS_WITH_AS(jobs_from_scenarios(odd, "", "/cluster/jobs", parse_cluster(c, "/cluster", nullptr)), doctest::Contains("/cluster/jobs/0/elastic_min"), InputError);
}

TEST_CASE("a job over its queue's quota plus borrowing limit is rejected with the reason, and the run ends with failures on") {
  // Queue a: 8 GPUs guaranteed, may borrow 0. A 12-GPU job of a could never start under `quota`; it used to wait
  // for ever while failures kept the clock running. It is rejected at the start; a's 8-GPU job runs.
  Json queues = {{{"name", "a"}, {"quota_gpus", 8}, {"borrowing_limit_gpus", 0}}};
  const ClusterSpec c = two_nodes({{"queues", queues}, {"failures", "default"}});
  ClusterJob big = job("big", 0, 12, 100), small = job("small", 1, 8, 100);
  big.queue = small.queue = "a";
  const PolicyResult r = run(c, {big, small}, "quota");
  CHECK(r.rejected == 1);
  REQUIRE(r.rejected_reasons.size() == 1);
  CHECK(r.rejected_reasons[0].first == "more GPUs than its queue's quota plus borrowing limit");
  CHECK(r.jobs == 1);
  CHECK(r.records[1].start_s == doctest::Approx(1));
  CHECK(run(c, {big, small}, "fifo").rejected == 0);  // fifo has no quota: the job runs
}

TEST_CASE("without gang scheduling, partly placed jobs can deadlock; with it they cannot") {
  // One 8-GPU node. X (4 GPUs, 100 s) runs from 0. A (6 GPUs, priority 0, t=1) and B (6 GPUs, priority 5, t=2).
  // Without gangs (pods placed one GPU at a time, as the default Kubernetes scheduler does): A takes the 4 free
  // GPUs at t=1 and holds them; at 100 s X's 4 GPUs go to B, the higher priority: A and B hold 4 each, need 6:
  // a deadlock (the reason Volcano's gang scheduling exists). B cannot evict X at t=2 either: with A's 4 held,
  // X's 4 are not enough. With gangs, B evicts X at t=2 (the 8 GPUs then suffice) and A runs after B.
  const ClusterSpec spec = one_node();
  std::vector<ClusterJob> jobs = {job("X", 0, 4, 100), job("A", 1, 6, 50), job("B", 2, 6, 50, 5)};
  const PolicyResult gang = run(spec, jobs, "priority");
  CHECK(gang.rejected == 0);
  CHECK(gang.jobs == 3);
  CHECK(gang.records[2].start_s == doctest::Approx(2));
  jobs[1].gang = jobs[2].gang = false;
  const PolicyResult pods = run(spec, jobs, "priority");
  CHECK(pods.rejected == 2);
  REQUIRE(pods.rejected_reasons.size() == 1);
  CHECK(pods.rejected_reasons[0].first.find("deadlocked") == 0);
  CHECK(pods.jobs == 1);  // X alone finished
  // A job without gangs that gets all its pods runs as usual.
  const PolicyResult alone = run(spec, {job("X", 0, 4, 100), [] { ClusterJob a = job("A", 1, 6, 50); a.gang = false; return a; }()}, "fifo");
  CHECK(alone.records[1].start_s == doctest::Approx(100));  // 4 pods at t=1, the last 2 when X ends
  CHECK(alone.records[1].end_s == doctest::Approx(150));
}

TEST_CASE("las's starvation guard (Tiresias' PromoteKnob) puts a long-waiting job back in the first queue") {
  // One 8-GPU node. L (8 GPUs) runs 0-1,000 (8,000 GPU-s: second queue) and is evicted by N1 (t=1,000, 100 s).
  // N2 arrives at 1,050. At 1,100 without a guard N2 (first queue) starts before L. With knob 0.1, L has waited
  // 100 s = 0.1 x its 1,000 s executed: it is promoted and, the earlier arrival, starts first; N2 then evicts
  // it at the next pass (N3's arrival, 1,150), as Tiresias' promotion does not protect a running job.
  const std::vector<ClusterJob> jobs = {job("L", 0, 8, 10000), job("N1", 1000, 8, 100), job("N2", 1050, 8, 100), job("N3", 1150, 8, 100)};
  const PolicyResult plain = run(one_node(), jobs, "las");
  CHECK(plain.records[2].start_s == doctest::Approx(1100));
  const PolicyResult guarded = run(one_node({{"scheduler", {{"las_promote_knob", 0.1}}}}), jobs, "las");
  CHECK(guarded.records[2].start_s == doctest::Approx(1150));
}

TEST_CASE("a walltime is enforced: the job stops at its limit, as Slurm's TIMEOUT") {
  // One 8-GPU node. A asks 100 s of walltime but needs 500 s: it stops at 100 s with 100 s of work done; B (t=1)
  // starts then. Goodput: A's 100 s and B's 50 s of work over 150 s x 8 GPUs allocated.
  const ClusterSpec spec = one_node();
  ClusterJob a = job("A", 0, 8, 500);
  a.walltime_s = 100;
  const PolicyResult r = run(spec, {a, job("B", 1, 8, 50)}, "fifo");
  CHECK(r.timed_out == 1);
  CHECK(r.records[0].timed_out);
  CHECK(r.records[0].end_s == doctest::Approx(100));
  CHECK(r.records[0].work_done_s == doctest::Approx(100));
  CHECK(r.records[1].start_s == doctest::Approx(100));
  CHECK(r.goodput == doctest::Approx(150.0 / 150.0));
}

TEST_CASE("the backfill plan's earliest start agrees with replaying releases and reservations on the cluster state") {
  // Random clusters (two pools of 8- and 4-GPU nodes), random running jobs with expected ends, random
  // reservations; the brute force copies the state at every instant something frees (the running jobs ended by
  // then released, the reservations overlapping the run taken) and asks ClusterState for a placement.
  Json c = {{"pools", {{{"name", "a"}, {"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 8}, {"nodes", 4}},
                       {{"name", "b"}, {"gpu", "a100-sxm-80gb"}, {"gpus_per_node", 4}, {"nodes", 3}}}}};
  const ClusterSpec spec = parse_cluster(c, "/cluster", nullptr);
  std::mt19937 rng(7);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int sizes[] = {1, 2, 3, 4, 6, 8, 12, 16, 24};
  int compared = 0, found = 0;
  for (int trial = 0; trial < 300; ++trial) {
    ClusterState state(spec);
    const double now = 100;
    std::vector<std::pair<Placement, double>> running;
    for (int k = 0; k < 12; ++k) {
      const ClusterJob j = job("r", 0, sizes[uniform(0, 5)], 1);
      if (!state.fits(j)) continue;
      const Placement p = state.place(j, PlacementKind::Binpack);
      if (p.empty()) continue;
      state.allocate(p);
      running.push_back({p, now + uniform(1, 6) * 50});  // ends after now (one ending now frees just after)
    }
    BackfillPlan plan(state, now);
    for (const auto& [p, end] : running) plan.hold_until(p, end);
    struct Held { Placement p; double from, until; };
    std::vector<Held> reserved;
    auto state_at = [&](double t, double runtime) {
      ClusterState at = state;
      for (const auto& [p, end] : running)
        if (t > now && end <= t) at.release(p);
      for (const Held& r : reserved)
        if (r.from < t + runtime && r.until > t) at.allocate(r.p);
      return at;
    };
    for (int k = 0; k < 6; ++k) {
      const ClusterJob j = job("w", 0, sizes[uniform(0, 8)], 1);
      const double runtime = uniform(1, 8) * 40;
      std::vector<double> instants{now};
      for (const auto& r : running) instants.push_back(r.second);
      for (const Held& r : reserved) instants.push_back(r.until);
      std::sort(instants.begin(), instants.end());
      double brute = std::numeric_limits<double>::infinity();
      Placement at_brute;
      for (double t : instants) {
        const ClusterState at = state_at(t, runtime);
        if (at.fits(j) && !(at_brute = at.place(j, PlacementKind::Binpack)).empty()) {
          brute = t;
          break;
        }
      }
      // A window that may end before the brute-force instant: then nothing (and the plan remembers the miss
      // for later, larger and longer jobs of this trial, which the comparisons after it check).
      const double latest = now + uniform(0, 8) * 50;
      const double within = plan.earliest(j, runtime, latest);
      CHECK(within == (brute <= latest ? brute : std::numeric_limits<double>::infinity()));
      const double planned = plan.earliest(j, runtime, 1e9);
      CHECK(planned == brute);
      ++compared;
      if (std::isfinite(brute)) {
        ++found;
        // The plan's view of the cluster at that instant gives place() the very GPUs the brute force found.
        ClusterState viewed(spec);
        plan.state_for(brute, runtime, viewed);
        const Placement p = viewed.place(j, PlacementKind::Binpack);
        REQUIRE(p.parts.size() == at_brute.parts.size());
        for (std::size_t i = 0; i < p.parts.size(); ++i) {
          CHECK(p.parts[i].node == at_brute.parts[i].node);
          CHECK(p.parts[i].gpus == at_brute.parts[i].gpus);
        }
        plan.reserve(at_brute, brute, brute + runtime);
        reserved.push_back({at_brute, brute, brute + runtime});
      }
    }
  }
  MESSAGE(compared << " jobs compared, " << found << " reserved");
}

TEST_CASE("runs over several seeds: means and 95% intervals with the reliability estimator") {
  // Goodputs 0.9, 0.8, 0.7: mean 0.8, sample sd 0.1, interval 0.8 +- 1.959964 x 0.1 / sqrt(3) = +- 0.11316.
  std::vector<PolicyResult> runs(3);
  for (int i = 0; i < 3; ++i) {
    runs[static_cast<std::size_t>(i)].name = "fifo";
    runs[static_cast<std::size_t>(i)].goodput = 0.9 - 0.1 * i;
    runs[static_cast<std::size_t>(i)].failures = 10 + i;
  }
  SeedStatistics spread;
  const PolicyResult mean = mean_over_seeds(runs, &spread);
  CHECK(spread.seeds == 3);
  CHECK(mean.goodput == doctest::Approx(0.8));
  CHECK(mean.failures == 11);
  const auto it = std::find_if(spread.metrics.begin(), spread.metrics.end(), [](const auto& m) { return m.first == "goodput"; });
  REQUIRE(it != spread.metrics.end());
  CHECK(it->second.ci95_low == doctest::Approx(0.8 - 0.11316).epsilon(1e-4));
  CHECK(it->second.ci95_high == doctest::Approx(0.8 + 0.11316).epsilon(1e-4));
}

TEST_CASE("a pool of 100,000 nodes failing daily runs: repairs wait as timed events, not as an actor each") {
  // The documented maxima: a pool of 100,000 nodes at 1,000 failures per 1,000 node-days, repairs of a day. Over
  // two days some 60,000 nodes wait for repair at once; with an actor (and its stack's memory map) per
  // repair the kernel's vm.max_map_count (65,530 maps by default) aborted the run inside SimGrid.
  Json c = {{"pools", {{{"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 8}, {"nodes", 100000}}}},
            {"failures", {{"preset", "default"}, {"failures_per_1000_node_days", 1000}}},
            {"recovery", {{"repair", {{"distribution", "lognormal"}, {"mean", "24h"}, {"shape", 1.0}}}}},
            {"checkpoint_interval", "10min"}};
  const ClusterSpec spec = parse_cluster(c, "/cluster", nullptr);
  const PolicyResult r = run(spec, {job("a", 0, 64, 2 * 86400.0)}, "fifo");
  CHECK(r.records[0].finished);
  // 8 nodes at one failure a node-day for two days and more: about 17 expected (Poisson; 99.9% of draws below 32).
  MESSAGE("job failures: ", r.failures);
  CHECK(r.failures <= 32);
}

TEST_CASE("failures start with the trace: a trace in Unix time gives what the same trace from zero gives") {
  // The nodes come into service at the first arrival. Ageing them from t = 0 to a first arrival at 1e9 s
  // (31 years) used to meet the first job with every node's failures of those years at once (a 100 s job
  // waited 11.7 h for repairs).
  Json c = {{"pools", {{{"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 8}, {"nodes", 4}}}}, {"failures", {{"preset", "default"}, {"failures_per_1000_node_days", 200}}}};
  const ClusterSpec spec = parse_cluster(c, "/cluster", nullptr);
  std::vector<ClusterJob> from_zero = {job("a", 0, 8, 100), job("b", 10, 16, 30 * 86400.0), job("c", 20, 8, 7 * 86400.0)};
  std::vector<ClusterJob> unix_time = from_zero;
  for (ClusterJob& j : unix_time) j.submit_s += 1e9;
  const PolicyResult a = run(spec, from_zero, "fifo"), b = run(spec, unix_time, "fifo");
  REQUIRE(a.records.size() == b.records.size());
  CHECK(a.failures == b.failures);
  CHECK(a.failures > 0);  // 67 node-days of jobs at 200 per 1,000 node-days: about 13
  for (std::size_t i = 0; i < a.records.size(); ++i) {
    CAPTURE(i);
    CHECK(b.records[i].end_s - 1e9 == doctest::Approx(a.records[i].end_s).epsilon(1e-9));
    CHECK(b.records[i].jct_s == doctest::Approx(a.records[i].jct_s).epsilon(1e-6));
  }
  CHECK(a.records[0].jct_s == doctest::Approx(100));
}
