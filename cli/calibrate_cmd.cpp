// `trainsim calibrate import nccl-tests LOG... -o PROFILE.json [--gpu NAME]`,
// `trainsim calibrate import gemm CSV -o PROFILE.json`, `trainsim calibrate show PROFILE`:
// turn measurements users already have into a calibration profile, and show what a profile holds; every one in each
// output format (--format, --report) through emit_result.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "calibrate/import_common.hpp"
#include "calibrate/import_gemm_csv.hpp"
#include "calibrate/import_nccl_tests.hpp"
#include "calibrate/profile_io.hpp"
#include "calibrate_show.hpp"
#include "command.hpp"
#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"
#include "models/scenario/presets.hpp"
#include "models/scenario/scenario.hpp"
#include "output.hpp"
#include "reports/table.hpp"
#include "run_files.hpp"
#include "subcommand_hooks.hpp"

namespace trainsim::cli {
namespace {

struct CalibrateOptions {
  std::vector<std::string> logs;
  std::string csv;
  std::string output;
  std::string gpu;
  std::string intra_fabric, inter_fabric;
  bool merge = false;
  std::string profile;
  std::string format = "table";
  std::string report;
};



// A preset name, checked (the error lists the closest names).
void check_gpu_preset(const std::string& name) {
  if (!name.empty()) expand_preset(PresetKind::Gpu, nlohmann::json(name), "--gpu");
}

void check_fabric_preset(const std::string& name, const char* flag) {
  if (!name.empty()) expand_preset(PresetKind::Fabric, nlohmann::json(name), flag);
}

// The profile at -o when --merge asks to add to it, else a fresh one.
CalibrationProfile start_profile(const CalibrateOptions& o) {
  if (o.merge && std::filesystem::exists(o.output)) return read_calibration_profile(o.output, "-o");
  return {};
}

void stamp(CalibrationProfile& p, const CalibrateOptions& o, const std::string& command, const std::string& notes) {
  if (!o.gpu.empty()) {
    p.gpu.preset = o.gpu;
    if (p.gpu.name.empty()) p.gpu.name = o.gpu;
  }
  if (p.gpu.name.empty()) p.gpu.name = "unknown";
  p.provenance.source = "measured";
  p.provenance.who = login_name();
  p.provenance.when = utc_timestamp();
  p.provenance.command = p.provenance.command.empty() || !o.merge ? command : p.provenance.command + "; " + command;
  p.provenance.notes = p.provenance.notes.empty() || !o.merge ? notes : p.provenance.notes + " " + notes;
}

std::string quoted_join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += " " + (i.find(' ') == std::string::npos ? i : "'" + i + "'");
  return s;
}

// What the fits make of the profile's curves, one line each.
int run_import_nccl(const CalibrateOptions& o) {
  check_gpu_preset(o.gpu);
  check_fabric_preset(o.intra_fabric, "--intra-node");
  check_fabric_preset(o.inter_fabric, "--inter-node");
  for (const auto& file : o.logs) note_input_file(file);
  check_output_path("-o", o.output);
  if (!o.report.empty()) check_output_path("--report", o.report);
  std::vector<NcclTestsLog> logs;
  std::vector<std::string> notes;
  long long malformed = 0;
  std::ostringstream read;  // one line per log, for the table
  ProfileInputs inputs{"nccl-tests logs read", {"file", "test", "ranks", "nodes", "NCCL", "rows used", "malformed", "other lines", "avg busbw GB/s"}, {}};
  nlohmann::json files = nlohmann::json::array();
  for (const auto& file : o.logs) {
    std::ifstream in = open_input_file("LOG", file, "a readable nccl-tests output file");
    NcclTestsLog log = parse_nccl_tests_log(in, file);
    read << "Read " << file << ": " << (log.test.empty() ? "unknown test" : log.test);
    if (!log.test_from.empty()) read << " (from the " << log.test_from << ")";
    read << ", " << log.ranks << " ranks on " << log.nodes << " node" << (log.nodes == 1 ? "" : "s");
    if (!log.gpu_names.empty()) read << " (" << join(log.gpu_names, ", ") << ")";
    if (!log.nccl_version.empty()) read << ", NCCL " << log.nccl_version;
    read << ": " << log.rows << " rows used, " << log.malformed.size() << " malformed (skipped), " << log.ignored_lines
         << " other lines ignored (NCCL debug output, text outside the table); " << log.lines << " lines read";
    if (log.avg_busbw > 0) read << "; avg busbw " << fixed(log.avg_busbw / 1e9, 2) << " GB/s";
    read << "\n";
    inputs.rows.push_back({file, log.test.empty() ? "unknown" : log.test, std::to_string(log.ranks), std::to_string(log.nodes), log.nccl_version,
                           std::to_string(log.rows), std::to_string(log.malformed.size()), std::to_string(log.ignored_lines),
                           log.avg_busbw > 0 ? fixed(log.avg_busbw / 1e9, 2) : "-"});
    files.push_back({{"path", file}, {"test", log.test}, {"test_from", log.test_from}, {"ranks", log.ranks}, {"nodes", log.nodes},
                     {"gpus", log.gpu_names}, {"nccl_version", log.nccl_version}, {"rows", log.rows}, {"malformed", log.malformed.size()},
                     {"ignored_lines", log.ignored_lines}, {"lines", log.lines},
                     {"avg_busbw", log.avg_busbw > 0 ? nlohmann::json(log.avg_busbw) : nlohmann::json(nullptr)}});
    if (!log.malformed.empty()) {
      std::cerr << "warning: " << file << ": " << describe_malformed(log.malformed) << "\n";
      notes.push_back(file + ": " + describe_malformed(log.malformed) + ", not used.");
      malformed += static_cast<long long>(log.malformed.size());
    }
    for (const auto& w : log.warnings) {
      std::cerr << "warning: " << file << ": " << w << "\n";
      notes.push_back(file + ": " + w + ".");
    }
    if (log.gpu_names.size() > 1) std::cerr << "warning: " << file << ": several GPU models in one run: " << join(log.gpu_names, ", ") << "\n";
    logs.push_back(std::move(log));
  }
  CalibrationProfile p = start_profile(o);
  std::vector<std::string> merged_warnings;
  add_nccl_tests(p, logs, {o.intra_fabric, o.inter_fabric}, &merged_warnings);
  for (const auto& w : merged_warnings) {
    std::cerr << "warning: " << w << "\n";
    notes.push_back(w + ".");
  }
  std::string command = "trainsim calibrate import nccl-tests" + quoted_join(o.logs) + " -o " + o.output;
  if (!o.gpu.empty()) command += " --gpu " + o.gpu;
  if (!o.intra_fabric.empty()) command += " --intra-node " + o.intra_fabric;
  if (!o.inter_fabric.empty()) command += " --inter-node " + o.inter_fabric;
  if (o.merge) command += " --merge";
  std::string note = "Imported from nccl-tests output (out-of-place time and busbw).";
  if (!notes.empty()) note += " " + join(notes, " ");
  stamp(p, o, command, note);
  parse_calibration_profile(to_json(p));  // what is written must read back
  write_output_file("-o", o.output, [&](std::ostream& os) { os << calibration_profile_text(p); });
  const nlohmann::json result = {{"command", "calibrate import nccl-tests"}, {"output", o.output}, {"files", files}, {"malformed_lines", malformed},
                                 {"warnings", notes}};
  emit_written_profile("calibrate import nccl-tests", result, o.output, p, inputs,
                       [&](std::ostream& os) {
                         os << read.str() << "Wrote " << o.output << " (" << malformed << " malformed line" << (malformed == 1 ? "" : "s")
                            << " in total, reported above)\n";
                         print_curve_fits(os, p);
                       },
                       o.format, o.report);
  return kExitOk;
}

int run_import_gemm(const CalibrateOptions& o) {
  check_gpu_preset(o.gpu);
  std::ifstream in = open_input_file("CSV", o.csv, "a readable CSV file dtype,m,n,k,tflops (or time_s)");
  check_output_path("-o", o.output);
  if (!o.report.empty()) check_output_path("--report", o.report);
  const GemmCsv csv = parse_gemm_csv(in, o.csv);
  std::ostringstream read;
  read << "Read " << o.csv << ": " << csv.rows << " rows used (" << csv.value_column << (csv.header ? "" : ", no header: columns taken as dtype,m,n,k,tflops")
       << "), " << csv.malformed.size() << " malformed (skipped); " << csv.lines << " lines read (" << (csv.header ? "1 header, " : "") << csv.comment_lines
       << " comment or blank)\n";
  std::string note = "Imported from a GEMM table (" + csv.value_column + ").";
  if (!csv.malformed.empty()) {
    std::cerr << "warning: " << o.csv << ": " << describe_malformed(csv.malformed) << "\n";
    note += " " + o.csv + ": " + describe_malformed(csv.malformed) + ", not used.";
  }
  CalibrationProfile p = start_profile(o);
  // A GEMM above its GPU's dense peak is impossible: checked against --gpu (or the preset of the profile merged
  // into), else against the fastest GPU preset (which still catches a column in the wrong units).
  const std::string preset = !o.gpu.empty() ? o.gpu : p.gpu.preset;
  if (preset.empty()) std::cerr << "note: no --gpu: TFLOP/s checked against the fastest GPU preset only\n" << std::flush;
  const std::vector<std::string> peak_warnings =
      preset.empty() ? check_gemm_peaks(csv) : check_gemm_peaks(csv, parse_gpu(nlohmann::json(preset), o.gpu.empty() ? "-o#/gpu/preset" : "--gpu"), preset);
  for (const auto& w : peak_warnings) {
    std::cerr << "warning: " << w << "\n";
    note += " " + w + ".";
  }
  add_gemm_csv(p, csv);
  std::string command = "trainsim calibrate import gemm " + o.csv + " -o " + o.output;
  if (!o.gpu.empty()) command += " --gpu " + o.gpu;
  if (o.merge) command += " --merge";
  stamp(p, o, command, note);
  parse_calibration_profile(to_json(p));
  write_output_file("-o", o.output, [&](std::ostream& os) { os << calibration_profile_text(p); });
  const ProfileInputs inputs{"GEMM table read",
                             {"file", "value column", "rows used", "malformed", "lines"},
                             {{o.csv, csv.value_column, std::to_string(csv.rows), std::to_string(csv.malformed.size()), std::to_string(csv.lines)}}};
  const nlohmann::json result = {{"command", "calibrate import gemm"},
                                 {"output", o.output},
                                 {"files", {{{"path", o.csv}, {"value_column", csv.value_column}, {"header", csv.header}, {"rows", csv.rows},
                                             {"malformed", csv.malformed.size()}, {"comment_lines", csv.comment_lines}, {"lines", csv.lines}}}},
                                 {"warnings", peak_warnings}};
  emit_written_profile("calibrate import gemm", result, o.output, p, inputs,
                       [&](std::ostream& os) {
                         os << read.str() << "Wrote " << o.output << " (" << p.gemm.size() << " GEMM points, " << csv.malformed.size() << " malformed line"
                            << (csv.malformed.size() == 1 ? "" : "s") << " reported above)\n";
                       },
                       o.format, o.report);
  return kExitOk;
}

const RegisterCommand registered{
    {"calibrate", "Calibration profiles: import nccl-tests output and GEMM tables you already have, show a profile",
     [](CLI::App& app) -> std::function<int()> {
       auto opt = std::make_shared<CalibrateOptions>();
       app.require_subcommand(1);
       CLI::App* imp = app.add_subcommand("import", "Build a calibration profile from measurements");
       imp->require_subcommand(1);
       CLI::App* nccl = imp->add_subcommand("nccl-tests", "Read nccl-tests text output (all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf, sendrecv_perf)");
       nccl->add_option("logs", opt->logs, "nccl-tests output files (one test each)")->check(non_empty_path())->required();
       nccl->add_option("-o,--output", opt->output, "calibration profile to write (JSON)")->check(non_empty_path())->required();
       nccl->add_option("--gpu", opt->gpu, "trainsim GPU preset the measurements were taken on (e.g. h100-sxm-80gb)");
       nccl->add_option("--intra-node", opt->intra_fabric, "fabric preset of the one-node runs (e.g. nvlink4-nvswitch); curves then apply only to it");
       nccl->add_option("--inter-node", opt->inter_fabric, "fabric preset of the multi-node runs (e.g. ib-ndr-400); curves then apply only to it");
       nccl->add_flag("--merge", opt->merge, "add to the profile at -o instead of replacing it");
       nccl->add_option("--format", opt->format, "output: " + output_formats_text())->check(CLI::IsMember(output_formats()));
       nccl->add_option("--report", opt->report, "also write the imported profile as an HTML report to this file")->check(non_empty_path());
       CLI::App* gemm = imp->add_subcommand("gemm", "Read a CSV table dtype,m,n,k,tflops (or dtype,m,n,k,time_s) of measured GEMMs");
       gemm->add_option("csv", opt->csv, "CSV file")->check(non_empty_path())->required();
       gemm->add_option("-o,--output", opt->output, "calibration profile to write (JSON)")->check(non_empty_path())->required();
       gemm->add_option("--gpu", opt->gpu, "trainsim GPU preset the measurements were taken on (e.g. h100-sxm-80gb)");
       gemm->add_flag("--merge", opt->merge, "add to the profile at -o instead of replacing it");
       gemm->add_option("--format", opt->format, "output: " + output_formats_text())->check(CLI::IsMember(output_formats()));
       gemm->add_option("--report", opt->report, "also write the imported profile as an HTML report to this file")->check(non_empty_path());
       CLI::App* show = app.add_subcommand("show", "Print a calibration profile, its fits and what it covers");
       show->add_option("profile", opt->profile, "calibration profile (JSON)")->check(non_empty_path())->required();
       show->add_option("--gpu", opt->gpu, "GPU preset to judge coverage against (default: the profile's)");
       show->add_option("--format", opt->format, "output: " + output_formats_text())->check(CLI::IsMember(output_formats()));
       show->add_option("--report", opt->report, "also write the profile as an HTML report to this file")->check(non_empty_path());
       const auto extra = add_subcommand_extensions(app, "calibrate");  // `calibrate run` in the CUDA build
       return [opt, nccl, gemm, show, extra]() -> int {
         if (*nccl) return run_import_nccl(*opt);
         if (*gemm) return run_import_gemm(*opt);
         if (*show) return run_calibrate_show(opt->profile, opt->gpu, opt->format, opt->report);
         for (const auto& e : extra)
           if (*e.first) return e.second();
         return kExitBadInput;
       };
     }}};

}  // namespace
}  // namespace trainsim::cli
