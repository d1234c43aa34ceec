#include "calibrate/gpu/cuda_util.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "calibrate/gpu/sweep.hpp"
#include "models/core/units.hpp"

namespace trainsim::gpu {

namespace {

std::string gib_text(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / kBytesPerGiB);
  return buf;
}

std::string version_text(int v) {  // 12040 -> "12.4"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

bool is_version_token(const std::string& s) {  // "550.54.15"
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s.front()))) return false;
  int dots = 0;
  for (char c : s) {
    if (c == '.') ++dots;
    else if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return dots >= 1;
}

// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024" -> "550.54.15".
std::string kernel_driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  std::istringstream words(line);
  std::string w;
  while (words >> w)
    if (is_version_token(w)) return w;
  return "";
}

void destroy_event(cudaEvent_t e) noexcept {
  if (e) static_cast<void>(cudaEventDestroy(e));
}

}  // namespace

std::string source_location(const char* file, int line) {
  std::string f = file ? file : "?";
  const std::size_t at = f.rfind("calibrate/");
  if (at != std::string::npos) f = f.substr(at);
  return f + ":" + std::to_string(line);
}

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  static_cast<void>(cudaGetLastError());  // clear a non-sticky error so that later calls are not blamed
  throw GpuError(std::string("CUDA error: ") + cudaGetErrorString(status) + " (" + cudaGetErrorName(status) + ") in " + call + " at " +
                 source_location(file, line));
}

DeviceProbe probe_devices() noexcept {
  DeviceProbe p;
  try {
    int n = 0;
    const cudaError_t st = cudaGetDeviceCount(&n);
    if (st != cudaSuccess) {
      static_cast<void>(cudaGetLastError());
      p.error = std::string(cudaGetErrorString(st)) + " (" + cudaGetErrorName(st) + ")";
      return p;
    }
    p.count = n;
    if (n <= 0) p.error = "cudaGetDeviceCount reports 0 devices";
  } catch (...) {
    p.count = 0;
    p.error = "cudaGetDeviceCount failed";
  }
  return p;
}

DeviceInfo device_info(int device) {
  DeviceInfo d;
  d.index = device;
  cudaDeviceProp prop{};
  TRAINSIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  d.name = prop.name;
  d.sms = prop.multiProcessorCount;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.memory_bytes = static_cast<double>(prop.totalGlobalMem);
  d.l2_bytes = prop.l2CacheSize > 0 ? static_cast<std::size_t>(prop.l2CacheSize) : 0;
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device) == cudaSuccess) d.sm_clock_mhz = khz / 1000.0;
  else static_cast<void>(cudaGetLastError());
  khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device) == cudaSuccess) d.memory_clock_mhz = khz / 1000.0;
  else static_cast<void>(cudaGetLastError());
  int v = 0;
  TRAINSIM_CUDA_CHECK(cudaRuntimeGetVersion(&v));
  d.runtime_version = version_text(v);
  d.driver_version = kernel_driver_version();
  if (d.driver_version.empty()) {
    v = 0;
    TRAINSIM_CUDA_CHECK(cudaDriverGetVersion(&v));
    d.driver_version = "CUDA driver API " + version_text(v);
  }
  return d;
}

GpuIdentity gpu_identity(const DeviceInfo& d, const std::string& preset) {
  GpuIdentity g;
  g.name = d.name;
  g.preset = preset.empty() ? gpu_preset_for_device(d.name, d.memory_bytes) : preset;
  g.sms = d.sms;
  g.sm_clock_mhz = std::round(d.sm_clock_mhz);
  g.memory_clock_mhz = std::round(d.memory_clock_mhz);
  g.driver_version = d.driver_version;
  g.cuda_version = d.runtime_version;
  return g;
}

DeviceGuard::DeviceGuard(int device) {
  if (cudaGetDevice(&previous_) != cudaSuccess) {
    static_cast<void>(cudaGetLastError());
    previous_ = -1;
  }
  if (previous_ != device) TRAINSIM_CUDA_CHECK(cudaSetDevice(device));
}

DeviceGuard::~DeviceGuard() {
  int current = -1;
  if (previous_ >= 0 && cudaGetDevice(&current) == cudaSuccess && current != previous_) static_cast<void>(cudaSetDevice(previous_));
}

// ---- memory, streams, events ---------------------------------------------------------------------------

void memory_info(std::size_t* free_bytes, std::size_t* total_bytes) {
  std::size_t f = 0, t = 0;
  TRAINSIM_CUDA_CHECK(cudaMemGetInfo(&f, &t));
  if (free_bytes) *free_bytes = f;
  if (total_bytes) *total_bytes = t;
}

void require_free_memory(double bytes, const std::string& what, double reserve) {
  std::size_t free_bytes = 0, total = 0;
  memory_info(&free_bytes, &total);
  if (bytes + reserve > static_cast<double>(free_bytes)) {
    int device = 0;
    static_cast<void>(cudaGetDevice(&device));
    throw GpuError(what + " needs " + gib_text(bytes) + " of device memory; device " + std::to_string(device) + " has " +
                   gib_text(static_cast<double>(free_bytes)) + " free of " + gib_text(static_cast<double>(total)));
  }
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) {
  TRAINSIM_CUDA_CHECK(cudaGetDevice(&device_));
  if (bytes == 0) return;
  void* p = nullptr;
  const cudaError_t st = cudaMalloc(&p, bytes);
  if (st != cudaSuccess) {
    static_cast<void>(cudaGetLastError());
    std::size_t free_bytes = 0, total = 0;
    if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) static_cast<void>(cudaGetLastError());
    throw GpuError("cannot allocate " + gib_text(static_cast<double>(bytes)) + " on device " + std::to_string(device_) + " (" +
                   gib_text(static_cast<double>(free_bytes)) + " free): " + cudaGetErrorString(st));
  }
  ptr_ = p;
  size_ = bytes;
}

void DeviceBuffer::release() noexcept {
  if (!ptr_) return;
  int current = -1;
  const bool switched = cudaGetDevice(&current) == cudaSuccess && current != device_ && cudaSetDevice(device_) == cudaSuccess;
  if (cudaFree(ptr_) != cudaSuccess) static_cast<void>(cudaGetLastError());
  if (switched) static_cast<void>(cudaSetDevice(current));
  ptr_ = nullptr;
  size_ = 0;
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), size_(o.size_), device_(o.device_) {
  o.ptr_ = nullptr;
  o.size_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    release();
    ptr_ = o.ptr_, size_ = o.size_, device_ = o.device_;
    o.ptr_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

Stream::Stream() {
  TRAINSIM_CUDA_CHECK(cudaGetDevice(&device_));
  TRAINSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

Stream::~Stream() {
  if (!stream_) return;
  int current = -1;
  const bool switched = cudaGetDevice(&current) == cudaSuccess && current != device_ && cudaSetDevice(device_) == cudaSuccess;
  if (cudaStreamDestroy(stream_) != cudaSuccess) static_cast<void>(cudaGetLastError());
  if (switched) static_cast<void>(cudaSetDevice(current));
}

void Stream::synchronize() const { TRAINSIM_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

Event::Event() {
  TRAINSIM_CUDA_CHECK(cudaGetDevice(&device_));
  TRAINSIM_CUDA_CHECK(cudaEventCreate(&event_));
}

Event::~Event() { destroy_event(event_); }

// ---- data ----------------------------------------------------------------------------------------------

std::size_t element_size(ElementType t) {
  switch (t) {
    case ElementType::Bf16:
    case ElementType::Fp16: return 2;
    case ElementType::Fp8E4M3: return 1;
    case ElementType::Fp32: return 4;
  }
  return 2;
}

const char* to_string(ElementType t) {
  switch (t) {
    case ElementType::Bf16: return "bf16";
    case ElementType::Fp16: return "fp16";
    case ElementType::Fp8E4M3: return "fp8 e4m3";
    case ElementType::Fp32: return "fp32";
  }
  return "?";
}

ElementType operand_type(GemmDtype d) {
  switch (d) {
    case GemmDtype::Bf16: return ElementType::Bf16;
    case GemmDtype::Fp16: return ElementType::Fp16;
    case GemmDtype::Fp8: return ElementType::Fp8E4M3;
    case GemmDtype::Tf32: return ElementType::Fp32;
  }
  return ElementType::Bf16;
}

ElementType output_type(GemmDtype d) {
  switch (d) {
    case GemmDtype::Bf16: return ElementType::Bf16;
    case GemmDtype::Fp16: return ElementType::Fp16;
    case GemmDtype::Fp8: return ElementType::Bf16;  // 16-bit outputs, as Transformer Engine writes them
    case GemmDtype::Tf32: return ElementType::Fp32;
  }
  return ElementType::Bf16;
}

std::uint32_t random_element_bits(ElementType t, std::uint64_t& state) {
  // splitmix64 (Steele, Lea & Flood 2014)
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  const auto sign = static_cast<std::uint32_t>(z & 1u);
  const auto offset = static_cast<std::uint32_t>((z >> 1) % 6u);  // exponent: 2^-5 .. 2^0
  const auto mantissa = static_cast<std::uint32_t>(z >> 8);
  switch (t) {
    case ElementType::Bf16: return sign << 15 | (122u + offset) << 7 | (mantissa & 0x7Fu);
    case ElementType::Fp16: return sign << 15 | (10u + offset) << 10 | (mantissa & 0x3FFu);
    case ElementType::Fp8E4M3: return sign << 7 | (2u + offset) << 3 | (mantissa & 0x7u);
    case ElementType::Fp32: return sign << 31 | (122u + offset) << 23 | (mantissa & 0x7FFFFFu);
  }
  return 0x3F80u;
}

float element_to_float(ElementType t, const unsigned char* p) {
  switch (t) {
    case ElementType::Bf16: {
      const std::uint32_t bits = static_cast<std::uint32_t>(p[0]) << 16 | static_cast<std::uint32_t>(p[1]) << 24;
      return std::bit_cast<float>(bits);
    }
    case ElementType::Fp16: {
      const std::uint32_t h = static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8;
      const int exponent = static_cast<int>((h >> 10) & 0x1F);
      const float mantissa = static_cast<float>(h & 0x3FF);
      const float sign = (h & 0x8000u) ? -1.0f : 1.0f;
      if (exponent == 0) return sign * std::ldexp(mantissa, -24);
      if (exponent == 31) return (h & 0x3FF) ? std::nanf("") : sign * INFINITY;
      return sign * std::ldexp(1.0f + mantissa / 1024.0f, exponent - 15);
    }
    case ElementType::Fp8E4M3: {
      const std::uint32_t b = p[0];
      const int exponent = static_cast<int>((b >> 3) & 0xF);
      const float mantissa = static_cast<float>(b & 0x7);
      const float sign = (b & 0x80u) ? -1.0f : 1.0f;
      if (exponent == 15 && (b & 0x7) == 7) return std::nanf("");
      if (exponent == 0) return sign * std::ldexp(mantissa / 8.0f, -6);
      return sign * std::ldexp(1.0f + mantissa / 8.0f, exponent - 7);
    }
    case ElementType::Fp32: {
      std::uint32_t bits = 0;
      std::memcpy(&bits, p, 4);
      return std::bit_cast<float>(bits);
    }
  }
  return 0;
}

void fill_random(void* dst, std::size_t bytes, ElementType t, std::uint64_t seed, cudaStream_t stream) {
  if (!dst || bytes == 0) return;
  const std::size_t es = element_size(t);
  std::size_t chunk = std::min<std::size_t>(bytes, std::size_t{4} << 20);
  chunk = std::max(es, chunk / es * es);
  chunk = std::min(chunk, bytes);
  std::vector<unsigned char> host(chunk);
  std::uint64_t state = seed * 0x2545F4914F6CDD1DULL + 0x632BE59BD9B4E019ULL;
  for (std::size_t i = 0; i + es <= chunk; i += es) {
    const std::uint32_t bits = random_element_bits(t, state);
    std::memcpy(host.data() + i, &bits, es);  // little-endian: the low bytes are the element
  }
  auto* d = static_cast<unsigned char*>(dst);
  TRAINSIM_CUDA_CHECK(cudaMemcpyAsync(d, host.data(), chunk, cudaMemcpyHostToDevice, stream));
  std::size_t done = chunk;
  while (done < bytes) {
    const std::size_t n = std::min(done, bytes - done);
    TRAINSIM_CUDA_CHECK(cudaMemcpyAsync(d + done, d, n, cudaMemcpyDeviceToDevice, stream));
    done += n;
  }
  TRAINSIM_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void fill_poison(void* dst, std::size_t bytes, cudaStream_t stream) {
  if (!dst || bytes == 0) return;
  TRAINSIM_CUDA_CHECK(cudaMemsetAsync(dst, 0xFF, bytes, stream));
}

// ---- timing --------------------------------------------------------------------------------------------

TimingStats timing_stats(std::vector<double> s) {
  TimingStats t;
  t.samples = static_cast<int>(s.size());
  if (s.empty()) return t;
  std::sort(s.begin(), s.end());
  const std::size_t n = s.size();
  t.median_s = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  t.min_s = s.front();
  t.max_s = s.back();
  double sum = 0;
  for (double v : s) sum += v;
  t.mean_s = sum / static_cast<double>(n);
  if (n > 1) {
    double sq = 0;
    for (double v : s) sq += (v - t.mean_s) * (v - t.mean_s);
    t.stddev_s = std::sqrt(sq / static_cast<double>(n - 1));
  }
  return t;
}

TimingPolicy quick_timing() {
  TimingPolicy p;
  p.samples = 5;
  p.warmup_s = 0.005;
  p.min_sample_s = 2e-4;
  return p;
}

TimingPolicy full_timing() { return TimingPolicy{}; }

EventTimer::EventTimer(std::vector<int> devices, std::vector<cudaStream_t> streams) : devices_(std::move(devices)), streams_(std::move(streams)) {
  if (devices_.empty() || devices_.size() != streams_.size()) throw GpuError("EventTimer: one device per stream expected");
  try {
    for (int d : devices_) {
      DeviceGuard g(d);
      cudaEvent_t a = nullptr, b = nullptr;
      TRAINSIM_CUDA_CHECK(cudaEventCreate(&a));
      start_.push_back(a);
      TRAINSIM_CUDA_CHECK(cudaEventCreate(&b));
      stop_.push_back(b);
    }
  } catch (...) {
    for (cudaEvent_t e : start_) destroy_event(e);
    for (cudaEvent_t e : stop_) destroy_event(e);
    throw;
  }
}

EventTimer::~EventTimer() {
  if (exec_) static_cast<void>(cudaGraphExecDestroy(exec_));
  for (cudaEvent_t e : start_) destroy_event(e);
  for (cudaEvent_t e : stop_) destroy_event(e);
}

void EventTimer::synchronize() {
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    DeviceGuard g(devices_[i]);
    TRAINSIM_CUDA_CHECK(cudaStreamSynchronize(streams_[i]));
  }
}

double EventTimer::time_launches(const std::function<void()>& launch, int launches) { return timed(&launch, launches); }

double EventTimer::timed(const std::function<void()>* launch, int launches) {
  launches = std::max(1, launches);
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    DeviceGuard g(devices_[i]);
    TRAINSIM_CUDA_CHECK(cudaEventRecord(start_[i], streams_[i]));
  }
  if (!launch) {  // the captured graph of `launches` launches
    DeviceGuard g(devices_[0]);
    TRAINSIM_CUDA_CHECK(cudaGraphLaunch(exec_, streams_[0]));
  } else {
    for (int r = 0; r < launches; ++r) (*launch)();
  }
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    DeviceGuard g(devices_[i]);
    TRAINSIM_CUDA_CHECK(cudaEventRecord(stop_[i], streams_[i]));
  }
  double worst = 0;
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    DeviceGuard g(devices_[i]);
    TRAINSIM_CUDA_CHECK(cudaEventSynchronize(stop_[i]));
    float ms = 0;
    TRAINSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, start_[i], stop_[i]));
    worst = std::max(worst, static_cast<double>(ms) * 1e-3);
  }
  return worst / launches;
}

void EventTimer::prepare(const std::function<void()>& launch, const TimingPolicy& policy, const std::function<double(double)>& agree) {
  if (exec_) {
    static_cast<void>(cudaGraphExecDestroy(exec_));
    exec_ = nullptr;
  }
  launch_ = launch;
  inner_ = 1;
  // Warm-up: module loading, cuBLASLt's first-call work, NCCL connection set-up, clocks.
  const int first = std::max(1, policy.warmup_launches);
  for (int i = 0; i < first; ++i) launch_();
  synchronize();
  double t1 = time_launches(launch_, 1);
  if (agree) t1 = agree(t1);
  t1 = std::max(t1, 1e-7);
  const double more = std::ceil(policy.warmup_s / t1) - first - 1;
  const int extra = static_cast<int>(std::clamp(more, 0.0, 10.0 * policy.max_inner));
  for (int i = 0; i < extra; ++i) launch_();
  synchronize();
  // Launches per sample, from a burst long enough to measure.
  const int burst = static_cast<int>(std::clamp(std::ceil(policy.min_sample_s / t1), 1.0, static_cast<double>(policy.max_inner)));
  double per = time_launches(launch_, burst);
  if (agree) per = agree(per);
  per = std::max(per, 1e-7);
  inner_ = static_cast<int>(std::clamp(std::ceil(policy.min_sample_s / per), 1.0, static_cast<double>(policy.max_inner)));

  if (!policy.use_graph || streams_.size() != 1 || agree) return;
  // Capture the sample's launches into a graph: replays run back to back without host launch gaps. Any
  // failure (an op that cannot be captured) falls back to plain launches.
  DeviceGuard g(devices_[0]);
  cudaStream_t s = streams_[0];
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed) != cudaSuccess) {
    static_cast<void>(cudaGetLastError());
    return;
  }
  bool ok = true;
  try {
    for (int i = 0; i < inner_; ++i) launch_();
  } catch (...) {
    ok = false;
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t end = cudaStreamEndCapture(s, &graph);
  if (!ok || end != cudaSuccess || !graph) {
    if (graph) static_cast<void>(cudaGraphDestroy(graph));
    static_cast<void>(cudaGetLastError());
    return;
  }
  cudaGraphExec_t exec = nullptr;
  const cudaError_t inst = cudaGraphInstantiate(&exec, graph, 0ULL);
  static_cast<void>(cudaGraphDestroy(graph));
  if (inst != cudaSuccess || !exec) {
    static_cast<void>(cudaGetLastError());
    return;
  }
  if (cudaGraphLaunch(exec, s) != cudaSuccess || cudaStreamSynchronize(s) != cudaSuccess) {
    static_cast<void>(cudaGraphExecDestroy(exec));
    static_cast<void>(cudaGetLastError());
    return;
  }
  exec_ = exec;
}

double EventTimer::sample() {
  if (!launch_) throw GpuError("EventTimer::sample before prepare");
  return timed(exec_ ? nullptr : &launch_, inner_);
}

TimingStats EventTimer::measure(const std::function<void()>& launch, const TimingPolicy& policy) {
  prepare(launch, policy);
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(std::max(1, policy.samples)));
  for (int i = 0; i < std::max(1, policy.samples); ++i) samples.push_back(sample());
  TimingStats s = timing_stats(samples);
  s.inner = inner_;
  s.graph = exec_ != nullptr;
  return s;
}

}  // namespace trainsim::gpu
