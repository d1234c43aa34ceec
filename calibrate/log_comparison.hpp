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

// `skip` = warm-up iterations to leave out (-1: the first 10%, at least one).
LogComparison compare_log(const Scenario& plan, const TrainingLog& log, int skip = -1);

}  // namespace trainsim
