#include "cluster_sim.hpp"

#include <algorithm>
#include <unordered_map>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <stdexcept>
#include <simgrid/s4u.hpp>

#include "cluster_state.hpp"
#include "models/core/errors.hpp"
#include "models/core/statistics.hpp"
#include "sim/cluster/policies/backfill_plan.hpp"
#include "sim/iteration/simgrid_engine.hpp"
#include "sim/random.hpp"
#include "sim/reliability/failure_injector.hpp"

namespace trainsim::sim::cluster {

namespace sg4 = simgrid::s4u;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSlowdownFloorS = 10;  // bounded slowdown's threshold (Feitelson et al., JSSPP 1997)

// The host every actor of the cluster simulation lives on: they only sleep and talk, so one host serves all.
// The actors are few (arrivals, the scheduler, its alarms); jobs and repairs are timed events in a heap.
sg4::Host* cluster_host() {
  static sg4::Host* host = [] {
    sg4::Engine& e = simgrid_engine();
    e.set_config("contexts/stack-size:64");
    sg4::NetZone* zone = sg4::create_full_zone("cluster-simulator");
    sg4::Host* h = zone->create_host("cluster-scheduler", 1e9);
    zone->seal();
    return h;
  }();
  return host;
}

struct Message {
  enum Kind { Arrival, End, Timeout, NodeBack, Repaired, SpotBack, Alarm, JobError, Retry } kind;
  int a = 0;    // job (Arrival: first job of the batch; End) or node
  int b = 0;    // End: the run's generation; Arrival: one past the batch's last job
  double t = 0; // Alarm: the time it was set for (the clock, offset by earlier runs, may read a hair earlier)
};
// Two times this close are the same instant (the clock carries earlier runs' time: about 4e-9 s of rounding
// at a year's offset).
constexpr double kSameInstantS = 1e-6;


struct JobState {
  JobStatus status;
  Placement placement;
  int generation = 0;
  bool running = false, waiting = false, done = false;
  double kept_work_s = 0;        // checkpointed work (survives a failure)
  double run_start_s = 0;        // this run's start
  double limit_start_s = 0;      // when its walltime started counting (its start from the queue; a resize keeps it)
  // A job without gang scheduling (gang = false) is placed pod by pod (one GPU each) and holds the GPUs it got
  // while it waits for the rest: it runs only once all are placed (a distributed job needs every worker).
  Placement partial;
  int partial_gpus = 0;
  double run_overhead_s = 0;     // startup time of this run before work (restart, recovery, the cycle's cost)
  double next_overhead_s = 0;    // startup time the next run pays
  double planned_end_s = 0;      // when this run's End, Timeout or JobError is due
  double expected_end_s = 0;     // when it would end without a job error (what the scheduler can know)
  double counted_gpus = 0;       // GPUs counted against its user's limit while it runs
  double attempts_gpu_s = 0;     // GPU-seconds of all its runs (a job that fails for good wasted them)
  double slowdown = 1;           // this run's placement: work takes this much longer (cross_leaf_slowdown over leaves)
  double held = 0;               // GPUs this run holds (an elastic job's may differ from its request)
  double speed = 1;              // this run's throughput relative to the request (elastic jobs)
  int resizes = 0;
  std::uint64_t unplaced_epoch = 0;  // the state's release epoch when it last found no placement (0: never)
};

class Simulation final : public SchedulingPass {
 public:
  Simulation(const ClusterSpec& spec, const std::vector<ClusterJob>& jobs, const ClusterSimOptions& opt)
      : spec_(spec), jobs_(jobs), opt_(opt), state_(spec), scratch_(spec), jobs_state_(jobs.size()) {
    choice_ = parse_policy_choice(opt.policy, "--policy");
    limits_on_ = spec.has_user_limits();
    placement_from_string(choice_.placement, &placement_);
    // FGD measures fragmentation against the run's own workload (the paper's target workload: its task classes).
    if (placement_ == PlacementKind::Fgd) state_.set_target_workload(std::make_shared<const FragmentationMeasure>(target_workload(jobs, spec.gpu_sharing)));
    state_.seed_random(run_seed(opt.seed, 0, 19));
    policy_ = find_policy(choice_.ordering)->make();
    result_.name = opt.policy;
    result_.records.resize(jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      JobRecord& r = result_.records[i];
      r.index = static_cast<int>(i);
      r.submit_s = jobs[i].submit_s;
      jobs_state_[i].status.remaining_work_s = jobs[i].duration_s;
      jobs_state_[i].status.queued_since_s = jobs[i].submit_s;
    }
    // The cluster comes into service with the trace's first arrival (a trace in Unix time would otherwise age
    // its nodes through decades before the first job, and meet it with every failure of them at once).
    const double start = jobs.empty() ? 0.0 : jobs.front().submit_s;
    if (spec.failures_on) {
      // Idle spares do not fail (as in the single-job Monte-Carlo): they join the injector when swapped in.
      for (std::size_t p = 0; p < spec.pools.size(); ++p) {
        injectors_.push_back(std::make_unique<FailureInjector>(spec.failures, spec.pools[p].nodes + spec.pools[p].spare_nodes, spec.pools[p].gpus_per_node));
        injectors_.back()->reset(run_seed(opt.seed, p, 7), start);
        for (int n = spec.pools[p].nodes; n < spec.pools[p].nodes + spec.pools[p].spare_nodes; ++n) injectors_.back()->remove_node(n, start);
      }
    }
    for (std::size_t p = 0; p < spec.pools.size(); ++p) {
      const NodePool& pool = spec.pools[p];
      if (!pool.spot || pool.reclaims_per_node_day <= 0) {
        reclaimers_.push_back(nullptr);
        continue;
      }
      // Reclaims as a failure stream of their own (a Poisson process over the nodes in service).
      FailureModel m;
      m.name = "spot";
      m.components.push_back({"spot_reclaim", FailureScope::Node, pool.reclaims_per_node_day, "exponential", 1.0, true, "spot capacity reclaimed"});
      reclaimers_.push_back(std::make_unique<FailureInjector>(m, pool.nodes + pool.spare_nodes, pool.gpus_per_node));
      reclaimers_.back()->reset(run_seed(opt.seed, p, 13), start);
      for (int n = pool.nodes; n < pool.nodes + pool.spare_nodes; ++n) reclaimers_.back()->remove_node(n, start);
    }
    repair_ = make_distribution(spec.recovery.repair_distribution, spec.recovery.repair_mean_s, spec.recovery.repair_shape, "/cluster/recovery/repair");
    rng_.reseed(run_seed(opt.seed, 0, 11));
    job_error_rng_.reseed(run_seed(opt.seed, 0, 17));
    scripted_ = spec.scripted_failures;
    std::stable_sort(scripted_.begin(), scripted_.end(), [](const ScriptedFailure& a, const ScriptedFailure& b) { return a.at_s < b.at_s; });
    int first_node = 0;
    for (const NodePool& p : spec.pools) {
      pool_first_node_.push_back(first_node);
      first_node += p.nodes + p.spare_nodes;
      active_.push_back(p.nodes);
      full_capacity_milli_ += static_cast<std::int64_t>(p.nodes) * p.gpus_per_node * 1000;
    }
    if (!jobs.empty()) {
      // About 500 samples over the submit span plus a mean job's duration (the run's likely length).
      double mean_duration = 0;
      for (const ClusterJob& j : jobs) mean_duration += j.duration_s / static_cast<double>(jobs.size());
      // A horizon bounds the run (the --fill experiment's jobs never end): sample up to it.
      const double span = opt.horizon_s > 0 ? std::max(1.0, opt.horizon_s - jobs.front().submit_s)
                                            : jobs.back().submit_s - jobs.front().submit_s + mean_duration;
      sample_dt_ = opt.sample_interval_s > 0 ? opt.sample_interval_s : std::max(1.0, span / 500);
      sample_cap_ = opt.sample_interval_s > 0 ? kMaxTimeSamples : 1000;
      sample_start_ = next_sample_ = jobs.front().submit_s;
      if (opt.span_s > 0) span_end_s_ = jobs.front().submit_s + opt.span_s;
      result_.sample_interval_s = sample_dt_;
      last_t_ = jobs.front().submit_s;
    }
  }

  PolicyResult run() {
    sg4::Host* host = cluster_host();
    offset_ = sg4::Engine::get_clock();
    mailbox_ = sg4::Mailbox::by_name("cluster-run-" + std::to_string(++runs_));
    // Jobs that no pool can ever hold, or that the policy would never start, are set aside (reported as
    // rejected, with the reason), not left to wait forever.
    for (std::size_t i = 0; i < jobs_.size(); ++i) {
      std::string why = never_fits(jobs_[i]);
      if (why.empty()) why = policy_->never_starts(jobs_[i], spec_);
      if (!why.empty()) reject(static_cast<int>(i), why);
    }
    alarm_mutex_ = sg4::Mutex::create();
    alarm_cv_ = sg4::ConditionVariable::create();
    sg4::Actor::create("alarm clock", host, [this] { alarm_clock(); });
    sg4::Actor::create("arrivals", host, [this] { arrivals(); });
    sg4::Actor::create("scheduler", host, [this] { scheduler(); });
    sg4::Engine::get_instance()->run();
    finish();
    return std::move(result_);
  }

  // ---- SchedulingPass ----
  double now() const override { return now_; }
  // With per-user limits, the jobs their users' limits let start: the others are not eligible (Slurm skips them).
  const std::vector<int>& waiting() const override { return limits_on_ ? eligible_ : waiting_; }
  const std::vector<int>& running() const override { return running_; }
  const ClusterJob& job(int j) const override { return jobs_[static_cast<std::size_t>(j)]; }
  const JobStatus& status(int j) const override { return jobs_state_[static_cast<std::size_t>(j)].status; }
  bool is_waiting(int j) const override {
    return jobs_state_[static_cast<std::size_t>(j)].waiting && (!limits_on_ || within_limits(j));
  }
  std::uint64_t queue_entries() const override { return queue_entries_; }
  bool fits(int j) const override {
    // A job that found no placement since anything was last freed cannot start (placement only takes GPUs).
    if (jobs_state_[static_cast<std::size_t>(j)].unplaced_epoch == state_.release_epoch()) return false;
    return state_.fits(job(j)) || (job(j).elastic() && state_.fits(sized(job(j), job(j).elastic_min)));
  }
  bool fits_without(int j, const std::vector<int>& victims) const override {
    ClusterState trial = state_;
    for (int v : victims) trial.release(jobs_state_[static_cast<std::size_t>(v)].placement);
    return trial.fits(job(j)) && !trial.place(job(j), placement_).empty();
  }
  bool start(int j) override {
    if (!startable(j)) return false;
    const ClusterJob& c = job(j);
    if (!c.gang && !c.elastic() && c.gpus > 1 && (jobs_state_[static_cast<std::size_t>(j)].partial_gpus > 0 || !state_.fits(c))) return add_pods(j);
    JobState& s = jobs_state_[static_cast<std::size_t>(j)];
    if (s.unplaced_epoch == state_.release_epoch()) return false;
    Placement p = choose_placement(state_, c);
    if (p.empty()) s.unplaced_epoch = state_.release_epoch();
    return begin(j, std::move(p));
  }
  void preempt(int j) override { interrupt(j, Stop::Preempted, false); }
  double reserve(int j, double window_s) override;
  bool start_beside_reservations(int j) override;
  std::vector<double> release_instants() const;
  ClusterState state_at(double t, double runtime) const;
  BackfillPlan& plan();  // this pass's, built at its first use
  void wake_at(double t) override { wake_s_ = std::min(wake_s_, t); }
  double free_gpus() const override { return static_cast<double>(state_.capacity_milli() - state_.allocated_milli()) / 1000; }
  double total_gpus() const override { return static_cast<double>(state_.capacity_milli()) / 1000; }
  double expected_runtime(int j) const override {
    const JobState& s = jobs_state_[static_cast<std::size_t>(j)];
    const ClusterJob& c = job(j);
    if (s.running) {
      return c.walltime_s > 0 ? std::max(0.0, c.walltime_s - (now_ - s.limit_start_s)) : std::max(0.0, s.expected_end_s - now_);
    }
    return c.walltime_s > 0 ? c.walltime_s : s.next_overhead_s + s.status.remaining_work_s;
  }
  double gpus(int j) const override {
    const JobState& s = jobs_state_[static_cast<std::size_t>(j)];
    return s.running ? s.held : gpus_held(job(j), spec_.gpu_sharing);
  }
  const ClusterSpec& cluster() const override { return spec_; }
  double history_estimate(int j) const override {
    const auto it = user_history_.find(job(j).user);
    if (it != user_history_.end() && it->second.second > 0) return it->second.first / it->second.second;
    return all_history_.second > 0 ? all_history_.first / all_history_.second : 0.0;
  }

 private:
  // Why no pool can ever hold the job ("" when one can): no pool of a GPU type it accepts, or none large enough
  // (an elastic job needs only its minimum).
  std::string never_fits(const ClusterJob& j) const {
    bool typed = false;
    const int need = j.elastic() ? j.elastic_min : j.gpus;
    const UserLimits& l = spec_.limits_of(j.user);
    if (l.max_gpus > 0 && gpus_held(j, spec_.gpu_sharing) > l.max_gpus + 1e-9 && need > l.max_gpus + 1e-9)
      return "more GPUs than its user's limit (max_gpus)";
    if (const UserLimits* a = spec_.account_limits_of(j); a && a->max_gpus > 0 && gpus_held(j, spec_.gpu_sharing) > a->max_gpus + 1e-9 && need > a->max_gpus + 1e-9)
      return "more GPUs than its account's limit (max_gpus)";
    bool large = false;
    for (std::size_t p = 0; p < spec_.pools.size(); ++p) {
      if (!state_.pool_allowed(j, static_cast<int>(p))) continue;
      typed = true;
      if (need > spec_.pools[p].total_gpus()) continue;
      large = true;
      if (state_.host_fits_empty_node(j, need, static_cast<int>(p))) return {};
    }
    if (large) return "more CPU or memory than a node of any pool it may use has";
    return typed ? "larger than any pool it may use" : "no pool has a GPU type it accepts";
  }

  void send(Message m) { mailbox_->put_init(new Message(m), 0)->detach(); }

  void reject(int j, const std::string& why) {
    JobState& s = jobs_state_[static_cast<std::size_t>(j)];
    s.done = true;
    s.waiting = false;
    ++result_.rejected;
    ++ended_;
    auto& reasons = result_.rejected_reasons;
    auto it = std::find_if(reasons.begin(), reasons.end(), [&](const auto& r) { return r.first == why; });
    if (it == reasons.end()) reasons.push_back({why, 1});
    else ++it->second;
  }

  // Nothing runs, every job has arrived, every node is in service, and the policy started none of those
  // waiting: they would wait for ever (the run would go on only for failures to happen on idle nodes).
  // Jobs placed pod by pod can also deadlock: each holds part of its GPUs and waits for GPUs the others hold.
  void reject_stuck() {
    if (!running_.empty() || waiting_.empty() || arrived_ < jobs_.size() || state_.capacity_milli() < full_capacity_milli_) return;
    const bool deadlock = holds_partial();
    for (int j : waiting_) {
      JobState& s = jobs_state_[static_cast<std::size_t>(j)];
      if (s.partial_gpus > 0) state_.release(s.partial);
      s.partial = {};
      s.partial_gpus = 0;
      reject(j, deadlock ? "deadlocked without gang scheduling (partly placed jobs hold the GPUs each other needs)"
                         : "never started on the idle cluster (the policy admits it nowhere)");
    }
    waiting_.clear();
  }

  static ClusterJob sized(const ClusterJob& c, int g) {
    ClusterJob out = c;
    out.gpus = g;
    return out;
  }

  int leaves_of(const Placement& p) const {
    std::vector<int> leaves;
    for (const Placement::Part& part : p.parts) leaves.push_back(state_.leaf_of(part.node));
    std::sort(leaves.begin(), leaves.end());
    return static_cast<int>(std::unique(leaves.begin(), leaves.end()) - leaves.begin());
  }

  void arrivals() {
    std::size_t i = 0;
    while (i < jobs_.size()) {
      std::size_t end = i + 1;
      while (end < jobs_.size() && jobs_[end].submit_s == jobs_[i].submit_s) ++end;
      sg4::this_actor::sleep_until(offset_ + jobs_[i].submit_s);
      send({Message::Arrival, static_cast<int>(i), static_cast<int>(end)});
      i = end;
    }
  }

  void scheduler() {
    arm_alarm();  // failures and repairs before the first arrival happen when they happen, not all at its instant
    while (ended_ < static_cast<int>(jobs_.size())) {
      std::unique_ptr<Message> m(mailbox_->get<Message>());
      advance(sg4::Engine::get_clock() - offset_);
      if (opt_.horizon_s > 0 && now_ + kSameInstantS >= opt_.horizon_s) {
        advance(opt_.horizon_s);
        break;
      }
      bool changed = handle(*m);
      if (changed && spec_.cycle.period_s <= 0) pass();
      arm_alarm();
    }
    sg4::Actor::kill_all();  // the arrivals and alarms still sleeping past the horizon
  }

  // Integrates allocated and in-service GPU-time up to `t` and takes the samples due before it.
  void advance(double t) {
    if (t < last_t_) t = last_t_;
    while (next_sample_ <= t && !jobs_.empty()) {
      sample(next_sample_);
      next_sample_ += sample_dt_;
      if (result_.series.size() >= sample_cap_) coarsen_samples();
    }
    const double dt = t - last_t_;
    if (!spec_.carbon_g_per_kwh.empty()) carbon_area_ += allocated_gpu_s_times_intensity(last_t_, t);
    allocated_area_ += dt * static_cast<double>(state_.allocated_milli()) / 1000;
    capacity_area_ += dt * static_cast<double>(state_.capacity_milli()) / 1000;
    if (const double in_span = std::min(t, span_end_s_) - last_t_; in_span > 0) {
      span_allocated_ += in_span * static_cast<double>(state_.allocated_milli()) / 1000;
      span_capacity_ += in_span * static_cast<double>(state_.capacity_milli()) / 1000;
    }
    last_t_ = t;
    now_ = t;
  }

  // Allocated GPU-seconds from a to b, each weighted by the grid intensity of its hour of day (g CO2 / kWh).
  double allocated_gpu_s_times_intensity(double a, double b) const {
    const std::vector<double>& ci = spec_.carbon_g_per_kwh;
    const double gpus = static_cast<double>(state_.allocated_milli()) / 1000;
    if (ci.size() == 1 || gpus == 0) return gpus * (b - a) * ci[0];
    double sum = 0;
    while (a < b) {
      const double hours = a / 3600 + spec_.carbon_start_hour;
      const double next = std::min(b, (std::floor(hours) + 1 - spec_.carbon_start_hour) * 3600);
      sum += gpus * (next - a) * ci[static_cast<std::size_t>(std::fmod(std::floor(hours), 24.0))];
      a = next > a ? next : b;
    }
    return sum;
  }

  // The run outlasted what its interval was chosen for (a queue takes far longer than the submit span): every
  // other sample goes and the interval doubles, so a run keeps at most sample_cap_ samples however long it is.
  void coarsen_samples() {
    std::vector<TimeSample>& series = result_.series;
    const std::size_t kept = (series.size() + 1) / 2;
    for (std::size_t i = 1; i < kept; ++i) series[i] = series[2 * i];
    series.resize(kept);
    sample_dt_ *= 2;
    next_sample_ = sample_start_ + static_cast<double>(kept) * sample_dt_;
    result_.sample_interval_s = sample_dt_;
  }

  void sample(double t) {
    std::vector<const ClusterJob*> waiting;
    waiting.reserve(waiting_.size());
    for (int j : waiting_) waiting.push_back(&jobs_[static_cast<std::size_t>(j)]);
    TimeSample s;
    s.t_s = t;
    s.allocated_gpus = static_cast<double>(state_.allocated_milli()) / 1000;
    s.capacity_gpus = static_cast<double>(state_.capacity_milli()) / 1000;
    s.queued = static_cast<int>(waiting_.size());
    s.running = static_cast<int>(running_.size());
    s.fragmented_gpus = waiting.empty() ? 0.0 : static_cast<double>(state_.unusable_free_milli(waiting)) / 1000;
    result_.series.push_back(s);
  }

  bool handle(const Message& m) {
    switch (m.kind) {
      case Message::Arrival:
        arrived_ += static_cast<std::size_t>(m.b - m.a);
        for (int j = m.a; j < m.b; ++j) {
          JobState& s = jobs_state_[static_cast<std::size_t>(j)];
          if (s.done) continue;
          s.waiting = true;
          waiting_.push_back(j);
          ++queue_entries_;
        }
        return true;
      case Message::End: {
        JobState& s = jobs_state_[static_cast<std::size_t>(m.a)];
        if (!s.running || s.generation != m.b) return false;
        complete(m.a);
        return true;
      }
      case Message::Timeout: {
        JobState& s = jobs_state_[static_cast<std::size_t>(m.a)];
        if (!s.running || s.generation != m.b) return false;
        time_out(m.a);
        return true;
      }
      case Message::JobError: {
        JobState& s = jobs_state_[static_cast<std::size_t>(m.a)];
        if (!s.running || s.generation != m.b) return false;
        job_error(m.a);
        return true;
      }
      case Message::Retry: {  // back in the queue after its backoff, in its arrival place
        JobState& s = jobs_state_[static_cast<std::size_t>(m.a)];
        s.waiting = true;
        waiting_.insert(std::lower_bound(waiting_.begin(), waiting_.end(), m.a), m.a);
        ++queue_entries_;
        return true;
      }
      case Message::NodeBack: {  // a spare swapped in: in service, and a spot node can now be reclaimed
        state_.set_schedulable(m.a, true);
        const auto& reclaimer = reclaimers_[static_cast<std::size_t>(state_.pool_of(m.a))];
        if (reclaimer) reclaimer->restore_node(local(m.a), now_);
        return true;
      }
      case Message::Repaired:
        repaired(m.a);
        return true;
      case Message::SpotBack:
        spot_back(m.a);
        return true;
      case Message::Alarm:
        return timed_events(std::max(now_, m.t));
    }
    return false;
  }

  // Timed events due by now (in time order, each followed by its pass, as a message would be), failures, and a
  // scheduling cycle's tick.
  bool timed_events(double due) {
    bool changed = false;
    while (!timed_.empty() && timed_.top().t <= due + kSameInstantS) {
      const Message m = timed_.top().m;
      timed_.pop();
      if (handle(m) && spec_.cycle.period_s <= 0) pass();
    }
    for (std::size_t p = 0; p < injectors_.size(); ++p) {
      FailureInjector& inj = *injectors_[p];
      while (inj.peek().time_s <= due + kSameInstantS) {
        const FailureEvent ev = inj.peek();
        const int node = pool_first_node_[p] + ev.node;
        if (ev.needs_replacement) inj.take_down();
        else inj.renew();
        node_failed(node, ev.needs_replacement);
        changed = true;
      }
    }
    for (std::size_t p = 0; p < reclaimers_.size(); ++p) {
      if (!reclaimers_[p]) continue;
      FailureInjector& inj = *reclaimers_[p];
      while (inj.peek().time_s <= due + kSameInstantS) {
        const int node = pool_first_node_[p] + inj.peek().node;
        inj.take_down();
        reclaimed(node);
        changed = true;
      }
    }
    while (next_scripted_ < scripted_.size() && scripted_[next_scripted_].at_s <= due + kSameInstantS) {
      const ScriptedFailure& f = scripted_[next_scripted_++];
      if (f.needs_replacement && !injectors_.empty()) {
        const int pool = state_.pool_of(f.node);
        injectors_[static_cast<std::size_t>(pool)]->remove_node(f.node - pool_first_node_[static_cast<std::size_t>(pool)], now_);
      }
      node_failed(f.node, f.needs_replacement);
      changed = true;
    }
    if (wake_s_ <= due + kSameInstantS) {
      wake_s_ = kInf;
      changed = true;
    }
    if (spec_.cycle.period_s > 0 && due + kSameInstantS >= next_cycle_) {
      next_cycle_ = due + spec_.cycle.period_s;
      pass();
    }
    return changed;
  }

  double next_timed() const {
    double t = timed_.empty() ? kInf : timed_.top().t;
    for (const auto& inj : injectors_) t = std::min(t, inj->peek().time_s);
    for (const auto& inj : reclaimers_)
      if (inj) t = std::min(t, inj->peek().time_s);
    if (next_scripted_ < scripted_.size()) t = std::min(t, scripted_[next_scripted_].at_s);
    if (spec_.cycle.period_s > 0 && !waiting_.empty()) t = std::min(t, std::max(now_, next_cycle_));
    if (!waiting_.empty()) t = std::min(t, std::max(now_, wake_s_));
    if (opt_.horizon_s > 0) t = std::min(t, opt_.horizon_s);
    return t;
  }

  // One alarm clock per run: it sleeps until the armed time, or until arm_alarm sets an earlier one and wakes it.
  // (An actor per alarm cost a stack's mapping and unmapping per event: 60% of a run with a million failures.)
  void alarm_clock() {
    std::unique_lock<sg4::Mutex> lock(*alarm_mutex_);
    for (;;) {
      if (!std::isfinite(alarm_t_)) {
        alarm_cv_->wait(lock);
      } else if (alarm_cv_->wait_until(lock, offset_ + alarm_t_) == std::cv_status::timeout) {
        const double t = alarm_t_;
        alarm_t_ = kInf;
        send({Message::Alarm, 0, 0, t});
      }
    }
  }

  void arm_alarm() {
    const double t = next_timed();
    if (!std::isfinite(t) || t >= alarm_t_) return;
    alarm_t_ = t;
    alarm_cv_->notify_one();
  }

  // The simulation's own timed events (a run's end or walltime, a repair, a spare swapped in, a spot node back)
  // wait in one heap that the alarm wakes, not in an actor each: a 100,000-node pool has that many repairs under
  // way at once, and every actor's stack is a memory map (the kernel's vm.max_map_count ends the run).
  void timer(Message m, double after_s) { timed_.push({now_ + after_s, timed_seq_++, m}); }

  void node_failed(int node, bool hardware) {
    // Jobs with a GPU on the node crash (a finished run whose end is already on its way completes).
    std::vector<int> hit;
    for (int j : running_)
      for (const Placement::Part& part : jobs_state_[static_cast<std::size_t>(j)].placement.parts)
        if (part.node == node) hit.push_back(j);
    for (int j : hit)
      if (!hardware || !shrink_around(j, node, Stop::Failed)) interrupt(j, Stop::Failed, hardware);
    const int pool = state_.pool_of(node);
    if (!hardware) return;  // software: restart in place, the node stays
    if (state_.is_standby(node)) {
      state_.set_standby(node, false);  // a failed spare goes to repair and comes back a spare
    } else if (state_.schedulable(node)) {
      drop_pods_on(node);
      state_.set_schedulable(node, false);
      if (reclaimers_[static_cast<std::size_t>(pool)]) reclaimers_[static_cast<std::size_t>(pool)]->remove_node(local(node), now_);
      --active_[static_cast<std::size_t>(pool)];
      const int spare = state_.standby_node(pool);
      if (spare >= 0) {
        state_.set_standby(spare, false);
        if (!injectors_.empty()) injectors_[static_cast<std::size_t>(pool)]->restore_node(spare - pool_first_node_[static_cast<std::size_t>(pool)], now_);
        ++active_[static_cast<std::size_t>(pool)];
        timer({Message::NodeBack, spare}, spec_.recovery.reschedule_s);
      }
    }
    timer({Message::Repaired, node}, repair_->quantile(rng_.uniform()));
  }

  void repaired(int node) {
    const int pool = state_.pool_of(node);
    if (active_[static_cast<std::size_t>(pool)] < spec_.pools[static_cast<std::size_t>(pool)].nodes) {
      ++active_[static_cast<std::size_t>(pool)];
      state_.set_schedulable(node, true);
      if (!injectors_.empty()) injectors_[static_cast<std::size_t>(pool)]->restore_node(local(node), now_);
      if (reclaimers_[static_cast<std::size_t>(pool)]) reclaimers_[static_cast<std::size_t>(pool)]->restore_node(local(node), now_);
    } else {
      state_.set_standby(node, true);
    }
  }

  int local(int node) const { return node - pool_first_node_[static_cast<std::size_t>(state_.pool_of(node))]; }

  // A spot node taken back by the provider: its jobs stop as on a failure (restart and warm-up when they run
  // again), the node leaves service (and cannot fail meanwhile) until it comes back.
  void reclaimed(int node) {
    ++result_.spot_reclaims;
    std::vector<int> hit;
    for (int j : running_)
      for (const Placement::Part& part : jobs_state_[static_cast<std::size_t>(j)].placement.parts)
        if (part.node == node) hit.push_back(j);
    for (int j : hit)
      if (!shrink_around(j, node, Stop::Reclaimed)) interrupt(j, Stop::Reclaimed, false);
    drop_pods_on(node);
    state_.set_schedulable(node, false);
    const int pool = state_.pool_of(node);
    if (!injectors_.empty()) injectors_[static_cast<std::size_t>(pool)]->remove_node(local(node), now_);
    timer({Message::SpotBack, node}, spec_.pools[static_cast<std::size_t>(pool)].reclaimed_for_s);
  }

  void spot_back(int node) {
    const int pool = state_.pool_of(node);
    state_.set_schedulable(node, true);
    if (!injectors_.empty()) injectors_[static_cast<std::size_t>(pool)]->restore_node(local(node), now_);
    reclaimers_[static_cast<std::size_t>(pool)]->restore_node(local(node), now_);
  }

  void remove_from(std::vector<int>& v, int j) { v.erase(std::find(v.begin(), v.end(), j)); }

  void complete(int j) {
    JobState& s = jobs_state_[static_cast<std::size_t>(j)];
    const ClusterJob& c = jobs_[static_cast<std::size_t>(j)];
    s.status.attained_gpu_s += (now_ - s.run_start_s) * s.held;
    s.status.run_s += now_ - s.run_start_s;
    state_.release(s.placement);
    if (c.elastic()) --elastic_running_;
    release_user_use(j);
    s.running = false;
    s.done = true;
    s.status.remaining_work_s = 0;
    remove_from(running_, j);
    JobRecord& r = result_.records[static_cast<std::size_t>(j)];
    r.finished = true;
    r.end_s = now_;
    r.jct_s = now_ - c.submit_s;
    r.slowdown = r.jct_s / std::max(c.duration_s, kSlowdownFloorS);
    auto& u = user_history_[c.user];
    u.first += c.duration_s, u.second += 1;
    all_history_.first += c.duration_s, all_history_.second += 1;
    count_ended();
  }

  // The job reached its walltime before its work was done: the scheduler ends it there (Slurm's TIMEOUT), with
  // the work it did (up to the end, not only to its last checkpoint: the user keeps what it wrote).
  void time_out(int j) {
    JobState& s = jobs_state_[static_cast<std::size_t>(j)];
    const double elapsed = now_ - s.run_start_s;
    const double worked = std::max(0.0, elapsed - s.run_overhead_s) / s.slowdown * s.speed;
    JobRecord& r = result_.records[static_cast<std::size_t>(j)];
    r.timed_out = true;
    r.work_done_s = std::min(jobs_[static_cast<std::size_t>(j)].duration_s, s.kept_work_s + worked);
    ++result_.timed_out;
    complete(j);
  }

  // Closes the accounting of a job's current run and stops its actor: the work is kept up to the last
  // checkpoint, or all of it when `checkpoint_now` (a planned resize saves first); the rolled-back work
  // counts as lost GPU-hours (the wall time that produced it, on the GPUs held).
  void end_run(int j, bool checkpoint_now) {
    JobState& s = jobs_state_[static_cast<std::size_t>(j)];
    const ClusterJob& c = jobs_[static_cast<std::size_t>(j)];
    const double elapsed = now_ - s.run_start_s;
    const double worked = std::max(0.0, elapsed - s.run_overhead_s) / s.slowdown * s.speed;
    const double interval = c.checkpoint_interval_s > 0 ? c.checkpoint_interval_s : spec_.checkpoint_interval_s;
    const double total = s.kept_work_s + worked;
    const double kept = checkpoint_now ? total : std::max(s.kept_work_s, std::floor(total / interval + 1e-9) * interval);
    JobRecord& r = result_.records[static_cast<std::size_t>(j)];
    // The run's startup was counted whole when it started: give back what it did not get to.
    r.gpu_hours_lost += ((total - kept) * s.slowdown / s.speed - std::max(0.0, s.run_overhead_s - elapsed)) * s.held / 3600;
    s.kept_work_s = kept;
    s.status.remaining_work_s = std::max(0.0, c.duration_s - kept);
    s.status.attained_gpu_s += elapsed * s.held;
    s.status.run_s += elapsed;
    s.attempts_gpu_s += elapsed * s.held;
    ++s.generation;  // its End or Timeout, still in the heap, is now stale
  }

  // Ends a job's current run (end_run) and frees its GPUs: it is neither running nor waiting.
  void stop_run(int j) {
    JobState& s = jobs_state_[static_cast<std::size_t>(j)];
    end_run(j, false);
    s.status.started_s = -1;
    state_.release(s.placement);
    s.placement = {};
    s.running = false;
    if (jobs_[static_cast<std::size_t>(j)].elastic()) --elastic_running_;
    release_user_use(j);
    remove_from(running_, j);
  }

  // A run ended: its job and GPUs no longer count against its user's and its account's limits.
  void release_user_use(int j) {
    if (!limits_on_) return;
    JobState& s = jobs_state_[static_cast<std::size_t>(j)];
    const ClusterJob& c = jobs_[static_cast<std::size_t>(j)];
    for (auto* use : {&user_use_[c.user], &account_use_[spec_.account_of(c)]}) {
      --use->first;
      use->second -= s.counted_gpus;
    }
    s.counted_gpus = 0;
  }

  // A user or code error ended the run: it keeps the work up to its last checkpoint and is retried from there after
  // its backoff (a restart's startup), or, past its retries, ends as failed.
  void job_error(int j) {
    JobState& s = jobs_state_[static_cast<std::size_t>(j)];
    JobRecord& r = result_.records[static_cast<std::size_t>(j)];
    ++r.job_errors;
    ++result_.job_errors;
    stop_run(j);
    s.status.queued_since_s = now_;
    if (r.job_errors <= spec_.job_failures.retries) {
      ++result_.job_retries;
      s.next_overhead_s = spec_.recovery.restart_s + spec_.recovery.warmup_s;
      timer({Message::Retry, j}, spec_.job_failures.backoff_s(r.job_errors));
      return;
    }
    s.done = true;
    r.failed = true;
    r.end_s = now_;
    ++result_.failed_jobs;
    result_.failed_gpu_hours += s.attempts_gpu_s / 3600;
    count_ended();
  }

  void count_ended() {
    ++ended_;
    if (opt_.progress && (ended_ - last_progress_) * 200 >= static_cast<int>(jobs_.size())) {
      last_progress_ = ended_;
      opt_.progress(static_cast<double>(ended_) / static_cast<double>(jobs_.size()));
    }
  }

  // A running job stops: it keeps the work up to its last checkpoint; a failure also costs the recovery when
  // it runs again (detection, drain, a new node when `hardware`, restart, warm-up), a preemption the restart.
  enum class Stop { Preempted, Failed, Reclaimed };
  void interrupt(int j, Stop why, bool hardware) {
    JobState& s = jobs_state_[static_cast<std::size_t>(j)];
    if (!s.running) return;
    if (now_ + kSameInstantS >= s.planned_end_s) return;  // its run is over; its end message is on the way
    JobRecord& r = result_.records[static_cast<std::size_t>(j)];
    stop_run(j);
    if (why == Stop::Failed) {
      // Detection, drain, restart and warm-up; finding a node is the cluster's (a spare's swap, or the wait).
      const RecoveryTimes rt = recovery_times(spec_.recovery, 0, hardware);
      ++r.failures;
      ++result_.failures;
      s.next_overhead_s = rt.total() - rt.reschedule;
    } else if (why == Stop::Reclaimed) {
      ++r.reclaims;
      s.next_overhead_s = spec_.recovery.restart_s + spec_.recovery.warmup_s;
    } else {
      ++r.preemptions;
      ++result_.preemptions;
      ++s.status.preemptions;
      s.next_overhead_s = spec_.recovery.restart_s + spec_.recovery.warmup_s;
    }
    // Back in the queue in its arrival place.
    s.waiting = true;
    s.status.queued_since_s = now_;
    const auto pos = std::lower_bound(waiting_.begin(), waiting_.end(), j);
    waiting_.insert(pos, j);
    ++queue_entries_;
  }

  // An elastic job that loses `node` runs on without it when what it keeps is at least elastic_min GPUs: it
  // rolls back to its last checkpoint and restarts on the GPUs it keeps (trimmed to a size it can run on),
  // without waiting for a node. False when it cannot (not elastic, too few GPUs left).
  bool shrink_around(int j, int node, Stop why) {
    JobState& s = jobs_state_[static_cast<std::size_t>(j)];
    const ClusterJob& c = jobs_[static_cast<std::size_t>(j)];
    if (!c.elastic() || !s.running || now_ + kSameInstantS >= s.planned_end_s) return false;
    int kept_gpus = 0;
    for (const Placement::Part& part : s.placement.parts)
      if (part.node != node) kept_gpus += part.whole;
    const int g = c.elastic_size_at_most(kept_gpus);
    if (g <= 0) return false;
    end_run(j, false);
    resize_to(j, g, node);
    JobRecord& r = result_.records[static_cast<std::size_t>(j)];
    if (why == Stop::Failed) {
      const RecoveryTimes rt = recovery_times(spec_.recovery, 0, false);
      ++r.failures;
      ++result_.failures;
      launch(j, rt.total() - rt.reschedule);
    } else {
      ++r.reclaims;
      launch(j, spec_.recovery.restart_s + spec_.recovery.warmup_s);
    }
    return true;
  }

  // Gives back GPUs of a running job until it holds `g` (all of `drop_node`'s first): a shrink.
  void resize_to(int j, int g, int drop_node) {
    JobState& s = jobs_state_[static_cast<std::size_t>(j)];
    Placement keep, give;
    int need = g;
    // Keep the parts in order, dropping `drop_node` and trimming the last part kept to the GPUs still needed.
    for (const Placement::Part& part : s.placement.parts) {
      if (part.node == drop_node || need == 0) {
        give.parts.push_back(part);
        continue;
      }
      if (part.whole <= need) {
        keep.parts.push_back(part);
        need -= part.whole;
        continue;
      }
      Placement::Part kept = part, freed = part;
      kept.whole = need;
      kept.gpus = 0;
      freed.gpus = part.gpus;
      for (int bit = 0, n = 0; bit < 64 && n < need; ++bit)
        if (part.gpus >> bit & 1) kept.gpus |= std::uint64_t{1} << bit, freed.gpus &= ~(std::uint64_t{1} << bit), ++n;
      freed.whole = part.whole - need;
      keep.parts.push_back(kept);
      give.parts.push_back(freed);
      need = 0;
    }
    state_.release(give);
    keep.leaves = leaves_of(keep);
    s.placement = std::move(keep);
    ++s.resizes;
  }

  // Starts a run of a job on its current placement after `overhead_s` of startup.
  void launch(int j, double overhead_s) {
    JobState& s = jobs_state_[static_cast<std::size_t>(j)];
    const ClusterJob& c = jobs_[static_cast<std::size_t>(j)];
    int whole = 0;
    for (const Placement::Part& part : s.placement.parts) whole += part.whole;
    s.held = c.elastic() ? whole : gpus_held(c, spec_.gpu_sharing);
    s.speed = c.elastic() ? c.speed_on(whole) : 1.0;
    if (limits_on_) {
      user_use_[c.user].second += s.held - s.counted_gpus;
      account_use_[spec_.account_of(c)].second += s.held - s.counted_gpus;
      s.counted_gpus = s.held;
    }
    s.run_start_s = now_;
    s.status.started_s = now_;
    s.run_overhead_s = overhead_s;
    result_.records[static_cast<std::size_t>(j)].gpu_hours_lost += overhead_s * s.held / 3600;  // GPUs held, no progress
    s.slowdown = s.placement.leaves > 1 ? c.cross_leaf_slowdown : 1.0;
    double run_s = overhead_s + s.status.remaining_work_s * s.slowdown / s.speed;
    // A walltime is enforced: the run stops at the limit, counted from the job's start out of the queue.
    const double limit_left = c.walltime_s > 0 ? std::max(0.0, c.walltime_s - (now_ - s.limit_start_s)) : kInf;
    Message::Kind ending = run_s > limit_left + kSameInstantS ? Message::Timeout : Message::End;
    if (ending == Message::Timeout) run_s = limit_left;
    s.expected_end_s = now_ + run_s;
    if (const JobFailureSpec& jf = spec_.job_failures; jf.on() && job_error_rng_.uniform() < jf.attempt_failure_probability) {
      // A user or code error at a random point of the work this run has left (the same stream order every run).
      const double error_s = overhead_s + jf.failure_point(job_error_rng_) * s.status.remaining_work_s * s.slowdown / s.speed;
      if (error_s < run_s - kSameInstantS) ending = Message::JobError, run_s = error_s;
    }
    s.planned_end_s = now_ + run_s;
    const int gen = ++s.generation;
    timer({ending, j, gen}, run_s);
  }

  // Elastic jobs between policy passes: while jobs wait that do not fit, those grown past their request give
  // the extra back; while nothing waits, they grow towards elastic_max when the time saved pays for the restart.
  void give_back_grown() {
    if (elastic_running_ == 0 || waiting_.empty()) return;
    bool blocked = false;
    for (int w : waiting_) blocked = blocked || !fits(w);
    if (!blocked) return;
    for (int j : std::vector<int>(running_)) {
      JobState& s = jobs_state_[static_cast<std::size_t>(j)];
      const ClusterJob& c = jobs_[static_cast<std::size_t>(j)];
      if (!c.elastic() || s.held <= c.gpus || now_ + kSameInstantS >= s.planned_end_s) continue;
      end_run(j, true);
      resize_to(j, c.gpus, -1);
      launch(j, spec_.recovery.restart_s + spec_.recovery.warmup_s);
    }
  }

  void grow_elastic() {
    if (elastic_running_ == 0 || !waiting_.empty()) return;
    const double restart = spec_.recovery.restart_s + spec_.recovery.warmup_s;
    for (int j : std::vector<int>(running_)) {
      JobState& s = jobs_state_[static_cast<std::size_t>(j)];
      const ClusterJob& c = jobs_[static_cast<std::size_t>(j)];
      if (!c.elastic() || s.held >= c.elastic_max || now_ + kSameInstantS >= s.planned_end_s) continue;
      const int held = static_cast<int>(s.held);
      // The most GPUs it can add now (a placement of the extra GPUs as one more gang).
      Placement extra;
      int g = c.elastic_size_at_most(c.elastic_max);
      for (; g > held; g = c.elastic_size_at_most(g - 1)) {
        const ClusterJob more = sized(c, g - held);
        if (!state_.fits(more)) continue;
        extra = state_.place(more, placement_);
        if (!extra.empty()) break;
      }
      if (g <= held || extra.empty()) continue;
      // Worth it only if it ends sooner: work left at the current speed against a restart and the new speed.
      const double elapsed = now_ - s.run_start_s;
      const double left = s.status.remaining_work_s - std::max(0.0, elapsed - s.run_overhead_s) / s.slowdown * s.speed;
      Placement merged = s.placement;
      merged.parts.insert(merged.parts.end(), extra.parts.begin(), extra.parts.end());
      const double slowdown = leaves_of(merged) > 1 ? c.cross_leaf_slowdown : 1.0;
      if (restart + left * slowdown / c.speed_on(g) >= s.planned_end_s - now_) continue;
      end_run(j, true);
      state_.allocate(extra);
      merged.leaves = leaves_of(merged);
      s.placement = std::move(merged);
      ++s.resizes;
      launch(j, restart);
    }
  }

  // Whether the job's user, and its account, may run it beside what they run now (per-user and account limits).
  bool within_limits(int j) const {
    const ClusterJob& c = job(j);
    const double asked = gpus_held(c, spec_.gpu_sharing);
    auto within = [&](const UserLimits& l, const std::unordered_map<std::string, std::pair<int, double>>& use, const std::string& key) {
      const auto it = use.find(key);
      const int jobs = it == use.end() ? 0 : it->second.first;
      const double gpus = it == use.end() ? 0.0 : it->second.second;
      return (l.max_running_jobs <= 0 || jobs + 1 <= l.max_running_jobs) && (l.max_gpus <= 0 || gpus + asked <= l.max_gpus + 1e-9);
    };
    const UserLimits* account = spec_.account_limits_of(c);
    return within(spec_.limits_of(c.user), user_use_, c.user) && (!account || within(*account, account_use_, spec_.account_of(c)));
  }
  bool startable(int j) {
    const ClusterJob& c = job(j);
    if (!jobs_state_[static_cast<std::size_t>(j)].waiting) return false;
    if (limits_on_ && !within_limits(j)) return false;
    return spec_.cycle.admissions_per_queue <= 0 || admitted_[c.queue] < spec_.cycle.admissions_per_queue;
  }
  // Where the job would run in `state` (whose free GPUs are free now): its request, or for an elastic job that
  // does not fit whole the most GPUs it can run on, down to elastic_min; empty when nothing fits.
  Placement choose_placement(const ClusterState& state, const ClusterJob& c) const {
    Placement p = state.fits(c) ? state.place(c, placement_) : Placement{};
    for (int g = c.elastic() ? c.elastic_size_at_most(c.gpus - 1) : 0; p.empty() && g > 0; g = c.elastic_size_at_most(g - 1)) {
      const ClusterJob smaller = sized(c, g);
      if (state.fits(smaller)) p = state.place(smaller, placement_);
    }
    return p;
  }
  bool begin(int j, Placement p, bool allocated = false);  // allocated: p's GPUs are already taken (pods placed one by one)

  // Places as many of a non-gang job's missing pods (one GPU each) as there are free GPUs, fullest nodes first
  // (the default scheduler's bin-packing score), and starts the job once it holds all of them.
  bool add_pods(int j) {
    JobState& s = jobs_state_[static_cast<std::size_t>(j)];
    const ClusterJob& c = job(j);
    ClusterJob pod = sized(c, 1);
    Placement got;
    while (s.partial_gpus < c.gpus) {
      Placement one = state_.place(pod, placement_);
      if (one.empty()) break;
      state_.allocate(one);
      got.parts.push_back(one.parts.front());
      ++s.partial_gpus;
    }
    // Parts on the same node merge into one (a node's GPUs are one part of a placement).
    for (const Placement::Part& part : got.parts) {
      auto it = std::find_if(s.partial.parts.begin(), s.partial.parts.end(), [&](const Placement::Part& q) { return q.node == part.node; });
      if (it == s.partial.parts.end()) s.partial.parts.push_back(part);
      else it->whole += part.whole, it->gpus |= part.gpus;
    }
    if (s.partial_gpus < c.gpus) return false;
    Placement all = std::move(s.partial);
    all.leaves = leaves_of(all);
    s.partial = {};
    s.partial_gpus = 0;
    return begin(j, std::move(all), /*allocated=*/true);
  }

  // Pods of jobs still partly placed lose the ones on a node leaving service (their GPUs are gone with it).
  void drop_pods_on(int node) {
    for (int j : waiting_) {
      JobState& s = jobs_state_[static_cast<std::size_t>(j)];
      for (auto it = s.partial.parts.begin(); it != s.partial.parts.end();) {
        if (it->node != node) {
          ++it;
          continue;
        }
        Placement gone;
        gone.parts.push_back(*it);
        state_.release(gone);
        s.partial_gpus -= it->whole;
        it = s.partial.parts.erase(it);
      }
    }
  }

  bool holds_partial() const {
    return std::any_of(waiting_.begin(), waiting_.end(), [&](int j) { return jobs_state_[static_cast<std::size_t>(j)].partial_gpus > 0; });
  }

  void pass() {
    admitted_.clear();
    if (limits_on_) {
      eligible_.clear();
      for (int j : waiting_)
        if (within_limits(j)) eligible_.push_back(j);
      ++queue_entries_;  // jobs a limit held may be eligible again: a policy's own view of the queue must look again
    }
    reservations_.clear();
    plan_live_ = false;
    give_back_grown();
    policy_->schedule(*this);
    grow_elastic();
    reject_stuck();
  }

  void finish();

  const ClusterSpec& spec_;
  const std::vector<ClusterJob>& jobs_;
  ClusterSimOptions opt_;
  PolicyChoice choice_;
  PlacementKind placement_ = PlacementKind::Binpack;
  std::unique_ptr<SchedulerPolicy> policy_;
  ClusterState state_;
  // This pass's backfill reservations: GPUs held for a waiting job from `start_s` to `end_s`.
  struct Reservation {
    Placement gpus;
    double start_s, end_s;
  };
  std::vector<Reservation> reservations_;
  std::optional<BackfillPlan> plan_;  // storage kept from pass to pass (reset, not rebuilt: tens of thousands of passes)
  bool plan_live_ = false;            // plan_ is this pass's
  ClusterState scratch_;  // the plan's view of the cluster at a reservation's start (storage reused)
  double wake_s_ = kInf;  // a pass the policy asked for
  std::vector<JobState> jobs_state_;
  std::vector<int> waiting_, running_;
  std::vector<std::unique_ptr<FailureInjector>> injectors_, reclaimers_;  // per pool (reclaimers: null unless spot)
  std::unique_ptr<TimeDistribution> repair_;
  Rng rng_;
  Rng job_error_rng_;
  std::uint64_t queue_entries_ = 0;  // jobs that entered the waiting queue: arrivals and returns  // whether each run meets a user or code error, and where (its own stream: node failures unchanged)
  std::vector<ScriptedFailure> scripted_;
  std::size_t next_scripted_ = 0;
  std::vector<int> pool_first_node_, active_;
  double alarm_t_ = kInf;  // the alarm clock's armed time (kInf: none)
  sg4::MutexPtr alarm_mutex_;
  sg4::ConditionVariablePtr alarm_cv_;
  struct Timed {
    double t;
    std::uint64_t seq;  // ties in the order they were set
    Message m;
    bool operator>(const Timed& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  std::priority_queue<Timed, std::vector<Timed>, std::greater<>> timed_;
  std::uint64_t timed_seq_ = 0;
  std::map<std::string, int> admitted_;
  // Per-user limits: the running jobs and GPUs of each user, and this pass's eligible waiting jobs.
  bool limits_on_ = false;
  std::unordered_map<std::string, std::pair<int, double>> user_use_, account_use_;  // running jobs and GPUs held
  std::vector<int> eligible_;
  std::map<std::string, std::pair<double, double>> user_history_;
  std::pair<double, double> all_history_{0, 0};
  sg4::Mailbox* mailbox_ = nullptr;
  double offset_ = 0, now_ = 0, last_t_ = 0, next_cycle_ = 0;
  double sample_dt_ = 1, next_sample_ = 0, sample_start_ = 0;
  std::size_t sample_cap_ = 1000;
  double allocated_area_ = 0, capacity_area_ = 0, carbon_area_ = 0;
  double span_end_s_ = -kInf, span_allocated_ = 0, span_capacity_ = 0;  // ClusterSimOptions::span_s's window
  int ended_ = 0, last_progress_ = 0;
  std::size_t arrived_ = 0;
  std::int64_t full_capacity_milli_ = 0;  // every node of every pool in service (spares not counted)
  int elastic_running_ = 0;
  PolicyResult result_;
  static inline int runs_ = 0;
};

// Running jobs release their GPUs at their expected ends and earlier reservations end; the job takes the first of
// those instants (now included) at which it has a placement beside the reservations its run would overlap. The
// plan finds the instant for jobs of whole GPUs; a job sharing a GPU or an elastic one replays the releases.
double Simulation::reserve(int j, double window_s) {
  const ClusterJob& c = job(j);
  const double runtime = expected_runtime(j), latest = now_ + window_s;
  double t = kInf;
  Placement p;
  const bool planned = !shares_gpu(c, spec_.gpu_sharing) && !c.elastic();
  if (planned) {
    t = plan().earliest(c, runtime, latest);
    if (t == kInf) return kInf;  // exact: no instant in the window has the GPUs by node shape
    if (placement_ == PlacementKind::Binpack || placement_ == PlacementKind::Topology) p = plan().binpack_at(c, t, runtime);
    if (p.empty()) {
      plan().state_for(t, runtime, scratch_);
      p = choose_placement(scratch_, c);
    }
  }
  if (p.empty()) {
    for (double at : release_instants()) {
      if (at > latest) break;
      const ClusterState then = state_at(at, runtime);
      if (!(then.fits(c) || (c.elastic() && then.fits(sized(c, c.elastic_min))))) continue;
      p = choose_placement(then, c);
      if (!p.empty()) {
        t = at;
        break;
      }
    }
  }
  if (p.empty()) return kInf;
  plan().reserve(p, t, t + runtime);
  reservations_.push_back({std::move(p), t, t + runtime});
  return t;
}

bool Simulation::start_beside_reservations(int j) {
  const ClusterJob& c = job(j);
  if (!startable(j) || !fits(j)) return false;
  if (reservations_.empty()) return start(j);
  const double runtime = expected_runtime(j);
  // The plan's quick answer first (most jobs a backfill pass tests cannot start); the placement from the state.
  if (shares_gpu(c, spec_.gpu_sharing) || c.elastic()) return begin(j, choose_placement(state_at(now_, runtime), c));
  if (plan().earliest(c, runtime, now_) > now_) return false;
  plan().state_for(now_, runtime, scratch_);
  return begin(j, choose_placement(scratch_, c));
}

// Now, now + the running jobs' expected ends, and the reservations' ends: when something may free; sorted.
std::vector<double> Simulation::release_instants() const {
  std::vector<double> out{now_};
  for (int r : running_) out.push_back(now_ + expected_runtime(r));
  for (const Reservation& r : reservations_) out.push_back(r.end_s);
  std::sort(out.begin(), out.end());
  return out;
}

// The cluster as a job starting at t for `runtime` would find it: the running jobs expected to end by then gone,
// the GPUs of reservations overlapping its run taken (a GPU busy then is already unavailable, so marking it again
// changes nothing that place() reads).
ClusterState Simulation::state_at(double t, double runtime) const {
  ClusterState at = state_;
  // A job expected to end now still holds its GPUs until its end is handled: only later instants release.
  for (int r : running_)
    if (t > now_ && now_ + expected_runtime(r) <= t) at.release(jobs_state_[static_cast<std::size_t>(r)].placement);
  for (const Reservation& r : reservations_)
    if (r.start_s < t + runtime && r.end_s > t) at.allocate(r.gpus);
  return at;
}

BackfillPlan& Simulation::plan() {
  if (!plan_live_) {
    if (plan_) plan_->reset(now_);
    else plan_.emplace(state_, now_);
    plan_live_ = true;
    for (int r : running_) plan_->hold_until(jobs_state_[static_cast<std::size_t>(r)].placement, now_ + expected_runtime(r));
  }
  return *plan_;
}

bool Simulation::begin(int j, Placement p, bool allocated) {
  JobState& s = jobs_state_[static_cast<std::size_t>(j)];
  const ClusterJob& c = jobs_[static_cast<std::size_t>(j)];
  if (p.empty()) return false;
  if (!allocated) {
    // A placement found on a state built for planning must still be free now (two jobs on one GPU would go
    // unnoticed until the accounting drifted).
    for (const Placement::Part& part : p.parts)
      for (int g = 0; g < state_.gpus_on(part.node); ++g)
        if ((part.gpus >> g & 1) != 0 && state_.free_milli(part.node, g) != 1000)
          throw std::logic_error("cluster simulator: job " + c.id + " placed on a GPU in use");
    state_.allocate(p);
  }
  ++admitted_[c.queue];
  s.placement = std::move(p);
  s.waiting = false;
  s.running = true;
  if (c.elastic()) ++elastic_running_;
  remove_from(waiting_, j);
  if (limits_on_) {
    if (const auto it = std::find(eligible_.begin(), eligible_.end(), j); it != eligible_.end()) eligible_.erase(it);
    ++user_use_[c.user].first;
    ++account_use_[spec_.account_of(c)].first;
  }
  running_.push_back(j);
  JobRecord& r = result_.records[static_cast<std::size_t>(j)];
  if (r.start_s < 0) {
    r.start_s = now_;
    r.first_wait_s = r.wait_s = std::max(0.0, now_ - c.submit_s);  // the offset clock may read a hair before the arrival
    r.leaves = s.placement.leaves;
  } else {
    r.wait_s += std::max(0.0, now_ - s.status.queued_since_s);
  }
  const double overhead = s.next_overhead_s + spec_.cycle.cost_s;
  s.next_overhead_s = 0;
  s.limit_start_s = now_;
  launch(j, overhead);
  if (plan_live_) plan_->hold_until(s.placement, now_ + expected_runtime(j));
  return true;
}

void Simulation::finish() {
  PolicyResult& out = result_;
  std::vector<double> waits;
  double jct = 0, slowdown = 0, useful = 0, first = kInf, last = 0, first_waits = 0, ettr = 0;
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    JobRecord& r = out.records[i];
    r.resizes = jobs_state_[i].resizes;
    first = std::min(first, r.submit_s);
    out.gpu_hours_lost += r.gpu_hours_lost;
    out.resizes += jobs_state_[i].resizes;
    if (!r.finished) {
      if (!jobs_state_[i].done) ++out.unfinished;
      continue;
    }
    ++out.jobs;
    waits.push_back(r.wait_s);
    first_waits += r.first_wait_s;
    jct += r.jct_s;
    slowdown += r.slowdown;
    last = std::max(last, r.end_s);
    const double work = r.timed_out ? r.work_done_s : jobs_[i].duration_s;
    useful += work * gpus_held(jobs_[i], spec_.gpu_sharing);
    ettr += r.end_s > r.start_s ? std::min(1.0, work / (r.end_s - r.start_s)) : 1.0;
  }
  if (out.jobs > 0) {
    double sum = 0;
    for (double w : waits) sum += w;
    out.mean_wait_s = sum / out.jobs;
    out.mean_first_wait_s = first_waits / out.jobs;
    out.mean_job_ettr = ettr / out.jobs;
    out.p50_wait_s = quantile(waits, 0.5);
    out.p99_wait_s = quantile(waits, 0.99);
    out.mean_jct_s = jct / out.jobs;
    out.mean_slowdown = slowdown / out.jobs;
    out.makespan_s = last - first;
  }
  out.utilization = capacity_area_ > 0 ? allocated_area_ / capacity_area_ : 0;
  out.utilization_in_span = span_capacity_ > 0 ? span_allocated_ / span_capacity_ : 0;
  out.allocated_at_end = state_.capacity_milli() > 0 ? static_cast<double>(state_.allocated_milli()) / static_cast<double>(state_.capacity_milli()) : 0;
  for (int j : waiting_) out.waiting_gpus_at_end += gpus_held(jobs_[static_cast<std::size_t>(j)], spec_.gpu_sharing);
  out.running_at_end = static_cast<int>(running_.size());
  out.gpu_hours = allocated_area_ / 3600;
  out.goodput = allocated_area_ > 0 ? std::min(1.0, useful / allocated_area_) : 0;
  // Energy and cost at the cluster's mix: allocated GPU-hours at the GPU-weighted mean power and price.
  double gpus = 0, watts = 0, usd = 0;
  for (const NodePool& p : spec_.pools) {
    gpus += p.total_gpus();
    watts += p.total_gpus() * p.gpu_power_w;
    usd += p.total_gpus() * p.price_per_gpu_hour;
  }
  if (gpus > 0) {
    out.energy_kwh = out.gpu_hours * watts / gpus / 1000;
    out.carbon_kg = carbon_area_ / 3600 * watts / gpus / 1000 / 1000;  // GPU-s x g/kWh -> kWh x g -> kg
    out.cost_usd = out.gpu_hours * usd / gpus;
  }
}

}  // namespace

PolicyResult simulate_cluster(const ClusterSpec& cluster, const std::vector<ClusterJob>& jobs, const ClusterSimOptions& options) {
  Simulation sim(cluster, jobs, options);
  return sim.run();
}

}  // namespace trainsim::sim::cluster
