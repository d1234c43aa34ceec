#include "flag_checks.hpp"

#include <charconv>
#include <cstdint>
#include <string>

namespace trainsim::cli {

CLI::Validator seed_value() {
  return CLI::Validator(
      [](std::string& text) {
        std::uint64_t value = 0;
        const char* end = text.data() + text.size();
        const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        const auto [stop, error] = std::from_chars(text.data(), end, value);
        if (digits && error == std::errc() && stop == end) return std::string();
        return "got \"" + text + "\"; expected a seed from 0 to 18446744073709551615 (2^64 - 1)";
      },
      "SEED");
}

}  // namespace trainsim::cli
