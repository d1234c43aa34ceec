#include "calibrate/import_common.hpp"

namespace trainsim {

std::string describe_malformed(const std::vector<MalformedLine>& lines, std::size_t limit) {
  if (lines.empty()) return "";
  std::string s = std::to_string(lines.size()) + " malformed line" + (lines.size() > 1 ? "s" : "") + ": ";
  for (std::size_t i = 0; i < lines.size() && i < limit; ++i)
    s += (i ? ", " : "") + std::string("line ") + std::to_string(lines[i].line) + " (" + lines[i].reason + ")";
  if (lines.size() > limit) s += ", ...";
  return s;
}

}  // namespace trainsim
