// The `model` section: Hugging Face config.json names, plus trainsim's own fields.
#include <cmath>

#include "json_reader.hpp"
#include "presets.hpp"
#include "scenario_parts.hpp"

namespace trainsim {
namespace {

MlpKind mlp_kind(const std::string& act, const std::string& path) {
  if (act == "gelu" || act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "gelu_fast" || act == "relu")
    return MlpKind::Plain;
  if (act == "silu" || act == "swiglu" || act == "swish" || act == "geglu") return MlpKind::Gated;
  throw InputError(path, "\"" + act + "\"",
                   "gelu, gelu_new, gelu_pytorch_tanh, relu (2-matrix MLP) or silu, swiglu, geglu (gated 3-matrix MLP)");
}

// Keys that a pasted config.json may hold and that trainsim reads under another name or does not need.
// They are not listed as ignored; anything else unknown is.
const char* const kQuietHfKeys[] = {"architectures", "model_type", "torch_dtype", "transformers_version",
                                    "bos_token_id", "eos_token_id", "pad_token_id", "use_cache",
                                    "initializer_range", "rope_theta", "rope_scaling", "rms_norm_eps",
                                    "layer_norm_eps", "layer_norm_epsilon", "published_parameters",
                                    "published_active_parameters", "published_parameters_source",
                                    "_name_or_path", "hf_config"};

}  // namespace

ModelSpec parse_model(const Json& section_value, std::vector<AppliedDefault>* defaults, std::vector<std::string>* notes) {
  const std::string path = "/model";
  Json section = expand_preset(PresetKind::Model, section_value, path);
  JsonReader r(section, path, defaults);
  ModelSpec m;
  m.name = r.get_string("name", "custom", "");
  m.source = r.get_string("source", "", "");
  m.num_hidden_layers = r.required_int("num_hidden_layers");
  m.hidden_size = r.required_int("hidden_size");
  m.num_attention_heads = r.required_int("num_attention_heads");
  m.num_key_value_heads = r.get_int("num_key_value_heads", m.num_attention_heads, "multi-head attention (no GQA)", 1);
  if (!r.has("head_dim") && m.hidden_size % m.num_attention_heads != 0)
    throw InputError(path + "/num_attention_heads", std::to_string(m.num_attention_heads),
                     "a divisor of hidden_size (" + std::to_string(m.hidden_size) + ")", "or give head_dim");
  m.head_dim = r.get_int("head_dim", m.hidden_size / m.num_attention_heads, "hidden_size / num_attention_heads", 1);
  if (m.num_attention_heads % m.num_key_value_heads != 0)
    throw InputError(path + "/num_key_value_heads", std::to_string(m.num_key_value_heads),
                     "a divisor of num_attention_heads (" + std::to_string(m.num_attention_heads) + ")");
  m.hidden_act = r.get_string("hidden_act", "silu", "Llama-style SwiGLU MLP");
  m.mlp = mlp_kind(m.hidden_act, path + "/hidden_act");
  m.vocab_size = r.required_int("vocab_size");
  m.tie_word_embeddings = r.get_bool("tie_word_embeddings", false, "Hugging Face default for Llama-family configs");
  m.max_position_embeddings = r.get_int("max_position_embeddings", 0, "unknown", 0);
  std::string pos = r.get_enum("position_embedding_type", {"rope", "learned", "alibi"}, "rope", "rotary embeddings (no parameters)");
  m.position_embedding = pos == "learned" ? PositionEmbedding::Learned : pos == "alibi" ? PositionEmbedding::Alibi : PositionEmbedding::Rope;
  std::string norm_default = section.contains("layer_norm_eps") || section.contains("layer_norm_epsilon") ? "layernorm" : "rmsnorm";
  std::string norm = r.get_enum("norm_type", {"rmsnorm", "layernorm"}, norm_default,
                                norm_default == "layernorm" ? "the config has layer_norm_eps" : "RMSNorm (Llama family)");
  m.norm = norm == "layernorm" ? NormKind::LayerNorm : NormKind::RmsNorm;
  m.attention_bias = r.get_bool("attention_bias", false, "no attention biases");
  m.qkv_bias = r.get_bool("qkv_bias", false, "no QKV biases");
  m.mlp_bias = r.get_bool("mlp_bias", false, "no MLP biases");
  m.qk_norm = r.get_bool("qk_norm", false, "no QK normalisation");
  // Dropout: GPT-style models (2-matrix MLP) train with Megatron-LM's and GPT-2's default 0.1; gated-MLP
  // (Llama-family) models have no dropout layers. GPT-2 configs name them attn_pdrop / resid_pdrop.
  const bool gpt_style = m.mlp == MlpKind::Plain;
  const double dropout_default = gpt_style ? 0.1 : 0.0;
  const char* dropout_reason = gpt_style ? "Megatron-LM / GPT-2 default for GPT-style models" : "Llama-family models have no dropout";
  const char* attn_key = !r.has("attention_dropout") && r.has("attn_pdrop") ? "attn_pdrop" : "attention_dropout";
  const char* hidden_key = !r.has("hidden_dropout") && r.has("resid_pdrop") ? "resid_pdrop" : "hidden_dropout";
  m.attention_dropout = r.get_number(attn_key, dropout_default, dropout_reason, 0.0, 1.0);
  m.hidden_dropout = r.get_number(hidden_key, dropout_default, dropout_reason, 0.0, 1.0);
  r.mark_read({"attention_dropout", "hidden_dropout", "attn_pdrop", "resid_pdrop", "embd_pdrop"});

  // MoE: Hugging Face configs name the expert count in three ways.
  const char* expert_key = r.has("num_experts") ? "num_experts" : r.has("num_local_experts") ? "num_local_experts"
                           : r.has("n_routed_experts") ? "n_routed_experts" : "num_experts";
  r.mark_read({"num_experts", "num_local_experts", "n_routed_experts"});
  m.num_experts = r.has(expert_key) ? r.required_int(expert_key, 0) : 0;
  if (m.is_moe()) {
    m.num_experts_per_tok = r.required_int("num_experts_per_tok");
    if (m.num_experts_per_tok > m.num_experts)
      throw InputError(path + "/num_experts_per_tok", std::to_string(m.num_experts_per_tok),
                       "at most num_experts (" + std::to_string(m.num_experts) + ")");
    bool has_dense_size = r.has("intermediate_size");
    m.moe_intermediate_size = has_dense_size ? r.get_int("moe_intermediate_size", 0, "", 1) : r.required_int("moe_intermediate_size");
    if (m.moe_intermediate_size == 0) {
      m.moe_intermediate_size = r.required_int("intermediate_size");
      r.record_default("moe_intermediate_size", std::to_string(m.moe_intermediate_size), "intermediate_size (Mixtral-style config)");
    }
    // DeepSeek names shared experts by count; Qwen2-MoE by total size.
    int shared_count = r.get_int("n_shared_experts", 0, "", 0);
    m.shared_expert_intermediate_size = r.get_int("shared_expert_intermediate_size", shared_count * m.moe_intermediate_size,
                                                  "no shared expert", 0);
    m.first_k_dense_replace = r.get_int("first_k_dense_replace", 0, "every layer is an MoE layer", 0);
    if (m.first_k_dense_replace > m.num_hidden_layers)
      throw InputError(path + "/first_k_dense_replace", std::to_string(m.first_k_dense_replace),
                       "at most num_hidden_layers (" + std::to_string(m.num_hidden_layers) + ")");
  } else {
    r.mark_read({"num_experts_per_tok", "moe_intermediate_size", "shared_expert_intermediate_size", "first_k_dense_replace", "n_shared_experts"});
  }
  if (m.num_dense_layers() > 0) m.intermediate_size = r.required_int("intermediate_size");
  else m.intermediate_size = r.get_int("intermediate_size", 0, "", 0);

  for (const char* k : kQuietHfKeys) r.mark_read({k});
  r.mark_read({"preset"});
  // Unknown keys are expected in a pasted config; a near miss of a known key is a typo, though.
  std::vector<std::string> ignored;
  for (const auto& key : r.unread_keys()) {
    auto near = closest_names(key, r.read_keys(), 1);
    if (!near.empty() && edit_distance(key, near.front()) <= 2 && key.size() > 4)
      throw InputError(path + "/" + key, json_value_text(section.at(key)), "a known model field",
                       "did you mean \"" + near.front() + "\"?");
    ignored.push_back(key);
  }
  if (!ignored.empty() && notes) notes->push_back("model: ignored config keys: " + join(ignored));
  return m;
}

}  // namespace trainsim
