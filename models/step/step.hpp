#pragma once
// Time of one training iteration for one layout: per-stage compute from the compute model, exposed
// communication from the collective model, the pipeline schedule's bubble, data-parallel gradient
// synchronisation and the optimizer step; then throughput, MFU/HFU, time to train, GPU-hours, cost.
#include <memory>

#include "models/comm/collectives.hpp"
#include "models/compute/compute.hpp"
#include "models/compute/transformer.hpp"
#include "models/memory/memory.hpp"
#include "models/scenario/spec.hpp"
#include "models/step/op_stream.hpp"

namespace trainsim {

struct CalibrationProfile;  // models/calibration/calibration.hpp
class CalibrationFit;

struct AccuracyBand;  // models/calibration/accuracy_bands.hpp

struct StepEstimate {
  StepBreakdown breakdown;
  double time_s = 0;
  // How sure: time_s x the 10th and 90th percentile of measured / predicted time over the reference runs of
  // the scenario's framework family and regime (scale, dense or MoE; models/calibration/accuracy_bands.hpp); `band` names them.
  double time_s_low = 0, time_s_high = 0;
  const AccuracyBand* band = nullptr;
  double tokens_per_s = 0;
  double model_flops = 0;     // per iteration (Megatron formula)
  double hardware_flops = 0;  // per iteration, with recomputation
  double mfu = 0, hfu = 0;
};

struct TrainingCost {
  double iterations = 0;
  double time_to_train_s = 0;
  double gpu_hours = 0;
  double cost = 0;            // USD at the scenario's price per GPU-hour (0 when the price is unknown)
  bool priced = false;        // the price is known: cost means something
  double energy_kwh = 0;      // GPUs at TDP for the whole run (an upper bound: no host, network, cooling)
  bool energy_known = false;  // the GPU's TDP is known
};
// `iterations` steps of `step_s` on `gpus` GPUs of `hardware`: time, GPU-hours, cost at its price, energy at TDP.
TrainingCost run_cost(double iterations, double step_s, int gpus, const HardwareSpec& hardware);


// Precomputes what does not depend on the layout; estimate() is cheap enough for the layout search.
// With a calibration profile the GEMM ceilings, HBM bandwidth and measured collectives come from it
// (fitted once here for this hardware; rules and fallbacks in calibration.hpp); without one (nullptr)
// every number is the published default. The profile is only read during construction.
class StepModel {
 public:
  // `fitted`: the fitted parameters to use instead of the shipped ones (the fit itself tries values this way).
  StepModel(const ModelSpec& m, const TrainingSpec& t, const HardwareSpec& h, const CalibrationProfile* calibration = nullptr,
            const FittedParameters* fitted = nullptr);
  StepEstimate estimate(const ParallelLayout& p) const;
  // The per-layer work of a layout does not depend on the ZeRO stage or offloading: the search computes
  // it once per layout and recompute mode and prices the variants with this overload.
  struct LayoutWork {
    LayerCompute dense, moe;
    EdgeCompute edge;
  };
  LayoutWork work(const ParallelLayout& p) const;
  StepEstimate estimate(const ParallelLayout& p, const LayoutWork& work) const;
  // The step's op stream (models/step/op_stream.hpp): estimate() folds it, the iteration simulator replays it.
  StepStream stream(const ParallelLayout& p) const;
  StepStream stream(const ParallelLayout& p, const LayoutWork& work) const;
  TrainingCost training_cost(const StepEstimate& step, const ParallelLayout& p) const;

 private:
  const ModelSpec& model_;
  const TrainingSpec& training_;
  const HardwareSpec& hardware_;
  std::shared_ptr<const CalibrationFit> calibration_;  // owns what comm_ and traits_ point into; null: none
  CommModel comm_;
  GpuComputeTraits traits_;
  // The bands of this scale and model kind, per framework family, for steps that do and do not wait on the host.
  const AccuracyBand* band_megatron_[2] = {nullptr, nullptr};
  const AccuracyBand* band_pytorch_[2] = {nullptr, nullptr};
  ModelParams params_;
  double adapter_params_ = 0, merged_adapter_params_ = 0;  // on the tokens, and over merged 3-D experts (lora_parameters)
  // A paged optimizer's memory, built once: what pages out on a layout prices its PCIe traffic (null: not paged).
  std::shared_ptr<const MemoryModel> paging_;
};

// Assumptions of the offloaded optimizer step (ZeRO-Offload, Ren et al. 2021): gradients go down and
// updated 16-bit weights come back over the GPU's PCIe link, and CPU Adam is bound by host memory
// bandwidth (fp32 master, two moments, gradient: read and write).
struct OffloadAssumptions {
  double host_memory_bandwidth_per_gpu = 25e9;  // a 2-socket DDR4/DDR5 host (~200-400 GB/s) shared by 8 GPUs
};

}  // namespace trainsim
