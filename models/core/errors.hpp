#pragma once
// Errors about user input. Every one names the JSON path, the offending value, what was expected and,
// when obvious, a fix; the CLI turns them into exit code 2.
#include <stdexcept>
#include <string>

#include "models/core/utf8.hpp"

namespace trainsim {

class InputError : public std::runtime_error {
 public:
  InputError(std::string path, std::string value, std::string expected, std::string hint = {})
      : std::runtime_error(compose(path, value, expected, hint)),
        path_(std::move(path)), value_(std::move(value)), expected_(std::move(expected)), hint_(std::move(hint)) {}

  const std::string& path() const { return path_; }
  const std::string& value() const { return value_; }
  const std::string& expected() const { return expected_; }
  const std::string& hint() const { return hint_; }

 private:
  static std::string compose(const std::string& path, const std::string& value, const std::string& expected,
                             const std::string& hint) {
    std::string msg = printable(shortened(path.empty() ? std::string("/") : path)) + ": got " + printable(shortened(value)) +
                      "; expected " + printable(expected);
    if (!hint.empty()) msg += " (" + printable(hint) + ")";
    return msg;
  }
  // A path or value of pathological length (a 30,000-digit number, a megabyte key) is cut in the message.
  static std::string shortened(const std::string& s) { return s.size() <= 300 ? s : s.substr(0, 240) + "...(" + std::to_string(s.size()) + " characters)"; }
  // Control characters (a NUL in a key would end the message early on a terminal) and bytes that are not valid
  // UTF-8 as \xNN, so every message prints as valid UTF-8 text.
  static std::string printable(const std::string& s) {
    static const char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(s.size());
    auto escape = [&](unsigned char u) {
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    };
    for (std::size_t i = 0; i < s.size();) {
      const auto u = static_cast<unsigned char>(s[i]);
      if (u < 0x80) {
        if (u >= 0x20 && u != 0x7f) out += s[i];
        else escape(u);
        ++i;
        continue;
      }
      if (const std::size_t len = utf8_sequence_length(s, i); len > 0) {
        out.append(s, i, len);
        i += len;
      } else {
        escape(u);
        ++i;
      }
    }
    return out;
  }
  std::string path_, value_, expected_, hint_;
};

}  // namespace trainsim
