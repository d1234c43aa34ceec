#include "calibrate/import_common.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace trainsim {

void MalformedLines::add(long long line, std::string_view text, std::string reason) {
  // One entry per line: a second problem on the same line joins the first, so counts stay counts of lines.
  if (count_ > 0 && line == last_line_) {
    if (!listed_.empty() && listed_.back().line == line) listed_.back().reason += "; " + reason;
    return;
  }
  last_line_ = line;
  ++count_;
  if (listed_.size() < kMaxListedMalformed) listed_.push_back({line, printable(trim_view(text)), std::move(reason)});
}

std::string MalformedLines::describe(const std::string& what, std::size_t limit) const {
  std::string s = std::to_string(size()) + " " + what + " line" + (size() == 1 ? "" : "s") + " skipped: ";
  for (std::size_t i = 0; i < listed_.size() && i < limit; ++i)
    s += (i ? ", " : "") + std::string("line ") + std::to_string(listed_[i].line) + " (" + listed_[i].reason + ")";
  if (size() > std::min(limit, listed_.size())) s += ", ...";
  return s;
}

std::vector<long long> MalformedLines::line_numbers() const {
  std::vector<long long> out;
  out.reserve(listed_.size());
  for (const auto& m : listed_) out.push_back(m.line);
  return out;
}

bool LineReader::next(Line* line) {
  std::size_t length = 0;
  if (in_) {
    std::streambuf* sb = in_->rdbuf();
    if (!sb) return false;
    buffer_.clear();
    bool any = false;
    for (int c = sb->sbumpc(); c != std::char_traits<char>::eof(); c = sb->sbumpc()) {
      any = true;
      if (c == '\n') break;
      if (length < kMaxLineBytes) buffer_.push_back(static_cast<char>(c));
      ++length;
    }
    if (!any) return false;
    line->text = buffer_;
  } else {
    if (pos_ >= text_.size()) return false;
    const void* nl = std::memchr(text_.data() + pos_, '\n', text_.size() - pos_);
    const std::size_t end = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - text_.data()) : text_.size();
    length = end - pos_;
    line->text = length <= kMaxLineBytes ? text_.substr(pos_, length) : std::string_view();
    pos_ = nl ? end + 1 : end;
  }
  line->number = ++number_;
  line->length = length;
  line->too_long = length > kMaxLineBytes;
  if (line->too_long) line->text = {};
  else if (!line->text.empty() && line->text.back() == '\r') line->text.remove_suffix(1);
  return true;
}

std::string too_long_reason(std::size_t length) {
  return "line of " + std::to_string(length) + " bytes: longer than the " + std::to_string(kMaxLineBytes >> 20) + " MiB limit, not read";
}

std::string_view trim_view(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n\v\f");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n\v\f");
  return s.substr(b, e - b + 1);
}

std::string trim(const std::string& s) { return std::string(trim_view(s)); }

namespace {
// Length of the valid UTF-8 sequence starting at s[i] (2 to 4 bytes), or 0 (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF).
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
  else return 0;
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  return n;
}
}  // namespace

std::string printable(std::string_view s, std::size_t max_chars) {
  std::string out;
  std::size_t chars = 0, i = 0;
  while (i < s.size() && chars < max_chars) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++i;
    } else if (const std::size_t n = c >= 0x80 ? utf8_sequence(s, i) : 0; n > 0) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      static const char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
      ++i;
    }
    ++chars;
  }
  if (i < s.size()) out += "...";
  return out;
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

namespace {
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// "6,512" -> "6512" into `out` when the commas separate groups of three digits in the integer part.
bool strip_thousands(std::string_view s, std::string* out) {
  std::size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  out->assign(s.substr(0, i));
  std::size_t group = 0;
  bool comma = false;
  for (; i < s.size() && (is_digit(s[i]) || s[i] == ','); ++i) {
    if (s[i] == ',') {
      if (group == 0 || (comma && group != 3) || (!comma && group > 3)) return false;
      comma = true, group = 0;
    } else {
      out->push_back(s[i]);
      ++group;
    }
  }
  if (comma && group != 3) return false;
  out->append(s.substr(i));
  return true;
}
}  // namespace

std::string read_number(std::string_view text, double* value, bool thousands) {
  if (text.empty()) return "is empty";
  if (text.size() > kMaxNumberChars)
    return "has " + std::to_string(text.size()) + " characters (a number has at most " + std::to_string(kMaxNumberChars) + ")";
  std::string stripped;
  if (thousands && text.find(',') != std::string_view::npos) {
    if (!strip_thousands(text, &stripped)) return "is not a number";
    text = stripped;
  }
  std::string_view s = text;
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);  // from_chars takes '-' only
  if (s.empty() || s[0] == '+') return "is not a number";
  // from_chars also reads "nan", "inf", "infinity": numbers, but not measurements.
  const std::size_t first = s[0] == '-' ? 1 : 0;
  if (first < s.size() && !is_digit(s[first]) && s[first] != '.') {
    std::string word(s.substr(first));
    for (char& c : word) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return word == "nan" || word == "inf" || word == "infinity" || word.starts_with("nan(") ? "is not finite" : "is not a number";
  }
  double v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec == std::errc::result_out_of_range) return "is out of range";
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return "is not a number";
  if (!std::isfinite(v)) return "is not finite";
  *value = v;
  return "";
}

std::string read_positive(std::string_view text, double* value, bool thousands) {
  double v = 0;
  std::string problem = read_number(text, &v, thousands);
  if (!problem.empty()) return problem;
  if (v < 0) return "is negative";
  if (v == 0) return "is zero";
  *value = v;
  return "";
}

std::string read_count(std::string_view text, long long* value) {
  if (text.empty()) return "is empty";
  const bool negative = text[0] == '-';
  const std::string_view digits = negative ? text.substr(1) : text;
  if (digits.empty()) return "is not a whole number";
  for (char c : digits)
    if (!is_digit(c)) return "is not a whole number";
  if (digits.size() > 18) return "has " + std::to_string(digits.size()) + " digits (at most 18)";
  if (negative) return "is negative";
  long long v = 0;
  const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (r.ec != std::errc() || r.ptr != digits.data() + digits.size()) return "is not a whole number";
  *value = v;
  return "";
}

std::string field_problem(std::string_view what, std::string_view text, const std::string& problem) {
  return std::string(what) + " \"" + printable(text, 40) + "\" " + problem;
}

namespace {
std::string describe(const std::vector<MalformedLine>& lines, std::size_t total, std::size_t limit) {
  if (total == 0) return "";
  std::string s = std::to_string(total) + " malformed line" + (total > 1 ? "s" : "") + ": ";
  for (std::size_t i = 0; i < lines.size() && i < limit; ++i)
    s += (i ? ", " : "") + std::string("line ") + std::to_string(lines[i].line) + " (" + lines[i].reason + ")";
  if (total > limit || lines.size() < total) s += ", ...";
  return s;
}
}  // namespace

std::string describe_malformed(const MalformedLines& lines, std::size_t limit) { return describe(lines.listed(), lines.size(), limit); }
std::string describe_malformed(const std::vector<MalformedLine>& lines, std::size_t limit) { return describe(lines, lines.size(), limit); }

}  // namespace trainsim
