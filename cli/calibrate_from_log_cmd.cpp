// `trainsim calibrate from-log LOG... --plan SCENARIO... [-o PROFILE] [--merge] [--skip N] [--format table|json]`: the
// step time a short run of the user's own measured (its training log, with the scenario it ran) fits the physical
// parameters that run can determine (calibrate/log_calibration.hpp); -o writes them into a calibration profile that
// `plan`, `estimate` and `simulate` take with --calibration.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "calibrate/import_common.hpp"
#include "calibrate/log_calibration.hpp"
#include "calibrate/profile_io.hpp"
#include "command.hpp"
#include "models/core/errors.hpp"
#include "output.hpp"
#include "plan_input.hpp"
#include "reports/table.hpp"
#include "run_files.hpp"
#include "subcommand_hooks.hpp"

namespace trainsim::cli {
namespace {

using Json = nlohmann::json;

struct FromLogOptions {
  std::vector<std::string> logs, plans;
  std::string output;
  bool merge = false;
  int skip = -1;
  std::string format = "table";
};

std::string seconds(double s) { return fixed(s, 3) + " s"; }
std::string signed_percent(double v) { return (v >= 0 ? "+" : "") + fixed(100 * v, 1) + "%"; }

LogRun read_run(const std::string& log_path, const std::string& plan_path, int skip) {
  LogRun r;
  r.log_path = log_path;
  r.plan_path = plan_path;
  r.plan = load_plan_input(plan_path).scenario;
  std::ifstream in = open_input_file("LOG", log_path, "a readable training log");
  r.log = parse_training_log(in);
  r.summary = summarize(r.log, skip);
  r.measured_step_s = measured_step_time(r.log, r.summary, r.plan, log_path, &r.basis);
  return r;
}

std::string command_line(const FromLogOptions& o) {
  std::string c = "trainsim calibrate from-log";
  for (const auto& l : o.logs) c += " " + l;
  for (const auto& p : o.plans) c += " --plan " + p;
  if (o.skip >= 0) c += " --skip " + std::to_string(o.skip);
  if (!o.output.empty()) c += " -o " + o.output;
  return c;
}

int run_from_log(const FromLogOptions& o) {
  if (o.logs.size() != o.plans.size())
    throw InputError("--plan", std::to_string(o.plans.size()) + " plans for " + std::to_string(o.logs.size()) + " logs",
                     "one --plan per log, in the same order (the scenario each log ran)");
  std::vector<LogRun> read;
  for (std::size_t i = 0; i < o.logs.size(); ++i) read.push_back(read_run(o.logs[i], o.plans[i], o.skip));
  const LogCalibration cal = calibrate_from_logs(std::move(read), shipped_fitted_parameters().values);

  std::string fitted_keys, kept_keys;
  for (const auto& p : cal.parameters) (p.fitted ? fitted_keys : kept_keys) += (p.fitted ? fitted_keys : kept_keys).empty() ? p.key : ", " + p.key;
  std::string provenance = "calibrate from-log on " + utc_timestamp().substr(0, 10) + ": ";
  for (std::size_t i = 0; i < cal.runs.size(); ++i) {
    const LogRun& r = cal.runs[i];
    provenance += (i ? "; " : "") + r.log_path + " (" + r.log.format + ", " + r.basis + ": " + seconds(r.measured_step_s) + ") with " + r.plan_path;
  }
  provenance += "; fitted: " + (fitted_keys.empty() ? std::string("nothing") : fitted_keys) + (kept_keys.empty() ? "" : "; shipped values kept: " + kept_keys);

  if (!o.output.empty()) {
    CalibrationProfile profile;
    if (o.merge && std::filesystem::exists(o.output)) {
      profile = read_calibration_profile(o.output, "-o");
    } else {
      const GpuSpec& gpu = cal.runs.front().plan.hardware.gpu;
      profile.gpu.name = gpu.name;
      profile.gpu.preset = gpu.name;
      profile.provenance.source = "measured";
      profile.provenance.when = utc_timestamp();
      profile.provenance.command = command_line(o);
      profile.provenance.notes = "step model parameters fitted to training logs (no microbenchmarks)";
    }
    profile.fitted_parameters.clear();
    for (const auto& p : cal.parameters)
      if (p.fitted) profile.fitted_parameters.emplace_back(p.key, p.after);
    profile.fitted_parameters_source = provenance;
    write_output_file("-o", o.output, [&](std::ostream& os) { os << calibration_profile_text(profile); });
  }

  Json runs = Json::array();
  for (std::size_t i = 0; i < cal.runs.size(); ++i) {
    const LogRun& r = cal.runs[i];
    runs.push_back({{"log", r.log_path}, {"plan", r.plan_path}, {"format", r.log.format}, {"steps", r.summary.iterations}, {"warmup", r.summary.warmup},
                    {"used", r.summary.used}, {"skipped_lines", r.log.malformed.size()}, {"basis", r.basis}, {"measured_step_s", r.measured_step_s},
                    {"predicted_before_s", cal.predicted_before[i]}, {"predicted_after_s", cal.predicted_after[i]}});
  }
  Json params = Json::array();
  for (const auto& p : cal.parameters)
    params.push_back({{"parameter", p.key}, {"shipped", p.before}, {"value", p.after}, {"fitted", p.fitted}, {"sensitivity", std::fabs(p.sensitivity)}});
  const Json out = {{"command", "calibrate from-log"}, {"runs", runs}, {"parameters", params}, {"provenance", provenance},
                    {"profile", o.output.empty() ? Json(nullptr) : Json(o.output)}};
  emit_result(o.format, out, "calibrate from-log", {[&](std::ostream& os) {
                os << "Runs (step time measured, and as trainsim predicts it with the shipped and the fitted parameters)\n";
                TextTable t({"log", "format", "steps used", "measured", "basis", "shipped", "fitted"});
                for (std::size_t i = 0; i < cal.runs.size(); ++i) {
                  const LogRun& r = cal.runs[i];
                  t.add_row({r.log_path, r.log.format, std::to_string(r.summary.used), seconds(r.measured_step_s), r.basis,
                             seconds(cal.predicted_before[i]) + " (" + signed_percent(r.measured_step_s / cal.predicted_before[i] - 1) + ")",
                             seconds(cal.predicted_after[i]) + " (" + signed_percent(r.measured_step_s / cal.predicted_after[i] - 1) + ")"});
                }
                t.print(os);
                os << "\nParameters (sensitivity: |d ln step time / d ln parameter| over the runs; one run determines one parameter)\n";
                TextTable p({"parameter", "shipped", "now", "sensitivity", ""});
                for (const auto& q : cal.parameters) {
                  std::string what = q.fitted ? "fitted" : std::fabs(q.sensitivity) < kMinSensitivity ? "kept: the runs do not depend on it" : "kept: more runs needed";
                  for (const auto& info : fitted_parameter_info())
                    if (q.fitted && q.key == info.key && (q.after <= info.lower * (1 + 1e-6) || q.after >= info.upper * (1 - 1e-6)))
                      what += " (at the end of its physical range " + fixed(info.lower, 2) + "-" + fixed(info.upper, 2) +
                              ": the runs differ from the model by more than this parameter can explain)";
                  p.add_row({q.key, fixed(q.before, 4), fixed(q.after, 4), fixed(std::fabs(q.sensitivity), 3), what});
                }
                p.print(os);
                for (const auto& r : cal.runs)
                  if (!r.log.malformed.empty()) os << "Note: " << r.log_path << ": " << r.log.malformed.describe("iteration") << "\n";
                if (!o.output.empty()) os << "\nwrote " << o.output << ": price other layouts and scales with --calibration " << o.output << "\n";
              },
              nullptr});
  return kExitOk;
}

const RegisterSubcommand registered{
    {"calibrate", "from-log",
     "Fit the step model's physical parameters to a short run of your own (its training log and the scenario it ran)",
     [](CLI::App& sub) -> std::function<int()> {
       auto opt = std::make_shared<FromLogOptions>();
       sub.add_option("LOG", opt->logs, "training logs (Megatron-LM, torchtitan, ms-swift, HF Trainer, step/time lines)")->check(non_empty_path())->required();
       sub.add_option("--plan", opt->plans, "the scenario each log ran (a fixed layout), one per log in the same order")->check(non_empty_path())->required();
       sub.add_option("-o,--output", opt->output, "calibration profile to write (JSON), for --calibration")->check(non_empty_path());
       sub.add_flag("--merge", opt->merge, "set the fitted parameters in the profile at -o, keeping its measurements");
       sub.add_option("--skip", opt->skip, "warm-up steps to leave out (default: the first 10%, at least one)")->check(CLI::Range(0, 1000000));
       sub.add_option("--format", opt->format, "output: table or json")->check(CLI::IsMember({"table", "json"}));
       return [opt]() { return run_from_log(*opt); };
     }}};

}  // namespace
}  // namespace trainsim::cli
