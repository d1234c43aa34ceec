// Training-log parsing: the sample logs in data/ are written by hand in the formats Megatron-LM,
// torchtitan and plain PyTorch loops print; expected values are read off the lines.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "calibrate/training_log.hpp"

using namespace trainsim;

namespace {
TrainingLog parse_file(const std::string& name) {
  std::ifstream in(std::string(TRAINSIM_TEST_DATA_DIR) + "/" + name);
  REQUIRE(in);
  return parse_training_log(in);
}
}  // namespace

TEST_CASE("Megatron-LM log: iteration times, TFLOP/s, memory report, malformed line counted") {
  TrainingLog log = parse_file("megatron_gpt175b.log");
  CHECK(log.format == "megatron");
  REQUIRE(log.iterations.size() == 6);  // iteration 6 has a garbled time
  CHECK(log.malformed_lines == std::vector<long long>{10});  // the 10th line of the file
  CHECK(log.iterations[0].time_s == doctest::Approx(30.5123));
  CHECK(log.iterations[1].tflops_per_gpu == doctest::Approx(158.9));
  CHECK(log.max_allocated_bytes == doctest::Approx(58123.75 * 1048576.0));
  // Skipping the first (warm-up) iteration: 13.801, 13.7504, 13.7496, 13.7022, 13.760 -> median 13.7504.
  LogSummary s = summarize(log);
  CHECK(s.used == 5);
  CHECK(s.median_time_s == doctest::Approx(13.7504));
  CHECK(s.median_tflops_per_gpu == doctest::Approx(159.5));
}

TEST_CASE("torchtitan log: tokens per second per GPU and memory") {
  TrainingLog log = parse_file("torchtitan_llama3_8b.log");
  CHECK(log.format == "torchtitan");
  CHECK(log.iterations.size() == 4);
  CHECK(log.malformed_lines.size() == 1);  // "tps: n/a"
  CHECK(log.iterations[1].tokens_per_s == doctest::Approx(6512));
  CHECK(log.max_allocated_bytes == doctest::Approx(47.35 * 1073741824.0));
  LogSummary s = summarize(log, 1);
  CHECK(s.median_tokens_per_s_per_gpu == doctest::Approx(6512));  // 6512, 6530, 6498
}

TEST_CASE("generic PyTorch loop: seconds and milliseconds") {
  TrainingLog log = parse_file("generic_pytorch.log");
  CHECK(log.format == "pytorch");
  REQUIRE(log.iterations.size() == 5);
  CHECK(log.iterations[3].time_s == doctest::Approx(1.1905));
  CHECK(summarize(log).median_time_s == doctest::Approx(1.205));  // 1.21, 1.20, 1.1905, 1.22
}

TEST_CASE("an empty or unrelated log yields no iterations and no crash") {
  std::istringstream in("hello\nworld\n");
  TrainingLog log = parse_training_log(in);
  CHECK(log.format == "unknown");
  CHECK(log.iterations.empty());
  CHECK(summarize(log).median_time_s == 0);
}
