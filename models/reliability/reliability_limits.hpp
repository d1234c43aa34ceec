#pragma once
// The plausible range of every numeric input of `trainsim reliability`, in one place: the scenario's
// "reliability" section (parsed in models/reliability/failure_model, checkpoint_model, recovery_model and
// sim/reliability/job_setup) and the command's flags (cli/reliability_cmd) check the same constants where they
// parse a value, so an error names the JSON path or the flag, the value and the range. Every bound
// says why it is where it is; scenarios/FORMAT.md lists them.
//
// Beyond these per-field ranges, build_reliability_job checks what only the whole job can say: a job
// whose failures leave it almost no time to train (Daly's complete model: ETTR < 1% at its best
// interval) is not simulated, and the expected failures of one run are bounded (kMaxExpectedFailuresPerRun)
// so a run's time and memory (repair heap, undo log) stay bounded.
#include <cmath>
#include <limits>
#include <string>

#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"
#include "models/core/units.hpp"

namespace trainsim::reliability_limits {

inline constexpr double kMinute = 60, kHour = 3600, kDay = 86400;
inline constexpr double kYear = 365 * kDay;  // as the unit parser reads "y"

struct Range {
  double min = 0;
  double max = 0;
  const char* expected = "";  // "a window from 1 min to 100 years, such as \"54d\"": the message's "expected ..."
  const char* why = "";       // the reason for the bounds, for errors and documentation
  bool contains(double v) const { return std::isfinite(v) && v >= min && v <= max; }
};

// ---- Durations (seconds) -------------------------------------------------------------------------

// --days, /reliability/window. Training runs last days to months and hardware is retired within ~5 years;
// 100 years bounds the simulated horizon (and with the failure rate, the events of a run).
inline constexpr Range kWindow{kMinute, 100 * kYear, "a window from 1 min to 100 years, such as \"54d\"",
                               "runs last days to months; beyond 100 years the horizon is not a training job's"};
// --mtbf, /reliability/job_mtbf. Large jobs fail every few hours (Llama 3: 3 h on 16,384 GPUs); a job that fails
// more than once a minute cannot even restart; 1,000 years is "never" for any window allowed above.
inline constexpr Range kJobMtbf{kMinute, 1000 * kYear, "a job MTBF from 1 min to 1,000 years, such as \"3h\"",
                                "Llama 3 saw one every ~3 h on 16,384 GPUs; a restart alone takes minutes"};
// --checkpoint-cost, /reliability/checkpoint/cost. Synchronous checkpoints of the largest models take minutes
// (5.7 TB at 2 TB/s: 3 s; at 10 GB/s: 10 min); a pause of more than a day is no checkpoint.
inline constexpr Range kCheckpointCost{0, kDay, "a blocking checkpoint cost from 0 to 1 day, such as \"60s\"",
                                       "even a 10 TB checkpoint at 1 GB/s blocks under 3 h"};
// --checkpoint-interval, /reliability/checkpoint/interval (a duration). A step takes ~1-10 s; a year is longer
// than any training run (never checkpoint).
inline constexpr Range kCheckpointInterval{1, kYear, "\"young\", \"daly\", \"best\", a duration from 1 s to 1 year, such as \"30min\", or steps, such as \"500 steps\"",
                                           "a step takes seconds; a year is longer than any run"};
// /reliability/checkpoint/overhead: barrier, metadata, file creation per checkpoint.
inline constexpr Range kCheckpointOverhead{0, kHour, "a per-checkpoint overhead from 0 to 1 h, such as \"2s\"",
                                           "barriers and metadata take seconds"};
// --restart-time, /reliability/recovery/{total, detection, drain, reschedule, restart, warmup}. Restarts at
// scale take minutes (NCCL timeout 10 min); one longer than a week is an outage, not a recovery.
inline constexpr Range kRecovery{0, 7 * kDay, "a duration from 0 to 7 days, such as \"10min\"",
                                 "restarts at scale take minutes; a week-long stop is an outage to plan, not a recovery"};
// --repair-time, /reliability/recovery/repair/mean: a failed node back in the pool (hours to weeks for an RMA).
inline constexpr Range kRepairMean{kMinute, kYear, "a mean repair time from 1 min to 1 year, such as \"24h\"",
                                   "repairs take hours; an RMA weeks"};

// ---- Rates, shapes, counts ------------------------------------------------------------------------

// --failures-per-1000-node-days, /reliability/failures/failures_per_1000_node_days. Published fleets span about
// 3 to 16; 1,000 is every node failing every day.
inline constexpr Range kFailuresPer1000NodeDays{0.01, 1000, "a rate from 0.01 to 1000 failures per 1,000 node-days, such as 4",
                                                "published fleets span about 3 to 16; 1,000 is every node failing daily"};
// /reliability/failures/components/NAME/failures_per_1000_{node,gpu}_days (0 turns a component off).
inline constexpr Range kComponentRate{0, 1000, "a rate from 0 to 1000 per 1,000 unit-days",
                                      "1,000 is every unit failing daily"};
// --weibull-shape, /reliability/failures/shape, /reliability/failures/components/NAME/shape. Fits of time
// between failures of HPC nodes give k ~ 0.7-0.8 (Schroeder & Gibson, DSN 2006); below 0.5 a renewed part's
// early hazard makes failures cascade (most of a run's failures come from replaced parts), above 10 a
// failure is all but scheduled.
inline constexpr Range kWeibullShape{0.5, 10, "a Weibull shape k from 0.5 to 10 (1 = exponential)",
                                     "published fits of HPC failures give k ~ 0.7-0.8; below 0.5 replaced parts fail in cascades"};
// /reliability/recovery/repair/shape: lognormal sigma (or Weibull k) of repair times; published repair-time
// fits have sigma ~ 1-2; 5 puts the median at e^-12.5 of the mean.
inline constexpr Range kRepairShape{0.05, 5, "a repair-time shape from 0.05 to 5 (lognormal sigma)",
                                    "published repair-time fits have sigma ~ 1-2"};
// --lemon-nodes, /reliability/failures/lemon_nodes/count: at most the job's nodes (checked with the job).
inline constexpr Range kLemonNodes{0, 1 << 20, "a number of lemon nodes from 0 to the job's nodes", "a lemon is one of the job's nodes"};
// --lemon-factor, /reliability/failures/lemon_nodes/rate_factor.
inline constexpr Range kLemonFactor{1, 1000, "a rate factor from 1 to 1000, such as 10",
                                    "lemons reported fail ~10x as often; 1,000x fails every few hours"};
// /reliability/failures/lemon_nodes/detect_after (0: never found).
inline constexpr Range kLemonDetectAfter{0, 1000, "a number of failures from 0 (never found) to 1000", "operators notice a lemon after a few failures"};
// --spare-nodes, /reliability/spare_nodes: up to the largest clusters (2^20 nodes).
inline constexpr Range kSpareNodes{0, 1 << 20, "a number of spare nodes from 0 to 1048576", "no cluster has more nodes"};
// /reliability/elastic_min_fraction.
inline constexpr Range kElasticMinFraction{0, 1, "a fraction of the data-parallel replicas from 0 to 1", "a fraction"};
// --concurrent-jobs, /reliability/checkpoint/storage/concurrent_jobs.
inline constexpr Range kConcurrentJobs{1, 10000, "a number of jobs from 1 to 10000", "jobs sharing one storage system"};
// /reliability/checkpoint/storage/aggregate_bandwidth (bytes/s): 100 MB/s (one disk) to 1 PB/s (500x Llama 3's
// 2 TB/s Tectonic).
inline constexpr Range kAggregateBandwidth{1e8, 1e15, "a bandwidth from 100 MB/s to 1 PB/s, such as \"2TB/s\"",
                                           "Llama 3's Tectonic sustains 2 TB/s"};
// /reliability/checkpoint/storage/per_node_bandwidth and /reliability/checkpoint/host_bandwidth (bytes/s).
inline constexpr Range kNodeBandwidth{1e7, 1e13, "a bandwidth from 10 MB/s to 10 TB/s, such as \"25GB/s\"",
                                      "a node's NICs or PCIe move tens to hundreds of GB/s"};
// /reliability/checkpoint/incremental_fraction and full_every.
inline constexpr Range kIncrementalFraction{0.001, 1, "a fraction from 0.001 to 1, such as 0.167", "an increment is part of a checkpoint"};
inline constexpr Range kFullEvery{1, 10000, "a count from 1 to 10000, such as 10", "a full checkpoint every so many"};
// /reliability/checkpoint/keep and quota: how many checkpoints the tier keeps and the space they may take.
inline constexpr Range kKeepCheckpoints{1, 100000, "a count from 1 to 100000, such as 3", "checkpoints kept on the tier"};
inline constexpr Range kStorageQuota{1e6, 1e18, "a size from 1 MB to 1 EB, such as \"500TB\"", "a storage quota"};

// ---- Whole-job checks (build_reliability_job) -----------------------------------------------------

// Expected failures in one simulated run (its horizon over the MTBF, or the cumulative hazard for Weibull
// parts). Llama 3's 54 days on 16,384 GPUs had 419; 100,000 is ~240 times that and costs ~30 ms a run.
inline constexpr double kMaxExpectedFailuresPerRun = 1e5;
// A run stops (and is reported as cut short) after this many times the expected failures, plus a margin:
// a variant of a study may fail more often than the job (MTBF x0.5), never unboundedly.
inline constexpr double kEventCapFactor = 10, kEventCapMargin = 10000;
// Below this ETTR at the best interval (Daly's complete model) the job all but never trains: no simulation.
inline constexpr double kMinMeaningfulEttr = 0.01;
// The failure-free time to train (train_tokens at the modelled speed) is bounded like the window.
inline constexpr double kMaxWork = 100 * kYear;

// The range's value or an InputError naming `where` (a JSON path or a flag), the value as written, what was
// expected, and why the bounds are there.
inline double check(double value, const Range& range, const std::string& where, const std::string& value_text) {
  if (!range.contains(value)) throw InputError(where, value_text, range.expected, range.why);
  return value;
}

// ---- Reading a scenario field within its range ---------------------------------------------------

// A number (a JSON number, or a string such as "10%") at `key` of `r`, within `range`; absent: `fallback`,
// recorded as a default when `reason` is not empty.
inline double read_number(JsonReader& r, const std::string& key, double fallback, const std::string& reason, const Range& range) {
  if (!r.has(key)) return r.get_number(key, fallback, reason, -std::numeric_limits<double>::max(), std::numeric_limits<double>::max());
  const Json& v = r.raw(key);
  double x = std::numeric_limits<double>::quiet_NaN();
  if (v.is_number()) {
    x = v.get<double>();
  } else if (v.is_string()) {
    if (auto q = parse_quantity(v.get<std::string>(), Quantity::Fraction)) x = *q;
  }
  return check(x, range, r.child_path(key), json_value_text(v));
}

// A whole number at `key` within `range`; absent: `fallback` (recorded as above).
inline int read_int(JsonReader& r, const std::string& key, int fallback, const std::string& reason, const Range& range) {
  if (!r.has(key)) return r.get_int(key, fallback, reason);
  const Json& v = r.raw(key);
  double x = std::numeric_limits<double>::quiet_NaN();
  if (v.is_number() && std::floor(v.get<double>()) == v.get<double>()) x = v.get<double>();
  return static_cast<int>(check(x, range, r.child_path(key), json_value_text(v)));
}

// A quantity with units (a duration "30min", a bandwidth "2TB/s", or SI seconds / bytes per second) at `key`,
// within `range`; absent: `fallback` (recorded as above).
inline double read_quantity(JsonReader& r, const std::string& key, Quantity kind, double fallback, const std::string& reason,
                            const Range& range) {
  if (!r.has(key)) return r.get_quantity(key, kind, fallback, reason);
  const Json& v = r.raw(key);
  return check(quantity_from_json(v, kind, r.child_path(key)), range, r.child_path(key), json_value_text(v));
}

// A flag's duration ("54d", "3h", or seconds) within `range`: the error names the flag.
inline double duration_flag(const std::string& flag, const std::string& text, const Range& range) {
  std::string why;
  const auto v = parse_quantity(text, Quantity::Time, &why);
  if (!v) throw InputError(flag, "\"" + text + "\"", range.expected, why);
  return check(*v, range, flag, "\"" + text + "\"");
}

// A flag's plain number within `range`.
inline double number_flag(const std::string& flag, const std::string& text, const Range& range) {
  std::size_t used = 0;
  double v = std::numeric_limits<double>::quiet_NaN();
  try {
    v = std::stod(text, &used);
  } catch (...) {
    used = 0;
  }
  if (text.empty() || used != text.size()) v = std::numeric_limits<double>::quiet_NaN();
  return check(v, range, flag, "\"" + text + "\"");
}

}  // namespace trainsim::reliability_limits
