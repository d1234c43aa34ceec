#pragma once
// What the importers and the training-log reader share: reading lines and numbers from untrusted text
// without ever crashing, hanging or recursing (every parser here is a linear, bounded, hand-written scanner;
// no std::regex, whose recursive matcher overflows the stack on long lines), and a line they could not use,
// with its number and why, so that nothing in a user's measurement file is dropped without being counted and
// reported.
#include <cstddef>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim {

// Limits on untrusted input. A line longer than kMaxLineBytes is not read (it is consumed to its end and
// reported as malformed): no measurement or iteration line is longer than a few hundred bytes. A number field
// longer than kMaxNumberChars characters is malformed, not parsed ("1,234,567.123456789e+05" is 23).
constexpr std::size_t kMaxLineBytes = std::size_t{1} << 20;
constexpr std::size_t kMaxNumberChars = 64;
// The malformed lines kept with their text and reason; all of them are counted.
constexpr std::size_t kMaxListedMalformed = 1000;

struct MalformedLine {
  long long line = 0;    // 1-based
  std::string text;      // the line as read (trimmed, printable, at most 120 characters)
  std::string reason;
};

// The lines of one file that could not be used: every one counted (size()), the first kMaxListedMalformed
// listed with their text and reason (so a file of a billion broken lines does not take a billion entries).
class MalformedLines {
 public:
  void add(long long line, std::string_view text, std::string reason);
  std::size_t size() const { return static_cast<std::size_t>(count_); }  // all of them, listed or not
  bool empty() const { return count_ == 0; }
  const std::vector<MalformedLine>& listed() const { return listed_; }
  const MalformedLine& operator[](std::size_t i) const { return listed_[i]; }  // i < listed().size()
  std::vector<long long> line_numbers() const;  // of the listed ones
  // "1 iteration line skipped: line 10 (elapsed time per iteration (ms) \"13.7.2e\" is not a number), ..." (`what`
  // names the lines; at most `limit` listed).
  std::string describe(const std::string& what, std::size_t limit = 10) const;

 private:
  std::vector<MalformedLine> listed_;
  long long count_ = 0;
  long long last_line_ = 0;
};

// One line at a time from a stream or from text in memory, '\n'-separated, without the '\n' and a trailing
// '\r'. A line longer than kMaxLineBytes comes back empty with `too_long` set and its full length (it is read
// to its end and dropped, so memory stays bounded whatever the input). Linear in the input.
class LineReader {
 public:
  explicit LineReader(std::istream& in) : in_(&in) {}
  explicit LineReader(std::string_view text) : text_(text) {}
  struct Line {
    std::string_view text;
    long long number = 0;     // 1-based
    std::size_t length = 0;   // bytes in the file (without the '\n')
    bool too_long = false;
  };
  bool next(Line* line);
  long long lines() const { return number_; }

 private:
  std::istream* in_ = nullptr;
  std::string_view text_;
  std::size_t pos_ = 0;
  std::string buffer_;
  long long number_ = 0;
};
// "line of 3145728 bytes: longer than the 1 MiB limit, not read"
std::string too_long_reason(std::size_t length);

// `s` without leading and trailing blanks (spaces, tabs, CR, LF, VT, FF).
std::string trim(const std::string& s);
std::string_view trim_view(std::string_view s);
// `s` for a message: control characters (NUL included) and bytes that are not valid UTF-8 written as \xNN,
// cut to about `max_chars` characters with "..." at the end.
std::string printable(std::string_view s, std::size_t max_chars = 120);
// Provenance of a profile written now: UTC time "2026-11-21T15:04:05Z" and the login name ($USER).
std::string utc_timestamp();
std::string login_name();

// Numbers from untrusted text. Each reads the whole of `text` (no leading or trailing characters) and returns
// an empty string on success, else what is wrong, to follow the quoted field in a message: "is not a number",
// "is negative", "is zero", "is not finite", "is out of range", "has 30000 characters (a number has at most
// 64)".
//   read_number: a decimal floating-point number ("13.75", "-2", "6.0E-07"); `thousands` also accepts ','
//   between groups of three digits in the integer part ("6,512"); nan and inf are rejected.
//   read_positive: read_number, and > 0.
//   read_count: a non-negative decimal integer of at most 18 digits ("0", "8192").
std::string read_number(std::string_view text, double* value, bool thousands = false);
std::string read_positive(std::string_view text, double* value, bool thousands = false);
std::string read_count(std::string_view text, long long* value);
// `what "text" problem`, the text made printable and cut to 40 characters: `time "nan" is not finite`.
std::string field_problem(std::string_view what, std::string_view text, const std::string& problem);

// "3 malformed lines: line 12 (reason), line 40 (reason), ..." (at most `limit` listed); empty when none.
std::string describe_malformed(const MalformedLines& lines, std::size_t limit = 10);
std::string describe_malformed(const std::vector<MalformedLine>& lines, std::size_t limit = 10);

}  // namespace trainsim
