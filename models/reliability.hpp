#pragma once
// Closed forms for failures and checkpointing of one training job: job MTBF from per-node failure
// rates, optimal checkpoint intervals (Young 1974; Daly 2006) and the first-order waste model.
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

}  // namespace trainsim
