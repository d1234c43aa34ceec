#pragma once
// What `trainsim calibrate run` measures, decided without a GPU (pure C++, unit-tested everywhere):
//   - GEMMs: the shapes transformer layers produce for the chosen model presets and TP degrees (every GEMM of
//     models/compute/compute's layer_ops: fprop, dgrad and wgrad of QKV, output projection, MLP or experts, router,
//     plus the LM head), in bf16 and, where the GPU has it, fp8; and a regular grid in every dtype the GPU runs;
//   - HBM: device-to-device copies of >= 1 GiB;
//   - collectives: 1 KiB .. 4 GiB in powers of two (capped by memory), on groups of 2, 4, 8, ... local GPUs.
#include <string>
#include <vector>

#include "models/calibration/calibration.hpp"

namespace trainsim::gpu {

struct SweepOptions {
  bool quick = false;                  // under a minute: one model at tp 1, a small grid, few sizes
  std::vector<std::string> models;    // model presets; empty: every preset (quick: llama3-8b)
  std::vector<int> tp;                 // TP degrees; empty: 1, 2, 4, 8 (quick: 1)
  std::vector<GemmDtype> dtypes = {GemmDtype::Bf16, GemmDtype::Fp16, GemmDtype::Tf32};  // what the GPU runs (add fp8 on sm_89+)
  int seq_len = 4096;                  // tokens per micro-batch the model shapes are derived for (micro-batch 1)
  int gpus = 1;                        // local GPUs for the collectives (< 2: none)
  double max_collective_bytes = 4.0 * (1ull << 30);  // largest message (nccl-tests' size), capped by memory at run time
};

struct GemmCase {
  GemmDtype dtype = GemmDtype::Bf16;
  double m = 0, n = 0, k = 0;          // C[m x n] = A[m x k] B[k x n]
  std::string origin;                  // "grid", or where the shape comes from ("llama3-8b tp2 mlp.down.fprop", first seen)
};

// Model shapes first (in the order the presets and TP degrees give them), then the grid; each (dtype, m, n, k)
// once. fp8 keeps only shapes with every dimension a multiple of 16 (cuBLASLt's FP8 alignment). Throws
// InputError for an unknown model preset (naming the closest ones).
std::vector<GemmCase> gemm_sweep(const SweepOptions& o);
// The shapes of one model at one TP degree (layer_ops of a dense or MoE layer, and the LM head), deduplicated,
// integer dimensions; empty when tp does not divide the model's heads.
struct GemmShapeOrigin {
  double m = 0, n = 0, k = 0;
  std::string op;
};
std::vector<GemmShapeOrigin> model_gemm_shapes(const std::string& model, int tp, int seq_len);

std::vector<double> hbm_copy_sizes(const SweepOptions& o);          // bytes copied (moved: twice that)
std::vector<double> collective_sizes(const SweepOptions& o);        // bytes, nccl-tests' size column
std::vector<int> collective_group_sizes(const SweepOptions& o);     // 2, 4, 8, ... <= gpus, and gpus itself
std::vector<Collective> collective_ops();                           // all five, in profile order

// A GPU preset for a device name as the driver reports it ("NVIDIA H100 80GB HBM3" -> "h100-sxm-80gb");
// empty when none fits. memory_bytes tells the 40 and 80 GB A100s apart.
std::string gpu_preset_for_device(const std::string& device_name, double memory_bytes);

// Parses "llama3-8b,qwen2.5-7b" / "1,2,4" lists of the CLI; InputError naming `flag` on a bad item.
std::vector<std::string> split_list(const std::string& text);
std::vector<int> parse_int_list(const std::string& text, const std::string& flag);

}  // namespace trainsim::gpu
