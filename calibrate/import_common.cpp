#include <chrono>
#include <cstdlib>
#include <ctime>
#include "calibrate/import_common.hpp"

namespace trainsim {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string utc_timestamp() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string login_name() {
  for (const char* var : {"USER", "LOGNAME"})
    if (const char* v = std::getenv(var); v && *v) return v;
  return "unknown";
}


std::string describe_malformed(const std::vector<MalformedLine>& lines, std::size_t limit) {
  if (lines.empty()) return "";
  std::string s = std::to_string(lines.size()) + " malformed line" + (lines.size() > 1 ? "s" : "") + ": ";
  for (std::size_t i = 0; i < lines.size() && i < limit; ++i)
    s += (i ? ", " : "") + std::string("line ") + std::to_string(lines[i].line) + " (" + lines[i].reason + ")";
  if (lines.size() > limit) s += ", ...";
  return s;
}

}  // namespace trainsim
