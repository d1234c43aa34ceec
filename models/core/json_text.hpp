#pragma once
// JSON text to a JSON value, for every file trainsim reads (scenarios, section files, Hugging Face configs,
// calibration profiles, plan JSON). Bad input becomes an InputError that names the file, line and column,
// and the JSON path where the parser stopped:
//  - syntax errors (what nlohmann's parser says, with line:column);
//  - numbers that do not fit a double ("1e400") instead of an internal "number overflow";
//  - nesting deeper than kMaxJsonDepth (a 60,000-level document must not exhaust the stack later, when
//    a message prints the value);
//  - the same key twice in one object (the parser would keep the last one silently).
// Pure: takes the text; reading files is the caller's job.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace trainsim {

// Scenarios nest five levels deep; a hundred leaves room for anything a person writes.
constexpr int kMaxJsonDepth = 100;

// `source` names the text in messages (a file path); `what` is the path the error is reported under when
// the text as a whole is at fault (e.g. "/hardware" for a section file, "--calibration" for a flag).
nlohmann::json parse_json_text(std::string_view text, const std::string& source, const std::string& what);

}  // namespace trainsim
