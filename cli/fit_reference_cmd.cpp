// `trainsim calibrate fit-reference [--reference-dir DIR] [--write FILE] [--format table|json]`: fits the step
// model's fitted parameters (models/calibration/fitted_parameters.hpp) to the published runs of ../shared/reference/ and
// reports the in-sample and the leave-one-source-out error; --write stores the result as the shipped file
// (presets/fitted_parameters.json, compiled in: rebuild to use it).
#include <filesystem>
#include <iostream>

#include "calibrate/import_common.hpp"
#include "calibrate/reference_fit.hpp"
#include "command.hpp"
#include "models/core/errors.hpp"
#include "output.hpp"
#include "reports/table.hpp"
#include "run_files.hpp"
#include "subcommand_hooks.hpp"

namespace trainsim::cli {
namespace {

struct FitOptions {
  std::string reference_dir = "../shared/reference";
  std::string measured_dir = "calibrate/measurements/corpus/results";
  std::string write;
  std::string format = "table";
};

nlohmann::json summary_json(const ErrorSummary& s) {
  return {{"cases", s.cases}, {"median_abs_error", s.median}, {"mean_abs_error", s.mean}, {"max_abs_error", s.max}, {"bias", s.bias}};
}

nlohmann::json parameters_json(const ReferenceFit& fit, const std::string& obtained) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& p : fitted_parameter_info())
    out[p.key] = {{"value", fit.fitted.*p.member}, {"unit", p.unit}, {"start", fit.start.*p.member}, {"lower", p.lower}, {"upper", p.upper},
                  {"meaning", p.meaning}, {"obtained", obtained}};
  return out;
}

nlohmann::json fit_json(const ReferenceFit& fit, const std::string& obtained) {
  nlohmann::json sources = nlohmann::json::array();
  for (const auto& s : fit.sources) {
    nlohmann::json fitted = nlohmann::json::object();
    for (const auto& p : fitted_parameter_info()) fitted[p.key] = s.fitted.*p.member;
    sources.push_back({{"source", s.source}, {"cases", s.cases}, {"fitted_without", fitted}, {"held_out", summary_json(s.held_out)}});
  }
  nlohmann::json cases = nlohmann::json::array();
  for (std::size_t i = 0; i < fit.case_ids.size(); ++i)
    cases.push_back({{"id", fit.case_ids[i]}, {"in_sample_time_ratio", fit.in_sample_ratio[i]}, {"cross_validated_time_ratio", fit.cross_validated_ratio[i]}});
  return {{"parameters", parameters_json(fit, obtained)},
          {"loss", {{"kind", "huber"},
                    {"scale", fit.huber_scale},
                    {"meaning", "log(measured / predicted time) counts squared within the scale and linearly beyond it; scale = 1.345 x 1.4826 x the "
                                "median absolute deviation of the least-squares fit's log ratios (Huber 1964, Holland & Welsch 1977)"}}},
          {"cases", fit.cases},
          {"before", summary_json(fit.before)},
          {"in_sample", summary_json(fit.in_sample)},
          {"leave_one_source_out", summary_json(fit.cross_validated)},
          {"sources", sources},
          {"case_ratios", cases}};
}

std::string percent(double v) { return fixed(100 * v, 1) + "%"; }
std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

void print_table(std::ostream& os, const ReferenceFit& fit) {
  os << "Fitted parameters (Huber M-estimate on log(measured / predicted time), linear beyond " << percent(fit.huber_scale)
     << " (1.345 sigma of the least-squares residuals), " << fit.cases << " speed cases)\n";
  TextTable params({"parameter", "start", "fitted", "unit", "range", "meaning"});
  for (const auto& p : fitted_parameter_info())
    params.add_row({p.key, number(fit.start.*p.member), number(fit.fitted.*p.member), p.unit, number(p.lower) + "-" + number(p.upper), p.meaning});
  params.print(os);
  os << "\nSpeed error (+ = the model is faster than the run)\n";
  TextTable errors({"", "cases", "median", "mean", "max", "bias"});
  auto row = [&](const std::string& label, const ErrorSummary& s) {
    errors.add_row({label, std::to_string(s.cases), percent(s.median), percent(s.mean), percent(s.max), percent(s.bias)});
  };
  row("at the start", fit.before);
  row("in sample", fit.in_sample);
  row("leave one source out", fit.cross_validated);
  for (const auto& s : fit.sources) row("  held out: " + s.source, s.held_out);
  errors.print(os);
}

int run_fit(const FitOptions& o) {
  if (!std::filesystem::is_directory(o.reference_dir))
    throw InputError("--reference-dir", o.reference_dir, "a directory holding the reference files (korthikanti2022.json, modern_runs.json, ...)");
  if (!o.measured_dir.empty() && !std::filesystem::is_directory(o.measured_dir))
    throw InputError("--measured-dir", o.measured_dir, "a directory of measured corpus files (calibrate/measurements/corpus/results), or \"\" for none");
  const ReferenceFit fit = fit_reference_files({o.reference_dir, o.measured_dir});
  const std::string obtained = "fitted to ../shared/reference and the measured corpus on " + utc_timestamp().substr(0, 10) + ", " + std::to_string(fit.cases) + " speed cases from " +
                               std::to_string(fit.sources.size()) + " sources (trainsim calibrate fit-reference)";
  const nlohmann::json result = fit_json(fit, obtained);
  if (!o.write.empty()) {
    nlohmann::json doc = {{"source", obtained + "; leave-one-source-out median |error| " + percent(fit.cross_validated.median) +
                                         ", in sample " + percent(fit.in_sample.median)}};
    doc.update(result);
    write_output_file("--write", o.write, [&](std::ostream& os) { os << json_text(doc) << "\n"; });
  }
  emit_result(o.format, result, "fit-reference", {[&](std::ostream& os) {
                print_table(os, fit);
                if (!o.write.empty()) os << "\nwrote " << o.write << " (compiled in: rebuild to use it)\n";
              }, {}});
  return kExitOk;
}

const RegisterSubcommand registered{
    {"calibrate", "fit-reference",
     "Fit the step model's fitted parameters to the published runs of ../shared/reference/ and the measured corpus, and report the leave-one-source-out error",
     [](CLI::App& sub) -> std::function<int()> {
       auto opt = std::make_shared<FitOptions>();
       sub.add_option("--reference-dir", opt->reference_dir, "directory of the reference files (default ../shared/reference)");
       sub.add_option("--measured-dir", opt->measured_dir,
                      "directory of the measured corpus (run_corpus.py results; default calibrate/measurements/corpus/results, \"\" for none)");
       sub.add_option("--write", opt->write, "write the fitted parameters file (presets/fitted_parameters.json)")->check(non_empty_path());
       sub.add_option("--format", opt->format, "output: table or json")->check(CLI::IsMember({"table", "json"}));
       return [opt]() { return run_fit(*opt); };
     }}};

}  // namespace
}  // namespace trainsim::cli
