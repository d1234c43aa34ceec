// `trainsim validate log FILE --plan PLAN`: a real training log (Megatron-LM, torchtitan, PyTorch loops)
// against the plan's prediction.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "calibrate/log_comparison.hpp"
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

struct ValidateLogOptions {
  std::string log;
  std::string plan;
  int skip = -1;
  std::string format = "table";
};

std::string describe_skipped(const MalformedLines& skipped, std::size_t limit = 10) { return skipped.describe("iteration", limit); }

std::string plural(long long n, const std::string& word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

int run_validate_log(const ValidateLogOptions& opt) {
  const PlanInput plan = load_plan_input(opt.plan);
  std::ifstream in = open_input_file("LOG", opt.log, "a readable training log");
  const TrainingLog log = parse_training_log(in);
  if (log.iterations.empty())
    throw InputError(opt.log, plural(log.lines, "line") + " without a usable iteration line" + (log.malformed.empty() ? "" : " (" + describe_skipped(log.malformed, 3) + ")"),
                     "a log with per-iteration lines (Megatron-LM, torchtitan, or \"step N ... time X s\")");
  const LogSummary summary = summarize(log, opt.skip);
  // A comparison of the warm-up iteration (compilation, allocator and NCCL set-up) would be off by a factor,
  // not a percentage: refuse, and say how to ask for it explicitly.
  if (summary.used == 0)
    throw InputError(opt.log,
                     plural(summary.iterations, "iteration") + ", all of them warm-up (" +
                         (opt.skip >= 0 ? "--skip " + std::to_string(opt.skip) : "the default skips the first 10%, at least one") + ")",
                     "at least one iteration after the warm-up to compare",
                     "a longer log, or --skip 0 to compare every iteration, warm-up included");
  const LogComparison c = compare_log(plan.scenario, log, opt.skip);

  Json rows = Json::array();
  for (const auto& r : c.rows) rows.push_back({{"metric", r.metric}, {"measured", r.measured}, {"predicted", r.predicted}, {"error", r.error()}});
  Json skipped = Json::array();
  for (const auto& m : log.malformed.listed()) skipped.push_back({{"line", m.line}, {"reason", m.reason}, {"text", m.text}});
  const Json out = {{"command", "validate log"}, {"log", opt.log},   {"plan", opt.plan}, {"format", log.format},
                    {"lines", log.lines},        {"iterations", log.iterations.size()}, {"warmup", c.summary.warmup}, {"used", c.summary.used},
                    {"malformed_lines", log.malformed.line_numbers()}, {"skipped_lines", log.malformed.size()}, {"skipped", skipped},
                    {"comparison", rows}, {"notes", c.notes}};
  emit_result(opt.format, out, "validate log", {[&](std::ostream& os) {
                os << "Log        " << opt.log << " (" << log.format << "): " << plural(log.lines, "line") << ", "
                   << plural(c.summary.iterations, "iteration") << ", " << c.summary.warmup << " warm-up left out, " << c.summary.used << " used";
                os << "; " << (log.malformed.empty() ? std::string("0 iteration lines skipped") : describe_skipped(log.malformed)) << "\n";
                os << "Plan       " << opt.plan << " (" << plan.kind << ")\n\n";
                TextTable t({"metric", "measured", "predicted", "error"});
                for (const auto& r : c.rows) t.add_row({r.metric, fixed(r.measured, 3), fixed(r.predicted, 3), fixed(100 * r.error(), 1) + "%"});
                t.print(os);
                if (c.summary.p10_time_s > 0)
                  os << "\nMeasured iteration time spread: p10 " << fixed(c.summary.p10_time_s, 3) << " s, p90 " << fixed(c.summary.p90_time_s, 3) << " s\n";
                for (const auto& n : c.notes) os << "Note: " << n << "\n";
              },
              nullptr});
  if (opt.format == "json" && !log.malformed.empty()) std::cerr << "warning: " << opt.log << ": " << describe_skipped(log.malformed) << "\n";
  return kExitOk;
}

const RegisterCommand registered{
    {"validate", "Compare a plan with reality: a real training log (validate log)",
     [](CLI::App& app) -> std::function<int()> {
       app.require_subcommand(1);
       auto opt = std::make_shared<ValidateLogOptions>();
       auto chosen = std::make_shared<std::function<int()>>();
       CLI::App* log = app.add_subcommand("log", "Parse a Megatron-LM / torchtitan / PyTorch training log and compare it with a plan");
       log->add_option("LOG", opt->log, "training log")->check(non_empty_path())->required();
       log->add_option("--plan", opt->plan, "scenario with a fixed layout, or the JSON trainsim plan/estimate wrote")->check(non_empty_path())->required();
       log->add_option("--skip", opt->skip, "warm-up iterations to leave out (default: the first 10%, at least one)")->check(CLI::Range(0, 1000000));
       log->add_option("--format", opt->format, "table or json")->check(CLI::IsMember({"table", "json"}));
       log->callback([opt, chosen] { *chosen = [opt] { return run_validate_log(*opt); }; });
       for (const auto& e : add_subcommand_extensions(app, "validate"))  // `validate run` in the CUDA build
         e.first->callback([chosen, action = e.second] { *chosen = action; });
       return [chosen] { return *chosen ? (*chosen)() : kExitBadInput; };
     }}};

}  // namespace
}  // namespace trainsim::cli
