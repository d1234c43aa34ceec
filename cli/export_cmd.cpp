// `trainsim export PLAN --to TARGET`: one fixed plan rendered as launch files for a framework or a
// scheduler (the targets register themselves in reports/export/). PLAN is a scenario file (its layout is
// taken as fixed, missing degrees derived as for `estimate`) or the JSON `plan` / `estimate` wrote.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "command.hpp"
#include "flag_values.hpp"
#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"
#include "models/core/units.hpp"
#include "models/layout/layout_check.hpp"
#include "models/layout/search.hpp"
#include "models/memory/memory.hpp"
#include "models/reliability/walltime.hpp"
#include "models/scenario/framework.hpp"
#include "models/scenario/scenario.hpp"
#include "models/step/pipeline_schedule.hpp"
#include "models/step/step.hpp"
#include "plan_input.hpp"
#include "reports/export/export_registry.hpp"
#include "reports/plan_report.hpp"
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
  std::vector<std::string> rdma_resources;  // NAME[=COUNT], repeated
};

// The fewest nodes an elastic plan runs on: its data-parallel replicas down to `fraction` of them (at least one),
// each the model-parallel ranks; 0 when that is the whole job (nothing to shrink).
int elastic_min_nodes(const ExportPlan& p, double fraction) {
  const ParallelLayout& l = p.layout;
  const long long model_parallel = static_cast<long long>(l.tp) * l.pp * l.cp;
  const long long min_dp = std::max(1LL, static_cast<long long>(std::ceil(fraction * l.dp - 1e-9)));
  const int per_node = std::max(1, p.gpus_per_node_used());
  const auto nodes = static_cast<int>((model_parallel * min_dp + per_node - 1) / per_node);
  return nodes < p.hardware.num_nodes ? nodes : 0;
}

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

// The likely step range (the accuracy band around the plan's own step time) and the memory of the most loaded GPU.
void add_band_and_memory(ExportPlan& plan) {
  const StepEstimate step = StepModel(plan.model, plan.training, plan.hardware).estimate(plan.layout);
  if (plan.step_time_s > 0 && step.time_s > 0) {
    plan.step_time_low_s = plan.step_time_s * step.time_s_low / step.time_s;
    plan.step_time_high_s = plan.step_time_s * step.time_s_high / step.time_s;
  }
  const MemoryEstimate memory = MemoryModel(plan.model, plan.training, plan.hardware).estimate(plan.layout);
  plan.memory_bytes = memory.worst.total;
  plan.capacity_bytes = memory.capacity;
}

// "tp1 pp1 dp16, ZeRO 3, micro-batch 1, recompute none": the plan table's layout and the rest a launch needs.
std::string plan_text(const Plan& p) {
  return layout_text(p) + ", ZeRO " + std::to_string(p.training.zero_stage) + ", micro-batch " + std::to_string(p.layout.micro_batch_size) +
         ", recompute " + to_string(p.training.recompute);
}

// What would run under `framework` on the plan's GPUs: the fastest layout that fits, as a hint for a refusal.
std::string what_fits(const Scenario& scenario, int gpus, const std::string& framework, const std::string& scenario_file) {
  SearchOptions so;
  so.top = 1;
  so.threads = 1;
  const SearchResult r = search_plans(scenario, {gpus}, SearchSpace{}, so);
  const std::string command = "trainsim plan " + (scenario_file.empty() ? std::string() : scenario_file + " ") + "--framework " + framework +
                              " --gpus " + std::to_string(gpus) + " lists them" + (scenario_file.empty() ? " (on the plan's scenario)" : "");
  if (r.plans.empty()) return "no layout of " + std::to_string(gpus) + " GPUs fits under " + framework + ": try more GPUs (" + command + ")";
  const Plan& best = r.plans.front();
  return "under " + framework + " on " + std::to_string(gpus) + " GPUs the fastest layout that fits is " + plan_text(best) + " (" +
         gib(best.memory.total, 1) + " GiB, step " + format_seconds(best.step.time_s) + "); " + command;
}

// Prices the plan again under the target's framework: step time, MFU, time to train, band and memory as that stack
// would run it. Refuses (InputError, exit 2) a layout the framework cannot run or that does not fit there.
// `scenario_file`: the plan's scenario file for the hint, empty when the plan came as JSON.
void reprice_for_framework(ExportPlan& plan, const std::string& name, Scenario scenario, const std::string& target, const std::string& scenario_file) {
  const FrameworkTraits* fw = find_framework(name);
  if (!fw) throw std::logic_error("export target " + target + " names an unknown framework " + name);
  const std::string was = plan.framework;
  plan.training.framework = *fw;
  plan.layout.split_rule = fw->pipeline_split;
  scenario.training = plan.training;
  scenario.parallel = plan.layout;
  const int gpus = plan.hardware.num_gpus;
  if (const LayoutIssue issue = check_layout(plan.model, plan.training, plan.layout, gpus); issue != LayoutIssue::None) {
    const InputError why = layout_error(issue, plan.model, plan.training, plan.layout, gpus);
    throw InputError("--to", "\"" + target + "\"", "a target that runs this " + was + " layout (" + target + " runs " + name + ")",
                     why.path() + " " + why.value() + " cannot run there: " + why.expected() + "; " + what_fits(scenario, gpus, name, scenario_file));
  }
  StepModel sm(plan.model, plan.training, plan.hardware);
  const StepEstimate step = sm.estimate(plan.layout);
  const MemoryEstimate memory = MemoryModel(plan.model, plan.training, plan.hardware).estimate(plan.layout);
  if (!memory.fits)
    throw InputError("--to", "\"" + target + "\"", "a target this layout fits under (" + target + " runs " + name + ")",
                     "under " + name + " it needs " + gib(memory.worst.total, 1) + " GiB of the " + gib(memory.capacity, 1) + " GiB of a " +
                         plan.hardware.gpu.name + "; " + what_fits(scenario, gpus, name, scenario_file));
  const TrainingCost cost = sm.training_cost(step, plan.layout);
  plan.plan_framework = was;
  plan.plan_step_time_s = plan.step_time_s;
  plan.plan_mfu = plan.mfu;
  plan.framework = name;
  plan.step_time_s = step.time_s;
  plan.step_time_low_s = step.time_s_low;
  plan.step_time_high_s = step.time_s_high;
  plan.mfu = step.mfu;
  plan.time_to_train_s = cost.time_to_train_s;
  plan.iterations = cost.iterations;
  plan.memory_bytes = memory.worst.total;
  plan.capacity_bytes = memory.capacity;
  std::cerr << "note: --to " << target << " runs " << name << ", not the plan's " << was << ": re-evaluated there, step " << format_seconds(step.time_s)
            << " (was " << format_seconds(plan.plan_step_time_s) << "), MFU " << fixed(100 * step.mfu, 1) << "% (was " << fixed(100 * plan.plan_mfu, 1)
            << "%), " << gib(memory.worst.total, 1) << " GiB of " << gib(memory.capacity, 1) << " GiB\n";
}

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
  // DualPipe is a library the training code calls (deepseek-ai/DualPipe), not a schedule any target's flags select:
  // an export would launch another schedule than the one priced.
  if (pairs_stages(input.scenario.parallel))
    throw InputError("/parallel/schedule", std::string("\"") + to_string(input.scenario.parallel.schedule) + "\"", "a schedule the export targets launch: gpipe, 1f1b or interleaved",
                     "DualPipe (deepseek-ai/DualPipe) is called from the training code; price the exported stack with \"1f1b\"");
  ExportPlan plan;
  plan.model = input.scenario.model;
  plan.training = input.scenario.training;
  plan.layout = input.scenario.parallel;
  plan.hardware = input.scenario.hardware;
  plan.job_name = default_job_name(input.scenario);
  plan.source = input.source;
  plan.framework = framework_for(plan.training, plan.layout).name;
  plan.step_time_s = input.step_time_s;
  plan.mfu = input.mfu;
  plan.time_to_train_s = input.time_to_train_s;
  plan.iterations = input.iterations;
  if (!opt.job_name.empty()) plan.job_name = opt.job_name;
  plan.queue = opt.queue;
  plan.image = opt.image;

  // The target's framework: a launcher or scheduler starts the plan's own; a framework target may run another one,
  // and then the plan is priced again there, or refused where it cannot run or does not fit.
  if (const std::string target = exporter->framework_for(plan); !target.empty() && target != plan.framework)
    reprice_for_framework(plan, target, input.scenario, exporter->name(), kind == "scenario" ? opt.plan : std::string());
  else
    add_band_and_memory(plan);
  if (plan.time_to_train_s > 0) {
    plan.walltime = walltime_estimate(plan.model, plan.training, plan.layout, plan.hardware, plan.time_to_train_s, *margin);
    if (plan.step_time_s > 0 && std::isfinite(plan.walltime.interval_s) && plan.walltime.interval_s > 0)
      plan.checkpoint_interval_steps = std::max(1LL, std::llround(plan.walltime.interval_s / plan.step_time_s));
  }
  for (const std::string& r : opt.rdma_resources) plan.rdma_resources.push_back(parse_rdma_resource(r));
  if (input.save_steps > 0) plan.checkpoint_interval_steps = input.save_steps, plan.checkpoint_interval_given = true;  // the operator's own interval wins
  if (input.elastic) {
    plan.elastic_min_nodes = elastic_min_nodes(plan, input.elastic_min_fraction);
    // Each failure shrinks the group and each repair grows it back: two restarts of the worker group per failure
    // expected within the time limit asked (at least one failure's worth).
    const double failures = plan.walltime.mtbf_s > 0 && std::isfinite(plan.walltime.limit_s) ? plan.walltime.limit_s / plan.walltime.mtbf_s : 1;
    plan.max_restarts = 2 * static_cast<int>(std::clamp(std::ceil(failures), 1.0, 1e6));
  }
  if (plan.memory_bytes > plan.capacity_bytes)
    std::cerr << "warning: this layout needs " << gib(plan.memory_bytes, 1) << " GiB on its most loaded GPU, more than the " << gib(plan.capacity_bytes, 1)
              << " GiB of a " << plan.hardware.gpu.name << " (trainsim estimate " << opt.plan << " shows why)\n";

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
    {"export", "Write the files that launch a plan as priced: Megatron-LM, DeepSpeed, HF Trainer, TRL, ms-swift, torchtitan, torchrun, Slurm, Volcano, Kubeflow",
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
       app.add_option("--image", opt->image, "container image for Volcano / Kubeflow, holding the plan's stack (default: the accelerator vendor's PyTorch image; Megatron-LM expected at /workspace/Megatron-LM)");
       app.add_option("--job-name", opt->job_name, "job name (default: from the model and mode, e.g. gpt3-175b-pretrain)");
       app.add_option("--time-margin", opt->time_margin,
                      "Slurm --time: added to the expected run (time to train plus the expected cost of failures), e.g. 0.25 or 25%")
           ->capture_default_str();
       app.add_option("--rdma-resource", opt->rdma_resources,
                      "Volcano / Kubeflow: an RDMA device plugin's resource each pod asks beside its GPUs, DOMAIN/NAME[=COUNT] (e.g. "
                      "rdma/rdma_shared_device_a=1, nvidia.com/hostdev=8); repeat for several; adds the IPC_LOCK capability RDMA needs");
       return [opt] { return run_export(*opt); };
     }}};

}  // namespace
}  // namespace trainsim::cli
