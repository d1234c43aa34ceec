#include "calibrate/gpu/bench_driver.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>

#include "calibrate/gpu/cuda_util.hpp"
#include "calibrate/gpu/dynamic_libs.hpp"
#include "calibrate/gpu/gemm_bench.hpp"
#include "calibrate/gpu/hbm_bench.hpp"
#include "calibrate/gpu/launcher.hpp"
#include "calibrate/gpu/nccl_bench.hpp"
#include "models/compute/compute.hpp"
#include "models/core/units.hpp"
#include "models/scenario/scenario.hpp"

namespace trainsim::gpu {

namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string duration_text(double s) {
  if (s < 90) return fixed(s, 0) + " s";
  return fixed(s / 60, 1) + " min";
}

std::string bytes_text(double b) {
  if (b >= kBytesPerGiB) return fixed(b / kBytesPerGiB, b >= 10 * kBytesPerGiB ? 0 : 1) + " GiB";
  if (b >= kBytesPerMiB) return fixed(b / kBytesPerMiB, 0) + " MiB";
  return fixed(b / 1024.0, 0) + " KiB";
}


// Google Benchmark's JSON written into a string; nothing goes to the terminal.
class CollectingReporter : public benchmark::BenchmarkReporter {
 public:
  CollectingReporter() {
    json_.SetOutputStream(&out_);
    json_.SetErrorStream(&err_);
    SetOutputStream(&discard_);
    SetErrorStream(&err_);
  }
  bool ReportContext(const Context& context) override { return json_.ReportContext(context); }
  void ReportRuns(const std::vector<Run>& runs) override { json_.ReportRuns(runs); }
  void Finalize() override { json_.Finalize(); }
  std::string json() const { return out_.str(); }
  std::string errors() const { return err_.str(); }

 private:
  benchmark::JSONReporter json_;
  std::ostringstream out_, err_, discard_;
};

// Registered benchmarks are global: cleared however the run ends.
struct ClearBenchmarks {
  ~ClearBenchmarks() { benchmark::ClearRegisteredBenchmarks(); }
};

struct Group {
  std::string title;
  int cases = 0;
  double estimate_s = 0;  // 0: no estimate
};

// What every benchmark of the run shares.
struct Bench {
  int device = 0;
  DeviceInfo info;
  TimingPolicy policy;
  std::unique_ptr<Stream> stream;
  std::unique_ptr<LtContext> lt;
  LauncherRanks launcher;
  ncclUniqueId id{};
  std::vector<int> local_devices;
  double nccl_max_bytes = 0;
  std::unique_ptr<NcclGroup> nccl;
  int nccl_size = 0;
  std::vector<Group> groups;
  int current_group = -1;
  ProgressFn progress;
  Clock::time_point start = Clock::now();

  void announce(int g) {
    if (g == current_group) return;
    current_group = g;
    if (!progress) return;
    const Group& gr = groups[static_cast<std::size_t>(g)];
    std::string line = "[" + std::to_string(g + 1) + "/" + std::to_string(groups.size()) + "] " + gr.title + ": " + std::to_string(gr.cases) +
                       " benchmark" + (gr.cases == 1 ? "" : "s");
    if (gr.estimate_s > 0) line += ", about " + duration_text(gr.estimate_s);
    line += " (" + duration_text(std::chrono::duration<double>(Clock::now() - start).count()) + " elapsed)";
    progress(line);
  }

  NcclGroup& nccl_group(int size) {
    if (nccl && nccl_size == size) return *nccl;
    nccl.reset();
    nccl_size = 0;
    if (launcher.present) {
      nccl = std::make_unique<NcclGroup>(device, launcher.world, launcher.rank, id);
    } else {
      nccl = std::make_unique<NcclGroup>(std::vector<int>(local_devices.begin(), local_devices.begin() + size));
    }
    nccl_size = size;
    nccl->reserve(nccl_max_bytes);
    return *nccl;
  }
};

void set_timing_counters(benchmark::State& st, const TimingStats& s) {
  st.counters["median_s"] = s.median_s;
  st.counters["mean_s"] = s.mean_s;
  st.counters["min_s"] = s.min_s;
  st.counters["max_s"] = s.max_s;
  st.counters["stddev_s"] = s.stddev_s;
  st.counters["samples"] = s.samples;
  st.counters["launches_per_sample"] = s.inner;
  st.counters["cuda_graph"] = s.graph ? 1 : 0;
}

// Warm-up, then one CUDA-event-timed sample per Google Benchmark iteration. False when a sample failed (the
// benchmark then carries the error).
bool timed_loop(benchmark::State& st, EventTimer& timer, const std::function<void()>& launch, const TimingPolicy& policy, TimingStats* stats,
                const std::function<double(double)>& agree = nullptr) {
  timer.prepare(launch, policy, agree);
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(std::max(1, policy.samples)));
  for (auto _ : st) {
    double t = 0;
    try {
      t = timer.sample();
      if (agree) t = agree(t);
    } catch (const std::exception& e) {
      st.SkipWithError(e.what());
      break;
    }
    st.SetIterationTime(t);
    samples.push_back(t);
  }
  if (st.error_occurred()) return false;
  *stats = timing_stats(samples);
  stats->inner = timer.inner();
  stats->graph = timer.graph();
  set_timing_counters(st, *stats);
  return true;
}

double estimate_gemm_seconds(const GemmCase& c, const GpuSpec* gpu, const TimingPolicy& p) {
  if (!gpu) return 0;
  const double t = gemm_time(*gpu, precision_of(c.dtype), {c.m, c.n, c.k, 1});
  return p.warmup_s + 3 * t + p.samples * std::max(t, p.min_sample_s) + 0.02;  // + allocation, fill, heuristic
}

std::string version_of(std::size_t v) {  // cublasLtGetVersion: major*10000 + minor*100 + patch
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
}

std::string cublaslt_version() {
  try {
    return version_of(cublaslt().get_version());
  } catch (const GpuError&) {
    return "not loaded";
  }
}

}  // namespace

Json run_registered_benchmarks(std::size_t* ran) {
  static int argc = 1;
  static char arg0[] = "trainsim";
  static char* argv[] = {arg0, nullptr};
  benchmark::Initialize(&argc, argv);
  ClearBenchmarks clear_at_exit;
  CollectingReporter reporter;
  const std::size_t n = benchmark::RunSpecifiedBenchmarks(&reporter);
  if (ran) *ran = n;
  if (n == 0 && reporter.json().empty()) return Json{{"benchmarks", Json::array()}};  // nothing registered: no report at all
  try {
    return Json::parse(reporter.json());
  } catch (const std::exception& e) {
    throw GpuError(std::string("Google Benchmark's JSON output could not be read: ") + e.what() +
                   (reporter.errors().empty() ? "" : " (" + reporter.errors() + ")"));
  }
}

namespace {
// A benchmark timed by hand (UseManualTime), the policy's samples as its iterations.
void register_timed(const std::shared_ptr<Bench>& bench, const std::string& name, std::function<void(benchmark::State&)> fn) {
  benchmark::RegisterBenchmark(name.c_str(), [fn](benchmark::State& st) { fn(st); })
      ->UseManualTime()
      ->Iterations(std::max(1, bench->policy.samples))
      ->Repetitions(1)
      ->Unit(benchmark::kMicrosecond);
}

// Multi-process: the NCCL id from rank 0, over TCP at the rendezvous address.
void exchange_nccl_id(Bench& b, const CalibrateRunOptions& o, const ProgressFn& progress, bool writer) {
  Bench* bench = &b;
  if (writer && progress)
    progress("Ranks from " + bench->launcher.source + ": " + std::to_string(bench->launcher.world) + " ranks on " +
             std::to_string(bench->launcher.nodes()) + " node" + (bench->launcher.nodes() == 1 ? "" : "s") + ", this rank on GPU " +
             std::to_string(bench->device) + "; only collectives run in this mode");
  std::vector<unsigned char> id(sizeof(ncclUniqueId), 0);
  if (bench->launcher.rank == 0) {
    TRAINSIM_NCCL_CHECK(nccl().get_unique_id(&bench->id));
    std::memcpy(id.data(), &bench->id, sizeof bench->id);
  }
  HostPort at;
  try {
    at = rendezvous_address(o.rendezvous);
  } catch (const std::invalid_argument& e) {
    throw GpuError(e.what());
  }
  try {
    id = broadcast_over_tcp(bench->launcher, at, id);
  } catch (const std::runtime_error& e) {
    throw GpuError(std::string("NCCL id exchange: ") + e.what());
  }
  if (id.size() != sizeof(ncclUniqueId)) throw GpuError("NCCL id exchange: rank 0 sent " + std::to_string(id.size()) + " bytes");
  std::memcpy(&bench->id, id.data(), sizeof bench->id);
}

// HBM: device-to-device copies of the sweep's sizes that fit in `usable` bytes.
void register_hbm(const std::shared_ptr<Bench>& bench, const SweepOptions& sweep, double usable, CalibrateRunResult& result) {
  Group g{"HBM: device-to-device copy", 0, 0};
  const int gi = static_cast<int>(bench->groups.size());
  for (double bytes : hbm_copy_sizes(sweep)) {
    if (2 * bytes > usable) {
      result.notes.push_back("HBM copy of " + bytes_text(bytes) + " left out: " + bytes_text(usable) + " of device memory usable");
      continue;
    }
    ++g.cases;
    g.estimate_s += bench->policy.warmup_s + (bench->policy.samples + 3) * std::max(2 * bytes / 3e12, bench->policy.min_sample_s) + 0.05;
    register_timed(bench, hbm_benchmark_name(bytes), [bench, bytes, gi](benchmark::State& st) {
      bench->announce(gi);
      try {
        DeviceGuard dg(bench->device);
        DeviceCopy copy(static_cast<std::size_t>(bytes), bench->stream->get(), bench->info.l2_bytes);
        EventTimer timer(bench->device, bench->stream->get());
        TimingStats s;
        if (!timed_loop(st, timer, [&copy] { copy.launch(); }, bench->policy, &s)) return;
        if (!copy.verify()) throw GpuError("the copy's destination differs from its source");
        st.counters["bytes_copied"] = static_cast<double>(copy.bytes());
        st.counters["bytes_moved"] = copy.bytes_moved();
        st.counters["bandwidth"] = copy.bytes_moved() / s.median_s;
        st.SetLabel("cudaMemcpyAsync device to device");
      } catch (const std::exception& e) {
        st.SkipWithError(e.what());
      }
    });
  }
  if (g.cases > 0) bench->groups.push_back(g);
}

// GEMMs through cuBLASLt, one group per dtype.
void register_gemms(const std::shared_ptr<Bench>& bench, const SweepOptions& sweep, const std::vector<GemmCase>& gemms, const GpuSpec* estimate_gpu) {
  bench->lt = std::make_unique<LtContext>();
  for (GemmDtype d : sweep.dtypes) {
    Group g{std::string("GEMM ") + to_string(d) + " (cuBLASLt)", 0, 0};
    const int gi = static_cast<int>(bench->groups.size());
    for (const GemmCase& c : gemms) {
      if (c.dtype != d) continue;
      ++g.cases;
      g.estimate_s += estimate_gemm_seconds(c, estimate_gpu, bench->policy);
      register_timed(bench, gemm_benchmark_name(c.dtype, c.m, c.n, c.k), [bench, c, gi](benchmark::State& st) {
        bench->announce(gi);
        try {
          DeviceGuard dg(bench->device);
          const GemmProblem p{c.dtype, std::llround(c.m), std::llround(c.n), std::llround(c.k), 1};
          LtGemm gemm(p, *bench->lt, bench->stream->get(), bench->info.l2_bytes);
          EventTimer timer(bench->device, bench->stream->get());
          TimingStats s;
          if (!timed_loop(st, timer, [&gemm] { gemm.launch(); }, bench->policy, &s)) return;
          st.counters["m"] = c.m;
          st.counters["n"] = c.n;
          st.counters["k"] = c.k;
          st.counters["flops"] = gemm.flops();
          st.counters["tflops"] = gemm.flops() / s.median_s / 1e12;
          st.counters["buffer_sets"] = gemm.sets();
          st.SetLabel(c.origin + "; " + gemm.algorithm());
        } catch (const std::exception& e) {
          st.SkipWithError(e.what());
        }
      });
    }
    if (g.cases > 0) bench->groups.push_back(g);
  }
}

// NCCL collectives: every local group size of the sweep, or the launcher's whole world across processes.
void register_collectives(const std::shared_ptr<Bench>& bench, SweepOptions& sweep, bool multi, int local_gpus, double usable, CalibrateRunResult& result) {
  std::vector<int> sizes;  // group sizes
  CommScope scope = CommScope::Intra;
  int per_node = 0;
  if (multi) {
    sizes = {bench->launcher.world};
    per_node = bench->launcher.local_world;
    scope = bench->launcher.nodes() > 1 ? CommScope::Inter : CommScope::Intra;
  } else {
    sizes = collective_group_sizes(sweep);
    if (sizes.empty()) result.notes.push_back(std::to_string(local_gpus) + " local GPU" + (local_gpus == 1 ? "" : "s") +
                                              ": no collectives measured (they need 2 or more; across nodes, start one process per GPU with a launcher)");
  }
  // Each rank holds a send and a receive buffer of the largest message.
  double cap = 4 * kBytesPerGiB;
  while (cap > 1024 && 2.5 * cap > usable) cap /= 2;
  bench->nccl_max_bytes = cap;
  sweep.max_collective_bytes = cap;
  const std::vector<double> messages = collective_sizes(sweep);
  if (!sizes.empty() && cap < 4 * kBytesPerGiB) result.notes.push_back("collectives up to " + bytes_text(cap) + " (device memory)");
  for (int n : sizes) {
    const int rpn = multi ? per_node : n;
    Group g{"NCCL collectives on " + std::to_string(n) + " GPUs" +
                (scope == CommScope::Inter ? " (" + std::to_string(bench->launcher.nodes()) + " nodes)" : ""),
            0, 0};
    const int gi = static_cast<int>(bench->groups.size());
    for (Collective op : collective_ops()) {
      for (double bytes : messages) {
        ++g.cases;
        register_timed(bench, collective_benchmark_name(op, scope, n, rpn, bytes), [bench, op, bytes, n, rpn, gi](benchmark::State& st) {
          bench->announce(gi);
          try {
            NcclGroup& group = bench->nccl_group(n);
            const double used = group.bytes_used(op, bytes);
            if (!(used > 0)) throw GpuError("message too small for " + std::to_string(n) + " ranks");
            TimingPolicy policy = bench->policy;
            policy.use_graph = false;
            std::function<double(double)> agree;
            if (group.multi_process()) agree = [&group](double v) { return group.max_over_ranks(v); };
            TimingStats s;
            if (!timed_loop(st, group.timer(), [&group, op, bytes] { group.launch(op, bytes); }, policy, &s, agree)) return;
            group.check_async();
            st.counters["bytes"] = used;
            st.counters["group_size"] = n;
            st.counters["ranks_per_node"] = rpn;
            st.counters["algbw"] = algorithm_bandwidth(used, s.median_s);
            st.counters["busbw"] = bus_bandwidth(op, used, n, s.median_s);
            st.SetLabel(std::string("NCCL ") + to_string(op) + ", bf16, out of place");
          } catch (const std::exception& e) {
            st.SkipWithError(e.what());
          }
        });
      }
    }
    if (g.cases > 0) bench->groups.push_back(g);
  }
}

// The provenance of the measured profile: the GPU, who ran it when, the sweep, the libraries.
ProfileHeader measured_header(const CalibrateRunOptions& o, const Bench& bench, const DeviceProbe& probe, const std::string& preset,
                              const SweepOptions& sweep, bool gemms_ran, const std::vector<std::string>& notes) {
  const DeviceInfo& info = bench.info;
  ProfileHeader header;
  header.gpu = gpu_identity(info, preset);
  header.provenance.source = "measured";
  header.provenance.who = o.who;
  header.provenance.when = o.when;
  header.provenance.command = o.command;
  std::string note = "GPU " + std::to_string(bench.device) + " of " + std::to_string(probe.count) + " local (sm_" + std::to_string(info.cc_major) +
                     std::to_string(info.cc_minor) + ").";
  if (gemms_ran) {
    note += " GEMM shapes from " + (sweep.models.empty() ? std::string(o.quick ? "llama3-8b" : "every model preset") : std::to_string(sweep.models.size()) + " model presets") +
            " (sequence " + std::to_string(sweep.seq_len) + ", micro-batch 1, TN layout) and a grid.";
  }
  for (const auto& n : notes) note += " " + n + ".";
  header.provenance.notes = note;
  header.intra_fabric = o.intra_fabric;
  header.inter_fabric = o.inter_fabric;
  header.library_versions = "CUDA runtime " + info.runtime_version + ", cuBLASLt " + cublaslt_version() + ", NCCL " + nccl_version();
  return header;
}
}  // namespace

CalibrateRunResult run_calibration(const CalibrateRunOptions& o, const ProgressFn& progress) {
  const auto started = Clock::now();
  const DeviceProbe probe = probe_devices();
  if (probe.count < 1) throw GpuError("no CUDA device found: " + probe.error);

  CalibrateRunResult result;
  auto bench = std::make_shared<Bench>();
  bench->policy = o.quick ? quick_timing() : full_timing();
  bench->launcher = launcher_ranks();
  const bool multi = bench->launcher.present;
  const bool writer = !multi || bench->launcher.rank == 0;
  result.writes_profile = writer;
  if (writer) bench->progress = progress;
  bench->device = multi ? bench->launcher.local_rank % probe.count : 0;
  DeviceGuard guard(bench->device);
  bench->info = device_info(bench->device);
  bench->stream = std::make_unique<Stream>();
  const DeviceInfo& info = bench->info;

  SweepOptions sweep;
  sweep.quick = o.quick;
  sweep.models = o.models;
  sweep.tp = o.tp;
  sweep.dtypes = supported_gemm_dtypes(info);
  const int local_gpus = o.gpus > 0 ? std::min(o.gpus, probe.count) : probe.count;
  if (o.gpus > probe.count) result.notes.push_back("--gpus " + std::to_string(o.gpus) + ": only " + std::to_string(probe.count) + " local GPUs");
  sweep.gpus = local_gpus;
  for (int d = 0; d < local_gpus; ++d) bench->local_devices.push_back(d);

  std::vector<GemmCase> gemms;
  if (o.gemm && !multi) gemms = gemm_sweep(sweep);  // InputError for an unknown model, before any GPU work
  std::string preset = o.preset.empty() ? gpu_preset_for_device(info.name, info.memory_bytes) : o.preset;
  std::unique_ptr<GpuSpec> estimate_gpu;
  try {
    estimate_gpu = std::make_unique<GpuSpec>(parse_gpu(Json(preset.empty() ? std::string("h100-sxm-80gb") : preset), "--gpu"));
  } catch (const std::exception&) {
    estimate_gpu.reset();
  }

  // Memory caps: copies and NCCL buffers must fit beside what the CUDA context and NCCL keep.
  std::size_t free_bytes = 0, total_bytes = 0;
  memory_info(&free_bytes, &total_bytes);
  const double usable = std::max(0.0, static_cast<double>(free_bytes) - 2 * kBytesPerGiB);

  // ---- multi-process: the NCCL id from rank 0
  if (multi && o.collectives) exchange_nccl_id(*bench, o, progress, writer);

  // ---- register the benchmarks, group by group
  ClearBenchmarks clear_at_exit;
  benchmark::ClearRegisteredBenchmarks();
  if (o.hbm && !multi) register_hbm(bench, sweep, usable, result);
  if (o.gemm && !multi && !gemms.empty()) register_gemms(bench, sweep, gemms, estimate_gpu.get());
  if (o.collectives) register_collectives(bench, sweep, multi, local_gpus, usable, result);

  if (writer && progress) {
    double total = 0;
    for (const Group& g : bench->groups) total += g.estimate_s;
    std::string line = "Calibrating " + info.name + " (GPU " + std::to_string(bench->device) + ", sm_" + std::to_string(info.cc_major) +
                       std::to_string(info.cc_minor) + ", " + std::to_string(info.sms) + " SMs): " + std::to_string(bench->groups.size()) +
                       " benchmark groups";
    if (total > 0) line += ", GEMMs and copies about " + duration_text(total);
    progress(line + (o.quick ? " (quick)" : ""));
  }

  result.benchmarks = run_registered_benchmarks(&result.benchmarks_run);
  bench->nccl.reset();

  const ProfileHeader header = measured_header(o, *bench, probe, preset, sweep, !gemms.empty(), result.notes);
  result.profile = profile_from_benchmark_json(result.benchmarks, header, &result.summary);
  result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return result;
}

}  // namespace trainsim::gpu
