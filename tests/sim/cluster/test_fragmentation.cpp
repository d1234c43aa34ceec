// Host resources and the placements of FGD's paper (Weng et al., "Beware of Fragmentation", USENIX ATC'23) on
// hand-built nodes whose answers are worked out in the comments: the fragmentation measure of section 4, FGD's
// steepest descent, best-fit's leftover score, a uniform random placement, CPU and memory that strand GPUs, the
// memo of requests that cannot be placed, and the workload inflation of the paper's experiments.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "sim/cluster/cluster_sim.hpp"
#include "sim/cluster/cluster_spec.hpp"
#include "sim/cluster/cluster_state.hpp"
#include "sim/cluster/fragmentation.hpp"
#include "sim/cluster/workload/fill_workload.hpp"

#include <algorithm>
#include <cmath>
#include <set>

using namespace trainsim::sim::cluster;
using Json = nlohmann::json;

namespace {

ClusterJob pod(const std::string& id, int gpus, int milli, std::int64_t cpu_milli, std::int64_t memory_mib = 0) {
  ClusterJob j;
  j.id = id;
  j.gpus = gpus;
  j.gpu_milli = milli;
  j.cpu_milli = cpu_milli;
  j.memory_mib = memory_mib;
  j.duration_s = 100;
  return j;
}

ClusterSpec pools(const Json& list) { return parse_cluster({{"pools", list}, {"gpu_sharing", true}}, "/cluster", nullptr); }

// The node a placement of `j` takes.
int node_of(const ClusterState& s, const ClusterJob& j, PlacementKind k) {
  const Placement p = s.place(j, k);
  return p.empty() ? -1 : p.parts.front().node;
}

}  // namespace

TEST_CASE("the target workload: distinct requests by frequency, shares over the classes kept") {
  // 3 pods of (1 GPU, 4 cores), 2 of (0.5 GPU, 2 cores), 1 CPU-only pod of 8 cores: three classes, shares 3/6,
  // 2/6, 1/6; keeping 80% of the pods keeps the first two (5 of 6 = 83%), their shares 3/5 and 2/5.
  std::vector<ClusterJob> jobs = {pod("a", 1, 1000, 4000), pod("b", 1, 1000, 4000), pod("c", 1, 1000, 4000),
                                  pod("d", 1, 500, 2000),  pod("e", 1, 500, 2000),  pod("f", 0, 0, 8000)};
  const auto all = target_workload(jobs, true);
  REQUIRE(all.size() == 3);
  CHECK(all[0].gpus == 1);
  CHECK(all[0].gpu_milli == 1000);
  CHECK(all[0].share == doctest::Approx(0.5));
  CHECK(all[1].gpu_milli == 500);
  CHECK(all[1].share == doctest::Approx(1.0 / 3));
  CHECK(all[2].gpus == 0);
  CHECK(all[2].share == doctest::Approx(1.0 / 6));
  const auto kept = target_workload(jobs, true, 0.8);
  REQUIRE(kept.size() == 2);
  CHECK(kept[0].share == doctest::Approx(0.6));
  CHECK(kept[1].share == doctest::Approx(0.4));
  // Without GPU sharing a half-GPU request takes a whole GPU: it joins the whole-GPU class's requests by GPU.
  CHECK(target_workload(jobs, false)[1].gpu_milli == 1000);
}

TEST_CASE("the fragmentation of a node, by the paper's definition") {
  // A node of 2 GPUs with 1000 and 300 thousandths free and 6 cores free (of 16). Classes, share 1/4 each:
  //  - (1 GPU, 4 cores): fits the idle GPU; the 300 on the other GPU are a fragment to it: 300;
  //  - (0.5 GPU, 2 cores): fits; 300 < 500 again a fragment: 300;
  //  - (1 GPU, 8 cores): 6 cores < 8, cannot run here: all 1300 free thousandths are fragments;
  //  - CPU-only: every free GPU thousandth is a fragment to a task that asks none: 1300.
  // F = (300 + 300 + 1300 + 1300) / 4 = 800.
  std::vector<ClusterJob> jobs = {pod("a", 1, 1000, 4000), pod("b", 1, 500, 2000), pod("c", 1, 1000, 8000), pod("d", 0, 0, 1000)};
  const FragmentationMeasure m(target_workload(jobs, true));
  const std::string model = "G2";
  const std::int16_t free[] = {1000, 300};
  NodeView v;
  v.gpu_model = &model;
  v.cpu_free = 6000, v.cpu_limit = 16000;
  v.gpu_free = free;
  v.gpus = 2;
  CHECK(m.of(v) == doctest::Approx(800));
  // With unlimited CPU the third class fits too: its fragment is the 300: F = (300 + 300 + 300 + 1300) / 4 = 550.
  v.cpu_limit = 0;
  CHECK(m.of(v) == doctest::Approx(550));
  // A class limited to another GPU model cannot use this node: all 1300 are its fragment.
  ClusterJob typed = pod("t", 1, 1000, 1000);
  typed.gpu_types = {"T4"};
  const FragmentationMeasure t(target_workload({typed}, true));
  CHECK(t.of(v) == doctest::Approx(1300));
}

TEST_CASE("CPU and memory strand GPUs, and FGD places a CPU-only pod where it strands none") {
  // Two nodes of 2 GPUs: "small" with 40 cores, "large" with 100. A CPU-only pod of 30 cores, then GPU pods of
  // 1 GPU and 12 cores. Best-fit takes the node with the least left (small: 0.5 x 10/100 + 0.5 x 2000/2000 =
  // 0.55 against large's 0.5 x 70/100 + 0.5 = 0.85): small keeps 10 cores, too few for a GPU pod, and its two
  // GPUs are stranded. FGD sees that on small the GPU pods' class no longer fits (its fragment rises from 0 to
  // 2000) and on large nothing changes (70 cores hold both GPU pods): it takes large.
  const ClusterSpec spec = pools({{{"name", "small"}, {"gpu", "T4"}, {"gpus_per_node", 2}, {"nodes", 1}, {"cpus_per_node", 40}},
                                  {{"name", "large"}, {"gpu", "T4"}, {"gpus_per_node", 2}, {"nodes", 1}, {"cpus_per_node", 100}}});
  const std::vector<ClusterJob> jobs = {pod("cpu", 0, 0, 30000), pod("g1", 1, 1000, 12000), pod("g2", 1, 1000, 12000),
                                        pod("g3", 1, 1000, 12000), pod("g4", 1, 1000, 12000)};
  for (PlacementKind kind : {PlacementKind::BestFit, PlacementKind::Fgd}) {
    ClusterState s(spec);
    s.set_target_workload(std::make_shared<const FragmentationMeasure>(target_workload(jobs, true)));
    int placed = 0;
    for (const ClusterJob& j : jobs) {
      const Placement p = s.place(j, kind);
      if (p.empty()) continue;
      s.allocate(p);
      ++placed;
    }
    CAPTURE(to_string(kind));
    CHECK(placed == (kind == PlacementKind::Fgd ? 5 : 3));
  }
  // Memory likewise: a node of 64 GiB holds a 40 GiB pod, not a second one beside it.
  const ClusterSpec mem = pools({{{"gpu", "T4"}, {"gpus_per_node", 2}, {"nodes", 1}, {"memory_per_node", "64GiB"}}});
  ClusterState s(mem);
  s.allocate(s.place(pod("m1", 1, 1000, 0, 40 * 1024), PlacementKind::Binpack));
  CHECK(s.place(pod("m2", 1, 1000, 0, 40 * 1024), PlacementKind::Binpack).empty());
  CHECK_FALSE(s.place(pod("m3", 1, 1000, 0, 24 * 1024), PlacementKind::Binpack).empty());
}

TEST_CASE("best-fit takes the node left with the least CPU and GPU, each over the largest node's") {
  // Nodes of 8 GPUs and 96 cores. A: 2 GPUs and 20 cores free; B: 4 GPUs and 90 cores free. A pod of 1 GPU and
  // 10 cores leaves A 0.5 x 10/96 + 0.5 x 1000/8000 = 0.115, B 0.5 x 80/96 + 0.5 x 3000/8000 = 0.604: A. Binpack
  // (fewest whole GPUs left) takes A as well; spread takes B.
  const ClusterSpec spec = pools({{{"gpu", "G2"}, {"gpus_per_node", 8}, {"nodes", 2}, {"cpus_per_node", 96}}});
  ClusterState s(spec);
  Placement a = s.place(pod("a", 6, 1000, 76000), PlacementKind::Binpack);
  REQUIRE(a.parts.front().node == 0);
  s.allocate(a);
  s.allocate(s.place(pod("b", 4, 1000, 6000), PlacementKind::Spread));
  CHECK(node_of(s, pod("x", 1, 1000, 10000), PlacementKind::BestFit) == 0);
  CHECK(node_of(s, pod("x", 1, 1000, 10000), PlacementKind::Spread) == 1);
  // With 30 cores asked A cannot hold it (20 free): best-fit takes B.
  CHECK(node_of(s, pod("y", 1, 1000, 30000), PlacementKind::BestFit) == 1);
}

TEST_CASE("random placement draws uniformly among the nodes that hold the job") {
  // Four idle 8-GPU nodes, 4,000 one-GPU placements (each released again): each node is chosen 1,000 times in
  // expectation, standard deviation sqrt(4000 x 1/4 x 3/4) = 27; within 4 of them. The same seed draws the same.
  const ClusterSpec spec = pools({{{"gpu", "G2"}, {"gpus_per_node", 8}, {"nodes", 4}}});
  ClusterState s(spec), again(spec);
  s.seed_random(7), again.seed_random(7);
  int count[4] = {0, 0, 0, 0};
  for (int i = 0; i < 4000; ++i) {
    const Placement p = s.place(pod("r", 1, 1000, 0), PlacementKind::Random);
    ++count[p.parts.front().node];
    CHECK(again.place(pod("r", 1, 1000, 0), PlacementKind::Random).parts.front().node == p.parts.front().node);
  }
  for (int n : count) CHECK(std::abs(n - 1000) < 4 * 27.4);
}

TEST_CASE("a request that found no placement rejects the larger ones until something is freed") {
  // One node of 2 GPUs and 16 cores, 10 cores held: a pod of 8 cores cannot be placed, nor one of 12, while one of
  // 6 can; once the 10 cores are released the 12-core pod fits.
  const ClusterSpec spec = pools({{{"gpu", "T4"}, {"gpus_per_node", 2}, {"nodes", 1}, {"cpus_per_node", 16}}});
  ClusterState s(spec);
  const Placement held = s.place(pod("h", 0, 0, 10000), PlacementKind::Binpack);
  s.allocate(held);
  const std::uint64_t epoch = s.release_epoch();
  CHECK(s.place(pod("a", 1, 1000, 8000), PlacementKind::Binpack).empty());
  CHECK(s.place(pod("b", 1, 1000, 12000), PlacementKind::Binpack).empty());
  CHECK_FALSE(s.place(pod("c", 1, 1000, 6000), PlacementKind::Binpack).empty());
  s.release(held);
  CHECK(s.release_epoch() > epoch);
  CHECK_FALSE(s.place(pod("b", 1, 1000, 12000), PlacementKind::Binpack).empty());
}

TEST_CASE("a job asking more CPU than any node has is rejected with the reason") {
  const ClusterSpec spec = pools({{{"gpu", "T4"}, {"gpus_per_node", 2}, {"nodes", 2}, {"cpus_per_node", 16}}});
  ClusterSimOptions o;
  o.policy = "fifo";
  const PolicyResult r = simulate_cluster(spec, {pod("fat", 1, 1000, 32000), pod("ok", 1, 1000, 8000)}, o);
  CHECK(r.rejected == 1);
  REQUIRE(r.rejected_reasons.size() == 1);
  CHECK(r.rejected_reasons.front().first == "more CPU or memory than a node of any pool it may use has");
  CHECK(r.records[1].start_s == doctest::Approx(0));
}

TEST_CASE("the fill workload: the trace's pods inflated by random draws, shuffled by the seed") {
  // 10 pods of 1 GPU and a CPU-only one on 20 GPUs: to 130% (26 GPUs) 16 GPU pods are drawn (and the CPU-only pod
  // as often as the draws hit it: it adds nothing toward the target); to 30% (6 GPUs) 4 GPU pods are removed.
  std::vector<ClusterJob> pods;
  for (int i = 0; i < 10; ++i) pods.push_back(pod("p" + std::to_string(i), 1, 1000, 1000));
  pods.push_back(pod("cpu", 0, 0, 1000));
  const auto up = fill_workload(pods, 1.3, 20, true, 1e12, 1);
  CHECK(std::count_if(up.begin(), up.end(), [](const ClusterJob& j) { return j.gpus > 0; }) == 26);
  CHECK(std::count_if(up.begin(), up.end(), [](const ClusterJob& j) { return j.gpus > 0 && j.id.find('#') != std::string::npos; }) == 16);
  for (std::size_t i = 0; i < up.size(); ++i) CHECK(up[i].submit_s == doctest::Approx(static_cast<double>(i)));
  CHECK(up.front().duration_s == doctest::Approx(1e12));
  std::size_t down_gpus = 0;
  for (const ClusterJob& j : fill_workload(pods, 0.3, 20, true, 1e12, 1)) down_gpus += static_cast<std::size_t>(j.gpus);
  CHECK(down_gpus == 6);
  // Another seed, another order; the same seed, the same.
  auto ids = [](const std::vector<ClusterJob>& v) {
    std::vector<std::string> out;
    for (const ClusterJob& j : v) out.push_back(j.id);
    return out;
  };
  CHECK(ids(fill_workload(pods, 0, 20, true, 1e12, 1)) == ids(fill_workload(pods, 0, 20, true, 1e12, 1)));
  CHECK(ids(fill_workload(pods, 0, 20, true, 1e12, 1)) != ids(fill_workload(pods, 0, 20, true, 1e12, 2)));
  CHECK(fill_workload(pods, 0, 20, true, 1e12, 1).size() == 11);
}
