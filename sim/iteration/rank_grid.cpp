#include "sim/iteration/rank_grid.hpp"

#include <sstream>
#include <string>

namespace trainsim::sim {

namespace {
// Strides of dimensions named in `order` ("tp-cp-ep-dp-pp", innermost first), sizes from `size_of`.
template <class SizeOf>
void strides(const std::string& order, SizeOf size_of) {
  std::stringstream ss(order);
  std::string name;
  int stride = 1;
  while (std::getline(ss, name, '-')) stride = size_of(name, stride);
}
}  // namespace

RankGrid::RankGrid(const ParallelLayout& p) {
  world_ = static_cast<int>(p.world());
  // Dense: tp, cp, dp, pp (ep = 1).
  strides(p.rank_order, [&](const std::string& n, int stride) {
    Dim* d = n == "tp" ? &dense_[0] : n == "cp" ? &dense_[1] : n == "dp" ? &dense_[2] : n == "pp" ? &dense_[3] : nullptr;
    if (!d) return stride;
    d->size = n == "tp" ? p.tp : n == "cp" ? p.cp : n == "dp" ? p.dp : p.pp;
    d->stride = stride;
    return stride * d->size;
  });
  // Expert: etp in tp's place, cp = 1, ep, expert dp in dp's place, pp.
  strides(p.rank_order, [&](const std::string& n, int stride) {
    Dim* d = n == "tp" ? &expert_[0] : n == "ep" ? &expert_[1] : n == "dp" ? &expert_[2] : n == "pp" ? &expert_[3] : nullptr;
    if (!d) return stride;
    d->size = n == "tp" ? p.etp : n == "ep" ? p.ep : n == "dp" ? p.expert_dp() : p.pp;
    d->stride = stride;
    return stride * d->size;
  });
}

RankGrid::Dim RankGrid::dim(GroupKind kind) const {
  switch (kind) {
    case GroupKind::Tp: return dense_[0];
    case GroupKind::Cp: return dense_[1];
    case GroupKind::Dp:
    case GroupKind::DpCp: return dense_[2];
    case GroupKind::Pp: return dense_[3];
    case GroupKind::Etp: return expert_[0];
    case GroupKind::Ep: return expert_[1];
    case GroupKind::Edp: return expert_[2];
  }
  return {};
}

int RankGrid::coordinate(GroupKind kind, int rank) const {
  const Dim d = dim(kind);
  return rank / d.stride % d.size;
}

std::vector<int> RankGrid::group(GroupKind kind, int rank) const {
  if (kind == GroupKind::DpCp) {
    std::vector<int> members;
    for (int c : group(GroupKind::Cp, rank))
      for (int d : group(GroupKind::Dp, c)) members.push_back(d);
    return members;
  }
  const Dim d = dim(kind);
  const int base = rank - coordinate(kind, rank) * d.stride;
  std::vector<int> members(static_cast<std::size_t>(d.size));
  for (int k = 0; k < d.size; ++k) members[static_cast<std::size_t>(k)] = base + k * d.stride;
  return members;
}

int RankGrid::at_stage(int rank, int stage) const {
  const Dim d = dense_[3];
  return rank + (stage - coordinate(GroupKind::Pp, rank)) * d.stride;
}

}  // namespace trainsim::sim
