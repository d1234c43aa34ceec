// ZeRO-3 at scale against published runs nobody tuned the model to: the ZeRO-3 baseline of Narayanan et al.
// (SC'21, arXiv 2104.04473) Table 2, GPT-3 175B and the 530B model on 384-2,240 A100s, no model parallelism.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "calibrate/reference_cases.hpp"
#include "models/scenario/scenario.hpp"
#include "models/step/step.hpp"

using namespace trainsim;
using Json = nlohmann::json;

namespace {

struct Table2Row {
  const char* model;
  int gpus, micro_batch, batch;
  double tflops;  // achieved teraFLOP/s per GPU, as published
};

// The example scenario (1,536 GPUs) at another row's size, model and batch.
double predicted_tflops(const Table2Row& row, bool prefetch) {
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/gpt3-175b-zero3-1536xa100-deepspeed-2021.json");
  REQUIRE(in);
  Json j = Json::parse(in);
  // SC'21 Table 1's 529.6B model: 105 layers, hidden 20,480, 128 heads (the same vocabulary and sequence).
  if (std::string(row.model) == "530b")
    j["model"] = {{"name", "gpt-530b"},       {"num_hidden_layers", 105}, {"hidden_size", 20480},        {"num_attention_heads", 128},
                  {"intermediate_size", 81920}, {"hidden_act", "gelu"},   {"vocab_size", 51200},          {"tie_word_embeddings", true},
                  {"max_position_embeddings", 2048}, {"norm_type", "layernorm"}, {"position_embedding_type", "learned"}};
  j["hardware"]["num_nodes"] = row.gpus / 8;
  j["parallel"]["dp"] = row.gpus;
  j["parallel"]["micro_batch_size"] = row.micro_batch;
  j["training"]["global_batch_size"] = row.batch;
  j["training"]["framework"]["overlap_param_gather"] = prefetch;
  const Scenario s = parse_scenario(j);
  const double step = StepModel(s.model, s.training, s.hardware).estimate(s.parallel).time_s;
  // TFLOP/s as the paper counts them (its eq. 3, recomputation included; the reference harness's formula).
  return megatron_hfu_flops(s.model, row.batch, s.training.seq_len) / row.gpus / step / 1e12;
}

}  // namespace

TEST_CASE("DeepSpeed ZeRO-3 of 2021 on 384-2,240 A100s: SC'21 Table 2's fall, each row within 25%") {
  // Table 2 (ZeRO-3 without model parallelism; the 530B model's first row needed batch 2,560 to fit on 640 GPUs).
  const Table2Row rows[] = {{"175b", 384, 4, 1536, 144},  {"175b", 768, 2, 1536, 88},  {"175b", 1536, 1, 1536, 44},
                            {"530b", 640, 4, 2560, 138}, {"530b", 1120, 2, 2240, 98}, {"530b", 2240, 1, 2240, 48}};
  double previous = 0;
  for (const Table2Row& row : rows) {
    CAPTURE(row.model);
    CAPTURE(row.gpus);
    const double tflops = predicted_tflops(row, false);
    MESSAGE(std::string(row.model) << " on " << row.gpus << " A100s: " << tflops << " TFLOP/s a GPU (published " << row.tflops << ")");
    CHECK(tflops > 0.75 * row.tflops);
    CHECK(tflops < 1.25 * row.tflops);
    // At a fixed batch every doubling of GPUs halves the compute a GPU does but not the gathers it waits for: each
    // gathers the whole model three times a step whatever the GPU count, over a ring whose latency grows with it.
    if (row.micro_batch < 4) CHECK(tflops < 0.8 * previous);
    previous = tflops;
  }
  // The prefetch working, as DeepSpeed later ran it, hides the gathers at 768 GPUs behind the compute: twice the
  // published rate there, the measure of what the skipped prefetch cost.
  CHECK(predicted_tflops(rows[1], true) > 1.6 * rows[1].tflops);
}
