#pragma once
// The fabric's routes, computed from its shape instead of searched. The switches form a tree (a GPU, or the port
// of a NIC that GPUs share, under its first switch; leaves under pods or the spine), the GPUs of a node are joined
// pairwise by their NVLink ports, a relay may be named for a pair (rail-optimized fabrics: the sender's GPU on
// the receiver's rail), and a route may be given whole (the storage host's). A route between two points of the
// tree walks both up to their lowest common switch: O(hops) per route, where SimGrid's Dijkstra zone runs a
// shortest-path search over every GPU and switch once per source GPU (quadratic in the GPUs: 13.8 s before the
// first iteration at 4,096 GPUs, 9.5 min at 16,384).
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Link.hpp>

#include <functional>
#include <map>
#include <vector>

namespace trainsim::sim {

class TreeZone : public simgrid::kernel::routing::NetZoneImpl {
 public:
  using NetPoint = simgrid::kernel::routing::NetPoint;
  using Link = simgrid::s4u::Link;

  explicit TreeZone(const std::string& name) : NetZoneImpl(name) {}

  // `child` hangs under `parent`: `up` carries what goes towards the parent, `down` what comes from it (either
  // may be null: a hop without a link, such as a GPU to the port of the NIC it shares).
  void attach(const NetPoint* child, const NetPoint* parent, Link* up, Link* down);
  // A GPU's NVLink port in node `group`: a route between two GPUs of one group is the sender's `up` and the
  // receiver's `down`.
  void join_group(const NetPoint* gpu, int group, Link* up, Link* down);
  // A route given whole, in one direction.
  void set_route(const NetPoint* src, const NetPoint* dst, std::vector<Link*> links);
  // For a pair of points, a point the route passes first (the route is src -> relay -> dst), or null.
  void set_relay(std::function<const NetPoint*(const NetPoint* src, const NetPoint* dst)> relay) { relay_ = std::move(relay); }

  void get_local_route(const NetPoint* src, const NetPoint* dst, simgrid::kernel::routing::Route* into, double* latency) override;

 private:
  struct Vertex {
    long parent = -1;  // the vertex id above, -1 at a root
    Link* up = nullptr;
    Link* down = nullptr;
    int group = -1;  // the node of a GPU (-1: none)
    Link* group_up = nullptr;
    Link* group_down = nullptr;
  };
  Vertex& vertex(const NetPoint* p);
  const Vertex* find(unsigned long id) const { return id < vertices_.size() ? &vertices_[id] : nullptr; }
  void append(std::vector<Link*>& out, const NetPoint* src, const NetPoint* dst) const;

  std::vector<Vertex> vertices_;  // by NetPoint id
  std::map<std::pair<unsigned long, unsigned long>, std::vector<Link*>> given_;
  std::function<const NetPoint*(const NetPoint*, const NetPoint*)> relay_;
};

}  // namespace trainsim::sim
