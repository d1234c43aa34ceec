// `trainsim validate log FILE --plan PLAN`: a real training log (Megatron-LM, torchtitan, PyTorch loops)
// against the plan's prediction.
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "calibrate/log_comparison.hpp"
#include "command.hpp"
#include "models/errors.hpp"
#include "plan_input.hpp"
#include "subcommand_hooks.hpp"
#include "reports/table.hpp"

namespace trainsim::cli {
namespace {

using Json = nlohmann::json;

struct ValidateLogOptions {
  std::string log;
  std::string plan;
  int skip = -1;
  std::string format = "table";
};

int run_validate_log(const ValidateLogOptions& opt) {
  const PlanInput plan = load_plan_input(opt.plan);
  std::ifstream in(opt.log);
  if (!in) throw InputError("LOG", "\"" + opt.log + "\"", "a readable training log", "no such file");
  const TrainingLog log = parse_training_log(in);
  if (log.iterations.empty())
    throw InputError("LOG", "\"" + opt.log + "\"", "a log with per-iteration lines (Megatron-LM, torchtitan, or \"step N ... time X s\")",
                     std::to_string(log.lines) + " lines read, " + std::to_string(log.malformed_lines.size()) + " iteration-like lines malformed");
  const LogComparison c = compare_log(plan.scenario, log, opt.skip);

  if (opt.format == "json") {
    Json rows = Json::array();
    for (const auto& r : c.rows) rows.push_back({{"metric", r.metric}, {"measured", r.measured}, {"predicted", r.predicted}, {"error", r.error()}});
    Json out = {{"command", "validate log"}, {"log", opt.log},   {"plan", opt.plan}, {"format", log.format},
                {"lines", log.lines},        {"iterations", log.iterations.size()}, {"used", c.summary.used},
                {"malformed_lines", log.malformed_lines}, {"comparison", rows}, {"notes", c.notes}};
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << "Log        " << opt.log << " (" << log.format << "): " << log.lines << " lines, " << log.iterations.size() << " iterations, "
            << c.summary.used << " used after warm-up";
  if (!log.malformed_lines.empty()) {
    std::cout << "; " << log.malformed_lines.size() << " malformed iteration lines (line";
    for (std::size_t i = 0; i < log.malformed_lines.size() && i < 10; ++i) std::cout << (i ? ", " : " ") << log.malformed_lines[i];
    std::cout << (log.malformed_lines.size() > 10 ? ", ..." : "") << ")";
  }
  std::cout << "\nPlan       " << opt.plan << " (" << plan.kind << ")\n\n";
  TextTable t({"metric", "measured", "predicted", "error"});
  for (const auto& r : c.rows) t.add_row({r.metric, fixed(r.measured, 3), fixed(r.predicted, 3), fixed(100 * r.error(), 1) + "%"});
  t.print(std::cout);
  if (c.summary.p10_time_s > 0)
    std::cout << "\nMeasured iteration time spread: p10 " << fixed(c.summary.p10_time_s, 3) << " s, p90 " << fixed(c.summary.p90_time_s, 3) << " s\n";
  for (const auto& n : c.notes) std::cout << "Note: " << n << "\n";
  return kExitOk;
}

const RegisterCommand registered{
    {"validate", "Compare a plan with reality: a real training log (validate log)",
     [](CLI::App& app) -> std::function<int()> {
       app.require_subcommand(1);
       auto opt = std::make_shared<ValidateLogOptions>();
       auto chosen = std::make_shared<std::function<int()>>();
       CLI::App* log = app.add_subcommand("log", "Parse a Megatron-LM / torchtitan / PyTorch training log and compare it with a plan");
       log->add_option("LOG", opt->log, "training log")->required();
       log->add_option("--plan", opt->plan, "scenario with a fixed layout, or the JSON trainsim plan/estimate wrote")->required();
       log->add_option("--skip", opt->skip, "warm-up iterations to leave out (default: the first 10%, at least one)")->check(CLI::Range(0, 1000000));
       log->add_option("--format", opt->format, "table or json")->check(CLI::IsMember({"table", "json"}));
       log->callback([opt, chosen] { *chosen = [opt] { return run_validate_log(*opt); }; });
       for (const auto& e : add_subcommand_extensions(app, "validate"))  // `validate run` in the CUDA build
         e.first->callback([chosen, action = e.second] { *chosen = action; });
       return [chosen] { return *chosen ? (*chosen)() : kExitBadInput; };
     }}};

}  // namespace
}  // namespace trainsim::cli
