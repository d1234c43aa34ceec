#include "models/reliability/recovery_model.hpp"

#include <algorithm>
#include <cmath>

#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"
#include "models/reliability/failure_model.hpp"
#include "models/reliability/reliability_limits.hpp"

namespace trainsim {

RecoveryTimes recovery_times(const RecoverySettings& s, double reload_s, bool replace_node) {
  RecoveryTimes r;
  if (s.fixed_total_s >= 0) {
    r.fixed = true;
    r.restart = s.fixed_total_s;
    return r;
  }
  r.detection = s.detection_s;
  r.drain = s.drain_s;
  r.reschedule = replace_node ? s.reschedule_s : 0;
  r.restart = s.restart_s;
  r.reload = reload_s;
  r.warmup = s.warmup_s;
  return r;
}

double mean_recovery_s(const RecoverySettings& s, double reload_s, double replacement_share) {
  const double share = std::clamp(replacement_share, 0.0, 1.0);
  return share * recovery_times(s, reload_s, true).total() + (1 - share) * recovery_times(s, reload_s, false).total();
}

int default_spare_nodes(int nodes) { return std::max(1, static_cast<int>(std::ceil(nodes / 100.0))); }

double detection_seconds(const std::string& name, bool* known) {
  *known = true;
  if (name == "heartbeat") return 60;      // health checks / a crashed rank's exit noticed within a minute (assumption)
  if (name == "nccl-timeout") return 600;  // a hung collective: PyTorch's default NCCL timeout, 10 min
  *known = false;
  return 0;
}

RecoverySettings parse_recovery_settings(const Json& value, const std::string& path, std::vector<AppliedDefault>* defaults) {
  RecoverySettings s;
  auto note_defaults = [&](JsonReader* r) {
    // The same defaults whether the section is absent or partly given.
    const auto rec = [&](const char* key, const char* v, const char* why) {
      if (r == nullptr || !r->has(key)) {
        if (defaults) defaults->push_back({path + "/" + key, v, why});
      }
    };
    rec("detection", "\"heartbeat\" (60 s)", "a crashed rank or failed health check is noticed within a minute (assumption)");
    rec("drain", "30", "seconds to stop the surviving ranks and release the allocation (assumption)");
    rec("reschedule", "120", "seconds to allocate and health-check a spare node (assumption)");
    rec("restart", "180", "seconds for containers, rendezvous and NCCL communicators at scale (assumption)");
    rec("warmup", "60", "seconds of data loaders, compilation and slow first steps (assumption)");
    rec("repair", "{\"distribution\": \"lognormal\", \"mean\": \"24h\", \"shape\": 1}",
        "a failed node is back in the pool after a long-tailed repair, median 14.6 h (assumption)");
  };
  if (value.is_null()) {
    note_defaults(nullptr);
    return s;
  }
  namespace lim = reliability_limits;
  JsonReader r(value, path, nullptr);
  r.mark_read({"detection", "drain", "reschedule", "restart", "warmup", "total", "repair"});
  if (r.has("total")) {
    s.fixed_total_s = lim::read_quantity(r, "total", Quantity::Time, 0, "", lim::kRecovery);
  } else {
    note_defaults(&r);
  }
  if (r.has("detection")) {
    const Json& d = r.raw("detection");
    bool known = false;
    if (d.is_string()) s.detection_s = detection_seconds(d.get<std::string>(), &known);
    if (!known) s.detection_s = lim::read_quantity(r, "detection", Quantity::Time, 0, "", lim::kRecovery);
  }
  s.drain_s = lim::read_quantity(r, "drain", Quantity::Time, s.drain_s, "", lim::kRecovery);
  s.reschedule_s = lim::read_quantity(r, "reschedule", Quantity::Time, s.reschedule_s, "", lim::kRecovery);
  s.restart_s = lim::read_quantity(r, "restart", Quantity::Time, s.restart_s, "", lim::kRecovery);
  s.warmup_s = lim::read_quantity(r, "warmup", Quantity::Time, s.warmup_s, "", lim::kRecovery);
  if (r.has("repair")) {
    JsonReader rep(r.raw("repair"), r.child_path("repair"), nullptr);
    rep.mark_read({"distribution", "mean", "shape"});
    s.repair_distribution = rep.get_string("distribution", s.repair_distribution, "");
    s.repair_mean_s = lim::read_quantity(rep, "mean", Quantity::Time, s.repair_mean_s, "", lim::kRepairMean);
    s.repair_shape = lim::read_number(rep, "shape", s.repair_shape, "", lim::kRepairShape);
    rep.reject_unknown();
    (void)make_distribution(s.repair_distribution, s.repair_mean_s, s.repair_shape, rep.child_path("distribution"));
  }
  r.reject_unknown();
  return s;
}

}  // namespace trainsim
