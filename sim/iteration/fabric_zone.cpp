#include "sim/iteration/fabric_zone.hpp"

#include <algorithm>
#include <stdexcept>

#include <simgrid/s4u/Engine.hpp>

namespace trainsim::sim {

TreeZone::Vertex& TreeZone::vertex(const NetPoint* p) {
  if (p->id() >= vertices_.size()) vertices_.resize(p->id() + 1);
  return vertices_[p->id()];
}

void TreeZone::attach(const NetPoint* child, const NetPoint* parent, Link* up, Link* down) {
  Vertex& v = vertex(child);
  v.parent = static_cast<long>(parent->id());
  v.up = up;
  v.down = down;
  vertex(parent);
}

void TreeZone::join_group(const NetPoint* gpu, int group, Link* up, Link* down) {
  Vertex& v = vertex(gpu);
  v.group = group;
  v.group_up = up;
  v.group_down = down;
}

void TreeZone::set_route(const NetPoint* src, const NetPoint* dst, std::vector<Link*> links) {
  given_[{src->id(), dst->id()}] = std::move(links);
}

void TreeZone::append(std::vector<Link*>& out, const NetPoint* src, const NetPoint* dst) const {
  if (src == dst) return;
  if (auto it = given_.find({src->id(), dst->id()}); it != given_.end()) {
    out.insert(out.end(), it->second.begin(), it->second.end());
    return;
  }
  const Vertex* a = find(src->id());
  const Vertex* b = find(dst->id());
  if (a && b && a->group >= 0 && a->group == b->group) {
    out.push_back(a->group_up);
    out.push_back(b->group_down);
    return;
  }
  // Up from the source to the lowest vertex that is also above the destination, then down to it.
  std::vector<unsigned long> above_src{src->id()};
  for (const Vertex* v = a; v && v->parent >= 0; v = find(static_cast<unsigned long>(v->parent))) above_src.push_back(static_cast<unsigned long>(v->parent));
  std::vector<Link*> down;
  unsigned long meet = dst->id();
  for (const Vertex* v = b; std::find(above_src.begin(), above_src.end(), meet) == above_src.end(); v = find(meet)) {
    if (!v || v->parent < 0) throw std::invalid_argument("no route from " + src->get_name() + " to " + dst->get_name());
    if (v->down) down.push_back(v->down);
    meet = static_cast<unsigned long>(v->parent);
  }
  for (unsigned long id = src->id(); id != meet; id = static_cast<unsigned long>(find(id)->parent))
    if (Link* up = find(id)->up) out.push_back(up);
  out.insert(out.end(), down.rbegin(), down.rend());
}

void TreeZone::get_local_route(const NetPoint* src, const NetPoint* dst, simgrid::kernel::routing::Route* into, double* latency) {
  std::vector<Link*> links;
  const NetPoint* relay = relay_ ? relay_(src, dst) : nullptr;
  if (relay) {
    append(links, src, relay);
    append(links, relay, dst);
  } else {
    append(links, src, dst);
  }
  for (Link* l : links) {
    into->link_list_.push_back(l->get_impl());
    if (latency) *latency += l->get_latency();
  }
}

}  // namespace trainsim::sim
