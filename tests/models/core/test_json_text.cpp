// JSON text to a document: every failure is an InputError naming the file, line:column and the JSON path; nothing
// recursive, nothing unbounded.
#include <doctest/doctest.h>

#include <string>

#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"
#include "models/core/json_text.hpp"

using namespace trainsim;

namespace {
InputError error_of(const std::string& text, const std::string& what = "scenario") {
  try {
    parse_json_text(text, "f.json", what);
  } catch (const InputError& e) {
    return e;
  }
  FAIL("expected an InputError for " << text.substr(0, 80));
  return InputError("", "", "");
}
}  // namespace

TEST_CASE("valid JSON parses as nlohmann would") {
  const auto doc = parse_json_text(R"({"a": [1, 2.5, "x", null, true], "b": {"c": -3}})", "f.json", "scenario");
  CHECK(doc["a"][1].get<double>() == 2.5);
  CHECK(doc["b"]["c"].get<int>() == -3);
  CHECK(doc == nlohmann::json::parse(R"({"a": [1, 2.5, "x", null, true], "b": {"c": -3}})"));
}

TEST_CASE("a number beyond a double names its path, line and column instead of an internal error") {
  const InputError e = error_of("{\n  \"training\": {\"seq_len\": 1e400}\n}");
  CHECK(e.path() == "/training/seq_len");
  CHECK(e.value().find("1e400") != std::string::npos);
  CHECK(e.value().find("f.json:2:") != std::string::npos);  // line 2
  // In an array, the index of the element being read.
  CHECK(error_of(R"({"a": [1, 2, -1e999]})").path() == "/a/2");
}

TEST_CASE("a section file's errors are reported under the section's path") {
  CHECK(error_of(R"({"gpu": {"memory": 1e400}})", "/hardware").path() == "/hardware/gpu/memory");
}

TEST_CASE("nesting is bounded: 60,000 levels are an input error, not a stack overflow") {
  const std::string deep = std::string(60000, '[') + std::string(60000, ']');
  const InputError e = error_of(deep);
  CHECK(e.value().find("nesting deeper than 100 levels") != std::string::npos);
  CHECK(e.value().find("f.json:1:101") != std::string::npos);  // the 101st bracket
  CHECK(std::string(e.what()).size() < 1000);
  // 100 levels are fine.
  CHECK_NOTHROW(parse_json_text(std::string(100, '[') + std::string(100, ']'), "f.json", "x"));
}

TEST_CASE("the same key twice in one object is an error, not a silent last-one-wins") {
  const InputError e = error_of(R"({"training": {"seq_len": 2048, "seq_len": 4096}})");
  CHECK(e.path() == "/training/seq_len");
  CHECK(e.value().find("a second time") != std::string::npos);
}

TEST_CASE("syntax errors keep nlohmann's explanation with line:column") {
  const InputError e = error_of("{\n\"a\": 1,\n}");
  CHECK(e.value().find("f.json:3:") != std::string::npos);
  CHECK(e.expected() == "valid JSON");
}

TEST_CASE("messages print control characters and invalid UTF-8 escaped, and long values cut") {
  const InputError nul("/training/a" + std::string(1, '\0') + "b", "1", "no such field");
  CHECK(std::string(nul.what()) == "/training/a\\x00b: got 1; expected no such field");
  const InputError bad_utf8("/model", std::string("\"x\xff\""), "a name");
  CHECK(std::string(bad_utf8.what()) == "/model: got \"x\\xff\"; expected a name");
  const InputError accents("/model", "\"caf\xc3\xa9\"", "a name");  // valid UTF-8 stays
  CHECK(std::string(accents.what()) == "/model: got \"caf\xc3\xa9\"; expected a name");
  const InputError long_value("/x", std::string(30000, '9'), "a number");
  CHECK(std::string(long_value.what()).size() < 400);
  CHECK(std::string(long_value.what()).find("30000 characters") != std::string::npos);
}

TEST_CASE("json_value_text stays short and shallow for any value") {
  nlohmann::json deep = nlohmann::json::array();
  nlohmann::json* at = &deep;
  for (int i = 0; i < 1000; ++i) {
    at->push_back(nlohmann::json::array());
    at = &(*at)[0];
  }
  CHECK(json_value_text(deep).size() <= 80);
  CHECK(json_value_text(nlohmann::json(std::string("\xff\xfe"))).size() > 0);  // invalid UTF-8: replaced, no throw
}
