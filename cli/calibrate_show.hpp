#pragma once
// `trainsim calibrate show PROFILE`: a calibration profile, its fits and what it covers, in every output format.
#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "models/calibration/calibration.hpp"

namespace trainsim::cli {

// One line per collective curve: its alpha-beta fit (bus bandwidth, latency, how well it fits).
void print_curve_fits(std::ostream& os, const CalibrationProfile& p);

// `gpu`: the preset to judge coverage against (empty: the profile's own); `format` as --format; `report`: an HTML
// file to write beside (empty: none).
int run_calibrate_show(const std::string& profile, const std::string& gpu, const std::string& format, const std::string& report);

// What a command that wrote a profile read to make it (`calibrate import`): a titled table, shown before the profile.
struct ProfileInputs {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

// A command's result that is a profile it wrote: `result` gains the profile as `calibrate show` renders it (under
// "profile"), the table form is the command's own `table`, Markdown and HTML show `inputs` and then the profile.
void emit_written_profile(const std::string& what, nlohmann::json result, const std::string& path, const CalibrationProfile& p,
                          const ProfileInputs& inputs, const std::function<void(std::ostream&)>& table, const std::string& format,
                          const std::string& report);

}  // namespace trainsim::cli
