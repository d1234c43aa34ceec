#include "table.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "models/core/units.hpp"
#include "models/core/utf8.hpp"

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

// A plain decimal number ("-3", "1.5e-3"): no spreadsheet reads it as a formula, so it is never prefixed.
bool plain_number(const std::string& s) {
  std::size_t i = s[0] == '-' || s[0] == '+' ? 1 : 0, digits = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
  if (i < s.size() && s[i] == '.')
    for (++i; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) ++digits;
  if (digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    if (++i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    const std::size_t exponent_start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    if (i == exponent_start) return false;
  }
  return i == s.size();
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

std::string gib(double bytes, int digits) { return fixed(bytes / kBytesPerGiB, digits); }

TimeUnit time_unit_for(double max_seconds) {
  if (max_seconds >= 2 * 86400.0) return {"days", 86400.0};
  if (max_seconds >= 2 * kSecondsPerHour) return {"hours", kSecondsPerHour};
  return {"minutes", 60.0};
}

std::string csv_field(const std::string& s) {
  std::string text;
  for (char c : valid_utf8(s))
    if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n' || c == '\r') text += c;  // no NUL or other control bytes
  // OWASP, "CSV Injection": a cell starting with = + - @ tab or CR is a formula to Excel and LibreOffice; a leading
  // ' makes it text. Numbers stay numbers.
  const bool formula = !text.empty() && std::string_view("=+-@\t\r").find(text[0]) != std::string_view::npos && !plain_number(text);
  if (formula) text.insert(0, 1, '\'');
  if (!formula && text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace trainsim
