#include "models/compute/recompute_policy.hpp"

namespace trainsim {

namespace {
// One matmul of the block: FLOPs per token (2·in·out, counted alike for the fraction) and output elements.
struct Matmul {
  double flops, outputs;
  bool counted;  // an aten.mm that advances torchtitan's counter (grouped expert GEMMs do not)
};
}  // namespace

const std::vector<RecomputeModuleName>& recompute_module_names() {
  static const std::vector<RecomputeModuleName> names{{"core_attn", kRecomputeCoreAttn}, {"moe_act", kRecomputeMoeAct},
                                                      {"layernorm", kRecomputeLayernorm}, {"mla_up_proj", kRecomputeMlaUpProj},
                                                      {"mlp", kRecomputeMlp}, {"moe", kRecomputeMoe},
                                                      {"shared_experts", kRecomputeSharedExperts}};
  return names;
}

std::vector<std::string> recompute_module_list(unsigned modules) {
  std::vector<std::string> out;
  for (const RecomputeModuleName& n : recompute_module_names())
    if (modules & n.bit) out.push_back(n.name);
  return out;
}

std::string recompute_text(const TrainingSpec& t) {
  std::string text = to_string(t.recompute);
  if (t.recompute != Recompute::Selective || t.recompute_modules == kRecomputeCoreAttn) return text;
  const std::vector<std::string> names = recompute_module_list(t.recompute_modules);
  for (std::size_t i = 0; i < names.size(); ++i) text += (i ? ", " : " (") + names[i];
  return text + ")";
}

std::vector<RecomputeChoice> searched_recompute_choices(const ModelSpec& m) {
  std::vector<RecomputeChoice> out{{Recompute::None, kRecomputeCoreAttn}, {Recompute::Selective, kRecomputeCoreAttn}, {Recompute::Full, kRecomputeCoreAttn}};
  if (m.is_moe()) {
    const unsigned mla = m.is_mla() ? kRecomputeMlaUpProj : 0u;
    out.push_back({Recompute::Selective, kRecomputeLayernorm | kRecomputeMoeAct | mla});
    out.push_back({Recompute::Selective, kRecomputeLayernorm | kRecomputeMoe | mla});
  }
  return out;
}

PerOpCheckpoint every_other_matmul(const ModelSpec& m, bool moe_layer, double tp) {
  const double h = m.hidden_size, q = double(m.num_attention_heads) * m.qk_head_dim() / tp;
  const double kv = double(m.num_key_value_heads) * m.head_dim / tp, v_out = double(m.num_attention_heads) * m.value_head_dim() / tp;
  Matmul list[10];  // at most: MLA's 5 attention matmuls + router, experts and a gated shared expert
  int n = 0;
  auto add = [&](double in, double out, bool counted = true) { list[n++] = {2 * in * out, out, counted}; };
  if (m.is_mla()) {
    if (m.q_lora_rank > 0) add(h, m.q_lora_rank), add(m.q_lora_rank, q);
    else add(h, q);
    add(h, m.kv_lora_rank + m.qk_rope_head_dim);
    add(m.kv_lora_rank, double(m.num_attention_heads) * (m.qk_nope_head_dim + m.value_head_dim()) / tp);
  } else {
    add(h, q), add(h, kv), add(h, kv);
  }
  add(v_out, h);  // output projection
  const bool gated = m.mlp == MlpKind::Gated;
  auto mlp = [&](double f, bool counted) {
    add(h, f, counted);
    if (gated) add(h, f, counted);
    add(f, h, counted);
  };
  if (!moe_layer) {
    mlp(m.intermediate_size / tp, true);
  } else {
    add(h, m.num_experts);  // router
    // The experts a token visits: grouped GEMMs (gate, up, down or up, down), outside the mm counter.
    list[n++] = {2 * (gated ? 3.0 : 2.0) * h * m.moe_intermediate_size * m.num_experts_per_tok, 0, false};
    if (m.shared_expert_intermediate_size > 0) mlp(m.shared_expert_intermediate_size / tp, true);
  }
  PerOpCheckpoint out;
  double total = 0, recomputed = 0;
  int counter = 0;
  for (int i = 0; i < n; ++i) {
    total += list[i].flops;
    const bool saved = list[i].counted && (++counter % 2 == 1);
    if (saved) out.saved_outputs_per_token += list[i].outputs;
    else recomputed += list[i].flops;
  }
  out.recomputed_gemm_fraction = total > 0 ? recomputed / total : 0;
  return out;
}

}  // namespace trainsim
