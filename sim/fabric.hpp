#pragma once
// The SimGrid platform of a job (s4u API): one host per GPU; inside a node every GPU pair joined by the two
// GPUs' NVLink ports (a non-blocking NVSwitch); between nodes each GPU's NIC (GPUs share NICs when a node
// has fewer) up to the network of hardware.network: a two- or three-level fat-tree whose leaf uplinks
// carry 1/oversubscription of the leaf's NIC bandwidth, rail switches (GPU i of every node of a group on
// rail i) under a spine, or one switch. Links run at the achievable bandwidths of the collective model
// (models/collectives.hpp: NVLink ring bandwidth per GPU, NIC bandwidth), split duplex, zero latency: the
// simulator sizes each flow so that, alone, it takes the analytic time (latency included) of the
// collective it belongs to, and SimGrid's max-min sharing stretches it where flows meet on a link.
//
// Needs a live simgrid::s4u::Engine; build it once per simulation, before any actor runs.
#include <string>
#include <unordered_map>
#include <vector>

#include "models/collectives.hpp"
#include "models/spec.hpp"

namespace simgrid::s4u {
class Host;
class Link;
class NetZone;
}  // namespace simgrid::s4u

namespace trainsim::sim {

struct FabricLink {
  std::string id;             // "nvlink3", "nic17", "leaf2-up", "rail0.5-up", ...
  simgrid::s4u::Link* up = nullptr;    // the two directions of a split-duplex link
  simgrid::s4u::Link* down = nullptr;
  double bandwidth = 0;       // bytes/s, each direction
};

class Fabric {
 public:
  // `gpus`: the job's GPUs, filling nodes of hardware.gpus_per_node in rank order.
  Fabric(const HardwareSpec& hardware, const CommModel& comm, int gpus);
  simgrid::s4u::Host* gpu(int rank) const { return hosts_[static_cast<std::size_t>(rank)]; }
  int size() const { return static_cast<int>(hosts_.size()); }
  const std::vector<FabricLink>& links() const { return links_; }
  // Slowest link on the route from one GPU to another, bytes/s (cached).
  double route_bandwidth(int from, int to);
  // Links of the route (directional SimGrid links), for byte accounting.
  const std::vector<simgrid::s4u::Link*>& route(int from, int to);
  // Divides a link's bandwidth (both directions) by `factor`; false when no link has that id.
  bool slow_link(const std::string& id, double factor);

 private:
  FabricLink& add_link(const std::string& id, double bandwidth);
  simgrid::s4u::NetZone* zone_ = nullptr;
  std::vector<simgrid::s4u::Host*> hosts_;
  std::vector<FabricLink> links_;
  std::unordered_map<long long, std::vector<simgrid::s4u::Link*>> routes_;
};

}  // namespace trainsim::sim
