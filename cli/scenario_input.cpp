#include "scenario_input.hpp"

#include "output.hpp"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "calibrate/profile_io.hpp"
#include "flag_values.hpp"
#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"
#include "models/core/json_text.hpp"
#include "models/scenario/presets.hpp"
#include "models/scenario/scenario.hpp"
#include "run_files.hpp"

namespace trainsim::embedded {
extern const std::string_view default_scenario_json;
}

namespace trainsim::cli {

using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || (s.size() > 5 && s.substr(s.size() - 5) == ".json");
}

// "Org/Model-Name": a Hugging Face Hub id (one '/', neither part empty nor a relative-path word, no .json).
bool looks_like_hub_id(const std::string& s) {
  const auto slash = s.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == s.size() || s.find('/', slash + 1) != std::string::npos) return false;
  const std::string org = s.substr(0, slash);
  return org != "." && org != ".." && !(s.size() > 5 && s.substr(s.size() - 5) == ".json");
}

// The name a model read from a file goes by: Hugging Face's _name_or_path, else the folder of a config.json
// ("Qwen2.5-7B/config.json" -> "Qwen2.5-7B"), else the file's stem.
std::string model_name_from_file(const Json& config, const fs::path& file) {
  if (config.contains("_name_or_path") && config["_name_or_path"].is_string() && !config["_name_or_path"].get<std::string>().empty())
    return config["_name_or_path"].get<std::string>();
  if (file.filename() == "config.json" && !file.parent_path().filename().empty()) return file.parent_path().filename().string();
  return file.stem().string();
}

// A section given as a path is replaced by the file's content (relative to the scenario's folder). A value
// with a '/' that is no file but a preset alias ("meta-llama/Llama-3.1-8B") stays a preset name.
void inline_section_file(Json& doc, const char* key, const fs::path& base) {
  if (!doc.contains(key) || !doc[key].is_string()) return;
  const std::string value = doc[key].get<std::string>();
  if (!looks_like_path(value)) return;
  fs::path p = fs::path(value).is_absolute() ? fs::path(value) : base / value;
  std::error_code ec;
  if (!fs::exists(p, ec) && std::string(key) == "model" && !canonical_preset_name(PresetKind::Model, value).empty()) return;
  if (!fs::exists(p, ec) && std::string(key) == "model" && looks_like_hub_id(value)) {
    // A Hugging Face id that is no preset: trainsim reads no network, so say how to give its config.json.
    std::string name = value.substr(value.find('/') + 1);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::vector<std::string> near = closest_names(name, preset_names(PresetKind::Model), 3);
    throw InputError("/model", "\"" + value + "\"", "a model preset or a path to a Hugging Face config.json",
                     "no preset has this Hugging Face id and no such file exists; download its config.json (huggingface-cli download " + value +
                         " config.json --local-dir DIR) and pass --model DIR/config.json, or \"model\": {\"hf_config\": \"DIR/config.json\"}" +
                         (near.empty() ? std::string() : "; closest presets: " + join(near)));
  }
  doc[key] = read_json_file(p.string(), std::string("/") + key);
  if (std::string(key) == "model" && doc[key].is_object() && !doc[key].contains("name") && !doc[key].contains("preset"))
    doc[key]["name"] = model_name_from_file(doc[key], p);
}

// {"hf_config": "path/config.json", ...}: the config's keys, then the section's own keys on top (alias keys
// made canonical on both sides first, so an override under either name wins).
void inline_hf_config(Json& doc, const fs::path& base) {
  if (!doc.contains("model") || !doc["model"].is_object() || !doc["model"].contains("hf_config")) return;
  Json& model = doc["model"];
  if (!model["hf_config"].is_string())
    throw InputError("/model/hf_config", json_value_text(model["hf_config"]), "a path to a Hugging Face config.json");
  fs::path p = model["hf_config"].get<std::string>();
  if (!p.is_absolute()) p = base / p;
  Json merged = read_json_file(p.string(), "/model/hf_config");
  if (!merged.is_object()) throw InputError("/model/hf_config", p.string(), "a JSON object (a Hugging Face config.json)");
  canonicalize_model_keys(merged, "/model/hf_config");
  Json own = model;
  own.erase("hf_config");
  canonicalize_model_keys(own, "/model");
  for (auto it = own.begin(); it != own.end(); ++it) merged[it.key()] = it.value();
  if (!merged.contains("name")) merged["name"] = model_name_from_file(merged, p);
  model = merged;
}

// --gpus and --nodes each say how big the cluster is: the one given wins over what the scenario file says
// with the other (a scenario's "num_nodes": 1 must not turn --gpus 16 into an error).
void apply_cluster_size_flags(Json& doc, const std::map<std::string, std::string>& flags) {
  if (!doc.contains("hardware") || !doc["hardware"].is_object()) return;
  Json& hw = doc["hardware"];
  const bool gpus = flags.count("/hardware/num_gpus") > 0, nodes = flags.count("/hardware/num_nodes") > 0;
  if (gpus && !nodes) hw.erase("num_nodes");
  if (nodes && !gpus) hw.erase("num_gpus");
}

void set_pointer(Json& doc, const std::string& pointer, const Json& value) {
  // A section still written as a preset name becomes {"preset": name} so a field can be set in it.
  const auto slash = pointer.find('/', 1);
  if (slash != std::string::npos) {
    const std::string section = pointer.substr(1, slash - 1);
    if (doc.contains(section) && doc[section].is_string()) doc[section] = Json{{"preset", doc[section]}};
    const auto slash2 = pointer.find('/', slash + 1);
    if (slash2 != std::string::npos) {
      const std::string sub = pointer.substr(0, slash2);
      Json::json_pointer sp(sub);
      if (doc.contains(sp) && doc[sp].is_string()) doc[sp] = Json{{"preset", doc[sp]}};
    }
  }
  doc[Json::json_pointer(pointer)] = value;
}

}  // namespace

Json read_json_file(const std::string& path, const std::string& json_path) {
  std::ifstream in = open_input_file(json_path, path, "a readable JSON file");
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(json_path, "\"" + path + "\"", "a readable JSON file", "reading it failed");
  return parse_json_text(ss.str(), path, json_path);
}

void add_set_option(CLI::App& app, std::vector<std::string>& sets) {
  app.add_option("--set", sets,
                 "POINTER=VALUE: set any scenario field by its JSON pointer, e.g. --set /training/seq_len=8192 or --set "
                 "'/hardware/inter_node={\"fabric\":\"roce-200\"}'; VALUE is read as JSON, else as text; repeatable, applied in order")
      ->group("Scenario fields");
}

void apply_sets(Json& doc, const std::vector<std::string>& sets) {
  for (const std::string& s : sets) {
    const std::size_t eq = s.find('=');
    if (eq == std::string::npos || s.empty() || s[0] != '/')
      throw InputError("--set", "\"" + s + "\"", "POINTER=VALUE with a JSON pointer such as /training/seq_len=8192");
    const std::string pointer = s.substr(0, eq), text = s.substr(eq + 1);
    Json value = Json::parse(text, nullptr, false);
    if (value.is_discarded()) value = text;
    try {
      set_pointer(doc, pointer, value);
    } catch (const Json::exception& e) {
      throw InputError("--set", "\"" + s + "\"", "a JSON pointer into the scenario's objects", e.what());
    }
  }
}

void add_scenario_options(CLI::App& app, ScenarioInput& input) {
  app.add_option("scenario", input.path, "scenario JSON file (default: the built-in scenario)")->check(non_empty_path());
  for (const FieldFlag& f : field_flags()) {
    const std::string pointer = f.pointer;
    app.add_option_function<std::string>(
           f.flag, [&input, pointer](const std::string& v) { input.flags[pointer] = v; },
           std::string(f.help) + "  [sets " + pointer + "]")
        ->group("Scenario fields");
  }
  add_set_option(app, input.sets);
  app.add_option("--format", input.format, "output: " + output_formats_text())->check(CLI::IsMember(output_formats()));
  app.add_option("--report", input.report, "also write a self-contained HTML report with charts to FILE.html")->check(non_empty_path());
}

Json load_scenario_document(const ScenarioInput& input, std::string* label) {
  Json doc;
  fs::path base = fs::current_path();
  if (!input.path.empty()) {
    doc = read_json_file(input.path, "scenario");
    base = fs::path(input.path).parent_path();
    if (base.empty()) base = ".";
    *label = input.path;
  } else if (input.flags.count("/model")) {
    doc = Json::object();
    *label = "given by flags";
  } else {
    doc = Json::parse(embedded::default_scenario_json);
    *label = "built-in default: " + doc.value("description", std::string("Llama-3-8B full SFT on one 8xH100 node")) +
             " (pass a scenario file or --model to change it)";
  }
  if (!doc.is_object()) throw InputError("/", json_value_text(doc), "a JSON object with sections model, training, parallel, hardware");
  for (const char* key : {"model", "training", "parallel", "hardware"}) inline_section_file(doc, key, base);
  for (const auto& [pointer, text] : input.flags) {
    const Json value = field_flag_value(field_flag_for(pointer), text);
    set_pointer(doc, pointer, value);
    if (pointer == "/model") inline_section_file(doc, "model", fs::current_path());
  }
  apply_cluster_size_flags(doc, input.flags);
  apply_sets(doc, input.sets);
  for (const std::string& s : input.sets)
    if (s.starts_with("/model=")) inline_section_file(doc, "model", fs::current_path());
  inline_hf_config(doc, base);
  if ((!input.flags.empty() && !(input.path.empty() && input.flags.count("/model"))) || !input.sets.empty()) *label += ", with flag overrides";
  return doc;
}

Scenario load_scenario(const ScenarioInput& input, std::string* label, bool check_layout) {
  return parse_scenario(load_scenario_document(input, label), check_layout);
}

std::optional<LoadedCalibration> load_calibration(const ScenarioInput& input, const Json& doc) {
  if (!input.calibration.empty()) {
    note_input_file(input.calibration);
    return LoadedCalibration{input.calibration, read_calibration_profile(input.calibration, "--calibration")};
  }
  if (!doc.contains("calibration") || doc["calibration"].is_null()) return std::nullopt;
  const Json& value = doc["calibration"];
  if (!value.is_string() || value.get<std::string>().empty())
    throw InputError("/calibration", json_value_text(value), "a path to a calibration profile, relative to the scenario file");
  fs::path p = value.get<std::string>();
  if (!p.is_absolute() && !input.path.empty()) p = fs::path(input.path).parent_path() / p;
  note_input_file(p.string());
  return LoadedCalibration{p.string(), read_calibration_profile(p.string(), "/calibration")};
}

Scenario load_scenario(const ScenarioInput& input, std::string* label, bool check_layout,
                       std::optional<LoadedCalibration>* calibration) {
  const Json doc = load_scenario_document(input, label);
  Scenario scenario = parse_scenario(doc, check_layout);
  *calibration = load_calibration(input, doc);
  return scenario;
}

void add_calibration_option(CLI::App& app, ScenarioInput& input) {
  app.add_option("--calibration", input.calibration,
                 "calibration profile (JSON, from trainsim calibrate run or import): measured GEMM, HBM and collective "
                 "figures replace the published defaults where they apply")
      ->check(non_empty_path());
}

}  // namespace trainsim::cli
