#include "models/scenario/presets.hpp"

#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"

namespace trainsim {
namespace embedded {
extern const std::string_view model_presets_json;
extern const std::string_view gpu_presets_json;
extern const std::string_view fabric_presets_json;
}  // namespace embedded

const char* preset_kind_name(PresetKind kind) {
  switch (kind) {
    case PresetKind::Model: return "model";
    case PresetKind::Gpu: return "GPU";
    case PresetKind::Fabric: return "fabric";
  }
  return "";
}

const Json& preset_table(PresetKind kind) {
  // Parsed once, on first use; the tables are immutable afterwards (safe to read from many threads).
  static const Json models = Json::parse(embedded::model_presets_json);
  static const Json gpus = Json::parse(embedded::gpu_presets_json);
  static const Json fabrics = Json::parse(embedded::fabric_presets_json);
  switch (kind) {
    case PresetKind::Model: return models;
    case PresetKind::Gpu: return gpus;
    case PresetKind::Fabric: return fabrics;
  }
  return models;
}

std::vector<std::string> preset_names(PresetKind kind) {
  std::vector<std::string> names;
  for (auto it = preset_table(kind).begin(); it != preset_table(kind).end(); ++it) names.push_back(it.key());
  return names;
}

std::string canonical_preset_name(PresetKind kind, const std::string& name) {
  const Json& table = preset_table(kind);
  if (table.contains(name)) return name;
  // Aliases: the names vendors and Hugging Face use ("llama3-405b", "meta-llama/Llama-3.1-405B", "h100").
  // Case does not matter for them (repository ids are written both ways).
  auto lower = [](std::string s) {
    for (char& c : s) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    return s;
  };
  const std::string wanted = lower(name);
  for (auto it = table.begin(); it != table.end(); ++it) {
    auto aliases = it->find("aliases");
    if (aliases == it->end() || !aliases->is_array()) continue;
    for (const auto& a : *aliases)
      if (a.is_string() && lower(a.get<std::string>()) == wanted) return it.key();
  }
  return {};
}

std::vector<std::string> preset_aliases(PresetKind kind, const std::string& name) {
  std::vector<std::string> out;
  const Json& table = preset_table(kind);
  auto it = table.find(name);
  if (it == table.end() || !it->contains("aliases")) return out;
  for (const auto& a : (*it)["aliases"])
    if (a.is_string()) out.push_back(a.get<std::string>());
  return out;
}

namespace {
Json lookup(PresetKind kind, const Json& name_value, const std::string& path) {
  if (!name_value.is_string())
    throw InputError(path, json_value_text(name_value), std::string("a ") + preset_kind_name(kind) + " preset name");
  const std::string name = canonical_preset_name(kind, name_value.get<std::string>());
  if (name.empty()) {
    std::vector<std::string> candidates = preset_names(kind);
    for (const auto& n : preset_names(kind))
      for (const auto& a : preset_aliases(kind, n)) candidates.push_back(a);
    auto near = closest_names(name_value.get<std::string>(), candidates);
    throw InputError(path, json_value_text(name_value),
                     std::string("a ") + preset_kind_name(kind) + " preset name (`trainsim presets` lists them all)",
                     "closest: " + join(near));
  }
  Json out = preset_table(kind).at(name);
  out.erase("aliases");
  out["name"] = name;
  return out;
}
}  // namespace

Json expand_preset(PresetKind kind, const Json& value, const std::string& path) {
  if (value.is_string()) return lookup(kind, value, path);
  if (!value.is_object())
    throw InputError(path, json_value_text(value),
                     std::string("a ") + preset_kind_name(kind) + " preset name or an object");
  auto it = value.find("preset");
  if (it == value.end()) return value;
  Json merged = lookup(kind, *it, path + "/preset");
  for (auto f = value.begin(); f != value.end(); ++f)
    if (f.key() != "preset") merged[f.key()] = f.value();
  if (!value.contains("name")) merged["name"] = merged["name"].get<std::string>() + (value.size() > 1 ? " (modified)" : "");
  return merged;
}

}  // namespace trainsim
