// Calibration from a short run (calibrate/log_calibration.hpp): one published run of a source predicts another of
// the same source after the fit. The logs are written here in each framework's own format with the source's
// published figures; the scenarios are the cases of ../shared/reference/ as written.
#include <doctest/doctest.h>

#include "../approx.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "calibrate/log_calibration.hpp"
#include "calibrate/reference_cases.hpp"
#include "models/calibration/calibration.hpp"
#include "models/core/errors.hpp"
#include "models/step/step.hpp"

using namespace trainsim;
using Json = nlohmann::json;

namespace {
Scenario reference_case(const std::string& file, const std::string& id) {
  std::ifstream in(std::string(TRAINSIM_SHARED_DIR) + "/reference/" + file);
  REQUIRE(in);
  const Json doc = Json::parse(in);
  for (const auto& c : doc.at("cases"))
    if (c.at("id") == id) return parse_scenario(reference_case_scenario(c));
  FAIL("no case " << id);
  return {};
}

LogRun run_of(const std::string& text, const Scenario& plan) {
  LogRun r;
  r.log_path = "inline.log";
  r.log = parse_training_log(std::string_view(text));
  r.summary = summarize(r.log);
  r.plan = plan;
  r.measured_step_s = measured_step_time(r.log, r.summary, plan, r.log_path, &r.basis);
  return r;
}

// The calibrated step time of `s`: the fitted values carried by a profile, as `--calibration` applies them.
double calibrated_time(const Scenario& s, const LogCalibration& cal) {
  CalibrationProfile profile;
  for (const auto& p : cal.parameters)
    if (p.fitted) profile.fitted_parameters.emplace_back(p.key, p.after);
  return StepModel(s.model, s.training, s.hardware, &profile).estimate(s.parallel).time_s;
}
}  // namespace

TEST_CASE("from a log: torchtitan Llama-3.1-8B on 8 H100 predicts the 128-GPU run of the same table") {
  // torchtitan benchmarks/llama3_h100_202412_torchtitan.md: FSDP on 8 H100, 5,762 tokens/s/GPU (Table 1); on 128
  // H100, 5,605 (Table 3). The 8-GPU run's log lines in torchtitan's format, 20 steps.
  const Scenario eight = reference_case("modern_runs.json", "torchtitan_llama31_8b_h100x8_fsdp_bf16");
  const Scenario many = reference_case("modern_runs.json", "torchtitan_llama31_8b_h100x128_fsdp_bf16");
  std::string log;
  for (int i = 1; i <= 20; ++i) log += "step: " + std::to_string(i) + "  loss: 7.9  memory: 82.40GiB(86.7%)  tps: 5,762  tflops: 333.9  mfu: 33.8%\n";
  const LogCalibration cal = calibrate_from_logs({run_of(log, eight)}, shipped_fitted_parameters().values);
  // The measured step: 8 GPUs x 2 sequences x 8192 tokens / (8 x 5762 tokens/s) = 2.8435 s, matched by the fit.
  CHECK(cal.runs[0].measured_step_s == trainsim::test::approx(16384.0 / 5762));
  CHECK(cal.predicted_after[0] == trainsim::test::approx(cal.runs[0].measured_step_s).epsilon(1e-3));
  int fitted = 0;
  for (const auto& p : cal.parameters) fitted += p.fitted;
  CHECK(fitted == 1);  // one run determines one parameter
  // 128 GPUs: 128 x 16384 tokens / step; published 5,605 tokens/s/GPU.
  const double tokens_per_gpu = 16384.0 / calibrated_time(many, cal);
  CHECK(std::fabs(tokens_per_gpu / 5605 - 1) < 0.05);
}

// The Llama 3 paper's layout of Llama 3.1 405B (arXiv 2407.21783, Table 4 and section 3.3.2): tp 8, pp 16 with
// interleaving, one layer fewer on the first and last stages, no activation checkpointing, 2048 sequences of 8192
// tokens a step; `dp` data-parallel ranks. Built from the example scenario, which states the model and the RoCE fabric.
Scenario llama3_405b_paper_layout(int dp) {
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/llama3.1-405b-pretrain-16k-h100.json");
  REQUIRE(in);
  Json doc = Json::parse(in);
  doc["training"]["recompute"] = "none";
  doc["parallel"]["dp"] = dp;
  doc["parallel"]["account_for_embedding_in_pipeline_split"] = true;
  doc["parallel"]["account_for_loss_in_pipeline_split"] = true;
  doc["hardware"]["num_nodes"] = 8 * 16 * dp / 8;
  return parse_scenario(doc);
}

TEST_CASE("from a log: Llama 3 405B on 16,384 H100 predicts its 8,192-GPU run") {
  // Llama 3 paper, Table 4: 16,384 GPUs (dp 128) at 400 TFLOP/s per GPU and 8,192 (dp 64) at 430, both 16M tokens a
  // step. The step time of the 16K run, from 400 TFLOP/s with 6 N FLOPs a token plus causal attention's
  // 6 L s h (N = 405.85e9: 126 layers of 2 h^2 + 2 h (8 x 128) + 3 h 53248 + 2 h, h = 16384, and two 128,256 x h
  // embeddings), as Megatron-LM's log reports it.
  const double layer = 2.0 * 16384 * 16384 + 2.0 * 16384 * 1024 + 3.0 * 16384 * 53248 + 2.0 * 16384;
  const double params = 126 * layer + 2.0 * 128256 * 16384 + 16384;
  const double flops_per_token = 6 * params + 6.0 * 126 * 8192 * 16384;
  const double tokens = 2048.0 * 8192;
  const double step16k = tokens * flops_per_token / (400e12 * 16384);
  CHECK(step16k == trainsim::test::approx(6.494).epsilon(1e-3));
  std::string log;
  char line[256];
  for (int i = 1; i <= 10; ++i) {
    std::snprintf(line, sizeof line, " iteration %8d/  950000 | elapsed time per iteration (ms): %.1f | lm loss: 2.1E+00 |\n", i, step16k * 1e3);
    log += line;
  }
  const LogCalibration cal = calibrate_from_logs({run_of(log, llama3_405b_paper_layout(128))}, shipped_fitted_parameters().values);
  CHECK(cal.predicted_after[0] == trainsim::test::approx(step16k).epsilon(1e-3));
  // Half the GPUs run the same 16M tokens at 430 TFLOP/s: 6.494 x (16384 x 400) / (8192 x 430) = 12.08 s. The
  // prediction keeps the 16K run's per-micro-batch time and prices the 8K run's 32 micro-batches a rank against 16
  // (a bubble of 15 / (4 x 32) instead of 15 / (4 x 16)) and its data-parallel traffic: 11.54 s, 4.5% short (the
  // shipped parameters put the 16K run at 7.13 s, 9% slow, and the 8K run at 12.72 s).
  const double step8k = step16k * (16384.0 * 400) / (8192.0 * 430);
  CHECK(std::fabs(calibrated_time(llama3_405b_paper_layout(64), cal) / step8k - 1) < 0.06);
}

TEST_CASE("from a log: one H100 fine-tuning run predicts another model's") {
  // ../shared/reference/h100_single_gpu_runs.json: Llama-3.2-1B full fine-tuning, 4 x 2048 tokens, 0.2082 s a step;
  // Qwen2.5-1.5B on the same loop, 0.2701 s; full-parameter DPO of Qwen2.5-1.5B at 2 x 1024, 0.2050 s.
  const Scenario llama = reference_case("h100_single_gpu_runs.json", "h100-hf-full-llama3.2-1b-s2048-b4-none");
  const Scenario qwen = reference_case("h100_single_gpu_runs.json", "h100-hf-full-qwen2.5-1.5b-s2048-b4-none");
  const Scenario dpo = reference_case("h100_single_gpu_runs.json", "h100-hf-dpo-qwen2.5-1.5b-s1024-b2-none");
  std::string log;
  for (int i = 1; i <= 12; ++i) log += "step " + std::to_string(i) + " loss 2.1 step_time: 0.2082s\n";
  const LogCalibration cal = calibrate_from_logs({run_of(log, llama)}, shipped_fitted_parameters().values);
  // Within 6%: the shipped model is 6.1% pessimistic on this Qwen and 2.2% on the Llama, and the one run raises
  // memory_kernel_efficiency to its physical bound (1.0), which leaves Qwen at +5.2% (before the reference fit weighed
  // each source alike, within 5%).
  CHECK(std::fabs(calibrated_time(qwen, cal) / 0.2701 - 1) < 0.06);
  CHECK(std::fabs(calibrated_time(dpo, cal) / 0.2050 - 1) < 0.05);
}

TEST_CASE("from a log: two runs fit two parameters; a log without step times is an input error") {
  const Scenario llama = reference_case("h100_single_gpu_runs.json", "h100-hf-full-llama3.2-1b-s2048-b4-none");
  const Scenario eight = reference_case("modern_runs.json", "torchtitan_llama31_8b_h100x8_fsdp_bf16");
  std::string a, b;
  for (int i = 1; i <= 12; ++i) a += "step " + std::to_string(i) + " step_time: 0.2082s\n";
  for (int i = 1; i <= 12; ++i) b += "step: " + std::to_string(i) + "  tps: 5,762\n";
  const LogCalibration cal = calibrate_from_logs({run_of(a, llama), run_of(b, eight)}, shipped_fitted_parameters().values);
  int fitted = 0;
  for (const auto& p : cal.parameters) fitted += p.fitted;
  CHECK(fitted == 2);
  for (std::size_t i = 0; i < cal.runs.size(); ++i) CHECK(std::fabs(cal.predicted_after[i] / cal.runs[i].measured_step_s - 1) < 0.02);
  const TrainingLog empty = parse_training_log(std::string_view("nothing to see\n"));
  std::string basis;
  CHECK_THROWS_AS(measured_step_time(empty, summarize(empty), llama, "x.log", &basis), InputError);
}

TEST_CASE("from a log: DeepSpeed's samples per second become a step time over the plan's global batch") {
  // A plan of global batch B: a DeepSpeed log reporting CurrSamplesPerSec = S means B / S seconds per step.
  const Scenario llama = reference_case("h100_single_gpu_runs.json", "h100-hf-full-llama3.2-1b-s2048-b4-none");
  const double batch = llama.training.global_batch_size;
  std::string text;
  for (int i = 1; i <= 12; ++i)
    text += "[INFO] [timer.py:264:stop] epoch=0/micro_step=" + std::to_string(i) + "/global_step=" + std::to_string(i) +
            ", RunningAvgSamplesPerSec=19.1, CurrSamplesPerSec=19.2, MemAllocated=9.1GB, MaxMemAllocated=15.2GB\n";
  const LogRun r = run_of(text, llama);
  CHECK(r.log.format == "deepspeed");
  CHECK(r.measured_step_s == trainsim::test::approx(batch / 19.2));
  CHECK(r.basis.find("samples/s") != std::string::npos);
}
