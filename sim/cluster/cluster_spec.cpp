#include "cluster_spec.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"
#include "models/core/units.hpp"
#include "models/scenario/presets.hpp"

namespace trainsim::sim::cluster {

namespace {

constexpr int kMaxGpusPerNode = 64;
constexpr int kMaxNodesPerPool = 1'000'000;  // and in the whole cluster
constexpr QuantityRange kPrice{0, 1000};
constexpr QuantityRange kPower{0, 10'000};
constexpr QuantityRange kDuration{0, 10 * 365 * 86400.0};
constexpr QuantityRange kInterval{1, 365 * 86400.0};

NodePool parse_pool(const Json& value, const std::string& path) {
  if (!value.is_object()) throw InputError(path, json_value_text(value), "a node pool {gpu, gpus_per_node, nodes, ...}");
  JsonReader r(value, path, nullptr);
  NodePool p;
  if (!r.has("gpu")) throw InputError(path + "/gpu", r.absent_text("gpu"), "a GPU model: a preset name or the trace's model name");
  p.gpu = r.get_string("gpu", "", "");
  if (p.gpu.empty()) throw InputError(path + "/gpu", "\"\"", "a GPU model name");
  p.name = r.get_string("name", p.gpu, "");  // (as given; the GPU name below becomes the preset's own)
  p.gpus_per_node = r.required_int("gpus_per_node", 1, kMaxGpusPerNode);
  p.nodes = r.required_int("nodes", 1, kMaxNodesPerPool);
  // Host resources a job's CPU and memory requests are placed against (absent: not limited).
  p.cpu_milli = std::llround(1000 * r.get_number("cpus_per_node", 0, "", 0, 100'000));
  p.memory_mib = std::llround(r.get_quantity("memory_per_node", Quantity::Bytes, 0, "", {0, 1e15}) / kBytesPerMiB);
  p.spare_nodes = r.get_int("spare_nodes", 0, "", 0, kMaxNodesPerPool);
  // A preset GPU brings its list price and TDP; a trace's model name brings nothing.
  Json preset;
  const std::string canonical = canonical_preset_name(PresetKind::Gpu, p.gpu);
  if (!canonical.empty()) preset = preset_table(PresetKind::Gpu)[canonical], p.gpu = canonical;  // one name for a model's jobs to match
  const double preset_price = preset.is_object() && preset.contains("price_per_hour") ? quantity_from_json(preset["price_per_hour"], Quantity::Money, "") : 0;
  const double preset_tdp = preset.is_object() && preset.contains("tdp") ? quantity_from_json(preset["tdp"], Quantity::Power, "") : 0;
  p.price_per_gpu_hour = r.get_quantity("price_per_gpu_hour", Quantity::Money, preset_price, "", kPrice);
  p.gpu_power_w = r.get_quantity("gpu_power", Quantity::Power, preset_tdp, "", kPower);
  p.spot = r.get_bool("spot", false, "");
  if (p.spot) {
    // No default: reclaim rates differ by provider, region and instance type by orders of magnitude.
    if (!r.has("reclaims_per_node_day"))
      throw InputError(path + "/reclaims_per_node_day", r.absent_text("reclaims_per_node_day"), "how often a spot node is reclaimed, per node-day (e.g. 0.05)");
    p.reclaims_per_node_day = r.get_number("reclaims_per_node_day", 0, "", 0, 1000);
    if (!r.has("reclaimed_for"))
      throw InputError(path + "/reclaimed_for", r.absent_text("reclaimed_for"), "how long a reclaimed spot node stays away (e.g. \"2h\")");
    p.reclaimed_for_s = r.required_quantity("reclaimed_for", Quantity::Time, {1, 365 * 86400.0});
  }
  r.reject_unknown();
  return p;
}

ScriptedFailure parse_scripted(const Json& value, const std::string& path, int nodes) {
  if (!value.is_object()) throw InputError(path, json_value_text(value), "{node, at, kind}");
  JsonReader r(value, path, nullptr);
  ScriptedFailure f;
  f.node = r.required_int("node", 0, std::max(0, nodes - 1));
  f.at_s = r.required_quantity("at", Quantity::Time, kDuration);
  f.needs_replacement = r.get_enum("kind", {"hardware", "software"}, "hardware", "") == "hardware";
  r.reject_unknown();
  return f;
}

UserLimits parse_user_limits(JsonReader& r) {
  UserLimits l;
  l.max_running_jobs = r.get_int("max_running_jobs", 0, "", 0, 1 << 24);
  l.max_gpus = r.get_number("max_gpus", 0, "", 0, 1e7);
  return l;
}

QueueSpec parse_queue(const Json& value, const std::string& path) {
  if (!value.is_object())
    throw InputError(path, json_value_text(value), "a queue {name, quota_gpus, borrowing_limit_gpus, cohort, lending_limit_gpus, weight, capability_gpus, guarantee_gpus}");
  JsonReader r(value, path, nullptr);
  QueueSpec q;
  if (!r.has("name")) throw InputError(path + "/name", r.absent_text("name"), "the queue's name (the jobs' queue)");
  q.name = r.get_string("name", "", "");
  q.quota_gpus = r.get_number("quota_gpus", 0, "", 0, 1e7);
  q.borrowing_limit_gpus = r.get_number("borrowing_limit_gpus", -1, "", -1, 1e7);
  q.cohort = r.get_string("cohort", "", "");
  q.lending_limit_gpus = r.get_number("lending_limit_gpus", -1, "", -1, 1e7);
  q.weight = r.get_number("weight", 1, "", 1e-6, 1e6);
  q.capability_gpus = r.get_number("capability_gpus", -1, "", -1, 1e7);
  q.guarantee_gpus = r.get_number("guarantee_gpus", 0, "", 0, 1e7);
  r.reject_unknown();
  return q;
}

}  // namespace

const UserLimits& ClusterSpec::limits_of(const std::string& user) const {
  const auto it = user_limit_overrides.find(user);
  return it == user_limit_overrides.end() ? user_limits : it->second;
}

const std::string& ClusterSpec::account_of(const ClusterJob& job) const {
  if (!job.account.empty()) return job.account;
  const auto it = user_accounts.find(job.user);
  return it == user_accounts.end() ? job.account : it->second;
}

const UserLimits* ClusterSpec::account_limits_of(const ClusterJob& job) const {
  const std::string& account = account_of(job);
  if (account.empty()) return nullptr;
  const auto it = account_limits.find(account);
  return it == account_limits.end() || !it->second.any() ? nullptr : &it->second;
}

bool ClusterSpec::has_user_limits() const {
  if (user_limits.any()) return true;
  for (const auto& [account, l] : account_limits)
    if (l.any()) return true;
  for (const auto& [user, l] : user_limit_overrides)
    if (l.any()) return true;
  return false;
}

const QueueSpec* ClusterSpec::queue(const std::string& name) const {
  for (const QueueSpec& q : queues)
    if (q.name == name) return &q;
  return nullptr;
}

int ClusterSpec::total_gpus() const {
  int n = 0;
  for (const NodePool& p : pools) n += p.total_gpus();
  return n;
}
int ClusterSpec::total_nodes() const {
  int n = 0;
  for (const NodePool& p : pools) n += p.nodes;
  return n;
}
int ClusterSpec::max_gpus_per_node() const {
  int n = 0;
  for (const NodePool& p : pools) n = std::max(n, p.gpus_per_node);
  return n;
}

ClusterSpec parse_cluster(const Json& value, const std::string& path, std::vector<AppliedDefault>* defaults) {
  if (!value.is_object()) throw InputError(path, json_value_text(value), "an object {pools, network, failures, recovery, ...}");
  JsonReader r(value, path, defaults);
  ClusterSpec c;
  if (r.has("pools")) {
    const Json& pools = r.raw("pools");
    if (!pools.is_array() || pools.empty()) throw InputError(path + "/pools", json_value_text(pools), "a non-empty list of node pools");
    for (std::size_t i = 0; i < pools.size(); ++i) c.pools.push_back(parse_pool(pools[i], path + "/pools/" + std::to_string(i)));
    // One bound on the whole cluster, not only per pool (20 pools of a million nodes once took 4.4 GB).
    std::int64_t nodes = 0;
    for (const NodePool& p : c.pools) nodes += static_cast<std::int64_t>(p.nodes) + p.spare_nodes;
    if (nodes > kMaxNodesPerPool)
      throw InputError(path + "/pools", std::to_string(nodes) + " nodes (spares included) in " + std::to_string(c.pools.size()) + " pools",
                       "at most 1,000,000 nodes in the whole cluster", "the largest clusters hold 100-200K GPUs");
  }
  if (r.has("network")) {
    JsonReader n(r.raw("network"), path + "/network", defaults);
    c.nodes_per_leaf = n.get_int("nodes_per_leaf", c.nodes_per_leaf, "", 1, 1 << 20);
    c.oversubscription = n.get_number("oversubscription", 1, "", 1, 64);
    n.reject_unknown();
  } else {
    r.record_default("network/nodes_per_leaf", std::to_string(c.nodes_per_leaf), "DGX SuperPOD scalable unit: 32 nodes per leaf group");
  }
  c.gpu_sharing = r.get_bool("gpu_sharing", false, "");
  r.mark_read({"jobs"});  // jobs given as scenarios: read by model_jobs.hpp (their paths are relative to the scenario file)
  const int gpn = c.max_gpus_per_node() > 0 ? c.max_gpus_per_node() : 8;
  if (r.has("failures")) {
    const Json& f = r.raw("failures");
    c.failures_on = !(f.is_string() && f.get<std::string>() == "none");
    if (c.failures_on) c.failures = parse_failure_model(f, path + "/failures", gpn, defaults);
  }
  if (r.has("user_limits")) {
    const std::string where = path + "/user_limits";
    JsonReader u(r.raw("user_limits"), where, defaults);
    c.user_limits = parse_user_limits(u);
    if (u.has("users")) {
      const Json& users = u.raw("users");
      if (!users.is_object()) throw InputError(where + "/users", json_value_text(users), "an object {user: {max_running_jobs, max_gpus}}");
      for (auto it = users.begin(); it != users.end(); ++it) {
        JsonReader one(it.value(), where + "/users/" + it.key(), defaults);
        c.user_limit_overrides[it.key()] = parse_user_limits(one);
        one.reject_unknown();
      }
    }
    u.reject_unknown();
  }
  if (r.has("accounts")) {
    // {NAME: {max_running_jobs, max_gpus, users: [...]}}: Slurm accounts, their group limits and their users.
    const std::string where = path + "/accounts";
    const Json& accounts = r.raw("accounts");
    if (!accounts.is_object()) throw InputError(where, json_value_text(accounts), "an object {account: {max_running_jobs, max_gpus, users: [user, ...]}}");
    for (auto it = accounts.begin(); it != accounts.end(); ++it) {
      const std::string at = where + "/" + it.key();
      if (it.key().empty()) throw InputError(at, "\"\"", "an account name");
      JsonReader a(it.value(), at, defaults);
      c.account_limits[it.key()] = parse_user_limits(a);
      if (a.has("users")) {
        const Json& users = a.raw("users");
        if (!users.is_array()) throw InputError(at + "/users", json_value_text(users), "a list of user names");
        for (std::size_t i = 0; i < users.size(); ++i) {
          const std::string ui = at + "/users/" + std::to_string(i);
          if (!users[i].is_string() || users[i].get<std::string>().empty()) throw InputError(ui, json_value_text(users[i]), "a user name");
          const std::string user = users[i].get<std::string>();
          // Slurm gives a user a default account: one here, so a job without an account of its own has one answer.
          if (const auto seen = c.user_accounts.find(user); seen != c.user_accounts.end())
            throw InputError(ui, user, "a user of one account only (already in \"" + seen->second + "\")");
          c.user_accounts[user] = it.key();
        }
      }
      a.reject_unknown();
    }
  }
  if (r.has("job_failures")) c.job_failures = parse_job_failures(r.raw("job_failures"), path + "/job_failures", defaults);
  c.recovery = parse_recovery_settings(r.has("recovery") ? r.raw("recovery") : Json(), path + "/recovery", defaults);
  if (r.has("failure_events")) {
    const Json& list = r.raw("failure_events");
    if (!list.is_array()) throw InputError(path + "/failure_events", json_value_text(list), "a list of {node, at, kind}");
    for (std::size_t i = 0; i < list.size(); ++i)
      c.scripted_failures.push_back(parse_scripted(list[i], path + "/failure_events/" + std::to_string(i), c.total_nodes()));
  }
  c.checkpoint_interval_s = r.get_quantity("checkpoint_interval", Quantity::Time, 3600, "jobs that name no interval checkpoint hourly", kInterval);
  if (r.has("scheduler")) {
    JsonReader s(r.raw("scheduler"), path + "/scheduler", defaults);
    c.cycle.period_s = s.get_quantity("cycle", Quantity::Time, 0, "", {0, 86400});
    c.cycle.cost_s = s.get_quantity("cycle_cost", Quantity::Time, 0, "", {0, 86400});
    c.cycle.admissions_per_queue = s.get_int("admissions_per_queue_per_cycle", 0, "", 0, 1 << 20);
    c.las_promote_knob = s.get_number("las_promote_knob", 0, "", 0, 1e6);
    // Slurm's own bounds: bf_interval 1 s to 3 h, bf_max_job_test 1 to 1,000,000, bf_window 1 min to 30 days.
    c.backfill.interval_s = s.get_quantity("backfill_interval", Quantity::Time, c.backfill.interval_s, "", {1, 10800});
    c.backfill.depth = s.get_int("backfill_depth", c.backfill.depth, "", 1, 1'000'000);
    c.backfill.window_s = s.get_quantity("backfill_window", Quantity::Time, c.backfill.window_s, "", {60, 30 * 86400.0});
    if (s.has("priority")) {
      JsonReader m(s.raw("priority"), path + "/scheduler/priority", defaults);
      MultifactorSettings& p = c.priority;
      // Slurm's weights are 32-bit unsigned integers; its times are minutes to years.
      p.weight_age = m.get_number("weight_age", p.weight_age, "", 0, 4294967295.0);
      p.weight_fairshare = m.get_number("weight_fairshare", p.weight_fairshare, "", 0, 4294967295.0);
      p.weight_job_size = m.get_number("weight_job_size", p.weight_job_size, "", 0, 4294967295.0);
      p.weight_qos = m.get_number("weight_qos", p.weight_qos, "", 0, 4294967295.0);
      p.max_age_s = m.get_quantity("max_age", Quantity::Time, p.max_age_s, "", {60, 3650 * 86400.0});
      p.decay_half_life_s = m.get_quantity("decay_half_life", Quantity::Time, p.decay_half_life_s, "", {60, 3650 * 86400.0});
      p.favor_small = m.get_bool("favor_small", p.favor_small, "");
      m.reject_unknown();
    }
    if (s.has("las_thresholds")) {
      const Json& t = s.raw("las_thresholds");
      if (!t.is_array() || t.empty()) throw InputError(path + "/scheduler/las_thresholds", json_value_text(t), "a list of increasing GPU-second thresholds");
      c.las_thresholds_gpu_s.clear();
      for (std::size_t i = 0; i < t.size(); ++i) {
        const double v = quantity_from_json(t[i], Quantity::Count, path + "/scheduler/las_thresholds/" + std::to_string(i), {1, 1e12});
        if (!c.las_thresholds_gpu_s.empty() && v <= c.las_thresholds_gpu_s.back())
          throw InputError(path + "/scheduler/las_thresholds/" + std::to_string(i), json_value_text(t[i]), "a threshold above the previous one");
        c.las_thresholds_gpu_s.push_back(v);
      }
    }
    s.reject_unknown();
  }
  if (r.has("carbon_intensity")) {
    const Json& ci = r.raw("carbon_intensity");
    const std::string where = path + "/carbon_intensity";
    if (ci.is_number()) c.carbon_g_per_kwh = {quantity_from_json(ci, Quantity::Count, where, {0, 5000})};
    else if (ci.is_array() && ci.size() == 24)
      for (std::size_t h = 0; h < 24; ++h) c.carbon_g_per_kwh.push_back(quantity_from_json(ci[h], Quantity::Count, where + "/" + std::to_string(h), {0, 5000}));
    else
      throw InputError(where, json_value_text(ci), "g CO2 per kWh: one number, or 24 numbers by hour of day");
    c.carbon_start_hour = r.get_number("carbon_start_hour", 0, "", 0, 23);
  }
  if (r.has("queues")) {
    const Json& qs = r.raw("queues");
    if (!qs.is_array()) throw InputError(path + "/queues", json_value_text(qs), "a list of queues");
    for (std::size_t i = 0; i < qs.size(); ++i) {
      QueueSpec q = parse_queue(qs[i], path + "/queues/" + std::to_string(i));
      if (c.queue(q.name)) throw InputError(path + "/queues/" + std::to_string(i) + "/name", q.name, "a name not used by another queue");
      c.queues.push_back(q);
    }
  }
  r.reject_unknown();
  return c;
}

ClusterSpec cluster_from_trace_nodes(const std::vector<TraceNodePool>& nodes, ClusterSpec base) {
  base.pools.clear();
  for (const TraceNodePool& t : nodes) {
    NodePool p;
    p.gpu = t.gpu_model;
    p.name = t.gpu_model + "x" + std::to_string(t.gpus_per_node);
    // One model and size in several host shapes (P100 x2 with 8, 16 and 64 cores): the shape names the pool.
    const auto same_size = std::count_if(nodes.begin(), nodes.end(), [&](const TraceNodePool& o) { return o.gpu_model == t.gpu_model && o.gpus_per_node == t.gpus_per_node; });
    if (same_size > 1) p.name += "/" + std::to_string(t.cpu_milli / 1000) + "c" + std::to_string(t.memory_mib / 1024) + "g";
    p.gpus_per_node = t.gpus_per_node;
    p.cpu_milli = t.cpu_milli;
    p.memory_mib = t.memory_mib;
    p.nodes = t.nodes;
    base.pools.push_back(p);
  }
  return base;
}

Json to_json(const ClusterSpec& c) {
  Json pools = Json::array();
  for (const NodePool& p : c.pools)
    pools.push_back({{"name", p.name}, {"gpu", p.gpu}, {"gpus_per_node", p.gpus_per_node}, {"nodes", p.nodes}, {"spare_nodes", p.spare_nodes},
                     {"cpus_per_node", static_cast<double>(p.cpu_milli) / 1000}, {"memory_per_node_mib", p.memory_mib},
                     {"price_per_gpu_hour", p.price_per_gpu_hour}, {"gpu_power_w", p.gpu_power_w}, {"spot", p.spot},
                     {"reclaims_per_node_day", p.reclaims_per_node_day}, {"reclaimed_for_s", p.reclaimed_for_s}});
  Json queues = Json::array();
  for (const QueueSpec& q : c.queues)
    queues.push_back({{"name", q.name}, {"quota_gpus", q.quota_gpus}, {"borrowing_limit_gpus", q.borrowing_limit_gpus < 0 ? Json() : Json(q.borrowing_limit_gpus)},
                      {"cohort", q.cohort}, {"lending_limit_gpus", q.lending_limit_gpus < 0 ? Json() : Json(q.lending_limit_gpus)}, {"weight", q.weight},
                      {"capability_gpus", q.capability_gpus < 0 ? Json() : Json(q.capability_gpus)}, {"guarantee_gpus", q.guarantee_gpus}});
  return {{"pools", pools}, {"gpus", c.total_gpus()}, {"nodes", c.total_nodes()}, {"queues", queues},
          {"network", {{"nodes_per_leaf", c.nodes_per_leaf}, {"oversubscription", c.oversubscription}}},
          {"gpu_sharing", c.gpu_sharing}, {"failures", c.failures_on ? c.failures.name : "none"}, {"job_failures", to_json(c.job_failures)},
          {"user_limits", {{"max_running_jobs", c.user_limits.max_running_jobs}, {"max_gpus", c.user_limits.max_gpus}, {"users", [&] {
             Json users = Json::object();
             for (const auto& [name, l] : c.user_limit_overrides) users[name] = {{"max_running_jobs", l.max_running_jobs}, {"max_gpus", l.max_gpus}};
             return users;
           }()}}},
          {"accounts", [&] {
             Json accounts = Json::object();
             for (const auto& [name, l] : c.account_limits) accounts[name] = {{"max_running_jobs", l.max_running_jobs}, {"max_gpus", l.max_gpus}, {"users", Json::array()}};
             for (const auto& [user, account] : c.user_accounts) accounts[account]["users"].push_back(user);
             return accounts;
           }()},
          {"checkpoint_interval_s", c.checkpoint_interval_s},
          {"scheduler", {{"cycle_s", c.cycle.period_s}, {"cycle_cost_s", c.cycle.cost_s}, {"admissions_per_queue_per_cycle", c.cycle.admissions_per_queue},
                         {"las_thresholds_gpu_s", c.las_thresholds_gpu_s}, {"las_promote_knob", c.las_promote_knob},
                         {"backfill_interval_s", c.backfill.interval_s}, {"backfill_depth", c.backfill.depth}, {"backfill_window_s", c.backfill.window_s},
                         {"priority", {{"weight_age", c.priority.weight_age}, {"weight_fairshare", c.priority.weight_fairshare},
                                       {"weight_job_size", c.priority.weight_job_size}, {"weight_qos", c.priority.weight_qos},
                                       {"max_age_s", c.priority.max_age_s}, {"decay_half_life_s", c.priority.decay_half_life_s},
                                       {"favor_small", c.priority.favor_small}}}}}};
}

}  // namespace trainsim::sim::cluster
