#include "calibrate/gpu/gemm_bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "calibrate/gpu/dynamic_libs.hpp"
#include "models/core/units.hpp"

namespace trainsim::gpu {

namespace {

constexpr std::size_t kAlign = 256;  // cudaMalloc's alignment; every matrix starts on it
constexpr int kMaxSets = 64;
constexpr int kCandidates = 8;       // heuristic results to try, best first

std::size_t align_up(std::size_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

cudaDataType_t cuda_type(ElementType t) {
  switch (t) {
    case ElementType::Bf16: return CUDA_R_16BF;
    case ElementType::Fp16: return CUDA_R_16F;
    case ElementType::Fp8E4M3: return CUDA_R_8F_E4M3;
    case ElementType::Fp32: return CUDA_R_32F;
  }
  return CUDA_R_16BF;
}

cublasComputeType_t compute_type(GemmDtype d) { return d == GemmDtype::Tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F; }

std::string mib_text(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / kBytesPerMiB);
  return buf;
}

void set_batch(cublasLtMatrixLayout_t layout, std::int64_t batch, std::int64_t stride) {
  const auto count = static_cast<std::int32_t>(batch);
  TRAINSIM_CUBLAS_CHECK(cublaslt().matrix_layout_set_attribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count));
  TRAINSIM_CUBLAS_CHECK(cublaslt().matrix_layout_set_attribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
}

}  // namespace

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  static_cast<void>(cudaGetLastError());
  throw GpuError(std::string("cuBLASLt error: ") + cublaslt().get_status_string(status) + " (" + cublaslt().get_status_name(status) + ") in " + call +
                 " at " + source_location(file, line));
}

bool gemm_dtype_supported(GemmDtype d, int cc_major, int cc_minor) {
  const int cc = cc_major * 10 + cc_minor;
  switch (d) {
    case GemmDtype::Fp16: return cc >= 70;
    case GemmDtype::Bf16:
    case GemmDtype::Tf32: return cc >= 80;
    case GemmDtype::Fp8: return cc >= 89;
  }
  return false;
}

std::vector<GemmDtype> supported_gemm_dtypes(const DeviceInfo& d) {
  std::vector<GemmDtype> out;
  for (GemmDtype t : {GemmDtype::Bf16, GemmDtype::Fp16, GemmDtype::Fp8, GemmDtype::Tf32})
    if (gemm_dtype_supported(t, d.cc_major, d.cc_minor)) out.push_back(t);
  return out;
}

LtContext::LtContext(std::size_t workspace_bytes) {
  TRAINSIM_CUDA_CHECK(cudaGetDevice(&device_));
  TRAINSIM_CUBLAS_CHECK(cublaslt().create(&handle_));
  try {
    workspace_ = DeviceBuffer(workspace_bytes);
  } catch (...) {
    static_cast<void>(cublaslt().destroy(handle_));
    handle_ = nullptr;
    throw;
  }
}

LtContext::~LtContext() {
  if (handle_) static_cast<void>(cublaslt().destroy(handle_));
}

double gemm_set_bytes(const GemmProblem& p) {
  const double ea = static_cast<double>(element_size(operand_type(p.dtype))), ec = static_cast<double>(element_size(output_type(p.dtype)));
  const double m = static_cast<double>(p.m), n = static_cast<double>(p.n), k = static_cast<double>(p.k), b = static_cast<double>(p.batch);
  return b * (ea * (m * k + k * n) + ec * m * n);
}

std::string describe(const GemmProblem& p) {
  std::string s = std::string(to_string(p.dtype)) + " " + std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k);
  if (p.batch > 1) s += " x " + std::to_string(p.batch) + " batched";
  return s;
}

LtGemm::LtGemm(const GemmProblem& p, LtContext& ctx, cudaStream_t stream, std::size_t l2_bytes, int sets, std::uint64_t seed)
    : p_(p), ctx_(ctx), stream_(stream) {
  if (p.m < 1 || p.n < 1 || p.k < 1 || p.batch < 1 || p.batch > 1000000)
    throw GpuError("GEMM " + describe(p) + ": every dimension must be at least 1");
  int current = -1;
  TRAINSIM_CUDA_CHECK(cudaGetDevice(&current));
  if (current != ctx.device()) throw GpuError("GEMM " + describe(p) + ": the cuBLASLt context belongs to another device");
  const ElementType in_t = operand_type(p.dtype), out_t = output_type(p.dtype);
  const auto m = static_cast<std::size_t>(p.m), n = static_cast<std::size_t>(p.n), k = static_cast<std::size_t>(p.k),
             batch = static_cast<std::size_t>(p.batch);
  a_bytes_ = m * k * batch * element_size(in_t);
  b_bytes_ = k * n * batch * element_size(in_t);
  d_bytes_ = m * n * batch * element_size(out_t);
  a_offset_ = 0;
  b_offset_ = align_up(a_bytes_);
  d_offset_ = b_offset_ + align_up(b_bytes_);
  set_bytes_ = d_offset_ + align_up(d_bytes_);
  if (sets <= 0) {
    const double footprint = static_cast<double>(a_bytes_ + b_bytes_ + d_bytes_);
    sets = 1;
    if (l2_bytes > 0 && footprint <= static_cast<double>(l2_bytes))
      sets = static_cast<int>(std::clamp(std::ceil(2.0 * static_cast<double>(l2_bytes) / footprint), 2.0, static_cast<double>(kMaxSets)));
  }
  sets_ = sets;
  require_free_memory(static_cast<double>(set_bytes_) * sets_, "GEMM " + describe(p));
  buffer_ = DeviceBuffer(set_bytes_ * static_cast<std::size_t>(sets_));
  for (int s = 0; s < sets_; ++s) {
    unsigned char* base = buffer_.bytes() + static_cast<std::size_t>(s) * set_bytes_;
    fill_random(base + a_offset_, a_bytes_, in_t, seed * 1000003u + static_cast<std::uint64_t>(2 * s), stream_);
    fill_random(base + b_offset_, b_bytes_, in_t, seed * 1000003u + static_cast<std::uint64_t>(2 * s + 1), stream_);
    fill_poison(base + d_offset_, d_bytes_, stream_);
  }
  TRAINSIM_CUDA_CHECK(cudaStreamSynchronize(stream_));

  cublasLtMatmulPreference_t pref = nullptr;
  try {
    TRAINSIM_CUBLAS_CHECK(cublaslt().matmul_desc_create(&desc_, compute_type(p.dtype), CUDA_R_32F));
    const std::int32_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
    TRAINSIM_CUBLAS_CHECK(cublaslt().matmul_desc_set_attribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof trans_a));
    TRAINSIM_CUBLAS_CHECK(cublaslt().matmul_desc_set_attribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof trans_b));
    TRAINSIM_CUBLAS_CHECK(cublaslt().matrix_layout_create(&a_layout_, cuda_type(in_t), k, m, static_cast<std::int64_t>(k)));
    TRAINSIM_CUBLAS_CHECK(cublaslt().matrix_layout_create(&b_layout_, cuda_type(in_t), k, n, static_cast<std::int64_t>(k)));
    TRAINSIM_CUBLAS_CHECK(cublaslt().matrix_layout_create(&d_layout_, cuda_type(out_t), m, n, static_cast<std::int64_t>(m)));
    if (p.batch > 1) {
      set_batch(a_layout_, p.batch, p.k * p.m);
      set_batch(b_layout_, p.batch, p.k * p.n);
      set_batch(d_layout_, p.batch, p.m * p.n);
    }
    TRAINSIM_CUBLAS_CHECK(cublaslt().matmul_preference_create(&pref));
    const std::uint64_t workspace = ctx.workspace_size();
    TRAINSIM_CUBLAS_CHECK(cublaslt().matmul_preference_set_attribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace));
    cublasLtMatmulHeuristicResult_t results[kCandidates] = {};
    int returned = 0;
    const cublasStatus_t h = cublaslt().matmul_algo_get_heuristic(ctx.handle(), desc_, a_layout_, b_layout_, d_layout_, d_layout_, pref, kCandidates,
                                                            results, &returned);
    static_cast<void>(cublaslt().matmul_preference_destroy(pref));
    pref = nullptr;
    if (h != CUBLAS_STATUS_SUCCESS || returned <= 0)
      throw GpuError("cuBLASLt offers no algorithm for GEMM " + describe(p) + " on this GPU (" +
                     (h != CUBLAS_STATUS_SUCCESS ? std::string(cublaslt().get_status_name(h)) : std::string("no heuristic result")) +
                     (p.dtype == GemmDtype::Fp8 ? "; FP8 needs every dimension a multiple of 16" : "") + ")");
    // The best candidate that runs: one launch on set 0, checked to completion.
    std::string last = "no candidate ran";
    for (int i = 0; i < returned; ++i) {
      if (results[i].state != CUBLAS_STATUS_SUCCESS || results[i].workspaceSize > ctx.workspace_size()) continue;
      algo_ = results[i].algo;
      const cublasStatus_t st = matmul(0);
      const cudaError_t sync = st == CUBLAS_STATUS_SUCCESS ? cudaStreamSynchronize(stream_) : cudaSuccess;
      if (st == CUBLAS_STATUS_SUCCESS && sync == cudaSuccess) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "cuBLASLt heuristic %d of %d, workspace %s, waves %.2f", i + 1, returned,
                      mib_text(static_cast<double>(results[i].workspaceSize)).c_str(), static_cast<double>(results[i].wavesCount));
        algorithm_ = buf;
        break;
      }
      last = st != CUBLAS_STATUS_SUCCESS ? std::string(cublaslt().get_status_name(st)) : std::string(cudaGetErrorName(sync));
      static_cast<void>(cudaGetLastError());
      if (sync != cudaSuccess) break;  // a device error is not a choice of algorithm
    }
    if (algorithm_.empty()) throw GpuError("cuBLASLt: no algorithm ran GEMM " + describe(p) + " (" + last + ")");
  } catch (...) {
    if (pref) static_cast<void>(cublaslt().matmul_preference_destroy(pref));
    destroy();
    throw;
  }
}

void LtGemm::destroy() noexcept {
  if (a_layout_) static_cast<void>(cublaslt().matrix_layout_destroy(a_layout_));
  if (b_layout_) static_cast<void>(cublaslt().matrix_layout_destroy(b_layout_));
  if (d_layout_) static_cast<void>(cublaslt().matrix_layout_destroy(d_layout_));
  if (desc_) static_cast<void>(cublaslt().matmul_desc_destroy(desc_));
  a_layout_ = b_layout_ = d_layout_ = nullptr;
  desc_ = nullptr;
}

LtGemm::~LtGemm() { destroy(); }

cublasStatus_t LtGemm::matmul(int set) {
  unsigned char* base = buffer_.bytes() + static_cast<std::size_t>(set) * set_bytes_;
  void* d = base + d_offset_;
  return cublaslt().matmul(ctx_.handle(), desc_, &alpha_, base + a_offset_, a_layout_, base + b_offset_, b_layout_, &beta_, d, d_layout_, d,
                        d_layout_, &algo_, ctx_.workspace(), ctx_.workspace_size(), stream_);
}

void LtGemm::launch() {
  const int set = next_;
  next_ = (next_ + 1) % sets_;
  const cublasStatus_t st = matmul(set);
  if (st != CUBLAS_STATUS_SUCCESS) throw_cublas_error(st, "cublasLtMatmul", __FILE__, __LINE__);
}

double LtGemm::flops() const {
  return 2.0 * static_cast<double>(p_.m) * static_cast<double>(p_.n) * static_cast<double>(p_.k) * static_cast<double>(p_.batch);
}

void LtGemm::download(std::vector<unsigned char>* a, std::vector<unsigned char>* b, std::vector<unsigned char>* d) const {
  TRAINSIM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  const unsigned char* base = buffer_.bytes();
  if (a) {
    a->resize(a_bytes_);
    TRAINSIM_CUDA_CHECK(cudaMemcpy(a->data(), base + a_offset_, a_bytes_, cudaMemcpyDeviceToHost));
  }
  if (b) {
    b->resize(b_bytes_);
    TRAINSIM_CUDA_CHECK(cudaMemcpy(b->data(), base + b_offset_, b_bytes_, cudaMemcpyDeviceToHost));
  }
  if (d) {
    d->resize(d_bytes_);
    TRAINSIM_CUDA_CHECK(cudaMemcpy(d->data(), base + d_offset_, d_bytes_, cudaMemcpyDeviceToHost));
  }
}

}  // namespace trainsim::gpu
