#include "calibrate/gpu/dynamic_libs.hpp"

#include <dlfcn.h>

#include <string>
#include <vector>

#include "calibrate/gpu/cuda_util.hpp"

#ifndef TRAINSIM_CUBLASLT_DIR
#define TRAINSIM_CUBLASLT_DIR ""
#endif
#ifndef TRAINSIM_NCCL_DIR
#define TRAINSIM_NCCL_DIR ""
#endif

namespace trainsim::gpu {

namespace {

#define TRAINSIM_STR2(x) #x
#define TRAINSIM_STR(x) TRAINSIM_STR2(x)

// The first of `names` dlopen accepts (kept open for the process's life), or a GpuError listing every attempt.
void* open_library(const std::vector<std::string>& names, std::string* path) {
  std::string tried;
  for (const std::string& n : names) {
    if (n.empty()) continue;
    if (void* h = ::dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      *path = n;
      return h;
    }
    const char* err = ::dlerror();
    tried += "\n  " + n + ": " + (err ? err : "not found");
  }
  throw GpuError("cannot load " + names.front() + " (needed by the GPU benchmarks); tried:" + tried +
                 "\n  (install it, or add its folder to LD_LIBRARY_PATH)");
}

template <class F>
void resolve(void* lib, const std::string& path, const char* symbol, F* out) {
  ::dlerror();
  void* p = ::dlsym(lib, symbol);
  if (!p) {
    const char* err = ::dlerror();
    throw GpuError(std::string("cannot find ") + symbol + " in " + path + ": " + (err ? err : "no such symbol") +
                   " (a version older than the headers trainsim was built with?)");
  }
  *out = reinterpret_cast<F>(p);
}

std::string in_dir(const char* dir, const std::string& name) { return *dir ? std::string(dir) + "/" + name : std::string(); }

CublasLtApi load_cublaslt() {
  CublasLtApi a{};
  const std::string soname = "libcublasLt.so." TRAINSIM_STR(CUBLAS_VER_MAJOR);
  void* lib = open_library({soname, "libcublasLt.so", in_dir(TRAINSIM_CUBLASLT_DIR, soname)}, &a.path);
  resolve(lib, a.path, "cublasLtCreate", &a.create);
  resolve(lib, a.path, "cublasLtDestroy", &a.destroy);
  resolve(lib, a.path, "cublasLtGetVersion", &a.get_version);
  resolve(lib, a.path, "cublasLtGetStatusName", &a.get_status_name);
  resolve(lib, a.path, "cublasLtGetStatusString", &a.get_status_string);
  resolve(lib, a.path, "cublasLtMatmul", &a.matmul);
  resolve(lib, a.path, "cublasLtMatmulAlgoGetHeuristic", &a.matmul_algo_get_heuristic);
  resolve(lib, a.path, "cublasLtMatmulDescCreate", &a.matmul_desc_create);
  resolve(lib, a.path, "cublasLtMatmulDescDestroy", &a.matmul_desc_destroy);
  resolve(lib, a.path, "cublasLtMatmulDescSetAttribute", &a.matmul_desc_set_attribute);
  resolve(lib, a.path, "cublasLtMatmulPreferenceCreate", &a.matmul_preference_create);
  resolve(lib, a.path, "cublasLtMatmulPreferenceDestroy", &a.matmul_preference_destroy);
  resolve(lib, a.path, "cublasLtMatmulPreferenceSetAttribute", &a.matmul_preference_set_attribute);
  resolve(lib, a.path, "cublasLtMatrixLayoutCreate", &a.matrix_layout_create);
  resolve(lib, a.path, "cublasLtMatrixLayoutDestroy", &a.matrix_layout_destroy);
  resolve(lib, a.path, "cublasLtMatrixLayoutSetAttribute", &a.matrix_layout_set_attribute);
  return a;
}

NcclApi load_nccl() {
  NcclApi a{};
  const std::string soname = "libnccl.so." TRAINSIM_STR(NCCL_MAJOR);
  void* lib = open_library({soname, "libnccl.so", in_dir(TRAINSIM_NCCL_DIR, soname)}, &a.path);
  resolve(lib, a.path, "ncclGetVersion", &a.get_version);
  resolve(lib, a.path, "ncclGetErrorString", &a.get_error_string);
  resolve(lib, a.path, "ncclGetUniqueId", &a.get_unique_id);
  resolve(lib, a.path, "ncclCommInitAll", &a.comm_init_all);
  resolve(lib, a.path, "ncclCommInitRank", &a.comm_init_rank);
  resolve(lib, a.path, "ncclCommDestroy", &a.comm_destroy);
  resolve(lib, a.path, "ncclCommAbort", &a.comm_abort);
  resolve(lib, a.path, "ncclCommGetAsyncError", &a.comm_get_async_error);
  resolve(lib, a.path, "ncclGroupStart", &a.group_start);
  resolve(lib, a.path, "ncclGroupEnd", &a.group_end);
  resolve(lib, a.path, "ncclAllReduce", &a.all_reduce);
  resolve(lib, a.path, "ncclAllGather", &a.all_gather);
  resolve(lib, a.path, "ncclReduceScatter", &a.reduce_scatter);
  resolve(lib, a.path, "ncclSend", &a.send);
  resolve(lib, a.path, "ncclRecv", &a.recv);
  return a;
}

}  // namespace

const CublasLtApi& cublaslt() {
  static const CublasLtApi api = load_cublaslt();  // a failed load throws and is retried on the next call
  return api;
}

const NcclApi& nccl() {
  static const NcclApi api = load_nccl();
  return api;
}

}  // namespace trainsim::gpu
