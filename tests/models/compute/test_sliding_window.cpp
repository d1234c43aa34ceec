// Sliding-window attention: how Hugging Face configs spell it, the share of query-key pairs attended, and what
// that does to the attention core's FLOPs, against hand-derived values.
#include <doctest/doctest.h>

#include "models/compute/compute.hpp"
#include "models/compute/flops.hpp"
#include "models/compute/transformer.hpp"
#include "models/core/errors.hpp"
#include "models/scenario/scenario.hpp"
#include "tests/approx.hpp"

using namespace trainsim;
using trainsim::test::approx;

namespace {
// Mistral-7B-v0.1's config.json (sliding_window 4096 on every layer), with `extra` keys merged in.
nlohmann::json mistral(const nlohmann::json& extra = nlohmann::json::object()) {
  nlohmann::json m = {{"model_type", "mistral"}, {"num_hidden_layers", 32}, {"hidden_size", 4096}, {"num_attention_heads", 32},
                      {"num_key_value_heads", 8}, {"intermediate_size", 14336}, {"vocab_size", 32000}, {"sliding_window", 4096}};
  m.update(extra);
  return m;
}
Scenario scenario(const nlohmann::json& model, int seq = 32768) {
  return parse_scenario({{"model", model},
                         {"training", {{"seq_len", seq}, {"global_batch_size", 8}}},
                         {"parallel", {{"tp", 1}, {"pp", 1}, {"micro_batch_size", 1}}},
                         {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 8}}}});
}
}  // namespace

TEST_CASE("sliding windows as configs write them") {
  CHECK(scenario(mistral()).model.sliding_layers == 32);  // Mistral: every layer
  CHECK(scenario(mistral()).model.sliding_window == 4096);
  // Qwen2/3 configs carry a window they do not use.
  CHECK(scenario(mistral({{"use_sliding_window", false}})).model.sliding_layers == 0);
  // Qwen2: the first max_window_layers layers full, the rest sliding.
  CHECK(scenario(mistral({{"use_sliding_window", true}, {"max_window_layers", 28}})).model.sliding_layers == 4);
  // Gemma 3: every 6th layer global, 32 - 5 = 27 sliding.
  CHECK(scenario(mistral({{"sliding_window_pattern", 6}})).model.sliding_layers == 27);
  // layer_types (transformers >= 4.53): counted as given; a null window is none.
  nlohmann::json types = nlohmann::json::array();
  for (int i = 0; i < 32; ++i) types.push_back(i % 2 ? "full_attention" : "sliding_attention");
  CHECK(scenario(mistral({{"layer_types", types}})).model.sliding_layers == 16);
  CHECK(scenario(mistral({{"sliding_window", nullptr}})).model.sliding_layers == 0);
}

TEST_CASE("layer types trainsim cannot model are refused, naming the entry") {
  nlohmann::json types = nlohmann::json::array();
  for (int i = 0; i < 32; ++i) types.push_back(i % 4 == 3 ? "full_attention" : "chunked_attention");
  CHECK_THROWS_WITH_AS(scenario(mistral({{"layer_types", types}})), doctest::Contains("/model/layer_types/0"), InputError);
  // Linear-attention layers need Gated DeltaNet's widths.
  for (auto& x : types) x = x == "chunked_attention" ? "linear_attention" : x;
  CHECK_THROWS_WITH_AS(scenario(mistral({{"layer_types", types}})), doctest::Contains("/model/linear_num_key_heads"), InputError);
  CHECK_THROWS_WITH_AS(scenario(mistral({{"layer_types", {"full_attention"}}})), doctest::Contains("/model/layer_types"), InputError);
  nlohmann::json sliding = nlohmann::json::array();
  for (int i = 0; i < 32; ++i) sliding.push_back("sliding_attention");
  CHECK_THROWS_WITH_AS(scenario(mistral({{"layer_types", sliding}, {"sliding_window", nullptr}})), doctest::Contains("/model/sliding_window"), InputError);
}

TEST_CASE("the share of query-key pairs attended") {
  const ModelSpec m = scenario(mistral()).model;
  // Causal at or below the window: half the s x s pairs.
  CHECK(attended_key_fraction(m, 4096) == approx(0.5));
  // 4096 keys at 32768: w/s - w²/(2s²) = 1/8 - 1/128 = 0.1171875.
  CHECK(attended_key_fraction(m, 32768) == approx(0.1171875));
  // Half the layers sliding: the mean of 0.5 and 0.1171875.
  ModelSpec half = m;
  half.sliding_layers = 16;
  CHECK(attended_key_fraction(half, 32768) == approx(0.30859375));
}

TEST_CASE("a sliding window cuts the attention core's FLOPs by the pairs it skips") {
  const Scenario windowed = scenario(mistral());
  const Scenario full = scenario(mistral({{"sliding_window", nullptr}}));
  // Megatron's count of the scores (full square): 2·2·s²·a·d a layer forward, x3 with the backward; the window
  // keeps 0.1171875 / 0.5 of it, so one sequence's model FLOPs drop by 3 x 32 layers x scores x 0.765625.
  const double s = 32768, scores = 2.0 * 2 * s * s * 32 * 128;
  CHECK(model_flops_per_iteration(full.model, full.training, 1) - model_flops_per_iteration(windowed.model, windowed.training, 1) ==
        approx(3 * 32 * scores * (1 - 0.1171875 / 0.5)));
  // The flash-attention core of one layer: the same ratio of FLOPs.
  const LayerCompute a = layer_compute(windowed.model, windowed.training, windowed.parallel, windowed.hardware.gpu, false);
  const LayerCompute b = layer_compute(full.model, full.training, full.parallel, full.hardware.gpu, false);
  CHECK(a.attention_flops == approx(b.attention_flops * 0.1171875 / 0.5));
}

TEST_CASE("packed rows masked per document: each document's tiles of causal work") {
  // A Llama-shaped model (no window) over packed 4,096-token rows.
  auto packed = [](double document_tokens) {
    nlohmann::json training = {{"seq_len", 4096}, {"global_batch_size", 8}};
    if (document_tokens > 0) training["document_tokens"] = document_tokens;
    return parse_scenario({{"model", mistral({{"sliding_window", nullptr}})},
                           {"training", training},
                           {"parallel", {{"tp", 1}, {"pp", 1}, {"micro_batch_size", 1}}},
                           {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 8}}}});
  };
  const ModelSpec m = packed(0).model;
  // Documents of 1,024 tokens: 4 causal blocks of 1,024² / 2 pairs in a row of 4,096² pairs: 0.125.
  CHECK(attended_key_fraction(m, 4096, 1024) == approx(0.125));
  // 130 tokens fill two 128-token tiles a side: 256² / 2 pairs for 130 queries, over 4,096 keys: 0.0615...
  CHECK(attended_key_fraction(m, 4096, 130) == approx(256.0 * 256 / (2 * 130 * 4096)));
  // One document as long as the row: plain causal.
  CHECK(attended_key_fraction(m, 4096, 4096) == approx(0.5));
  CHECK(attended_key_fraction(m, 4096, 0) == approx(0.5));
  // The attention core's FLOPs follow (0.125 / 0.5 of the causal row's), the rest of the layer does not.
  const Scenario whole = packed(0), documents = packed(1024);
  const LayerCompute a = layer_compute(documents.model, documents.training, documents.parallel, documents.hardware.gpu, false);
  const LayerCompute b = layer_compute(whole.model, whole.training, whole.parallel, whole.hardware.gpu, false);
  CHECK(a.attention_flops == approx(b.attention_flops * 0.25));
  CHECK(a.gemm_flops == approx(b.gemm_flops));
  // More tokens in a document than in the row: refused, naming the path.
  CHECK_THROWS_WITH_AS(packed(5000), doctest::Contains("/training/document_tokens"), InputError);
}
