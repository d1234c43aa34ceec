#include "sim/reliability/shared_failures.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <thread>

#include "models/core/units.hpp"
#include "sim/parallel_chunks.hpp"

namespace trainsim::sim {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr auto sooner = [](double a, double b) { return a > b; };  // min-heap order for std::*_heap
// The streams of a run, as JobSimulator::run derives them.
constexpr std::uint64_t kFailureStream = 1, kRepairStream = 2;
// Runs per unit of work: fixed, so the per-chunk sums (and so the statistics) do not depend on the threads.
constexpr int kChunk = 64;
}  // namespace

// ---- Tape ------------------------------------------------------------------------------------------

FailureTape::FailureTape(const FailureModel& model, int nodes, int gpus_per_node, std::shared_ptr<const TimeDistribution> repair)
    : injector_(model, nodes, gpus_per_node), repair_(std::move(repair)) {
  events_.reserve(1024);
}

void FailureTape::reset(std::uint64_t seed) {
  injector_.reset(run_seed(seed, 0, kFailureStream), 0);
  repair_rng_.reseed(run_seed(seed, 0, kRepairStream));
  events_.clear();
}

void FailureTape::draw() {
  // As JobSimulator::recover consumes a failure of a job that does not shrink: the part is renewed (a spare
  // swapped in, or the slot waiting for a repaired node), and a failure that needs a new node draws its repair.
  const FailureEvent& f = injector_.peek();
  TapeEvent e;
  e.time_s = f.time_s;
  e.needs_replacement = f.needs_replacement;
  if (f.needs_replacement) e.repair_s = repair_ ? repair_->quantile(repair_rng_.uniform()) : kInf;
  events_.push_back(e);
  if (std::isfinite(f.time_s)) injector_.renew();
}

// ---- Timeline --------------------------------------------------------------------------------------

TimelineKey TimelineKey::of(const JobSimConfig& c, double mtbf_factor) {
  TimelineKey k;
  k.mtbf_factor = mtbf_factor;
  k.spare_nodes = c.spare_nodes;
  k.detection_s = c.detection_s;
  k.drain_s = c.drain_s;
  k.reschedule_s = c.reschedule_s;
  k.restart_s = c.restart_s;
  k.reload_s = c.reload_s;
  k.warmup_s = c.warmup_s;
  k.fixed_recovery_s = c.fixed_recovery_s;
  k.window_s = c.window_s;
  k.max_events = c.max_events;
  return k;
}

PoolReplay::PoolReplay(FailureTape* tape, double mtbf_factor, int spare_nodes) : tape_(tape), factor_(mtbf_factor), spare_nodes_(spare_nodes) {
  events_.reserve(1024);
  repairs_.reserve(static_cast<std::size_t>(std::max(0, spare_nodes)) + 256);
  reset();
}

void PoolReplay::reset() {
  events_.clear();
  repairs_.clear();
  spares_ = spare_nodes_;
}

void PoolReplay::resolve() {
  // JobSimulator::recover's pool for a job that does not shrink: nodes back from repair by now join the spares;
  // a spare is swapped in, or the job waits for the first node back (possibly the failed one).
  const TapeEvent& e = tape_->at(events_.size());
  Event out;
  out.time_s = e.time_s * factor_;
  out.needs_replacement = e.needs_replacement;
  if (e.needs_replacement) {
    const double now = out.time_s;
    while (!repairs_.empty() && repairs_.front() <= now) {
      std::pop_heap(repairs_.begin(), repairs_.end(), sooner);
      repairs_.pop_back();
      ++spares_;
    }
    repairs_.push_back(now + e.repair_s);
    std::push_heap(repairs_.begin(), repairs_.end(), sooner);
    if (spares_ > 0) {
      --spares_;
    } else {
      std::pop_heap(repairs_.begin(), repairs_.end(), sooner);
      out.ready_s = repairs_.back();
      repairs_.pop_back();
    }
  }
  events_.push_back(out);
}

Timeline::Timeline(PoolReplay* pool, const TimelineKey& key) : pool_(pool), key_(key) {
  stretches_.reserve(1024);
  reset();
}

void Timeline::reset() {
  stretches_.clear();
  next_ = 0;
  failures_ = 0;
}

void Timeline::extend() {
  Stretch s;
  const double window = key_.window_s;
  s.start = stretches_.empty() ? 0.0 : stretches_.back().resume;
  s.crash = std::isfinite(s.start) && s.start < window ? pool_->time_of(next_) : kInf;
  s.resume = kInf;
  if (!(s.crash < window)) {  // the run ends in this stretch: no recovery to build
    stretches_.push_back(s);
    return;
  }
  // JobSimulator::recover for a job that does not shrink, failure by failure (see there); the pool replay
  // says which failures wait for a node and until when.
  const double fail_time = s.crash;
  const bool fixed = key_.fixed_recovery_s >= 0;
  const double before = fixed ? 0.0 : key_.detection_s + key_.drain_s;
  double start = fail_time, ready = fail_time, resume = fail_time;
  bool swapped = false;
  s.interruptions = 1;
  for (;;) {
    const PoolReplay::Event& e = pool_->at(next_);
    if (e.needs_replacement) {
      ready = std::max(ready, e.ready_s);
      swapped = true;
      if (e.ready_s > -kInf) s.waited = true;
    }
    ++next_;
    const double after = fixed ? key_.fixed_recovery_s : (swapped ? key_.reschedule_s : 0.0) + key_.restart_s + key_.reload_s + key_.warmup_s;
    resume = std::max(start + before, ready) + after;
    if (++failures_ >= key_.max_events) s.truncated = true;
    if (!std::isfinite(resume) || s.truncated) break;
    const double next = pool_->time_of(next_);
    if (next < resume && next < window) {  // failed again before training resumed: the recovery starts over
      ++s.interruptions;
      start = next;
      continue;
    }
    break;
  }
  if (!std::isfinite(resume)) {  // nothing comes back: the rest of the window is spent waiting
    s.wait_s = std::isfinite(window) ? std::max(0.0, window - fail_time) : 0.0;
    s.recovery_s = 0;
    s.resume = kInf;
  } else {
    s.wait_s = std::clamp(ready - (fail_time + before), 0.0, std::max(0.0, resume - fail_time - (fixed ? key_.fixed_recovery_s : 0.0)));
    s.recovery_s = (resume - fail_time) - s.wait_s;
    s.resume = resume;
  }
  stretches_.push_back(s);
}

// ---- Fold ------------------------------------------------------------------------------------------

namespace {

// Up to kLanes variants over the same timeline in lockstep: the stretches are shared (a timeline does not depend
// on the checkpoint cycle), so every variant reads each stretch once, and their independent arithmetic overlaps.
// Per variant, exactly JobSimulator::run's arithmetic for a job that does not shrink (see there), on local
// accumulators (no stores through pointers the compiler must assume alias the stretches).
constexpr std::size_t kLanes = 8;

void fold_lanes(const JobSimConfig* const* configs, std::size_t n, Timeline& timeline, RunResult* out, bool* waited_out) {
  const double window = timeline.key().window_s;
  std::optional<CheckpointCycle> cycle[kLanes];
  double speed[kLanes], work[kLanes], p[kLanes], checkpoint[kLanes], rework[kLanes], wait[kLanes], recovery[kLanes];
  double last_wait[kLanes], last_recovery[kLanes];
  int interruptions[kLanes], crashes[kLanes];
  bool waited[kLanes], unit_speed[kLanes];
  std::size_t active[kLanes];
  for (std::size_t i = 0; i < n; ++i) {
    const JobSimConfig& c = *configs[i];
    cycle[i].emplace(c);
    speed[i] = c.elastic_speed.empty() ? 1.0 : c.elastic_speed.front();
    unit_speed[i] = speed[i] == 1.0;  // x / 1 and 1 * x are x exactly: skip them
    work[i] = c.work_s;
    p[i] = checkpoint[i] = rework[i] = wait[i] = recovery[i] = last_wait[i] = last_recovery[i] = 0;
    interruptions[i] = crashes[i] = 0;
    waited[i] = false;
    active[i] = i;
    out[i] = RunResult{};
  }
  auto finish = [&](std::size_t i) {  // the accumulators into the result (the other fields set where it ended)
    RunResult& r = out[i];
    r.checkpoint_s = checkpoint[i];
    r.rework_s = rework[i];
    r.wait_s = wait[i];
    r.recovery_s = recovery[i];
    r.interruptions = interruptions[i];
    r.crashes = crashes[i];
    if (waited_out) waited_out[i] = waited[i];
  };
  std::size_t m = n;
  double t = 0;
  bool truncated = false;
  for (std::size_t j = 0; m > 0; ++j) {
    if (truncated || !std::isfinite(t) || t >= window) {
      for (std::size_t a = 0; a < m; ++a) {
        const std::size_t i = active[a];
        RunResult& r = out[i];
        r.truncated = truncated;
        r.wall_s = std::min(t, window);
        r.progress_s = p[i];
        if (t > window && std::isfinite(t)) {
          const double over = t - window, cut_recovery = std::min(over, last_recovery[i]);
          recovery[i] = std::max(0.0, recovery[i] - cut_recovery);
          wait[i] = std::max(0.0, wait[i] - std::min(over - cut_recovery, last_wait[i]));
        }
        finish(i);
      }
      return;
    }
    const Stretch& st = timeline.at(j);
    const double tf = st.crash, limit = std::min(tf, window), st_wait = st.wait_s, st_recovery = st.recovery_s, resume = st.resume;
    const int st_interruptions = st.interruptions;
    const bool st_waited = st.waited, st_truncated = st.truncated, resumes = std::isfinite(resume);
    for (std::size_t a = 0; a < m;) {  // the training finishes
      const std::size_t i = active[a];
      const double left = unit_speed[i] ? work[i] - p[i] : (work[i] - p[i]) / speed[i];
      const double t_done = cycle[i]->finish_time(t, left, limit);
      if (t_done <= tf && t_done <= window) {
        checkpoint[i] += cycle[i]->advance(t_done - t).blocked;
        RunResult& r = out[i];
        r.wall_s = t_done;
        r.progress_s = work[i];
        r.finished = true;
        finish(i);
        active[a] = active[--m];
      } else {
        ++a;
      }
    }
    if (window <= tf) {  // the window ends with the job running
      for (std::size_t a = 0; a < m; ++a) {
        const std::size_t i = active[a];
        const CheckpointCycle::Advance c = cycle[i]->advance(window - t);
        checkpoint[i] += c.blocked;
        RunResult& r = out[i];
        r.wall_s = window;
        r.progress_s = p[i] + (unit_speed[i] ? c.compute : speed[i] * c.compute);
        finish(i);
      }
      return;
    }
    // A failure while running or checkpointing: back to the last durable checkpoint, then the recovery.
    for (std::size_t a = 0; a < m; ++a) {
      const std::size_t i = active[a];
      const CheckpointCycle::Advance c = cycle[i]->advance(tf - t);
      checkpoint[i] += c.blocked;
      interruptions[i] += st_interruptions;
      ++crashes[i];
      if (unit_speed[i]) {
        rework[i] += c.compute - c.durable_compute;
        p[i] += c.durable_compute;
      } else {
        rework[i] += speed[i] * (c.compute - c.durable_compute);
        p[i] += speed[i] * c.durable_compute;
      }
      waited[i] = waited[i] || st_waited;
      if (resumes) {
        last_wait[i] = st_wait;
        last_recovery[i] = st_recovery;
        wait[i] += st_wait;
        recovery[i] += st_recovery;
      } else {
        wait[i] += st_wait;
      }
    }
    t = resume;
    truncated = st_truncated;
  }
}

}  // namespace

void fold(const JobSimConfig* const* configs, std::size_t n, Timeline& timeline, RunResult* out, bool* waited) {
  for (std::size_t begin = 0; begin < n; begin += kLanes)
    fold_lanes(configs + begin, std::min(kLanes, n - begin), timeline, out + begin, waited ? waited + begin : nullptr);
}

RunResult fold(const JobSimConfig& config, Timeline& timeline) {
  RunResult r;
  const JobSimConfig* c = &config;
  fold(&c, 1, timeline, &r);
  return r;
}

// ---- Many variants on the same seeds ------------------------------------------------------------------

namespace {

// What the statistics need of every run (the rest is summed per chunk of runs, in run order).
struct VariantRuns {
  std::vector<double> wall, progress;
  std::vector<int> interruptions;
  struct Sums {
    double rework = 0, crashes = 0, finished = 0, truncated = 0, checkpoint = 0, recovery = 0, wait = 0, shrunk = 0, reconfigure = 0;
  };
  std::vector<Sums> chunks;
};

JobStatistics statistics(const VariantRuns& v, int gpus) {
  JobStatistics j;
  const std::size_t n = v.wall.size();
  j.runs = static_cast<int>(n);
  if (n == 0) return j;
  std::vector<double> ettr(n), inter(n), lost(n);
  for (std::size_t i = 0; i < n; ++i) {
    RunResult r;  // the same arithmetic as summarize_runs
    r.wall_s = v.wall[i];
    r.progress_s = v.progress[i];
    ettr[i] = r.ettr();
    inter[i] = v.interruptions[i];
    lost[i] = std::max(0.0, r.wall_s - r.progress_s) * gpus / kSecondsPerHour;
  }
  VariantRuns::Sums s;
  for (const auto& c : v.chunks) {
    s.rework += c.rework;
    s.crashes += c.crashes;
    s.finished += c.finished;
    s.truncated += c.truncated;
    s.checkpoint += c.checkpoint;
    s.recovery += c.recovery;
    s.wait += c.wait;
    s.shrunk += c.shrunk;
    s.reconfigure += c.reconfigure;
  }
  const double runs = static_cast<double>(n);
  j.ettr = summarize(std::move(ettr), 0.0, 1.0);
  j.interruptions = summarize(std::move(inter), 0.0);
  j.wall_s = summarize(v.wall, 0.0);
  j.progress_s = summarize(v.progress, 0.0);
  j.lost_gpu_hours = summarize(std::move(lost), 0.0);
  j.lost_work_per_crash_s = s.crashes > 0 ? s.rework / s.crashes : 0;
  j.crashes_mean = s.crashes / runs;
  j.rework_s = s.rework / runs;
  j.checkpoint_s = s.checkpoint / runs;
  j.recovery_s = s.recovery / runs;
  j.wait_s = s.wait / runs;
  j.shrunk_s = s.shrunk / runs;
  j.reconfigure_s = s.reconfigure / runs;
  j.finished_fraction = s.finished / runs;
  j.truncated_runs = static_cast<int>(s.truncated);
  return j;
}

}  // namespace

std::vector<JobStatistics> simulate_variants(const FailureModel& model, int gpus, const std::vector<StudyVariant>& variants,
                                             const MonteCarloOptions& options) {
  const int runs = std::max(0, options.runs);
  const std::size_t nv = variants.size();
  // Every variant keeps ~20 bytes a run until its statistics are taken: beyond options.max_variant_runs the variants
  // go in groups, each drawing the failures again (with --runs in the hundreds of thousands).
  const double max_cells = options.max_variant_runs;
  if (nv > 1 && static_cast<double>(runs) * static_cast<double>(nv) > max_cells) {
    const auto per_group = static_cast<std::size_t>(std::max(1.0, max_cells / std::max(1, runs)));
    const std::size_t groups = (nv + per_group - 1) / per_group;
    ProgressCounter* parent = options.progress;
    ProgressCounter sub;
    if (parent && parent->report && parent->planned_runs > 0)
      sub.report = [parent, runs](double f) { parent->report(std::min(1.0, (parent->done_runs + f * runs) / parent->planned_runs)); };
    sub.planned_runs = static_cast<double>(groups) * runs;
    MonteCarloOptions o = options;
    o.progress = parent ? &sub : nullptr;
    std::vector<JobStatistics> out;
    for (std::size_t begin = 0; begin < nv; begin += per_group) {
      const std::vector<StudyVariant> part(variants.begin() + static_cast<std::ptrdiff_t>(begin),
                                           variants.begin() + static_cast<std::ptrdiff_t>(std::min(nv, begin + per_group)));
      for (auto& st : simulate_variants(model, gpus, part, o)) out.push_back(std::move(st));
    }
    if (parent) {
      parent->done_runs += runs;
      if (parent->report && parent->planned_runs > 0) parent->report(std::min(1.0, parent->done_runs / parent->planned_runs));
    }
    return out;
  }
  // The tape follows the first variant; others with its nodes and repairs replay it.
  const StudyVariant* ref = variants.empty() ? nullptr : &variants.front();
  std::vector<int> timeline_of(nv, -1);  // -1: simulated in full
  std::vector<TimelineKey> keys;
  for (std::size_t v = 0; v < nv; ++v) {
    const JobSimConfig& c = variants[v].config;
    if (c.nodes != ref->config.nodes || c.gpus_per_node != ref->config.gpus_per_node || c.repair != ref->config.repair) continue;
    const TimelineKey k = TimelineKey::of(c, variants[v].mtbf_factor);
    auto it = std::find(keys.begin(), keys.end(), k);
    timeline_of[v] = static_cast<int>(it - keys.begin());
    if (it == keys.end()) keys.push_back(k);
  }
  // The variants of each timeline, folded together; every variant's run result in a slot.
  struct Group {
    std::vector<const JobSimConfig*> configs;
    std::size_t first = 0;  // its first slot
  };
  std::vector<Group> groups(keys.size());
  for (std::size_t v = 0; v < nv; ++v)
    if (timeline_of[v] >= 0) groups[static_cast<std::size_t>(timeline_of[v])].configs.push_back(&variants[v].config);
  std::vector<std::size_t> slot(nv);
  std::size_t slots = 0;
  for (auto& g : groups) {
    g.first = slots;
    slots += g.configs.size();
  }
  {
    std::vector<std::size_t> filled(groups.size(), 0);
    for (std::size_t v = 0; v < nv; ++v)
      if (timeline_of[v] >= 0) {
        const auto g = static_cast<std::size_t>(timeline_of[v]);
        slot[v] = groups[g].first + filled[g]++;
      } else {
        slot[v] = slots++;
      }
  }
  std::vector<FailureModel> models(nv, model);  // for the variants simulated in full (elastic ones when they shrink)
  for (std::size_t v = 0; v < nv; ++v)
    if ((timeline_of[v] < 0 || variants[v].config.elastic) && variants[v].mtbf_factor != 1) models[v].scale_rates(1 / variants[v].mtbf_factor);

  std::vector<VariantRuns> out(nv);
  const int chunks = (runs + kChunk - 1) / kChunk;
  for (auto& v : out) {
    v.wall.resize(static_cast<std::size_t>(runs));
    v.progress.resize(static_cast<std::size_t>(runs));
    v.interruptions.resize(static_cast<std::size_t>(runs));
    v.chunks.resize(static_cast<std::size_t>(chunks));
  }
  if (runs > 0 && nv > 0) {
    struct Worker {
      std::unique_ptr<FailureTape> tape;
      std::vector<std::unique_ptr<PoolReplay>> pools;
      std::vector<Timeline> timelines;
      std::vector<std::unique_ptr<JobSimulator>> full;
      std::vector<RunResult> results;  // this run's, by slot
      std::unique_ptr<bool[]> waited;  // by slot: a failure found no spare free
    };
    auto make_worker = [&] {
      auto w = std::make_unique<Worker>();
      if (!keys.empty()) {
        w->tape = std::make_unique<FailureTape>(model, ref->config.nodes, ref->config.gpus_per_node, ref->config.repair);
        w->timelines.reserve(keys.size());
        for (const auto& k : keys) {
          auto pool = std::find_if(w->pools.begin(), w->pools.end(),
                                   [&](const auto& p) { return p->mtbf_factor() == k.mtbf_factor && p->spare_nodes() == k.spare_nodes; });
          if (pool == w->pools.end()) {
            w->pools.push_back(std::make_unique<PoolReplay>(w->tape.get(), k.mtbf_factor, k.spare_nodes));
            pool = w->pools.end() - 1;
          }
          w->timelines.emplace_back(pool->get(), k);
        }
      }
      w->results.resize(slots);
      w->waited = std::make_unique<bool[]>(slots);
      w->full.resize(nv);
      for (std::size_t v = 0; v < nv; ++v)
        if (timeline_of[v] < 0 || variants[v].config.elastic) w->full[v] = std::make_unique<JobSimulator>(variants[v].config, models[v]);
      return w;
    };
    const int threads = options.threads > 0 ? options.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    for_each_chunk(runs, kChunk, threads, options.progress, make_worker, [&](std::unique_ptr<Worker>& worker, int chunk, int begin, int end) {
      Worker& w = *worker;
      for (int i = begin; i < end; ++i) {
        const std::uint64_t seed = run_seed(options.seed, static_cast<std::uint64_t>(i));
        if (w.tape) {
          w.tape->reset(seed);
          for (auto& p : w.pools) p->reset();
          for (auto& tl : w.timelines) tl.reset();
        }
        const auto at = static_cast<std::size_t>(i);
        for (std::size_t k = 0; k < groups.size(); ++k)
          fold(groups[k].configs.data(), groups[k].configs.size(), w.timelines[k], w.results.data() + groups[k].first,
               w.waited.get() + groups[k].first);
        for (std::size_t v = 0; v < nv; ++v) {
          // An elastic variant that met no failure without a spare never shrank: its run is the replay's.
          const bool full = timeline_of[v] < 0 || (variants[v].config.elastic && w.waited[slot[v]]);
          const RunResult& r = full ? (w.results[slot[v]] = w.full[v]->run(seed)) : w.results[slot[v]];
          VariantRuns& o = out[v];
          o.wall[at] = r.wall_s;
          o.progress[at] = r.progress_s;
          o.interruptions[at] = r.interruptions;
          VariantRuns::Sums& s = o.chunks[static_cast<std::size_t>(chunk)];
          s.rework += r.rework_s;
          s.crashes += r.crashes;
          s.finished += r.finished ? 1 : 0;
          s.truncated += r.truncated ? 1 : 0;
          s.checkpoint += r.checkpoint_s;
          s.recovery += r.recovery_s;
          s.wait += r.wait_s;
          s.shrunk += r.shrunk_s;
          s.reconfigure += r.reconfigure_s;
        }
      }
    });
  }
  std::vector<JobStatistics> stats;
  stats.reserve(nv);
  for (const auto& v : out) stats.push_back(statistics(v, gpus));
  return stats;
}

}  // namespace trainsim::sim
