#include "sim/reliability/job_setup.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"
#include "models/core/units.hpp"
#include "models/reliability/reliability.hpp"
#include "models/reliability/reliability_limits.hpp"

namespace trainsim::sim {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
namespace lim = reliability_limits;
}  // namespace

const char* to_string(IntervalChoice c) {
  switch (c) {
    case IntervalChoice::Given: return "given";
    case IntervalChoice::Steps: return "steps";
    case IntervalChoice::Young: return "young";
    case IntervalChoice::Daly: return "daly";
    case IntervalChoice::Best: return "best";
  }
  return "daly";
}

void parse_interval(const Json& value, const std::string& path, ReliabilitySettings* s) {
  if (value.is_string()) {
    const std::string v = value.get<std::string>();
    // "500 steps": as operators set it (Hugging Face save_steps, Megatron --save-interval), a time once the step is priced.
    if (const std::size_t at = v.find("step"); at != std::string::npos && (v.substr(at) == "steps" || v.substr(at) == "step")) {
      const std::string n = v.substr(0, v.find_last_not_of(' ', at - 1) + 1);
      const bool digits = !n.empty() && n.size() <= 9 && n.find_first_not_of("0123456789") == std::string::npos;
      if (!digits || std::stoll(n) < 1)
        throw InputError(path, json_value_text(value), "a number of optimizer steps from 1 to 999,999,999, such as \"500 steps\"");
      s->interval = IntervalChoice::Steps;
      s->interval_steps = std::stoll(n);
      return;
    }
    if (v == "young") { s->interval = IntervalChoice::Young; return; }
    if (v == "daly") { s->interval = IntervalChoice::Daly; return; }
    if (v == "best") { s->interval = IntervalChoice::Best; return; }
  }
  std::string why;
  double seconds = -1;
  if (value.is_number()) seconds = value.get<double>();
  else if (value.is_string()) {
    if (auto q = parse_quantity(value.get<std::string>(), Quantity::Time, &why)) seconds = *q;
  }
  if (!lim::kCheckpointInterval.contains(seconds)) throw InputError(path, json_value_text(value), lim::kCheckpointInterval.expected, why);
  s->interval = IntervalChoice::Given;
  s->interval_s = seconds;
}

ReliabilitySettings parse_reliability_settings(const Json& doc, int gpus_per_node) {
  ReliabilitySettings s;
  auto* d = &s.defaults;
  const Json none;
  const bool present = doc.is_object() && doc.contains("reliability") && !doc["reliability"].is_null();
  const Json& section = present ? doc["reliability"] : none;
  if (present && !section.is_object())
    throw InputError("/reliability", json_value_text(section), "an object {failures, checkpoint, recovery, spare_nodes, elastic, window}");
  const std::string base = "/reliability";
  auto field = [&](const char* key) -> const Json& { return present && section.contains(key) ? section[key] : none; };

  const Json& failures = field("failures");
  s.failures = parse_failure_model(failures, base + "/failures", gpus_per_node, d);
  if (failures.is_object() && failures.contains("failures_per_1000_node_days") && !failures["failures_per_1000_node_days"].is_null()) {
    s.rate_source = base + "/failures/failures_per_1000_node_days";
    s.rate_text = json_value_text(failures["failures_per_1000_node_days"]);
  } else if (!failures.is_null()) {
    s.rate_text = json_value_text(failures);
  }
  const Json& checkpoint = field("checkpoint");
  s.checkpoint = parse_checkpoint_settings(checkpoint, base + "/checkpoint", d);
  if (checkpoint.is_object() && checkpoint.contains("interval") && !checkpoint["interval"].is_null())
    parse_interval(checkpoint["interval"], base + "/checkpoint/interval", &s);
  else
    d->push_back({base + "/checkpoint/interval", "\"daly\"", "Daly's (2006) optimum for the checkpoint cost and the job's MTBF"});
  s.recovery = parse_recovery_settings(field("recovery"), base + "/recovery", d);
  if (!present) {
    d->push_back({base + "/elastic", "false", "every failure restarts the job at full size"});
    return s;
  }
  JsonReader r(section, base, d);
  r.mark_read({"failures", "checkpoint", "recovery", "window", "job_mtbf", "spare_nodes", "elastic", "elastic_min_fraction"});
  if (r.has("window")) {
    s.window_s = lim::read_quantity(r, "window", Quantity::Time, 0, "", lim::kWindow);
    s.window_text = json_value_text(section["window"]);
  }
  if (r.has("job_mtbf")) {
    s.job_mtbf_s = lim::read_quantity(r, "job_mtbf", Quantity::Time, 0, "", lim::kJobMtbf);
    s.rate_source = r.child_path("job_mtbf");
    s.rate_text = json_value_text(section["job_mtbf"]);
  }
  if (r.has("spare_nodes")) s.recovery.spare_nodes = lim::read_int(r, "spare_nodes", 0, "", lim::kSpareNodes);
  s.recovery.elastic = r.get_bool("elastic", false, "every failure restarts the job at full size");
  s.recovery.elastic_min_fraction =
      lim::read_number(r, "elastic_min_fraction", s.recovery.elastic_min_fraction,
                       s.recovery.elastic ? "the job waits for nodes rather than run on fewer than half its replicas" : "", lim::kElasticMinFraction);
  r.reject_unknown();
  return s;
}

double speed_at_replicas(const Scenario& s, const StepEstimate& full, int dp, const CalibrationProfile* calibration) {
  const ParallelLayout& p = s.parallel;
  const int mp = p.tp * p.pp * p.cp, gpn = std::max(1, std::min(s.hardware.gpus_per_node, s.hardware.num_gpus));
  TrainingSpec t = s.training;
  t.global_batch_size = p.micro_batch_size * dp * p.gradient_accumulation_steps;
  ParallelLayout q = p;
  q.dp = dp;
  // Hybrid sharding keeps its shard groups: the replicas are what grows or shrinks (none when they do not divide).
  const int shard = p.zero_shard_ranks();
  q.dp_replicate = (dp * p.cp) % shard == 0 && dp % ((dp * p.cp) / shard) == 0 ? (dp * p.cp) / shard : 1;
  HardwareSpec h = s.hardware;
  h.num_gpus = mp * dp;
  h.num_nodes = std::max(1, (h.num_gpus + gpn - 1) / gpn);
  const StepModel sm(s.model, t, h, calibration);
  const double v = sm.estimate(q).tokens_per_s / full.tokens_per_s;
  return std::isfinite(v) && v > 0 ? v : static_cast<double>(dp) / p.dp;
}

namespace {

// Speed relative to the full job with k nodes out: the step model at dp' = dp - k·(replicas per node),
// each remaining replica keeping its micro-batches (the global batch shrinks with dp, as TorchElastic
// does). Exact at k = 0, 1, 2, 4, ... and the last; linear in between.
std::vector<double> elastic_speeds(const Scenario& s, const StepEstimate& full, double min_fraction, const CalibrationProfile* calibration,
                                   int* replicas_per_node) {
  const ParallelLayout& p = s.parallel;
  const int mp = p.tp * p.pp * p.cp, gpn = std::max(1, std::min(s.hardware.gpus_per_node, s.hardware.num_gpus));
  const int rpn = mp >= gpn ? 1 : std::max(1, gpn / mp);
  *replicas_per_node = rpn;
  if (p.dp <= 1 || s.hardware.num_nodes <= 1 || !(full.tokens_per_s > 0)) return {1.0};
  const int min_dp = std::max(1, static_cast<int>(std::ceil(p.dp * min_fraction)));
  const int kmax = std::min((p.dp - min_dp) / rpn, s.hardware.num_nodes - 1);
  if (kmax <= 0) return {1.0};
  auto speed_at = [&](int k) { return std::min(1.0, speed_at_replicas(s, full, p.dp - k * rpn, calibration)); };
  std::vector<int> at{0};
  for (int k = 1; k < kmax; k *= 2) at.push_back(k);
  at.push_back(kmax);
  std::vector<double> v(at.size());
  v[0] = 1.0;
  for (std::size_t i = 1; i < at.size(); ++i) v[i] = speed_at(at[i]);
  std::vector<double> table(static_cast<std::size_t>(kmax) + 1);
  for (std::size_t i = 0; i + 1 < at.size(); ++i)
    for (int k = at[i]; k <= at[i + 1]; ++k) {
      const double f = at[i + 1] == at[i] ? 0.0 : double(k - at[i]) / (at[i + 1] - at[i]);
      table[static_cast<std::size_t>(k)] = v[i] + f * (v[i + 1] - v[i]);
    }
  return table;
}

std::string years(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g years", s / lim::kYear);
  return buf;
}

// Daly's complete model at its best interval (never shorter than a step): how much of the wall clock a job
// with this MTBF, recovery and checkpoint cost trains, with exponential failures.
double best_model_ettr(const ReliabilityJob& job, double mtbf_s) {
  const double delta = job.sim.effective_blocking_s(), floor = std::max(job.step.time_s, 1.0);
  const double tau = std::max(optimal_interval_s(delta, mtbf_s), floor);
  return expected_ettr(delta, tau, job.recovery_mean_s, mtbf_s);
}

// What only the whole job can say (reliability_limits.hpp); then the cap on a run's failures.
void check_whole_job(ReliabilityJob* job_ptr) {
  ReliabilityJob& job = *job_ptr;
  const ReliabilitySettings& s = job.settings;
  JobSimConfig& c = job.sim;
  if (job.failures.lemons.count > job.nodes)
    throw InputError(s.lemon_source, std::to_string(job.failures.lemons.count),
                     "at most the job's " + std::to_string(job.nodes) + (job.nodes == 1 ? " node" : " nodes"), "a lemon is one of the job's nodes");
  if (std::isfinite(job.work_s) && job.work_s > lim::kMaxWork)
    throw InputError("/training/train_tokens", format_count(job.scenario.training.train_tokens),
                     "a training that takes at most 100 years failure-free at the modelled speed",
                     "it would take " + years(job.work_s) + "; beyond that the horizon is not a training job's");
  const std::string rate_value = s.rate_text.empty() ? "a job MTBF of " + format_seconds(job.mtbf_s) : s.rate_text;
  if (std::isfinite(job.mtbf_s)) {
    // Too many failures to train between: a recovery of R completes before the next failure with probability
    // e^-(R/M), and the complete model's ETTR collapses. Said without simulating (it would loop per failure).
    const double best = best_model_ettr(job, job.mtbf_s);
    if (!(best >= lim::kMinMeaningfulEttr)) {
      double lo = job.mtbf_s, hi = lim::kJobMtbf.max;  // the shortest MTBF at which the job trains 1% of the time
      for (int i = 0; i < 200 && hi / lo > 1.001; ++i) {
        const double mid = std::sqrt(lo * hi);
        (best_model_ettr(job, mid) >= lim::kMinMeaningfulEttr ? hi : lo) = mid;
      }
      char ettr[32];
      std::snprintf(ettr, sizeof ettr, "%.2g%%", 100 * std::max(0.0, best));
      throw InputError(s.rate_source, rate_value,
                       "failures far enough apart for the job to train: a job MTBF of at least " + format_seconds(hi) +
                           " with this recovery (ETTR >= 1% by Daly's complete model)",
                       "a failure every " + format_seconds(job.mtbf_s) + " against a recovery of " + format_seconds(job.recovery_mean_s) +
                           ": the job all but never makes progress (ETTR ~ " + ettr + " at the best checkpoint interval); nothing to simulate");
    }
  }
  // The failures one run should see: over the window, or over the time the work takes at the complete
  // model's ETTR (the run's horizon caps it).
  double horizon = c.window_s;
  if (std::isfinite(c.work_s)) {
    const double ettr = expected_ettr(c.effective_blocking_s(), c.interval_s, job.recovery_mean_s, job.mtbf_s);
    if (ettr > 0 && std::isfinite(ettr)) horizon = std::min(horizon, c.work_s / std::min(1.0, ettr));
  }
  const double expected = job.failures.expected_failures(job.nodes, job.gpus_per_node, horizon);
  if (expected > lim::kMaxExpectedFailuresPerRun) {
    // Name what the user most likely set: a flag before a JSON path, the window before the failure rate.
    const auto is_flag = [](const std::string& where) { return where.rfind("--", 0) == 0; };
    const bool window_given = !s.window_text.empty(), rate_given = s.rate_source != "/reliability/failures";
    const bool by_window = window_given && (is_flag(s.window_source) || !(rate_given && is_flag(s.rate_source)));
    const std::string hint = format_count(expected) + " failures expected in a run of " + format_seconds(horizon) +
                             " (one every " + format_seconds(horizon / expected) + "); lower the failure rate or shorten the window";
    if (by_window)
      throw InputError(s.window_source, s.window_text,
                       "a window of at most " + format_seconds(horizon * lim::kMaxExpectedFailuresPerRun / expected) +
                           " at this failure rate (at most 100,000 expected failures in a run)",
                       hint);
    throw InputError(s.rate_source, rate_value,
                     "a job MTBF of at least " + format_seconds(horizon / lim::kMaxExpectedFailuresPerRun) + " over this " +
                         format_seconds(horizon) + " run (at most 100,000 expected failures in a run)",
                     hint);
  }
  c.max_events = static_cast<std::uint64_t>(std::ceil(lim::kEventCapFactor * expected + lim::kEventCapMargin));
}

}  // namespace

Json retention_json(const CheckpointSettings& cs, double checkpoint_bytes) {
  if (cs.keep <= 0 && cs.quota_bytes <= 0) return Json();
  Json r = Json::object();
  if (cs.keep > 0) r["keep"] = cs.keep, r["kept_bytes"] = cs.keep * checkpoint_bytes;
  if (cs.quota_bytes > 0) {
    r["quota_bytes"] = cs.quota_bytes;
    r["checkpoints_in_quota"] = checkpoint_bytes > 0 ? std::floor(cs.quota_bytes / checkpoint_bytes) : 0.0;
    if (cs.keep > 0) r["fits_quota"] = cs.keep * checkpoint_bytes <= cs.quota_bytes;
  }
  return r;
}

Json staging_json(const CheckpointSettings& cs, const CheckpointContext& c, double host_memory_bytes) {
  const CheckpointMethod* m = find_checkpoint_method(cs.method);
  if (!m || m->host_copies() == 0) return Json();
  Json j = {{"host_copies", m->host_copies()},
            {"host_bytes_per_node", staging_host_bytes_per_node(cs, c)},
            {"offloaded_bytes_per_node", c.size.offloaded_host_per_gpu * c.gpus_per_node}};
  if (host_memory_bytes > 0) {
    j["host_memory_bytes"] = host_memory_bytes;
    j["fits_host_memory"] = staging_host_bytes_per_node(cs, c) <= host_memory_bytes;
  }
  return j;
}

double chosen_interval_s(const ReliabilityJob& job, double blocking_s, double persist_s, double mtbf_s) {
  const ReliabilitySettings& s = job.settings;
  if (s.interval == IntervalChoice::Given) return s.interval_s;
  if (s.interval == IntervalChoice::Steps) return static_cast<double>(s.interval_steps) * job.step.time_s;
  double tau = s.interval == IntervalChoice::Young ? young_interval_s(blocking_s, mtbf_s) : daly_interval_s(blocking_s, mtbf_s);
  // Never shorter than a step, nor than the background write of the previous checkpoint (a new snapshot
  // would wait for it: a longer interval computes more for the same pause).
  tau = std::max({tau, persist_s, job.step.time_s, 1.0});
  if (std::isfinite(tau)) return tau;
  // No failures: no checkpoint is needed before the run ends (the work done, or the window over).
  const double horizon = std::min(job.work_s, job.window_s);
  return std::isfinite(horizon) && horizon > 0 ? horizon : lim::kCheckpointInterval.max;
}

ReliabilityJob build_reliability_job(const Scenario& scenario, const ReliabilitySettings& settings, const CalibrationProfile* calibration) {
  ReliabilityJob job;
  job.scenario = scenario;
  job.settings = settings;
  const Scenario& s = job.scenario;
  const HardwareSpec& h = s.hardware;
  job.gpus = h.num_gpus;
  job.nodes = std::max(1, h.num_nodes);
  job.gpus_per_node = std::max(1, std::min(h.gpus_per_node, h.num_gpus));
  job.price_per_gpu_hour = h.price_per_gpu_hour;

  // Speed: the step model on the scenario's layout.
  const StepModel sm(s.model, s.training, s.hardware, calibration);
  job.step = sm.estimate(s.parallel);
  const TrainingCost cost = sm.training_cost(job.step, s.parallel);
  job.work_s = cost.time_to_train_s > 0 ? cost.time_to_train_s : kInf;
  job.window_s = settings.window_s > 0 ? settings.window_s : kInf;
  job.fixed_window = !std::isfinite(job.work_s);
  if (job.fixed_window && !std::isfinite(job.window_s))
    throw InputError("/reliability/window", "nothing", "a duration such as \"54d\"",
                     "the scenario has no training.train_tokens, so give the window to simulate: --days D or reliability.window");

  // Failures, scaled as asked.
  job.failures = settings.failures;
  if (settings.failures_per_1000_node_days > 0) {
    const double now = job.failures.failures_per_1000_node_days(job.gpus_per_node);
    if (!(now > 0)) throw InputError("failures", "a model with no failure rates", "at least one component to scale");
    job.failures.scale_rates(settings.failures_per_1000_node_days / now);
  }
  if (settings.job_mtbf_s > 0) {
    const double now = job.failures.job_mtbf_s(job.nodes, job.gpus_per_node);
    if (!std::isfinite(now)) throw InputError("failures", "a model with no failure rates", "at least one component to scale");
    job.failures.scale_rates(now / settings.job_mtbf_s);
  }
  if (settings.failures_per_1000_node_days > 0 || settings.job_mtbf_s > 0) job.failures.name += " (scaled)";
  job.mtbf_s = job.failures.job_mtbf_s(job.nodes, job.gpus_per_node);
  for (std::size_t i = 0; i < job.failures.components.size(); ++i)
    if (job.failures.components[i].needs_replacement) job.replacement_share += job.failures.share(i, job.gpus_per_node);

  // Checkpoints.
  job.checkpoint_size = checkpoint_size(s.model, s.training, s.parallel, h, settings.checkpoint.contents);
  job.checkpoint_context = checkpoint_context(job.checkpoint_size, settings.checkpoint, h);
  job.checkpoint = checkpoint_costs(settings.checkpoint, job.checkpoint_context);

  // Recovery.
  const RecoverySettings& rs = settings.recovery;
  job.recovery_hardware = recovery_times(rs, job.checkpoint.restore_s, true);
  job.recovery_software = recovery_times(rs, job.checkpoint.restore_s, false);
  job.recovery_mean_s = mean_recovery_s(rs, job.checkpoint.restore_s, job.replacement_share);
  job.spare_nodes = rs.spare_nodes >= 0 ? rs.spare_nodes : default_spare_nodes(job.nodes);
  if (rs.spare_nodes < 0)
    job.settings.defaults.push_back({"/reliability/spare_nodes", std::to_string(job.spare_nodes),
                                     "one spare per 100 nodes, at least one (BLOOM kept 4 for 48 nodes)"});
  job.elastic_speed = elastic_speeds(s, job.step, rs.elastic_min_fraction, calibration, &job.replicas_per_node_out);

  // Closed forms at the blocking cost.
  const double delta = job.checkpoint.blocking_s;
  job.young_interval_s = young_interval_s(delta, job.mtbf_s);
  job.daly_interval_s = daly_interval_s(delta, job.mtbf_s);
  job.optimal_interval_s = optimal_interval_s(delta, job.mtbf_s);

  // The Monte-Carlo configuration.
  JobSimConfig& c = job.sim;
  c.nodes = job.nodes;
  c.gpus_per_node = job.gpus_per_node;
  c.work_s = job.work_s;
  // With no window the run ends when the work is done; 100x the ideal time stops a job that never gets there.
  c.window_s = std::isfinite(job.window_s) ? job.window_s : 100 * job.work_s;
  c.blocking_s = job.checkpoint.blocking_s;
  c.persist_s = job.checkpoint.persist_s;
  c.interval_s = chosen_interval_s(job, c.blocking_s, c.persist_s, job.mtbf_s);
  c.detection_s = rs.detection_s;
  c.drain_s = rs.drain_s;
  if (settings.checkpoint.emergency) {
    // It needs a full copy of the training state beside the failed GPU's: data-parallel replicas that shard nothing, or
    // HSDP's replicas of each shard.
    const ParallelLayout& p = s.parallel;
    const bool replicated = p.dp_replicate > 1 || (p.dp * p.cp > 1 && s.training.zero_stage == 0 && !s.training.distributed_optimizer);
    if (!replicated)
      throw InputError("/reliability/checkpoint/emergency", "true",
                       "a layout with a second copy of every state shard (dp > 1 without ZeRO or a distributed optimizer, or dp_replicate > 1)",
                       "this layout keeps one copy of each optimizer shard: a failed GPU's is lost with it");
    // A crash loses the step in progress, half a step on average; the survivors' save (the whole state, as a periodic
    // checkpoint writes it) is part of the drain before the restart.
    c.emergency_loss_s = job.step.time_s / 2;
    job.emergency_save_s = job.checkpoint_context.overhead_s + job.checkpoint_context.write_s();
    c.drain_s += job.emergency_save_s;
  }
  c.reschedule_s = rs.reschedule_s;
  c.restart_s = rs.restart_s;
  c.reload_s = job.checkpoint.restore_s;
  c.warmup_s = rs.warmup_s;
  c.fixed_recovery_s = rs.fixed_total_s;
  c.spare_nodes = job.spare_nodes;
  c.repair = std::shared_ptr<const TimeDistribution>(
      make_distribution(rs.repair_distribution, rs.repair_mean_s, rs.repair_shape, "/reliability/recovery/repair/distribution"));
  c.elastic = rs.elastic;
  c.elastic_speed = job.elastic_speed;
  check_whole_job(&job);
  return job;
}

JobSimConfig config_with_method(const ReliabilityJob& job, const std::string& method, CheckpointCosts* costs) {
  CheckpointSettings cs = job.settings.checkpoint;
  const bool same = method == cs.method;
  cs.method = method;
  if (!same) cs.blocking_override_s = -1;  // a given cost describes the configured method only
  const CheckpointCosts k = checkpoint_costs(cs, job.checkpoint_context);
  if (costs) *costs = k;
  JobSimConfig c = job.sim;
  c.blocking_s = k.blocking_s;
  c.persist_s = k.persist_s;
  c.reload_s = k.restore_s;
  c.interval_s = chosen_interval_s(job, k.blocking_s, k.persist_s, job.mtbf_s);
  return c;
}

Json to_json(const ReliabilitySettings& s, const ReliabilityJob& job) {
  const CheckpointSettings& cs = s.checkpoint;
  const RecoverySettings& rs = s.recovery;
  Json recovery = {{"spare_nodes", job.spare_nodes},
                   {"elastic", rs.elastic},
                   {"elastic_min_fraction", rs.elastic_min_fraction},
                   {"repair", {{"distribution", rs.repair_distribution}, {"mean_s", rs.repair_mean_s}, {"shape", rs.repair_shape}}}};
  if (rs.fixed_total_s >= 0) {
    recovery["total_s"] = rs.fixed_total_s;
  } else {
    recovery["detection_s"] = rs.detection_s;
    recovery["drain_s"] = rs.drain_s;
    recovery["reschedule_s"] = rs.reschedule_s;
    recovery["restart_s"] = rs.restart_s;
    recovery["reload_s"] = job.checkpoint.restore_s;
    recovery["warmup_s"] = rs.warmup_s;
  }
  Json j = {{"failures", to_json(job.failures, job.gpus_per_node)},
            {"checkpoint",
             {{"method", cs.method},
              {"storage", cs.storage.tier},
              {"interval", to_string(s.interval)},
              {"interval_s", job.sim.interval_s},
              {"blocking_s", job.checkpoint.blocking_s},
              {"persist_s", job.checkpoint.persist_s},
              {"restore_s", job.checkpoint.restore_s},
              {"write_s", job.checkpoint.write_s},
              {"contents", to_string(cs.contents)},
              {"blocking_given", cs.blocking_override_s >= 0},
              {"state_bytes", job.checkpoint_size.state_bytes},
              {"restore_bytes", job.checkpoint_size.restore_bytes},
              {"per_gpu_bytes", job.checkpoint_size.per_gpu_bytes},
              {"write_bandwidth", job.checkpoint_context.write_bandwidth},
              {"concurrent_jobs", cs.storage.concurrent_jobs},
              {"overhead_s", cs.overhead_s}}},
            {"recovery", recovery}};
  if (const Json kept = retention_json(cs, job.checkpoint_size.state_bytes); !kept.is_null()) j["checkpoint"]["retention"] = kept;
  if (cs.emergency)
    j["checkpoint"]["emergency"] = {{"lost_per_crash_s", job.sim.emergency_loss_s}, {"save_s", job.emergency_save_s}};
  if (!cs.upload_to.empty()) j["checkpoint"]["upload"] = {{"tier", cs.upload_to}, {"upload_s", job.checkpoint.upload_s},
                                                          {"bandwidth", job.checkpoint_context.upload_bandwidth}};
  if (const Json st = staging_json(cs, job.checkpoint_context, job.scenario.hardware.host_memory_bytes); !st.is_null())
    j["checkpoint"]["staging"] = st;
  if (std::isfinite(job.window_s)) j["window_s"] = job.window_s;
  return j;
}

}  // namespace trainsim::sim
