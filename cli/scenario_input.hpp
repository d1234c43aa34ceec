#pragma once
// How a command gets its scenario: a file (or the built-in default), sections that are paths read
// from disk, Hugging Face config files merged in, then flags that override single fields.
#include <CLI/CLI.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "models/spec.hpp"

namespace trainsim::cli {

struct ScenarioInput {
  std::string path;                           // empty: the built-in default, unless --model is given
  std::map<std::string, std::string> flags;   // JSON pointer -> value as typed
  std::string format = "table";
};

// Adds SCENARIO, every field flag (--model, --gpu, --gpus, --tp, ...) and --format to `app`.
void add_scenario_options(CLI::App& app, ScenarioInput& input);

// Reads the scenario document with its section files and flag overrides applied; `label` says where
// it came from (for the output). Throws InputError.
nlohmann::json load_scenario_document(const ScenarioInput& input, std::string* label);
Scenario load_scenario(const ScenarioInput& input, std::string* label, bool check_layout = true);

// Reads and parses a JSON file; errors name the file, line and column.
nlohmann::json read_json_file(const std::string& path, const std::string& json_path);

}  // namespace trainsim::cli
