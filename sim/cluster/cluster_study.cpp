#include "sim/cluster/cluster_study.hpp"

#include <algorithm>
#include <chrono>
#include <set>

#include "models/core/errors.hpp"
#include "models/core/statistics.hpp"
#include "models/core/units.hpp"
#include "sim/cluster/cluster_job.hpp"
#include "sim/cluster/workload/fill_workload.hpp"

namespace trainsim::sim::cluster {
namespace {

// What a policy assumed that the reader should know: an oracle for runtimes, a policy missing its settings.
std::vector<std::string> policy_notes(const std::vector<PolicyChoice>& choices, const ClusterSpec& cluster, const std::vector<ClusterJob>& jobs) {
  auto uses = [&](const std::string& ordering) {
    return std::any_of(choices.begin(), choices.end(), [&](const PolicyChoice& c) { return c.ordering == ordering; });
  };
  std::vector<std::string> notes;
  const auto no_walltime = std::count_if(jobs.begin(), jobs.end(), [](const ClusterJob& j) { return j.walltime_s <= 0; });
  if ((uses("backfill") || uses("easy") || uses("multifactor")) && no_walltime > 0)
    notes.push_back(std::to_string(no_walltime) + " of " + std::to_string(jobs.size()) +
                    " jobs give no walltime: backfill takes their true runtimes as the estimate (an oracle; a real scheduler sees only "
                    "the requested limits, usually well above the runtime)");
  if (uses("quota") && cluster.queues.empty())
    notes.push_back("quota: the cluster defines no queues, so no job has a quota and every job only borrows idle GPUs (quota runs as "
                    "arrival order that skips jobs which do not fit); define cluster.queues to compare quotas");
  if (uses("multifactor")) {
    const auto users = std::count_if(jobs.begin(), jobs.end(), [&](const ClusterJob& j) { return !j.user.empty() && j.user != jobs.front().user; });
    if (users == 0)
      notes.push_back("multifactor: every job belongs to one user (or the trace names none), so fair-share orders nothing; the order is by "
                      "age, size and QOS");
  }
  if (uses("las") && cluster.las_promote_knob <= 0)
    notes.push_back("las: no starvation guard (cluster.scheduler.las_promote_knob 0); jobs of a low queue can wait without bound "
                    "while short jobs keep arriving; waits include the time re-queued after preemptions");
  return notes;
}

// Whether the scheduler itself delays starts: a cycle between passes, a cost per pass, or a cap on admissions.
bool scheduler_delays(const ClusterSpec& c) { return c.cycle.period_s > 0 || c.cycle.cost_s > 0 || c.cycle.admissions_per_queue > 0; }

// The control plane's admission capacity (a cap per queue and cycle, every queue named and the default one) against
// the workload's arrivals, both a day.
void scheduler_throughput(const std::vector<ClusterJob>& jobs, ClusterRun& run) {
  const SchedulerCycle& cycle = run.cluster.cycle;
  if (jobs.size() > 1) {
    double first = jobs.front().submit_s, last = first;
    for (const ClusterJob& j : jobs) first = std::min(first, j.submit_s), last = std::max(last, j.submit_s);
    if (last > first) run.arrivals_per_day = static_cast<double>(jobs.size() - 1) / (last - first) * 86400;
  }
  if (cycle.period_s > 0 && cycle.admissions_per_queue > 0) {
    std::set<std::string> queues;
    for (const ClusterJob& j : jobs) queues.insert(j.queue);
    run.admissions_per_day = cycle.admissions_per_queue * static_cast<double>(queues.size()) * 86400 / cycle.period_s;
    if (run.arrivals_per_day > run.admissions_per_day)
      run.notes.push_back("scheduler: jobs arrive at " + format_count(run.arrivals_per_day) + " a day, more than the " +
                          format_count(run.admissions_per_day) + " a day its cycle admits (" + std::to_string(cycle.admissions_per_queue) +
                          " per queue every " + format_seconds(cycle.period_s) + "): the queue grows whatever the GPUs");
  }
}

// Jobs drawn from the trace (blocks of its own job sequence, or Poisson arrivals and lognormal durations) at the
// asked scale, and the note comparing the draw with the trace.
void synthesize(Trace& trace, const WorkloadShaping& shaping, ClusterRun& run) {
  SyntheticSpec spec = shaping.synthetic_spec;
  spec.cluster_gpus = run.cluster.total_gpus();
  for (const NodePool& p : run.cluster.pools) spec.max_gpus = std::max(spec.max_gpus, p.total_gpus());
  double scale = 1;
  const WorkloadFit fit = fit_workload(trace.jobs, shaping.trace_name);
  trace.jobs = synthesize_workload(fit, spec, &scale);
  trace.report.source = "synthetic (" + shaping.synthetic_model_name + "), fitted to " + shaping.trace_name;
  trace.report.jobs = trace.jobs.size();
  const WorkloadComparison cmp = compare_workloads(fit, trace.jobs, scale);
  run.synthetic_note = std::to_string(spec.jobs) + " jobs over " + format_seconds(spec.span_s) + " at load " + fixed(spec.load, 2) + " (durations x" +
                       fixed(scale, 3) + " of the trace's); arrival gaps' CV " + fixed(cmp.synthetic_gap_cv, 2) + " (trace " + fixed(cmp.trace_gap_cv, 2) +
                       "), arriving in the second of the previous job " + fixed(100 * cmp.synthetic_same_second, 1) + "% (trace " +
                       fixed(100 * cmp.trace_same_second, 1) + "%), median duration before scaling " + format_seconds(cmp.synthetic_median_duration_s) +
                       " (trace " + format_seconds(cmp.trace_median_duration_s) + ")";
}

// What the trace itself recorded as waits, scaled like its times, for comparison.
void recorded_waits(const std::vector<ClusterJob>& jobs, double time_scale, ClusterRun& run) {
  std::vector<double> recorded;
  for (const ClusterJob& j : jobs)
    if (j.recorded_wait_s >= 0) recorded.push_back(j.recorded_wait_s * time_scale);
  if (recorded.empty()) return;
  run.recorded_n = static_cast<int>(recorded.size());
  double sum = 0;
  for (double w : recorded) sum += w;
  run.recorded_mean_wait_s = sum / static_cast<double>(recorded.size());
  run.recorded_p50_wait_s = quantile(recorded, 0.5);
  run.recorded_p99_wait_s = quantile(recorded, 0.99);
}

}  // namespace

ShapedWorkload shape_workload(Trace trace, const WorkloadShaping& shaping, ClusterRun& run) {
  ShapedWorkload w;
  if (shaping.synthetic) {
    synthesize(trace, shaping, run);
    w.synthetic_span_s = shaping.synthetic_spec.span_s;
  }
  if (shaping.time_scale != 1)
    for (ClusterJob& j : trace.jobs) j.submit_s *= shaping.time_scale, j.duration_s *= shaping.time_scale, j.walltime_s *= shaping.time_scale;
  // The FGD experiment (Weng et al., ATC'23): pods arrive in a random order and never end; how much of the
  // cluster a placement fills before fragmentation leaves requests unplaceable. Each seed draws the order (and,
  // with fill_to, the pods added to inflate the workload) anew, as the paper's 10 seeds do.
  if (shaping.fill) {
    double asked = 0, asking = 0;
    for (const ClusterJob& j : trace.jobs) asked += gpus_held(j, run.cluster.gpu_sharing), asking += j.gpus > 0;
    // The pods an inflation would draw, at the trace's mean request: bounded like a synthetic workload.
    const double drawn = asked > 0 ? shaping.fill_to * run.cluster.total_gpus() / (asked / asking) : 0;
    if (drawn > 10'000'000)
      throw InputError(shaping.fill_to_path, format_number(shaping.fill_to),
                       "at most 10,000,000 pods drawn (this trace's pods ask " + fixed(asked / asking, 3) + " GPUs each on average; this cluster would need " +
                           fixed(drawn, 0) + ")");
    w.fill_pods = std::move(trace.jobs);
    trace.jobs = fill_workload(w.fill_pods, shaping.fill_to, run.cluster.total_gpus(), run.cluster.gpu_sharing, kFillDurationS, shaping.seed);
    trace.report.jobs = trace.jobs.size();
    run.fill_to = shaping.fill_to;
    run.fill = true;
  }
  if (shaping.rigid)
    for (ClusterJob& j : trace.jobs) j.elastic_min = j.elastic_max = 0;
  run.workload = trace.report;
  run.time_scale = shaping.time_scale;
  recorded_waits(trace.jobs, shaping.time_scale, run);
  w.jobs = std::move(trace.jobs);
  return w;
}

void run_study(ClusterRun& run, const std::vector<PolicyChoice>& choices, const ShapedWorkload& workload, const StudyOptions& options,
               const StudyProgress& progress) {
  run.notes = policy_notes(choices, run.cluster, workload.jobs);
  run.seeds = options.seeds;
  scheduler_throughput(workload.jobs, run);
  const double span_s = workload.synthetic_span_s * run.time_scale;
  for (const PolicyChoice& choice : choices) {
    progress.start(choice.text);
    ClusterSimOptions o;
    o.policy = choice.text;
    o.horizon_s = options.horizon_s;
    o.sample_interval_s = options.sample_interval_s;
    o.span_s = span_s;
    const auto start = std::chrono::steady_clock::now();
    // Several seeds: the failures, repairs and reclaims drawn anew each run; the means and their intervals.
    std::vector<PolicyResult> runs;
    // With a scheduling cycle, its cost or an admission cap, each run again under a scheduler that passes at every
    // event at no cost: the difference in the mean wait is the time jobs wait for the scheduler itself.
    const bool rerun_ideal = scheduler_delays(run.cluster);
    ClusterSpec ideal = run.cluster;
    ideal.cycle = {};
    const double share = rerun_ideal ? 0.5 : 1.0;  // of a seed's work, the run itself
    const double seeds = options.seeds;
    double ideal_wait_sum = 0;
    for (int k = 0; k < options.seeds; ++k) {
      o.seed = options.seed + static_cast<std::uint64_t>(k);
      o.progress = [&progress, k, seeds, share](double done) { progress.update((k + share * done) / seeds); };
      // The fill experiment draws its pods anew per seed (their number varies with the draw), and stops at its
      // own last arrival; the first seed's draw is the workload the job and time-series files describe.
      std::vector<ClusterJob> redrawn;
      if (run.fill && k > 0)
        redrawn = fill_workload(workload.fill_pods, run.fill_to, run.cluster.total_gpus(), run.cluster.gpu_sharing, kFillDurationS, o.seed);
      const std::vector<ClusterJob>& jobs = redrawn.empty() ? workload.jobs : redrawn;
      if (run.fill && !jobs.empty()) o.horizon_s = jobs.back().submit_s + 1;
      runs.push_back(simulate_cluster(run.cluster, jobs, o));
      if (rerun_ideal) {
        o.progress = [&progress, k, seeds, share](double done) { progress.update((k + share + share * done) / seeds); };
        ideal_wait_sum += simulate_cluster(ideal, jobs, o).mean_wait_s;
      }
    }
    if (rerun_ideal) run.ideal_mean_wait_s.push_back(ideal_wait_sum / options.seeds);
    SeedStatistics spread;
    run.policies.push_back(options.seeds > 1 ? mean_over_seeds(runs, &spread) : std::move(runs.front()));
    run.spread.push_back(std::move(spread));
    run.wall_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    progress.finish();
  }
  // A synthetic workload's span is when its jobs arrive; the run goes on until the queue drains. Say how much longer.
  if (span_s > 0)
    for (const PolicyResult& p : run.policies)
      if (p.makespan_s > 1.05 * span_s)
        run.notes.push_back(p.name + ": the jobs arrive over " + format_seconds(span_s) + " and the last ends after " + format_seconds(p.makespan_s) +
                            " (the queue drains for " + format_seconds(p.makespan_s - span_s) +
                            "): util covers the whole run, \"delivered over the span\" the asked span only");
}

}  // namespace trainsim::sim::cluster
