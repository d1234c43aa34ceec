#include "models/calibration/fitted_parameters.hpp"

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

#include "models/calibration/calibration.hpp"
#include "models/compute/compute_detail.hpp"
#include "models/core/json_text.hpp"

namespace trainsim {
namespace embedded {
extern const std::string_view fitted_parameters_json;
}  // namespace embedded

const std::vector<FittedParameterInfo>& fitted_parameter_info() {
  static const std::vector<FittedParameterInfo> info = {
      {"tensor_energy_pj_per_flop", "pJ/FLOP", &FittedParameters::tensor_energy_pj_per_flop, 0.0, 3.0,
       "energy per 16-bit tensor-core FLOP at the top clock: a layer whose average power is over the TDP runs its tensor-core kernels at the rate r where, with their power growing as r^3, the average meets the TDP"},
      {"memory_kernel_efficiency", "fraction", &FittedParameters::memory_kernel_efficiency, 0.3, 1.0,
       "HBM bandwidth of memory-bound training kernels over a device-to-device copy's"},
      {"checkpoint_hook_us", "us", &FittedParameters::checkpoint_hook_us, 0.0, 60.0,
       "host time per forward and recompute kernel added by activation checkpointing's saved-tensor hooks (torch.utils.checkpoint)"},
      {"grouped_gemm_call_us", "us", &FittedParameters::grouped_gemm_call_us, 0.0, 300.0,
       "host time per expert GEMM call a grouped-GEMM library issues from C++ (Transformer Engine's GroupedLinear, the grouped_gemm package's cuBLAS loop)"},
  };
  return info;
}

double FittedParameters::*fitted_parameter_member(const std::string& key) {
  for (const auto& p : fitted_parameter_info())
    if (key == p.key) return p.member;
  return nullptr;
}

FittedParameters with_profile_parameters(FittedParameters base, const CalibrationProfile& profile) {
  for (const auto& [key, value] : profile.fitted_parameters)
    if (auto member = fitted_parameter_member(key)) base.*member = value;
  return base;
}

FittedParameters fit_starting_point() {
  FittedParameters f;
  // The one GPU measured (calibrate/measurements/corpus/gemm_power.py, an H100 SXM): back-to-back bf16 GEMMs held
  // 0.869 of their top-clock rate at 700 W, so at the top clock they would draw 700 / 0.869^3 W at the 809 TFLOP/s
  // the compute model takes as its top-clock GEMM rate.
  f.tensor_energy_pj_per_flop = 1.32;
  f.memory_kernel_efficiency = 1.0;  // memory-bound kernels as fast as a copy
  f.checkpoint_hook_us = 0.0;         // hooks as cheap as the launches they wrap
  f.grouped_gemm_call_us = compute_detail::kAtenLoopGemmHostS * 1e6;  // as ATen's measured per-expert loop
  return f;
}

const FittedParameterSet& shipped_fitted_parameters() {
  static const FittedParameterSet set = [] {
    const nlohmann::json doc = parse_json_text(embedded::fitted_parameters_json, "presets/fitted_parameters.json", "fitted parameters");
    FittedParameterSet out;
    out.source = doc.at("source").get<std::string>();
    for (const auto& p : fitted_parameter_info()) {
      const double v = doc.at("parameters").at(p.key).at("value").get<double>();
      if (!(v >= p.lower && v <= p.upper))
        throw std::logic_error(std::string("presets/fitted_parameters.json: ") + p.key + " outside its range");
      out.values.*p.member = v;
    }
    return out;
  }();
  return set;
}

}  // namespace trainsim
