// `trainsim validate run PLAN [--layers N] [--format table|json]` (CUDA build only): runs the plan's per-GPU work
// for N transformer layers on this machine's GPUs (calibrate/gpu/proxy_run.hpp) and prints measured vs predicted
// per operation and in total, with the error. Registers itself under `validate` (subcommand_hooks.hpp).
#include <iostream>
#include <optional>

#include "calibrate/gpu/cuda_util.hpp"
#include "calibrate/gpu/proxy_run.hpp"
#include "calibrate/profile_io.hpp"
#include "command.hpp"
#include "models/errors.hpp"
#include "plan_input.hpp"
#include "reports/table.hpp"
#include "run_files.hpp"
#include "subcommand_hooks.hpp"

namespace trainsim::cli {
namespace {

struct ValidateRunOptions {
  std::string plan;
  int layers = 2;
  int gpus = 0;
  int samples = 10;
  std::string format = "table";
  std::string calibration;
};

std::string ms(double s) { return fixed(s * 1e3, 3); }
std::string percent(double e) { return (e >= 0 ? "+" : "") + fixed(100 * e, 1) + "%"; }

void print_sum(TextTable& t, const std::string& label, const gpu::ProxySums& s) {
  if (s.rows == 0 && s.unmeasured == 0) return;
  std::string note = s.unmeasured ? std::to_string(s.unmeasured) + " op" + (s.unmeasured == 1 ? "" : "s") + " not measured, left out" : "";
  if (s.rows == 0) {
    t.add_row({label, "-", "-", "-", note});
    return;
  }
  t.add_row({label, ms(s.measured_s), ms(s.predicted_s), percent(s.error()), note});
}

int run_validate_run(const ValidateRunOptions& o) {
  const PlanInput plan = load_plan_input(o.plan);  // bad plans are exit 2 with or without a GPU
  std::optional<CalibrationProfile> profile;
  if (!o.calibration.empty()) profile = read_calibration_profile(o.calibration, "--calibration");

  const gpu::DeviceProbe probe = gpu::probe_devices();
  if (probe.count < 1) {
    std::cerr << "error: no CUDA device found: " << probe.error << " (trainsim validate run executes the plan's work on this machine's GPUs)\n";
    return kExitBadInput;
  }
  gpu::ProxyOptions po;
  po.layers = o.layers;
  po.gpus = o.gpus;
  po.samples = o.samples;
  gpu::ProxyReport r;
  try {
    r = gpu::proxy_run(plan.scenario, profile ? &*profile : nullptr, po, [](const std::string& line) { std::cerr << line << "\n" << std::flush; });
  } catch (const gpu::GpuError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return std::string(e.what()).rfind("no CUDA device found", 0) == 0 ? kExitBadInput : kExitInternal;
  }
  const std::string predicted = r.predicted_for + (profile ? " with calibration profile " + o.calibration : " (published defaults; --calibration PROFILE to use measurements)");

  if (o.format == "json") {
    nlohmann::json j = gpu::to_json(r);
    j["command"] = "validate run";
    j["plan"] = o.plan;
    j["plan_kind"] = plan.kind;
    j["calibration"] = profile ? nlohmann::json(o.calibration) : nlohmann::json(nullptr);
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }

  const Scenario& s = plan.scenario;
  const ParallelLayout& p = s.parallel;
  std::cout << "Plan       " << o.plan << " (" << plan.kind << "): " << s.model.name << " " << to_string(s.training.mode) << ", seq " << s.training.seq_len
            << ", micro-batch " << p.micro_batch_size << ", tp " << p.tp << (p.sequence_parallel && p.tp > 1 ? "+sp" : "") << " cp " << p.cp
            << " ep " << p.ep << ", " << to_string(s.training.precision) << ", recompute " << to_string(s.training.recompute) << "\n";
  std::cout << "Device     " << r.device << "\n";
  std::cout << "Predicted  for " << predicted << "\n";
  std::cout << "Layers     " << r.layers << " (" << r.dense_layers << " dense, " << r.moe_layers << " MoE), one micro-batch, per GPU\n\n";

  TextTable t({"layer", "pass", "op", "kind", "shape / bytes", "n", "measured ms", "predicted ms", "error", "note"});
  for (const auto& row : r.rows)
    t.add_row({row.layer, row.pass, row.name, row.kind, row.what, std::to_string(row.count), row.measured ? ms(row.measured_s) : "-", ms(row.predicted_s),
               row.measured && row.predicted_s > 0 ? percent(row.error()) : "-", row.note});
  t.print(std::cout);

  std::cout << "\nTotals (over the measured ops)\n";
  TextTable tt({"part", "measured ms", "predicted ms", "error", "note"});
  print_sum(tt, "GEMMs", r.gemm);
  print_sum(tt, "attention", r.attention);
  print_sum(tt, "memory-bound", r.memory);
  print_sum(tt, "compute", r.compute);
  print_sum(tt, "TP collectives", r.comm);
  print_sum(tt, "total", r.total);
  if (r.back_to_back_s > 0)
    tt.add_row({"compute back to back", ms(r.back_to_back_s), ms(r.back_to_back_predicted_s), percent(r.back_to_back_s / r.back_to_back_predicted_s - 1),
                "the " + std::to_string(r.layers) + " layers' ops in order, launch gaps included"});
  tt.print(std::cout);
  std::cout << "Predicted for all " << r.layers << " layers (every op, measured or not): " << ms(r.predicted_all_s) << " ms\n";
  for (const auto& n : r.notes) std::cout << "Note: " << n << "\n";
  return kExitOk;
}

const RegisterSubcommand registered{
    {"validate", "run",
     "Run the plan's per-GPU work for a few layers on this machine's GPUs: measured vs predicted per op (CUDA build)",
     [](CLI::App& app) -> std::function<int()> {
       auto opt = std::make_shared<ValidateRunOptions>();
       app.add_option("PLAN", opt->plan, "scenario with a fixed layout, or the JSON trainsim plan/estimate wrote")->check(non_empty_path())->required();
       app.add_option("--layers", opt->layers, "transformer layers to run")->check(CLI::Range(1, 1000))->capture_default_str();
       app.add_option("--format", opt->format, "table or json")->check(CLI::IsMember({"table", "json"}));
       app.add_option("--calibration", opt->calibration, "predict with this calibration profile (e.g. the one trainsim calibrate run wrote)")->check(non_empty_path());
       app.add_option("--gpus", opt->gpus, "local GPUs the TP collectives may use (default: all)")->check(CLI::Range(1, 1024));
       app.add_option("--samples", opt->samples, "timed samples per op (the median is reported)")->check(CLI::Range(1, 1000))->capture_default_str();
       return [opt] { return run_validate_run(*opt); };
     }}};

}  // namespace
}  // namespace trainsim::cli
