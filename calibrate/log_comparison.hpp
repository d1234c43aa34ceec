#pragma once
// A plan's prediction next to what a real training log measured: iteration time, throughput per GPU
// and peak allocated memory, each with its relative error.
#include <string>
#include <vector>

#include "models/spec.hpp"
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
LogComparison compare_log(const Scenario& plan, const TrainingLog& log, int skip = -1);

}  // namespace trainsim
