// Every calibrate parser on hostile input: the sample files of data/ mutated a few thousand times with a fixed
// seed (bytes flipped, NUL and invalid UTF-8 inserted, numbers replaced by NaN, inf, 1e400, negative values and
// 30,000 digits, lines cut, repeated or stretched to a megabyte), and random bytes. The promises checked are
// those of parser_invariants.hpp (the libFuzzer target checks the same ones).
#include <doctest/doctest.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "calibrate/import_common.hpp"
#include "parser_invariants.hpp"

using namespace trainsim;

namespace {
std::string slurp(const std::string& name) {
  std::ifstream in(std::string(TRAINSIM_TEST_DATA_DIR) + "/" + name, std::ios::binary);
  REQUIRE(in);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string mutate(std::string s, std::mt19937_64& rng) {
  const std::vector<std::string> words = {"nan", "-nan", "inf", "-inf", "1e400", "-1", "0", "-0", "1e-400", std::string(30000, '9'),
                                          std::string(1, '\0'), "\xff\xfe", "\xc3", "|", ",", "/", " ", "\n", "\r\n", "#", "GiB",
                                          "step", "iteration ", "tps:", "time", "ms", "Rank", "_perf", "dtype", "1,2,3", "N/A"};
  const int edits = 1 + static_cast<int>(rng() % 6);
  for (int e = 0; e < edits; ++e) {
    const std::size_t at = s.empty() ? 0 : rng() % (s.size() + 1);
    switch (rng() % 7) {
      case 0: if (!s.empty() && at < s.size()) s[at] = static_cast<char>(rng() & 0xFF); break;  // flip a byte
      case 1: s.insert(at, words[rng() % words.size()]); break;                                 // insert a hostile word
      case 2: {                                                                                  // replace a number
        std::size_t b = at;
        while (b < s.size() && !(s[b] >= '0' && s[b] <= '9')) ++b;
        std::size_t e2 = b;
        while (e2 < s.size() && ((s[e2] >= '0' && s[e2] <= '9') || s[e2] == '.')) ++e2;
        s.replace(b, e2 - b, words[rng() % 10]);
        break;
      }
      case 3: s.erase(at, rng() % 64); break;                                                    // cut
      case 4: {                                                                                  // repeat a line
        const std::size_t b = s.rfind('\n', at == 0 ? 0 : at - 1), e2 = s.find('\n', at);
        const std::size_t from = b == std::string::npos ? 0 : b + 1;
        s.insert(from, s.substr(from, (e2 == std::string::npos ? s.size() : e2 + 1) - from));
        break;
      }
      case 5: if (rng() % 20 == 0) s.insert(at, std::string(kMaxLineBytes + 1 - rng() % 3, "7a_ "[rng() % 4])); break;  // a megabyte
      default: s.insert(at, std::string(1 + rng() % 8, static_cast<char>(rng() & 0xFF))); break;
    }
  }
  return s;
}
}  // namespace

TEST_CASE("calibrate parsers on mutated sample files and random bytes keep their promises") {
  std::mt19937_64 rng(20261122);
  int runs = 0;
  for (const char* name : {"megatron_gpt175b.log", "torchtitan_llama3_8b.log", "generic_pytorch.log", "all_reduce_perf_8xh100.log",
                           "all_gather_perf_2x8_malformed.log", "gemm_h100.csv", "gemm_times.csv"}) {
    const std::string base = slurp(name);
    CHECK_MESSAGE(check_parsers(base).empty(), name);
    for (int i = 0; i < 300; ++i, ++runs) {
      const std::string input = mutate(base, rng);
      const std::string problem = check_parsers(input);
      if (!problem.empty()) FAIL_CHECK(name << " mutation " << i << ": " << problem);
    }
  }
  for (int i = 0; i < 300; ++i, ++runs) {
    std::string bytes(rng() % 512, '\0');
    for (char& c : bytes) c = static_cast<char>(rng() & 0xFF);
    const std::string problem = check_parsers(bytes);
    if (!problem.empty()) FAIL_CHECK("random bytes " << i << ": " << problem);
  }
  CHECK(runs == 2400);
}
