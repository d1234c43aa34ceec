#include "sim/reliability/job_montecarlo.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

#include "models/core/statistics.hpp"
#include "models/core/units.hpp"
#include "sim/parallel_chunks.hpp"

namespace trainsim::sim {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr auto sooner = [](double a, double b) { return a > b; };  // min-heap order for std::*_heap
// Independent random streams of one run.
constexpr std::uint64_t kFailureStream = 1, kRepairStream = 2;
}  // namespace

double JobSimConfig::recovery_s(bool replace_node) const {
  if (fixed_recovery_s >= 0) return fixed_recovery_s;
  return detection_s + drain_s + (replace_node ? reschedule_s : 0) + restart_s + reload_s + warmup_s;
}

JobSimulator::JobSimulator(const JobSimConfig& config, const FailureModel& model)
    : cfg_(config), cycle_(config), injector_(model, config.nodes, config.gpus_per_node) {
  if (cfg_.elastic_speed.empty()) cfg_.elastic_speed = {1.0};
  if (!cfg_.elastic) cfg_.elastic_speed.resize(1);
  // The job cannot lose more nodes than it has.
  if (cfg_.elastic_speed.size() > static_cast<std::size_t>(std::max(1, cfg_.nodes))) cfg_.elastic_speed.resize(static_cast<std::size_t>(std::max(1, cfg_.nodes)));
  repairs_.reserve(static_cast<std::size_t>(cfg_.spare_nodes) + 256);
  out_.reserve(cfg_.elastic_speed.size());
}

void JobSimulator::take_returns(double now) {
  while (!repairs_.empty() && repairs_.front() <= now) {
    std::pop_heap(repairs_.begin(), repairs_.end(), sooner);
    repairs_.pop_back();
    if (!out_.empty()) {
      injector_.restore_node(out_.back(), now);  // the repaired node rejoins the shrunk job at its next start
      out_.pop_back();
    } else {
      ++spares_;
    }
  }
}

void JobSimulator::grow(double now) {
  take_returns(now);
  while (!out_.empty() && spares_ > 0) {
    --spares_;
    injector_.restore_node(out_.back(), now);
    out_.pop_back();
  }
}

double JobSimulator::recover(double fail_time, RunResult* r) {
  const bool fixed = cfg_.fixed_recovery_s >= 0;
  const double before = fixed ? 0.0 : cfg_.detection_s + cfg_.drain_s;  // overlaps any wait for a node
  double start = fail_time, ready = fail_time;
  bool swapped = false;
  double resume = fail_time;
  for (;;) {
    const FailureEvent& f = injector_.peek();
    const double now = f.time_s;
    if (f.needs_replacement) {
      take_returns(now);
      const double back = cfg_.repair ? now + cfg_.repair->quantile(repair_rng_.uniform()) : kInf;
      if (spares_ > 0) {  // swap in a spare; the failed node goes to repair and then to the pool
        --spares_;
        repairs_.push_back(back);
        std::push_heap(repairs_.begin(), repairs_.end(), sooner);
        swapped = true;
        injector_.renew();
      } else if (cfg_.elastic && out_.size() + 1 < cfg_.elastic_speed.size()) {  // continue without it
        repairs_.push_back(back);
        std::push_heap(repairs_.begin(), repairs_.end(), sooner);
        out_.push_back(f.node);
        injector_.take_down();
      } else {  // wait for the first node back from repair (possibly this one)
        repairs_.push_back(back);
        std::push_heap(repairs_.begin(), repairs_.end(), sooner);
        std::pop_heap(repairs_.begin(), repairs_.end(), sooner);
        ready = std::max(ready, repairs_.back());
        repairs_.pop_back();
        swapped = true;
        // The slot is treated as renewed at the failure: a second failure of the same slot during the
        // wait is possible in the model (rare: a node's MTBF is months, a repair hours).
        injector_.renew();
      }
    } else {
      injector_.renew();  // software: restart in place
    }
    const double after = fixed ? cfg_.fixed_recovery_s : (swapped ? cfg_.reschedule_s : 0.0) + cfg_.restart_s + cfg_.reload_s + cfg_.warmup_s;
    resume = std::max(start + before, ready) + after;
    if (++failures_ >= cfg_.max_events) truncated_ = true;  // the run ends after this recovery
    if (!std::isfinite(resume) || truncated_) break;         // no node will ever come back
    const double next = injector_.peek().time_s;
    if (next < resume && next < cfg_.window_s) {  // failed again before training resumed: the recovery starts over
      ++r->interruptions;
      start = next;
      continue;
    }
    break;
  }
  if (!std::isfinite(resume)) {  // nothing comes back: the rest of the window is spent waiting
    r->wait_s += std::isfinite(cfg_.window_s) ? std::max(0.0, cfg_.window_s - fail_time) : 0.0;
    return kInf;
  }
  // Waiting for nodes: from the first failure's detection until the last node needed was back (failures
  // in the meantime add nodes to wait for); the rest of the downtime is recovery proper.
  const double wait = std::clamp(ready - (fail_time + before), 0.0, std::max(0.0, resume - fail_time - (fixed ? cfg_.fixed_recovery_s : 0.0)));
  last_wait_ = wait;
  last_recovery_ = (resume - fail_time) - wait;
  r->wait_s += last_wait_;
  r->recovery_s += last_recovery_;
  return resume;
}

RunResult JobSimulator::run(std::uint64_t seed) {
  RunResult r;
  injector_.reset(run_seed(seed, 0, kFailureStream), 0);
  repair_rng_.reseed(run_seed(seed, 0, kRepairStream));
  repairs_.clear();
  out_.clear();
  spares_ = cfg_.spare_nodes;
  last_wait_ = last_recovery_ = 0;
  failures_ = 0;
  truncated_ = false;
  const double window = cfg_.window_s, work = cfg_.work_s;
  double t = 0, p = 0;  // start of the running stretch (a fresh checkpoint cycle) and its durable progress
  for (;;) {
    if (truncated_ || !std::isfinite(t) || t >= window) {
      r.truncated = truncated_;
      r.wall_s = std::min(t, window);
      r.progress_s = p;
      // A recovery that runs past the end of the window counts only up to it: cut its end (the restart),
      // then its wait for nodes.
      if (t > window && std::isfinite(t)) {
        const double over = t - window, cut_recovery = std::min(over, last_recovery_);
        r.recovery_s = std::max(0.0, r.recovery_s - cut_recovery);
        r.wait_s = std::max(0.0, r.wait_s - std::min(over - cut_recovery, last_wait_));
      }
      break;
    }
    const double s = speed();
    const double tf = injector_.peek().time_s;
    const double tx = (!out_.empty() && !repairs_.empty()) ? repairs_.front() : kInf;
    const double first_stop = std::min(tf, tx);
    const double t_done = cycle_.finish_time(t, (work - p) / s, std::min(first_stop, window));
    if (t_done <= first_stop && t_done <= window) {  // the training finishes
      const CheckpointCycle::Advance c = cycle_.advance(t_done - t);
      r.checkpoint_s += c.blocked;
      if (!out_.empty()) r.shrunk_s += t_done - t;
      r.wall_s = t_done;
      r.progress_s = work;
      r.finished = true;
      break;
    }
    if (window <= first_stop) {  // the window ends with the job running
      const CheckpointCycle::Advance c = cycle_.advance(window - t);
      r.checkpoint_s += c.blocked;
      if (!out_.empty()) r.shrunk_s += window - t;
      r.wall_s = window;
      r.progress_s = p + s * c.compute;
      break;
    }
    const double dt = first_stop - t;
    const CheckpointCycle::Advance c = cycle_.advance(dt);
    r.checkpoint_s += c.blocked;
    if (!out_.empty()) r.shrunk_s += dt;
    if (tx < tf) {
      // Elastic: a repaired node is back. Planned stop: checkpoint (nothing lost), restart on more nodes.
      p += s * c.compute;
      grow(tx);
      const double overhead = cfg_.blocking_s + cfg_.persist_s + (cfg_.fixed_recovery_s >= 0 ? cfg_.fixed_recovery_s : cfg_.restart_s + cfg_.warmup_s);
      const double end = tx + overhead;
      const double next = injector_.peek().time_s;
      if (next < end) {  // a failure during the reconfiguration: a recovery from there
        r.reconfigure_s += next - tx;
        ++r.interruptions;
        t = recover(next, &r);
      } else {
        r.reconfigure_s += overhead;
        t = end;
      }
      grow(t);
      continue;
    }
    // A failure while running or checkpointing: back to the last durable checkpoint.
    ++r.interruptions;
    ++r.crashes;
    r.rework_s += s * (c.compute - c.durable_compute);
    p += s * c.durable_compute;
    t = recover(tf, &r);
    grow(t);
  }
  return r;
}

std::vector<RunResult> run_job_montecarlo(const JobSimConfig& config, const FailureModel& model, const MonteCarloOptions& options) {
  const int runs = std::max(0, options.runs);
  std::vector<RunResult> results(static_cast<std::size_t>(runs));
  const int threads = options.threads > 0 ? options.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for_each_chunk(runs, std::clamp(runs / (std::min(threads, std::max(1, runs)) * 16), 1, 64), threads, options.progress,
                 [&] { return JobSimulator(config, model); },
                 [&](JobSimulator& sim, int, int begin, int end) {
                   for (int i = begin; i < end; ++i)
                     results[static_cast<std::size_t>(i)] = sim.run(run_seed(options.seed, static_cast<std::uint64_t>(i)));
                 });
  return results;
}

Statistic summarize(std::vector<double> v, double lowest, double highest) {
  Statistic s;
  s.n = static_cast<int>(v.size());
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / s.n;
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.stddev = s.n > 1 ? std::sqrt(ss / (s.n - 1)) : 0;
  s.p05 = sorted_quantile(v, 0.05);
  s.p50 = sorted_quantile(v, 0.50);
  s.p95 = sorted_quantile(v, 0.95);
  const double half = 1.959964 * s.stddev / std::sqrt(static_cast<double>(s.n));
  s.ci95_low = std::clamp(s.mean - half, lowest, highest);
  s.ci95_high = std::clamp(s.mean + half, lowest, highest);
  return s;
}

JobStatistics summarize_runs(const std::vector<RunResult>& runs, int gpus) {
  JobStatistics j;
  j.runs = static_cast<int>(runs.size());
  if (runs.empty()) return j;
  std::vector<double> ettr, inter, wall, progress, lost;
  ettr.reserve(runs.size());
  inter.reserve(runs.size());
  wall.reserve(runs.size());
  progress.reserve(runs.size());
  lost.reserve(runs.size());
  double rework = 0, crashes = 0, finished = 0;
  for (const auto& r : runs) {
    ettr.push_back(r.ettr());
    inter.push_back(r.interruptions);
    wall.push_back(r.wall_s);
    progress.push_back(r.progress_s);
    lost.push_back(std::max(0.0, r.wall_s - r.progress_s) * gpus / kSecondsPerHour);
    rework += r.rework_s;
    crashes += r.crashes;
    finished += r.finished ? 1 : 0;
    j.truncated_runs += r.truncated ? 1 : 0;
    j.checkpoint_s += r.checkpoint_s;
    j.recovery_s += r.recovery_s;
    j.wait_s += r.wait_s;
    j.shrunk_s += r.shrunk_s;
    j.reconfigure_s += r.reconfigure_s;
  }
  const double n = static_cast<double>(runs.size());
  j.ettr = summarize(std::move(ettr), 0.0, 1.0);
  j.interruptions = summarize(std::move(inter), 0.0);
  j.wall_s = summarize(std::move(wall), 0.0);
  j.progress_s = summarize(std::move(progress), 0.0);
  j.lost_gpu_hours = summarize(std::move(lost), 0.0);
  j.lost_work_per_crash_s = crashes > 0 ? rework / crashes : 0;
  j.crashes_mean = crashes / n;
  j.rework_s = rework / n;
  j.checkpoint_s /= n;
  j.recovery_s /= n;
  j.wait_s /= n;
  j.shrunk_s /= n;
  j.reconfigure_s /= n;
  j.finished_fraction = finished / n;
  return j;
}

}  // namespace trainsim::sim
