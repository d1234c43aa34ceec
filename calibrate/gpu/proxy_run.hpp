#pragma once
// `trainsim validate run PLAN`: the plan's per-GPU work for a few transformer layers, run on this machine's
// GPUs and compared op by op with what the model predicts for it.
//
// The work is models/compute/compute's layer_ops for the plan's model, training and layout (TP, SP, CP, EP, micro-batch,
// recompute, precision): every GEMM with its exact shape and dtype (fprop, dgrad, wgrad; local experts as a
// strided batch), every memory-bound op as a device-to-device copy moving the same bytes (read + written), the
// fused attention core as its GEMM-equivalent (a batched Q·K^T-shaped GEMM of the kernel's FLOPs; the scores
// then go through HBM, which a fused kernel avoids, so the measured time is an upper bound on a fused kernel's
// and the model's attention efficiency is compared with a GEMM's), and, when the plan has tp > 1 and this
// machine has that many GPUs, its TP collectives per layer (all-reduce, or all-gather + reduce-scatter under
// sequence parallelism; two per layer per pass as in models/step/step.cpp) through NCCL on tp local GPUs.
//
// Each distinct op is timed on its own with CUDA events (warm-up, then the median of 10 samples), and the N
// layers' compute ops once more back to back (launch gaps and cache effects included). Predictions come from
// the same model the plan used, with a calibration profile when one is given.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/calibration/calibration.hpp"
#include "models/comm/collectives.hpp"
#include "models/compute/compute.hpp"
#include "models/scenario/spec.hpp"

namespace trainsim::gpu {

struct ProxyOptions {
  int layers = 2;          // transformer layers to run (the model's first N: dense or MoE as the model has them)
  int gpus = 0;            // local GPUs the TP collectives may use; 0: all
  int samples = 10;        // timed samples per op
};

struct ProxyRow {
  std::string layer;       // "dense", "moe" or "comm"
  std::string name;        // "attention.qkv.fprop", "tp all-reduce"
  std::string pass;        // "forward", "backward", "recompute"
  std::string kind;        // "gemm", "attention", "memory", "collective"
  std::string what;        // "bf16 4096x6144x4096", "copy of 32.0 MiB (64.0 MiB moved)", "all-reduce of 32.0 MiB on 2 GPUs"
  int count = 0;           // times it runs in the N layers
  double predicted_s = 0;  // all `count` of them
  double measured_s = 0;   // all `count` of them (0 when not measured)
  bool measured = false;
  std::string note;        // approximation or why it was not measured
  double error() const { return measured && predicted_s > 0 ? measured_s / predicted_s - 1 : 0; }
};

struct ProxySums {
  double measured_s = 0, predicted_s = 0;  // over the measured rows
  int rows = 0, unmeasured = 0;
  double error() const { return predicted_s > 0 ? measured_s / predicted_s - 1 : 0; }
};

struct ProxyReport {
  std::string device;             // "NVIDIA H100 80GB HBM3 (GPU 0 of 8 local, sm_90)"
  std::string predicted_for;      // "h100-sxm-80gb" (+ " with calibration profile ...")
  int layers = 0, dense_layers = 0, moe_layers = 0;
  int tp = 1;
  std::vector<ProxyRow> rows;
  ProxySums gemm, attention, memory, comm, compute, total;  // compute = gemm + attention + memory
  double predicted_all_s = 0;     // every row, measured or not
  double back_to_back_s = 0;      // the N layers' compute ops run back to back; 0 when not run
  double back_to_back_predicted_s = 0;
  std::vector<std::string> notes;
};

// What a proxy run executes, with the predictions, decided without a GPU: the rows of the report (predicted times
// for all `count` runs filled in) in order: the dense layer's ops, the MoE layer's ops, the TP collectives.
struct ProxyItem {
  ProxyRow row;
  LayerOp op;                       // compute rows
  bool collective = false;
  Collective coll = Collective::AllReduce;  // collective rows (message: ProxyPlan::tp_bytes)
};
struct ProxyPlan {
  std::vector<ProxyItem> items;
  int layers = 0, dense_layers = 0, moe_layers = 0, tp = 1;
  std::vector<bool> layer_is_moe;   // per layer, in order
  double tp_bytes = 0;              // the TP collectives' message: the micro-batch's activations, 16-bit
  std::vector<std::string> notes;
};
ProxyPlan plan_proxy(const Scenario& scenario, const CalibrationProfile* profile, int layers);

// Throws GpuError ("no CUDA device found: ...") without a device. Per-op failures become rows with a note.
ProxyReport proxy_run(const Scenario& scenario, const CalibrationProfile* profile, const ProxyOptions& o,
                      const std::function<void(const std::string&)>& progress);

nlohmann::json to_json(const ProxyReport& r);

}  // namespace trainsim::gpu
