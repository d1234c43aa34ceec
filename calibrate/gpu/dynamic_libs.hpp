#pragma once
// cuBLASLt and NCCL, loaded on first use (dlopen) rather than linked: mapping and relocating libcublasLt (half a
// gigabyte) would cost every trainsim invocation about 0.1 s, and a trainsim binary that never runs a GPU command
// should start on machines without these libraries. The CUDA runtime is linked statically (it loads the driver
// itself). The function pointers have the headers' exact types (decltype), so a call through them is checked by the
// compiler like a direct call.
//
// Search order: the versioned soname (LD_LIBRARY_PATH, the system's library paths), the unversioned name, then the
// directory CMake found the library in. A library or symbol that cannot be loaded is a GpuError naming it.
#include <cublasLt.h>
#include <nccl.h>

#include <string>

namespace trainsim::gpu {

struct CublasLtApi {
  decltype(&::cublasLtCreate) create;
  decltype(&::cublasLtDestroy) destroy;
  decltype(&::cublasLtGetVersion) get_version;
  decltype(&::cublasLtGetStatusName) get_status_name;
  decltype(&::cublasLtGetStatusString) get_status_string;
  decltype(&::cublasLtMatmul) matmul;
  decltype(&::cublasLtMatmulAlgoGetHeuristic) matmul_algo_get_heuristic;
  decltype(&::cublasLtMatmulDescCreate) matmul_desc_create;
  decltype(&::cublasLtMatmulDescDestroy) matmul_desc_destroy;
  decltype(&::cublasLtMatmulDescSetAttribute) matmul_desc_set_attribute;
  decltype(&::cublasLtMatmulPreferenceCreate) matmul_preference_create;
  decltype(&::cublasLtMatmulPreferenceDestroy) matmul_preference_destroy;
  decltype(&::cublasLtMatmulPreferenceSetAttribute) matmul_preference_set_attribute;
  decltype(&::cublasLtMatrixLayoutCreate) matrix_layout_create;
  decltype(&::cublasLtMatrixLayoutDestroy) matrix_layout_destroy;
  decltype(&::cublasLtMatrixLayoutSetAttribute) matrix_layout_set_attribute;
  std::string path;  // what was loaded
};
const CublasLtApi& cublaslt();  // loads on the first call; throws GpuError

struct NcclApi {
  decltype(&::ncclGetVersion) get_version;
  decltype(&::ncclGetErrorString) get_error_string;
  decltype(&::ncclGetUniqueId) get_unique_id;
  decltype(&::ncclCommInitAll) comm_init_all;
  decltype(&::ncclCommInitRank) comm_init_rank;
  decltype(&::ncclCommDestroy) comm_destroy;
  decltype(&::ncclCommAbort) comm_abort;
  decltype(&::ncclCommGetAsyncError) comm_get_async_error;
  decltype(&::ncclGroupStart) group_start;
  decltype(&::ncclGroupEnd) group_end;
  decltype(&::ncclAllReduce) all_reduce;
  decltype(&::ncclAllGather) all_gather;
  decltype(&::ncclReduceScatter) reduce_scatter;
  decltype(&::ncclSend) send;
  decltype(&::ncclRecv) recv;
  std::string path;
};
const NcclApi& nccl();  // loads on the first call; throws GpuError

}  // namespace trainsim::gpu
