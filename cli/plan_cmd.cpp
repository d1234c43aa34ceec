// `trainsim plan [SCENARIO]`: search every valid layout, prune what does not fit, rank the rest.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>

#include "calibrate/profile_io.hpp"
#include "command.hpp"
#include "flag_values.hpp"
#include "models/core/errors.hpp"
#include "models/scenario/scenario.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "reports/plan_document.hpp"
#include "reports/plan_report.hpp"
#include "scenario_input.hpp"

namespace trainsim::cli {
namespace {

struct PlanOptions {
  ScenarioInput input;
  int top = 10;
  std::string objective = "time";
  std::string budget;
  int threads = 0;
};

// "tp 1, pp 1, cp 1, dp 8": the degrees the scenario fixes (the search keeps them).
std::string fixed_degrees(const SearchSpace& free, const ParallelLayout& p) {
  std::vector<std::string> out;
  const std::pair<bool, std::pair<const char*, int>> all[] = {
      {free.tp, {"tp", p.tp}}, {free.pp, {"pp", p.pp}}, {free.cp, {"cp", p.cp}}, {free.dp, {"dp", p.dp}}, {free.micro_batch, {"micro_batch_size", p.micro_batch_size}}};
  for (const auto& [searched, degree] : all)
    if (!searched) out.push_back(std::string(degree.first) + " " + std::to_string(degree.second));
  return out.empty() ? std::string("none fixed") : join(out);
}

int run_plan(PlanOptions opt) {
  std::vector<int> counts;
  if (auto it = opt.input.flags.find("/hardware/num_gpus"); it != opt.input.flags.end()) {
    counts = parse_gpu_counts(it->second);
    it->second = std::to_string(counts.front());
  }
  PlanReport report;
  std::optional<LoadedCalibration> calibration;
  report.scenario = load_scenario(opt.input, &report.scenario_label, false, &calibration);
  require_supervised_mode(report.scenario.training, "plan");
  const HardwareSpec& hw = report.scenario.hardware;
  if (counts.empty()) counts = {hw.num_gpus};
  for (int c : counts)
    if (c > hw.gpus_per_node && c % hw.gpus_per_node)
      throw InputError("--gpus", std::to_string(c), "whole nodes: a multiple of gpus_per_node (" + std::to_string(hw.gpus_per_node) + ")");

  SearchOptions so;
  so.top = opt.top;
  so.objective = opt.objective == "cost" ? Objective::Cost : Objective::TimeToTrain;
  so.threads = opt.threads;
  if (calibration) so.calibration = &calibration->profile;
  if (so.objective == Objective::Cost && !hw.has_price())
    throw InputError("--objective", "\"cost\"", "a scenario with a price", "no price is known for " + hw.gpu.name + "; set --price-per-gpu-hour");
  if (!opt.budget.empty()) {
    const Budget budget = parse_budget(opt.budget);
    so.max_cost = budget.max_cost;
    so.max_time_s = budget.max_time_s;
    if (report.scenario.training.train_tokens <= 0)
      throw InputError("/training/train_tokens", "nothing", "train_tokens (or dataset_samples and epochs)", "a budget needs the amount of training");
    if (so.max_cost > 0 && !hw.has_price())
      throw InputError("--budget", "\"" + opt.budget + "\"", "a duration, or a scenario with a price",
                       "no price is known for " + hw.gpu.name + "; set --price-per-gpu-hour");
    report.budget_text = opt.budget;
  }
  ProgressBar bar("searching layouts");
  so.progress = [&bar](double f) { bar.update(f); };
  report.threads = so.threads > 0 ? so.threads : int(std::max(1u, std::thread::hardware_concurrency()));
  const auto start = std::chrono::steady_clock::now();
  report.result = search_plans(report.scenario, counts, search_space_from(report.scenario), so);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  bar.finish();
  // Ranked plans whose pipeline split leaves one rank far more layers than the mean: said, once per kind of split.
  std::vector<std::pair<std::string, std::vector<std::string>>> unbalanced;  // note -> the plans it applies to
  for (std::size_t i = 0; i < report.result.plans.size(); ++i) {
    const std::string note = pipeline_balance_note(report.scenario.model.num_hidden_layers, report.result.plans[i].layout);
    if (note.empty()) continue;
    auto it = std::find_if(unbalanced.begin(), unbalanced.end(), [&](const auto& u) { return u.first == note; });
    if (it == unbalanced.end()) it = unbalanced.insert(unbalanced.end(), {note, {}});
    it->second.push_back(std::to_string(i + 1));
  }
  for (const auto& [note, plans] : unbalanced)
    report.scenario.notes.push_back((plans.size() == 1 ? "plan " : "plans ") + join(plans) + ": " + note);
  // Counts asked for that no candidate could use: say so, never a silent narrowing of the question.
  std::vector<std::string> unsearched;
  for (std::size_t g = 0; g < counts.size() && g < report.result.searched_per_count.size(); ++g)
    if (report.result.searched_per_count[g] == 0) unsearched.push_back(std::to_string(counts[g]));
  if (!unsearched.empty() && unsearched.size() < counts.size())
    report.scenario.notes.push_back("--gpus: " + join(unsearched) + " GPUs searched no layout: the scenario's fixed parallel degrees (" +
                                    fixed_degrees(search_space_from(report.scenario), report.scenario.parallel) + ") or its global batch allow none at that count; leave dp or cp out to search them");

  // What the profile replaced and what fell back to the defaults, for this scenario's hardware and precision.
  std::optional<CalibrationCoverage> coverage;
  if (calibration) coverage = CalibrationFit(calibration->profile, report.scenario.hardware).coverage(&report.scenario.training);
  nlohmann::json j = plan_report_json(report);
  if (calibration) j["calibration"] = calibration_summary_json(calibration->path, calibration->profile, *coverage);
  emit_result(opt.input.format, j, "plan",
              {[&](std::ostream& os) {
                 print_plan_table(os, report);
                 if (calibration) print_calibration_summary(os, calibration->path, calibration->profile, *coverage);
               },
               [&](std::ostream& os) { print_plan_csv(os, report); },
               [&](std::ostream& os) { print_plan_markdown(os, report); },
               [&](std::ostream& os) { write_plan_html(os, report); }},
              opt.input.report);
  return kExitOk;
}

const RegisterCommand registered{
    {"plan", "Find the best layouts: search, prune by memory, rank by time to train or cost",
     [](CLI::App& app) -> std::function<int()> {
       auto opt = std::make_shared<PlanOptions>();
       add_scenario_options(app, opt->input);
       add_calibration_option(app, opt->input);
       app.add_option("--top", opt->top, "how many plans to show")->check(CLI::Range(1, 1000));
       app.add_option("--objective", opt->objective, "rank by time (to train) or cost")->check(CLI::IsMember({"time", "cost"}));
       app.add_option("--budget", opt->budget, "keep plans under this cost (\"$250000\") or time to train (\"30d\")");
       app.add_option("--threads", opt->threads, "worker threads (default: all cores)")->check(CLI::Range(1, 1024));
       app.footer("--gpus also takes a range A..B (doubling) or a list A,B,C: each count is searched and the Pareto front of GPUs vs time vs cost marked.");
       return [opt] { return run_plan(*opt); };
     }}};

}  // namespace
}  // namespace trainsim::cli
