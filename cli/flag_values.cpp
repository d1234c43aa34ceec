#include "flag_values.hpp"

#include <cmath>
#include <optional>
#include <sstream>

#include "models/core/errors.hpp"
#include "models/core/limits.hpp"
#include "models/core/units.hpp"

namespace trainsim::cli {
namespace {

// The whole text as a base-10 integer (an optional sign, no spaces or trailing characters), else nothing.
std::optional<long long> whole_number(const std::string& s) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s.front()))) return std::nullopt;
  std::size_t used = 0;
  long long v = 0;
  try { v = std::stoll(s, &used); } catch (...) { return std::nullopt; }
  if (used != s.size()) return std::nullopt;
  return v;
}

std::optional<double> finite_number(const std::string& s) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s.front()))) return std::nullopt;
  std::size_t used = 0;
  double v = 0;
  try { v = std::stod(s, &used); } catch (...) { return std::nullopt; }
  if (used != s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

}  // namespace

const std::vector<FieldFlag>& field_flags() {
  static const std::vector<FieldFlag> flags = {
      {"--model", "/model", FlagType::Text, "model preset name or path to a model section / config.json"},
      {"--gpu", "/hardware/gpu", FlagType::Text, "GPU preset name"},
      {"--gpus", "/hardware/num_gpus", FlagType::Integer, "total GPUs"},
      {"--nodes", "/hardware/num_nodes", FlagType::Integer, "nodes"},
      {"--gpus-per-node", "/hardware/gpus_per_node", FlagType::Integer, "GPUs per node"},
      {"--intra-node", "/hardware/intra_node", FlagType::Text, "intra-node fabric preset"},
      {"--inter-node", "/hardware/inter_node/fabric", FlagType::Text, "inter-node fabric preset"},
      {"--nics-per-node", "/hardware/inter_node/nics_per_node", FlagType::Integer, "NICs per node"},
      {"--price-per-gpu-hour", "/hardware/price_per_gpu_hour", FlagType::Text, "USD per GPU-hour"},
      {"--mode", "/training/mode", FlagType::Text, "pretrain | sft | lora | qlora | dpo | ppo | grpo (ppo and grpo need training.rlhf)"},
      {"--seq-len", "/training/seq_len", FlagType::Integer, "sequence length"},
      {"--global-batch-size", "/training/global_batch_size", FlagType::Integer, "sequences per optimizer step"},
      {"--train-tokens", "/training/train_tokens", FlagType::Text, "tokens to train on, e.g. 15T"},
      {"--precision", "/training/precision", FlagType::Text, "fp32 | fp16 | bf16 | fp8"},
      {"--grad-precision", "/training/grad_precision", FlagType::Text, "gradient buffer dtype: fp32 | bf16 | fp16"},
      {"--optimizer", "/training/optimizer", FlagType::Text, "adam | adamw | sgd | adam8bit | paged_adamw | paged_adamw8bit"},
      {"--zero", "/training/zero_stage", FlagType::Integer, "ZeRO stage 0-3 (FSDP full shard = 3)"},
      {"--distributed-optimizer", "/training/distributed_optimizer", FlagType::Boolean, "Megatron distributed optimizer (true/false)"},
      {"--recompute", "/training/recompute", FlagType::Text, "none | selective | full"},
      {"--framework", "/training/framework", FlagType::Text,
       "megatron-core | megatron-deepspeed | deepspeed | fsdp | fsdp2 | transformers (default: implied by the layout)"},
      {"--flash-attention", "/training/flash_attention", FlagType::Boolean, "true/false"},
      {"--offload-optimizer", "/training/offload_optimizer", FlagType::Boolean, "true/false"},
      {"--lora-rank", "/training/lora/rank", FlagType::Integer, "LoRA rank"},
      {"--moe-expert-load-cv", "/training/moe_expert_load_cv", FlagType::Number,
       "MoE, dropless routing: the router's coefficient of variation of an expert's tokens per micro-batch (0 = uniform)"},
      {"--tp", "/parallel/tp", FlagType::Integer, "tensor parallel"},
      {"--pp", "/parallel/pp", FlagType::Integer, "pipeline parallel"},
      {"--dp", "/parallel/dp", FlagType::Integer, "data parallel"},
      {"--cp", "/parallel/cp", FlagType::Integer, "context parallel"},
      {"--dp-replicate", "/parallel/dp_replicate", FlagType::Integer, "hybrid sharding: replicas of the ZeRO shards (HSDP)"},
      {"--ep", "/parallel/ep", FlagType::Integer, "expert parallel"},
      {"--etp", "/parallel/etp", FlagType::Integer, "expert tensor parallel"},
      {"--vpp", "/parallel/vpp", FlagType::Integer, "virtual pipeline stages per rank"},
      {"--sequence-parallel", "/parallel/sequence_parallel", FlagType::Boolean, "true/false"},
      {"--tp-comm-overlap", "/parallel/tp_comm_overlap", FlagType::Boolean, "overlap TP communication with GEMMs (true/false)"},
      {"--micro-batch-size", "/parallel/micro_batch_size", FlagType::Integer, "sequences per micro-batch"},
      {"--gradient-accumulation-steps", "/parallel/gradient_accumulation_steps", FlagType::Integer, "micro-batches per step"},
      {"--schedule", "/parallel/schedule", FlagType::Text, "gpipe | 1f1b | interleaved"},
      {"--topology", "/hardware/network/topology", FlagType::Text, "fat-tree | rail | single-switch (trainsim simulate)"},
      {"--nodes-per-leaf", "/hardware/network/nodes_per_leaf", FlagType::Integer, "nodes under one leaf switch or rail group"},
      {"--oversubscription", "/hardware/network/oversubscription", FlagType::Number, "leaf downlink / uplink bandwidth, e.g. 4 for 4:1"},
      {"--levels", "/hardware/network/levels", FlagType::Integer, "fat-tree switch levels: 2 or 3"},
  };
  return flags;
}

const FieldFlag& field_flag_for(const std::string& pointer) {
  for (const FieldFlag& f : field_flags())
    if (pointer == f.pointer) return f;
  return field_flags().front();
}

nlohmann::json field_flag_value(const FieldFlag& f, const std::string& text) {
  switch (f.type) {
    case FlagType::Integer:
      if (const auto v = whole_number(text)) return *v;
      throw InputError(f.flag, quoted(text), "an integer");
    case FlagType::Number:
      if (const auto v = finite_number(text)) return *v;
      throw InputError(f.flag, quoted(text), "a number");
    case FlagType::Boolean:
      if (text == "true" || text == "1" || text == "yes") return true;
      if (text == "false" || text == "0" || text == "no") return false;
      throw InputError(f.flag, quoted(text), "true or false");
    case FlagType::Text: break;
  }
  return text;
}

std::pair<std::string, double> id_factor(const std::string& flag, const std::string& text) {
  const auto colon = text.rfind(':');
  const std::string expected = "ID:FACTOR with a slowdown FACTOR from 1 to 1000 (e.g. 3:1.5)";
  if (colon == std::string::npos || colon == 0) throw InputError(flag, quoted(text), expected);
  const auto f = finite_number(text.substr(colon + 1));
  if (!f || !(*f >= 1 && *f <= 1000)) throw InputError(flag, quoted(text), expected);
  return {text.substr(0, colon), *f};
}

std::pair<int, double> index_factor(const std::string& flag, const std::string& text, int count, const std::string& index_name,
                                    const std::string& noun) {
  const auto [id, factor] = id_factor(flag, text);
  const auto index = whole_number(id);
  if (!index || *index < 0 || *index >= count)
    throw InputError(flag, quoted(text), index_name + ":FACTOR with a " + noun + " from 0 to " + std::to_string(count - 1) + " (e.g. 0:1.5)");
  return {static_cast<int>(*index), factor};
}

std::vector<int> parse_gpu_counts(const std::string& text) {
  const std::string expected = "N, A..B (doubling from A to B) or a list A,B,C of GPU counts, each in [1, " + std::to_string(limits::kMaxGpus) + "]";
  auto number = [&](const std::string& s) {
    const auto v = whole_number(s);
    if (!v || *v < 1 || *v > limits::kMaxGpus) throw InputError("--gpus", quoted(text), expected);
    return static_cast<int>(*v);
  };
  std::vector<int> out;
  if (auto dots = text.find(".."); dots != std::string::npos) {
    const int a = number(text.substr(0, dots)), b = number(text.substr(dots + 2));
    if (b < a) throw InputError("--gpus", quoted(text), "A..B with A <= B");
    for (long long v = a; v <= b; v *= 2) out.push_back(static_cast<int>(v));
  } else {
    for (std::size_t start = 0;;) {
      const std::size_t comma = text.find(',', start);
      out.push_back(number(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
      if (comma == std::string::npos) break;
      start = comma + 1;
      if (out.size() > 64) break;  // refused below, without reading the rest
    }
  }
  if (out.size() > 64) throw InputError("--gpus", quoted(text), "at most 64 GPU counts");
  return out;
}

Budget parse_budget(const std::string& text) {
  // A bare number is ambiguous (dollars or seconds?): a budget names its unit.
  const bool has_unit = text.find_first_not_of("0123456789.eE+- ") != std::string::npos;
  Budget b;
  if (auto money = parse_quantity(text, Quantity::Money); money && has_unit) b.max_cost = *money;
  else if (auto time = parse_quantity(text, Quantity::Time); time && has_unit) b.max_time_s = *time;
  else throw InputError("--budget", quoted(text), "money (\"$250000\") or a duration with its unit (\"30d\")");
  if (!(b.max_cost > 0 || b.max_time_s > 0) || !std::isfinite(b.max_cost) || !std::isfinite(b.max_time_s))
    throw InputError("--budget", quoted(text), "a budget above zero", "leave --budget out for no limit");
  return b;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::pair<std::string, int> parse_rdma_resource(const std::string& text) {
  const auto bad = [&](const std::string& why) -> InputError {
    return InputError("--rdma-resource", "\"" + text + "\"", "DOMAIN/NAME[=COUNT], a device plugin's resource such as rdma/rdma_shared_device_a=1", why);
  };
  const std::size_t eq = text.find('=');
  const std::string name = text.substr(0, eq);
  int count = 1;
  if (eq != std::string::npos) {
    const std::string n = text.substr(eq + 1);
    if (n.empty() || n.size() > 4 || n.find_first_not_of("0123456789") != std::string::npos || std::stoi(n) < 1 || std::stoi(n) > 1024)
      throw bad("the count is a whole number from 1 to 1024");
    count = std::stoi(n);
  }
  const std::size_t slash = name.find('/');
  if (slash == std::string::npos || slash == 0 || name.find('/', slash + 1) != std::string::npos)
    throw bad("an extended resource is DOMAIN/NAME with one '/'");
  const std::string domain = name.substr(0, slash), local = name.substr(slash + 1);
  const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
  if (domain.size() > 253 || domain.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-.") != std::string::npos || !alnum(domain.front()) ||
      !alnum(domain.back()))
    throw bad("the domain is lowercase letters, digits, '-' and '.', starting and ending with a letter or digit");
  if (local.empty() || local.size() > 63 || local.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != std::string::npos ||
      !alnum(local.front()) || !alnum(local.back()))
    throw bad("the name is at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit");
  return {name, count};
}

}  // namespace trainsim::cli
