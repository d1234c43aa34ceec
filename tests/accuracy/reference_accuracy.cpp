// Runs every published case of ../shared/reference (Korthikanti et al. 2022 Table 5, Narayanan et al.
// SC'21 Table 1, MosaicML llm-foundry FSDP on H100, modern_runs.json: Megatron-Core, torchtitan, DeepSpeed,
// MoE; read by calibrate/reference_cases.hpp) through the step-time and memory models with the shipped fitted
// parameters and prints predicted vs measured with the error, per file and overall (median, mean and max
// |error|, and the mean signed error: the bias). Exits 1 if a case cannot be run, or if the mean error of a
// file exceeds its --limit FILE=FRACTION (a regression guard set a little above today's error).
// --write-bands FILE writes the spread of the leave-one-source-out measured / predicted time per framework
// family and regime (models/calibration/accuracy_bands.hpp; `make accuracy-bands`); --check-bands FILE fails when the
// stored bands no longer match this run, --check-fit fails when a fresh `calibrate fit-reference` no longer
// gives the shipped fitted parameters (the model changed: regenerate both with `make accuracy-bands`).
// --min-coverage FRACTION fails when fewer speed cases than that fall inside the band their regime prints with their
// source left out (the bands' claim). --write-markdown FILE writes the per-file, leave-one-source-out and band tables as Markdown (the README's accuracy
// section, scripts/readme_accuracy.sh). --write-scenarios DIR writes each case's scenario at its layout as DIR/<id>.json (the input of
// scripts/simulate_reference.py, which replays them in `trainsim simulate`).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calibrate/band_derivation.hpp"
#include "calibrate/import_common.hpp"
#include "calibrate/reference_fit.hpp"
#include "models/calibration/accuracy_bands.hpp"

using namespace trainsim;
using Json = nlohmann::json;

namespace {

struct Row {
  const ReferenceCase* c;
  double predicted;
  double error() const { return case_error(*c, predicted); }
  std::vector<std::string> band_keys;  // the band groups it belongs to, most specific first (models/calibration/accuracy_bands.hpp)
};

// Fit / out-of-memory verdicts: how many of the file's runs trainsim calls as they went.
void print_verdicts(const std::vector<Row>& rows) {
  int total = 0, right = 0;
  for (const auto& r : rows)
    if (r.c->verdict()) ++total, right += r.error() == 0;
  if (total > 0) std::printf("%-58s fit/OOM verdicts: %d of %d right\n", "", right, total);
}

void print_summary(const char* label, const ErrorSummary& s) {
  if (s.cases == 0) return;
  std::printf("%-58s %s: %d cases, median |error| %.1f%%, mean %.1f%%, max %.1f%%, bias %+.1f%%\n", "", label, s.cases, 100 * s.median,
              100 * s.mean, 100 * s.max, 100 * s.bias);
}
ErrorSummary summarize(const std::vector<Row>& rows, bool memory) {
  std::vector<double> errors;
  for (const auto& r : rows)
    if (memory ? r.c->memory() : r.c->speed()) errors.push_back(r.error());
  return summarize_errors(errors);
}

std::string layout_text(const ParallelLayout& p, const TrainingSpec& t) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "tp%d pp%d vpp%d dp%d mbs%d %s%s", p.tp, p.pp, p.vpp, p.dp, p.micro_batch_size, to_string(t.recompute),
                p.sequence_parallel ? " sp" : "");
  return buf;
}

void print_row(const Row& r) {
  std::printf("%-58s %-13s %10.2f %10.2f %+7.1f%%  %s\n", r.c->id.c_str(), to_string(r.c->metric), r.c->measured, r.predicted, 100 * r.error(),
              layout_text(r.c->scenario.parallel, r.c->scenario.training).c_str());
}

// The speed rows as the band derivation reads them (calibrate/band_derivation.hpp).
std::vector<BandRun> band_runs(const std::vector<Row>& rows, const std::map<std::string, double>& cross_validated, std::vector<std::string>* ids) {
  std::vector<BandRun> runs;
  for (const auto& r : rows) {
    if (!r.c->speed() || !r.c->counted) continue;
    runs.push_back({r.c->source, cross_validated.at(r.c->id), r.band_keys});
    ids->push_back(r.c->id);
  }
  return runs;
}

Json bands_json(const BandRatios& b) {
  Json groups = Json::object();
  auto round4 = [](double v) { return std::round(v * 1e4) / 1e4; };
  for (const auto& [key, v] : b.ratios) {
    const GroupBand g = group_band(b, key);
    groups[key] = {{"cases", g.cases}, {"sources", g.sources}, {"p10", round4(g.low)}, {"median", round4(g.median)}, {"p90", round4(g.high)},
                   {"within_source_p10", round4(g.within_low)}, {"within_source_p90", round4(g.within_high)}};
  }
  return groups;
}

struct Options {
  ReferenceDirs dirs{TRAINSIM_SHARED_DIR "/reference", TRAINSIM_MEASURED_DIR};
  std::vector<std::pair<std::string, double>> limits;
  std::string write_bands, check_bands, write_scenarios, write_markdown;
  bool check_fit = false;
  double min_coverage = 0;
};

// False (after saying why) on an argument it does not know.
bool parse_options(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reference-dir") && i + 1 < argc) o.dirs.published = argv[++i];
    else if (!std::strcmp(argv[i], "--measured-dir") && i + 1 < argc) o.dirs.measured = argv[++i];
    else if (!std::strcmp(argv[i], "--write-bands") && i + 1 < argc) o.write_bands = argv[++i];
    else if (!std::strcmp(argv[i], "--check-bands") && i + 1 < argc) o.check_bands = argv[++i];
    else if (!std::strcmp(argv[i], "--check-fit")) o.check_fit = true;
    else if (!std::strcmp(argv[i], "--min-coverage") && i + 1 < argc) o.min_coverage = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--write-scenarios") && i + 1 < argc) o.write_scenarios = argv[++i];
    else if (!std::strcmp(argv[i], "--write-markdown") && i + 1 < argc) o.write_markdown = argv[++i];
    else if (!std::strcmp(argv[i], "--limit") && i + 1 < argc) {
      const std::string spec = argv[++i];
      const auto eq = spec.find('=');
      if (eq == std::string::npos) {
        std::fprintf(stderr, "error: --limit %s: expected FILE=FRACTION\n", spec.c_str());
        return false;
      }
      o.limits.emplace_back(spec.substr(0, eq), std::atof(spec.c_str() + eq + 1));
    } else {
      std::fprintf(stderr, "error: unknown argument %s\n", argv[i]);
      return false;
    }
  }
  return true;
}

// Each case's scenario at its layout as DIR/<id>.json.
bool write_case_scenarios(const ReferenceSet& set, const std::string& dir) {
  for (const auto& c : set.cases) {
    std::ofstream out(dir + "/" + c.id + ".json");
    Json doc = to_json(c.scenario);
    doc["name"] = c.id;
    out << doc.dump(2) << "\n";
    if (!out) {
      std::fprintf(stderr, "error: cannot write %s/%s.json\n", dir.c_str(), c.id.c_str());
      return false;
    }
  }
  return true;
}

// Every case predicted, with the band groups of the regime the step model gives its scenario: its band family,
// scale, MoE, and whether the predicted step waits on the host (host_bound_step).
std::vector<Row> predict_cases(const ReferenceSet& set) {
  std::vector<Row> rows;
  for (const auto& c : set.cases) {
    const HardwareSpec& h = c.scenario.hardware;
    const StepEstimate e = StepModel(c.scenario.model, c.scenario.training, c.scenario.hardware).estimate(c.scenario.parallel);
    rows.push_back({&c, predict_case(c),
                    band_keys(band_family(framework_for(c.scenario.training, c.scenario.parallel)), band_scale(h.num_gpus, h.gpus_per_node),
                              c.scenario.model.is_moe(), host_bound_step(e.breakdown.host_s, e.time_s))});
  }
  return rows;
}

// The README's tables as Markdown, one row at a time.
struct MarkdownTables {
  std::string text = "| file | metric | cases | median abs error | mean | max | bias |\n| --- | --- | --- | --- | --- | --- | --- |\n";
  void row(const std::string& label, const char* metric, const ErrorSummary& e) {
    if (e.cases == 0) return;
    char line[512];
    std::snprintf(line, sizeof line, "| %s | %s | %d | %.1f%% | %.1f%% | %.1f%% | %+.1f%% |\n", label.c_str(), metric, e.cases, 100 * e.median, 100 * e.mean,
                  100 * e.max, 100 * e.bias);
    text += line;
  }
};

// Per file: each case, the speed and memory summaries, the verdicts; the counted rows appended to `all` and the
// ones the file marks unsupported or a later measurement supersedes to `marked`. 1 where a file's mean error exceeds its --limit.
int print_files(const ReferenceSet& set, const std::vector<Row>& rows, const Options& o, MarkdownTables& md, std::vector<Row>& all,
                std::vector<Row>& marked) {
  int status = 0;
  for (const auto& file : set.files) {
    std::vector<Row> counted;
    for (const auto& r : rows)
      if (r.c->file == file) (r.c->counted ? counted : marked).push_back(r);
    std::printf("\n%s\n%-58s %-13s %10s %10s %8s  %s\n", file.c_str(), "case", "metric", "measured", "predicted", "error", "layout");
    for (const auto& r : counted) print_row(r);
    const ErrorSummary speed = summarize(counted, false);
    print_summary("speed", speed);
    print_summary("memory", summarize(counted, true));
    print_verdicts(counted);
    md.row("`" + file + "`", "speed", speed);
    md.row("`" + file + "`", "memory", summarize(counted, true));
    all.insert(all.end(), counted.begin(), counted.end());
    for (const auto& [name, limit] : o.limits)
      if (name == file && speed.mean > limit) {
        std::printf("FAIL: %s mean |error| %.1f%% exceeds the limit %.1f%%\n", file.c_str(), 100 * speed.mean, 100 * limit);
        status = 1;
      }
  }
  return status;
}

// The cases run but not counted, not compared, or not run, and the summary over all files. 1 where a fit/OOM
// verdict is wrong.
int print_overall(const ReferenceSet& set, const std::vector<Row>& all, const std::vector<Row>& marked) {
  for (const bool superseded : {false, true}) {
    std::vector<const Row*> these;
    for (const auto& r : marked)
      if (r.c->superseded_by.empty() != superseded) these.push_back(&r);
    if (these.empty()) continue;
    std::printf("\n%s\n%-58s %-13s %10s %10s %8s  %s\n",
                superseded ? "measured again, superseded by the later measurement after '->' (shown, not counted)"
                           : "marked unsupported by the source file, run now, not counted",
                "case", "metric", "measured", "predicted", "error", "layout");
    for (const Row* r : these) {
      print_row(*r);
      if (superseded) std::printf("%-58s -> %s\n", "", r->c->superseded_by.c_str());
    }
  }
  if (!set.uncompared.empty()) {
    std::printf("\nrun, not compared (no step time, tokens/s, MFU or memory in the source): %zu cases\n", set.uncompared.size());
    for (const auto& u : set.uncompared) std::printf("  %s\n", u.c_str());
  }
  if (!set.refused.empty()) {
    std::printf("\nnot run (marked unsupported by the source file, and refused by trainsim): %zu cases\n", set.refused.size());
    for (const auto& u : set.refused) std::printf("  %s\n", u.c_str());
  }
  std::printf("\nall files (fitted parameters: %s)\n", shipped_fitted_parameters().source.c_str());
  print_summary("speed", summarize(all, false));
  print_summary("memory", summarize(all, true));
  print_verdicts(all);
  int status = 0;
  for (const auto& r : all)
    if (r.c->verdict() && r.error() != 0) {
      std::printf("FAIL: %s %s, trainsim says it %s\n", r.c->id.c_str(), r.c->measured > 0 ? "ran" : "ran out of memory",
                  r.predicted > 0 ? "fits" : "does not fit");
      status = 1;
    }
  return status;
}

void print_fit(const ReferenceFit& fit) {
  std::printf("\nfitted parameters, shipped and refit on these files:\n");
  for (const auto& p : fitted_parameter_info())
    std::printf("  %-28s %10.4g shipped %10.4g refit  %s\n", p.key, shipped_fitted_parameters().values.*p.member, fit.fitted.*p.member, p.unit);
  std::printf("\nleave-one-source-out cross-validation (refit without each source, predict it)\n");
  print_summary("speed", fit.cross_validated);
  for (const auto& src : fit.sources)
    std::printf("%-58s held out %-16s %2d cases, median |error| %.1f%%, max %.1f%%, bias %+.1f%%\n", "", src.source.c_str(), src.held_out.cases,
                100 * src.held_out.median, 100 * src.held_out.max, 100 * src.held_out.bias);
}

// The bands from the cross-validated ratios, and how many speed cases fall inside the band their regime prints.
struct BandStudy {
  std::vector<std::string> run_ids;
  std::vector<BandRun> runs;
  Json groups;
  std::pair<double, double> spread;
  BandCoverage covered;
};

BandStudy study_bands(const std::vector<Row>& all, const ReferenceFit& fit) {
  std::map<std::string, double> cross_validated;
  for (std::size_t i = 0; i < fit.case_ids.size(); ++i) cross_validated[fit.case_ids[i]] = fit.cross_validated_ratio[i];
  BandStudy b;
  b.runs = band_runs(all, cross_validated, &b.run_ids);
  const BandRatios ratios = band_ratios(b.runs);
  b.groups = bands_json(ratios);
  std::printf("\naccuracy bands (cross-validated measured / predicted time: p10, median, p90 for a run of a new source; within a source)\n");
  for (const auto& [key, g] : b.groups.items())
    std::printf("  %-26s %3d cases %d sources  %.3f  %.3f  %.3f   within %.3f-%.3f\n", key.c_str(), g["cases"].get<int>(), g["sources"].get<int>(),
                g["p10"].get<double>(), g["median"].get<double>(), g["p90"].get<double>(), g["within_source_p10"].get<double>(),
                g["within_source_p90"].get<double>());
  b.spread = source_spread(ratios);
  std::printf("  source spread (lowest and highest per-source median over all): %.3f  %.3f\n", b.spread.first, b.spread.second);
  b.covered = band_coverage(b.runs);
  return b;
}

// The overall rows, the held-out sources and the band groups appended to the per-file table; false when the file
// cannot be written.
bool write_markdown(MarkdownTables& md, const std::vector<Row>& all, const ReferenceFit& fit, const BandStudy& b, const std::string& path) {
  md.row("all files, in sample", "speed", summarize(all, false));
  md.row("**all files, leave one source out**", "speed", fit.cross_validated);
  md.row("all files", "memory", summarize(all, true));
  int verdicts = 0, right = 0;
  for (const auto& r : all)
    if (r.c->verdict()) ++verdicts, right += r.error() == 0;
  char tail[1024];
  std::snprintf(tail, sizeof tail,
                "\nFit / out-of-memory verdicts: %d of %d right. Band coverage, leave one source out (each speed case against the band "
                "its regime prints with its whole source left out, widened where the regime has fewer than 5 runs): %.0f%% of %zu inside "
                "(the claim: 80%%).\n\n"
                "| held-out source | cases | median abs error | max | bias |\n| --- | --- | --- | --- | --- |\n",
                right, verdicts, 100 * b.covered.share, b.runs.size());
  std::string& text = md.text;
  text += tail;
  for (const auto& src : fit.sources) {
    std::snprintf(tail, sizeof tail, "| %s | %d | %.1f%% | %.1f%% | %+.1f%% |\n", src.source.c_str(), src.held_out.cases, 100 * src.held_out.median,
                  100 * src.held_out.max, 100 * src.held_out.bias);
    text += tail;
  }
  text += "\n| band group (family / scale / moe) | cases | sources | within a source, p10-p90 | band p10 | median | band p90 |\n"
          "| --- | --- | --- | --- | --- | --- | --- |\n";
  for (const auto& [key, g] : b.groups.items()) {
    std::snprintf(tail, sizeof tail, "| %s | %d | %d | %.2f-%.2f | %.2f | %.2f | %.2f |\n", key.c_str(), g["cases"].get<int>(), g["sources"].get<int>(),
                  g["within_source_p10"].get<double>(), g["within_source_p90"].get<double>(), g["p10"].get<double>(), g["median"].get<double>(),
                  g["p90"].get<double>());
    text += tail;
  }
  std::snprintf(tail, sizeof tail,
                "\nA regime with fewer than %d runs prints the first fallback group's band widened by the spread between sources "
                "(the lowest and highest per-source median over the median of all): x %.2f below, x %.2f above, and says it is an "
                "extrapolation.\n",
                kMinBandCases, b.spread.first, b.spread.second);
  text += tail;
  std::ofstream out(path);
  out << text;
  if (!out) {
    std::fprintf(stderr, "error: cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

bool write_bands_file(const BandStudy& b, const ReferenceFit& fit, const std::string& path) {
  const std::string date = utc_timestamp().substr(0, 10);
  const Json doc = {{"source", std::string("leave-one-source-out measured / predicted step time of the ") + std::to_string(fit.cases) +
                                   " speed cases of ../shared/reference/ (tests/accuracy/reference_accuracy.cpp --write-bands, " + date +
                                   "): each case predicted with the fitted parameters refit without its source; per framework "
                                   "family and regime (scale: 1gpu, node, multinode; moe; host), for a run of a source not measured "
                                   "yet: p10 = within_source_p10 (the group's runs over their own source's median) x the lowest "
                                   "source median, p90 = within_source_p90 x the highest (the group's sources when it has 3, else "
                                   "all), median of the group's runs; "
                                   "source_spread: the lowest and highest per-source median over the median of all, which widens "
                                   "the band of a regime with fewer than 5 runs"},
                    {"groups", b.groups},
                    {"source_spread", {{"low", std::round(b.spread.first * 1e4) / 1e4}, {"high", std::round(b.spread.second * 1e4) / 1e4}}}};
  std::ofstream out(path);
  out << doc.dump(2) << "\n";
  if (!out) {
    std::fprintf(stderr, "error: cannot write %s\n", path.c_str());
    return false;
  }
  std::printf("wrote %s\n", path.c_str());
  return true;
}

// Whether the stored bands are this run's (to 5e-4).
bool bands_match(const BandStudy& b, const std::string& path) {
  std::ifstream in(path);
  const Json stored_doc = Json::parse(in);
  const Json& stored = stored_doc["groups"];
  bool same = stored.size() == b.groups.size() && stored_doc.contains("source_spread") &&
              std::fabs(stored_doc["source_spread"]["low"].get<double>() - b.spread.first) < 5e-4 &&
              std::fabs(stored_doc["source_spread"]["high"].get<double>() - b.spread.second) < 5e-4;
  for (const auto& [key, g] : b.groups.items())
    for (const char* q : {"p10", "median", "p90"})
      same = same && stored.contains(key) && std::fabs(stored[key][q].get<double>() - g[q].get<double>()) < 5e-4 && stored[key]["cases"] == g["cases"];
  return same;
}

// Whether a fresh fit gives the shipped fitted parameters (to 1e-3, relative).
bool fit_matches(const ReferenceFit& fit) {
  const FittedParameters& shipped = shipped_fitted_parameters().values;
  bool same = true;
  for (const auto& p : fitted_parameter_info()) {
    const double a = shipped.*p.member, b = fit.fitted.*p.member;
    if (std::fabs(a - b) > 1e-3 * std::max(1.0, std::fabs(a))) {
      std::printf("FAIL: fitted parameter %s is %g shipped but %g refit: regenerate with `make accuracy-bands`\n", p.key, a, b);
      same = false;
    }
  }
  return same;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse_options(argc, argv, o)) return 2;
  ReferenceSet set;
  ReferenceFit fit;
  try {
    set = load_reference_cases(o.dirs);
    fit = fit_reference_files(o.dirs);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  if (!o.write_scenarios.empty() && !write_case_scenarios(set, o.write_scenarios)) return 1;
  const std::vector<Row> rows = predict_cases(set);
  MarkdownTables md;
  std::vector<Row> all, marked;
  int status = print_files(set, rows, o, md, all, marked);
  status |= print_overall(set, all, marked);
  print_fit(fit);
  const BandStudy bands = study_bands(all, fit);
  const double coverage = bands.covered.share;
  if (!o.write_markdown.empty() && !write_markdown(md, all, fit, bands, o.write_markdown)) return 1;
  std::printf("\nband coverage, leave one source out (the band its regime prints, built without the case's source; a regime with fewer "
              "than %d runs widened by the source spread): %.0f%% of %zu speed cases inside\n",
              kMinBandCases, 100 * coverage, bands.runs.size());
  for (const std::size_t i : bands.covered.misses) std::printf("  outside: %s\n", bands.run_ids[i].c_str());
  if (coverage < o.min_coverage) {
    std::printf("FAIL: band coverage %.0f%% is below the %.0f%% the bands claim\n", 100 * coverage, 100 * o.min_coverage);
    status = 1;
  }
  if (!o.write_bands.empty() && !write_bands_file(bands, fit, o.write_bands)) return 1;
  if (!o.check_bands.empty() && !bands_match(bands, o.check_bands)) {
    std::printf("FAIL: %s no longer matches this run: regenerate it with `make accuracy-bands`\n", o.check_bands.c_str());
    status = 1;
  }
  if (o.check_fit && !fit_matches(fit)) status = 1;
  return status;
}
