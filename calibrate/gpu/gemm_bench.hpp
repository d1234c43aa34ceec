#pragma once
// cuBLASLt matrix products for the GEMM sweep and the proxy run: C[m x n] = A[m x k] · B[k x n] in bf16, fp16,
// fp8 (e4m3 operands, bf16 output; sm_89 and later) or tf32 (fp32 storage, CUBLAS_COMPUTE_32F_FAST_TF32), with
// fp32 accumulation, optionally as a strided batch (local experts, attention heads).
//
// Layout: column-major "TN" (A stored k x m and transposed, B stored k x n, C m x n), which cuBLASLt requires for
// FP8 on Hopper and which nn.Linear's x·W^T maps to. Algorithm: cuBLASLt's heuristic for a 32 MiB workspace (the
// size cuBLAS recommends for Hopper); its first candidate is checked by a run, and the next candidates are tried
// when it fails. Inputs are random non-zero values (cuda_util fill_random), the output poisoned with NaN. When one
// set of A, B and C fits in the L2 cache, enough sets to cover twice the L2 are allocated and successive launches
// rotate through them, so that repeated launches do not run from a warm cache.
#include <cublasLt.h>

#include <cstdint>
#include <string>
#include <vector>

#include "calibrate/gpu/cuda_util.hpp"

namespace trainsim::gpu {

[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line);
inline void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) throw_cublas_error(status, call, file, line);
}
#define TRAINSIM_CUBLAS_CHECK(call) ::trainsim::gpu::check_cublas((call), #call, __FILE__, __LINE__)

// bf16 and tf32 need sm_80 (Ampere), fp8 sm_89 (Ada) or later, fp16 sm_70.
bool gemm_dtype_supported(GemmDtype d, int cc_major, int cc_minor);
std::vector<GemmDtype> supported_gemm_dtypes(const DeviceInfo& d);

// One cuBLASLt handle and workspace, on the device current at construction; launches on one stream at a time.
class LtContext {
 public:
  explicit LtContext(std::size_t workspace_bytes = std::size_t{32} << 20);
  ~LtContext();
  LtContext(const LtContext&) = delete;
  LtContext& operator=(const LtContext&) = delete;
  cublasLtHandle_t handle() const { return handle_; }
  void* workspace() const { return workspace_.get(); }
  std::size_t workspace_size() const { return workspace_.size(); }
  int device() const { return device_; }

 private:
  cublasLtHandle_t handle_ = nullptr;
  DeviceBuffer workspace_;
  int device_ = 0;
};

struct GemmProblem {
  GemmDtype dtype = GemmDtype::Bf16;
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t batch = 1;
};
double gemm_set_bytes(const GemmProblem& p);     // A + B + C of one set, the whole batch
std::string describe(const GemmProblem& p);      // "bf16 4096x14336x4096" (" x 32 batched")

class LtGemm {
 public:
  // sets = 0: rotate through enough sets to cover 2 x l2_bytes when one set fits in L2 (at most 64), else 1.
  // Throws GpuError when the problem does not fit in free memory or cuBLASLt has no working algorithm for it.
  LtGemm(const GemmProblem& p, LtContext& ctx, cudaStream_t stream, std::size_t l2_bytes, int sets = 0, std::uint64_t seed = 1);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  void launch();  // enqueues one GEMM (the whole batch) on the stream, on the next buffer set
  int sets() const { return sets_; }
  double flops() const;                          // 2·m·n·k·batch
  double device_bytes() const { return static_cast<double>(buffer_.size()); }
  const std::string& algorithm() const { return algorithm_; }  // "cuBLASLt heuristic 1 of 8, workspace 4.0 MiB"
  const GemmProblem& problem() const { return p_; }
  // Host copies of set 0 (tests): A (k x m column-major, i.e. m rows of k), B (k x n column-major), D (m x n column-major).
  void download(std::vector<unsigned char>* a, std::vector<unsigned char>* b, std::vector<unsigned char>* d) const;

 private:
  void destroy() noexcept;
  cublasStatus_t matmul(int set);
  GemmProblem p_;
  LtContext& ctx_;
  cudaStream_t stream_;
  int sets_ = 1, next_ = 0;
  std::size_t a_offset_ = 0, b_offset_ = 0, d_offset_ = 0, set_bytes_ = 0;
  std::size_t a_bytes_ = 0, b_bytes_ = 0, d_bytes_ = 0;
  DeviceBuffer buffer_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr, d_layout_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  float alpha_ = 1.0f, beta_ = 0.0f;
  std::string algorithm_;
};

}  // namespace trainsim::gpu
