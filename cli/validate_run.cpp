// `trainsim validate run PLAN [--layers N] [--format table|json|md|html] [--report FILE.html]` (CUDA build only): runs the plan's per-GPU work
// for N transformer layers on this machine's GPUs (calibrate/gpu/proxy_run.hpp) and prints measured vs predicted
// per operation and in total, with the error. Registers itself under `validate` (subcommand_hooks.hpp).
#include <iostream>
#include <optional>

#include "calibrate/gpu/cuda_util.hpp"
#include "calibrate/gpu/proxy_run.hpp"
#include "calibrate/profile_io.hpp"
#include "command.hpp"
#include "models/core/errors.hpp"
#include "output.hpp"
#include "plan_input.hpp"
#include "reports/html_document.hpp"
#include "reports/markdown.hpp"
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
  std::string report;  // --report FILE.html
  std::string calibration;
};

std::string ms(double s) { return fixed(s * 1e3, 3); }
std::string percent(double e) { return (e >= 0 ? "+" : "") + fixed(100 * e, 1) + "%"; }

using Rows = std::vector<std::vector<std::string>>;
const std::vector<std::string> kOpHeader{"layer", "pass", "op", "kind", "shape / bytes", "n", "measured ms", "predicted ms", "error", "note"};
const std::vector<bool> kOpNumeric{false, false, false, false, false, true, true, true, true, false};
const std::vector<std::string> kTotalHeader{"part", "measured ms", "predicted ms", "error", "note"};
const std::vector<bool> kTotalNumeric{false, true, true, true, false};

// One proxy run as every format shows it: the plan and device, the per-op rows, the totals, the notes.
struct RunView {
  const ValidateRunOptions& o;
  const PlanInput& plan;
  const gpu::ProxyReport& r;
  std::string predicted;  // "H100 SXM with calibration profile P" or "... (published defaults; ...)"

  std::vector<std::pair<std::string, std::string>> facts() const {
    const Scenario& s = plan.scenario;
    const ParallelLayout& p = s.parallel;
    const std::string setup = s.model.name + " " + to_string(s.training.mode) + ", seq " + std::to_string(s.training.seq_len) + ", micro-batch " +
                              std::to_string(p.micro_batch_size) + ", tp " + std::to_string(p.tp) + (p.sequence_parallel && p.tp > 1 ? "+sp" : "") +
                              " cp " + std::to_string(p.cp) + " ep " + std::to_string(p.ep) + ", " + to_string(s.training.precision) + ", recompute " +
                              to_string(s.training.recompute);
    return {{"Plan", o.plan + " (" + plan.kind + "): " + setup},
            {"Device", r.device},
            {"Predicted", "for " + predicted},
            {"Layers", std::to_string(r.layers) + " (" + std::to_string(r.dense_layers) + " dense, " + std::to_string(r.moe_layers) +
                           " MoE), one micro-batch, per GPU"}};
  }
  Rows op_rows() const {
    Rows rows;
    for (const auto& row : r.rows)
      rows.push_back({row.layer, row.pass, row.name, row.kind, row.what, std::to_string(row.count), row.measured ? ms(row.measured_s) : "-",
                      ms(row.predicted_s), row.measured && row.predicted_s > 0 ? percent(row.error()) : "-", row.note});
    return rows;
  }
  Rows total_rows() const {
    Rows rows;
    auto sum = [&rows](const std::string& label, const gpu::ProxySums& s) {
      if (s.rows == 0 && s.unmeasured == 0) return;
      std::string note = s.unmeasured ? std::to_string(s.unmeasured) + " op" + (s.unmeasured == 1 ? "" : "s") + " not measured, left out" : "";
      if (s.rows == 0) rows.push_back({label, "-", "-", "-", note});
      else rows.push_back({label, ms(s.measured_s), ms(s.predicted_s), percent(s.error()), note});
    };
    sum("GEMMs", r.gemm);
    sum("attention", r.attention);
    sum("memory-bound", r.memory);
    sum("compute", r.compute);
    sum("TP collectives", r.comm);
    sum("total", r.total);
    if (r.back_to_back_s > 0)
      rows.push_back({"compute back to back", ms(r.back_to_back_s), ms(r.back_to_back_predicted_s), percent(r.back_to_back_s / r.back_to_back_predicted_s - 1),
                      "the " + std::to_string(r.layers) + " layers' ops in order, launch gaps included"});
    return rows;
  }
  std::string all_layers_line() const {
    return "Predicted for all " + std::to_string(r.layers) + " layers (every op, measured or not): " + ms(r.predicted_all_s) + " ms";
  }

  nlohmann::json json() const {
    nlohmann::json j = gpu::to_json(r);
    j["command"] = "validate run";
    j["plan"] = o.plan;
    j["plan_kind"] = plan.kind;
    j["calibration"] = o.calibration.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.calibration);
    return j;
  }
  void table(std::ostream& os) const {
    for (const auto& [label, text] : facts()) os << label << std::string(11 - label.size(), ' ') << text << "\n";
    os << "\n";
    TextTable t(kOpHeader);
    for (auto& row : op_rows()) t.add_row(row);
    t.print(os);
    os << "\nTotals (over the measured ops)\n";
    TextTable tt(kTotalHeader);
    for (auto& row : total_rows()) tt.add_row(row);
    tt.print(os);
    os << all_layers_line() << "\n";
    for (const auto& n : r.notes) os << "Note: " << n << "\n";
  }
  void markdown(std::ostream& os) const {
    md::heading(os, "Validate run: " + o.plan, 1);
    Rows facts_rows;
    for (const auto& [k, v] : facts()) facts_rows.push_back({k, v});
    md::table(os, {"", ""}, facts_rows);
    md::heading(os, "Measured vs predicted, per op");
    md::table(os, kOpHeader, op_rows(), kOpNumeric);
    md::heading(os, "Totals (over the measured ops)");
    md::table(os, kTotalHeader, total_rows(), kTotalNumeric);
    os << md::text(all_layers_line()) << "\n\n";
    for (const auto& n : r.notes) os << "- " << md::text(n) << "\n";
  }
  void html(std::ostream& os) const {
    html::Document d("Validate run: " + o.plan, r.device);
    d.facts(facts());
    d.heading("Measured vs predicted, per op");
    d.table(kOpHeader, op_rows(), kOpNumeric);
    d.heading("Totals (over the measured ops)");
    d.table(kTotalHeader, total_rows(), kTotalNumeric);
    d.paragraph(all_layers_line());
    for (const auto& n : r.notes) d.paragraph(n);
    os << d.str();
  }
};

int run_validate_run(const ValidateRunOptions& o) {
  const PlanInput plan = load_plan_input(o.plan);  // bad plans are exit 2 with or without a GPU
  std::optional<CalibrationProfile> profile;
  if (!o.calibration.empty()) profile = read_calibration_profile(o.calibration, "--calibration");
  if (!o.report.empty()) check_output_path("--report", o.report);

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
  const RunView v{o, plan, r,
                  r.predicted_for + (profile ? " with calibration profile " + o.calibration : " (published defaults; --calibration PROFILE to use measurements)")};
  emit_result(o.format, v.json(), "validate run",
              {[&](std::ostream& os) { v.table(os); }, nullptr, [&](std::ostream& os) { v.markdown(os); }, [&](std::ostream& os) { v.html(os); }},
              o.report);
  return kExitOk;
}

const RegisterSubcommand registered{
    {"validate", "run",
     "Run the plan's per-GPU work for a few layers on this machine's GPUs: measured vs predicted per op (CUDA build)",
     [](CLI::App& app) -> std::function<int()> {
       auto opt = std::make_shared<ValidateRunOptions>();
       app.add_option("PLAN", opt->plan, "scenario with a fixed layout, or the JSON trainsim plan/estimate wrote")->check(non_empty_path())->required();
       app.add_option("--layers", opt->layers, "transformer layers to run")->check(CLI::Range(1, 1000))->capture_default_str();
       app.add_option("--format", opt->format, "table, json, md or html")->check(CLI::IsMember({"table", "json", "md", "html"}));
       app.add_option("--report", opt->report, "also write the measured vs predicted comparison as an HTML report to FILE")->check(non_empty_path());
       app.add_option("--calibration", opt->calibration, "predict with this calibration profile (e.g. the one trainsim calibrate run wrote)")->check(non_empty_path());
       app.add_option("--gpus", opt->gpus, "local GPUs the TP collectives may use (default: all)")->check(CLI::Range(1, 1024));
       app.add_option("--samples", opt->samples, "timed samples per op (the median is reported)")->check(CLI::Range(1, 1000))->capture_default_str();
       return [opt] { return run_validate_run(*opt); };
     }}};

}  // namespace
}  // namespace trainsim::cli
