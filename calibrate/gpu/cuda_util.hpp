#pragma once
// Host-side CUDA helpers for the GPU benchmarks and the proxy run (CUDA runtime API only, no device code):
//   - checked calls: every CUDA runtime failure becomes a GpuError naming the call, CUDA's message and the
//     source line (cuBLASLt and NCCL have their own checks beside them, same form);
//   - device discovery that never throws (probe_devices) and the device's identity for a profile;
//   - RAII for device memory, streams and events, tied to the device current when created;
//   - random, non-zero input data in each GEMM dtype (never zeros: they run faster than real data and hide
//     unwritten outputs), and a NaN poison for outputs;
//   - EventTimer: CUDA-event timing with warm-up, several launches per sample for short ops (replayed from a
//     CUDA graph where the ops can be captured, so launch gaps stay out), and statistics over the samples.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/calibration/calibration.hpp"

namespace trainsim::gpu {

class GpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line);
inline void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) throw_cuda_error(status, call, file, line);
}
#define TRAINSIM_CUDA_CHECK(call) ::trainsim::gpu::check_cuda((call), #call, __FILE__, __LINE__)
// "calibrate/gpu/gemm_bench.cpp:120" from __FILE__ and __LINE__, for the messages.
std::string source_location(const char* file, int line);

// How many CUDA devices this process sees; `error` says why there are none ("CUDA driver version is
// insufficient for CUDA runtime version (cudaErrorInsufficientDriver)", "cudaGetDeviceCount reports 0 devices").
struct DeviceProbe {
  int count = 0;
  std::string error;
};
DeviceProbe probe_devices() noexcept;

struct DeviceInfo {
  int index = 0;
  std::string name;                    // "NVIDIA H100 80GB HBM3"
  int sms = 0, cc_major = 0, cc_minor = 0;
  double sm_clock_mhz = 0, memory_clock_mhz = 0;  // peak clocks the driver reports
  double memory_bytes = 0;
  std::size_t l2_bytes = 0;
  std::string driver_version;          // the kernel driver ("550.54.15") from /proc/driver/nvidia/version, else "CUDA driver API 12.4"
  std::string runtime_version;         // CUDA runtime, "13.0"
};
DeviceInfo device_info(int device);
// For a profile's "gpu" block; `preset` empty: guessed from the name (sweep.hpp gpu_preset_for_device).
GpuIdentity gpu_identity(const DeviceInfo& d, const std::string& preset = "");

// Makes `device` current for its scope and restores the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// cudaMalloc'd memory on the device current at construction; throws GpuError (with the free memory) when it
// does not fit.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }
  unsigned char* bytes() const { return static_cast<unsigned char*>(ptr_); }
  std::size_t size() const { return size_; }

 private:
  void release() noexcept;
  void* ptr_ = nullptr;
  std::size_t size_ = 0;
  int device_ = 0;
};

class Stream {
 public:
  Stream();  // non-blocking stream on the current device
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }
  int device() const { return device_; }
  void synchronize() const;

 private:
  cudaStream_t stream_ = nullptr;
  int device_ = 0;
};

class Event {
 public:
  Event();  // timing event on the current device
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
  int device_ = 0;
};

// Free and total memory of the current device, bytes.
void memory_info(std::size_t* free_bytes, std::size_t* total_bytes);
// Throws GpuError when `bytes` more would leave less than `reserve` free on the current device.
void require_free_memory(double bytes, const std::string& what, double reserve = 512.0 * (1 << 20));

// ---- data ----------------------------------------------------------------------------------------------

enum class ElementType { Bf16, Fp16, Fp8E4M3, Fp32 };
std::size_t element_size(ElementType t);
const char* to_string(ElementType t);
// Operand and output element types of a GEMM dtype (fp8: e4m3 operands, bf16 output; tf32: fp32 storage).
ElementType operand_type(GemmDtype d);
ElementType output_type(GemmDtype d);

// One random element as bits (the low element_size bytes): magnitude in [2^-5, 2), random sign, never zero,
// NaN or infinite. Deterministic for a given state (splitmix64).
std::uint32_t random_element_bits(ElementType t, std::uint64_t& state);
// Decodes one element (host memory, little-endian) to float.
float element_to_float(ElementType t, const unsigned char* p);

// Fills `bytes` at device pointer `dst` with random elements: a host-made chunk copied to the device and then
// doubled device to device. Synchronizes `stream` before returning.
void fill_random(void* dst, std::size_t bytes, ElementType t, std::uint64_t seed, cudaStream_t stream);
// Poisons an output with 0xFF bytes: NaN in every floating-point format used here.
void fill_poison(void* dst, std::size_t bytes, cudaStream_t stream);

// ---- timing --------------------------------------------------------------------------------------------

struct TimingStats {
  double median_s = 0, mean_s = 0, min_s = 0, max_s = 0, stddev_s = 0;
  int samples = 0;
  int inner = 1;        // launches per sample (each sample's time is divided by it)
  bool graph = false;   // the launches of a sample were replayed from a CUDA graph
};
TimingStats timing_stats(std::vector<double> samples_s);  // pure

struct TimingPolicy {
  int samples = 20;           // timed samples (Google Benchmark iterations where it drives)
  int warmup_launches = 2;    // at least this many untimed launches first ...
  double warmup_s = 0.02;     // ... and at least this much device time
  double min_sample_s = 5e-4; // launches per sample so that one sample lasts at least this long
  int max_inner = 1000;
  bool use_graph = true;      // capture a sample's launches into a CUDA graph when they can be captured
};
TimingPolicy quick_timing();   // 5 samples, 5 ms warm-up
TimingPolicy full_timing();    // 20 samples, 20 ms warm-up

// Times `launch` (which enqueues one op on the given streams, on their devices): events recorded on every
// stream around each sample; a sample's time is the slowest stream's, divided by the launches in it.
class EventTimer {
 public:
  EventTimer(std::vector<int> devices, std::vector<cudaStream_t> streams);
  EventTimer(int device, cudaStream_t stream) : EventTimer(std::vector<int>{device}, std::vector<cudaStream_t>{stream}) {}
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  // Untimed warm-up (policy.warmup_launches and warmup_s), then one timed launch to choose the launches per
  // sample; with use_graph and a single stream, captures them into a graph (falling back to plain launches
  // when capture fails). `agree` (multi-process) maps this rank's single-launch time to the value every rank
  // uses, so that all ranks launch the same number of collectives.
  void prepare(const std::function<void()>& launch, const TimingPolicy& policy,
               const std::function<double(double)>& agree = nullptr);
  // One sample: seconds per launch.
  double sample();
  // One timed run of `launches` calls to `launch` (no graph): seconds per launch.
  double time_launches(const std::function<void()>& launch, int launches);
  int inner() const { return inner_; }
  bool graph() const { return exec_ != nullptr; }
  // prepare() and `samples` samples.
  TimingStats measure(const std::function<void()>& launch, const TimingPolicy& policy);

 private:
  void synchronize();
  double timed(const std::function<void()>* launch, int launches);  // launch = nullptr: replay the graph
  std::vector<int> devices_;
  std::vector<cudaStream_t> streams_;
  std::vector<cudaEvent_t> start_, stop_;
  std::function<void()> launch_;
  int inner_ = 1;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace trainsim::gpu
