#pragma once
// From a scenario and its "reliability" section to a simulated job: the failure model for the job's
// nodes, checkpoint size and costs for its model and storage, recovery durations, the job's speed from
// the step model (and at fewer data-parallel replicas, for elastic shrink), the closed-form intervals,
// and the JobSimConfig the Monte-Carlo runs. The "reliability" section is read here, not by
// parse_scenario, so the other commands ignore it.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/reliability/checkpoint_model.hpp"
#include "models/reliability/failure_model.hpp"
#include "models/reliability/recovery_model.hpp"
#include "models/scenario/spec.hpp"
#include "models/step/step.hpp"
#include "sim/reliability/job_montecarlo.hpp"

namespace trainsim {
struct CalibrationProfile;
}

namespace trainsim::sim {

enum class IntervalChoice { Given, Steps, Young, Daly, Best };
const char* to_string(IntervalChoice c);

struct ReliabilitySettings {
  FailureModel failures;
  double failures_per_1000_node_days = 0;  // > 0: scale the failure model to this per ordinary node
  double job_mtbf_s = 0;                   // > 0: scale the failure model so the job's MTBF is this
  CheckpointSettings checkpoint;
  IntervalChoice interval = IntervalChoice::Daly;
  double interval_s = 0;                   // when Given
  long long interval_steps = 0;            // when Steps: every this many optimizer steps (HF save_steps, Megatron --save-interval)
  RecoverySettings recovery;
  double window_s = 0;                     // > 0: simulate at most this long
  std::vector<AppliedDefault> defaults;
  // Where the failure rate and the window were set, and as written: a flag or a JSON path, for the errors
  // about the whole job (too many failures to simulate, too few to train between).
  std::string rate_source = "/reliability/failures", rate_text;
  std::string window_source = "/reliability/window", window_text;
  std::string lemon_source = "/reliability/failures/lemon_nodes/count";
};

// Reads the document's top-level "reliability" (absent: every default, recorded). `gpus_per_node`
// resolves per-GPU failure rates. Every number is checked against its range in models/reliability/reliability_limits.hpp
// (the flags check the same ranges). Throws InputError naming /reliability/...
ReliabilitySettings parse_reliability_settings(const nlohmann::json& document, int gpus_per_node);
// An interval as the section or a flag writes it: "young", "daly", "best", a duration in
// reliability_limits::kCheckpointInterval, or a number of optimizer steps ("500 steps").
void parse_interval(const nlohmann::json& value, const std::string& path, ReliabilitySettings* s);

struct ReliabilityJob {
  Scenario scenario;
  ReliabilitySettings settings;
  int gpus = 0, nodes = 0, gpus_per_node = 0;
  double price_per_gpu_hour = 0;
  // Speed
  StepEstimate step;
  double work_s = 0;                 // ideal time to train (infinite: a fixed window)
  double window_s = 0;               // wall-clock limit (infinite: until the work is done)
  bool fixed_window = false;         // no train_tokens: the window is the question
  // Failures
  FailureModel failures;             // scaled for the flags
  double mtbf_s = 0;                 // of the job (lemons included)
  double replacement_share = 0;      // of failures that need a new node
  // Checkpoints
  CheckpointSize checkpoint_size;
  CheckpointContext checkpoint_context;
  CheckpointCosts checkpoint;        // of the chosen method (blocking override applied)
  double emergency_save_s = 0;       // checkpoint.emergency: the survivors' save, part of every recovery's drain
  // Recovery
  RecoveryTimes recovery_hardware, recovery_software;
  double recovery_mean_s = 0;        // R of the closed forms
  int spare_nodes = 0;
  std::vector<double> elastic_speed; // by nodes out, for elastic shrink (size 1: cannot shrink)
  int replicas_per_node_out = 1;     // data-parallel replicas lost per node out
  // Closed forms at the effective checkpoint cost
  double young_interval_s = 0, daly_interval_s = 0, optimal_interval_s = 0;
  // What the Monte-Carlo runs (interval: the chosen one; Best starts at Daly's until the sweep picks)
  JobSimConfig sim;
  std::vector<std::string> notes;
};

// Throws InputError when the job cannot be simulated (no window and no train_tokens, bad names, ...), and
// when the whole job is implausible (reliability_limits.hpp): more lemon nodes than nodes, a failure-free
// time to train beyond 100 years, failures so frequent that it all but never trains (ETTR < 1% at its best
// interval by Daly's complete model: said without simulating), or more than 100,000 expected failures in a run.
// The error names the flag or path that set the failure rate (or the window).
ReliabilityJob build_reliability_job(const Scenario& scenario, const ReliabilitySettings& settings,
                                     const CalibrationProfile* calibration = nullptr);

// Tokens/s of `scenario` on `dp` data-parallel replicas relative to `full` (its estimate at the scenario's own
// dp), each replica keeping its micro-batches (the global batch follows dp, as TorchElastic does): the speed of
// an elastic job that shrank or grew. Falls back to dp / the scenario's dp when the estimate is not finite.
double speed_at_replicas(const Scenario& scenario, const StepEstimate& full, int dp, const CalibrationProfile* calibration = nullptr);

// The job with another checkpoint method: costs recomputed, interval re-chosen as the job's was
// (a Given interval stays).
JobSimConfig config_with_method(const ReliabilityJob& job, const std::string& method, CheckpointCosts* costs = nullptr);
// The interval rule of `job` applied to another checkpoint cost and MTBF (Given: unchanged; Best: Daly's).
// Without failures (MTBF infinite) the rule's interval is the run's horizon: no checkpoint is needed.
double chosen_interval_s(const ReliabilityJob& job, double blocking_s, double persist_s, double mtbf_s);

nlohmann::json to_json(const ReliabilitySettings& s, const ReliabilityJob& job);
// Retention (checkpoint.keep, checkpoint.quota): the space the kept checkpoints take and how many the quota holds,
// each a full checkpoint of `checkpoint_bytes`; null when neither is given.
nlohmann::json retention_json(const CheckpointSettings& cs, double checkpoint_bytes);
// Host memory the method's snapshots take on a node (async, in-memory), beside offloaded optimizer states, against
// hardware.host_memory: {host_copies, host_bytes_per_node, offloaded_bytes_per_node, host_memory_bytes,
// fits_host_memory}; null for methods that stage nothing.
nlohmann::json staging_json(const CheckpointSettings& cs, const CheckpointContext& c, double host_memory_bytes);

}  // namespace trainsim::sim
