#include "markdown.hpp"

namespace trainsim::md {

std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
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

void heading(std::ostream& os, const std::string& text, int level) { os << std::string(static_cast<std::size_t>(level < 1 ? 1 : level), '#') << " " << text << "\n\n"; }

}  // namespace trainsim::md
