#include "log_calibration.hpp"

#include <algorithm>
#include <cmath>

#include "calibrate/log_comparison.hpp"
#include "calibrate/reference_fit.hpp"
#include "models/core/errors.hpp"
#include "models/step/step.hpp"

namespace trainsim {

namespace {
double step_time(const Scenario& s, const FittedParameters& f) {
  return StepModel(s.model, s.training, s.hardware, nullptr, &f).estimate(s.parallel).time_s;
}
double measured_step_time_unchecked(const TrainingLog& log, const LogSummary& summary, const Scenario& plan, const std::string& path, std::string* basis) {
  if (summary.median_time_s > 0) {
    *basis = "median step time of " + std::to_string(summary.used) + " steps after " + std::to_string(summary.warmup) + " of warm-up";
    return summary.median_time_s;
  }
  if (summary.median_tokens_per_s_per_gpu > 0) {
    *basis = "median tokens/s per GPU of " + std::to_string(summary.used) + " steps after " + std::to_string(summary.warmup) +
             " of warm-up, over the plan's tokens per step and GPUs";
    return plan.training.tokens_per_step() / (summary.median_tokens_per_s_per_gpu * plan.hardware.num_gpus);
  }
  if (summary.median_samples_per_s > 0) {
    *basis = "median samples/s of " + std::to_string(summary.used) + " steps after " + std::to_string(summary.warmup) +
             " of warm-up (DeepSpeed's CurrSamplesPerSec), over the plan's global batch";
    return plan.training.global_batch_size / summary.median_samples_per_s;
  }
  if (log.run_mean_step_time_s > 0) {
    *basis = "the whole run's mean step time (train_steps_per_second, warm-up included)";
    return log.run_mean_step_time_s;
  }
  throw InputError(path, log.iterations.empty() ? "no step lines (format " + log.format + ")" : std::to_string(log.iterations.size()) + " steps, all warm-up",
                   "a log with step times after the warm-up (Megatron, torchtitan, DeepSpeed, ms-swift, HF Trainer or step/time lines)",
                   "run more steps, or lower --skip");
}
}  // namespace

double measured_step_time(const TrainingLog& log, const LogSummary& summary, const Scenario& plan, const std::string& path, std::string* basis) {
  const double step_s = measured_step_time_unchecked(log, summary, plan, path, basis);
  check_step_time_physical(physical_step_floor_s(StepModel(plan.model, plan.training, plan.hardware).estimate(plan.parallel)), step_s, path, *basis);
  return step_s;
}

LogCalibration calibrate_from_logs(std::vector<LogRun> runs, const FittedParameters& start) {
  LogCalibration out;
  const auto& info = fitted_parameter_info();
  for (const LogRun& r : runs) out.predicted_before.push_back(step_time(r.plan, start));
  // Sensitivity of each run's step time to each parameter: a 1% step inside the parameter's range.
  std::vector<std::size_t> order(info.size());
  for (std::size_t i = 0; i < info.size(); ++i) {
    ParameterFit pf;
    pf.key = info[i].key;
    pf.before = pf.after = start.*info[i].member;
    const double step = pf.before * 0.01 > 0 ? pf.before * 0.01 : (info[i].upper - info[i].lower) * 1e-3;
    FittedParameters moved = start;
    moved.*info[i].member = std::clamp(pf.before + step, info[i].lower, info[i].upper);
    const double dln_p = std::log(std::max(moved.*info[i].member, 1e-12) / std::max(pf.before, 1e-12));
    if (dln_p != 0)
      for (std::size_t k = 0; k < runs.size(); ++k) pf.sensitivity += std::log(step_time(runs[k].plan, moved) / out.predicted_before[k]) / dln_p;
    out.parameters.push_back(pf);
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return std::fabs(out.parameters[a].sensitivity) > std::fabs(out.parameters[b].sensitivity); });
  std::vector<std::size_t> free;
  for (std::size_t i : order)
    if (free.size() < runs.size() && std::fabs(out.parameters[i].sensitivity) >= kMinSensitivity) free.push_back(i);
  std::sort(free.begin(), free.end());

  std::vector<ReferenceCase> cases;
  for (const LogRun& r : runs) {
    ReferenceCase c;
    c.id = r.log_path;
    c.source = r.log_path;
    c.metric = ReferenceMetric::IterationSeconds;
    c.measured = r.measured_step_s;
    c.scenario = r.plan;
    cases.push_back(std::move(c));
  }
  std::vector<const ReferenceCase*> pointers;
  for (const auto& c : cases) pointers.push_back(&c);
  out.values = free.empty() ? start : fit_parameters(pointers, start, free);
  for (std::size_t i : free) {
    out.parameters[i].fitted = true;
    out.parameters[i].after = out.values.*info[i].member;
  }
  for (const LogRun& r : runs) out.predicted_after.push_back(step_time(r.plan, out.values));
  out.runs = std::move(runs);
  return out;
}

}  // namespace trainsim
