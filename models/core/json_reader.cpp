#include "models/core/json_reader.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace trainsim {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<std::string> closest_names(const std::string& word, const std::vector<std::string>& candidates,
                                       std::size_t n) {
  // A word far longer than every candidate is no typo of one: no suggestion, and no edit distance over it (a 1 MB
  // key cost 0.4 s here, 25 s under ASan).
  std::size_t longest = 0;
  for (const auto& c : candidates) longest = std::max(longest, c.size());
  if (word.size() > 2 * longest + 16) return {};
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(word, c);
    // A candidate that contains the word (or the reverse) is a strong hint: "llama3" -> "llama3-8b".
    if (c.find(word) != std::string::npos || word.find(c) != std::string::npos) d = std::min<std::size_t>(d, 1);
    scored.emplace_back(d, c);
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < scored.size() && out.size() < n; ++i) out.push_back(scored[i].second);
  return out;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

namespace {
// Compact text of `v`, at most about `budget` characters and a few levels deep: a message never prints (or
// recurses through) a whole document.
void append_value_text(const Json& v, std::string& out, std::size_t budget, int depth) {
  if (out.size() >= budget) return;
  if (v.is_object() || v.is_array()) {
    if (depth >= 3) {
      out += v.is_object() ? "{...}" : "[...]";
      return;
    }
    out += v.is_object() ? '{' : '[';
    bool first = true;
    for (auto it = v.begin(); it != v.end() && out.size() < budget; ++it) {
      if (!first) out += ',';
      first = false;
      if (v.is_object()) out += Json(it.key()).dump(-1, ' ', false, Json::error_handler_t::replace) + ':';
      append_value_text(it.value(), out, budget, depth + 1);
    }
    out += v.is_object() ? '}' : ']';
    return;
  }
  out += v.dump(-1, ' ', false, Json::error_handler_t::replace);
}
}  // namespace

std::string json_value_text(const Json& v) {
  std::string s;
  append_value_text(v, s, 80, 0);
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

JsonReader::JsonReader(const Json& object, std::string path, std::vector<AppliedDefault>* defaults)
    : object_(object), path_(std::move(path)), defaults_(defaults) {
  if (!object_.is_object()) throw InputError(path_, json_value_text(object_), "a JSON object");
}

bool JsonReader::has(const std::string& key) const {
  auto it = object_.find(key);
  return it != object_.end() && !it->is_null();
}

const Json& JsonReader::raw(const std::string& key) {
  read_.insert(key);
  return object_.at(key);
}

void JsonReader::mark_read(std::initializer_list<const char*> keys) {
  for (const char* k : keys) read_.insert(k);
}

void JsonReader::record_default(const std::string& key, const std::string& value, const std::string& reason) {
  // An empty reason means "absent is not a default" (the value is derived elsewhere, or metadata).
  if (defaults_ && !reason.empty()) defaults_->push_back({child_path(key), value, reason});
}

namespace {
double number_or_quantity(const Json& v, const std::string& path, const std::string& expected) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    // Plain counts may also be written with a suffix ("1.5T").
    if (auto q = parse_quantity(v.get<std::string>(), Quantity::Count)) return *q;
  }
  throw InputError(path, json_value_text(v), expected);
}
}  // namespace

std::string integer_range_text(int min_value, int max_value) {
  return "an integer in [" + std::to_string(min_value) + ", " + std::to_string(max_value) + "]";
}

std::string JsonReader::absent_text(const std::string& key) const {
  return object_.contains(key) ? "null" : "nothing";
}

int JsonReader::required_int(const std::string& key, int min_value, int max_value) {
  read_.insert(key);
  const std::string expected = integer_range_text(min_value, max_value);
  if (!has(key)) throw InputError(child_path(key), absent_text(key), expected, "this field is required");
  const double v = number_or_quantity(object_.at(key), child_path(key), expected);
  if (v != std::floor(v) || v < min_value || v > max_value) throw InputError(child_path(key), json_value_text(object_.at(key)), expected);
  return static_cast<int>(v);
}

int JsonReader::get_int(const std::string& key, int fallback, const std::string& reason, int min_value, int max_value) {
  if (!has(key)) {
    read_.insert(key);
    record_default(key, std::to_string(fallback), reason);
    return fallback;
  }
  return required_int(key, min_value, max_value);
}

double JsonReader::get_number(const std::string& key, double fallback, const std::string& reason, double min_value,
                              double max_value) {
  read_.insert(key);
  if (!has(key)) {
    Json f = fallback;
    record_default(key, f.dump(), reason);
    return fallback;
  }
  const Json& v = object_.at(key);
  std::string expected = "a number in [" + Json(min_value).dump() + ", " + Json(max_value).dump() + "]";
  double x = 0;
  if (v.is_number()) x = v.get<double>();
  else if (v.is_string()) {
    auto q = parse_quantity(v.get<std::string>(), Quantity::Fraction);
    if (!q) throw InputError(child_path(key), json_value_text(v), expected);
    x = *q;
  } else {
    throw InputError(child_path(key), json_value_text(v), expected);
  }
  if (!(x >= min_value && x <= max_value)) throw InputError(child_path(key), json_value_text(v), expected);
  return x;
}

double quantity_from_json(const Json& v, Quantity kind, const std::string& path, const QuantityRange& range) {
  double x = 0;
  if (v.is_number()) {
    x = v.get<double>();
  } else if (v.is_string()) {
    std::string why;
    auto q = parse_quantity(v.get<std::string>(), kind, &why);
    if (!q) throw InputError(path, json_value_text(v), quantity_example(kind), why);
    x = *q;
  } else {
    throw InputError(path, json_value_text(v), quantity_example(kind));
  }
  if (!std::isfinite(x) || !range.contains(x)) throw InputError(path, json_value_text(v), quantity_range_text(range, kind));
  return x;
}

double JsonReader::get_quantity(const std::string& key, Quantity kind, double fallback, const std::string& reason,
                                const QuantityRange& range) {
  read_.insert(key);
  if (!has(key)) {
    if (!reason.empty()) record_default(key, Json(fallback).dump(), reason);
    return fallback;
  }
  return quantity_from_json(object_.at(key), kind, child_path(key), range);
}

double JsonReader::required_quantity(const std::string& key, Quantity kind, const QuantityRange& range) {
  read_.insert(key);
  if (!has(key)) throw InputError(child_path(key), absent_text(key), quantity_range_text(range, kind), "this field is required");
  return quantity_from_json(object_.at(key), kind, child_path(key), range);
}

bool JsonReader::get_bool(const std::string& key, bool fallback, const std::string& reason) {
  read_.insert(key);
  if (!has(key)) {
    record_default(key, fallback ? "true" : "false", reason);
    return fallback;
  }
  const Json& v = object_.at(key);
  if (!v.is_boolean()) throw InputError(child_path(key), json_value_text(v), "true or false");
  return v.get<bool>();
}

std::string JsonReader::get_string(const std::string& key, const std::string& fallback, const std::string& reason) {
  read_.insert(key);
  if (!has(key)) {
    if (!reason.empty()) record_default(key, fallback, reason);
    return fallback;
  }
  const Json& v = object_.at(key);
  if (!v.is_string()) throw InputError(child_path(key), json_value_text(v), "a string");
  return v.get<std::string>();
}

std::string JsonReader::get_enum(const std::string& key, const std::vector<std::string>& allowed,
                                 const std::string& fallback, const std::string& reason) {
  std::string s = get_string(key, fallback, reason);
  if (std::find(allowed.begin(), allowed.end(), s) == allowed.end()) {
    auto near = closest_names(s, allowed, 1);
    throw InputError(child_path(key), json_value_text(object_.at(key)), "one of " + join(allowed),
                     near.empty() ? "" : "did you mean \"" + near.front() + "\"?");
  }
  return s;
}

std::vector<std::string> JsonReader::unread_keys() const {
  std::vector<std::string> out;
  for (auto it = object_.begin(); it != object_.end(); ++it)
    if (!read_.count(it.key())) out.push_back(it.key());
  return out;
}

void JsonReader::reject_unknown() const {
  const std::vector<std::string> known = read_keys();
  for (const auto& key : unread_keys()) {
    auto near = closest_names(key, known, 1);
    throw InputError(child_path(key), json_value_text(object_.at(key)), "no such field here; known fields: " + join(known),
                     near.empty() ? "" : "did you mean \"" + near.front() + "\"?");
  }
}

}  // namespace trainsim
