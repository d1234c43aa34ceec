#include "models/calibration/fitted_parameters.hpp"

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

#include "models/calibration/calibration.hpp"
#include "models/core/json_text.hpp"

namespace trainsim {
namespace embedded {
extern const std::string_view fitted_parameters_json;
}  // namespace embedded

const std::vector<FittedParameterInfo>& fitted_parameter_info() {
  static const std::vector<FittedParameterInfo> info = {
      {"tensor_energy_pj_per_flop", "pJ/FLOP", &FittedParameters::tensor_energy_pj_per_flop, 0.0, 3.0,
       "energy per 16-bit tensor-core FLOP at the top clock: GEMMs above the power limit run at (TDP / power)^(1/3) of it"},
      {"memory_kernel_efficiency", "fraction", &FittedParameters::memory_kernel_efficiency, 0.3, 1.0,
       "HBM bandwidth of memory-bound training kernels over a device-to-device copy's"},
      {"checkpoint_hook_us", "us", &FittedParameters::checkpoint_hook_us, 0.0, 60.0,
       "host time per forward and recompute kernel added by activation checkpointing's saved-tensor hooks (torch.utils.checkpoint)"},
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
  // One H100 SXM at its 700 W limit held 688 TFLOP/s of bf16 GEMM for minutes at 1383 MHz
  // (calibrate/measurements/h100-sxm-80gb-2026-11-22/torch_train_step_sustained.json): 700 W / 688e12 FLOP/s.
  f.tensor_energy_pj_per_flop = 700.0 / 688e12 * 1e12;
  f.memory_kernel_efficiency = 1.0;  // memory-bound kernels as fast as a copy
  f.checkpoint_hook_us = 0.0;         // hooks as cheap as the launches they wrap
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
