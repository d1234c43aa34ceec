#pragma once
// Well-formed UTF-8 (RFC 3629, section 4): what every writer of text (messages, HTML, Markdown, CSV) passes on, so
// that bytes from a trace or a file name that are not UTF-8 never reach an output verbatim.
#include <cstddef>
#include <string>
#include <string_view>

namespace trainsim {

// Length of the well-formed UTF-8 sequence that starts at s[i] (1 for ASCII), 0 when none starts there: a stray
// continuation byte, a truncated sequence, an overlong form, a surrogate or a code point above U+10FFFF.
inline std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto u = static_cast<unsigned char>(s[i]);
  if (u < 0x80) return 1;
  const std::size_t len = u >= 0xc2 && u <= 0xdf ? 2 : u >= 0xe0 && u <= 0xef ? 3 : u >= 0xf0 && u <= 0xf4 ? 4 : 0;
  if (len == 0 || i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
  const auto b1 = static_cast<unsigned char>(s[i + 1]);
  if (len == 3 && ((u == 0xe0 && b1 < 0xa0) || (u == 0xed && b1 > 0x9f))) return 0;  // overlong, surrogate
  if (len == 4 && ((u == 0xf0 && b1 < 0x90) || (u == 0xf4 && b1 > 0x8f))) return 0;  // overlong, above U+10FFFF
  return len;
}

// `s` with every byte that starts no well-formed sequence replaced by U+FFFD, the replacement character.
inline std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = utf8_sequence_length(s, i);
    if (len == 0) {
      out += "\xef\xbf\xbd";
      ++i;
    } else {
      out.append(s.substr(i, len));
      i += len;
    }
  }
  return out;
}

}  // namespace trainsim
