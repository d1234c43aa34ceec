#pragma once
// What happens between a job-killing failure and training again: detection (heartbeat or NCCL
// timeout), draining the job, rescheduling onto a spare node (or waiting for a repaired one: the
// repair-time distribution), restarting the containers and process groups, reloading the checkpoint,
// and warm-up. Durations only; which node is free when is the simulator's business.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/core/units.hpp"
#include "models/scenario/spec.hpp"

namespace trainsim {

struct RecoverySettings {
  double detection_s = 60;     // "heartbeat"; "nccl-timeout" = 600 s
  double drain_s = 30;         // stop the surviving ranks, release the allocation
  double reschedule_s = 120;   // allocate a spare node, health-check it (hardware failures only)
  double restart_s = 180;      // containers, rendezvous, NCCL communicators at scale
  double warmup_s = 60;        // data loaders, compilation, the first slow steps
  double fixed_total_s = -1;   // >= 0: one given duration from the failure to training again (replaces the parts; reload included)
  std::string repair_distribution = "lognormal";
  double repair_mean_s = 24 * kSecondsPerHour;
  double repair_shape = 1.0;   // lognormal sigma (Weibull k)
  int spare_nodes = -1;        // nodes ready for this job; -1: default_spare_nodes()
  bool elastic = false;        // continue on fewer data-parallel replicas when no spare is free
  double elastic_min_fraction = 0.5;  // of the data-parallel replicas, below which the job waits instead
};

struct RecoveryTimes {
  double detection = 0, drain = 0, reschedule = 0, restart = 0, reload = 0, warmup = 0;
  bool fixed = false;  // a given total (in `restart`); the parts are not known
  double total() const { return detection + drain + reschedule + restart + reload + warmup; }
};

// One recovery, with a spare free when `replace_node` (hardware) or in place (software).
RecoveryTimes recovery_times(const RecoverySettings& s, double reload_s, bool replace_node);
// The R of the closed forms (Young/Daly, first-order waste): the mean recovery when a spare is free,
// `replacement_share` of the failures needing a new node.
double mean_recovery_s(const RecoverySettings& s, double reload_s, double replacement_share);
// One spare per 100 nodes, at least one (BLOOM kept 4 for 48 nodes; OPT-175B 4 to 18 for 124).
int default_spare_nodes(int nodes);

// Named detection times: "heartbeat" (60 s) and "nccl-timeout" (600 s, PyTorch's default NCCL timeout).
double detection_seconds(const std::string& name, bool* known);

// The scenario's "recovery" object: {detection (name or duration), drain, reschedule, restart, warmup,
// total, repair: {distribution, mean, shape}}; spare_nodes and elastic live beside it in "reliability"
// and are read by the caller.
RecoverySettings parse_recovery_settings(const nlohmann::json& value, const std::string& path, std::vector<AppliedDefault>* defaults);

}  // namespace trainsim
