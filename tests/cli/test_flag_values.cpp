// Flag values trainsim parses itself (cli/flag_values.cpp), against values worked out by hand.
#include <doctest/doctest.h>

#include "cli/flag_values.hpp"
#include "models/core/errors.hpp"

using namespace trainsim;
using namespace trainsim::cli;

namespace {
// The flag an error names ("" when none was thrown).
template <class F>
std::string error_flag(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.path();
  }
  return "";
}
}  // namespace

TEST_CASE("scenario field flags: integers, numbers and booleans as typed, text as it is") {
  CHECK(field_flag_value(field_flag_for("/parallel/tp"), "4") == 4);
  CHECK(field_flag_value(field_flag_for("/parallel/tp"), "+4") == 4);
  CHECK(error_flag([] { field_flag_value(field_flag_for("/parallel/tp"), " 4"); }) == "--tp");  // a space is not a digit
  CHECK(error_flag([] { field_flag_value(field_flag_for("/parallel/tp"), "4x"); }) == "--tp");
  CHECK(error_flag([] { field_flag_value(field_flag_for("/parallel/tp"), "99999999999999999999"); }) == "--tp");  // beyond 2^63
  CHECK(field_flag_value(field_flag_for("/hardware/network/oversubscription"), "2.5") == 2.5);
  CHECK(error_flag([] { field_flag_value(field_flag_for("/hardware/network/oversubscription"), "inf"); }) == "--oversubscription");
  CHECK(error_flag([] { field_flag_value(field_flag_for("/hardware/network/oversubscription"), "nan"); }) == "--oversubscription");
  CHECK(field_flag_value(field_flag_for("/parallel/sequence_parallel"), "yes") == true);
  CHECK(field_flag_value(field_flag_for("/parallel/sequence_parallel"), "0") == false);
  CHECK(error_flag([] { field_flag_value(field_flag_for("/parallel/sequence_parallel"), "TRUE"); }) == "--sequence-parallel");
  CHECK(field_flag_value(field_flag_for("/model"), "llama3-8b") == "llama3-8b");
  CHECK(std::string(field_flag_for("/training/zero_stage").flag) == "--zero");
}

TEST_CASE("slowdowns: ID:FACTOR split at the last colon, FACTOR from 1 to 1000, an index below the count") {
  CHECK(id_factor("--slow-link", "leaf-0:up:2") == std::pair<std::string, double>{"leaf-0:up", 2.0});
  CHECK(error_flag([] { id_factor("--slow-link", ":2"); }) == "--slow-link");
  CHECK(error_flag([] { id_factor("--slow-link", "a:0.5"); }) == "--slow-link");  // a speed-up is not a slowdown
  CHECK(error_flag([] { id_factor("--slow-link", "a:1001"); }) == "--slow-link");
  CHECK(error_flag([] { id_factor("--slow-link", "a:1.5x"); }) == "--slow-link");
  CHECK(index_factor("--straggler", "7:1.5", 8, "GPU", "GPU rank") == std::pair<int, double>{7, 1.5});
  CHECK(error_flag([] { index_factor("--straggler", "8:1.5", 8, "GPU", "GPU rank"); }) == "--straggler");  // ranks 0..7
  CHECK(error_flag([] { index_factor("--straggler", "-1:1.5", 8, "GPU", "GPU rank"); }) == "--straggler");
  CHECK(error_flag([] { index_factor("--slow-node", "1.0:2", 4, "NODE", "node"); }) == "--slow-node");
}

TEST_CASE("plan --gpus: one count, a doubling range or a list") {
  CHECK(parse_gpu_counts("512") == std::vector<int>{512});
  CHECK(parse_gpu_counts("64..1024") == std::vector<int>{64, 128, 256, 512, 1024});
  CHECK(parse_gpu_counts("64..1000") == std::vector<int>{64, 128, 256, 512});  // doubling stops below B
  CHECK(parse_gpu_counts("64,96,128") == std::vector<int>{64, 96, 128});
  CHECK(parse_gpu_counts("1..1048576").size() == 21);  // 2^0 .. 2^20
  CHECK(error_flag([] { parse_gpu_counts("1024..64"); }) == "--gpus");
  CHECK(error_flag([] { parse_gpu_counts("64,,128"); }) == "--gpus");
  CHECK(error_flag([] { parse_gpu_counts("0"); }) == "--gpus");
  CHECK(error_flag([] { parse_gpu_counts("1048577"); }) == "--gpus");  // above 2^20
  std::string many = "1";
  for (int i = 0; i < 64; ++i) many += ",1";  // 65 counts
  CHECK(error_flag([&] { parse_gpu_counts(many); }) == "--gpus");
}

TEST_CASE("plan --budget: money or a duration, with its unit") {
  CHECK(parse_budget("$250000").max_cost == 250000);
  CHECK(parse_budget("$250000").max_time_s == 0);
  CHECK(parse_budget("30d").max_time_s == 30 * 86400);  // 2,592,000 s
  CHECK(error_flag([] { parse_budget("250000"); }) == "--budget");  // dollars or seconds?
  CHECK(error_flag([] { parse_budget("$0"); }) == "--budget");
  CHECK(error_flag([] { parse_budget("soon"); }) == "--budget");
}

TEST_CASE("comma lists drop empty items") {
  CHECK(split_list("fifo,,easy,") == std::vector<std::string>{"fifo", "easy"});
  CHECK(split_list("").empty());
}
