// Training-log parsing: the sample logs in data/ are written by hand in the formats Megatron-LM,
// torchtitan and plain PyTorch loops print; expected values are read off the lines.
#include <doctest/doctest.h>

#include "../approx.hpp"

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
  CHECK(log.malformed.line_numbers() == std::vector<long long>{10});  // the 10th line of the file
  CHECK(log.malformed[0].reason == "elapsed time per iteration (ms) \"13.7.2e\" is not a number");
  CHECK(log.iterations[0].time_s == trainsim::test::approx(30.5123));
  CHECK(log.iterations[1].tflops_per_gpu == trainsim::test::approx(158.9));
  CHECK(log.peak_memory_bytes == trainsim::test::approx(58123.75 * 1048576.0));
  CHECK(log.memory_counter == MemoryCounter::AllocatorAllocated);  // Megatron's "max allocated"
  // Skipping the first (warm-up) iteration: 13.801, 13.7504, 13.7496, 13.7022, 13.760 -> median 13.7504.
  LogSummary s = summarize(log);
  CHECK(s.used == 5);
  CHECK(s.median_time_s == trainsim::test::approx(13.7504));
  CHECK(s.median_tflops_per_gpu == trainsim::test::approx(159.5));
}

TEST_CASE("torchtitan log: tokens per second per GPU and memory") {
  TrainingLog log = parse_file("torchtitan_llama3_8b.log");
  CHECK(log.format == "torchtitan");
  CHECK(log.iterations.size() == 4);
  REQUIRE(log.malformed.size() == 1);  // "tps: n/a"
  CHECK(log.malformed[0].line == 6);
  CHECK(log.malformed[0].reason == "tps \"n/a\" is not a number");
  CHECK(log.iterations[1].tokens_per_s == trainsim::test::approx(6512));
  CHECK(log.peak_memory_bytes == trainsim::test::approx(47.35 * 1073741824.0));
  CHECK(log.memory_counter == MemoryCounter::AllocatorReserved);  // torchtitan/metrics.py: reserved_bytes.all.peak
  LogSummary s = summarize(log, 1);
  CHECK(s.median_tokens_per_s_per_gpu == trainsim::test::approx(6512));  // 6512, 6530, 6498
}

TEST_CASE("generic PyTorch loop: seconds and milliseconds") {
  TrainingLog log = parse_file("generic_pytorch.log");
  CHECK(log.format == "pytorch");
  REQUIRE(log.iterations.size() == 5);
  CHECK(log.iterations[3].time_s == trainsim::test::approx(1.1905));
  CHECK(summarize(log).median_time_s == trainsim::test::approx(1.205));  // 1.21, 1.20, 1.1905, 1.22
}

TEST_CASE("an empty or unrelated log yields no iterations and no crash") {
  std::istringstream in("hello\nworld\n");
  TrainingLog log = parse_training_log(in);
  CHECK(log.format == "unknown");
  CHECK(log.iterations.empty());
  CHECK(summarize(log).median_time_s == 0);
}

// ---- Regression tests: untrusted input ---------------------------------------------------------------------

namespace {
std::string reason_of(const TrainingLog& log, long long line) {
  for (const auto& m : log.malformed.listed())
    if (m.line == line) return m.reason;
  return "(line " + std::to_string(line) + " not skipped)";
}
}  // namespace

TEST_CASE("a 30,000-digit number is a skipped line, not a stack overflow (std::regex recursed per character)") {
  const std::string digits(30000, '7');
  const std::string text =
      " iteration        1/     100 | elapsed time per iteration (ms): " + digits + " | throughput per GPU (TFLOP/s/GPU): 71.9 |\n" +
      " iteration        2/     100 | elapsed time per iteration (ms): 13801.0 | throughput per GPU (TFLOP/s/GPU): 158.9 |\n" +
      " iteration " + digits + "/     100 | elapsed time per iteration (ms): 13801.0 |\n" +
      "step: 3  loss: 1.0  tps: " + digits + "  tflops: 1.0\n" +
      "step 4 step_time: " + digits + "s\n" +
      "step " + digits + " step_time: 1.0s\n";
  const TrainingLog log = parse_training_log(std::string_view(text));
  REQUIRE(log.iterations.size() == 1);
  CHECK(log.iterations[0].iteration == 2);
  REQUIRE(log.malformed.size() == 5);
  CHECK(reason_of(log, 1).starts_with("elapsed time per iteration (ms) \"7777"));
  CHECK(reason_of(log, 1).ends_with("\" has 30000 characters (a number has at most 64)"));
  CHECK(reason_of(log, 3).ends_with("\" has 30000 digits (at most 18)"));
  CHECK(reason_of(log, 4).starts_with("tps \""));
  CHECK(reason_of(log, 5).starts_with("step_time (s) \""));
  CHECK(reason_of(log, 6).starts_with("step \""));
  CHECK(log.malformed[0].text.size() < 200);  // the listed text is cut, not 30,000 characters
}

TEST_CASE("negative, zero, NaN, infinite and out-of-range values are skipped with their line and reason, never dropped silently") {
  const std::string text =
      " iteration        1/     100 | elapsed time per iteration (ms): 30512.3 | throughput per GPU (TFLOP/s/GPU): 71.9 |\n"   // 1 kept
      " iteration        2/     100 | elapsed time per iteration (ms): -13801.0 | throughput per GPU (TFLOP/s/GPU): 158.9 |\n" // 2
      " iteration        3/     100 | elapsed time per iteration (ms): 13750.4 | throughput per GPU (TFLOP/s/GPU): nan |\n"    // 3
      " iteration        4/     100 | elapsed time per iteration (ms): 0 | throughput per GPU (TFLOP/s/GPU): 159.5 |\n"        // 4
      " iteration        5/     100 | elapsed time per iteration (ms): 1e400 | throughput per GPU (TFLOP/s/GPU): 160.1 |\n"    // 5
      " iteration        6/     100 | elapsed time per iteration (ms): 13760.0 | throughput per GPU (TFLOP/s/GPU): -159.4 |\n"  // 6
      "[Rank 0] (after 1 iterations) memory (MB) | allocated: 45123.25 | max allocated: NaN | reserved: 61000.0\n"             // 7
      " iteration        7/     100 | elapsed time per iteration (ms): inf | throughput per GPU (TFLOP/s/GPU): 160.1 |\n"      // 8
      " iteration        8/     100 | throughput per GPU (TFLOP/s/GPU): 160.1 |\n"                                            // 9
      " iteration        9/     100 | elapsed time per iteration (ms): 13760.0 | throughput per GPU (TFLOP/s/GPU): 159.4 |\n";  // 10 kept
  const TrainingLog log = parse_training_log(std::string_view(text));
  CHECK(log.format == "megatron");
  REQUIRE(log.iterations.size() == 2);
  CHECK(log.iterations[1].iteration == 9);
  CHECK(log.iterations[1].line == 10);
  CHECK(log.peak_memory_bytes == 0);
  CHECK(log.malformed.line_numbers() == std::vector<long long>{2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(reason_of(log, 2) == "elapsed time per iteration (ms) \"-13801.0\" is negative");
  CHECK(reason_of(log, 3) == "throughput per GPU (TFLOP/s/GPU) \"nan\" is not finite");
  CHECK(reason_of(log, 4) == "elapsed time per iteration (ms) \"0\" is zero");
  CHECK(reason_of(log, 5) == "elapsed time per iteration (ms) \"1e400\" is out of range");
  CHECK(reason_of(log, 6) == "throughput per GPU (TFLOP/s/GPU) \"-159.4\" is negative");
  CHECK(reason_of(log, 7) == "max allocated (MB) \"NaN\" is not finite");
  CHECK(reason_of(log, 8) == "elapsed time per iteration (ms) \"inf\" is not finite");
  CHECK(reason_of(log, 9) == "no \"elapsed time per iteration (ms)\"");

  const std::string titan =
      "step:  1  loss: 12.2  memory: 42.10GiB(53.24%)  tps: 1,203  tflops: 69.71  mfu: 7.05%\n"
      "step:  2  loss: 11.9  memory: 47.35GiB(59.88%)  tps: 6,512  tflops: -377.12  mfu: 38.13%\n"
      "step:  3  loss: 11.5  memory: nanGiB(59.88%)  tps: 6,530  tflops: 378.20  mfu: 38.24%\n"
      "step:  4  loss: 11.1  memory: 47.35GiB(59.88%)  tps: -6,498  tflops: 376.33  mfu: 38.05%\n"
      "step:  5  loss: 11.0  memory: 47.35GiB(59.88%)  tps: 0  tflops: 376.33  mfu: 38.05%\n"
      "step:  6  loss: 11.0  memory: 47.35GB  tps: 6,500  tflops: 376.33  mfu: 38.05%\n";
  const TrainingLog t = parse_training_log(std::string_view(titan));
  CHECK(t.format == "torchtitan");
  REQUIRE(t.iterations.size() == 1);
  CHECK(t.peak_memory_bytes == trainsim::test::approx(42.10 * 1073741824.0));  // from the one line that was used
  CHECK(reason_of(t, 2) == "tflops \"-377.12\" is negative");
  CHECK(reason_of(t, 3) == "memory (GiB) \"nan\" is not finite");
  CHECK(reason_of(t, 4) == "tps \"-6,498\" is negative");
  CHECK(reason_of(t, 5) == "tps \"0\" is zero");
  CHECK(reason_of(t, 6) == "memory \"47.35GB\" is not in GiB");

  const std::string generic =
      "epoch 0 step 1 loss 2.31 step_time: 2.90s\n"
      "epoch 0 step 2 loss 2.12 step_time: nan s\n"
      "epoch 0 step 3 loss 2.05 step_time: -1.2s\n"
      "epoch 0 step 4 loss 1.98 step_time: infms\n"
      "epoch 0 step 5 loss 1.95 step_time: 0.0 ms\n"
      "epoch 0 step 6 loss 1.95 step_time: 1e-400 s\n"
      "epoch 0 step 7 loss 1.95 step_time: 13.7.2 s\n"
      "Step 8 | data time 0.01s | step time 1,190.5 ms\n"          // the step's own time, not the data-loading time
      "step 9 saved a checkpoint at time 12:30:01\n"               // no time in s or ms: not an iteration line
      "step 10 timeout 30 seconds\n";                               // neither
  const TrainingLog g = parse_training_log(std::string_view(generic));
  CHECK(g.format == "pytorch");
  REQUIRE(g.iterations.size() == 2);
  CHECK(g.iterations[1].iteration == 8);
  CHECK(g.iterations[1].time_s == trainsim::test::approx(1.1905));
  CHECK(g.malformed.line_numbers() == std::vector<long long>{2, 3, 4, 5, 6, 7});
  CHECK(reason_of(g, 2) == "step_time (s) \"nan\" is not finite");
  CHECK(reason_of(g, 3) == "step_time (s) \"-1.2\" is negative");
  CHECK(reason_of(g, 4) == "step_time (ms) \"inf\" is not finite");
  CHECK(reason_of(g, 5) == "step_time (ms) \"0.0\" is zero");
  CHECK(reason_of(g, 6) == "step_time (s) \"1e-400\" is out of range");
  CHECK(reason_of(g, 7) == "step_time (s) \"13.7.2\" is not a number");
}

TEST_CASE("the warm-up is never compared: a log with fewer iterations than the warm-up has nothing to use") {
  std::istringstream one(" iteration        1/     100 | elapsed time per iteration (ms): 30512.3 |\n");
  const TrainingLog log = parse_training_log(one);
  REQUIRE(log.iterations.size() == 1);
  LogSummary s = summarize(log);  // the default warm-up: at least the first iteration
  CHECK(s.iterations == 1);
  CHECK(s.warmup == 1);
  CHECK(s.used == 0);
  CHECK(s.median_time_s == 0);  // not the warm-up's 30.5 s
  s = summarize(log, 5);        // asked to skip more than there is
  CHECK(s.warmup == 1);
  CHECK(s.used == 0);
  s = summarize(log, 0);        // asked for everything, warm-up included
  CHECK(s.used == 1);
  CHECK(s.median_time_s == trainsim::test::approx(30.5123));
}

TEST_CASE("arbitrary bytes: NUL, invalid UTF-8, CRLF, a line over the 1 MiB limit, no final newline") {
  const std::string nul(1, '\0');
  std::string text = "step 1 step_time: 1.5s\r\n";
  text += "step 2 " + nul + "\xff\xfe step_time: 1.6s\r\n";          // NUL and invalid UTF-8 around the fields
  text += "step 3 step_time: \xc3\xa9" + nul + "\x01 s\n";             // a value of é, NUL and \x01: not a time
  text += std::string(kMaxLineBytes + 10, 'x') + "\n";                 // line 4: not read
  text += "step 5 step_time: 1.7s";                                     // no final newline
  const TrainingLog a = parse_training_log(std::string_view(text));
  std::istringstream in(text);
  const TrainingLog b = parse_training_log(in);
  for (const TrainingLog* log : {&a, &b}) {
    CHECK(log->lines == 5);
    REQUIRE(log->iterations.size() == 3);
    CHECK(log->iterations[1].time_s == trainsim::test::approx(1.6));
    CHECK(log->iterations[2].iteration == 5);
    CHECK(log->malformed.line_numbers() == std::vector<long long>{4});
    CHECK(log->malformed[0].reason == "line of 1048586 bytes: longer than the 1 MiB limit, not read");
  }
  // Line 3 has no number before its unit: not a time, and so not an iteration line.
  const TrainingLog c = parse_training_log("step 3 step_time: \xff" + nul + " s\nstep 4 step_time: \xff" "1s\n" + nul + nul);
  CHECK(c.iterations.empty());
  CHECK(c.malformed.empty());
  CHECK(c.lines == 3);
  // What a message shows of such bytes is printable.
  CHECK(printable("a" + nul + "b\xff\xc3\xa9") == "a\\x00b\\xff\xc3\xa9");
}

TEST_CASE("pathological lines stay linear: repeated keywords, separators and digits over a megabyte") {
  // Each of these made the old regex reader either recurse per character or rescan the line per keyword.
  for (const std::string& unit : {std::string("time."), std::string("iteration "), std::string("step:"), std::string("1"), std::string("tps: ")}) {
    std::string line;
    while (line.size() < kMaxLineBytes - 64) line += unit;
    const TrainingLog log = parse_training_log(std::string_view(line + "\n" + line + " step 1 step_time: 2s\n"));
    CHECK(log.lines == 2);
    CHECK(log.malformed.empty());
    REQUIRE(log.iterations.size() == 1);
    CHECK(log.iterations[0].time_s == 2);
  }
}

TEST_CASE("ms-swift log: train_speed(iter/s) per logging step, memory(GiB) as reserved, a garbled speed counted") {
  TrainingLog log = parse_file("ms_swift_qwen3.log");
  CHECK(log.format == "ms-swift");
  REQUIRE(log.iterations.size() == 4);
  REQUIRE(log.malformed.size() == 1);
  CHECK(log.malformed[0].line == 6);
  CHECK(log.malformed[0].reason == "train_speed(iter/s) \"abc\" is not a number");
  CHECK(log.iterations[1].iteration == 5);
  CHECK(log.iterations[1].time_s == trainsim::test::approx(1 / 0.1042));
  CHECK(log.peak_memory_bytes == trainsim::test::approx(63.25 * 1073741824.0));
  CHECK(log.memory_counter == MemoryCounter::AllocatorReserved);  // swift get_max_cuda_memory: max_memory_reserved
  // The first logging step is warm-up: 1/0.1042, 1/0.1050, 1/0.1047 -> median 1/0.1047 = 9.551 s.
  CHECK(summarize(log).median_time_s == trainsim::test::approx(1 / 0.1047));
}

TEST_CASE("DeepSpeed's throughput timer: CurrSamplesPerSec per global step, MaxMemAllocated as allocated, a nan counted") {
  // The line as deepspeed/utils/timer.py ThroughputTimer.stop formats it every steps_per_print global steps.
  TrainingLog log = parse_file("deepspeed_zero3.log");
  CHECK(log.format == "deepspeed");
  REQUIRE(log.iterations.size() == 4);
  REQUIRE(log.malformed.size() == 1);
  CHECK(log.malformed[0].line == 6);
  CHECK(log.iterations[1].iteration == 20);
  CHECK(log.iterations[1].samples_per_s == trainsim::test::approx(12.31));
  CHECK(log.iterations[1].time_s == 0);  // a speed, not a time: the plan's global batch turns it into one
  CHECK(log.peak_memory_bytes == trainsim::test::approx(20.33 * 1073741824.0));  // GB = memory_allocated() / 1024**3
  CHECK(log.memory_counter == MemoryCounter::AllocatorAllocated);
  // Warm-up: the first report. Median of 12.31, 12.12, 12.20 samples/s = 12.20.
  CHECK(summarize(log).median_samples_per_s == trainsim::test::approx(12.20));
}

TEST_CASE("Hugging Face Trainer: the closing summary's train_steps_per_second, no per-step times") {
  TrainingLog log = parse_file("hf_trainer_summary.log");
  CHECK(log.format == "hf-trainer");
  CHECK(log.iterations.empty());
  CHECK(log.run_mean_step_time_s == trainsim::test::approx(1 / 0.8));  // 312.5 s / 250 steps = 1.25 s
}

TEST_CASE("a speed whose step time overflows is a skipped line, never an infinite step") {
  // 1e-320 it/s is positive and finite, but 1 / 1e-320 is not a double: the line is skipped with its reason.
  const TrainingLog swift =
      parse_training_log(std::string_view("{'loss': 1.0, 'train_speed(iter/s)': 1e-320, 'global_step/max_steps': '5/10'}\n"));
  CHECK(swift.iterations.empty());
  REQUIRE(swift.malformed.size() == 1);
  CHECK(swift.malformed[0].reason.find("is out of range") != std::string::npos);
  const TrainingLog trainer = parse_training_log(std::string_view("{'train_runtime': 1.0, 'train_steps_per_second': 1e-320}\n"));
  CHECK(trainer.run_mean_step_time_s == 0);
  CHECK(trainer.malformed.size() == 1);
}
