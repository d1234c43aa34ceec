#pragma once
// The SimGrid platform of a job (s4u API): one host per GPU; inside a node every GPU pair joined by the two
// GPUs' NVLink ports (a non-blocking NVSwitch); between nodes each GPU's NIC (GPUs share NICs when a node
// has fewer) up to the network of hardware.network: a two- or three-level fat-tree whose leaf uplinks
// carry 1/oversubscription of the leaf's NIC bandwidth, rail switches (GPU i of every node of a group on
// rail i) under a spine, or one switch, and a storage host on the spine for checkpoint traffic (each node
// reaching it through a client link at the storage tier's per-node bandwidth). Links run at
// the achievable bandwidths of the collective model (models/comm/collectives.hpp: NVLink ring bandwidth per GPU,
// NIC bandwidth), split duplex, zero latency.
//
// A transfer carries its real bytes; SimGrid's bandwidth-factor callback gives it the efficiency that makes it,
// alone on ports as built, take the analytic time of the collective it belongs to (latency and the calibrated
// bandwidth curve of models/comm/collectives.hpp included): a flow of factor f progresses at f x its share of each
// link, i.e. it uses a link as bytes / f would. A switch uplink narrower than the ports, a slowed link, and
// flows meeting on a link (max-min sharing) stretch it.
//
// Placement: the job's nodes (in rank order, node n holding ranks n x gpus_per_node ..) are put on the
// fabric's node slots (slot s under leaf s / nodes_per_leaf) packed, spread over the leaves, or at random.
// GPUs and NICs in link ids are physical (slot order); GPU ranks elsewhere are the job's.
//
// Needs a live simgrid::s4u::Engine; build it once per simulation, before any actor runs.
#include <simgrid/forward.h>

#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "models/comm/collectives.hpp"
#include "models/scenario/spec.hpp"

namespace trainsim::sim {

struct FabricLink {
  std::string id;             // "nvlink3", "nic17", "leaf2-up", "rail0.5-up", ...
  simgrid::s4u::Link* up = nullptr;    // the two directions of a split-duplex link
  simgrid::s4u::Link* down = nullptr;
  double bandwidth = 0;       // bytes/s, each direction
  double nominal = 0;         // as built, before --slow-link
};

enum class Placement { Packed, Spread, Random };
const char* to_string(Placement p);
bool parse_placement(const std::string& text, Placement* out);  // "packed" | "spread" | "random"

struct FabricOptions {
  Placement placement = Placement::Packed;
  unsigned long long seed = 1;      // for Placement::Random
  double storage_bandwidth = 0;     // bytes/s of the storage host's link to the spine; 0: no storage host
  double storage_client_bandwidth = 0;  // bytes/s one node writes to storage (its client's limit); 0: no limit
};

// Node slot of each of the job's nodes: packed (n -> n), spread (consecutive nodes on different leaves:
// slots taken by position in leaf, then leaf), random (a shuffle).
std::vector<int> node_slots(int nodes, int nodes_per_leaf, Placement placement, unsigned long long seed);

class Fabric {
 public:
  // `gpus`: the job's GPUs, filling nodes of hardware.gpus_per_node in rank order. One fabric per SimGrid
  // engine (it installs the engine's bandwidth-factor callback).
  Fabric(const HardwareSpec& hardware, const CommModel& comm, int gpus, const FabricOptions& options = {});
  simgrid::s4u::Host* gpu(int rank) const { return hosts_[static_cast<std::size_t>(rank)]; }
  simgrid::s4u::Host* storage() const { return storage_; }  // nullptr without a storage host
  int physical_gpu(int rank) const { return physical_[static_cast<std::size_t>(rank)]; }
  int size() const { return static_cast<int>(hosts_.size()); }
  const std::vector<FabricLink>& links() const { return links_; }
  // The bandwidth the collective model prices a transfer at: its endpoints' ports (NVLink inside a node, the
  // NICs between nodes) as built, bytes/s. A lone transfer runs at this times its factor; switch uplinks
  // narrower than that, and slowed links, make it slower.
  double nominal_bandwidth(const simgrid::s4u::Host* from, const simgrid::s4u::Host* to);
  double nominal_bandwidth(int from, int to) { return nominal_bandwidth(gpu(from), gpu(to)); }
  // Links of the route (directional SimGrid links), for byte accounting.
  const std::vector<simgrid::s4u::Link*>& route(const simgrid::s4u::Host* from, const simgrid::s4u::Host* to);
  const std::vector<simgrid::s4u::Link*>& route(int from, int to) { return route(gpu(from), gpu(to)); }
  // Divides a link's bandwidth (both directions) by `factor`; false when no link has that id.
  bool slow_link(const std::string& id, double factor);
  // Starts a transfer of `bytes` from `from` to `to` that alone on the fabric takes `seconds`.
  simgrid::s4u::CommPtr transfer(simgrid::s4u::Host* from, simgrid::s4u::Host* to, double bytes, double seconds);
  // Starts a write of `bytes` to the storage host: through the node's storage client link, the GPU's NIC and the
  // switches' uplinks to the spine, each link at its nominal bandwidth.
  simgrid::s4u::CommPtr write_to_storage(simgrid::s4u::Host* from, double bytes);

 private:
  FabricLink& add_link(const std::string& id, double bandwidth);
  // The construction, one step each (fabric.cpp).
  struct Wiring;
  void place_gpus(Wiring& w, int gpus, const FabricOptions& options);
  void wire_nvlink(Wiring& w, double bandwidth);
  void wire_rails(Wiring& w);
  void wire_fat_tree(Wiring& w);
  void wire_nics(Wiring& w);
  void wire_storage(Wiring& w, const FabricOptions& options);
  simgrid::s4u::NetZone* zone_ = nullptr;
  std::vector<simgrid::s4u::Host*> hosts_;  // by rank
  std::vector<int> physical_;               // physical GPU of each rank
  simgrid::s4u::Host* storage_ = nullptr;
  std::vector<FabricLink> links_;
  struct CachedRoute {
    std::vector<simgrid::s4u::Link*> links;
    double nominal = 0;  // its ports' bandwidth as built
  };
  const CachedRoute& cached_route(const simgrid::s4u::Host* from, const simgrid::s4u::Host* to);
  std::map<std::pair<const simgrid::s4u::Host*, const simgrid::s4u::Host*>, CachedRoute> routes_;
  // Factors of transfers started but not yet seen by SimGrid's callback, by (source, destination, bytes): an
  // actor's transfer reaches the callback in the same scheduling round, after other actors may have started
  // theirs, in order.
  std::map<std::tuple<const simgrid::s4u::Host*, const simgrid::s4u::Host*, double>, std::deque<double>> pending_factors_;
  std::map<const simgrid::s4u::Link*, double> nominal_;  // each directional link's bandwidth as built
};

}  // namespace trainsim::sim
