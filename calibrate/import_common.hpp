#pragma once
// What the importers share: a line they could not use, with its number and why, so that nothing in a
// user's measurement file is dropped without being counted and reported.
#include <string>
#include <vector>

namespace trainsim {

struct MalformedLine {
  long long line = 0;    // 1-based
  std::string text;      // the line as read (trimmed, at most 120 characters)
  std::string reason;
};

// `s` without leading and trailing blanks (spaces, tabs, CR, LF).
std::string trim(const std::string& s);
// Provenance of a profile written now: UTC time "2026-11-21T15:04:05Z" and the login name ($USER).
std::string utc_timestamp();
std::string login_name();

// "3 malformed lines: 12 (reason), 40 (reason), ..." (at most `limit` listed); empty when there are none.
std::string describe_malformed(const std::vector<MalformedLine>& lines, std::size_t limit = 10);

}  // namespace trainsim
