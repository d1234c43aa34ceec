#include "html_document.hpp"

#include <cctype>
#include <string_view>

#include "svg_chart.hpp"

namespace trainsim::html {

namespace {

// Readable on a laptop and on paper: system fonts, dark text on white, tables that do not split across pages.
constexpr const char* kStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;background:#fff;margin:2rem auto;max-width:1100px;padding:0 1rem;line-height:1.45}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #ccc;padding-bottom:.2rem}
h3{font-size:1.05rem}.subtitle{color:#555;margin-top:0}
table{border-collapse:collapse;margin:.8rem 0;font-size:.9rem}th,td{border:1px solid #d0d0d0;padding:.25rem .55rem;text-align:left}
th{background:#f2f2f2}td.num{text-align:right;font-variant-numeric:tabular-nums}
figure{margin:1rem 0}figcaption{color:#444;font-size:.9rem;margin-top:.3rem}svg.chart{max-width:100%;height:auto}
.multiples{display:grid;grid-template-columns:repeat(auto-fill,minmax(330px,1fr));gap:.4rem 1rem}
dl{display:grid;grid-template-columns:max-content auto;gap:.2rem 1rem}dt{font-weight:600}dd{margin:0}
footer{margin-top:2.5rem;color:#666;font-size:.8rem}
@media print{body{margin:0;max-width:none}h2{break-after:avoid}figure,table{break-inside:avoid}}
)";

}  // namespace

std::string escape(const std::string& s) { return svg::escape_xml(s); }

Document::Document(std::string title, std::string subtitle) : title_(std::move(title)), subtitle_(std::move(subtitle)) {}

void Document::heading(const std::string& text, int level) {
  const std::string tag = "h" + std::to_string(level < 2 ? 2 : level > 4 ? 4 : level);
  body_ += "<" + tag + ">" + escape(text) + "</" + tag + ">\n";
}

void Document::paragraph(const std::string& text) { body_ += "<p>" + escape(text) + "</p>\n"; }

void Document::table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& numeric) {
  auto is_num = [&](std::size_t i) { return i < numeric.size() && numeric[i]; };
  body_ += "<table>\n<thead><tr>";
  for (std::size_t i = 0; i < header.size(); ++i) body_ += (is_num(i) ? "<th class=\"num\">" : "<th>") + escape(header[i]) + "</th>";
  body_ += "</tr></thead>\n<tbody>\n";
  for (const auto& row : rows) {
    body_ += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i) body_ += (is_num(i) ? "<td class=\"num\">" : "<td>") + escape(row[i]) + "</td>";
    body_ += "</tr>\n";
  }
  body_ += "</tbody>\n</table>\n";
}

void Document::figure(const std::string& svg, const std::string& caption) {
  body_ += "<figure>\n" + svg + "\n<figcaption>" + escape(caption) + "</figcaption>\n</figure>\n";
}

void Document::figures(const std::vector<std::string>& svgs, const std::string& caption) {
  body_ += "<figure>\n<div class=\"multiples\">\n";
  for (const std::string& svg : svgs) body_ += svg + "\n";
  body_ += "</div>\n<figcaption>" + escape(caption) + "</figcaption>\n</figure>\n";
}

std::string link_target(const std::string& target) {
  // RFC 3986: an https URL keeps its reserved characters; a file path has every byte but the unreserved ones and
  // '/' percent-encoded (section 2.1), so no part of it ("javascript:", "data:", a quote) reads as a scheme or
  // leaves the attribute. A relative path starts with "./" so its first segment can never be taken for a scheme.
  const bool https = target.rfind("https://", 0) == 0;
  static const char hex[] = "0123456789ABCDEF";
  std::string out = https || target.empty() || target[0] == '/' || target[0] == '.' ? "" : "./";
  auto hex_digit = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  for (std::size_t i = 0; i < target.size(); ++i) {
    const char ch = target[i];
    const auto u = static_cast<unsigned char>(ch);
    // In a URL a '%' stays only as the start of an escape (%XX); anything else is encoded as %25.
    const bool escape_start = ch == '%' && i + 2 < target.size() && hex_digit(target[i + 1]) && hex_digit(target[i + 2]);
    const bool keep = std::isalnum(u) || std::string_view("-._~/").find(ch) != std::string_view::npos ||
                      (https && u > 0x20 && u < 0x7f && std::string_view("\"'<>\\^`{|}").find(ch) == std::string_view::npos && (ch != '%' || escape_start));
    if (keep) {
      out += ch;
    } else {
      out += '%';
      out += hex[u >> 4];
      out += hex[u & 15];
    }
  }
  return out;
}

void Document::link(const std::string& target, const std::string& text) {
  body_ += "<p><a href=\"" + escape(link_target(target)) + "\">" + escape(text) + "</a></p>\n";
}

void Document::facts(const std::vector<std::pair<std::string, std::string>>& items) {
  body_ += "<dl>\n";
  for (const auto& [k, v] : items) body_ += "<dt>" + escape(k) + "</dt><dd>" + escape(v) + "</dd>\n";
  body_ += "</dl>\n";
}

std::string Document::str() const {
  std::string page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  page += "<title>" + escape(title_) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  page += "<h1>" + escape(title_) + "</h1>\n";
  if (!subtitle_.empty()) page += "<p class=\"subtitle\">" + escape(subtitle_) + "</p>\n";
  page += body_;
  page += "<footer>Written by trainsim. Every number comes from the models named in the project's README.</footer>\n</body>\n</html>\n";
  return page;
}

}  // namespace trainsim::html
