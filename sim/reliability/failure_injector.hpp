#pragma once
// Draws the failures of a set of nodes from a FailureModel, one at a time in time order. It knows
// nodes, GPUs and parts, never jobs: a single-job Monte-Carlo and a shared-cluster simulator both
// drive it (take a failed node out of the pool until it is repaired, put it back fresh, or renew the
// failed part in place).
//
// How it stays fast at 16,384 GPUs: the parts of one component that have been in service since the
// start (a "cohort", all the same age) are not given a clock each. The first failure among n parts
// of age A with cumulative hazard H comes at A + x where n·(H(A + x) - H(A)) = E, E ~ Exp(1), and the
// failing part is uniform among them; so one draw per failure suffices, exactly, for exponential and
// Weibull times alike. A part replaced later gets its own clock (a small heap), unless its time to
// failure is memoryless (exponential), in which case it simply stays in the cohort. Lemon nodes form
// their own cohorts with a multiplied hazard. A node out of the pool takes its parts out of their cohorts
// and a node back puts them in (memoryless parts as good as new in their cohort): O(parts per node), and the
// failures come at the rate of the parts in the pool whenever the pool changes. reset() undoes a run's changes from a log, so a new run
// costs O(failures), not O(GPUs), and allocates nothing once the buffers have grown.
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "models/reliability/failure_model.hpp"
#include "sim/random.hpp"

namespace trainsim::sim {

struct FailureEvent {
  double time_s = std::numeric_limits<double>::infinity();  // infinity: no failure can happen
  int node = -1;
  int component = -1;               // index into FailureModel::components
  bool needs_replacement = false;   // the component's: a new node, or a restart in place
  bool lemon = false;               // the node is a (not yet found) lemon
};

class FailureInjector {
 public:
  // Throws InputError when a component's distribution cannot drive failures.
  FailureInjector(const FailureModel& model, int nodes, int gpus_per_node);

  // Every node up, every part new at `now`, lemons back to lemons; the random stream restarts at `seed`.
  void reset(std::uint64_t seed, double now = 0);

  // The next failure among the nodes in the pool (the same event until it is consumed or the pool changes).
  const FailureEvent& peek();
  // Consume the pending failure: the failed part is replaced, the node stays in the pool.
  void renew();
  // Consume the pending failure: the node leaves the pool (until restore_node).
  void take_down();

  // Pool changes for reasons other than a failure of this node (the cluster drains it, a job shrinks).
  void remove_node(int node, double now);
  // Back in the pool with new parts (repaired, or a replacement in the same slot).
  void restore_node(int node, double now);

  bool is_up(int node) const { return node_up_[static_cast<std::size_t>(node)] != 0; }
  bool is_lemon(int node) const { return node_lemon_[static_cast<std::size_t>(node)] != 0; }
  int nodes_up() const { return nodes_up_; }
  int nodes() const { return nodes_; }
  const FailureModel& model() const { return model_; }

 private:
  struct Component {
    std::unique_ptr<TimeDistribution> dist;  // null: the component never fails (rate 0)
    bool memoryless = false;
    bool needs_replacement = true;
    int units_per_node = 1;
    int offset = 0;  // first unit id
  };
  struct Cohort {
    int component = 0;
    double factor = 1;                  // hazard multiplier (lemons)
    std::vector<std::int32_t> members;  // unit ids; [0, n) are in the cohort
    int n = 0;
    double next = std::numeric_limits<double>::infinity();
    // The part the candidate at `next` falls on, drawn once per candidate (-1: not drawn yet). Thinning must
    // decide once: drawing again at every peek after a pool change rejected candidates again and again, and a
    // cluster whose pool changed often (repairs, spares) saw 6% fewer failures than its rate (1,000x fewer
    // with a change every hour).
    int pick = -1;
    bool dirty = false;
  };
  struct Clock {
    double time;
    std::int32_t unit;
    std::uint32_t gen;
  };
  struct Undo {  // one cohort operation, to be reversed by reset()
    std::int32_t cohort, pos, unit, last;
    bool add;
  };

  int node_of(int unit) const;
  int component_of(int unit) const { return unit_component_[static_cast<std::size_t>(unit)]; }
  int cohort_index(int component, bool lemon) const { return 2 * component + (lemon ? 1 : 0); }
  void cohort_add(int cohort, int unit, bool log);
  void cohort_remove(int unit, bool log);
  void mark_dirty(int cohort);  // its next failure to be drawn again
  void draw_cohort(Cohort& h, double now);
  void redraw_dirty(double now);
  void add_unit(int unit, double now);  // a new part: rejoin its cohort (memoryless) or get a clock
  void consume(double* now, int* unit);
  void count_lemon_failure(int node);

  FailureModel model_;
  int nodes_ = 0, gpus_per_node_ = 1, lemons_ = 0;
  std::vector<Component> comps_;
  std::vector<Cohort> cohorts_;
  std::vector<std::int16_t> unit_component_;
  std::vector<std::int16_t> unit_cohort_;  // -1: not in a cohort
  std::vector<std::int32_t> unit_pos_;
  std::vector<std::uint32_t> unit_gen_;    // a clock is valid while its gen matches
  std::vector<Clock> heap_;
  std::vector<Undo> undo_;
  std::vector<std::uint8_t> node_up_, node_lemon_;
  std::vector<std::int32_t> lemon_failures_;
  std::vector<int> dirty_;
  int nodes_up_ = 0;
  double t0_ = 0;  // when the original parts entered service
  Rng rng_;
  FailureEvent pending_;
  bool pending_valid_ = false;
  int pending_cohort_ = -1, pending_unit_ = -1;
};

}  // namespace trainsim::sim
