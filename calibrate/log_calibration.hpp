#pragma once
// Calibration from a short run of the user's own: the step time a training log measured (Megatron, torchtitan,
// ms-swift, Hugging Face Trainer, generic step/time lines; training_log.hpp), with the scenario it ran, fits the
// step model's physical parameters that the runs can determine (fitted_parameters.hpp) and leaves the others at the
// shipped values. One run determines one parameter: the one its step time is most sensitive to; n runs up to n.
// The result is written into a calibration profile (models/calibration/calibration.hpp, "fitted_parameters"), so that
// `plan --calibration` prices other layouts and scales with them.
#include <string>
#include <vector>

#include "calibrate/training_log.hpp"
#include "models/calibration/fitted_parameters.hpp"
#include "models/scenario/scenario.hpp"

namespace trainsim {

struct LogRun {
  std::string log_path, plan_path;  // for provenance
  TrainingLog log;
  LogSummary summary;
  Scenario plan;                    // the layout the log ran (fixed: no search)
  double measured_step_s = 0;       // what the fit matches
  std::string basis;                // how measured_step_s was read ("median of 18 steps' time", ...)
};

// The step time a log measured for `plan`: the median step time after the warm-up; else the median tokens/s per
// GPU (torchtitan) turned into a step; else the whole run's mean (Hugging Face Trainer's summary). InputError
// naming `path` when the log reports none.
double measured_step_time(const TrainingLog& log, const LogSummary& summary, const Scenario& plan, const std::string& path, std::string* basis);

struct ParameterFit {
  std::string key;
  double before = 0, after = 0;
  double sensitivity = 0;  // d ln(step time) / d ln(parameter), summed over the runs, at `before`
  bool fitted = false;
};

struct LogCalibration {
  std::vector<LogRun> runs;
  std::vector<ParameterFit> parameters;     // every fitted parameter, in fitted_parameter_info() order
  std::vector<double> predicted_before, predicted_after;  // step time per run
  FittedParameters values;                  // the shipped ones with the fitted replaced
};

// Parameters whose summed |sensitivity| is below this are not determined by the runs and keep their values.
constexpr double kMinSensitivity = 1e-3;

LogCalibration calibrate_from_logs(std::vector<LogRun> runs, const FittedParameters& start);

}  // namespace trainsim
