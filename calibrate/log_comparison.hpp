#pragma once
// A plan's prediction next to what a real training log measured: iteration time, throughput per GPU
// and peak allocated memory, each with its relative error.
#include <string>
#include <vector>

#include "models/scenario/spec.hpp"
#include "models/step/step.hpp"
#include "training_log.hpp"

namespace trainsim {

struct ComparisonRow {
  std::string metric;
  double measured = 0, predicted = 0;
  double error() const { return measured > 0 ? predicted / measured - 1 : 0; }
};

struct LogComparison {
  TrainingLog log;
  LogSummary summary;
  std::vector<ComparisonRow> rows;
  std::vector<std::string> notes;  // what could not be compared, and why
};

// Fewer iterations than this after the warm-up: the comparison carries a note that the measured values are not
// a steady-state median (one or two iterations: a data-loader stall or a checkpoint write decides them).
constexpr int kFewIterations = 3;

// `skip` = warm-up iterations to leave out (-1: the first 10%, at least one). When no iteration is left after
// the warm-up there are no rows, only a note (the warm-up is never compared); `trainsim validate log` refuses
// such a log with exit code 2 before comparing.
// Throws InputError for a log that measures a step faster than physics allows the plan (every counted FLOP at
// every GPU's dense peak: MFU and HFU above 100%): the log is of another plan, or its time unit is not what its
// format says.
LogComparison compare_log(const Scenario& plan, const TrainingLog& log, int skip = -1);

// The shortest step a plan could take, from its estimate: the fewer of its model and hardware FLOPs at the GPUs'
// dense peak.
double physical_step_floor_s(const StepEstimate& estimate);
// InputError under `log_path` when `step_s` (measured, `basis` says how) is below `floor_s`.
void check_step_time_physical(double floor_s, double step_s, const std::string& log_path, const std::string& basis);

}  // namespace trainsim
