#pragma once
// How long to ask a scheduler for: the predicted failure-free time to train is a lower bound, and a job
// killed at its time limit loses everything since its last checkpoint. The expected wall-clock adds what
// failures cost with the default reliability settings (failure_preset("default"): 4 job-killing failures per
// 1,000 node-days; sync checkpoints to the parallel file system at the interval that maximises goodput;
// the default recovery), using Daly's complete model (models/reliability/reliability.hpp, expected_ettr), and the limit
// adds a margin on top for the model's own error. `trainsim reliability` studies the same job in depth.
#include "models/scenario/spec.hpp"

namespace trainsim {

struct WalltimeEstimate {
  double compute_s = 0;      // failure-free time to train (the step model's prediction)
  double mtbf_s = 0;         // the job's mean time between failures
  double checkpoint_s = 0;   // blocking cost of one checkpoint
  double interval_s = 0;     // compute between checkpoints (the optimum of Daly's complete model)
  double recovery_s = 0;     // mean recovery per failure
  double ettr = 1;           // expected effective training time ratio
  double expected_s = 0;     // compute_s / ettr; infinite when the job cannot make progress
  double margin = 0;         // fraction added for the model's error
  double limit_s = 0;        // expected_s x (1 + margin)
};

WalltimeEstimate walltime_estimate(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p, const HardwareSpec& h,
                                   double compute_s, double margin);

}  // namespace trainsim
