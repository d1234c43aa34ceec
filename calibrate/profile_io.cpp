#include "calibrate/profile_io.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "models/core/errors.hpp"
#include "models/core/json_text.hpp"

namespace trainsim {

CalibrationProfile read_calibration_profile(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(what, "\"" + path + "\"", "a calibration profile (JSON file)", "that is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(what, "\"" + path + "\"", "a readable calibration profile (JSON)", "no such file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_calibration_profile(parse_json_text(ss.str(), path, what), path);
}

namespace {
// The profile's keys in reading order (identity and provenance first, points last) rather than alphabetical.
nlohmann::ordered_json in_reading_order(const nlohmann::json& j) {
  static const char* const order[] = {"format", "version", "gpu", "provenance", "gemm", "hbm_bandwidth", "hbm_source", "collectives",
                                      "name", "preset", "sms", "who", "when", "command", "notes", "dtype", "op", "scope",
                                      "group_size", "ranks_per_node", "fabric", "m", "n", "k", "tflops", "bytes", "busbw", "time",
                                      "source", "points"};
  if (j.is_array()) {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const auto& e : j) a.push_back(in_reading_order(e));
    return a;
  }
  if (!j.is_object()) return nlohmann::ordered_json::parse(j.dump());
  nlohmann::ordered_json o = nlohmann::ordered_json::object();
  if (j.contains("who") && j.contains("source")) o["source"] = j.at("source");  // provenance: its source first
  for (const char* key : order)
    if (j.contains(key) && !o.contains(key)) o[key] = in_reading_order(j.at(key));
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!o.contains(it.key())) o[it.key()] = in_reading_order(it.value());
  return o;
}
}  // namespace

std::string calibration_profile_text(const CalibrationProfile& profile) { return in_reading_order(to_json(profile)).dump(2) + "\n"; }

nlohmann::json calibration_summary_json(const std::string& path, const CalibrationProfile& profile, const CalibrationCoverage& coverage) {
  nlohmann::json calibrated = nlohmann::json::array(), fallbacks = nlohmann::json::array();
  for (const auto& item : coverage.items) (item.calibrated ? calibrated : fallbacks).push_back({{"part", item.part}, {"detail", item.detail}});
  return {{"profile", path},
          {"source", profile.provenance.source},
          {"gpu", profile.gpu.name},
          {"calibrated", calibrated},
          {"fallbacks", fallbacks},
          {"warnings", coverage.warnings}};
}

void print_calibration_summary(std::ostream& os, const std::string& path, const CalibrationProfile& profile,
                               const CalibrationCoverage& coverage) {
  os << "\nCalibration  " << path << " (" << profile.provenance.source << ", " << profile.gpu.name;
  if (!profile.provenance.when.empty()) os << ", " << profile.provenance.when;
  os << ")\n";
  for (const auto& w : coverage.warnings) os << "  warning: " << w << "\n";
  os << "  from the profile:\n";
  bool any = false;
  for (const auto& item : coverage.items)
    if (item.calibrated) os << "    " << item.part << ": " << item.detail << "\n", any = true;
  if (!any) os << "    nothing that applies to this scenario\n";
  os << "  defaults (not in the profile, or not applicable):\n";
  for (const auto& item : coverage.items)
    if (!item.calibrated) os << "    " << item.part << ": " << item.detail << "\n";
}

}  // namespace trainsim
