#pragma once
// Closed forms for failures and checkpointing of one training job: job MTBF from per-node failure
// rates, optimal checkpoint intervals (Young 1974; Daly 2006) and the first-order waste model.
#include <optional>

namespace trainsim {

// Mean time between job-killing failures for a job on `nodes` nodes whose failures are independent
// with `failures_per_1000_node_days` each (exponential inter-arrival times: rates add).
double job_mtbf_s(double nodes, double failures_per_1000_node_days);
double expected_interruptions(double nodes, double failures_per_1000_node_days, double days);

// Young 1974: tau = sqrt(2·delta·M), delta = checkpoint cost (blocking), M = MTBF.
double young_interval_s(double checkpoint_cost_s, double mtbf_s);
// Daly 2006, eq. (37): tau = sqrt(2·delta·M)·(1 + (1/3)·sqrt(delta/(2M)) + (1/9)·(delta/(2M))) - delta
// for delta < 2M, else tau = M.
double daly_interval_s(double checkpoint_cost_s, double mtbf_s);

// First-order fraction of time lost: delta/tau (checkpointing) + (tau/2 + R)/M (re-doing half an
// interval and recovering, per failure), R = restart + reload + warm-up. Valid while it is small.
double first_order_waste(double checkpoint_cost_s, double interval_s, double recovery_s, double mtbf_s);
// 1 - first_order_waste, the first-order ETTR, while the waste is at most 100%; none beyond (and when it is not
// a number): the model counts at most one failure per interval and its waste grows without bound as the MTBF
// shrinks, so past 100% it describes nothing (it would be a negative ETTR).
std::optional<double> first_order_ettr(double checkpoint_cost_s, double interval_s, double recovery_s, double mtbf_s);

// Daly 2006's complete model for exponential failures (the cost function before its perturbation
// expansion): a segment of tau compute + delta checkpoint is redone until it runs failure-free, and
// every failure costs a recovery R that a further failure restarts, so wall time per segment is
// M·e^(R/M)·(e^((tau+delta)/M) - 1) and the effective training time ratio is tau over that. Without
// failures (M infinite) it is tau / (tau + delta); never checkpointing (tau infinite) with failures, 0.
double expected_ettr(double checkpoint_cost_s, double interval_s, double recovery_s, double mtbf_s);
// The interval that maximises expected_ettr: tau = M·(1 + W0(-e^(-1 - delta/M))) with W0 the principal
// branch of the Lambert W function (Daly 2006, whose perturbation series approximates this root).
// It does not depend on R.
double optimal_interval_s(double checkpoint_cost_s, double mtbf_s);
// Principal branch of the Lambert W function on [-1/e, inf): w·e^w = x (Halley iteration).
double lambert_w0(double x);
// Mean work lost per failure that hits a segment (tau compute, then a checkpoint of delta that only
// counts once complete) under exponential failures: E[lost] = (1 - e^-(l·tau)·(1 + l·tau))/l +
// tau·(e^-(l·tau) - e^-(l·(tau+delta))), over 1 - e^-(l·(tau+delta)), l = 1/M (derived here by integrating
// over where in the segment the failure falls; it tends to (tau^2/2 + tau·delta)/(tau + delta), about
// tau/2, when M >> tau >> delta).
double expected_lost_work_s(double checkpoint_cost_s, double interval_s, double mtbf_s);

}  // namespace trainsim
