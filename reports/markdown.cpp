#include "markdown.hpp"

#include "models/core/utf8.hpp"

namespace trainsim::md {

std::string text(const std::string& s) {
  std::string out;
  for (char c : valid_utf8(s)) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) out += ' ';  // a line break would start a new block
    else out += c;
  }
  return out;
}

std::string cell(const std::string& s) {
  std::string out;
  for (char c : text(s)) {
    if (c == '|') out += "\\|";
    else out += c;
  }
  return out.empty() ? " " : out;
}

void table(std::ostream& os, const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& numeric) {
  os << "|";
  for (const auto& h : header) os << " " << cell(h) << " |";
  os << "\n|";
  for (std::size_t i = 0; i < header.size(); ++i) os << (i < numeric.size() && numeric[i] ? " ---: |" : " --- |");
  os << "\n";
  for (const auto& row : rows) {
    os << "|";
    for (std::size_t i = 0; i < header.size(); ++i) os << " " << cell(i < row.size() ? row[i] : "") << " |";
    os << "\n";
  }
  os << "\n";
}

void heading(std::ostream& os, const std::string& text, int level) { os << std::string(static_cast<std::size_t>(level < 1 ? 1 : level), '#') << " " << md::text(text) << "\n\n"; }

}  // namespace trainsim::md
