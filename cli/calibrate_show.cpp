#include "calibrate_show.hpp"

#include <optional>
#include <sstream>
#include <vector>

#include "calibrate/profile_io.hpp"
#include "command.hpp"
#include "models/scenario/presets.hpp"
#include "models/scenario/scenario.hpp"
#include "output.hpp"
#include "reports/html_document.hpp"
#include "reports/markdown.hpp"
#include "reports/table.hpp"
#include "run_files.hpp"

namespace trainsim::cli {

void print_curve_fits(std::ostream& os, const CalibrationProfile& p) {
  for (const auto& c : p.collectives) {
    const AlphaBeta f = fit_alpha_beta(c.points, bus_bandwidth_factor(c.op, c.group_size));
    os << "  " << to_string(c.op) << " " << to_string(c.scope) << "-node, " << c.group_size << " ranks";
    if (c.scope == CommScope::Inter) os << " (" << c.ranks_per_node << " per node)";
    if (!c.fabric.empty()) os << " on " << c.fabric;
    os << ": " << c.points.size() << " point" << (c.points.size() > 1 ? "s" : "") << ", busbw " << fixed(f.beta / 1e9, 1) << " GB/s";
    if (f.sizes >= 2) os << ", latency " << fixed(f.alpha_s * 1e6, 1) << " us, fit within " << fixed(f.max_rel_error * 100, 1) << "%";
    else os << ", one message size (latency from the default model when used)";
    os << "\n";
  }
}

namespace {

using Rows = std::vector<std::vector<std::string>>;

// The preset's GPU with its default fabrics (8 per node, NDR between nodes), to say what the profile covers.
HardwareSpec preset_hardware(const std::string& gpu) {
  return parse_scenario({{"model", "llama3-8b"}, {"training", {{"seq_len", 4096}, {"global_batch_size", 16}}},
                         {"hardware", {{"gpu", gpu}, {"num_gpus", 16}}}},
                        false)
      .hardware;
}

// What every format shows of a profile, computed once.
struct ProfileView {
  std::string path;
  const CalibrationProfile& p;
  std::string preset;                 // the GPU preset coverage is judged against ("": none)
  std::optional<GpuSpec> gpu;
  std::optional<HardwareSpec> hw;
  std::optional<CalibrationCoverage> coverage;

  std::string gpu_text() const {
    std::string out = p.gpu.name;
    if (!p.gpu.preset.empty()) out += " (preset " + p.gpu.preset + ")";
    if (p.gpu.sms > 0) out += ", " + std::to_string(p.gpu.sms) + " SMs";
    if (!p.gpu.driver_version.empty()) out += ", driver " + p.gpu.driver_version;
    if (!p.gpu.cuda_version.empty()) out += ", CUDA " + p.gpu.cuda_version;
    return out;
  }
  std::string provenance_text() const {
    return p.provenance.source + "; who: " + (p.provenance.who.empty() ? "(not recorded)" : p.provenance.who) +
           "; when: " + (p.provenance.when.empty() ? "(not recorded)" : p.provenance.when);
  }
  std::string command_text() const { return p.provenance.command.empty() ? "(not recorded)" : p.provenance.command; }
  std::string hbm_text() const {
    std::string out = p.hbm_bandwidth > 0 ? fixed(p.hbm_bandwidth / 1e12, 2) + " TB/s" : "not measured";
    if (!p.hbm_source.empty()) out += " (" + p.hbm_source + ")";
    return out;
  }
  std::string gemm_title() const {
    return "GEMM points (" + std::to_string(p.gemm.size()) + ")" + (gpu ? ", efficiency of " + gpu->name + "'s dense peak" : "");
  }
  // A GEMM point's share of the GPU's dense peak in its dtype ("": no GPU to judge by).
  std::string peak_share(const GemmPoint& g) const {
    if (!gpu) return "";
    Precision prec = Precision::Bf16;
    for (Precision q : {Precision::Fp32, Precision::Fp16, Precision::Bf16, Precision::Fp8})
      if (gemm_dtype(q) == g.dtype) prec = q;
    return fixed(100 * g.tflops * 1e12 / gemm_peak_flops(*gpu, prec), 1) + "%";
  }
  std::string coverage_label() const { return path + " on " + preset + " with its default fabrics"; }
  std::vector<std::string> coverage_lines() const {
    std::vector<std::string> lines;
    if (!coverage) return lines;
    std::ostringstream os;
    print_calibration_summary(os, coverage_label(), p, *coverage);
    std::istringstream in(os.str());
    for (std::string line; std::getline(in, line);)
      if (line.find_first_not_of(' ') != std::string::npos) lines.push_back(line.substr(line.find_first_not_of(' ')));
    return lines;
  }

  std::vector<std::pair<std::string, std::string>> facts() const {
    std::vector<std::pair<std::string, std::string>> out{{"Profile", path + " (format version " + std::to_string(p.version) + ")"},
                                                         {"GPU", gpu_text()},
                                                         {"Provenance", provenance_text()},
                                                         {"Command", command_text()},
                                                         {"HBM", hbm_text()}};
    if (!p.provenance.notes.empty()) out.insert(out.begin() + 4, {"Notes", p.provenance.notes});
    return out;
  }
  Rows gemm_rows() const {
    Rows rows;
    for (const auto& g : p.gemm)
      rows.push_back({to_string(g.dtype), fixed(g.m, 0), fixed(g.n, 0), fixed(g.k, 0), fixed(g.tflops, 1), peak_share(g)});
    return rows;
  }
  Rows curve_rows() const {
    Rows rows;
    for (const auto& c : p.collectives) {
      const AlphaBeta f = fit_alpha_beta(c.points, bus_bandwidth_factor(c.op, c.group_size));
      rows.push_back({to_string(c.op), to_string(c.scope), std::to_string(c.group_size), std::to_string(c.ranks_per_node), c.fabric.empty() ? "any" : c.fabric,
                      std::to_string(c.points.size()), fixed(f.beta / 1e9, 1), f.sizes >= 2 ? fixed(f.alpha_s * 1e6, 1) : "-",
                      f.sizes >= 2 ? fixed(f.max_rel_error * 100, 1) + "%" : "one size"});
    }
    return rows;
  }
  Rows fitted_rows() const {
    Rows rows;
    for (const auto& [key, value] : p.fitted_parameters) rows.push_back({key, fixed(value, 4)});
    return rows;
  }
};

const std::vector<std::string> kGemmHeader{"dtype", "m", "n", "k", "TFLOP/s", "of dense peak"};
const std::vector<std::string> kCurveHeader{"collective", "scope", "ranks", "per node", "fabric", "points", "busbw GB/s", "latency us", "fit within"};

nlohmann::json show_json(const ProfileView& v) {
  nlohmann::json j = {{"profile", v.path}, {"content", to_json(v.p)}};
  nlohmann::json fits = nlohmann::json::array();
  for (const auto& c : v.p.collectives) {
    const AlphaBeta f = fit_alpha_beta(c.points, bus_bandwidth_factor(c.op, c.group_size));
    fits.push_back({{"op", to_string(c.op)}, {"scope", to_string(c.scope)}, {"group_size", c.group_size}, {"ranks_per_node", c.ranks_per_node},
                    {"busbw", f.beta}, {"alpha_s", f.sizes >= 2 ? nlohmann::json(f.alpha_s) : nlohmann::json(nullptr)},
                    {"points", f.points}, {"sizes", f.sizes}, {"max_rel_error", f.max_rel_error}});
  }
  j["collective_fits"] = fits;
  if (v.coverage) j["coverage"] = calibration_summary_json(v.path, v.p, *v.coverage);
  return j;
}

void print_table(std::ostream& os, const ProfileView& v) {
  const CalibrationProfile& p = v.p;
  os << "Profile     " << v.path << " (format version " << p.version << ")\n";
  os << "GPU         " << v.gpu_text() << "\n";
  os << "Provenance  " << v.provenance_text() << "\n";
  os << "Command     " << v.command_text() << "\n";
  if (!p.provenance.notes.empty()) os << "Notes       " << p.provenance.notes << "\n";
  os << "\n" << v.gemm_title() << "\n";
  for (const auto& g : p.gemm) {
    os << "  " << to_string(g.dtype) << " " << fixed(g.m, 0) << " x " << fixed(g.n, 0) << " x " << fixed(g.k, 0) << ": " << fixed(g.tflops, 1) << " TFLOP/s";
    if (v.gpu) os << " = " << v.peak_share(g);
    os << "\n";
  }
  os << "\nHBM         " << v.hbm_text();
  os << "\n\nCollectives (" << p.collectives.size() << " curves; alpha-beta fits, time = alpha + bytes x factor / busbw)\n";
  print_curve_fits(os, p);
  if (!p.fitted_parameters.empty()) {
    os << "\nFitted parameters (replace the shipped values; " << p.fitted_parameters_source << ")\n";
    for (const auto& [key, value] : p.fitted_parameters) os << "  " << key << " = " << fixed(value, 4) << "\n";
  }
  if (v.coverage) print_calibration_summary(os, v.coverage_label(), p, *v.coverage);
}

void print_markdown(std::ostream& os, const ProfileView& v, const ProfileInputs* inputs = nullptr) {
  md::heading(os, "Calibration profile " + v.path, 1);
  Rows facts;
  for (const auto& [k, value] : v.facts()) facts.push_back({k, value});
  md::table(os, {"", ""}, facts);
  if (inputs) {
    md::heading(os, inputs->title);
    md::table(os, inputs->header, inputs->rows);
  }
  md::heading(os, v.gemm_title());
  md::table(os, kGemmHeader, v.gemm_rows(), {false, true, true, true, true, true});
  md::heading(os, "Collectives (alpha-beta fits: time = alpha + bytes x factor / busbw)");
  md::table(os, kCurveHeader, v.curve_rows(), {false, false, true, true, false, true, true, true, true});
  if (!v.p.fitted_parameters.empty()) {
    md::heading(os, "Fitted parameters (" + v.p.fitted_parameters_source + ")");
    md::table(os, {"parameter", "value"}, v.fitted_rows(), {false, true});
  }
  if (v.coverage) {
    md::heading(os, "What it covers on " + v.preset);
    for (const auto& line : v.coverage_lines()) os << "- " << md::text(line) << "\n";
    os << "\n";
  }
}

void write_html(std::ostream& os, const ProfileView& v, const ProfileInputs* inputs = nullptr) {
  html::Document d("Calibration profile " + v.path, v.path);
  d.facts(v.facts());
  if (inputs) {
    d.heading(inputs->title);
    d.table(inputs->header, inputs->rows);
  }
  d.heading(v.gemm_title());
  d.table(kGemmHeader, v.gemm_rows(), {false, true, true, true, true, true});
  d.heading("Collectives (alpha-beta fits: time = alpha + bytes x factor / busbw)");
  d.table(kCurveHeader, v.curve_rows(), {false, false, true, true, false, true, true, true, true});
  if (!v.p.fitted_parameters.empty()) {
    d.heading("Fitted parameters (" + v.p.fitted_parameters_source + ")");
    d.table({"parameter", "value"}, v.fitted_rows(), {false, true});
  }
  if (v.coverage) {
    d.heading("What it covers on " + v.preset);
    for (const auto& line : v.coverage_lines()) d.paragraph(line);
  }
  os << d.str();
}

// The view of a profile, judged against `gpu` (empty: the profile's own preset, if it names one).
ProfileView view_of(const std::string& path, const CalibrationProfile& p, const std::string& gpu) {
  ProfileView v{path, p, !gpu.empty() ? gpu : p.gpu.preset, std::nullopt, std::nullopt, std::nullopt};
  if (!v.preset.empty()) {
    v.gpu = parse_gpu(nlohmann::json(v.preset), "--gpu");
    v.hw = preset_hardware(v.preset);
    v.coverage = CalibrationFit(p, *v.hw).coverage();
  }
  return v;
}

}  // namespace

void emit_written_profile(const std::string& what, nlohmann::json result, const std::string& path, const CalibrationProfile& p,
                          const ProfileInputs& inputs, const std::function<void(std::ostream&)>& table, const std::string& format,
                          const std::string& report) {
  const ProfileView v = view_of(path, p, "");
  result["profile"] = show_json(v);
  emit_result(format, result, what,
              {table, nullptr, [&](std::ostream& os) { print_markdown(os, v, &inputs); }, [&](std::ostream& os) { write_html(os, v, &inputs); }},
              report);
}

int run_calibrate_show(const std::string& profile, const std::string& gpu, const std::string& format, const std::string& report) {
  if (!gpu.empty()) expand_preset(PresetKind::Gpu, nlohmann::json(gpu), "--gpu");
  note_input_file(profile);
  const CalibrationProfile p = read_calibration_profile(profile, "PROFILE");
  const ProfileView v = view_of(profile, p, gpu);
  emit_result(format, show_json(v), "calibrate show",
              {[&](std::ostream& os) { print_table(os, v); }, nullptr, [&](std::ostream& os) { print_markdown(os, v); },
               [&](std::ostream& os) { write_html(os, v); }},
              report);
  return kExitOk;
}

}  // namespace trainsim::cli
