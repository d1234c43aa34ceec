#pragma once
// `trainsim calibrate show PROFILE`: a calibration profile, its fits and what it covers, in every output format.
#include <ostream>
#include <string>

#include "models/calibration/calibration.hpp"

namespace trainsim::cli {

// One line per collective curve: its alpha-beta fit (bus bandwidth, latency, how well it fits).
void print_curve_fits(std::ostream& os, const CalibrationProfile& p);

// `gpu`: the preset to judge coverage against (empty: the profile's own); `format` as --format; `report`: an HTML
// file to write beside (empty: none).
int run_calibrate_show(const std::string& profile, const std::string& gpu, const std::string& format, const std::string& report);

}  // namespace trainsim::cli
