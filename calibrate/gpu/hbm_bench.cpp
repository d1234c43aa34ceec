#include "calibrate/gpu/hbm_bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace trainsim::gpu {

namespace {
constexpr std::size_t kAlign = 256;
std::size_t align_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }
}  // namespace

DeviceCopy::DeviceCopy(std::size_t bytes, cudaStream_t stream, std::size_t l2_bytes, int sets, std::uint64_t seed)
    : bytes_(align_up(std::max<std::size_t>(bytes, 16), 16)), stream_(stream) {
  dst_offset_ = align_up(bytes_, kAlign);
  pair_bytes_ = 2 * dst_offset_;
  if (sets <= 0) {
    sets = 1;
    const double pair = 2.0 * static_cast<double>(bytes_);
    if (l2_bytes > 0 && pair <= static_cast<double>(l2_bytes))
      sets = static_cast<int>(std::clamp(std::ceil(2.0 * static_cast<double>(l2_bytes) / pair), 2.0, 64.0));
  }
  sets_ = sets;
  require_free_memory(static_cast<double>(pair_bytes_) * sets_, "a device copy of " + std::to_string(bytes_) + " bytes");
  buffer_ = DeviceBuffer(pair_bytes_ * static_cast<std::size_t>(sets_));
  for (int s = 0; s < sets_; ++s) {
    unsigned char* base = buffer_.bytes() + static_cast<std::size_t>(s) * pair_bytes_;
    fill_random(base, bytes_, ElementType::Bf16, seed + static_cast<std::uint64_t>(s), stream_);
    fill_poison(base + dst_offset_, bytes_, stream_);
  }
  TRAINSIM_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void DeviceCopy::launch() {
  unsigned char* base = buffer_.bytes() + static_cast<std::size_t>(next_) * pair_bytes_;
  next_ = (next_ + 1) % sets_;
  TRAINSIM_CUDA_CHECK(cudaMemcpyAsync(base + dst_offset_, base, bytes_, cudaMemcpyDeviceToDevice, stream_));
}

bool DeviceCopy::verify() const {
  TRAINSIM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  // The first and the last 64 MiB (all of a smaller copy): enough to catch a wrong size or offset without
  // moving gigabytes to the host.
  const std::size_t window = std::min<std::size_t>(bytes_, std::size_t{64} << 20);
  std::vector<unsigned char> src(window), dst(window);
  for (std::size_t offset : {std::size_t{0}, bytes_ - window}) {
    TRAINSIM_CUDA_CHECK(cudaMemcpy(src.data(), buffer_.bytes() + offset, window, cudaMemcpyDeviceToHost));
    TRAINSIM_CUDA_CHECK(cudaMemcpy(dst.data(), buffer_.bytes() + dst_offset_ + offset, window, cudaMemcpyDeviceToHost));
    if (std::memcmp(src.data(), dst.data(), window) != 0) return false;
  }
  return true;
}

}  // namespace trainsim::gpu
