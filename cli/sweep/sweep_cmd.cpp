// trainsim sweep: one command at every point of a grid (sweep_spec.hpp), in shards that any engine can run
// (sweep_run.hpp), and the points merged into one table (reports/sweep_report.hpp).
//   trainsim sweep SWEEP.json --out DIR [--shard I/N] [--retry-failed]
//   trainsim sweep status DIR
//   trainsim sweep merge DIR [--format ...] [--report FILE.html] [--allow-partial]
//   trainsim sweep submit SWEEP.json --to slurm|k8s --shards N ... (sweep_submit.cpp)
#include <algorithm>
#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "cli/run_files.hpp"
#include "models/core/errors.hpp"
#include "models/core/units.hpp"
#include "reports/sweep_report.hpp"
#include "reports/table.hpp"
#include "sweep_run.hpp"
#include "sweep_submit.hpp"

namespace trainsim::cli::sweep {
namespace {

using Json = nlohmann::json;

struct RunOptions {
  std::string sweep, out, shard = "0/1", format = "table";
  bool retry_failed = false;
};

int run_sweep(const RunOptions& o) {
  if (o.sweep.empty()) throw InputError("SWEEP", "nothing", "a sweep file (trainsim sweep SWEEP.json --out DIR), or status, merge or submit");
  if (o.out.empty()) throw InputError("--out", "nothing", "the folder the points are written to");
  const Spec spec = read_spec(o.sweep);
  const auto [shard, shards] = parse_shard(o.shard, "--shard");
  const Folder folder(o.out);
  folder.prepare(spec, "--out");
  const ShardSummary s = run_shard(spec, folder, shard, shards, o.retry_failed);
  Json r = {{"command", "sweep"}, {"sweep", spec.file}, {"out", o.out}, {"shard", shard}, {"shards", shards}, {"points", s.points},
            {"run", s.run}, {"skipped", s.skipped}, {"failed", s.failed}, {"seconds", s.seconds}, {"command_seconds", s.command_seconds}};
  Renderers render;
  render.table = [&](std::ostream& os) {
    os << "Sweep   " << spec.file << " (" << spec.command << ", " << spec.count() << " points), shard " << shard << "/" << shards << "\n";
    os << "Points  " << s.points << " in this shard: " << s.run << " run (" << s.failed << " failed), " << s.skipped << " already in " << o.out << "\n";
    os << "Time    " << format_seconds(s.seconds);
    if (s.run > 0) {
      const double n = static_cast<double>(s.run);
      os << ", " << format_seconds(s.seconds / n) << " a point (the command " << format_seconds(s.command_seconds / n) << ", the sweep's own "
         << format_seconds(std::max(0.0, s.seconds - s.command_seconds) / n) << ")";
    }
    os << "\n";
  };
  emit_result(o.format, r, "sweep", render);
  return kExitOk;
}

struct FolderOptions {
  std::string dir, format = "table", report;
  bool allow_partial = false;
};

// The records the folder holds, index by index.
std::vector<std::optional<Json>> records_of(const Folder& folder, std::size_t count) {
  std::vector<std::optional<Json>> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = folder.read_point(i);
  return out;
}

int run_status(const FolderOptions& o) {
  const Folder folder(o.dir);
  const Json h = folder.header("DIR");
  const std::size_t count = h["points"].get<std::size_t>();
  std::size_t done = 0;
  Json failed = Json::array(), missing = Json::array();
  for (std::size_t i = 0; i < count; ++i) {
    const auto r = folder.read_point(i);
    if (!r) missing.push_back(i);
    else if ((*r)["exit_code"] == 0) ++done;
    else failed.push_back({{"index", i}, {"exit_code", (*r)["exit_code"]}, {"error", r->value("error", std::string())}});
  }
  const Json r = {{"command", "sweep status"}, {"sweep", h.value("sweep", std::string())}, {"points", count}, {"done", done},
                  {"failed", failed}, {"missing", missing}, {"complete", missing.empty()}};
  Renderers render;
  render.table = [&](std::ostream& os) {
    os << "Sweep    " << r["sweep"].get<std::string>() << " in " << o.dir << ": " << count << " points\n";
    os << "Done     " << done << "\n";
    os << "Failed   " << failed.size() << "\n";
    for (std::size_t k = 0; k < failed.size() && k < 20; ++k)
      os << "  point " << failed[k]["index"].get<std::size_t>() << " (exit " << failed[k]["exit_code"].get<int>() << "): " << failed[k]["error"].get<std::string>() << "\n";
    if (failed.size() > 20) os << "  ... and " << failed.size() - 20 << " more (--format json lists them all)\n";
    os << "Missing  " << missing.size();
    std::string some;
    for (std::size_t k = 0; k < missing.size() && k < 20; ++k) some += (k ? ", " : ": ") + std::to_string(missing[k].get<std::size_t>());
    os << some << (missing.size() > 20 ? ", ..." : "") << "\n";
  };
  emit_result(o.format, r, "sweep status", render);
  return kExitOk;
}

int run_merge(const FolderOptions& o) {
  const Folder folder(o.dir);
  const Json h = folder.header("DIR");
  const Spec spec = parse_spec(h["document"], h.value("sweep", std::string("sweep.json")));
  const std::size_t count = h["points"].get<std::size_t>();
  const auto records = records_of(folder, count);
  std::vector<std::string> axes;
  for (const auto& g : spec.axes)
    for (const Axis& a : g) axes.push_back(a.name);
  std::vector<sweep_report::Column> columns;
  for (const auto& [n, p] : spec.columns) columns.push_back({n, p});
  const Json merged = sweep_report::merge(h, axes, columns, spec.charts, records);
  if (!merged["complete"].get<bool>() && !o.allow_partial) {
    std::string some;
    for (std::size_t k = 0; k < merged["missing_points"].size() && k < 10; ++k) some += (k ? ", " : "") + merged["missing_points"][k].dump();
    throw InputError("DIR", "\"" + o.dir + "\"", "a finished sweep (or --allow-partial)",
                     std::to_string(merged["missing"].get<std::size_t>()) + " of " + std::to_string(count) + " points are missing (" + some +
                         (merged["missing"].get<std::size_t>() > 10 ? ", ..." : "") + "): run the shards that hold them (trainsim sweep status " + o.dir + ")");
  }
  Renderers render;
  render.table = [&](std::ostream& os) { sweep_report::print_table(os, merged); };
  render.csv = [&](std::ostream& os) { sweep_report::print_csv(os, merged); };
  render.markdown = [&](std::ostream& os) { sweep_report::print_markdown(os, merged); };
  render.html = [&](std::ostream& os) { os << sweep_report::html(merged); };
  emit_result(o.format, merged, "sweep merge", render, o.report);
  return kExitOk;
}

const RegisterCommand registered{
    {"sweep", "Run one command over a grid of scenarios and flags, in shards for Slurm job arrays or Kubernetes Indexed Jobs; status, merge, submit",
     [](CLI::App& app) -> std::function<int()> {
       auto run = std::make_shared<RunOptions>();
       auto status = std::make_shared<FolderOptions>();
       auto merge = std::make_shared<FolderOptions>();
       auto chosen = std::make_shared<std::function<int()>>([run] { return run_sweep(*run); });
       app.add_option("sweep", run->sweep, "sweep file: a command, a base scenario and axes (see README, Bigger than one machine)")->check(non_empty_path());
       app.add_option("--out", run->out, "folder for the points (one JSON each; a rerun skips those already there)")->check(non_empty_path());
       app.add_option("--shard", run->shard, "I/N: run only the points with index % N == I (default 0/1: all)")->capture_default_str();
       app.add_flag("--retry-failed", run->retry_failed, "run again the points that failed (their error is in status)");
       app.add_option("--format", run->format, "output: table or json")->check(CLI::IsMember({"table", "json"}))->capture_default_str();

       CLI::App* st = app.add_subcommand("status", "What a sweep's folder holds: done, failed (with the error) and missing points");
       st->add_option("DIR", status->dir, "the sweep's --out folder")->required()->check(non_empty_path());
       st->add_option("--format", status->format, "output: table or json")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
       st->callback([chosen, status] { *chosen = [status] { return run_status(*status); }; });

       CLI::App* mg = app.add_subcommand("merge", "One table of every point: its inputs and the columns the sweep keeps; refuses a partial sweep");
       mg->add_option("DIR", merge->dir, "the sweep's --out folder")->required()->check(non_empty_path());
       mg->add_option("--format", merge->format, "output: " + output_formats_text())->check(CLI::IsMember(output_formats()))->capture_default_str();
       mg->add_option("--report", merge->report, "also write a self-contained HTML report with charts to FILE.html")->check(non_empty_path());
       mg->add_flag("--allow-partial", merge->allow_partial, "merge the points there are, saying how many are missing");
       mg->callback([chosen, merge] { *chosen = [merge] { return run_merge(*merge); }; });

       add_submit_subcommand(app, chosen);
       return [chosen] { return (*chosen)(); };
     }}};

}  // namespace
}  // namespace trainsim::cli::sweep
