#include "fabric.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <simgrid/s4u.hpp>

namespace sg4 = simgrid::s4u;

namespace trainsim::sim {

namespace {
using Direction = sg4::LinkInRoute::Direction;
}

FabricLink& Fabric::add_link(const std::string& id, double bandwidth) {
  sg4::SplitDuplexLink* l = zone_->create_split_duplex_link(id, bandwidth);
  l->set_latency(0)->seal();
  FabricLink f;
  f.id = id;
  f.up = sg4::Link::by_name(id + "_UP");
  f.down = sg4::Link::by_name(id + "_DOWN");
  f.bandwidth = bandwidth;
  links_.push_back(f);
  return links_.back();
}

Fabric::Fabric(const HardwareSpec& h, const CommModel& comm, int gpus) {
  // Dijkstra routing over the switch graph (routes computed on demand and cached): a flat table would hold
  // gpus² routes.
  sg4::NetZone* zone = sg4::create_dijkstra_zone("fabric", true);
  zone_ = zone;
  const int per_node = std::max(1, h.gpus_per_node);
  const int nodes = (gpus + per_node - 1) / per_node;
  const int nics = std::clamp(h.nics_per_node, 1, per_node);
  const NetworkSpec& net = h.network;

  hosts_.reserve(static_cast<std::size_t>(gpus));
  for (int g = 0; g < gpus; ++g) hosts_.push_back(zone->create_host("gpu" + std::to_string(g), 1.0));

  // Inside a node: each GPU's NVLink port; a pair's route is the sender's port up and the receiver's down.
  std::vector<std::size_t> nvlink(static_cast<std::size_t>(gpus));
  for (int g = 0; g < gpus; ++g) nvlink[static_cast<std::size_t>(g)] = links_.size(), add_link("nvlink" + std::to_string(g), comm.intra_bandwidth);
  for (int n = 0; n < nodes; ++n)
    for (int a = n * per_node; a < std::min(gpus, (n + 1) * per_node); ++a)
      for (int b = a + 1; b < std::min(gpus, (n + 1) * per_node); ++b) {
        const FabricLink& la = links_[nvlink[static_cast<std::size_t>(a)]];
        const FabricLink& lb = links_[nvlink[static_cast<std::size_t>(b)]];
        zone->add_route(hosts_[static_cast<std::size_t>(a)]->get_netpoint(), hosts_[static_cast<std::size_t>(b)]->get_netpoint(), nullptr, nullptr,
                        {{la.up, Direction::NONE}, {lb.down, Direction::NONE}}, false);
        zone->add_route(hosts_[static_cast<std::size_t>(b)]->get_netpoint(), hosts_[static_cast<std::size_t>(a)]->get_netpoint(), nullptr, nullptr,
                        {{lb.up, Direction::NONE}, {la.down, Direction::NONE}}, false);
      }
  if (nodes <= 1) {
    zone->seal();
    return;
  }

  // Between nodes: NIC k of a node serves GPUs k·per_node/nics .. ; the NIC joins the GPU's first switch.
  // A NIC shared by several GPUs is a router with one link per direction to the switch.
  const double nic_bw = comm.nic_bandwidth;
  const int group_nodes = std::max(1, net.nodes_per_leaf);
  const int groups = (nodes + group_nodes - 1) / group_nodes;
  auto* spine = zone->create_router("spine");
  auto connect = [&](simgrid::kernel::routing::NetPoint* a, simgrid::kernel::routing::NetPoint* b, const FabricLink& l) {
    zone->add_route(a, b, nullptr, nullptr, {{l.up, Direction::NONE}}, false);
    zone->add_route(b, a, nullptr, nullptr, {{l.down, Direction::NONE}}, false);
  };
  // First switch of each GPU: the leaf of its node's group, its rail switch, or the single switch.
  std::vector<simgrid::kernel::routing::NetPoint*> first(static_cast<std::size_t>(gpus));
  if (net.topology == NetworkTopology::SingleSwitch) {
    for (int g = 0; g < gpus; ++g) first[static_cast<std::size_t>(g)] = spine;
  } else if (net.topology == NetworkTopology::Rail) {
    for (int grp = 0; grp < groups; ++grp) {
      const int in_group = std::min(group_nodes, nodes - grp * group_nodes);
      for (int r = 0; r < per_node; ++r) {
        const std::string id = "rail" + std::to_string(grp) + "." + std::to_string(r);
        auto* sw = zone->create_router(id);
        if (groups > 1) connect(sw, spine, add_link(id + "-up", in_group * nic_bw * nics / per_node / net.oversubscription));
        for (int n = grp * group_nodes; n < grp * group_nodes + in_group; ++n)
          if (n * per_node + r < gpus) first[static_cast<std::size_t>(n * per_node + r)] = sw;
      }
    }
  } else {
    // Fat-tree: leaves of group_nodes nodes; with 3 levels, pods of group_nodes leaves under the core (the
    // spine router), each pod switch's uplink as wide as its leaves' uplinks (the taper is at the leaves).
    const int pods = net.levels >= 3 ? (groups + group_nodes - 1) / group_nodes : 0;
    std::vector<simgrid::kernel::routing::NetPoint*> pod(static_cast<std::size_t>(pods));
    for (int p = 0; p < pods; ++p) {
      const int leaves = std::min(group_nodes, groups - p * group_nodes);
      const int pod_nodes = std::min(nodes - p * group_nodes * group_nodes, leaves * group_nodes);
      pod[static_cast<std::size_t>(p)] = zone->create_router("pod" + std::to_string(p));
      if (pods > 1) connect(pod[static_cast<std::size_t>(p)], spine, add_link("pod" + std::to_string(p) + "-up", pod_nodes * nics * nic_bw / net.oversubscription));
    }
    for (int grp = 0; grp < groups; ++grp) {
      const int in_group = std::min(group_nodes, nodes - grp * group_nodes);
      const std::string id = "leaf" + std::to_string(grp);
      auto* leaf = zone->create_router(id);
      auto* above = pods > 0 ? pod[static_cast<std::size_t>(grp / group_nodes)] : spine;
      if (groups > 1) connect(leaf, above, add_link(id + "-up", in_group * nics * nic_bw / net.oversubscription));
      for (int n = grp * group_nodes; n < grp * group_nodes + in_group; ++n)
        for (int g = n * per_node; g < std::min(gpus, (n + 1) * per_node); ++g) first[static_cast<std::size_t>(g)] = leaf;
    }
  }
  for (int n = 0; n < nodes; ++n) {
    for (int k = 0; k < nics; ++k) {
      const int g0 = n * per_node + k * per_node / nics, g1 = n * per_node + (k + 1) * per_node / nics;
      if (g0 >= gpus) break;
      const FabricLink& nic = add_link("nic" + std::to_string(n * nics + k), nic_bw);
      if (g1 - g0 == 1) {
        connect(hosts_[static_cast<std::size_t>(g0)]->get_netpoint(), first[static_cast<std::size_t>(g0)], nic);
        continue;
      }
      auto* port = zone->create_router("nicport" + std::to_string(n * nics + k));
      connect(port, first[static_cast<std::size_t>(g0)], links_.back());
      for (int g = g0; g < std::min(g1, gpus); ++g)
        zone->add_route(hosts_[static_cast<std::size_t>(g)]->get_netpoint(), port, nullptr, nullptr, {}, true);
    }
  }
  zone->seal();
}

const std::vector<sg4::Link*>& Fabric::route(int from, int to) {
  const long long key = static_cast<long long>(from) * (1LL << 32) + to;
  auto it = routes_.find(key);
  if (it != routes_.end()) return it->second;
  std::vector<sg4::Link*> links;
  double latency = 0;
  gpu(from)->route_to(gpu(to), links, &latency);
  return routes_.emplace(key, std::move(links)).first->second;
}

double Fabric::route_bandwidth(int from, int to) {
  double bw = std::numeric_limits<double>::infinity();
  for (const sg4::Link* l : route(from, to)) bw = std::min(bw, l->get_bandwidth());
  return std::isfinite(bw) ? bw : 0.0;
}

bool Fabric::slow_link(const std::string& id, double factor) {
  for (FabricLink& l : links_)
    if (l.id == id) {
      l.bandwidth /= factor;
      l.up->set_bandwidth(l.bandwidth);
      l.down->set_bandwidth(l.bandwidth);
      return true;
    }
  return false;
}

}  // namespace trainsim::sim
