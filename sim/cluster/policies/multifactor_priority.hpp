#pragma once
// Slurm's priority/multifactor job priority (slurm.conf PriorityType=priority/multifactor, with Fair Tree fair-share):
//   priority = weight_age x age + weight_fairshare x fairshare + weight_job_size x size + weight_qos x qos
// every factor in [0, 1]: age = time since submission / max_age (at most 1); fairshare = Fair Tree's rank of the
// user's level fairshare (shares / decayed usage share) among the workload's users with equal shares; size = GPUs asked
// / the cluster's GPUs (1 minus that with favor_small); qos = the job's priority / the highest priority seen.
// Usage is the users' GPU-seconds decayed with the half-life (Slurm's PriorityDecayHalfLife), charged between passes
// for the GPUs their jobs held. The `multifactor` policy runs Slurm's backfill in this order (policy_backfill.cpp).
//
// A deep queue is ranked without touching every job: within one user, the age term grows alike for every job, so the
// order of a user's waiting jobs is fixed (by size and QOS less the age term at submission, or, once the age factor
// is capped at 1, by size and QOS): each user keeps its jobs in two sorted sets, and a ranking merges the users' heads.
#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/cluster/policies/scheduler_policy.hpp"

namespace trainsim::sim::cluster {

class MultifactorPriority {
 public:
  // The `first` highest-priority waiting jobs in priority order (queue order among equals), then the rest of the
  // waiting jobs in no particular order: a pass looks at no more (Slurm's bf_max_job_test). Charges the usage since
  // the last call first.
  std::vector<int> order(const SchedulingPass& pass, std::size_t first);
  // Call at the end of a pass: the GPUs each user holds until the next one.
  void note_running(const SchedulingPass& pass);
  struct Factors {
    double age = 0, fairshare = 0, job_size = 0, qos = 0, priority = 0;
  };
  // One job's factors now (the fair-share as of the last order()).
  Factors factors(const SchedulingPass& pass, int j);
  double usage(const std::string& user) const;  // decayed GPU-seconds

 private:
  struct Job {
    int user = -1;
    int set = 0;            // 0: in no set; 1: the user's uncapped set; 2: its capped set
    double static_key = 0;  // weight_job_size x size + weight_qos x qos
  };
  using Set = std::set<std::pair<double, int>>;  // (-key, job): begin() is the highest
  struct User {
    std::string name;
    double usage = 0, holding = 0, fairshare = 1;
    Set uncapped;  // key: static_key - weight_age x submit / max_age
    Set capped;    // key: static_key + weight_age
  };

  Job& job(const SchedulingPass& pass, int j);
  void charge(double now, const MultifactorSettings& s);
  void rank_users();
  void rebuild(const SchedulingPass& pass);  // the static keys changed (a higher QOS priority appeared)
  void insert(const SchedulingPass& pass, int j);
  // Adds the jobs that entered the queue since the last ranking: new arrivals from the queue's tail, or, after a
  // return (preemption, failure, job error) somewhere in it, every waiting job not in a set.
  void take_new_entries(const SchedulingPass& pass);
  void cap_aged(const SchedulingPass& pass);
  // The user's best waiting job and its priority now (priority -inf: none); drops jobs no longer waiting.
  std::pair<double, int> head(const SchedulingPass& pass, User& u, Set::iterator& a, Set::iterator& b);

  std::vector<Job> jobs_;
  std::vector<User> users_;
  std::unordered_map<std::string, int> user_index_;
  std::set<std::pair<double, int>> by_submit_;  // uncapped members by submit time, to cap them as they age
  std::uint64_t entries_seen_ = 0;  // queue_entries() at the last ranking
  int last_index_ = -1;             // the largest job index seen waiting
  double last_s_ = -1;
  double max_qos_ = 0;
};

}  // namespace trainsim::sim::cluster
