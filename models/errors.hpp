#pragma once
// Errors about user input. Every one names the JSON path, the offending value, what was expected and,
// when obvious, a fix; the CLI turns them into exit code 2.
#include <stdexcept>
#include <string>

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
    std::string msg = (path.empty() ? std::string("/") : path) + ": got " + value + "; expected " + expected;
    if (!hint.empty()) msg += " (" + hint + ")";
    return msg;
  }
  std::string path_, value_, expected_, hint_;
};

}  // namespace trainsim
