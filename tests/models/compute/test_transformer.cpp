// Parameter counts checked against exact published counts and hand-derived formulas.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <algorithm>

#include "models/compute/transformer.hpp"
#include "models/scenario/framework.hpp"
#include "models/scenario/scenario.hpp"

using namespace trainsim;
using Json = nlohmann::json;

namespace {
ModelSpec preset_model(const std::string& name) {
  return parse_scenario(Json{{"model", name}, {"hardware", {{"num_gpus", 1}, {"gpus_per_node", 1}}}}).model;
}
}  // namespace

TEST_CASE("Llama-3-8B has exactly 8,030,261,248 parameters") {
  // Sum of the tensor sizes in meta-llama/Meta-Llama-3-8B's safetensors index, by hand:
  // embeddings 2 x 128256 x 4096 (untied) + 32 x (4096^2 x 2 + 4096 x 1024 x 2 + 3 x 4096 x 14336 + 2 x 4096) + 4096.
  ModelParams p = count_parameters(preset_model("llama3-8b"));
  CHECK(p.total == 8030261248.0);
  CHECK(p.active == p.total);
}

TEST_CASE("DeepSeek-V3 multi-head latent attention: tensor sizes of the checkpoint, by hand") {
  // deepseek-ai/DeepSeek-V3 safetensors, one layer's attention: q_a_proj 7168 x 1536 = 11,010,048,
  // q_a_layernorm 1536, q_b_proj 1536 x 128·(128+64) = 37,748,736, kv_a_proj_with_mqa 7168 x (512+64) =
  // 4,128,768, kv_a_layernorm 512, kv_b_proj 512 x 128·(128+128) = 16,777,216, o_proj 128·128 x 7168 =
  // 117,440,512. Split over tp: the up-projections and o_proj; whole on every rank: the down-projections, norms.
  const ModelParams p = count_parameters(preset_model("deepseek-v3"));
  CHECK(p.dense_layer.attention_split == 37748736.0 + 16777216.0 + 117440512.0);
  CHECK(p.dense_layer.attention_replicated == 11010048.0 + 1536 + 4128768.0 + 512);
  // Totals (DeepSeek-V3 report: 671B, 37B activated): 61 attention blocks, 3 dense MLPs 3 x 7168 x 18432,
  // 58 MoE layers of 256 + 1 experts of 3 x 7168 x 2048 and a 7168 x 256 router, two 129280 x 7168 embeddings,
  // 61 x 2 + 1 RMSNorms of 7168.
  const double attention = 37748736.0 + 16777216.0 + 117440512.0 + 11010048.0 + 1536 + 4128768.0 + 512;
  const double expert = 3.0 * 7168 * 2048, norms = (61 * 2 + 1) * 7168.0, embeddings = 2.0 * 129280 * 7168;
  const double total = 61 * attention + 3 * (3.0 * 7168 * 18432) + 58 * (257 * expert + 7168.0 * 256) + embeddings + norms;
  CHECK(p.total == trainsim::test::approx(total).epsilon(1e-12));
  CHECK(p.active == trainsim::test::approx(total - 58 * 248 * expert).epsilon(1e-12));  // 8 routed + 1 shared of 257 per token
}

TEST_CASE("attention GEMM weights per tensor-parallel rank, as the layer walk dequantizes them and the count splits them") {
  // Llama-3-8B: Q and O 2 x 4096 x 4096 = 33,554,432; K and V 2 x 4096 x 8·128 = 8,388,608; one KV head's pair
  // 2 x 4096 x 128 = 1,048,576. tp 8: 4,194,304 + 1,048,576; tp 16 has more ranks than KV heads, so each keeps
  // one head's pair (Megatron replicates them): 2,097,152 + 1,048,576.
  const AttentionWeights llama = attention_weights(preset_model("llama3-8b"));
  CHECK(llama.split() == 33554432.0 + 8388608.0);
  CHECK(llama.per_rank(1) == 33554432.0 + 8388608.0);
  CHECK(llama.per_rank(8) == 4194304.0 + 1048576.0);
  CHECK(llama.per_rank(16) == 2097152.0 + 1048576.0);
  // DeepSeek-V3 (the checkpoint's tensors above): the up-projections and o_proj split, the down-projections
  // 7168 x 1536 + 7168 x 576 = 15,138,816 whole on each of tp 8 ranks.
  const AttentionWeights mla = attention_weights(preset_model("deepseek-v3"));
  CHECK(mla.per_rank(8) == (37748736.0 + 16777216.0 + 117440512.0) / 8 + 15138816.0);
  // An MLP's GEMM weights: gate, up and down of a gated MLP, 3 x 4096 x 14336 for Llama-3-8B.
  CHECK(mlp_weights(preset_model("llama3-8b"), 14336) == 3.0 * 4096 * 14336);
}

TEST_CASE("GPT-3 175B matches 12Lh^2 + 13Lh + Vh + ph + 2h") {
  // Narayanan et al. SC'21 §5.1 formula for GPT with learned positions and biases, plus the final layernorm.
  const double L = 96, h = 12288, V = 50257, pos = 2048;
  const double expected = 12 * L * h * h + 13 * L * h + V * h + pos * h + 2 * h;
  CHECK(count_parameters(preset_model("gpt3-175b")).total == trainsim::test::approx(expected).epsilon(1e-12));
}

TEST_CASE("Mixtral 8x7B: experts count in total, top-2 in active") {
  // Per layer: attention 4096 x (4096 + 2 x 1024 + 4096), router 4096 x 8, experts 8 x 3 x 4096 x 14336, norms 2 x 4096.
  const double attn = 4096.0 * (4096 + 1024 + 1024 + 4096), expert = 3.0 * 4096 * 14336, router = 4096.0 * 8, norms = 8192;
  const double outside = 2.0 * 32000 * 4096 + 4096;
  ModelParams p = count_parameters(preset_model("mixtral-8x7b"));
  CHECK(p.total == trainsim::test::approx(outside + 32 * (attn + router + norms + 8 * expert)).epsilon(1e-12));
  CHECK(p.active == trainsim::test::approx(outside + 32 * (attn + router + norms + 2 * expert)).epsilon(1e-12));
}

namespace {
ParallelLayout pipeline(int pp, int vpp = 1, bool embedding = false, bool loss = false) {
  ParallelLayout p;
  p.pp = pp;
  p.vpp = vpp;
  p.embedding_in_pipeline_split = embedding;
  p.loss_in_pipeline_split = loss;
  return p;
}
}  // namespace

TEST_CASE("uneven pipelines split as Megatron-LM runs them: equal middle stages, fewer layers first and last") {
  // Llama 3 405B (arXiv:2407.21783 §3.3.2): 126 layers on 16 stages, one layer fewer on the first and the last.
  const PipelineSplit llama = pipeline_split(126, 16);
  CHECK(!llama.even);
  CHECK(llama.first == 7);
  CHECK(llama.middle == 8);
  CHECK(llama.last == 7);
  CHECK(layers_in_stage(126, pipeline(16), 0) == 7);
  CHECK(layers_in_stage(126, pipeline(16), 1) == 8);
  CHECK(layers_in_stage(126, pipeline(16), 14) == 8);
  CHECK(layers_in_stage(126, pipeline(16), 15) == 7);
  CHECK(first_layer_of_virtual_stage(126, pipeline(16), 3) == 7 + 8 + 8);
  // Megatron's TransformerConfig checks: first, last >= 1 and the middle layers divisible by pp - 2.
  for (int layers = 2; layers <= 130; ++layers)
    for (int pp = 2; pp <= std::min(layers, 24); ++pp) {
      const PipelineSplit s = pipeline_split(layers, pp);
      int sum = 0;
      for (int st = 0; st < pp; ++st) {
        CHECK(layers_in_stage(layers, pipeline(pp), st) >= 1);
        CHECK(first_layer_of_virtual_stage(layers, pipeline(pp), st) == sum);
        sum += layers_in_stage(layers, pipeline(pp), st);
      }
      CHECK(sum == layers);
      CHECK(s.even == (layers % pp == 0));
    }
  // Two stages, odd layers: the extra one goes first (the last stage holds the LM head).
  CHECK(pipeline_split(5, 2).first == 3);
  CHECK(pipeline_split(5, 2).last == 2);
  // Five layers on four stages: 2 + 1 + 1 + 1.
  CHECK(layers_in_stage(5, pipeline(4), 0) == 2);
  CHECK(layers_in_stage(5, pipeline(4), 3) == 1);
}

TEST_CASE("interleaved pipelines that the layers do not divide: the split over virtual stages, as a layout string gives it") {
  // Qwen3-235B-A22B, 94 layers on pp 8 x vpp 4 (Megatron MoE model zoo, modern_runs.json). By hand: 32 virtual
  // stages; the middle ones take ceil(94/32) = 3, the 94 - 30 x 3 = 4 left go 2 to the first and 2 to the last.
  // Rank 0 holds virtual stages 0, 8, 16, 24: 2 + 3 + 3 + 3 = 11; ranks 1..6 hold 4 x 3 = 12; rank 7 3 + 3 + 3 + 2.
  const ParallelLayout q = pipeline(8, 4);
  CHECK(layers_in_virtual_stage(94, q, 0) == 2);
  CHECK(layers_in_virtual_stage(94, q, 1) == 3);
  CHECK(layers_in_virtual_stage(94, q, 31) == 2);
  CHECK(layers_in_stage(94, q, 0) == 11);
  CHECK(layers_in_stage(94, q, 3) == 12);
  CHECK(layers_in_stage(94, q, 7) == 11);
  CHECK(first_layer_of_virtual_stage(94, q, 8) == 2 + 7 * 3);  // rank 0's second chunk starts after 8 virtual stages
  // DeepSeek-style first 3 dense layers: 2 in virtual stage 0 (rank 0), 1 in virtual stage 1 (rank 1).
  CHECK(dense_layers_in_stage(94, 3, q, 0) == 2);
  CHECK(dense_layers_in_stage(94, 3, q, 1) == 1);
  CHECK(dense_layers_in_stage(94, 3, q, 2) == 0);

  // The same model on pp 32 x vpp 3 with the embedding and the loss as slots: 96 slots on 96 virtual stages,
  // one each. Rank 0 holds the embedding (virtual stage 0) and layers in stages 32 and 64: 2 layers; rank 31
  // layers in 31 and 63 and the loss in 95: 2; every other rank 3. 2 + 30 x 3 + 2 = 94.
  const ParallelLayout e = pipeline(32, 3, true, true);
  CHECK(pipeline_slots(94, e) == 96);
  CHECK(layers_in_virtual_stage(94, e, 0) == 0);
  CHECK(layers_in_virtual_stage(94, e, 95) == 0);
  CHECK(layers_in_stage(94, e, 0) == 2);
  CHECK(layers_in_stage(94, e, 1) == 3);
  CHECK(layers_in_stage(94, e, 31) == 2);
  CHECK(first_layer_of_virtual_stage(94, e, 1) == 0);  // the embedding slot holds no layer
  // Every split covers the layers exactly once.
  for (int layers : {24, 61, 94, 126})
    for (int pp : {2, 4, 8})
      for (int vpp : {1, 2, 3, 4})
        for (int flags = 0; flags < 4; ++flags) {
          const ParallelLayout p = pipeline(pp, vpp, flags & 1, flags & 2);
          if (virtual_stages(p) > pipeline_slots(layers, p)) continue;
          int sum = 0, dense = 0;
          for (int st = 0; st < pp; ++st) sum += layers_in_stage(layers, p, st), dense += dense_layers_in_stage(layers, 5, p, st);
          CHECK(sum == layers);
          CHECK(dense == 5);
        }
}

TEST_CASE("stage parameters: tensor parallel splits matrices, replicates norms; embedding on first, head on last") {
  ModelSpec m = preset_model("llama3-8b");
  ModelParams params = count_parameters(m);
  ParallelLayout p;
  p.tp = 2;
  p.pp = 2;
  StageParams first = stage_parameters(m, params, p, 0);
  StageParams last = stage_parameters(m, params, p, 1);
  const double layer_split = (41943040.0 + 176160768.0) / 2, norms = 8192;
  CHECK(first.layers == 16);
  CHECK(first.dense == trainsim::test::approx(16 * (layer_split + norms) + 128256.0 * 4096 / 2).epsilon(1e-12));
  CHECK(last.dense == trainsim::test::approx(16 * (layer_split + norms) + 128256.0 * 4096 / 2 + 4096).epsilon(1e-12));
}

TEST_CASE("LoRA rank 16 on every linear layer of Llama-3-8B: 41,943,040 trainable parameters") {
  // r·(in + out) per module: q 16·8192, k/v 16·5120, o 16·8192, gate/up/down 16·18432; x 32 layers.
  // The same figure PEFT's print_trainable_parameters() reports for this configuration.
  LoraSpec lora;
  lora.rank = 16;
  CHECK(lora_parameters(preset_model("llama3-8b"), lora) == 41943040.0);
}

TEST_CASE("MPT-70B (llm-foundry yaml shape, no published total) by formula") {
  // 12·L·h² (attention 4h², MLP 8h², no biases) + LayerNorm weights+biases 4h per layer + final 2h + tied V·h.
  const double L = 80, h = 8192, V = 50368;
  CHECK(count_parameters(preset_model("mpt-70b")).total == trainsim::test::approx(12 * L * h * h + 4 * L * h + 2 * h + V * h).epsilon(1e-12));
}

TEST_CASE("an unbalanced pipeline split is named in a note, a balanced one is not") {
  // 80 layers on pp 8 x vpp 4 (32 virtual stages): Megatron's uneven split keeps its middle stages equal (2 each) and
  // gives the first and last virtual stages 10 each, so rank 0 holds 10 + 3 x 2 = 16 layers against 80 / 8 = 10.
  ParallelLayout p;
  p.pp = 8;
  p.vpp = 4;
  CHECK(layers_in_stage(80, p, 0) == 16);
  CHECK(layers_in_stage(80, p, 1) == 8);
  const std::string note = pipeline_balance_note(80, p);
  CHECK(note.find("rank 0 holds 16 of 80 layers where an even split gives 10.0") != std::string::npos);
  p.vpp = 2;  // 16 virtual stages of 5: even
  CHECK(pipeline_balance_note(80, p).empty());
  p.pp = 16, p.vpp = 1;  // Llama 3 405B's 126 layers on 16 stages: 7 + 14 x 8 + 7, at most 8 against 7.9
  CHECK(pipeline_balance_note(126, p).empty());
}

TEST_CASE("torchtitan's split: n / stages each, one extra layer on each of the first middle stages") {
  // torchtitan generate_split_points, 80 layers on pp 8 x vpp 4 (32 virtual stages): base 2, 16 extra; stage 0 has 2,
  // stages 1-16 have 3, stages 17-31 have 2 (80 = 2 + 48 + 30). Rank r holds stages r, r+8, r+16, r+24: rank 0
  // 2 + 3 + 3 + 2 = 10, rank 7 3 + 3 + 2 + 2 = 10: balanced, no note.
  ParallelLayout p;
  p.pp = 8;
  p.vpp = 4;
  p.split_rule = PipelineSplitRule::ExtraToMiddle;
  CHECK(layers_in_virtual_stage(80, p, 0) == 2);
  CHECK(layers_in_virtual_stage(80, p, 1) == 3);
  CHECK(layers_in_virtual_stage(80, p, 16) == 3);
  CHECK(layers_in_virtual_stage(80, p, 17) == 2);
  CHECK(layers_in_virtual_stage(80, p, 31) == 2);
  CHECK(first_layer_of_virtual_stage(80, p, 17) == 2 + 16 * 3);
  int total = 0;
  for (int r = 0; r < 8; ++r) {
    CHECK(layers_in_stage(80, p, r) == 10);
    total += layers_in_stage(80, p, r);
  }
  CHECK(total == 80);
  CHECK(pipeline_balance_note(80, p).empty());
  // 126 layers on 16 stages: base 7, 14 extra on stages 1-14, the last 126 - 7 x 15 - 14 = 7.
  p.pp = 16, p.vpp = 1;
  CHECK(layers_in_stage(126, p, 0) == 7);
  CHECK(layers_in_stage(126, p, 14) == 8);
  CHECK(layers_in_stage(126, p, 15) == 7);
  // The fsdp2 preset carries the rule into a scenario's layout.
  const Scenario s = parse_scenario({{"model", "llama3-70b"},
                                     {"training", {{"seq_len", 4096}, {"global_batch_size", 64}, {"zero_stage", 3}, {"framework", "fsdp2"}}},
                                     {"parallel", {{"tp", 8}, {"pp", 4}, {"vpp", 2}, {"dp", 2}, {"micro_batch_size", 1}}},
                                     {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 64}}}});
  CHECK(s.parallel.split_rule == PipelineSplitRule::ExtraToMiddle);
}

TEST_CASE("NeMo AutoModel's split: n / stages each, one extra layer on each of the first stages") {
  // nemo_automodel generate_hf_model_fqn_per_model_part: layers_per_stage, extra = divmod(94, 16) = 5, 14; stage i
  // holds 5 + (i < 14): stages 0-13 six layers, 14 and 15 five. Rank r of pp 8 runs stages r and r + 8: ranks 0-5
  // 6 + 6 = 12, rank 6 6 + 5 = 11, rank 7 6 + 5 = 11 (94 in all).
  ParallelLayout p;
  p.pp = 8;
  p.vpp = 2;
  p.split_rule = PipelineSplitRule::ExtraToFirst;
  CHECK(layers_in_virtual_stage(94, p, 0) == 6);
  CHECK(layers_in_virtual_stage(94, p, 13) == 6);
  CHECK(layers_in_virtual_stage(94, p, 14) == 5);
  CHECK(layers_in_virtual_stage(94, p, 15) == 5);
  CHECK(first_layer_of_virtual_stage(94, p, 14) == 84);
  CHECK(first_layer_of_virtual_stage(94, p, 15) == 89);
  int total = 0;
  for (int r = 0; r < 8; ++r) {
    CHECK(layers_in_stage(94, p, r) == (r < 6 ? 12 : 11));
    total += layers_in_stage(94, p, r);
  }
  CHECK(total == 94);
  // Named in a scenario as an fsdp2 override, and round-tripped.
  const FrameworkTraits f = parse_framework(nlohmann::json{{"preset", "fsdp2"}, {"pipeline_split", "extra-to-first"}}, "/training/framework");
  CHECK(f.pipeline_split == PipelineSplitRule::ExtraToFirst);
  CHECK(framework_to_json(f) == nlohmann::json{{"preset", "fsdp2"}, {"pipeline_split", "extra-to-first"}});
}
