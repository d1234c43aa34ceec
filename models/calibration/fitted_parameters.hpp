#pragma once
// The step model's fitted parameters: physical quantities with a unit that no datasheet or first-principles
// formula gives, fitted once (Huber's robust M-estimate on log time ratios) across every speed case of ../shared/reference/ by
// `trainsim calibrate fit-reference` (calibrate/reference_fit.hpp) and shipped in presets/fitted_parameters.json
// with their provenance and the leave-one-source-out cross-validation error. Nothing is fitted per case or
// per file; each parameter applies to every scenario.
#include <string>
#include <vector>

namespace trainsim {

struct FittedParameters {
  // Energy per dense 16-bit tensor-core FLOP at the GPU's top clock (whole board), pJ/FLOP. Tensor-core power grows
  // as the cube of their rate (DVFS: P ~ C·V²·f, V rising with f); a layer whose average power at the top clock is
  // over the TDP runs its tensor-core kernels at the rate that brings it down to the TDP (compute.hpp,
  // power_limited_fraction). Measured on one H100 SXM at 700 W (gemm_power.py): 1.32; the fit, over runs of 1 to
  // 6,144 GPUs, lumps in what multi-GPU runs lose that the model does not name (README, "the fitted parameters").
  double tensor_energy_pj_per_flop = 0;
  // Achieved HBM bandwidth of a layer's memory-bound kernels (norms, activations, casts, softmax, rotary) over a
  // device-to-device copy's, dimensionless (the optimizer's multi-tensor kernels: kMultiTensorEfficiency).
  double memory_kernel_efficiency = 1;
  // Host time per forward kernel added by activation checkpointing's saved-tensor hooks (torch.utils.checkpoint
  // without reentrance: a Python pack hook per saved tensor in the forward and the recompute, an unpack hook per use
  // in the backward), microseconds, in frameworks whose recompute works that way (framework
  // checkpoint_saved_tensor_hooks). Profiled on an H100 host: a transformers Llama layer's forward ran 22.5 us per
  // kernel without checkpointing and 33.6 with it (calibrate/measurements/corpus/census).
  double checkpoint_hook_us = 0;
  // Host time per expert GEMM call that a grouped-GEMM library issues from C++, one cuBLAS call per local expert
  // (Transformer Engine's GroupedLinear: multi_stream_cublas_gemm sets up and launches a cublasLtMatmul per expert;
  // the grouped_gemm package's cuBLAS mode), microseconds: the host side of moe_gemm_streams > 0. Its floor, ATen's
  // own per-expert loop (_grouped_mm_fallback: at::mm_out per expert), measured 26 us on an H100 host
  // (compute_detail.hpp kAtenLoopGemmHostS).
  double grouped_gemm_call_us = 0;
};

// One parameter as the fit, the JSON file and the printed table see it.
struct FittedParameterInfo {
  const char* key;     // JSON key in presets/fitted_parameters.json
  const char* unit;
  double FittedParameters::*member;
  double lower, upper;  // physical range the fit searches
  const char* meaning;
};
const std::vector<FittedParameterInfo>& fitted_parameter_info();

// What is shipped: the values and the provenance of the fit that produced them.
struct FittedParameterSet {
  FittedParameters values;
  std::string source;  // "fitted to ../shared/reference on DATE, N cases (...)"
};
const FittedParameterSet& shipped_fitted_parameters();
// `base` with the values a calibration profile carries (calibration.hpp: CalibrationProfile::fitted_parameters).
struct CalibrationProfile;
FittedParameters with_profile_parameters(FittedParameters base, const CalibrationProfile& profile);
// A parameter's member by its JSON key; nullptr when no parameter has that key.
double FittedParameters::*fitted_parameter_member(const std::string& key);

// Where the fit starts, each value from a measurement or the physical default (the reasons in
// fitted_parameters.cpp): no fit result feeds back into its own start, so a rerun reproduces it.
FittedParameters fit_starting_point();

}  // namespace trainsim
