#include "models/core/json_text.hpp"

#include <vector>

#include "models/core/errors.hpp"

namespace trainsim {

using Json = nlohmann::json;

namespace {

// "line:column" of a byte offset (1-based; a column counts bytes).
std::string line_column(std::string_view text, std::size_t offset) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < text.size() && i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

// Where brackets first nest deeper than `limit` (outside strings): the offset of that bracket.
std::size_t first_too_deep(std::string_view text, int limit) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > limit) return i;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return text.size();
}

std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

// Builds the document from nlohmann's SAX events, knowing at every moment the JSON path being read, so an
// error can name it; refuses duplicate keys and excessive nesting.
class DomBuilder {
 public:
  Json root;
  std::string error_path, error_value, error_expected, error_hint;
  std::size_t error_offset = std::string_view::npos;

  bool null() { return put(Json(nullptr)); }
  bool boolean(bool v) { return put(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return put(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return put(Json(v)); }
  bool number_float(Json::number_float_t v, const std::string&) { return put(Json(v)); }
  bool string(std::string& v) { return put(Json(std::move(v))); }
  bool binary(Json::binary_t& v) { return put(Json::binary(std::move(v))); }

  bool start_object(std::size_t) { return open(Json::value_t::object); }
  bool start_array(std::size_t) { return open(Json::value_t::array); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(std::string& k) {
    Json& top = *stack_.back();
    keys_.back() = k;
    if (top.contains(k)) {
      fail("\"" + k + "\" a second time in the same object", "each key once", "the parser would keep only the last value");
      return false;
    }
    slot_ = &top[k];
    return true;
  }

  bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& e) {
    error_offset = position > 0 ? position - 1 : 0;
    if (e.id == 406) {  // out_of_range: a number beyond the range of a double
      fail(token, "a number whose magnitude is below 1.8e308", "");
    } else {
      fail(token.empty() ? "end of input" : "'" + token + "'", "valid JSON", e.what());
    }
    return false;
  }

 private:
  std::vector<Json*> stack_;      // open containers, outermost first
  std::vector<std::string> keys_; // the key being read in each open object ("" for arrays)
  Json* slot_ = nullptr;          // where the next value of the innermost object goes

  Json* place(Json&& v) {
    if (stack_.empty()) {
      root = std::move(v);
      return &root;
    }
    Json& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    *slot_ = std::move(v);
    return slot_;
  }
  bool put(Json&& v) {
    place(std::move(v));
    return true;
  }
  bool open(Json::value_t type) {
    if (static_cast<int>(stack_.size()) >= kMaxJsonDepth) {
      fail("nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels", "at most " + std::to_string(kMaxJsonDepth) + " nested objects or arrays", "");
      return false;
    }
    stack_.push_back(place(Json(type)));
    keys_.emplace_back();
    return true;
  }
  bool close() {
    stack_.pop_back();
    keys_.pop_back();
    return true;
  }
  // The path being read: each open container's current member; the innermost array's next index.
  std::string path() const {
    std::string out;
    for (std::size_t i = 0; i < stack_.size(); ++i) {
      const Json& c = *stack_[i];
      const bool innermost = i + 1 == stack_.size();
      if (c.is_array()) {
        const std::size_t n = c.size();
        if (innermost) out += "/" + std::to_string(n);
        else if (n > 0) out += "/" + std::to_string(n - 1);
      } else if (!keys_[i].empty() || c.size() > 0) {
        out += "/" + pointer_token(keys_[i]);
      }
      if (out.size() > 200) return out.substr(0, 200) + "...";
    }
    return out;
  }
  void fail(std::string value, std::string expected, std::string hint) {
    if (!error_expected.empty()) return;  // the first error wins
    error_path = path();
    error_value = std::move(value);
    error_expected = std::move(expected);
    error_hint = std::move(hint);
  }
};

}  // namespace

Json parse_json_text(std::string_view text, const std::string& source, const std::string& what) {
  DomBuilder dom;
  bool ok = false;
  try {
    ok = Json::sax_parse(text, &dom);
  } catch (const Json::exception& e) {  // not expected (the builder returns false instead); kept as a message
    throw InputError(what, source, "valid JSON", e.what());
  }
  if (ok) return std::move(dom.root);
  if (dom.error_offset == std::string_view::npos) {
    // Stopped by the builder (depth, duplicate key): find the place for the message.
    dom.error_offset = dom.error_expected.rfind("at most", 0) == 0 ? first_too_deep(text, kMaxJsonDepth) : std::string_view::npos;
  }
  // The path inside the document, under `what` when that is itself a JSON path (a section file).
  std::string path = dom.error_path;
  if (!what.empty() && what.front() == '/') path = what + path;
  if (path.empty()) path = what;
  std::string where = source;
  if (dom.error_offset != std::string_view::npos) where += ":" + line_column(text, dom.error_offset);
  throw InputError(path, dom.error_value + " (" + where + ")", dom.error_expected, dom.error_hint);
}

}  // namespace trainsim
