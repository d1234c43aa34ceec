#include "sweep_submit.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "cli/command.hpp"
#include "cli/run_files.hpp"
#include "models/core/errors.hpp"
#include "models/core/units.hpp"
#include "reports/export/export_registry.hpp"
#include "reports/export/launch_stack.hpp"
#include "sweep_run.hpp"
#include "sweep_spec.hpp"

namespace trainsim::cli::sweep {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

struct SubmitOptions {
  std::string sweep, to, out, output = ".", trainsim, image = "trainsim:latest", pvc = "trainsim-sweep", partition, account, job_name = "trainsim-sweep";
  int shards = 0, max_parallel = 0;
};

// What one point costs here: its wall time and this process's peak resident memory after it.
struct Sample {
  double seconds = 0;
  double peak_mib = 0;
  int exit_code = 0;
};

Sample sample_point(const Spec& spec) {
  Sample s;
  const Point p = spec.point(0);
  std::vector<std::string> args = p.args;
  const fs::path scratch = fs::temp_directory_path() / ("trainsim-sweep-sample-" + std::to_string(::getpid()));
  if (spec.command == "export") args.insert(args.end(), {"-o", scratch.string()});
  const auto start = std::chrono::steady_clock::now();
  s.exit_code = (spec.isolated() ? run_command_in_child(spec.command, args) : run_command(spec.command, args)).exit_code;
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::error_code ec;
  fs::remove_all(scratch, ec);
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);  // a point run in a child process of its own
  s.peak_mib = static_cast<double>(std::max(self.ru_maxrss, children.ru_maxrss)) / 1024.0;  // Linux reports KiB
  return s;
}

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string slurm_time(double seconds) {
  const long long total = static_cast<long long>(std::ceil(seconds / 60.0)) * 60;
  const long long d = total / 86400, h = total % 86400 / 3600, m = total % 3600 / 60;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:00", d, h, m);
  return buf;
}

std::string absolute(const std::string& p) { return fs::absolute(p).lexically_normal().string(); }

struct Plan {
  std::size_t points = 0, shards = 0, per_shard = 0, parallel = 0;
  Sample sample;
  double shard_seconds = 0, memory_mib = 0;
  std::string header;  // comment lines saying where the figures come from
};

Plan plan_for(const Spec& spec, const SubmitOptions& o) {
  Plan p;
  p.points = spec.count();
  if (o.shards < 1 || static_cast<std::size_t>(o.shards) > p.points || o.shards > 100000)
    throw InputError("--shards", std::to_string(o.shards), "from 1 to the sweep's points (" + std::to_string(p.points) + ") and at most 100,000");
  p.shards = static_cast<std::size_t>(o.shards);
  if (o.max_parallel < 0 || o.max_parallel > 100000) throw InputError("--max-parallel", std::to_string(o.max_parallel), "0 (all shards at once) to 100,000");
  p.parallel = o.max_parallel == 0 ? p.shards : std::min<std::size_t>(p.shards, static_cast<std::size_t>(o.max_parallel));
  p.per_shard = (p.points + p.shards - 1) / p.shards;
  p.sample = sample_point(spec);
  // A shard: its points at three times the sample's pace (points differ; nodes are slower than this one), plus
  // two minutes to start; memory: the sample's peak with half again, at least 256 MiB.
  p.shard_seconds = static_cast<double>(p.per_shard) * p.sample.seconds * 3 + 120;
  p.memory_mib = std::max(256.0, std::ceil(p.sample.peak_mib * 1.5 / 64) * 64);
  p.header = "# " + std::to_string(p.points) + " points of `trainsim " + spec.command + "` in " + std::to_string(p.shards) + " shards of at most " +
             std::to_string(p.per_shard) + ", " + std::to_string(p.parallel) + " at a time.\n" + "# Point 0 took " + format_seconds(p.sample.seconds) +
             " and " + std::to_string(static_cast<long long>(std::llround(p.sample.peak_mib))) + " MiB at peak on the machine that wrote this (exit " +
             std::to_string(p.sample.exit_code) + "): a shard asks for 1 CPU, " + std::to_string(static_cast<long long>(p.memory_mib)) + " MiB and " +
             format_seconds(p.shard_seconds) + " (3x its points at that pace + 2 min).\n";
  return p;
}

void write_file(const fs::path& dir, const std::string& name, const std::string& text, bool executable) {
  const std::string path = (dir / name).string();
  write_output_file("-o", path, [&](std::ostream& os) { os << text; });
  if (executable) {
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec, fs::perm_options::add, ec);
  }
  std::cout << "wrote " << path << " (" << text.size() << " bytes)\n";
}

void slurm(const Spec& spec, const SubmitOptions& o, const Plan& p, const fs::path& dir) {
  const std::string bin = o.trainsim.empty() ? fs::canonical("/proc/self/exe").string() : o.trainsim;
  const std::string sweep = absolute(spec.file), out = absolute(o.out.empty() ? spec.file + ".out" : o.out);
  std::string common;
  if (!o.partition.empty()) common += "#SBATCH --partition=" + o.partition + "\n";
  if (!o.account.empty()) common += "#SBATCH --account=" + o.account + "\n";
  std::string array = "#!/bin/bash\n# Generated by trainsim sweep submit --to slurm from " + spec.file + "\n" + p.header;
  array += "# Each task runs its shard (index % " + std::to_string(p.shards) + " == SLURM_ARRAY_TASK_ID) and skips the points " + out +
           "/points already holds: resubmitting after a failure runs only what is missing.\n";
  array += "#SBATCH --job-name=" + o.job_name + "\n";
  array += "#SBATCH --array=0-" + std::to_string(p.shards - 1) + "%" + std::to_string(p.parallel) + "\n";
  array += "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n";
  array += "#SBATCH --mem=" + std::to_string(static_cast<long long>(p.memory_mib)) + "M\n";
  array += "#SBATCH --time=" + slurm_time(p.shard_seconds) + "\n";
  array += "#SBATCH --output=" + out + "/logs/shard-%a.log\n" + common;
  array += "set -euo pipefail\n";
  array += "exec " + quoted(bin) + " sweep " + quoted(sweep) + " --out " + quoted(out) + " --shard \"${SLURM_ARRAY_TASK_ID}/" + std::to_string(p.shards) + "\"\n";
  std::string merge = "#!/bin/bash\n# Generated by trainsim sweep submit --to slurm: merges " + out + " once every shard has ended well (afterok).\n";
  merge += "#SBATCH --job-name=" + o.job_name + "-merge\n#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n";
  merge += "#SBATCH --mem=" + std::to_string(static_cast<long long>(p.memory_mib)) + "M\n#SBATCH --time=0-00:30:00\n";
  merge += "#SBATCH --output=" + out + "/logs/merge.log\n" + common + "set -euo pipefail\n";
  for (const auto& [format, file] : std::vector<std::pair<std::string, std::string>>{{"csv", "merged.csv"}, {"json", "merged.json"}, {"html", "report.html"}})
    merge += quoted(bin) + " sweep merge " + quoted(out) + " --format " + format + " > " + quoted(out + "/" + file) + "\n";
  std::string submit = "#!/bin/bash\n# Generated by trainsim sweep submit --to slurm: the array, then the merge after it.\nset -euo pipefail\n";
  submit += "cd \"$(dirname \"$0\")\"\nmkdir -p " + quoted(out + "/logs") + "\n";
  submit += "array=$(sbatch --parsable sweep_array.sbatch)\narray=${array%%;*}\n";
  submit += "merge=$(sbatch --parsable --dependency=afterok:${array} sweep_merge.sbatch)\nmerge=${merge%%;*}\n";
  submit += "echo \"submitted job array ${array} (" + std::to_string(p.shards) + " shards) and merge ${merge} after it; results in " + out + "\"\n";
  write_file(dir, "sweep_array.sbatch", array, true);
  write_file(dir, "sweep_merge.sbatch", merge, true);
  write_file(dir, "submit.sh", submit, true);
}

std::string read_text(const std::string& path) {
  std::ifstream in = open_input_file("SWEEP", path, "a readable scenario file the sweep names");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void k8s(const Spec& spec, const SubmitOptions& o, const Plan& p, const fs::path& dir) {
  if (!export_detail::is_dns_label(o.job_name))
    throw InputError("--job-name", "\"" + o.job_name + "\"", "a Kubernetes name: lowercase letters, digits and '-'");
  if (!export_detail::is_dns_label(o.pvc)) throw InputError("--pvc", "\"" + o.pvc + "\"", "a PersistentVolumeClaim name: lowercase letters, digits and '-'");
  // The sweep as the pods see it: its scenario files beside it in the ConfigMap, mounted at /sweep.
  Json doc = spec.document;
  std::map<std::string, std::string> files;  // ConfigMap key -> text
  auto local = [&](const std::string& path) {
    const std::string key = "scenario-" + std::to_string(files.size()) + ".json";
    files[key] = read_text(path);
    return key;
  };
  if (!spec.scenario.empty()) doc["scenario"] = local(spec.scenario);
  for (Json& axis : doc["axes"]) {
    auto rewrite = [&](Json& a) {
      if (a.is_object() && a.contains("scenario"))
        for (Json& f : a["scenario"]) f = local((fs::path(spec.file).parent_path() / f.get<std::string>()).lexically_normal().string());
    };
    if (axis.is_object() && axis.contains("zip")) {
      for (Json& a : axis["zip"]) rewrite(a);
    } else {
      rewrite(axis);
    }
  }
  const std::string shards = std::to_string(p.shards), memory = std::to_string(static_cast<long long>(p.memory_mib)) + "Mi";
  const std::string config = o.job_name + "-sweep";
  std::string cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + config + "\ndata:\n";
  cm += config_map_entry("sweep.json", doc.dump(2) + "\n");
  for (const auto& [k, t] : files) cm += config_map_entry(k, t);
  auto job = [&](const std::string& name, const std::string& indexed, const std::string& command) {
    std::string y = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: " + name + "\nspec:\n" + indexed;
    y += "  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: trainsim\n";
    y += "          image: \"" + o.image + "\"\n          command: [\"/bin/sh\", \"-c\"]\n          args:\n            - |\n";
    y += "              " + command + "\n";
    y += "          resources:\n            requests:\n              cpu: \"1\"\n              memory: " + memory + "\n            limits:\n              memory: " + memory + "\n";
    y += "          volumeMounts:\n            - name: sweep\n              mountPath: /sweep\n              readOnly: true\n            - name: results\n              mountPath: /results\n";
    y += "      volumes:\n        - name: sweep\n          configMap:\n            name: " + config + "\n";
    y += "        - name: results\n          persistentVolumeClaim:\n            claimName: " + o.pvc + "\n";
    return y;
  };
  std::string head = "# Generated by trainsim sweep submit --to k8s from " + spec.file + "\n" + p.header;
  head += "# Index i runs shard i/" + shards + " (JOB_COMPLETION_INDEX) into the PersistentVolumeClaim " + o.pvc +
          " at /results; a failed index is retried and skips the points already there. Then apply sweep-merge-job.yaml.\n";
  const long long deadline = static_cast<long long>(std::ceil(p.shard_seconds * std::ceil(static_cast<double>(p.shards) / static_cast<double>(p.parallel))));
  const std::string indexed = "  completionMode: Indexed\n  completions: " + shards + "\n  parallelism: " + std::to_string(p.parallel) +
                              "\n  backoffLimit: " + std::to_string(std::min<std::size_t>(p.shards * 2, 1000)) +
                              "\n  activeDeadlineSeconds: " + std::to_string(deadline) + "\n";
  const std::string run = "exec trainsim sweep /sweep/sweep.json --out /results --shard \"${JOB_COMPLETION_INDEX}/" + shards + "\"";
  write_file(dir, "sweep-job.yaml", head + cm + "---\n" + job(o.job_name, indexed, run), false);
  const std::string merge = "trainsim sweep merge /results --format csv > /results/merged.csv && trainsim sweep merge /results --format json > "
                            "/results/merged.json && exec trainsim sweep merge /results --format html > /results/report.html";
  write_file(dir, "sweep-merge-job.yaml",
             "# Generated by trainsim sweep submit --to k8s: apply once the Job " + o.job_name + " is complete\n# (kubectl wait --for=condition=complete job/" +
                 o.job_name + " --timeout=-1s && kubectl apply -f sweep-merge-job.yaml)\n" + job(o.job_name + "-merge", "", merge),
             false);
}

int run_submit(const SubmitOptions& o) {
  const Spec spec = read_spec(o.sweep);
  if (o.to != "slurm" && o.to != "k8s") throw InputError("--to", "\"" + o.to + "\"", "slurm or k8s");
  const fs::path dir(o.output);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) throw InputError("-o", "\"" + o.output + "\"", "a folder that can be created and written", ec.message());
  const Plan p = plan_for(spec, o);
  if (o.to == "slurm") slurm(spec, o, p, dir);
  else k8s(spec, o, p, dir);
  std::cout << "sample point 0: " << format_seconds(p.sample.seconds) << ", " << std::llround(p.sample.peak_mib) << " MiB peak; " << p.shards << " shards of at most "
            << p.per_shard << " points\n";
  return kExitOk;
}

}  // namespace

void add_submit_subcommand(CLI::App& app, const std::shared_ptr<std::function<int()>>& chosen) {
  auto o = std::make_shared<SubmitOptions>();
  CLI::App* sub = app.add_subcommand("submit", "Write the files that run the sweep's shards as a Slurm job array or a Kubernetes Indexed Job, and merge after");
  sub->add_option("SWEEP", o->sweep, "sweep file")->required()->check(non_empty_path());
  sub->add_option("--to", o->to, "slurm or k8s")->required()->check(CLI::IsMember({"slurm", "k8s"}));
  sub->add_option("--shards", o->shards, "shards (array tasks, Job completions)")->required();
  sub->add_option("--max-parallel", o->max_parallel, "shards running at once (Slurm's %MAX, the Job's parallelism; default all)");
  sub->add_option("--out", o->out, "Slurm: the results folder on the shared file system (default: SWEEP.out beside the sweep file)")->check(non_empty_path());
  sub->add_option("-o,--output", o->output, "folder to write the submission files into")->check(non_empty_path())->capture_default_str();
  sub->add_option("--trainsim", o->trainsim, "Slurm: the trainsim binary on the nodes (default: this one)")->check(non_empty_path());
  sub->add_option("--partition", o->partition, "Slurm partition");
  sub->add_option("--account", o->account, "Slurm account");
  sub->add_option("--job-name", o->job_name, "job name")->capture_default_str();
  sub->add_option("--image", o->image, "k8s: a container image with trainsim on its PATH")->capture_default_str();
  sub->add_option("--pvc", o->pvc, "k8s: the PersistentVolumeClaim the results go to (shared by every index)")->capture_default_str();
  sub->callback([chosen, o] { *chosen = [o] { return run_submit(*o); }; });
}

}  // namespace trainsim::cli::sweep
