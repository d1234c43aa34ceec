#include "sim/iteration/fabric.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u.hpp>

#include "sim/iteration/fabric_zone.hpp"

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

// What the wiring steps share: the zone and its routing, the job's shape on nodes, each physical position's GPU
// (null where no rank sits), its first switch, and each switch's links up to the spine.
struct Fabric::Wiring {
  using NetPoint = simgrid::kernel::routing::NetPoint;
  TreeZone* tree = nullptr;
  sg4::NetZone* zone = nullptr;
  const NetworkSpec& net;
  int per_node = 1, nodes = 1, nics = 1, positions = 0, group_nodes = 1, groups = 1;
  double nic_bw = 0;
  bool storage = false;
  std::vector<sg4::Host*> phys;
  NetPoint* spine = nullptr;
  std::vector<NetPoint*> first;
  std::map<NetPoint*, std::vector<sg4::Link*>> up_to_spine;
  std::vector<std::vector<sg4::Link*>> storage_route;  // each position's, to the spine

  Wiring(const HardwareSpec& h, const CommModel& comm, int gpus, const FabricOptions& options)
      : net(h.network), per_node(std::max(1, h.gpus_per_node)), nodes((gpus + per_node - 1) / per_node),
        nics(std::clamp(h.nics_per_node, 1, per_node)), positions(nodes * per_node), group_nodes(std::max(1, h.network.nodes_per_leaf)),
        groups((nodes + group_nodes - 1) / group_nodes), nic_bw(comm.nic_bandwidth), storage(options.storage_bandwidth > 0),
        phys(static_cast<std::size_t>(positions), nullptr), first(static_cast<std::size_t>(positions)),
        storage_route(static_cast<std::size_t>(positions)) {}
  sg4::Host* at(int p) const { return phys[static_cast<std::size_t>(p)]; }
  // `a` under switch `b` through link l (up: towards the switch).
  void connect(NetPoint* a, NetPoint* b, const FabricLink& l) const { tree->attach(a, b, l.up, l.down); }
};

Fabric::Fabric(const HardwareSpec& h, const CommModel& comm, int gpus, const FabricOptions& options) {
  // Routes from the fabric's shape (fabric_zone.hpp): a flat table would hold gpus² routes, and a shortest-path
  // search per source GPU costs gpus² too.
  Wiring w(h, comm, gpus, options);
  w.tree = new TreeZone("fabric");  // owned by the engine, as the root zone
  w.zone = w.tree->get_iface();
  zone_ = w.zone;
  place_gpus(w, gpus, options);
  // A transfer's efficiency, set by transfer() just before SimGrid sees it.
  w.zone->get_network_model()->set_bw_factor_cb([this](double size, const sg4::Host* src, const sg4::Host* dst, const std::vector<sg4::Link*>&,
                                                        const std::unordered_set<sg4::NetZone*>&) {
    auto it = pending_factors_.find({src, dst, size});
    if (it == pending_factors_.end()) return 1.0;
    const double f = it->second.front();
    it->second.pop_front();
    if (it->second.empty()) pending_factors_.erase(it);
    return f;
  });
  wire_nvlink(w, comm.intra_bandwidth);
  if (w.nodes <= 1 && !w.storage) {
    w.zone->seal();
    return;
  }
  // Between nodes: NIC k of a node serves GPUs k·per_node/nics .. ; the NIC joins the GPU's first switch.
  // A NIC shared by several GPUs is a router with one link per direction to the switch. Uplinks exist where
  // traffic leaves a switch: between leaves, and to the storage host on the spine.
  w.spine = w.zone->create_router("spine");
  // First switch of each physical position: the leaf of its node's group, its rail switch, or the single switch.
  if (w.net.topology == NetworkTopology::SingleSwitch) {
    for (int p = 0; p < w.positions; ++p) w.first[static_cast<std::size_t>(p)] = w.spine;
  } else if (w.net.topology == NetworkTopology::Rail) {
    wire_rails(w);
  } else {
    wire_fat_tree(w);
  }
  wire_nics(w);
  if (w.storage) wire_storage(w, options);
  w.zone->seal();
}

// Physical GPUs in slot order, created where a rank sits (the last slot may be partly used: a job on part of a
// node). Wiring runs over physical positions.
void Fabric::place_gpus(Wiring& w, int gpus, const FabricOptions& options) {
  const std::vector<int> slot = node_slots(w.nodes, w.net.nodes_per_leaf, options.placement, options.seed);
  physical_.resize(static_cast<std::size_t>(gpus));
  for (int r = 0; r < gpus; ++r) {
    const int p = slot[static_cast<std::size_t>(r / w.per_node)] * w.per_node + r % w.per_node;
    physical_[static_cast<std::size_t>(r)] = p;
    w.phys[static_cast<std::size_t>(p)] = w.zone->create_host("gpu" + std::to_string(p), 1.0);
    hosts_.push_back(w.phys[static_cast<std::size_t>(p)]);
  }
}

// Inside a node: each GPU's NVLink port; a pair's route is the sender's port up and the receiver's down.
void Fabric::wire_nvlink(Wiring& w, double bandwidth) {
  std::vector<std::size_t> nvlink(static_cast<std::size_t>(w.positions));
  for (int p = 0; p < w.positions; ++p)
    if (w.at(p)) nvlink[static_cast<std::size_t>(p)] = links_.size(), add_link("nvlink" + std::to_string(p), bandwidth);
  for (int p = 0; p < w.positions; ++p)
    if (w.at(p)) {
      const FabricLink& l = links_[nvlink[static_cast<std::size_t>(p)]];
      w.tree->join_group(w.at(p)->get_netpoint(), p / w.per_node, l.up, l.down);
    }
}

// Rail-optimised: one switch per rail and group of nodes. Between two nodes of one rail group, traffic between
// different rails first crosses NVLink to the sender's GPU on the receiver's rail (NCCL's PXN), then takes that
// rail: the shortest way, the spine not touched. A node without that GPU (a job on part of one) relays on the
// receiver's node instead.
void Fabric::wire_rails(Wiring& w) {
  using NetPoint = Wiring::NetPoint;
  std::vector<int> position_of;
  for (int p = 0; p < w.positions; ++p)
    if (w.at(p)) {
      const unsigned long id = w.at(p)->get_netpoint()->id();
      if (id >= position_of.size()) position_of.resize(id + 1, -1);
      position_of[id] = p;
    }
  std::vector<NetPoint*> point(static_cast<std::size_t>(w.positions), nullptr);
  for (int p = 0; p < w.positions; ++p)
    if (w.at(p)) point[static_cast<std::size_t>(p)] = w.at(p)->get_netpoint();
  const int per_node = w.per_node, group_nodes = w.group_nodes;
  w.tree->set_relay([position_of, point, per_node, group_nodes](const NetPoint* src, const NetPoint* dst) -> const NetPoint* {
    auto pos = [&](const NetPoint* n) { return n->id() < position_of.size() ? position_of[n->id()] : -1; };
    const int a = pos(src), b = pos(dst);
    if (a < 0 || b < 0) return nullptr;
    const int node_a = a / per_node, node_b = b / per_node;
    if (node_a == node_b || a % per_node == b % per_node || node_a / group_nodes != node_b / group_nodes) return nullptr;
    if (auto* r = point[static_cast<std::size_t>(node_a * per_node + b % per_node)]) return r;
    return point[static_cast<std::size_t>(node_b * per_node + a % per_node)];
  });
  for (int grp = 0; grp < w.groups; ++grp) {
    const int in_group = std::min(group_nodes, w.nodes - grp * group_nodes);
    for (int r = 0; r < per_node; ++r) {
      const std::string id = "rail" + std::to_string(grp) + "." + std::to_string(r);
      auto* sw = w.zone->create_router(id);
      if (w.groups > 1 || w.storage)
        w.connect(sw, w.spine, add_link(id + "-up", in_group * w.nic_bw * w.nics / per_node / w.net.oversubscription)), w.up_to_spine[sw] = {links_.back().up};
      for (int n = grp * group_nodes; n < grp * group_nodes + in_group; ++n) w.first[static_cast<std::size_t>(n * per_node + r)] = sw;
    }
  }
}

// Fat-tree: leaves of group_nodes nodes; with 3 levels, pods of group_nodes leaves under the core (the spine
// router), each pod switch's uplink as wide as its leaves' uplinks (the taper is at the leaves).
void Fabric::wire_fat_tree(Wiring& w) {
  const int group_nodes = w.group_nodes;
  const int pods = w.net.levels >= 3 ? (w.groups + group_nodes - 1) / group_nodes : 0;
  std::vector<Wiring::NetPoint*> pod(static_cast<std::size_t>(pods));
  for (int p = 0; p < pods; ++p) {
    const int leaves = std::min(group_nodes, w.groups - p * group_nodes);
    const int pod_nodes = std::min(w.nodes - p * group_nodes * group_nodes, leaves * group_nodes);
    pod[static_cast<std::size_t>(p)] = w.zone->create_router("pod" + std::to_string(p));
    if (pods > 1 || w.storage) {
      w.connect(pod[static_cast<std::size_t>(p)], w.spine, add_link("pod" + std::to_string(p) + "-up", pod_nodes * w.nics * w.nic_bw / w.net.oversubscription));
      w.up_to_spine[pod[static_cast<std::size_t>(p)]] = {links_.back().up};
    }
  }
  for (int grp = 0; grp < w.groups; ++grp) {
    const int in_group = std::min(group_nodes, w.nodes - grp * group_nodes);
    const std::string id = "leaf" + std::to_string(grp);
    auto* leaf = w.zone->create_router(id);
    auto* above = pods > 0 ? pod[static_cast<std::size_t>(grp / group_nodes)] : w.spine;
    if (w.groups > 1 || w.storage) {
      w.connect(leaf, above, add_link(id + "-up", in_group * w.nics * w.nic_bw / w.net.oversubscription));
      w.up_to_spine[leaf] = {links_.back().up};
      for (sg4::Link* l : w.up_to_spine[above]) w.up_to_spine[leaf].push_back(l);
    }
    for (int p = grp * group_nodes * w.per_node; p < (grp * group_nodes + in_group) * w.per_node; ++p) w.first[static_cast<std::size_t>(p)] = leaf;
  }
}

// Each node's NICs under their GPUs' first switch; a NIC shared by several GPUs is a port router.
void Fabric::wire_nics(Wiring& w) {
  const int per_node = w.per_node, nics = w.nics;
  for (int n = 0; n < w.nodes; ++n) {
    for (int k = 0; k < nics; ++k) {
      const int p0 = n * per_node + k * per_node / nics, p1 = n * per_node + (k + 1) * per_node / nics;
      int used = 0;
      for (int p = p0; p < p1; ++p) used += w.at(p) != nullptr;
      if (used == 0) continue;
      const FabricLink& nic = add_link("nic" + std::to_string(n * nics + k), w.nic_bw);
      for (int p = p0; p < p1; ++p) {
        w.storage_route[static_cast<std::size_t>(p)] = {nic.up};
        for (sg4::Link* l : w.up_to_spine[w.first[static_cast<std::size_t>(p)]]) w.storage_route[static_cast<std::size_t>(p)].push_back(l);
      }
      if (p1 - p0 == 1) {
        w.connect(w.at(p0)->get_netpoint(), w.first[static_cast<std::size_t>(p0)], nic);
        continue;
      }
      auto* port = w.zone->create_router("nicport" + std::to_string(n * nics + k));
      w.connect(port, w.first[static_cast<std::size_t>(p0)], links_.back());
      for (int p = p0; p < p1; ++p)
        if (w.at(p)) w.tree->attach(w.at(p)->get_netpoint(), port, nullptr, nullptr);
    }
  }
}

// The storage host's routes are one hop from each GPU (its node's client link, its NIC, the uplinks, the storage
// link): no route passes through it.
void Fabric::wire_storage(Wiring& w, const FabricOptions& options) {
  storage_ = w.zone->create_host("storage", 1.0);
  sg4::Link* storage_link = add_link("storage", options.storage_bandwidth).up;
  for (int n = 0; n < w.nodes; ++n) {
    sg4::Link* client = options.storage_client_bandwidth > 0 ? add_link("storage-client" + std::to_string(n), options.storage_client_bandwidth).up : nullptr;
    for (int p = n * w.per_node; p < (n + 1) * w.per_node; ++p) {
      if (!w.at(p)) continue;
      std::vector<sg4::Link*> hops;
      if (client) hops.push_back(client);
      for (sg4::Link* l : w.storage_route[static_cast<std::size_t>(p)]) hops.push_back(l);
      hops.push_back(storage_link);
      w.tree->set_route(w.at(p)->get_netpoint(), storage_->get_netpoint(), std::move(hops));
    }
  }
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
