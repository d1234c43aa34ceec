// `trainsim export PLAN --to TARGET`: one fixed plan rendered as launch files for a framework or a
// scheduler (the targets register themselves in reports/export/). PLAN is a scenario file (its layout is
// taken as fixed, missing degrees derived as for `estimate`) or the JSON `plan` / `estimate` wrote.
#include <cmath>
#include <filesystem>
#include <iostream>

#include "command.hpp"
#include "models/errors.hpp"
#include "models/json_reader.hpp"
#include "models/memory.hpp"
#include "models/scenario.hpp"
#include "models/step.hpp"
#include "models/units.hpp"
#include "models/walltime.hpp"
#include "plan_input.hpp"
#include "reports/export/export_registry.hpp"
#include "reports/table.hpp"
#include "run_files.hpp"

namespace trainsim::cli {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

struct ExportOptions {
  std::string plan;
  std::string target;
  std::string output = ".";
  bool dry_run = false;
  std::string queue = "default";
  std::string image;
  std::string job_name;
  std::string time_margin = "25%";
};

using export_detail::is_dns_label;

// "llama3.1-405b" + "pretrain" -> "llama3-1-405b-pretrain".
std::string default_job_name(const Scenario& s) {
  std::string out;
  for (char c : s.model.name + "-" + to_string(s.training.mode)) {
    const char lower = (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
    const bool ok = (lower >= 'a' && lower <= 'z') || (lower >= '0' && lower <= '9');
    if (ok) out += lower;
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  if (out.size() > 40) out.resize(40);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "trainsim-job" : out;
}

std::string exporter_list() { return join(exporter_names()); }

int run_export(const ExportOptions& opt) {
  const Exporter* exporter = find_exporter(opt.target);
  if (!exporter) throw InputError("--to", "\"" + opt.target + "\"", "one of " + exporter_list());
  if (!opt.job_name.empty() && !exporter->accepts_job_name(opt.job_name))
    throw InputError("--job-name", "\"" + opt.job_name + "\"", exporter->job_name_rule() + " for --to " + exporter->name());
  std::string why;
  const auto margin = parse_quantity(opt.time_margin, Quantity::Fraction, &why);
  if (!margin || !(*margin >= 0 && *margin <= 10))
    throw InputError("--time-margin", "\"" + opt.time_margin + "\"", "a fraction in [0, 10] such as 0.25 or \"25%\"", why);
  if (!is_dns_label(opt.queue))
    throw InputError("--queue", "\"" + opt.queue + "\"", "a queue name: lowercase letters, digits and '-'");
  if (opt.image.find_first_of(" \t\n\"'") != std::string::npos)
    throw InputError("--image", "\"" + opt.image + "\"", "a container image reference without spaces or quotes");

  const PlanInput input = load_plan_input(opt.plan);
  const std::string& kind = input.kind;
  ExportPlan plan;
  plan.model = input.scenario.model;
  plan.training = input.scenario.training;
  plan.layout = input.scenario.parallel;
  plan.hardware = input.scenario.hardware;
  plan.job_name = default_job_name(input.scenario);
  plan.source = input.source;
  plan.step_time_s = input.step_time_s;
  plan.mfu = input.mfu;
  plan.time_to_train_s = input.time_to_train_s;
  plan.iterations = input.iterations;
  if (!opt.job_name.empty()) plan.job_name = opt.job_name;
  plan.queue = opt.queue;
  if (!opt.image.empty()) plan.image = opt.image;
  if (plan.time_to_train_s > 0)
    plan.walltime = walltime_estimate(plan.model, plan.training, plan.layout, plan.hardware, plan.time_to_train_s, *margin);

  MemoryModel mm(plan.model, plan.training, plan.hardware);
  const MemoryEstimate memory = mm.estimate(plan.layout);
  if (!memory.fits)
    std::cerr << "warning: this layout needs " << gib(memory.worst.total, 1) << " GiB on its most loaded GPU, more than the "
              << gib(memory.capacity, 1) << " GiB of a " << plan.hardware.gpu.name << " (trainsim estimate " << opt.plan << " shows why)\n";

  const std::vector<ExportFile> files = exporter->render(plan);
  if (opt.dry_run) {
    for (const auto& f : files) {
      std::cout << "==> " << (fs::path(opt.output) / f.path).lexically_normal().string() << " <==\n" << f.content;
      if (!f.content.empty() && f.content.back() != '\n') std::cout << "\n";
      std::cout << "\n";
    }
    std::cout << "dry run: " << files.size() << (files.size() == 1 ? " file" : " files") << " for " << exporter->name() << " from the " << kind
              << " " << opt.plan << ", nothing written\n";
    return kExitOk;
  }
  const fs::path dir(opt.output);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) throw InputError("-o", "\"" + opt.output + "\"", "a folder that can be created and written", ec.message());
  for (const auto& f : files) {
    const fs::path target = (dir / f.path).lexically_normal();
    write_output_file("-o", target.string(), [&](std::ostream& os) { os << f.content; });
    const std::string ext = target.extension().string();
    if (ext == ".sh" || ext == ".sbatch")
      fs::permissions(target, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec, fs::perm_options::add, ec);
    std::cout << "wrote " << target.string() << " (" << f.content.size() << " bytes)\n";
  }
  return kExitOk;
}

const RegisterCommand registered{
    {"export", "Write the files that launch a plan: Megatron-LM, DeepSpeed, torchrun, Slurm, Volcano, Kubeflow",
     [](CLI::App& app) -> std::function<int()> {
       auto opt = std::make_shared<ExportOptions>();
       std::string targets;
       for (const auto& e : exporters()) targets += "\n  " + e->name() + ": " + e->description();
       app.add_option("plan", opt->plan,
                      "scenario file (its layout is taken as fixed) or the JSON written by trainsim plan --format json (its first plan) or "
                      "trainsim estimate --format json")
           ->required()
           ->check(non_empty_path());
       app.add_option("--to", opt->target, "target: " + exporter_list() + targets)->required();
       app.add_option("-o,--output", opt->output, "folder to write into (created if missing)")->check(non_empty_path())->capture_default_str();
       app.add_flag("--dry-run", opt->dry_run, "print every file instead of writing it");
       app.add_option("--queue", opt->queue, "Volcano / Kubeflow queue")->capture_default_str();
       app.add_option("--image", opt->image, "container image for Volcano / Kubeflow, holding Megatron-LM at /workspace/Megatron-LM (default: nvcr.io/nvidia/pytorch:24.12-py3 plus your checkout)");
       app.add_option("--job-name", opt->job_name, "job name (default: from the model and mode, e.g. gpt3-175b-pretrain)");
       app.add_option("--time-margin", opt->time_margin,
                      "Slurm --time: added to the expected run (time to train plus the expected cost of failures), e.g. 0.25 or 25%")
           ->capture_default_str();
       return [opt] { return run_export(*opt); };
     }}};

}  // namespace
}  // namespace trainsim::cli
