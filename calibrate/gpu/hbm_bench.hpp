#pragma once
// Device-to-device copies (cudaMemcpyAsync): the HBM bandwidth benchmark (copies of >= 1 GiB, counted as bytes
// read + bytes written, the convention of the calibration profile and of PyTorch's copy measurements) and the
// proxy run's memory-bound ops (an op that moves B bytes runs as a copy of B / 2). The source is random data,
// the destination poisoned; when source and destination fit in the L2 cache, launches rotate through enough
// pairs to cover twice the L2.
#include <cstddef>
#include <cstdint>

#include "calibrate/gpu/cuda_util.hpp"

namespace trainsim::gpu {

class DeviceCopy {
 public:
  // `bytes` copied per launch (rounded up to 16), on the current device. sets = 0: rotation as described above.
  DeviceCopy(std::size_t bytes, cudaStream_t stream, std::size_t l2_bytes, int sets = 0, std::uint64_t seed = 7);
  void launch();                                   // one copy on the stream, next pair
  std::size_t bytes() const { return bytes_; }
  double bytes_moved() const { return 2.0 * static_cast<double>(bytes_); }  // read + written
  int sets() const { return sets_; }
  double device_bytes() const { return static_cast<double>(buffer_.size()); }
  // True when the destination of pair 0 equals its source (after at least one launch on pair 0); compares the first
  // and last 64 MiB.
  bool verify() const;

 private:
  std::size_t bytes_ = 0, pair_bytes_ = 0, dst_offset_ = 0;
  cudaStream_t stream_;
  int sets_ = 1, next_ = 0;
  DeviceBuffer buffer_;
};

}  // namespace trainsim::gpu
