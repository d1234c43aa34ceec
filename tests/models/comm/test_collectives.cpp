// Collective cost model: alpha-beta formulas derived by hand, published nccl-tests bus bandwidths
// (../shared/reference/microbenchmarks.json, quoted here with their sources), and group placement.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "models/comm/collectives.hpp"
#include "models/core/errors.hpp"
#include "models/scenario/scenario.hpp"

using namespace trainsim;
using Json = nlohmann::json;

namespace {

constexpr double GB = 1e9;
constexpr double MiB = 1048576.0;
constexpr double GiB = 1073741824.0;
constexpr double kLarge = 4 * GiB;  // nccl-tests "-e 4G": the large-message end of the published rows

HardwareSpec hardware(Json h) { return parse_scenario(Json{{"model", "llama3-8b"}, {"hardware", std::move(h)}}).hardware; }
HardwareSpec node_of(const std::string& gpu, int num_gpus) { return hardware({{"gpu", gpu}, {"num_gpus", num_gpus}}); }

bool near(double predicted, double published, double tolerance) {
  return std::fabs(predicted - published) <= tolerance * published;
}

// Megatron-core's RankGenerator, written out independently: the groups of dimension `dim` for degrees
// listed innermost first, as explicit rank lists.
std::vector<std::vector<int>> megatron_groups(const std::vector<int>& degrees, size_t dim) {
  int world = 1, stride = 1;
  for (int d : degrees) world *= d;
  for (size_t i = 0; i < dim; ++i) stride *= degrees[i];
  const int k = degrees[dim];
  std::vector<std::vector<int>> groups;
  for (int outer = 0; outer < world / (stride * k); ++outer)
    for (int inner = 0; inner < stride; ++inner) {
      std::vector<int> g;
      for (int j = 0; j < k; ++j) g.push_back(outer * stride * k + j * stride + inner);
      groups.push_back(g);
    }
  return groups;
}

// Fewest members of any group found on one node (nodes of G consecutive ranks).
int min_ranks_per_node(const std::vector<std::vector<int>>& groups, int G) {
  int best = std::numeric_limits<int>::max();
  for (const auto& g : groups) {
    std::vector<int> count;
    for (int r : g) {
      const size_t node = static_cast<size_t>(r / G);
      if (count.size() <= node) count.resize(node + 1, 0);
      ++count[node];
    }
    for (int c : count)
      if (c > 0) best = std::min(best, c);
  }
  return best;
}

}  // namespace

TEST_CASE("collective bus-bandwidth factors follow nccl-tests PERFORMANCE.md") {
  CHECK(bus_bandwidth_factor(Collective::AllReduce, 8) == trainsim::test::approx(2.0 * 7 / 8));
  CHECK(bus_bandwidth_factor(Collective::AllGather, 8) == trainsim::test::approx(7.0 / 8));
  CHECK(bus_bandwidth_factor(Collective::ReduceScatter, 4) == trainsim::test::approx(3.0 / 4));
  CHECK(bus_bandwidth_factor(Collective::AllToAll, 16) == trainsim::test::approx(15.0 / 16));
  CHECK(bus_bandwidth_factor(Collective::SendRecv, 2) == trainsim::test::approx(1.0));
}

TEST_CASE("collective efficiency table: one row per fabric generation, each with its source") {
  for (const auto& row : fabric_efficiency_table()) {
    CAPTURE(row.name);
    CHECK(row.ring >= 0.4);  // TCP sockets reach 40-60% of the wire (NVIDIA/nccl #450, #209); RDMA and NVLink 75-96%
    CHECK(row.ring <= 1.0);
    CHECK(std::strlen(row.source) > 40);
  }
  CHECK(std::string(fabric_efficiency(node_of("h800-sxm-80gb", 8).intra_node).name) == "nvlink4");
  CHECK(std::string(fabric_efficiency(node_of("a800-sxm-80gb", 8).intra_node).name) == "nvlink3");
  CHECK(std::string(fabric_efficiency(node_of("a100-pcie-80gb", 8).intra_node).name) == "point-to-point");
  CHECK(std::string(fabric_efficiency(node_of("h100-sxm-80gb", 16).inter_node).name) == "infiniband");
  FabricSpec custom;
  custom.kind = "nvlink";
  custom.has_nvls = true;
  CHECK(std::string(fabric_efficiency(custom).name) == "nvlink4");
}

TEST_CASE("collective ring all-reduce and all-gather match the alpha-beta formula (8x A100, 64 MiB)") {
  const HardwareSpec h = node_of("a100-sxm-80gb", 8);
  const double S = 64 * MiB;
  // Ring all-reduce, one node [Thakur 2005; NCCL tuning.cc latencies per protocol]. Simple:
  //   T = 8.4 us + 2(n-1) x 3.4 us + 2(n-1)/n x S / (0.775 x 300 GB/s)
  //     = 8.4 + 47.6 us + 1.75 x 67108864 / 232.5e9 s = 56.0 us + 505.12 us = 561.12 us
  // LL128: 14.0 + 14 x 1.9 us + 505.12 / 0.92 us = 589.6 us; LL: 15.0 us + 4 x 505.12 us. Simple wins.
  const CollectiveCost ar = collective_time(Collective::AllReduce, S, {8, 8}, h, CollectiveAlgorithm::Ring);
  CHECK(ar.time_s == trainsim::test::approx(561.12e-6).epsilon(1e-4));
  CHECK(std::string(ar.algorithm) == "ring");
  // busbw = 1.75 S / T = 209.3 GB/s: the 232.5 GB/s asymptote less the 56 us latency.
  CHECK(ar.bus_bandwidth == trainsim::test::approx(1.75 * S / 561.12e-6).epsilon(1e-4));
  // Ring all-gather, Simple: 8.4 + 7 x 3.4 us + 7/8 x S / 232.5e9 = 32.2 + 252.56 = 284.76 us.
  const CollectiveCost ag = collective_time(Collective::AllGather, S, {8, 8}, h);
  CHECK(ag.time_s == trainsim::test::approx(284.76e-6).epsilon(1e-4));
  CHECK(std::string(ag.algorithm) == "ring");  // no NVLS on A100, tree is all-reduce only
}

TEST_CASE("collective large all-reduce on one 8-GPU node reproduces published bus bandwidths") {
  SUBCASE("8x H100 SXM (NVLink4 + NVSwitch): NVLS 480 GB/s, ring 370 GB/s (nccl-tests #212)") {
    const HardwareSpec h = node_of("h100-sxm-80gb", 8);
    const CollectiveCost best = collective_time(Collective::AllReduce, kLarge, {8, 8}, h);
    CHECK(std::string(best.algorithm) == "nvls");
    CHECK(near(best.bus_bandwidth, 480 * GB, 0.10));
    CHECK(near(best.bus_bandwidth, 476 * GB, 0.10));  // nccl-tests #290
    const CollectiveCost ring = collective_time(Collective::AllReduce, kLarge, {8, 8}, h, CollectiveAlgorithm::Ring);
    CHECK(near(ring.bus_bandwidth, 370 * GB, 0.10));
    // Non-all-reduce ops stay at the ring's ~370 GB/s even with NVLS.
    CHECK(near(collective_time(Collective::AllGather, kLarge, {8, 8}, h).bus_bandwidth, 370 * GB, 0.10));
    CHECK(near(collective_time(Collective::ReduceScatter, kLarge, {8, 8}, h, CollectiveAlgorithm::Nvls).bus_bandwidth,
               370 * GB, 0.10));
  }
  SUBCASE("8x H200 SXM: 475 GB/s (nccl-tests #272), same NVLink4 fabric") {
    CHECK(near(collective_time(Collective::AllReduce, kLarge, {8, 8}, node_of("h200-sxm-141gb", 8)).bus_bandwidth,
               475 * GB, 0.10));
  }
  SUBCASE("8x A100 SXM (NVLink3 + NVSwitch): 232.5 GB/s (nccl-tests #175)") {
    const CollectiveCost c = collective_time(Collective::AllReduce, kLarge, {8, 8}, node_of("a100-sxm-80gb", 8));
    CHECK(std::string(c.algorithm) == "ring");
    CHECK(near(c.bus_bandwidth, 232.5 * GB, 0.10));
  }
  SUBCASE("predicted from the generation's ratios, not fitted: H800 215 GB/s (nccl #1374), A800 160 GB/s (nccl #412)") {
    // H800: 200 GB/s NVLink4 link with NVLS: 0.610 x 200 x 1.75 = 213 GB/s (a ring could not exceed 200).
    const CollectiveCost h800 = collective_time(Collective::AllReduce, kLarge, {8, 8}, node_of("h800-sxm-80gb", 8));
    CHECK(std::string(h800.algorithm) == "nvls");
    CHECK(near(h800.bus_bandwidth, 215 * GB, 0.10));
    // A800: 200 GB/s NVLink3 link, ring: 0.775 x 200 = 155 GB/s.
    CHECK(near(collective_time(Collective::AllReduce, kLarge, {8, 8}, node_of("a800-sxm-80gb", 8)).bus_bandwidth,
               160 * GB, 0.10));
  }
}

TEST_CASE("collective multi-node all-reduce is limited by the node's NICs") {
  SUBCASE("DGX-A100, 8x HDR 200 Gb/s per node: 192 GB/s (nccl #812)") {
    // Ring over 8 nodes x 8 GPUs: min(NVLink 232.5, 8 NICs x 0.95 x 25 GB/s = 190) GB/s, Simple protocol:
    // latency (8.4 + 110 x 3.4 + 16 x 14.0 us) x 1.9 (NCCL's ring plateau) = 1.152 ms against 2(63/64) S / 190
    // GB/s = 44.50 ms: busbw 185.2 GB/s.
    const HardwareSpec h = hardware({{"gpu", "a100-sxm-80gb"}, {"num_gpus", 64},
                                     {"inter_node", {{"fabric", "ib-hdr-200"}, {"nics_per_node", 8}}}});
    const CollectiveCost c = collective_time(Collective::AllReduce, kLarge, {64, 8}, h);
    CHECK(std::string(c.algorithm) == "ring");
    CHECK(near(c.bus_bandwidth, 192 * GB, 0.15));
    CHECK(c.bus_bandwidth == trainsim::test::approx(185.21 * GB).epsilon(1e-3));
  }
  SUBCASE("one rank per node drives one NIC: NDR 46-49 GB/s (nccl-tests #290, #267), HDR 24 GB/s (nccl #412)") {
    const HardwareSpec ndr = node_of("h100-sxm-80gb", 32);
    const double busbw = collective_time(Collective::AllReduce, kLarge, {4, 1}, ndr).bus_bandwidth;
    CHECK(busbw >= 0.97 * 46 * GB);
    CHECK(busbw <= 49 * GB);
    const HardwareSpec hdr = hardware({{"gpu", "a100-sxm-80gb"}, {"num_gpus", 32}, {"inter_node", {{"fabric", "ib-hdr-200"}}}});
    CHECK(near(collective_time(Collective::AllReduce, kLarge, {4, 1}, hdr).bus_bandwidth, 24 * GB, 0.05));
  }
  SUBCASE("2x HGX A100, 4x HDR per node: NIC-bound ring 4 x 23.75 = 95 GB/s vs 91 published (nccl-tests #100)") {
    const HardwareSpec h = hardware({{"gpu", "a100-sxm-80gb"}, {"num_gpus", 16},
                                     {"inter_node", {{"fabric", "ib-hdr-200"}, {"nics_per_node", 4}}}});
    const CollectiveCost ring = collective_time(Collective::AllReduce, kLarge, {16, 8}, h, CollectiveAlgorithm::Ring);
    CHECK(near(ring.bus_bandwidth, 91 * GB, 0.10));
  }
}

TEST_CASE("collective hierarchical all-reduce is the sum of its three phases (2 nodes, 4 HDR NICs each, 1 GiB)") {
  const HardwareSpec h = hardware({{"gpu", "a100-sxm-80gb"}, {"num_gpus", 16},
                                   {"inter_node", {{"fabric", "ib-hdr-200"}, {"nics_per_node", 4}}}});
  const double S = GiB;
  // Per-rank NIC share: 0.95 x 25 GB/s x 4 NICs / 8 GPUs = 11.875 GB/s.
  // Simple protocol throughout (large messages):
  // 1. intra-node ring reduce-scatter, 8 ranks: 8.4 + 7 x 3.4 = 32.2 us + 7/8 S / 232.5 GB/s
  // 2. inter-node all-reduce of S/8 over 2 nodes, one rank each: ring (8.4 + 2 x 14.0) x 1.9 = 69.16 us
  //    + 2(1/2) (S/8) / 11.875 GB/s (the tree sends twice the bytes)
  // 3. intra-node ring all-gather: as 1.
  // T = 133.56 us + S (1.75 / 232.5e9 + 1 / 95e9) = 19.518 ms
  const CollectiveCost hier = collective_time(Collective::AllReduce, S, {16, 8}, h, CollectiveAlgorithm::Hierarchical);
  CHECK(hier.time_s == trainsim::test::approx(19.518e-3).epsilon(1e-3));
  // Flat ring: (8.4 + (30 - 4) x 3.4 + 4 x 14.0 us) x 1.9 + 1.875 S / 95 GB/s = 21.483 ms: on 2 nodes the two-level
  // scheme sends half the ring's bytes through the NICs and wins (nccl-tests #196: tree-like algorithms
  // report busbw above the NIC limit on 2 nodes).
  const CollectiveCost ring = collective_time(Collective::AllReduce, S, {16, 8}, h, CollectiveAlgorithm::Ring);
  CHECK(ring.time_s == trainsim::test::approx(21.483e-3).epsilon(1e-3));
  CHECK(std::string(collective_time(Collective::AllReduce, S, {16, 8}, h).algorithm) == "hierarchical");
}

TEST_CASE("collective all-to-all across nodes uses one NIC per GPU") {
  // microbenchmarks.json nccl_caveats (nccl-tests #267): all-to-all does not aggregate several NICs per GPU.
  const HardwareSpec one_nic = node_of("h100-sxm-80gb", 128);
  const HardwareSpec two_nics = hardware({{"gpu", "h100-sxm-80gb"}, {"num_gpus", 128}, {"inter_node", {{"nics_per_node", 16}}}});
  const GroupPlacement ep{128, 8};
  const CollectiveCost a1 = collective_time(Collective::AllToAll, kLarge, ep, one_nic);
  const CollectiveCost a2 = collective_time(Collective::AllToAll, kLarge, ep, two_nics);
  CHECK(std::string(a1.algorithm) == "pairwise");
  // 120 of 128 chunks leave the node through this GPU's NIC (47.5 GB/s): busbw = (127/128) S / T
  // = 127/120 x 47.5 = 50.27 GB/s, whatever the node's NIC count.
  CHECK(a1.bus_bandwidth == trainsim::test::approx(127.0 / 120.0 * 47.5 * GB).epsilon(0.01));
  CHECK(a2.time_s == trainsim::test::approx(a1.time_s));
  // All-reduce, by contrast, spreads its channels over both NICs of each GPU, as far as the GPU's own PCIe link
  // carries it: two 200 Gb/s NICs (25 GB/s each) fit in an H100's Gen5 x16 (63 GB/s): twice the bandwidth ...
  const HardwareSpec one_roce = hardware({{"gpu", "h100-sxm-80gb"}, {"num_gpus", 128}, {"inter_node", {{"fabric", "roce-200"}}}});
  const HardwareSpec two_roce = hardware({{"gpu", "h100-sxm-80gb"}, {"num_gpus", 128}, {"inter_node", {{"fabric", "roce-200"}, {"nics_per_node", 16}}}});
  const double ar1 = collective_time(Collective::AllReduce, kLarge, {16, 1}, one_roce).bus_bandwidth;
  const double ar2 = collective_time(Collective::AllReduce, kLarge, {16, 1}, two_roce).bus_bandwidth;
  CHECK(ar2 == trainsim::test::approx(2 * ar1).epsilon(0.01));
  // ... two 400 Gb/s NICs (100 GB/s) do not: the GPU's link passes 63 of them, 1.26 times one NIC's 50.
  const double ndr1 = collective_time(Collective::AllReduce, kLarge, {16, 1}, one_nic).bus_bandwidth;
  const double ndr2 = collective_time(Collective::AllReduce, kLarge, {16, 1}, two_nics).bus_bandwidth;
  CHECK(ndr2 == trainsim::test::approx(63.0 / 50.0 * ndr1).epsilon(0.01));
  // Inside a node all-to-all runs at the node link's ring efficiency: 0.822 x 450 = 370 GB/s.
  CHECK(near(collective_time(Collective::AllToAll, kLarge, {8, 8}, one_nic).bus_bandwidth, 370 * GB, 0.01));
}

TEST_CASE("collective time of small messages is latency: nearly independent of size below 1 KiB") {
  const HardwareSpec h = node_of("h100-sxm-80gb", 8);
  const CollectiveCost tiny = collective_time(Collective::AllReduce, 8, {8, 8}, h);
  const CollectiveCost kib = collective_time(Collective::AllReduce, 1024, {8, 8}, h);
  // Ring latency 6.6 + 14 x 0.6 = 15.0 us; 1 KiB adds 1.75 x 1024 / 370e9 = 5 ns.
  CHECK(std::string(tiny.algorithm) == "ring");  // NVLS's 23 us only pays off for large messages
  CHECK(tiny.time_s == trainsim::test::approx(15.0e-6).epsilon(1e-3));
  CHECK(kib.time_s == trainsim::test::approx(tiny.time_s).epsilon(0.01));
  // Bus bandwidth ramps up with size towards the asymptote.
  const double b1 = collective_time(Collective::AllReduce, 1 * MiB, {8, 8}, h).bus_bandwidth;
  const double b2 = collective_time(Collective::AllReduce, 64 * MiB, {8, 8}, h).bus_bandwidth;
  CHECK(kib.bus_bandwidth < b1);
  CHECK(b1 < b2);
  CHECK(b2 < 480 * GB);
}

TEST_CASE("collective tree beats ring for small all-reduce over many nodes") {
  const HardwareSpec h = node_of("h100-sxm-80gb", 512);
  const GroupPlacement world{512, 8};
  // LL protocol (NCCL tuning.cc: intra-node LL hops x1.8 on several nodes; tree network hop 5.0 us):
  // Ring: 6.6 + (2 x 511 - 2 x 64) x 1.08 + 2 x 64 x 2.7 = 1317.72 us of latency, + 8176 B / 35 GB/s (LL cap).
  // Tree: 6.8 + 2 (7 x 1.08 + log2(64) x 5.0) = 81.92 us, + 8192 B / 35 GB/s.
  const double S = 4096;
  const CollectiveCost ring = collective_time(Collective::AllReduce, S, world, h, CollectiveAlgorithm::Ring);
  const CollectiveCost tree = collective_time(Collective::AllReduce, S, world, h, CollectiveAlgorithm::Tree);
  CHECK(ring.time_s == trainsim::test::approx(1317.95e-6).epsilon(1e-3));
  CHECK(tree.time_s == trainsim::test::approx(82.15e-6).epsilon(1e-3));
  CHECK(std::string(collective_time(Collective::AllReduce, S, world, h).algorithm) == "tree");
  // Large messages over 512 ranks: the ring's best protocol is LL128, 14.0 + 894 x 1.9 + 128 x 4.0 us = 2.22 ms
  // of latency plus 2(511/512) S / (0.92 x 370 GB/s) = 25.18 ms (Simple: 9.20 + 23.17 ms); it loses to the tree's
  // 0.23 ms + 2S / (0.92 x 370 GB/s) = 25.47 ms.
  CHECK(collective_time(Collective::AllReduce, kLarge, world, h, CollectiveAlgorithm::Ring).time_s ==
        trainsim::test::approx(27.410e-3).epsilon(1e-3));
  CHECK(std::string(collective_time(Collective::AllReduce, kLarge, world, h).algorithm) == "tree");
  // On 2 nodes the ring's 290 us of latency is small and its bytes win: 21.77 ms against 25.33 ms.
  CHECK(std::string(collective_time(Collective::AllReduce, kLarge, {16, 8}, h).algorithm) == "ring");
}

TEST_CASE("collective algorithms that do not apply, NVLS scope, meshes and point-to-point") {
  const HardwareSpec a100 = node_of("a100-sxm-80gb", 16);
  const HardwareSpec h100 = node_of("h100-sxm-80gb", 16);
  CHECK(std::isinf(collective_time(Collective::AllReduce, GiB, {8, 8}, a100, CollectiveAlgorithm::Nvls).time_s));
  CHECK(std::isinf(collective_time(Collective::AllReduce, GiB, {16, 8}, h100, CollectiveAlgorithm::Nvls).time_s));
  CHECK(std::isinf(collective_time(Collective::AllGather, GiB, {8, 8}, h100, CollectiveAlgorithm::Tree).time_s));
  CHECK(std::isinf(collective_time(Collective::AllReduce, GiB, {8, 8}, h100, CollectiveAlgorithm::Hierarchical).time_s));
  // NCCL runs all-gather and reduce-scatter as a ring over all ranks, PAT at one GPU per node, NVLS or CollNet
  // (src/graph/tuning.cc), never in two levels: across nodes of 8 A100s the tuner's pick is the ring, whose latency
  // grows with the ranks. 1,536 ranks on 192 nodes, 100 MB (a 5e7-element fp16 ZeRO-3 bucket): the ring's
  // 191 network hops and 1,344 NVLink hops cost more than the bytes do at 190 GB/s a node.
  const HardwareSpec big = node_of("a100-sxm-80gb", 1536);
  for (Collective op : {Collective::AllGather, Collective::ReduceScatter}) {
    CHECK(std::isinf(collective_time(op, GiB, {16, 8}, a100, CollectiveAlgorithm::Hierarchical).time_s));
    const CollectiveCost c = collective_time(op, 100e6, {1536, 8}, big);
    CHECK(std::string(c.algorithm) == "ring");
    CHECK(c.time_s == trainsim::test::approx(collective_time(op, 100e6, {1536, 8}, big, CollectiveAlgorithm::Ring).time_s));
    CHECK(c.time_s > 2 * 100e6 * 1535.0 / 1536.0 / (8 * 0.95 * 25 * GB));
  }
  CHECK(collective_time(Collective::AllReduce, GiB, {1, 1}, h100).time_s == 0.0);
  CHECK(collective_time(Collective::AllReduce, 0, {8, 8}, h100).time_s == 0.0);

  // MI300X: a full mesh, 448 GB/s over 7 peer links; a pair uses one link: 0.775 x 448 / 7 = 49.6 GB/s.
  const HardwareSpec mi300 = node_of("mi300x-192gb", 8);
  CHECK(collective_time(Collective::AllReduce, kLarge, {2, 2}, mi300).bus_bandwidth ==
        trainsim::test::approx(49.6 * GB).epsilon(0.01));
  CHECK(collective_time(Collective::AllReduce, kLarge, {8, 8}, mi300).bus_bandwidth ==
        trainsim::test::approx(0.775 * 448 * GB).epsilon(0.01));

  // Send/recv of 64 MiB: inside a node 6.6 + 0.6 us + S / 370 GB/s = 188.58 us; across nodes
  // 6.6 + 2.7 us + S / 47.5 GB/s = 1422.1 us.
  CHECK(collective_time(Collective::SendRecv, 64 * MiB, {2, 2}, h100).time_s == trainsim::test::approx(188.58e-6).epsilon(1e-3));
  CHECK(collective_time(Collective::SendRecv, 64 * MiB, {2, 1}, h100).time_s == trainsim::test::approx(1422.1e-6).epsilon(1e-3));
  CHECK(std::string(collective_time(Collective::SendRecv, 64 * MiB, {2, 1}, h100).algorithm) == "p2p");
}

TEST_CASE("group placement of Megatron's tp-cp-ep-dp-pp rank order") {
  SUBCASE("tp = 8 on 8-GPU nodes: the whole node") {
    ParallelLayout p;
    p.tp = 8;
    p.dp = 4;
    const LayoutGroups g = group_placements(p, 8);
    CHECK(g.tp.size == 8);
    CHECK(g.tp.ranks_per_node == 8);
    // dp over 4 nodes at stride 8: one rank per node.
    CHECK(g.dp.size == 4);
    CHECK(g.dp.ranks_per_node == 1);
  }
  SUBCASE("tp = 2, dp = 4 on one 8-GPU node: dp ranks 0,2,4,6 share the node") {
    ParallelLayout p;
    p.tp = 2;
    p.dp = 4;
    const LayoutGroups g = group_placements(p, 8);
    CHECK(g.tp.ranks_per_node == 2);
    CHECK(g.dp.size == 4);
    CHECK(g.dp.ranks_per_node == 4);
    CHECK(g.pp.size == 1);
  }
  SUBCASE("tp = 4, dp = 4, pp = 2 on 8-GPU nodes: dp stride 4 -> 2 per node; pp stride 16 -> 1 per node") {
    ParallelLayout p;
    p.tp = 4;
    p.dp = 4;
    p.pp = 2;
    const LayoutGroups g = group_placements(p, 8);
    CHECK(g.dp.ranks_per_node == 2);
    CHECK(g.pp.ranks_per_node == 1);
  }
  SUBCASE("expert groups: ep strides over etp, not tp (Megatron's expert RankGenerator)") {
    ParallelLayout p;
    p.tp = 2;
    p.dp = 16;
    p.ep = 8;
    p.etp = 1;  // world 32; expert dp = 32 / (8 x 1) = 4
    const LayoutGroups g = group_placements(p, 8);
    CHECK(g.ep.size == 8);
    CHECK(g.ep.ranks_per_node == 8);  // ranks 0..7: one node
    CHECK(g.edp.size == 4);
    CHECK(g.edp.ranks_per_node == 1);  // stride 8
    CHECK(g.dp.ranks_per_node == 4);   // stride 2 (tp)
  }
  SUBCASE("other orders: tp-pp-dp puts dp outside pp") {
    ParallelLayout p;
    p.tp = 2;
    p.pp = 4;
    p.dp = 2;
    p.rank_order = "tp-pp-dp";
    const LayoutGroups g = group_placements(p, 8);
    CHECK(g.pp.ranks_per_node == 4);  // stride 2
    CHECK(g.dp.ranks_per_node == 1);  // stride 8
    p.rank_order = "tp-dp-pp";
    p.cp = 2;
    CHECK_THROWS_AS(group_placements(p, 8), InputError);  // cp > 1 missing from the order
  }
  SUBCASE("a job within one node keeps every group on it, even with odd degrees") {
    ParallelLayout p;
    p.tp = 3;
    p.dp = 2;
    CHECK(group_placements(p, 8).dp.ranks_per_node == 2);
  }
  SUBCASE("strided groups agree with an explicit enumeration of Megatron's groups") {
    // Groups that straddle node boundaries (e.g. cp = 3 at stride 2 on 8-GPU nodes: {6, 8, 10} has one rank
    // on the first node) report the fewest members on one node.
    for (int G : {4, 8}) {
      for (int inner : {1, 2, 4, 8, 16}) {
        for (int k : {2, 3, 4, 5, 6, 8}) {
          // An outer degree of G makes the chain long enough to show every way a group can be cut.
          const std::vector<int> degrees = {inner, k, G};
          const int world = inner * k * G;
          const int expected = min_ranks_per_node(megatron_groups(degrees, 1), G);
          const GroupPlacement got = strided_group_placement(k, inner, world, G);
          CAPTURE(G);
          CAPTURE(inner);
          CAPTURE(k);
          CHECK(got.size == k);
          CHECK(got.ranks_per_node == expected);
        }
      }
    }
  }
}

// HCCL on Ascend 910B, by hand from HCCL's own cost tables (hicann/hccl docs/en/user_guide/coll_algo_intro,
// commit bf07f6e) with the presets' numbers: HCCS 196 GB/s per direction at the borrowed point-to-point
// efficiency 0.775 = 151.9 GB/s over the 7 peers (21.7 GB/s a peer link), latency 0.6 us; RoCE 200 Gb/s at 0.95
// = 23.75 GB/s a NIC, one per NPU, latency 2.7 us; 6.6 us launch per call; γ = 0 (inline reduce).
TEST_CASE("HCCL on Ascend: Mesh inside the server, NHR between servers, Pipeline across both") {
  const HardwareSpec one = node_of("ascend-910b-64gb", 8);
  const HardwareSpec two = hardware({{"gpu", "ascend-910b-64gb"}, {"num_gpus", 16}, {"inter_node", {{"fabric", "roce-200"}}}});
  const HardwareSpec four = hardware({{"gpu", "ascend-910b-64gb"}, {"num_gpus", 32}, {"inter_node", {{"fabric", "roce-200"}}}});
  const double hccs = 196 * GB * 0.775, nic = 25 * GB * 0.95, launch = 6.6e-6;

  // Mesh.md: AR = 2α + 2/p nβ with β a peer link (hccs / 7): 2 x 0.6 us + 2/8 GiB / 21.7 GB/s = 12.37 ms.
  const CollectiveCost mesh = collective_time(Collective::AllReduce, GiB, {8, 8}, one);
  CHECK(std::string(mesh.algorithm) == "mesh");
  CHECK(mesh.time_s == doctest::Approx(launch + 2 * 0.6e-6 + 2.0 / 8 * GiB / (hccs / 7)).epsilon(1e-12));
  // A small all-gather pays one α (0.6 us), where NCCL's ring would pay 7 hops and its protocol's base.
  CHECK(collective_time(Collective::AllGather, 8192, {8, 8}, one).time_s ==
        doctest::Approx(launch + 0.6e-6 + 1.0 / 8 * 8192 / (hccs / 7)).epsilon(1e-12));

  // NHR.md between 4 servers, one rank each: 2 ⌈log2 4⌉ α + 2 (p-1)/p nβ = 4 x 2.7 us + 1.5 GiB / 23.75 GB/s.
  const CollectiveCost nhr = collective_time(Collective::AllReduce, GiB, {4, 1}, four);
  CHECK(std::string(nhr.algorithm) == "nhr");
  CHECK(nhr.time_s == doctest::Approx(launch + 4 * 2.7e-6 + 2 * 0.75 * GiB / nic).epsilon(1e-12));

  // Pipeline.md on 2 servers x 8: blocks of s/p = 64 MiB; per phase max(inter, intra) x (2 - 1) + intra, where
  // intra = 0.6 us + 64 MiB x 7 / 151.9 GB/s (3.09 ms: a block to each of 7 peers on its own link) beats
  // inter = 2.7 us + 64 MiB / 23.75 GB/s (2.83 ms). 12.37 ms, against 18.0 ms for the phases one after another
  // (Mesh reduce-scatter, NHR all-reduce of the 128 MiB slice, Mesh all-gather).
  const CollectiveCost pipe = collective_time(Collective::AllReduce, GiB, {16, 8}, two);
  CHECK(std::string(pipe.algorithm) == "pipeline");
  const double intra = 0.6e-6 + GiB / 16 * 7 / hccs;
  CHECK(pipe.time_s == doctest::Approx(launch + 2 * (2 * intra)).epsilon(1e-12));
  CHECK(pipe.time_s < 0.0125);

  // An NVIDIA GPU keeps NCCL's model: the same shape on H100s is priced by NCCL's tuner.
  CHECK(std::string(collective_time(Collective::AllReduce, GiB, {8, 8}, node_of("h100-sxm-80gb", 8)).algorithm) != "mesh");
}

// NCCL's socket transport against the run its efficiency row cites: 4 nodes x 8 V100 on one 100 Gb/s TCP port each
// reached an all-reduce bus bandwidth of 4-6 GB/s from 8 to 128 MB (NVIDIA/nccl #450). As a ring over the 32 ranks
// (8 a node sharing the port: 0.5 x 12.5 = 6.25 GB/s for the node, less 8 network hops of 7.2 us at LL / 37 us at
// Simple each call), the model gives 5.4 GB/s at 8 MiB and 6.1 at 128 MiB: the published band within 0.5 GB/s. RDMA
// at the same line rate (RoCE 100, 0.95 of it against 0.5) nearly doubles it: 1.85-1.9x with the latencies.
TEST_CASE("NCCL over TCP sockets: about half the wire, 7.2 us a hop (NVIDIA/nccl #450, nccl-tests #82)") {
  const HardwareSpec tcp = hardware({{"gpu", "a100-sxm-80gb"}, {"num_gpus", 32}, {"inter_node", {{"fabric", "eth-100"}, {"nics_per_node", 1}}}});
  const HardwareSpec rdma = hardware({{"gpu", "a100-sxm-80gb"}, {"num_gpus", 32}, {"inter_node", {{"fabric", "roce-100"}, {"nics_per_node", 1}}}});
  CHECK(std::string(fabric_efficiency(tcp.inter_node).name) == "socket");
  for (double mb : {8.0, 32.0, 128.0}) {
    CAPTURE(mb);
    const double sock = collective_time(Collective::AllReduce, mb * MiB, {32, 8}, tcp, CollectiveAlgorithm::Ring).bus_bandwidth;
    CHECK(sock >= 4.0 * GB);
    CHECK(sock <= 6.5 * GB);
    CHECK(collective_time(Collective::AllReduce, mb * MiB, {32, 8}, rdma, CollectiveAlgorithm::Ring).bus_bandwidth > 1.7 * sock);
  }
  // The hop: an 8-byte send between two nodes pays NCCL's base plus one socket hop (7.2 us at LL), where RDMA pays 2.7.
  const double tiny_tcp = collective_time(Collective::SendRecv, 8, {2, 1}, tcp).time_s, tiny_rdma = collective_time(Collective::SendRecv, 8, {2, 1}, rdma).time_s;
  CHECK(tiny_tcp - tiny_rdma == doctest::Approx(7.2e-6 - 2.7e-6).epsilon(1e-3));
}

TEST_CASE("a NIC moves at most what the GPU platform's PCIe link carries (GPUDirect RDMA crosses its switches)") {
  // NDR 400 Gb/s is 50 GB/s a direction; an A100/A800 platform's PCIe Gen4 x16 carries 31.5 (16 GT/s x 16 lanes x
  // 128/130 / 8, the pcie4 preset): the NIC is priced at 31.5 GB/s x InfiniBand's 0.95, where a Hopper platform's Gen5
  // x16 (63 GB/s) passes the full 50 x 0.95, and HDR's 25 GB/s fits in Gen4 untouched.
  const CommModel a800_ndr = make_comm_model(hardware({{"gpu", "a800-sxm-80gb"}, {"num_gpus", 16}, {"inter_node", {{"fabric", "ib-ndr-400"}}}}));
  const CommModel a800_hdr = make_comm_model(hardware({{"gpu", "a800-sxm-80gb"}, {"num_gpus", 16}}));
  const CommModel h100_ndr = make_comm_model(node_of("h100-sxm-80gb", 16));
  CHECK(a800_ndr.nic_bandwidth == trainsim::test::approx(31.5 * GB * 0.95));
  CHECK(a800_hdr.nic_bandwidth == trainsim::test::approx(25 * GB * 0.95));
  CHECK(h100_ndr.nic_bandwidth == trainsim::test::approx(50 * GB * 0.95));
  // An all-to-all across two A800 nodes, one NIC per GPU, 8 of 16 chunks off the node: (15/16) S / T with
  // T = (8/16) S / (31.5 x 0.95 GB/s) plus latency: busbw just under 15/8 x 29.925 = 56.1 GB/s.
  const CollectiveCost a2a = collective_time(Collective::AllToAll, kLarge, {16, 8}, a800_ndr);
  CHECK(a2a.bus_bandwidth <= 15.0 / 8.0 * 29.925 * GB);
  CHECK(a2a.bus_bandwidth >= 0.97 * 15.0 / 8.0 * 29.925 * GB);
  // The scenario says what it priced, on more than one node only.
  const Json a800_ndr_job = {{"model", "llama3-8b"},
                             {"hardware", {{"gpu", "a800-sxm-80gb"}, {"num_gpus", 16}, {"inter_node", {{"fabric", "ib-ndr-400"}}}}}};
  const Scenario two_nodes = parse_scenario(a800_ndr_job);
  const auto capped = std::find_if(two_nodes.notes.begin(), two_nodes.notes.end(), [](const std::string& n) { return n.find("PCIe link") != std::string::npos; });
  REQUIRE(capped != two_nodes.notes.end());
  CHECK(capped->find("priced at 252 Gb/s a NIC, not 400") != std::string::npos);
  Json one_node = a800_ndr_job;
  one_node["hardware"]["num_gpus"] = 8;
  for (const std::string& n : parse_scenario(one_node).notes) CHECK(n.find("PCIe link") == std::string::npos);
  // Host copies (offload) at 0.83 of the stated link: an H100 PCIe card sits on Gen5 (its datasheet), not Gen4.
  CHECK(host_link_bandwidth(node_of("h100-pcie-80gb", 1).gpu) == trainsim::test::approx(63 * GB * kPcieCopyEfficiency));
  CHECK(host_link_bandwidth(node_of("a100-sxm-80gb", 1).gpu) == trainsim::test::approx(31.5 * GB * kPcieCopyEfficiency));
  // The link must be PCIe.
  CHECK_THROWS_WITH_AS(hardware({{"gpu", {{"preset", "a100-sxm-80gb"}, {"host_link", "ib-ndr-400"}}}, {"num_gpus", 8}}),
                       doctest::Contains("/hardware/gpu/host_link"), InputError);
}
