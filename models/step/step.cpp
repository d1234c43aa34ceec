#include "models/step/step.hpp"

#include <algorithm>
#include <cmath>

#include "models/calibration/accuracy_bands.hpp"
#include "models/calibration/calibration.hpp"
#include "models/compute/compute.hpp"
#include "models/compute/flops.hpp"
#include "models/compute/moe_dispatch.hpp"
#include "models/core/units.hpp"
#include "models/memory/memory.hpp"

namespace trainsim {


StepModel::StepModel(const ModelSpec& m, const TrainingSpec& t, const HardwareSpec& h, const CalibrationProfile* calibration,
                     const FittedParameters* fitted)
    : model_(m), training_(t), hardware_(h),
      calibration_(calibration ? std::make_shared<const CalibrationFit>(*calibration, h) : nullptr),
      comm_(make_comm_model(h, calibration_.get())), traits_(gpu_compute_traits(h.gpu, calibration_.get())),
      params_(count_parameters(m)),
      paging_(t.paged_optimizer ? std::make_shared<const MemoryModel>(m, t, h) : nullptr) {
  // gpu_compute_traits applied the shipped fitted parameters; an explicit set replaces them, and so do those a
  // calibration profile carries (fitted to the user's own run by `calibrate from-log`).
  if (fitted) {
    apply_fitted_parameters(traits_, h.gpu, *fitted);
  } else if (calibration && !calibration->fitted_parameters.empty()) {
    apply_fitted_parameters(traits_, h.gpu, with_profile_parameters(shipped_fitted_parameters().values, *calibration));
  }
  if (t.uses_adapters()) adapter_params_ = lora_parameters(m, t.lora), merged_adapter_params_ = lora_parameters(m, t.lora, true);
  const std::string scale = band_scale(h.num_gpus, h.gpus_per_node);
  for (bool host : {false, true}) {
    band_megatron_[host] = &accuracy_band("megatron", scale, m.is_moe(), host);
    band_pytorch_[host] = &accuracy_band("pytorch", scale, m.is_moe(), host);
  }
}

StepModel::LayoutWork StepModel::work(const ParallelLayout& p) const {
  LayoutWork w;
  const GpuComputeTraits tr = layer_power_traits(model_, training_, p, hardware_.gpu, traits_);
  w.dense = layer_compute(model_, training_, p, hardware_.gpu, tr, false);
  w.moe = model_.is_moe() ? layer_compute(model_, training_, p, hardware_.gpu, tr, true) : w.dense;
  w.edge = edge_compute(model_, training_, p, hardware_.gpu, tr);
  return w;
}

StepEstimate StepModel::estimate(const ParallelLayout& p) const { return estimate(p, work(p)); }

StepStream StepModel::stream(const ParallelLayout& p) const { return stream(p, work(p)); }

StepEstimate StepModel::estimate(const ParallelLayout& p, const LayoutWork& work) const {
  const ModelSpec& m = model_;
  const TrainingSpec& t = training_;
  const FrameworkTraits& fw = framework_for(t, p);
  StepEstimate e;
  e.breakdown = fold_step(stream(p, work), m, p);
  e.time_s = e.breakdown.total_s;
  const bool host_bound = host_bound_step(e.breakdown.host_s, e.time_s);
  e.band = megatron_family(fw) ? band_megatron_[host_bound] : band_pytorch_[host_bound];
  e.time_s_low = e.time_s * e.band->low;
  e.time_s_high = e.time_s * e.band->high;
  const double sequences = t.global_batch_size;
  e.tokens_per_s = t.tokens_per_step() / e.time_s;
  e.model_flops = model_flops_per_iteration(m, t, sequences);
  e.hardware_flops = hardware_flops_per_iteration(m, t, sequences, fw.selective_recompute);
  const double peak = hardware_.gpu.peak_flops(t.precision) * hardware_.num_gpus;
  e.mfu = e.model_flops / (e.time_s * peak);
  e.hfu = e.hardware_flops / (e.time_s * peak);
  return e;
}

TrainingCost StepModel::training_cost(const StepEstimate& step, const ParallelLayout&) const {
  const double tokens_per_iteration = training_.tokens_per_step();
  if (training_.train_tokens <= 0 || tokens_per_iteration <= 0) return {};
  return run_cost(std::ceil(training_.train_tokens / tokens_per_iteration), step.time_s, hardware_.num_gpus, hardware_);
}

TrainingCost run_cost(double iterations, double step_s, int gpus, const HardwareSpec& hardware) {
  TrainingCost c;
  c.iterations = iterations;
  c.time_to_train_s = c.iterations * step_s;
  c.gpu_hours = c.time_to_train_s * gpus / kSecondsPerHour;
  c.priced = hardware.has_price();
  c.cost = c.priced ? c.gpu_hours * hardware.price_per_gpu_hour : 0;
  c.energy_known = hardware.gpu.tdp_watts > 0;
  c.energy_kwh = hardware.gpu.tdp_watts * c.gpu_hours / 1000.0;
  return c;
}

}  // namespace trainsim
