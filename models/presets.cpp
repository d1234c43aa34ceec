#include "presets.hpp"

#include "errors.hpp"
#include "json_reader.hpp"

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

namespace {
Json lookup(PresetKind kind, const Json& name_value, const std::string& path) {
  if (!name_value.is_string())
    throw InputError(path, json_value_text(name_value), std::string("a ") + preset_kind_name(kind) + " preset name");
  const std::string name = name_value.get<std::string>();
  const Json& table = preset_table(kind);
  auto it = table.find(name);
  if (it == table.end()) {
    auto near = closest_names(name, preset_names(kind));
    throw InputError(path, json_value_text(name_value),
                     std::string("a ") + preset_kind_name(kind) + " preset name (`trainsim presets` lists them all)",
                     "closest: " + join(near));
  }
  Json out = *it;
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
  if (!value.contains("name")) merged["name"] = it->get<std::string>() + (value.size() > 1 ? " (modified)" : "");
  return merged;
}

}  // namespace trainsim
