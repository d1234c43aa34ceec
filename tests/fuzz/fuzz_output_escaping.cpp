// libFuzzer target: any bytes as user text through every output escaper (reports/): what comes out must be text
// of its format and nothing more. For each input:
//   html::escape    valid UTF-8; no < > " ' and no control character but tab, newline and carriage return;
//   md::text        valid UTF-8; no < >, no control character (a line break would start a row or a heading);
//   md::cell        md::text's promises, and every | escaped;
//   csv_field       valid UTF-8 without NUL; a quoted field is one RFC 4180 field (inner quotes doubled); a field
//                   a spreadsheet would read as a formula starts with ', quoted;
//   link_target     only unreserved characters, '/' and %XX escapes (or an https:// URL without quotes, angle
//                   brackets or spaces); never a scheme of its own.
// Anything else is a finding (abort).
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "models/core/utf8.hpp"
#include "reports/html_document.hpp"
#include "reports/markdown.hpp"
#include "reports/table.hpp"

using namespace trainsim;

namespace {

[[noreturn]] void broken(const char* what, const std::string& out) {
  std::fprintf(stderr, "broken promise (%s): %zu bytes out\n", what, out.size());
  std::abort();
}

bool is_utf8(const std::string& s) { return valid_utf8(s) == s; }

void check_html(const std::string& in) {
  const std::string out = html::escape(in);
  if (!is_utf8(out)) broken("html::escape: not UTF-8", out);
  for (char c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '<' || c == '>' || c == '"' || c == '\'') broken("html::escape: markup character", out);
    if (u < 0x20 && c != '\t' && c != '\n' && c != '\r') broken("html::escape: control character", out);
  }
}

void check_markdown(const std::string& in) {
  const std::string text = md::text(in), cell = md::cell(in);
  for (const std::string* out : {&text, &cell}) {
    if (!is_utf8(*out)) broken("md: not UTF-8", *out);
    for (char c : *out)
      if (c == '<' || c == '>' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) broken("md: markup or control character", *out);
  }
  for (std::size_t i = 0; i < cell.size(); ++i)
    if (cell[i] == '|' && (i == 0 || cell[i - 1] != '\\')) broken("md::cell: a bare |", cell);
}

void check_csv(const std::string& in) {
  const std::string out = csv_field(in);
  if (!is_utf8(out) || out.find('\0') != std::string::npos) broken("csv_field: not UTF-8 text", out);
  std::string value = out;
  if (!out.empty() && out.front() == '"') {
    if (out.size() < 2 || out.back() != '"') broken("csv_field: an open quote", out);
    value.clear();
    for (std::size_t i = 1; i + 1 < out.size(); ++i) {
      if (out[i] == '"') {
        if (i + 2 >= out.size() || out[i + 1] != '"') broken("csv_field: a lone quote inside", out);
        ++i;
      }
      value += out[i];
    }
  } else if (out.find_first_of(",\"\n\r") != std::string::npos) {
    broken("csv_field: a separator outside quotes", out);
  }
  // = @ tab CR never start a value; + and - only a number's.
  if (!value.empty() && std::string_view("=@\t\r").find(value[0]) != std::string_view::npos) broken("csv_field: a formula", out);
  if (!value.empty() && (value[0] == '-' || value[0] == '+') && value.find_first_not_of("-+.0123456789eE") != std::string::npos)
    broken("csv_field: a formula", out);
}

void check_link(const std::string& in) {
  const std::string out = html::link_target(in);
  const bool https = out.rfind("https://", 0) == 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto u = static_cast<unsigned char>(out[i]);
    const bool plain = (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || std::string_view("-._~/%").find(out[i]) != std::string_view::npos;
    if (!plain && !(https && u > 0x20 && u < 0x7f && std::string_view("\"'<>\\^`{|}").find(out[i]) == std::string_view::npos))
      broken("link_target: a character outside a URL", out);
    if (out[i] == '%' && (i + 2 >= out.size() || !std::isxdigit(static_cast<unsigned char>(out[i + 1])) || !std::isxdigit(static_cast<unsigned char>(out[i + 2]))))
      broken("link_target: a bad %XX", out);
  }
  // A scheme is letters up to a ':' before any '/': a file path's ':' is always encoded.
  const std::size_t colon = out.find(':'), slash = out.find('/');
  if (!https && colon != std::string::npos && (slash == std::string::npos || colon < slash)) broken("link_target: reads as a scheme", out);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string in(reinterpret_cast<const char*>(data), size);
  check_html(in);
  check_markdown(in);
  check_csv(in);
  check_link(in);
  return 0;
}
