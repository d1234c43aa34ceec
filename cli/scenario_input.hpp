#pragma once
// How a command gets its scenario: a file (or the built-in default), sections that are paths read
// from disk, Hugging Face config files merged in, then flags that override single fields.
#include <CLI/CLI.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/calibration/calibration.hpp"
#include "models/scenario/spec.hpp"

namespace trainsim::cli {

struct ScenarioInput {
  std::string path;                           // empty: the built-in default, unless --model is given
  std::map<std::string, std::string> flags;   // JSON pointer -> value as typed
  std::vector<std::string> sets;              // --set POINTER=VALUE, applied after the field flags in order
  std::string format = "table";
  std::string report;                         // --report FILE.html: the HTML report, beside the printed output
  std::string calibration;                    // --calibration FILE: wins over the scenario's "calibration" key
};

// A calibration profile and where it came from (the path as given, resolved against the scenario's folder).
struct LoadedCalibration {
  std::string path;
  CalibrationProfile profile;
};

// Adds SCENARIO, every field flag (--model, --gpu, --gpus, --tp, ...), --set, --format and --report to `app`.
void add_scenario_options(CLI::App& app, ScenarioInput& input);
// Adds --set POINTER=VALUE (repeatable): any field of the scenario by its JSON pointer, VALUE as JSON (a number,
// true, an object...) or else as text. The cluster command adds it alone.
void add_set_option(CLI::App& app, std::vector<std::string>& sets);
// Applies --set values to `doc` in order; InputError naming --set for a malformed one.
void apply_sets(nlohmann::json& doc, const std::vector<std::string>& sets);

// Reads the scenario document with its section files and flag overrides applied; `label` says where
// it came from (for the output). Throws InputError.
nlohmann::json load_scenario_document(const ScenarioInput& input, std::string* label);
Scenario load_scenario(const ScenarioInput& input, std::string* label, bool check_layout = true);
// The same, and the calibration profile: --calibration FILE, else the scenario's top-level "calibration"
// (a path relative to the scenario file); nullopt when neither names one.
Scenario load_scenario(const ScenarioInput& input, std::string* label, bool check_layout,
                       std::optional<LoadedCalibration>* calibration);
// The calibration profile alone, for a command that reads the document itself (reliability).
std::optional<LoadedCalibration> load_calibration(const ScenarioInput& input, const nlohmann::json& doc);
// Adds --calibration FILE (estimate, plan).
void add_calibration_option(CLI::App& app, ScenarioInput& input);

// Reads and parses a JSON file; errors name the file, line and column.
nlohmann::json read_json_file(const std::string& path, const std::string& json_path);

}  // namespace trainsim::cli
