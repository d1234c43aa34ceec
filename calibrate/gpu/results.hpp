#pragma once
// From measurements to a calibration profile (pure C++, unit-tested everywhere, no CUDA):
//   - the names the GPU benchmarks register under in Google Benchmark, and the counters they attach;
//   - nccl-tests' bandwidth formulas and per-rank element counts (NVIDIA/nccl-tests doc/PERFORMANCE.md and
//     src/*.cu GetCollByteCount): the message size is what nccl-tests' "size" column counts;
//   - the conversion of Google Benchmark's JSON output (JSONReporter) into a CalibrationProfile (version 1,
//     calibrate/README.md), with the GPU identity and provenance the caller measured.
//
// Benchmark names and counters (every value in SI units; time = the median of the samples):
//   gemm/<dtype>/<m>x<n>x<k>                  counters m, n, k, flops, median_s, ...; label = where the shape comes from
//   hbm/copy/<bytes copied>                   counters bytes_moved (read + written), median_s, ...
//   nccl/<op>/<intra|inter>/<n>x<per node>/<bytes>  counters bytes, group_size, ranks_per_node, median_s, busbw, ...
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/calibration/calibration.hpp"
#include "models/comm/collectives.hpp"

namespace trainsim::gpu {

std::string gemm_benchmark_name(GemmDtype dtype, double m, double n, double k);
std::string hbm_benchmark_name(double bytes_copied);
std::string collective_benchmark_name(Collective op, CommScope scope, int group_size, int ranks_per_node, double bytes);

// nccl-tests: algbw = size / time; busbw = algbw x factor, factor all-reduce 2(n-1)/n, all-gather,
// reduce-scatter and all-to-all (n-1)/n, send/recv 1 (models/comm/collectives.hpp bus_bandwidth_factor).
double algorithm_bandwidth(double bytes, double seconds);
double bus_bandwidth(Collective op, double bytes, int ranks, double seconds);

// Elements each rank passes to NCCL for a message of `bytes` (nccl-tests' size column) on `ranks` ranks:
//   all-reduce      send = recv = size                (the full buffer)
//   all-gather      send = size / n, recv = size      (size = the gathered output)
//   reduce-scatter  send = size, recv = size / n      (size = the input)
//   all-to-all      send = recv = size, size / n to each peer
//   send/recv       send = recv = size                (the message)
// Sizes are rounded down to a whole number of elements per rank (per peer for all-to-all), as nccl-tests does;
// `bytes_used` is then the size actually moved (what busbw is computed from).
struct CollectiveCounts {
  std::size_t send_count = 0, recv_count = 0;  // elements
  std::size_t per_peer = 0;                    // all-to-all: elements to each peer
  double bytes_used = 0;
};
CollectiveCounts collective_counts(Collective op, double bytes, int ranks, std::size_t element_size);

// What the caller knows about the run; the conversion adds the measurements.
struct ProfileHeader {
  GpuIdentity gpu;
  Provenance provenance;                 // source "measured", who, when, command, notes
  std::string intra_fabric, inter_fabric;  // fabric presets to record on the curves (empty: any)
  std::string library_versions;            // "CUDA runtime 13.0, cuBLASLt 130100, NCCL 2.28.9", for the sources
};

struct ConversionSummary {
  int gemm_points = 0, collective_points = 0, collective_curves = 0;
  bool hbm = false;
  std::vector<std::string> skipped;        // "gemm/fp8/100x100x100: <error message>", entries not used and why
};

// Google Benchmark JSON ({"context": ..., "benchmarks": [...]}) to a profile. Entries that errored are listed
// in `summary->skipped` (and in the profile's notes), aggregates and unknown names ignored. GEMM points get
// tflops = 2·m·n·k / median time; HBM the bandwidth of the largest copy (bytes read + written / time);
// collectives one curve per (op, scope, group size, ranks per node) with out-of-place time and nccl-tests busbw.
// Throws InputError when the document is not Google Benchmark output.
CalibrationProfile profile_from_benchmark_json(const nlohmann::json& gbench, const ProfileHeader& header,
                                               ConversionSummary* summary = nullptr);

}  // namespace trainsim::gpu
