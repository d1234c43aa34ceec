// The fabric's routes (sim/iteration/fabric_zone.hpp), link by link, against the paths read off the fabric's description
// (sim/iteration/fabric.hpp) by hand. SimGrid allows one engine per process, so this binary holds one test.
#include <doctest/doctest.h>
#include <simgrid/s4u.hpp>

#include <string>
#include <vector>

#include "models/comm/collectives.hpp"
#include "models/scenario/scenario.hpp"
#include "sim/iteration/fabric.hpp"
#include "sim/iteration/simgrid_engine.hpp"

using namespace trainsim;

namespace {
std::vector<std::string> names(const std::vector<simgrid::s4u::Link*>& links) {
  std::vector<std::string> out;
  for (const auto* l : links) out.push_back(l->get_name());
  return out;
}
}  // namespace

TEST_CASE("routes follow the fat-tree: NVLink inside a node, the GPU's NIC, then up to the lowest common switch") {
  sim::simgrid_engine();
  // 8 nodes of 8 GPUs with 2 NICs each (GPUs 0-3 on NIC 0, 4-7 on NIC 1), 2 nodes per leaf, 3 levels: leaves
  // 0-3 (nodes 0-1, 2-3, 4-5, 6-7), pods 0 (leaves 0, 1) and 1 (leaves 2, 3) under the core.
  const Scenario s = parse_scenario({{"model", "llama3-8b"},
                                     {"training", {{"seq_len", 4096}, {"global_batch_size", 64}}},
                                     {"hardware",
                                      {{"gpu", "h100-sxm-80gb"},
                                       {"gpus_per_node", 8},
                                       {"num_nodes", 8},
                                       {"inter_node", {{"fabric", "ib-ndr-400"}, {"nics_per_node", 2}}},
                                       {"network", {{"topology", "fat-tree"}, {"nodes_per_leaf", 2}, {"levels", 3}}}}}});
  sim::Fabric fabric(s.hardware, make_comm_model(s.hardware), 64);
  using V = std::vector<std::string>;
  // Same node: the sender's NVLink port up, the receiver's down.
  CHECK(names(fabric.route(0, 1)) == V{"nvlink0_UP", "nvlink1_DOWN"});
  CHECK(names(fabric.route(7, 2)) == V{"nvlink7_UP", "nvlink2_DOWN"});
  // Nodes 0 and 1 under leaf 0: NIC to NIC (GPU 8 is node 1's first GPU, on its NIC 0: nic2).
  CHECK(names(fabric.route(0, 8)) == V{"nic0_UP", "nic2_DOWN"});
  // Node 2 under leaf 1, same pod: up leaf 0's uplink, down leaf 1's.
  CHECK(names(fabric.route(0, 16)) == V{"nic0_UP", "leaf0-up_UP", "leaf1-up_DOWN", "nic4_DOWN"});
  // GPU 4 (NIC 1 of node 0) to GPU 36 (NIC 1 of node 4, leaf 2, pod 1): through the core.
  CHECK(names(fabric.route(4, 36)) == V{"nic1_UP", "leaf0-up_UP", "pod0-up_UP", "pod1-up_DOWN", "leaf2-up_DOWN", "nic9_DOWN"});
  // And back: the reverse path, each link's other direction.
  CHECK(names(fabric.route(36, 4)) == V{"nic9_UP", "leaf2-up_UP", "pod1-up_UP", "pod0-up_DOWN", "leaf0-up_DOWN", "nic1_DOWN"});
}
