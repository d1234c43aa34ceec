#pragma once
// Calibration profiles on disk, and how a command reports the profile it used: the JSON object
// `calibration: {profile, source, gpu, calibrated: [...], fallbacks: [...], warnings: [...]}` and the
// table lines that say which parts came from the profile and which fell back to the defaults.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "models/calibration/calibration.hpp"

namespace trainsim {

// Reads and validates a profile. Errors (InputError) name the file, and the line and column for bad JSON
// or the JSON pointer for a bad value ("h100.json#/gemm/0/m"). `what` names where the path came from
// ("--calibration", "/calibration") for a missing file.
CalibrationProfile read_calibration_profile(const std::string& path, const std::string& what = "calibration");
// The profile as the JSON text a file holds: identity and provenance first, points last.
std::string calibration_profile_text(const CalibrationProfile& profile);

nlohmann::json calibration_summary_json(const std::string& path, const CalibrationProfile& profile, const CalibrationCoverage& coverage);
void print_calibration_summary(std::ostream& os, const std::string& path, const CalibrationProfile& profile,
                               const CalibrationCoverage& coverage);

}  // namespace trainsim
