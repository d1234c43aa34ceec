// The `model` section: Hugging Face config.json names, plus trainsim's own fields.
#include <cmath>

#include "models/core/json_reader.hpp"
#include "models/core/limits.hpp"
#include "models/scenario/presets.hpp"
#include "models/scenario/scenario.hpp"
#include "models/scenario/scenario_parts.hpp"

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
                                    "initializer_range", "published_parameters",
                                    "published_active_parameters", "published_parameters_source",
                                    "_name_or_path", "hf_config"};

// Gated DeltaNet's widths (Qwen3-Next config.json: linear_num_key_heads, linear_num_value_heads,
// linear_key_head_dim, linear_value_head_dim, linear_conv_kernel_dim), required when layers use it; the softmax
// layers' output gate (attention_output_gate: transformers' Qwen3NextAttention doubles q_proj for it, so
// model_type qwen3_next and hybrid configs imply it).
void read_linear_attention(JsonReader& r, const std::string& path, const std::string& model_type, ModelSpec* m) {
  const char* keys[] = {"linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim"};
  r.mark_read({keys[0], keys[1], keys[2], keys[3], keys[4]});
  const bool hybrid = m->linear_attention_layers > 0;
  const bool gate_default = hybrid || model_type == "qwen3_next";
  m->attention_output_gate = r.get_bool("attention_output_gate", gate_default, gate_default ? "Qwen3-Next gates its softmax attention's output" : "");
  if (!hybrid) return;
  m->linear_num_key_heads = r.required_int("linear_num_key_heads", 1, limits::kMaxHeads);
  m->linear_num_value_heads = r.required_int("linear_num_value_heads", 1, limits::kMaxHeads);
  m->linear_key_head_dim = r.required_int("linear_key_head_dim", 1, limits::kMaxHeadDim);
  m->linear_value_head_dim = r.required_int("linear_value_head_dim", 1, limits::kMaxHeadDim);
  m->linear_conv_kernel_dim = r.get_int("linear_conv_kernel_dim", 4, "Qwen3-Next's 4-tap causal conv", 1, 64);
  if (m->linear_num_value_heads % m->linear_num_key_heads != 0)
    throw InputError(path + "/linear_num_value_heads", std::to_string(m->linear_num_value_heads),
                     "a multiple of linear_num_key_heads (" + std::to_string(m->linear_num_key_heads) + ")");
}

// Which attention each layer runs, as Hugging Face configs spell it. layer_types (one entry per layer:
// "full_attention", "sliding_attention", "linear_attention"), else Qwen3-Next's full_attention_interval N (every
// N-th layer softmax attention, the rest Gated DeltaNet). Sliding windows: sliding_window (tokens; null = none) on
// the layers layer_types marks, else on every layer (Mistral), on all but every sliding_window_pattern-th layer
// (Gemma 3), on the layers from max_window_layers on (Qwen2), on none when use_sliding_window is false (Qwen2/3
// configs carry a window they do not use).
void read_layer_pattern(JsonReader& r, const std::string& path, const std::string& model_type, ModelSpec* m) {
  r.mark_read({"sliding_window", "layer_types", "use_sliding_window", "sliding_window_pattern", "max_window_layers", "full_attention_interval"});
  const int layers = m->num_hidden_layers;
  if (r.has("layer_types")) {
    const Json& types = r.raw("layer_types");
    if (!types.is_array() || static_cast<int>(types.size()) != layers)
      throw InputError(path + "/layer_types", json_value_text(types), "an array of num_hidden_layers (" + std::to_string(layers) + ") layer types");
    for (std::size_t i = 0; i < types.size(); ++i) {
      const std::string kind = types[i].is_string() ? types[i].get<std::string>() : "";
      if (kind == "sliding_attention") ++m->sliding_layers;
      else if (kind == "linear_attention") ++m->linear_attention_layers;
      else if (kind != "full_attention")
        throw InputError(path + "/layer_types/" + std::to_string(i), json_value_text(types[i]),
                         "\"full_attention\", \"sliding_attention\" or \"linear_attention\"");
    }
  } else if (r.has("full_attention_interval")) {
    const int every = r.get_int("full_attention_interval", 1, "", 1, limits::kMaxLayers);
    m->linear_attention_layers = layers - layers / every;
  }
  read_linear_attention(r, path, model_type, m);

  const bool window_given = r.has("sliding_window") && !r.raw("sliding_window").is_null();
  if (window_given) m->sliding_window = r.get_int("sliding_window", 0, "", 1, limits::kMaxPositions);
  if (!window_given || m->sliding_window == 0) {
    if (m->sliding_layers > 0) throw InputError(path + "/sliding_window", "nothing", "a window in tokens for the sliding_attention layers");
    return;
  }
  if (r.has("layer_types")) return;
  if (r.has("use_sliding_window") && !r.get_bool("use_sliding_window", true, "")) {
    m->sliding_window = 0;
    return;
  }
  const int softmax_layers = layers - m->linear_attention_layers;
  if (r.has("sliding_window_pattern")) {
    const int period = r.get_int("sliding_window_pattern", 1, "", 1, limits::kMaxLayers);
    m->sliding_layers = softmax_layers - softmax_layers / period;
  } else if (r.has("max_window_layers")) {
    m->sliding_layers = softmax_layers - std::min(softmax_layers, r.get_int("max_window_layers", 0, "", 0, limits::kMaxLayers));
  } else {
    m->sliding_layers = softmax_layers;
  }
}

// Rotary embeddings as Hugging Face writes them: rope_theta, and rope_scaling {rope_type (or the older "type"),
// factor, ...} or null.
void read_rope(JsonReader& r, ModelSpec* m) {
  m->rope_theta = r.get_number("rope_theta", 0, "", 1, 1e12);
  if (!r.has("rope_scaling")) {
    r.mark_read({"rope_scaling"});
    return;
  }
  const Json& scaling = r.raw("rope_scaling");
  const std::string path = r.child_path("rope_scaling");
  if (!scaling.is_object()) throw InputError(path, json_value_text(scaling), "an object {rope_type, factor, ...} or null");
  JsonReader sr(scaling, path, nullptr);
  const char* type_key = sr.has("rope_type") ? "rope_type" : "type";
  sr.mark_read({"rope_type", "type"});
  m->rope_scaling_type = sr.get_string(type_key, "", "");
  if (m->rope_scaling_type.empty()) throw InputError(path + "/rope_type", sr.absent_text(type_key), "the scaling type, e.g. \"llama3\", \"linear\", \"yarn\"");
  m->rope_scaling_factor = sr.get_number("factor", 0, "", 1, 1e6);
  // The other keys (low_freq_factor, original_max_position_embeddings, beta_fast, ...) shape the frequencies,
  // not the cost of training; they are kept by the configs that need them and not read here.
}

}  // namespace

// Alternative names of one field: Hugging Face configs of different architectures (Mixtral, DeepSeek) and
// GPT-2 name some fields their own way.
void canonicalize_model_keys(Json& section, const std::string& path) {
  static const std::pair<const char*, const char*> kAliases[] = {
      {"num_local_experts", "num_experts"}, {"n_routed_experts", "num_experts"},
      {"attn_pdrop", "attention_dropout"}, {"resid_pdrop", "hidden_dropout"},
      {"num_nextn_predict_layers", "mtp_num_layers"}, {"mtp_num_hidden_layers", "mtp_num_layers"}};
  if (!section.is_object()) return;
  for (const auto& [alias, canonical] : kAliases) {
    auto it = section.find(alias);
    if (it == section.end()) continue;
    auto existing = section.find(canonical);
    if (existing != section.end() && *existing != *it)
      throw InputError(path + "/" + alias, json_value_text(*it),
                       std::string("the same value as \"") + canonical + "\" (" + json_value_text(*existing) + "), or only one of them",
                       std::string(alias) + " is another name for " + canonical);
    section[canonical] = *it;
    section.erase(alias);
  }
}

namespace {
// Multi-head latent attention, with Hugging Face DeepSeek-V2/V3 names (q_lora_rank null: a full q projection).
// K and V are per head after the up-projection, so the key/value heads are the attention heads.
void read_mla(JsonReader& r, const std::string& path, ModelSpec* m) {
  m->kv_lora_rank = r.get_int("kv_lora_rank", 0, "", 1, limits::kMaxIntermediate);
  if (m->kv_lora_rank == 0) {
    for (const char* k : {"q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"})
      if (r.has(k)) throw InputError(path + "/" + k, json_value_text(r.raw(k)), "kv_lora_rank as well (multi-head latent attention)");
    return;
  }
  m->q_lora_rank = r.get_int("q_lora_rank", 0, "", 1, limits::kMaxIntermediate);
  m->qk_nope_head_dim = r.required_int("qk_nope_head_dim", 1, limits::kMaxHeadDim);
  m->qk_rope_head_dim = r.required_int("qk_rope_head_dim", 1, limits::kMaxHeadDim);
  m->v_head_dim = r.required_int("v_head_dim", 1, limits::kMaxHeadDim);
  r.mark_read({"q_lora_rank"});
  if (m->num_key_value_heads != m->num_attention_heads)
    throw InputError(path + "/num_key_value_heads", std::to_string(m->num_key_value_heads),
                     "num_attention_heads (" + std::to_string(m->num_attention_heads) + ") with multi-head latent attention",
                     "MLA up-projects keys and values for every head");
}
}  // namespace

ModelSpec parse_model(const Json& section_value, std::vector<AppliedDefault>* defaults, std::vector<std::string>* notes,
                      const std::string& path) {
  // Alias keys become their canonical names before a preset's fields are overridden, so an override written
  // as Mixtral's "num_local_experts" replaces the preset's "num_experts" instead of being ignored.
  Json given = section_value;
  canonicalize_model_keys(given, path);
  Json section = expand_preset(PresetKind::Model, given, path);
  canonicalize_model_keys(section, path);
  JsonReader r(section, path, defaults);
  ModelSpec m;
  const std::string model_type = r.has("model_type") && r.raw("model_type").is_string() ? r.raw("model_type").get<std::string>() : "";
  std::string name_default = "custom";
  if (r.has("_name_or_path") && r.raw("_name_or_path").is_string() && !r.raw("_name_or_path").get<std::string>().empty())
    name_default = r.raw("_name_or_path").get<std::string>();
  else if (!model_type.empty()) name_default = model_type;
  m.name = r.get_string("name", name_default, "");
  m.source = r.get_string("source", "", "");
  m.num_hidden_layers = r.required_int("num_hidden_layers", 1, limits::kMaxLayers);
  m.hidden_size = r.required_int("hidden_size", 1, limits::kMaxHidden);
  m.num_attention_heads = r.required_int("num_attention_heads", 1, limits::kMaxHeads);
  m.num_key_value_heads = r.get_int("num_key_value_heads", m.num_attention_heads, "multi-head attention (no GQA)", 1, limits::kMaxHeads);
  if (!r.has("head_dim") && m.hidden_size % m.num_attention_heads != 0)
    throw InputError(path + "/num_attention_heads", std::to_string(m.num_attention_heads),
                     "a divisor of hidden_size (" + std::to_string(m.hidden_size) + ")", "or give head_dim");
  m.head_dim = r.get_int("head_dim", m.hidden_size / m.num_attention_heads, "hidden_size / num_attention_heads", 1, limits::kMaxHeadDim);
  if (m.num_attention_heads % m.num_key_value_heads != 0)
    throw InputError(path + "/num_key_value_heads", std::to_string(m.num_key_value_heads),
                     "a divisor of num_attention_heads (" + std::to_string(m.num_attention_heads) + ")");
  m.hidden_act = r.get_string("hidden_act", "silu", "Llama-style SwiGLU MLP");
  m.mlp = mlp_kind(m.hidden_act, path + "/hidden_act");
  m.vocab_size = r.required_int("vocab_size", 1, limits::kMaxVocab);
  m.tie_word_embeddings = r.get_bool("tie_word_embeddings", false, "Hugging Face default for Llama-family configs");
  m.max_position_embeddings = r.get_int("max_position_embeddings", 0, "unknown", 0, limits::kMaxPositions);
  std::string pos = r.get_enum("position_embedding_type", {"rope", "learned", "alibi", "none"}, "rope", "rotary embeddings (no parameters)");
  m.position_embedding = pos == "learned" ? PositionEmbedding::Learned
                         : pos == "alibi" ? PositionEmbedding::Alibi
                         : pos == "none"  ? PositionEmbedding::None
                                          : PositionEmbedding::Rope;
  std::string norm_default = section.contains("layer_norm_eps") || section.contains("layer_norm_epsilon") ? "layernorm" : "rmsnorm";
  std::string norm = r.get_enum("norm_type", {"rmsnorm", "layernorm"}, norm_default,
                                norm_default == "layernorm" ? "the config has layer_norm_eps" : "RMSNorm (Llama family)");
  m.norm = norm == "layernorm" ? NormKind::LayerNorm : NormKind::RmsNorm;
  // The norms' epsilon under its Hugging Face names (Llama, Qwen: rms_norm_eps; GPT-2, BLOOM: layer_norm_eps(ilon)).
  double eps = 1e-5;  // Llama's and Megatron's default
  for (const char* key : {"rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon"})
    if (r.has(key)) eps = r.get_number(key, eps, "", 1e-12, 0.1);
  m.norm_epsilon = r.get_number("norm_epsilon", eps, "", 1e-12, 0.1);
  m.attention_bias = r.get_bool("attention_bias", false, "no attention biases");
  // Architectures whose Hugging Face configs do not spell these out (transformers' modeling code hard-codes
  // them): Qwen2 / Qwen2.5 (modeling_qwen2.py: q/k/v projections with bias=True) and Qwen3 (modeling_qwen3.py:
  // q_norm / k_norm RMSNorm per head, no biases).
  const bool qwen2 = model_type == "qwen2" || model_type == "qwen2_moe" || model_type == "qwen2_vl" || model_type == "qwen2_5_vl";
  const bool qwen3 = model_type == "qwen3" || model_type == "qwen3_moe" || model_type == "qwen3_next";
  m.qkv_bias = r.get_bool("qkv_bias", qwen2, qwen2 ? "model_type " + model_type + ": Qwen2 has biases on q/k/v" : "no QKV biases");
  m.mlp_bias = r.get_bool("mlp_bias", false, "no MLP biases");
  m.qk_norm = r.get_bool("qk_norm", qwen3, qwen3 ? "model_type " + model_type + ": Qwen3 normalises q and k per head" : "no QK normalisation");
  read_rope(r, &m);
  read_mla(r, path, &m);
  read_layer_pattern(r, path, model_type, &m);
  // DeepSeek-V3's num_nextn_predict_layers and Qwen3-Next's mtp_num_hidden_layers are read as this.
  m.mtp_layers = r.get_int("mtp_num_layers", 0, "", 0, 16);
  // Dropout: GPT-style models (2-matrix MLP) train with Megatron-LM's and GPT-2's default 0.1; gated-MLP
  // (Llama-family) models have no dropout layers. (GPT-2's attn_pdrop / resid_pdrop are read as these.)
  const bool gpt_style = m.mlp == MlpKind::Plain;
  const double dropout_default = gpt_style ? 0.1 : 0.0;
  const char* dropout_reason = gpt_style ? "Megatron-LM / GPT-2 default for GPT-style models" : "Llama-family models have no dropout";
  m.attention_dropout = r.get_number("attention_dropout", dropout_default, dropout_reason, 0.0, 1.0);
  m.hidden_dropout = r.get_number("hidden_dropout", dropout_default, dropout_reason, 0.0, 1.0);
  r.mark_read({"embd_pdrop"});

  // MoE (num_local_experts and n_routed_experts were read as num_experts).
  m.num_experts = r.has("num_experts") ? r.required_int("num_experts", 0, limits::kMaxExperts) : 0;
  r.mark_read({"num_experts"});
  if (m.is_moe()) {
    m.num_experts_per_tok = r.required_int("num_experts_per_tok", 1, limits::kMaxExperts);
    if (m.num_experts_per_tok > m.num_experts)
      throw InputError(path + "/num_experts_per_tok", std::to_string(m.num_experts_per_tok),
                       "at most num_experts (" + std::to_string(m.num_experts) + ")");
    bool has_dense_size = r.has("intermediate_size");
    m.moe_intermediate_size = has_dense_size ? r.get_int("moe_intermediate_size", 0, "", 1, limits::kMaxIntermediate)
                                             : r.required_int("moe_intermediate_size", 1, limits::kMaxIntermediate);
    if (m.moe_intermediate_size == 0) {
      m.moe_intermediate_size = r.required_int("intermediate_size", 1, limits::kMaxIntermediate);
      r.record_default("moe_intermediate_size", std::to_string(m.moe_intermediate_size), "intermediate_size (Mixtral-style config)");
    }
    // DeepSeek names shared experts by count; Qwen2-MoE by total size.
    int shared_count = r.get_int("n_shared_experts", 0, "", 0, limits::kMaxExperts);
    const long long shared_default = static_cast<long long>(shared_count) * m.moe_intermediate_size;
    if (shared_default > limits::kMaxIntermediate)
      throw InputError(path + "/n_shared_experts", std::to_string(shared_count),
                       "n_shared_experts x moe_intermediate_size at most " + std::to_string(limits::kMaxIntermediate));
    m.shared_expert_intermediate_size = r.get_int("shared_expert_intermediate_size", static_cast<int>(shared_default), "no shared expert", 0,
                                                  limits::kMaxIntermediate);
    m.first_k_dense_replace = r.get_int("first_k_dense_replace", 0, "every layer is an MoE layer", 0, limits::kMaxLayers);
    // The router as DeepSeek's and Qwen's configs describe it (transformers' modeling_deepseek_v3.py, modeling_qwen3_moe.py).
    m.router_score = r.get_enum("scoring_func", {"softmax", "sigmoid"}, "softmax", "");
    m.router_norm_topk = r.get_bool("norm_topk_prob", true, "");
    m.router_groups = r.get_int("n_group", 0, "", 0, limits::kMaxExperts);
    m.router_group_topk = r.get_int("topk_group", 0, "", 0, limits::kMaxExperts);
    if (m.router_group_topk > m.router_groups)
      throw InputError(path + "/topk_group", std::to_string(m.router_group_topk), "at most n_group (" + std::to_string(m.router_groups) + ")");
    if (m.router_groups > 0 && m.num_experts % m.router_groups != 0)
      throw InputError(path + "/n_group", std::to_string(m.router_groups), "a divisor of num_experts (" + std::to_string(m.num_experts) + ")");
    m.router_scaling_factor = r.get_number("routed_scaling_factor", 0, "", 0, 1000);
    m.router_expert_bias = r.get_enum("topk_method", {"greedy", "group_limited_greedy", "noaux_tc"}, "greedy", "") == "noaux_tc";
    if (m.first_k_dense_replace > m.num_hidden_layers)
      throw InputError(path + "/first_k_dense_replace", std::to_string(m.first_k_dense_replace),
                       "at most num_hidden_layers (" + std::to_string(m.num_hidden_layers) + ")");
  } else {
    r.mark_read({"num_experts_per_tok", "moe_intermediate_size", "shared_expert_intermediate_size", "first_k_dense_replace", "n_shared_experts",
                 "scoring_func", "norm_topk_prob", "n_group", "topk_group", "routed_scaling_factor", "topk_method"});
  }
  if (m.num_dense_layers() > 0) m.intermediate_size = r.required_int("intermediate_size", 1, limits::kMaxIntermediate);
  else m.intermediate_size = r.get_int("intermediate_size", 0, "", 0, limits::kMaxIntermediate);

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
