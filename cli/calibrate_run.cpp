// `trainsim calibrate run [-o PROFILE.json] [--quick] [--gpus N] [--models llama3-8b,...] [--tp 1,2,4,8]` (CUDA
// build only): measures this machine's GPUs (cuBLASLt GEMMs, HBM copies, NCCL collectives; calibrate/gpu/) and
// writes a calibration profile (calibrate/README.md). Registers itself under `calibrate` (subcommand_hooks.hpp).
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <map>

#include "calibrate/gpu/bench_driver.hpp"
#include "calibrate/gpu/cuda_util.hpp"
#include "calibrate/gpu/sweep.hpp"
#include "calibrate/import_common.hpp"
#include "calibrate/profile_io.hpp"
#include "command.hpp"
#include "models/core/errors.hpp"
#include "models/scenario/presets.hpp"
#include "reports/table.hpp"
#include "run_files.hpp"
#include "subcommand_hooks.hpp"

namespace trainsim::cli {
namespace {

struct CalibrateRunCliOptions {
  std::string output = "calibration-profile.json";
  bool quick = false;
  int gpus = 0;
  std::string models, tp, gpu, intra_fabric, inter_fabric, rendezvous, benchmark_json;
};


std::string command_line(const CalibrateRunCliOptions& o) {
  std::string c = "trainsim calibrate run -o " + o.output;
  if (o.quick) c += " --quick";
  if (o.gpus > 0) c += " --gpus " + std::to_string(o.gpus);
  if (!o.models.empty()) c += " --models " + o.models;
  if (!o.tp.empty()) c += " --tp " + o.tp;
  if (!o.gpu.empty()) c += " --gpu " + o.gpu;
  if (!o.intra_fabric.empty()) c += " --intra-node " + o.intra_fabric;
  if (!o.inter_fabric.empty()) c += " --inter-node " + o.inter_fabric;
  return c;
}

int run_calibrate_run(const CalibrateRunCliOptions& o) {
  // Options first (bad input is exit 2 whether or not there is a GPU), then the device.
  gpu::CalibrateRunOptions ro;
  ro.quick = o.quick;
  ro.gpus = o.gpus;
  if (!o.models.empty()) {
    ro.models = gpu::split_list(o.models);
    for (const auto& m : ro.models) expand_preset(PresetKind::Model, nlohmann::json(m), "--models");
  }
  if (!o.tp.empty()) ro.tp = gpu::parse_int_list(o.tp, "--tp");
  if (!o.gpu.empty()) expand_preset(PresetKind::Gpu, nlohmann::json(o.gpu), "--gpu");
  if (!o.intra_fabric.empty()) expand_preset(PresetKind::Fabric, nlohmann::json(o.intra_fabric), "--intra-node");
  if (!o.inter_fabric.empty()) expand_preset(PresetKind::Fabric, nlohmann::json(o.inter_fabric), "--inter-node");
  ro.preset = o.gpu;
  ro.intra_fabric = o.intra_fabric;
  ro.inter_fabric = o.inter_fabric;
  ro.rendezvous = o.rendezvous;
  ro.command = command_line(o);
  ro.who = login_name();
  ro.when = utc_timestamp();
  check_output_path("-o", o.output);  // before minutes of measurement, not after
  if (!o.benchmark_json.empty()) check_output_path("--benchmark-json", o.benchmark_json);

  const gpu::DeviceProbe probe = gpu::probe_devices();
  if (probe.count < 1) {
    std::cerr << "error: no CUDA device found: " << probe.error << " (trainsim calibrate run measures this machine's GPUs)\n";
    return kExitBadInput;
  }

  gpu::CalibrateRunResult res;
  try {
    res = gpu::run_calibration(ro, [](const std::string& line) { std::cerr << line << "\n" << std::flush; });
  } catch (const gpu::GpuError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return std::string(e.what()).rfind("no CUDA device found", 0) == 0 ? kExitBadInput : kExitInternal;
  }
  if (!res.writes_profile) return kExitOk;  // ranks > 0 of a multi-process run: rank 0 writes

  parse_calibration_profile(to_json(res.profile));  // what is written must read back
  write_output_file("-o", o.output, [&](std::ostream& os) { os << calibration_profile_text(res.profile); });
  if (!o.benchmark_json.empty()) {
    write_output_file("--benchmark-json", o.benchmark_json, [&](std::ostream& os) { os << res.benchmarks.dump(2) << "\n"; });
  }

  std::map<std::string, int> per_dtype;
  for (const auto& g : res.profile.gemm) ++per_dtype[to_string(g.dtype)];
  std::string gemm_text;
  for (const auto& [d, n] : per_dtype) gemm_text += (gemm_text.empty() ? "" : ", ") + std::to_string(n) + " " + d;
  std::cout << "Wrote " << o.output << " in " << fixed(res.seconds, 0) << " s: " << res.summary.gemm_points << " GEMM points"
            << (gemm_text.empty() ? "" : " (" + gemm_text + ")") << ", HBM "
            << (res.profile.hbm_bandwidth > 0 ? fixed(res.profile.hbm_bandwidth / 1e12, 2) + " TB/s" : std::string("not measured")) << ", "
            << res.summary.collective_curves << " collective curves (" << res.summary.collective_points << " points)\n";
  if (!o.benchmark_json.empty()) std::cout << "Google Benchmark JSON: " << o.benchmark_json << "\n";
  for (const auto& n : res.notes) std::cout << "Note: " << n << "\n";
  if (!res.summary.skipped.empty()) {
    std::cerr << "warning: " << res.summary.skipped.size() << " benchmark" << (res.summary.skipped.size() == 1 ? "" : "s") << " did not run:\n";
    for (std::size_t i = 0; i < res.summary.skipped.size() && i < 20; ++i) std::cerr << "  " << res.summary.skipped[i] << "\n";
    if (res.summary.skipped.size() > 20) std::cerr << "  ... (all listed in the profile's notes count)\n";
  }
  std::cout << "Use it: trainsim plan --calibration " << o.output << "   (trainsim calibrate show " << o.output << " prints it)\n";
  return kExitOk;
}

const RegisterSubcommand registered{
    {"calibrate", "run",
     "Measure this machine's GPUs (cuBLASLt GEMMs, HBM copies, NCCL collectives) into a calibration profile (CUDA build)",
     [](CLI::App& app) -> std::function<int()> {
       auto opt = std::make_shared<CalibrateRunCliOptions>();
       app.add_option("-o,--output", opt->output, "calibration profile to write (JSON)")->check(non_empty_path())->capture_default_str();
       app.add_flag("--quick", opt->quick, "a short sweep (under a minute): llama3-8b's shapes at tp 1, a small grid, a few sizes");
       app.add_option("--gpus", opt->gpus, "local GPUs for the collectives (default: all)")->check(CLI::Range(1, 1024));
       app.add_option("--models", opt->models, "model presets whose GEMM shapes to measure, comma-separated (default: all; --quick: llama3-8b)");
       app.add_option("--tp", opt->tp, "tensor-parallel degrees for the model shapes, comma-separated (default: 1,2,4,8; --quick: 1)");
       app.add_option("--gpu", opt->gpu, "trainsim GPU preset to record (default: from the device name)");
       app.add_option("--intra-node", opt->intra_fabric, "fabric preset the one-node collectives ran on (recorded on the curves)");
       app.add_option("--inter-node", opt->inter_fabric, "fabric preset the multi-node collectives ran on (recorded on the curves)");
       app.add_option("--rendezvous", opt->rendezvous,
                      "one process per GPU under a launcher: HOST:PORT where rank 0 hands out the NCCL id (default MASTER_ADDR:MASTER_PORT+1)");
       app.add_option("--benchmark-json", opt->benchmark_json, "also write Google Benchmark's JSON output here")->check(non_empty_path());
       return [opt] { return run_calibrate_run(*opt); };
     }}};

}  // namespace
}  // namespace trainsim::cli
