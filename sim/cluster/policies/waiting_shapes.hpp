#pragma once
// The waiting queue grouped by request shape, for EASY backfilling's walk over a deep queue. Whether a waiting job
// can start now beside one reservation depends only on its shape (GPUs, share of a GPU, GPU types, CPU, memory)
// and on whether its run would overlap the reservation. Placement only takes GPUs within a pass, so once a job of
// a shape fails, every later job of that shape fails too: all of them when the failed job would have ended before
// the reservation, the ones that would overlap it otherwise. A walk in queue order therefore skips whole shapes at
// a time, and a pass costs what starts plus two tries per shape, not a look at every waiting job.
//
// Each shape keeps its jobs in queue (job-index) order with their expected runtimes in a min-tree, so "the next job
// of this shape, after position k, that runs at most R" is one descent. Jobs whose start depends on more than the
// shape (a shared GPU, an elastic size, a non-gang job's partial start) sit in one shape that is never closed.
#include <cstdint>
#include <limits>
#include <map>
#include <queue>
#include <string>
#include <tuple>
#include <vector>

#include "sim/cluster/policies/scheduler_policy.hpp"

namespace trainsim::sim::cluster {

// Smallest-value tree over positions 0..n-1 (+inf = empty): set a value, find the first position at or after p
// whose value is at most `limit`.
class MinTree {
 public:
  void resize(std::size_t n);  // keeps values; new positions empty
  std::size_t size() const { return n_; }
  void set(std::size_t pos, double v);
  double get(std::size_t pos) const { return v_[cap_ + pos]; }
  // The first position >= p with value <= limit, or size() when none.
  std::size_t first_at_most(std::size_t p, double limit) const;

 private:
  std::size_t n_ = 0, cap_ = 0;
  std::vector<double> v_;  // v_[cap_ + i]: position i; v_[k]: min of its children
};

class WaitingShapes {
 public:
  // Brings the index up to the pass's queue (pass.waiting(), in job-index order): arrivals are appended; after any
  // other entry (a requeue) the whole queue is read again, with the returning jobs' new runtimes.
  void sync(const SchedulingPass& pass);
  void erase(int j);  // j left the queue

  // One pass's walk over the waiting jobs after `after`, in queue order, skipping shapes known to fail.
  class Walk {
   public:
    Walk(WaitingShapes& index, const SchedulingPass& pass, int after);
    // The next candidate (-1 when none is left); jobs no longer waiting are dropped from the index on the way.
    int next();
    // What became of the candidate last returned: it started; it could not start beside the reservation (with its
    // expected runtime: a failure closes its shape to every later job that runs as long or ends before the
    // reservation alike); it does not fit the free GPUs at all (its shape closes).
    void started();
    void failed(double runtime);
    void close();
    // Seconds from now to the reservation's start: runs longer than this overlap it (+inf: no reservation).
    void set_short_limit(double short_s) { short_s_ = short_s; }

   private:
    enum State : std::uint8_t { kOpen, kShortOnly, kClosed };
    void push_next(int shape, std::size_t from_rank);
    WaitingShapes& ix_;
    const SchedulingPass& pass_;
    std::vector<State> state_;  // per shape, this pass
    using Entry = std::pair<int, int>;  // job, shape: smallest job first
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap_;
    int current_ = -1, current_shape_ = -1;
    double short_s_ = std::numeric_limits<double>::infinity();
  };

 private:
  using Key = std::tuple<int, int, std::int64_t, std::int64_t, std::vector<std::string>>;
  struct Shape {
    std::vector<int> members;  // job indices, ascending
    MinTree runtimes;          // by rank in members: expected runtime while waiting, +inf otherwise
    int present = 0;           // members with a finite runtime
  };
  static constexpr int kAlwaysTried = 0;  // the shape of jobs whose start depends on more than their shape
  void put(const SchedulingPass& pass, int j);
  int shape_of(const SchedulingPass& pass, int j);

  std::vector<Shape> shapes_{1};
  std::map<Key, int> ids_;
  std::vector<int> shape_, rank_;  // per job index (-1: not seen)
  std::uint64_t entries_seen_ = 0;
  int last_index_ = -1;
};

}  // namespace trainsim::sim::cluster
