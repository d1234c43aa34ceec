#pragma once
// Reads one JSON object of a scenario with its path, so every error names where it happened, every
// default that was applied is recorded, and unknown keys are caught with the closest known name.
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "models/core/errors.hpp"
#include "models/core/units.hpp"
#include "models/scenario/spec.hpp"

namespace trainsim {

using Json = nlohmann::json;

// Edit distance (Levenshtein), used for "did you mean" suggestions.
std::size_t edit_distance(const std::string& a, const std::string& b);
// Up to `n` of `candidates` closest to `word`, best first; none when `word` is more than twice as long as every
// candidate (plus 16 characters): no typo, and no quadratic work on a huge input.
std::vector<std::string> closest_names(const std::string& word, const std::vector<std::string>& candidates,
                                       std::size_t n = 3);
std::string join(const std::vector<std::string>& items, const std::string& sep = ", ");
std::string json_value_text(const Json& v);  // compact text of a value for messages

class JsonReader {
 public:
  JsonReader(const Json& object, std::string path, std::vector<AppliedDefault>* defaults);

  const std::string& path() const { return path_; }
  std::string child_path(const std::string& key) const { return path_ + "/" + key; }
  // Where defaults are recorded (for readers of nested objects); may be null.
  std::vector<AppliedDefault>* defaults() const { return defaults_; }
  bool has(const std::string& key) const;  // present and not null
  const Json& raw(const std::string& key);  // marks it read; caller checks presence

  // Required fields: a missing one is an error naming the path. Integers name their whole range in errors
  // ("an integer in [1, 1048576]"): give every field its plausible range, documented in scenarios/FORMAT.md.
  int required_int(const std::string& key, int min_value = 1, int max_value = std::numeric_limits<int>::max());
  // Optional fields: `fallback` is used when absent, and recorded as an applied default with `reason`
  // (an empty reason records nothing: the caller derives the value or it is metadata).
  int get_int(const std::string& key, int fallback, const std::string& reason, int min_value = 0,
              int max_value = std::numeric_limits<int>::max());
  double get_number(const std::string& key, double fallback, const std::string& reason, double min_value,
                    double max_value);
  // Quantities with units; the value must lie in `range` (default: any finite non-negative value).
  double get_quantity(const std::string& key, Quantity kind, double fallback, const std::string& reason,
                      const QuantityRange& range = {});
  double required_quantity(const std::string& key, Quantity kind, const QuantityRange& range = {});
  bool get_bool(const std::string& key, bool fallback, const std::string& reason);
  std::string get_string(const std::string& key, const std::string& fallback, const std::string& reason);
  // One of `allowed` (case-sensitive); error lists them.
  std::string get_enum(const std::string& key, const std::vector<std::string>& allowed, const std::string& fallback,
                       const std::string& reason);

  void mark_read(std::initializer_list<const char*> keys);
  // Keys not read so far: an error naming the first with the closest known (read) key for strict
  // sections; the model section, which takes pasted Hugging Face configs, lists them as notes instead.
  void reject_unknown() const;
  std::vector<std::string> read_keys() const { return {read_.begin(), read_.end()}; }
  std::vector<std::string> unread_keys() const;

  void record_default(const std::string& key, const std::string& value, const std::string& reason);
  // "null" when the key is there with a null value, "nothing" when it is absent (for messages).
  std::string absent_text(const std::string& key) const;

 private:
  const Json& object_;
  std::string path_;
  std::vector<AppliedDefault>* defaults_;
  std::set<std::string> read_;
};

double quantity_from_json(const Json& v, Quantity kind, const std::string& path, const QuantityRange& range = {});

}  // namespace trainsim
