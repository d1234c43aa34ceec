// libFuzzer target: any bytes as a calibration profile (calibrate/README.md). Bad input must end in an InputError;
// a profile that parses must fit on an H100 node (GEMM ceilings, alpha-beta curves) and give a finite, positive
// step time for a small scenario, and write back to JSON that parses to the same profile.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "models/calibration/calibration.hpp"
#include "models/core/errors.hpp"
#include "models/core/json_text.hpp"
#include "models/scenario/scenario.hpp"
#include "models/step/step.hpp"

using namespace trainsim;

namespace {
const Scenario& scenario() {
  static const Scenario s = parse_scenario(nlohmann::json::parse(
      R"({"model": {"preset": "llama3-8b", "num_hidden_layers": 2}, "training": {"global_batch_size": 16},
          "parallel": {"tp": 2, "dp": 8}, "hardware": {"num_nodes": 2}})"));
  return s;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  CalibrationProfile profile;
  try {
    profile = parse_calibration_profile(parse_json_text(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json", "--calibration"),
                                        "fuzz.json");
  } catch (const InputError&) {
    return 0;
  }
  const Scenario& s = scenario();
  const StepModel sm(s.model, s.training, s.hardware, &profile);
  const StepEstimate e = sm.estimate(s.parallel);
  if (!(std::isfinite(e.time_s) && e.time_s > 0)) {
    std::fprintf(stderr, "broken promise: step time %g with this profile\n", e.time_s);
    std::abort();
  }
  if (parse_calibration_profile(to_json(profile), "round trip").gemm.size() != profile.gemm.size()) {
    std::fprintf(stderr, "broken promise: the profile does not survive a round trip\n");
    std::abort();
  }
  return 0;
}
