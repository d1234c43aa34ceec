#include "fabric.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u.hpp>

#include "fabric_zone.hpp"

namespace sg4 = simgrid::s4u;

namespace trainsim::sim {

const char* to_string(Placement p) {
  switch (p) {
    case Placement::Packed: return "packed";
    case Placement::Spread: return "spread";
    case Placement::Random: return "random";
  }
  return "packed";
}

bool parse_placement(const std::string& text, Placement* out) {
  for (Placement p : {Placement::Packed, Placement::Spread, Placement::Random})
    if (text == to_string(p)) return *out = p, true;
  return false;
}

std::vector<int> node_slots(int nodes, int nodes_per_leaf, Placement placement, unsigned long long seed) {
  std::vector<int> slots(static_cast<std::size_t>(std::max(0, nodes)));
  std::iota(slots.begin(), slots.end(), 0);
  const int per_leaf = std::max(1, nodes_per_leaf);
  if (placement == Placement::Spread)
    std::stable_sort(slots.begin(), slots.end(), [per_leaf](int a, int b) { return a % per_leaf < b % per_leaf; });
  if (placement == Placement::Random) std::shuffle(slots.begin(), slots.end(), std::mt19937_64(seed));
  return slots;
}

FabricLink& Fabric::add_link(const std::string& id, double bandwidth) {
  sg4::SplitDuplexLink* l = zone_->create_split_duplex_link(id, bandwidth);
  l->set_latency(0)->seal();
  FabricLink f;
  f.id = id;
  f.up = sg4::Link::by_name(id + "_UP");
  f.down = sg4::Link::by_name(id + "_DOWN");
  f.bandwidth = f.nominal = bandwidth;
  nominal_[f.up] = nominal_[f.down] = bandwidth;
  links_.push_back(f);
  return links_.back();
}

Fabric::Fabric(const HardwareSpec& h, const CommModel& comm, int gpus, const FabricOptions& options) {
  // Routes from the fabric's shape (fabric_zone.hpp): a flat table would hold gpus² routes, and a shortest-path
  // search per source GPU costs gpus² too.
  auto* tree = new TreeZone("fabric");  // owned by the engine, as the root zone
  sg4::NetZone* zone = tree->get_iface();
  zone_ = zone;
  const int per_node = std::max(1, h.gpus_per_node);
  const int nodes = (gpus + per_node - 1) / per_node;
  const int nics = std::clamp(h.nics_per_node, 1, per_node);
  const NetworkSpec& net = h.network;

  // Physical GPUs in slot order, created where a rank sits (the last slot may be partly used: a job on part
  // of a node). Wiring below runs over physical positions.
  const int positions = nodes * per_node;
  const std::vector<int> slot = node_slots(nodes, net.nodes_per_leaf, options.placement, options.seed);
  std::vector<sg4::Host*> phys(static_cast<std::size_t>(positions), nullptr);
  physical_.resize(static_cast<std::size_t>(gpus));
  for (int r = 0; r < gpus; ++r) {
    const int p = slot[static_cast<std::size_t>(r / per_node)] * per_node + r % per_node;
    physical_[static_cast<std::size_t>(r)] = p;
    phys[static_cast<std::size_t>(p)] = zone->create_host("gpu" + std::to_string(p), 1.0);
    hosts_.push_back(phys[static_cast<std::size_t>(p)]);
  }
  auto at = [&](int p) { return phys[static_cast<std::size_t>(p)]; };

  // A transfer's efficiency, set by transfer() just before SimGrid sees it.
  zone->get_network_model()->set_bw_factor_cb([this](double size, const sg4::Host* src, const sg4::Host* dst, const std::vector<sg4::Link*>&,
                                                      const std::unordered_set<sg4::NetZone*>&) {
    auto it = pending_factors_.find({src, dst, size});
    if (it == pending_factors_.end()) return 1.0;
    const double f = it->second.front();
    it->second.pop_front();
    if (it->second.empty()) pending_factors_.erase(it);
    return f;
  });

  // Inside a node: each GPU's NVLink port; a pair's route is the sender's port up and the receiver's down.
  std::vector<std::size_t> nvlink(static_cast<std::size_t>(positions));
  for (int p = 0; p < positions; ++p)
    if (at(p)) nvlink[static_cast<std::size_t>(p)] = links_.size(), add_link("nvlink" + std::to_string(p), comm.intra_bandwidth);
  for (int p = 0; p < positions; ++p)
    if (at(p)) {
      const FabricLink& l = links_[nvlink[static_cast<std::size_t>(p)]];
      tree->join_group(at(p)->get_netpoint(), p / per_node, l.up, l.down);
    }
  const bool storage = options.storage_bandwidth > 0;
  if (nodes <= 1 && !storage) {
    zone->seal();
    return;
  }

  // Between nodes: NIC k of a node serves GPUs k·per_node/nics .. ; the NIC joins the GPU's first switch.
  // A NIC shared by several GPUs is a router with one link per direction to the switch. Uplinks exist where
  // traffic leaves a switch: between leaves, and to the storage host on the spine.
  const double nic_bw = comm.nic_bandwidth;
  const int group_nodes = std::max(1, net.nodes_per_leaf);
  const int groups = (nodes + group_nodes - 1) / group_nodes;
  auto* spine = zone->create_router("spine");
  // `a` under switch `b` through link l (up: towards the switch).
  auto connect = [&](simgrid::kernel::routing::NetPoint* a, simgrid::kernel::routing::NetPoint* b, const FabricLink& l) { tree->attach(a, b, l.up, l.down); };
  // First switch of each physical position: the leaf of its node's group, its rail switch, or the single switch.
  std::vector<simgrid::kernel::routing::NetPoint*> first(static_cast<std::size_t>(positions));
  // Each switch's links up to the spine (towards the storage host).
  std::map<simgrid::kernel::routing::NetPoint*, std::vector<sg4::Link*>> up_to_spine;
  if (net.topology == NetworkTopology::SingleSwitch) {
    for (int p = 0; p < positions; ++p) first[static_cast<std::size_t>(p)] = spine;
  } else if (net.topology == NetworkTopology::Rail) {
    // Between two nodes of one rail group, traffic between different rails first crosses NVLink to the sender's
    // GPU on the receiver's rail (NCCL's PXN), then takes that rail: the shortest way, the spine not touched. A
    // node without that GPU (a job on part of one) relays on the receiver's node instead.
    std::vector<int> position_of;
    for (int p = 0; p < positions; ++p)
      if (at(p)) {
        const unsigned long id = at(p)->get_netpoint()->id();
        if (id >= position_of.size()) position_of.resize(id + 1, -1);
        position_of[id] = p;
      }
    std::vector<simgrid::kernel::routing::NetPoint*> point(static_cast<std::size_t>(positions), nullptr);
    for (int p = 0; p < positions; ++p)
      if (at(p)) point[static_cast<std::size_t>(p)] = at(p)->get_netpoint();
    tree->set_relay([position_of, point, per_node, group_nodes](const simgrid::kernel::routing::NetPoint* src,
                                                                 const simgrid::kernel::routing::NetPoint* dst) -> const simgrid::kernel::routing::NetPoint* {
      auto pos = [&](const simgrid::kernel::routing::NetPoint* n) { return n->id() < position_of.size() ? position_of[n->id()] : -1; };
      const int a = pos(src), b = pos(dst);
      if (a < 0 || b < 0) return nullptr;
      const int node_a = a / per_node, node_b = b / per_node;
      if (node_a == node_b || a % per_node == b % per_node || node_a / group_nodes != node_b / group_nodes) return nullptr;
      if (auto* r = point[static_cast<std::size_t>(node_a * per_node + b % per_node)]) return r;
      return point[static_cast<std::size_t>(node_b * per_node + a % per_node)];
    });
    for (int grp = 0; grp < groups; ++grp) {
      const int in_group = std::min(group_nodes, nodes - grp * group_nodes);
      for (int r = 0; r < per_node; ++r) {
        const std::string id = "rail" + std::to_string(grp) + "." + std::to_string(r);
        auto* sw = zone->create_router(id);
        if (groups > 1 || storage) connect(sw, spine, add_link(id + "-up", in_group * nic_bw * nics / per_node / net.oversubscription)), up_to_spine[sw] = {links_.back().up};
        for (int n = grp * group_nodes; n < grp * group_nodes + in_group; ++n) first[static_cast<std::size_t>(n * per_node + r)] = sw;
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
      if (pods > 1 || storage) {
        connect(pod[static_cast<std::size_t>(p)], spine, add_link("pod" + std::to_string(p) + "-up", pod_nodes * nics * nic_bw / net.oversubscription));
        up_to_spine[pod[static_cast<std::size_t>(p)]] = {links_.back().up};
      }
    }
    for (int grp = 0; grp < groups; ++grp) {
      const int in_group = std::min(group_nodes, nodes - grp * group_nodes);
      const std::string id = "leaf" + std::to_string(grp);
      auto* leaf = zone->create_router(id);
      auto* above = pods > 0 ? pod[static_cast<std::size_t>(grp / group_nodes)] : spine;
      if (groups > 1 || storage) {
        connect(leaf, above, add_link(id + "-up", in_group * nics * nic_bw / net.oversubscription));
        up_to_spine[leaf] = {links_.back().up};
        for (sg4::Link* l : up_to_spine[above]) up_to_spine[leaf].push_back(l);
      }
      for (int p = grp * group_nodes * per_node; p < (grp * group_nodes + in_group) * per_node; ++p) first[static_cast<std::size_t>(p)] = leaf;
    }
  }
  std::vector<std::vector<sg4::Link*>> storage_route(static_cast<std::size_t>(positions));  // each position's, to the spine
  for (int n = 0; n < nodes; ++n) {
    for (int k = 0; k < nics; ++k) {
      const int p0 = n * per_node + k * per_node / nics, p1 = n * per_node + (k + 1) * per_node / nics;
      int used = 0;
      for (int p = p0; p < p1; ++p) used += at(p) != nullptr;
      if (used == 0) continue;
      const FabricLink& nic = add_link("nic" + std::to_string(n * nics + k), nic_bw);
      for (int p = p0; p < p1; ++p) {
        storage_route[static_cast<std::size_t>(p)] = {nic.up};
        for (sg4::Link* l : up_to_spine[first[static_cast<std::size_t>(p)]]) storage_route[static_cast<std::size_t>(p)].push_back(l);
      }
      if (p1 - p0 == 1) {
        connect(at(p0)->get_netpoint(), first[static_cast<std::size_t>(p0)], nic);
        continue;
      }
      auto* port = zone->create_router("nicport" + std::to_string(n * nics + k));
      connect(port, first[static_cast<std::size_t>(p0)], links_.back());
      for (int p = p0; p < p1; ++p)
        if (at(p)) tree->attach(at(p)->get_netpoint(), port, nullptr, nullptr);
    }
  }
  if (storage) {
    // The storage host's routes are one hop from each GPU (its node's client link, its NIC, the uplinks, the
    // storage link): no route passes through it.
    storage_ = zone->create_host("storage", 1.0);
    sg4::Link* storage_link = add_link("storage", options.storage_bandwidth).up;
    for (int n = 0; n < nodes; ++n) {
      sg4::Link* client = options.storage_client_bandwidth > 0 ? add_link("storage-client" + std::to_string(n), options.storage_client_bandwidth).up : nullptr;
      for (int p = n * per_node; p < (n + 1) * per_node; ++p) {
        if (!at(p)) continue;
        std::vector<sg4::Link*> hops;
        if (client) hops.push_back(client);
        for (sg4::Link* l : storage_route[static_cast<std::size_t>(p)]) hops.push_back(l);
        hops.push_back(storage_link);
        tree->set_route(at(p)->get_netpoint(), storage_->get_netpoint(), std::move(hops));
      }
    }
  }
  zone->seal();
}

const Fabric::CachedRoute& Fabric::cached_route(const sg4::Host* from, const sg4::Host* to) {
  auto it = routes_.find({from, to});
  if (it != routes_.end()) return it->second;
  CachedRoute r;
  double latency = 0;
  from->route_to(to, r.links, &latency);
  if (!r.links.empty()) r.nominal = std::min(nominal_.at(r.links.front()), nominal_.at(r.links.back()));
  return routes_.emplace(std::make_pair(from, to), std::move(r)).first->second;
}

const std::vector<sg4::Link*>& Fabric::route(const sg4::Host* from, const sg4::Host* to) { return cached_route(from, to).links; }

double Fabric::nominal_bandwidth(const sg4::Host* from, const sg4::Host* to) { return cached_route(from, to).nominal; }

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

sg4::CommPtr Fabric::transfer(sg4::Host* from, sg4::Host* to, double bytes, double seconds) {
  // SimGrid moves whole bytes; the factor is this size over what the route's ports move in `seconds`.
  const double size = std::max(1.0, std::round(bytes));
  const double capacity = std::max(1.0, seconds * nominal_bandwidth(from, to));
  pending_factors_[{from, to, size}].push_back(size / capacity);
  return sg4::Comm::sendto_async(from, to, static_cast<uint64_t>(size));
}

sg4::CommPtr Fabric::write_to_storage(sg4::Host* from, double bytes) {
  return sg4::Comm::sendto_async(from, storage_, static_cast<uint64_t>(std::max(1.0, std::round(bytes))));
}

}  // namespace trainsim::sim
