#pragma once
// Built-in presets (models, GPUs, interconnects), compiled into the binary from presets/*.json.
// Each entry is a scenario section with its source; a section may name one, or name one and override
// fields: {"preset": "llama3-8b", "num_hidden_layers": 16}.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace trainsim {

enum class PresetKind { Model, Gpu, Fabric };

const char* preset_kind_name(PresetKind kind);  // "model", "GPU", "fabric"
const nlohmann::json& preset_table(PresetKind kind);
std::vector<std::string> preset_names(PresetKind kind);

// The preset a name or alias refers to (aliases ignore case); empty when none.
std::string canonical_preset_name(PresetKind kind, const std::string& name);
std::vector<std::string> preset_aliases(PresetKind kind, const std::string& name);

// Expands a section value into a full object: a preset name, {"preset": NAME, ...overrides} (the
// overrides win), or an object as it is. An unknown name is an InputError naming `path` and the
// closest preset names.
nlohmann::json expand_preset(PresetKind kind, const nlohmann::json& value, const std::string& path);

}  // namespace trainsim
