#pragma once
// `trainsim calibrate run`: the microbenchmarks behind a measured calibration profile, driven by Google
// Benchmark with manual timing (UseManualTime / SetIterationTime from CUDA events; each iteration is one
// sample after a warm-up, the counters carry the median and spread of the samples), its JSON output converted
// into the profile (results.hpp).
//
//   HBM          cudaMemcpyAsync device to device, 256 MiB .. 4 GiB (quick: 1 GiB), bytes read + written
//   GEMM         cuBLASLt (gemm_bench.hpp) over the model shapes and grid of sweep.hpp, every dtype the GPU runs
//   collectives  NCCL (nccl_bench.hpp) all-reduce, all-gather, reduce-scatter, all-to-all, send/recv, 1 KiB ..
//                4 GiB (capped by memory), on 2, 4, ... of the local GPUs (one process, one communicator per
//                device); or, when a launcher (launcher.hpp) started one process per GPU, across all of them
//                (then only the collectives run, and rank 0 writes the profile)
//
// GEMMs and copies run on local GPU 0 (multi-process: the rank's own GPU). A progress line per benchmark group
// goes to the progress callback.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calibrate/gpu/results.hpp"
#include "calibrate/gpu/sweep.hpp"

namespace trainsim::gpu {

struct CalibrateRunOptions {
  bool quick = false;
  std::vector<std::string> models;   // model presets for the GEMM shapes; empty: every preset (quick: llama3-8b)
  std::vector<int> tp;               // TP degrees for the shapes; empty: 1, 2, 4, 8 (quick: 1)
  int gpus = 0;                      // local GPUs for the collectives; 0: all
  std::string preset;                // GPU preset recorded in the profile; empty: from the device name
  std::string intra_fabric, inter_fabric;  // fabric presets recorded on the curves; empty: any fabric
  std::string rendezvous;            // multi-process: HOST:PORT of rank 0 (default MASTER_ADDR:MASTER_PORT+1)
  std::string command, who, when;    // provenance
  bool gemm = true, hbm = true, collectives = true;
};

struct CalibrateRunResult {
  CalibrationProfile profile;
  ConversionSummary summary;
  nlohmann::json benchmarks;         // Google Benchmark's JSON output (context and every benchmark)
  bool writes_profile = true;        // false on ranks > 0 of a multi-process run
  std::size_t benchmarks_run = 0;
  double seconds = 0;
  std::vector<std::string> notes;    // what was left out and why ("1 local GPU: no collectives")
};

using ProgressFn = std::function<void(const std::string& line)>;

// Throws GpuError ("no CUDA device found: ..." without one) and InputError for bad options (unknown model).
CalibrateRunResult run_calibration(const CalibrateRunOptions& o, const ProgressFn& progress);

// Runs whatever is registered with Google Benchmark (benchmark::RegisterBenchmark) and returns its JSON output
// (JSONReporter) without printing anything; `ran`: how many benchmarks ran. Clears the registrations, also on
// error. Throws GpuError when the output is not valid JSON.
nlohmann::json run_registered_benchmarks(std::size_t* ran = nullptr);

}  // namespace trainsim::gpu
