#pragma once
// Which GPUs form each communication group of a layout, from Megatron-core's rank order
// (megatron/core/parallel_state.py RankGenerator: layout.rank_order, innermost dimension first). Dense
// groups (tp, cp, dp, pp) use the order with ep = 1; the expert groups (ep, and the expert data-parallel
// group that reduces expert gradients) the same order with tp -> etp, cp -> 1, dp -> expert dp.
#include <vector>

#include "models/scenario/spec.hpp"

namespace trainsim::sim {

// DpCp: the dp·cp ranks that hold the same dense weights (gradient reduction and ZeRO sharding span both). Etp: the
// expert tensor-parallel group.
enum class GroupKind { Tp, Cp, Dp, DpCp, Pp, Ep, Edp, Etp };

class RankGrid {
 public:
  explicit RankGrid(const ParallelLayout& p);
  int world() const { return world_; }
  // The members of `rank`'s group of this kind, in ring order (rank's own position included).
  std::vector<int> group(GroupKind kind, int rank) const;
  // rank's coordinate along a dimension (its pipeline stage for Pp, its DP replica for Dp, ...).
  int coordinate(GroupKind kind, int rank) const;
  // The rank with the same coordinates as `rank` except pipeline stage `stage`.
  int at_stage(int rank, int stage) const;

 private:
  struct Dim {
    int size = 1, stride = 1;
  };
  Dim dim(GroupKind kind) const;
  int world_ = 1;
  Dim dense_[4];   // tp, cp, dp, pp
  Dim expert_[4];  // etp, ep, edp, pp
};

}  // namespace trainsim::sim
