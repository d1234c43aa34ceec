#include "table.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace trainsim {

namespace {
// A cell is numeric when it is a number with at most a short unit or percent after it ("12.5", "3.1 %").
bool numeric(const std::string& s) {
  if (s.empty()) return false;
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  if (end == s.c_str()) return false;
  std::string rest(end);
  return rest.empty() || rest == "%" || rest == " %" || rest == "x";
}
}  // namespace

void TextTable::print(std::ostream& os, const std::string& indent) const {
  std::vector<std::size_t> width(header_.size(), 0);
  for (std::size_t c = 0; c < header_.size(); ++c) width[c] = header_[c].size();
  for (const auto& r : rows_)
    for (std::size_t c = 0; c < r.size() && c < width.size(); ++c) width[c] = std::max(width[c], r[c].size());
  // A column is right-aligned (header too) when its first row holds a number.
  std::vector<bool> right_aligned(width.size(), false);
  if (!rows_.empty())
    for (std::size_t c = 1; c < width.size() && c < rows_[0].size(); ++c) right_aligned[c] = numeric(rows_[0][c]);
  auto line = [&](const std::vector<std::string>& cells, bool is_header) {
    os << indent;
    for (std::size_t c = 0; c < width.size(); ++c) {
      const std::string cell = c < cells.size() ? cells[c] : "";
      const std::size_t pad = width[c] - cell.size();
      const bool right = right_aligned[c] && (is_header || numeric(cell) || cell == "-");
      if (c) os << "  ";
      if (right) os << std::string(pad, ' ') << cell;
      else os << cell << (c + 1 < width.size() ? std::string(pad, ' ') : "");
    }
    os << '\n';
  };
  line(header_, true);
  std::size_t total = 0;
  for (auto w : width) total += w;
  os << indent << std::string(total + 2 * (width.size() - 1), '-') << '\n';
  for (const auto& r : rows_) line(r, false);
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string gib(double bytes, int digits) { return fixed(bytes / kBytesPerGiB, digits); }

TimeUnit time_unit_for(double max_seconds) {
  if (max_seconds >= 2 * 86400.0) return {"days", 86400.0};
  if (max_seconds >= 2 * 3600.0) return {"hours", 3600.0};
  return {"minutes", 60.0};
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace trainsim
