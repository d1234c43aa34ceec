#include "models/scenario/framework.hpp"

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"
#include "models/core/limits.hpp"
#include "models/core/name_registry.hpp"
#include "models/scenario/spec.hpp"

namespace trainsim {
namespace embedded {
std::vector<std::string_view> framework_presets_json();  // presets/frameworks/*.json (cmake/embed_text_folder.cmake)
}  // namespace embedded

const char* to_string(PipelineSplitRule r) {
  switch (r) {
    case PipelineSplitRule::UnevenEnds: return "uneven-ends";
    case PipelineSplitRule::ExtraToMiddle: return "extra-to-middle";
    case PipelineSplitRule::ExtraToFirst: return "extra-to-first";
  }
  return "uneven-ends";
}

PipelineSplitRule pipeline_split_rule(const std::string& name) {
  for (PipelineSplitRule r : {PipelineSplitRule::ExtraToMiddle, PipelineSplitRule::ExtraToFirst})
    if (name == to_string(r)) return r;
  return PipelineSplitRule::UnevenEnds;
}

namespace {

// The yes/no traits, each once: read from presets and overrides, known as keys, written back by framework_to_json.
struct FlagTrait {
  const char* key;
  bool FrameworkTraits::*member;
};
constexpr FlagTrait kFlagTraits[] = {
    {"overlap_grad_reduce", &FrameworkTraits::overlap_grad_reduce},
    {"overlap_param_gather", &FrameworkTraits::overlap_param_gather},
    {"tp_comm_overlap_available", &FrameworkTraits::tp_comm_overlap_available},
    {"cuda_graphs", &FrameworkTraits::cuda_graphs},
    {"moe_grouped_gemm", &FrameworkTraits::moe_grouped_gemm},
    {"fused_norm", &FrameworkTraits::fused_norm},
    {"fused_rope", &FrameworkTraits::fused_rope},
    {"fused_activation", &FrameworkTraits::fused_activation},
    {"shards_with_pipeline", &FrameworkTraits::shards_with_pipeline},
    {"dtensor_tensor_parallel", &FrameworkTraits::dtensor_tensor_parallel},
    {"fused_cross_entropy", &FrameworkTraits::fused_cross_entropy},
    {"cross_entropy_keeps_softmax", &FrameworkTraits::cross_entropy_keeps_softmax},
    {"tp_available", &FrameworkTraits::tp_available},
    {"pp_available", &FrameworkTraits::pp_available},
    {"vpp_available", &FrameworkTraits::vpp_available},
    {"cp_available", &FrameworkTraits::cp_available},
    {"ep_available", &FrameworkTraits::ep_available},
    {"etp_follows_tp", &FrameworkTraits::etp_follows_tp},
    {"moe_loop_host_sync", &FrameworkTraits::moe_loop_host_sync},
    {"pipeline_keeps_unsharded", &FrameworkTraits::pipeline_keeps_unsharded},
    {"zero_grads_in_training_dtype", &FrameworkTraits::zero_grads_in_training_dtype},
    {"fp32_sharded_parameters", &FrameworkTraits::fp32_sharded_parameters},
    {"root_unit_stays_gathered", &FrameworkTraits::root_unit_stays_gathered},
    {"memory_efficient_linear", &FrameworkTraits::memory_efficient_linear},
    {"clip_grad_norm", &FrameworkTraits::clip_grad_norm},
    {"clip_scales_always", &FrameworkTraits::clip_scales_always},
    {"zero_grad_memset", &FrameworkTraits::zero_grad_memset},
    {"autograd_grad_accumulation", &FrameworkTraits::autograd_grad_accumulation},
    {"zero2_reduce_per_micro_batch", &FrameworkTraits::zero2_reduce_per_micro_batch},
    {"autocast_fp32_weights", &FrameworkTraits::autocast_fp32_weights},
    {"separate_projections", &FrameworkTraits::separate_projections},
    {"moe_experts_in_weight_dtype", &FrameworkTraits::moe_experts_in_weight_dtype},
    {"moe_expert_weights_indexed", &FrameworkTraits::moe_expert_weights_indexed},
    {"moe_probs_in_activation", &FrameworkTraits::moe_probs_in_activation},
    {"moe_act_input_fp8", &FrameworkTraits::moe_act_input_fp8},
    {"checkpoint_saved_tensor_hooks", &FrameworkTraits::checkpoint_saved_tensor_hooks},
    {"checkpoint_early_stop", &FrameworkTraits::checkpoint_early_stop},
    {"pipeline_p2p_blocking", &FrameworkTraits::pipeline_p2p_blocking},
    {"pipeline_p2p_scatter_gather", &FrameworkTraits::pipeline_p2p_scatter_gather},
    {"optimizer_foreach", &FrameworkTraits::optimizer_foreach},
    {"host_optimizer_fused", &FrameworkTraits::host_optimizer_fused},
    {"wgrad_accumulation_fusion", &FrameworkTraits::wgrad_accumulation_fusion},
    {"reference_model_gradient_buffer", &FrameworkTraits::reference_model_gradient_buffer},
    {"offload_keeps_device_master", &FrameworkTraits::offload_keeps_device_master},
    {"moe_dispatch_sorts", &FrameworkTraits::moe_dispatch_sorts},
};

// The plain-number traits (microseconds, kernel counts), each once, like the flags above, with their upper bound.
struct NumberTrait {
  const char* key;
  double FrameworkTraits::*member;
  double max_value;
};
constexpr NumberTrait kNumberTraits[] = {
    {"kernel_launch_gap_us", &FrameworkTraits::kernel_launch_gap_us, limits::kMaxLaunchGapUs},
    {"backward_launch_gap_us", &FrameworkTraits::backward_launch_gap_us, limits::kMaxLaunchGapUs},
    {"zero3_module_fetch_us", &FrameworkTraits::zero3_module_fetch_us, limits::kMaxModuleFetchUs},
    {"moe_dispatch_kernels_forward", &FrameworkTraits::moe_dispatch_kernels_forward, limits::kMaxKernelsPerOp},
    {"moe_dispatch_kernels_backward", &FrameworkTraits::moe_dispatch_kernels_backward, limits::kMaxKernelsPerOp},
    {"loss_scale_grad_passes", &FrameworkTraits::loss_scale_grad_passes, limits::kMaxGradientPasses},
};

// Reads the traits present in `values` (plain JSON values) over `base`; `require_all` for preset files.
FrameworkTraits read_traits(const Json& values, const std::string& path, FrameworkTraits base, bool require_all) {
  JsonReader r(values, path, nullptr);
  auto need = [&](const char* key) {
    if (require_all && !r.has(key)) throw InputError(path + "/" + key, "nothing", "every framework trait in a preset file");
    return r.has(key);
  };
  auto elements = [&](const char* key, double& out, double min_value) {
    if (need(key)) out = r.get_quantity(key, Quantity::Count, out, "", {min_value, limits::kMaxBucketElements});
  };
  elements("grad_bucket_elements", base.grad_bucket_elements, 1);
  elements("grad_bucket_elements_per_dp_rank", base.grad_bucket_elements_per_dp_rank, 0);
  if (need("param_gather_unit"))
    base.param_gather_unit = r.get_enum("param_gather_unit", {"layer", "bucket"}, "layer", "") == "bucket" ? GatherUnit::Bucket : GatherUnit::Layer;
  elements("param_gather_bucket_elements", base.param_gather_bucket_elements, 0);
  if (base.param_gather_unit == GatherUnit::Bucket && !(base.param_gather_bucket_elements >= 1) && !(base.param_gather_bucket_hidden_squared > 0))
    throw InputError(path + "/param_gather_bucket_elements", Json(base.param_gather_bucket_elements).dump(),
                     "at least 1 element when param_gather_unit is \"bucket\"");
  auto factor = [&](const char* key, double& out) {
    if (need(key)) out = r.get_number(key, out, "", 0, limits::kMaxBucketHiddenSquared);
  };
  factor("grad_bucket_hidden_squared", base.grad_bucket_hidden_squared);
  factor("param_gather_bucket_hidden_squared", base.param_gather_bucket_hidden_squared);
  if (need("moe_expert_adapter_merge_passes"))
    base.moe_expert_adapter_merge_passes = r.get_number("moe_expert_adapter_merge_passes", base.moe_expert_adapter_merge_passes, "", 0,
                                                        limits::kMaxWeightPassesPerStep);
  for (const FlagTrait& f : kFlagTraits)
    if (need(f.key)) base.*f.member = r.get_bool(f.key, base.*f.member, "");
  for (const NumberTrait& n : kNumberTraits)
    if (need(n.key)) base.*n.member = r.get_number(n.key, 0, "", 0, n.max_value);
  if (need("moe_gemm_streams")) base.moe_gemm_streams = r.get_int("moe_gemm_streams", 0, "", 0, limits::kMaxGemmStreams);
  if (need("attention_kernel"))
    base.attention_kernel = r.get_enum("attention_kernel", {"cudnn", "flash2"}, "cudnn", "") == "flash2" ? AttentionKernel::Flash2 : AttentionKernel::Fused;
  if (need("selective_recompute"))
    base.selective_recompute = r.get_enum("selective_recompute", {"attention-core", "every-other-matmul"}, "attention-core", "") == "every-other-matmul"
                                   ? SelectiveRecompute::EveryOtherMatmul
                                   : SelectiveRecompute::AttentionCore;
  if (need("moe_dispatcher"))
    base.moe_dispatcher = r.get_enum("moe_dispatcher", {"alltoall", "deepep"}, "alltoall", "") == "deepep" ? MoeDispatcher::DeepEp : MoeDispatcher::AllToAll;
  if (need("pipeline_split"))
    base.pipeline_split = pipeline_split_rule(r.get_enum("pipeline_split", {"uneven-ends", "extra-to-middle", "extra-to-first"}, "uneven-ends", ""));
  // Every trait is a known key (for "did you mean" on a misspelt override), whether given or not.
  r.mark_read({"preset", "version", "grad_bucket_elements", "grad_bucket_elements_per_dp_rank", "param_gather_unit", "param_gather_bucket_elements",
               "grad_bucket_hidden_squared", "param_gather_bucket_hidden_squared", "attention_kernel", "selective_recompute", "moe_dispatcher",
               "pipeline_split", "moe_expert_adapter_merge_passes", "moe_gemm_streams"});
  for (const FlagTrait& f : kFlagTraits) r.mark_read({f.key});
  for (const NumberTrait& n : kNumberTraits) r.mark_read({n.key});
  r.reject_unknown();
  return base;
}

// A preset: its traits and the file they were read from.
struct FrameworkPreset {
  FrameworkTraits traits;
  Json file;
  const std::string& name() const { return traits.name; }
};

// Parsed once, on first use; immutable afterwards (safe to read from many threads).
const NameRegistry<FrameworkPreset>& registry() {
  static const NameRegistry<FrameworkPreset> reg = [] {
    NameRegistry<FrameworkPreset> r;
    for (std::string_view text : embedded::framework_presets_json()) {
      Json file = Json::parse(text);
      const std::string name = file.at("name").get<std::string>();
      Json values = Json::object();
      for (auto it = file.at("traits").begin(); it != file.at("traits").end(); ++it) values[it.key()] = it->at("value");
      FrameworkTraits t = read_traits(values, "presets/frameworks/" + name + ".json/traits", FrameworkTraits{}, true);
      t.name = name;
      t.description = file.at("description").get<std::string>();
      r.add({std::move(t), std::move(file)});
    }
    return r;
  }();
  return reg;
}

}  // namespace

std::vector<std::string> framework_names() { return registry().names(); }

const FrameworkTraits* find_framework(const std::string& name) {
  const FrameworkPreset* p = registry().find(name);
  return p ? &p->traits : nullptr;
}

const Json& framework_preset_json(const std::string& name) {
  const FrameworkPreset* p = registry().find(name);
  if (!p) throw std::out_of_range("no framework preset named " + name);
  return p->file;
}

namespace {
// A release number's parts ("4.57.1" -> 4, 57, 1); empty when it is not digits separated by dots.
std::vector<long> version_parts(const std::string& text) {
  std::vector<long> parts;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t j = i;
    while (j < text.size() && j - i < 9 && text[j] >= '0' && text[j] <= '9') ++j;
    if (j == i) return {};
    parts.push_back(std::stol(text.substr(i, j - i)));
    if (j == text.size()) break;
    if (text[j] != '.' || j + 1 == text.size()) return {};
    i = j + 1;
  }
  return parts;
}
// a < b as release numbers, missing parts as 0 ("5" == "5.0").
bool version_below(const std::string& a, const std::string& b) {
  std::vector<long> x = version_parts(a), y = version_parts(b);
  x.resize(std::max(x.size(), y.size()));
  y.resize(x.size());
  return x < y;
}
}  // namespace

FrameworkTraits parse_framework(const Json& value, const std::string& path) {
  const Json* name = &value;
  std::string name_path = path;
  if (value.is_object()) {
    auto it = value.find("preset");
    if (it == value.end()) throw InputError(path + "/preset", "nothing", "a framework preset name", "e.g. {\"preset\": \"deepspeed\", \"kernel_launch_gap_us\": 5}");
    name = &*it;
    name_path = path + "/preset";
  } else if (!value.is_string()) {
    throw InputError(path, json_value_text(value), "a framework preset name or {\"preset\": NAME, <trait>: value, ...}");
  }
  const FrameworkTraits* base = name->is_string() ? find_framework(name->get<std::string>()) : nullptr;
  if (!base) {
    UnknownNameWording wording{.what = "a framework preset", .shown = json_value_text(*name)};
    if (!name->is_string()) wording.hint = "";  // no suggestions for a number or an object
    registry().unknown(name_path, name->is_string() ? name->get<std::string>() : std::string(), wording);
  }
  if (!value.is_object()) return *base;
  FrameworkTraits t = *base;
  if (auto v = value.find("version"); v != value.end()) {
    if (!v->is_string() || version_parts(v->get<std::string>()).empty())
      throw InputError(path + "/version", json_value_text(*v), "the framework's release number as a string, e.g. \"4.57.1\"");
    t.version = v->get<std::string>();
    // The preset's traits are its current release's; older releases differ where its "versions" table says.
    const Json& file = framework_preset_json(base->name);
    if (auto table = file.find("versions"); table != file.end())
      for (std::size_t i = 0; i < table->size(); ++i)
        if (version_below(t.version, (*table)[i].at("below").get<std::string>()))
          t = read_traits((*table)[i].at("traits"), "presets/frameworks/" + base->name + ".json/versions/" + std::to_string(i) + "/traits", t, false);
  }
  // Named options ("options": {NAME: {"source": ..., "values": {VALUE: {"source": ..., "traits": {...}}}}}): each
  // chosen value sets its traits; explicit traits of the scenario still win.
  Json explicit_traits = value;
  const Json& file = framework_preset_json(base->name);
  if (auto options = file.find("options"); options != file.end()) {
    for (auto option = options->begin(); option != options->end(); ++option) {
      auto chosen = value.find(option.key());
      if (chosen == value.end()) continue;
      const Json& values = option->at("values");
      std::string known;
      for (auto v = values.begin(); v != values.end(); ++v) known += (known.empty() ? "" : ", ") + ("\"" + v.key() + "\"");
      if (!chosen->is_string() || !values.contains(chosen->get<std::string>()))
        throw InputError(path + "/" + option.key(), json_value_text(*chosen), "one of " + known);
      const std::string v = chosen->get<std::string>();
      t = read_traits(values.at(v).at("traits"), "presets/frameworks/" + base->name + ".json/options/" + option.key() + "/values/" + v + "/traits", t,
                      false);
      t.options.emplace_back(option.key(), v);
      explicit_traits.erase(option.key());
    }
  }
  t = read_traits(explicit_traits, path, t, false);
  for (auto it = value.begin(); it != value.end(); ++it)
    if (it.key() != "preset") t.overridden.push_back(it.key());
  return t;
}

Json framework_to_json(const FrameworkTraits& f) {
  if (f.overridden.empty()) return f.name;
  Json j = {{"preset", f.name}};
  for (const auto& key : f.overridden) {
    const auto flag = std::find_if(std::begin(kFlagTraits), std::end(kFlagTraits), [&](const FlagTrait& t) { return key == t.key; });
    const auto number = std::find_if(std::begin(kNumberTraits), std::end(kNumberTraits), [&](const NumberTrait& t) { return key == t.key; });
    if (flag != std::end(kFlagTraits)) j[key] = f.*flag->member;
    else if (number != std::end(kNumberTraits)) j[key] = f.*number->member;
    else if (key == "grad_bucket_elements") j[key] = f.grad_bucket_elements;
    else if (key == "grad_bucket_elements_per_dp_rank") j[key] = f.grad_bucket_elements_per_dp_rank;
    else if (key == "param_gather_unit") j[key] = f.param_gather_unit == GatherUnit::Bucket ? "bucket" : "layer";
    else if (key == "param_gather_bucket_elements") j[key] = f.param_gather_bucket_elements;
    else if (key == "grad_bucket_hidden_squared") j[key] = f.grad_bucket_hidden_squared;
    else if (key == "param_gather_bucket_hidden_squared") j[key] = f.param_gather_bucket_hidden_squared;
    else if (key == "moe_expert_adapter_merge_passes") j[key] = f.moe_expert_adapter_merge_passes;
    else if (key == "moe_gemm_streams") j[key] = f.moe_gemm_streams;
    else if (key == "attention_kernel") j[key] = f.attention_kernel == AttentionKernel::Flash2 ? "flash2" : "cudnn";
    else if (key == "selective_recompute")
      j[key] = f.selective_recompute == SelectiveRecompute::EveryOtherMatmul ? "every-other-matmul" : "attention-core";
    else if (key == "moe_dispatcher") j[key] = f.moe_dispatcher == MoeDispatcher::DeepEp ? "deepep" : "alltoall";
    else if (key == "version") j[key] = f.version;
    else if (auto o = std::find_if(f.options.begin(), f.options.end(), [&](const auto& kv) { return kv.first == key; }); o != f.options.end())
      j[key] = o->second;
    else if (key == "pipeline_split") j[key] = to_string(f.pipeline_split);
  }
  return j;
}

const char* const kImpliedFrameworkRule =
    "one GPU: pytorch (a plain loop); tp/pp/ep > 1: megatron-core; ZeRO-3 at tp = pp = ep = 1 (any cp): fsdp2; otherwise megatron-core";

namespace {
bool implies_fsdp2(const TrainingSpec& t, const ParallelLayout& p) {
  // Context parallelism alone does not imply Megatron (torchtitan runs FSDP2 with CP): a cp change must not
  // switch the framework under the search's feet.
  return p.tp == 1 && p.pp == 1 && p.ep == 1 && t.zero_stage >= 3;
}
}  // namespace

bool merges_expert_adapters(const FrameworkTraits& fw, const TrainingSpec& t) {
  if (fw.moe_expert_adapter_merge_passes <= 0 || !t.uses_adapters()) return false;
  for (const std::string& module : t.lora.target_modules)
    if (module == "gate_proj" || module == "up_proj" || module == "down_proj") return true;
  return false;
}

bool autocast_casts_weights(const FrameworkTraits& fw, const TrainingSpec& t) {
  return fw.autocast_fp32_weights && t.zero_stage < 3 && t.precision != Precision::Fp32 && t.master_weights;
}

Precision gradient_precision(const TrainingSpec& t, const ParallelLayout& p) {
  if (t.precision == Precision::Fp32) return Precision::Fp32;
  if (t.grad_precision_given) return t.grad_precision;
  // Autograd writes a parameter's gradient in its dtype: the 16-bit parameters of training without a master copy.
  if (!t.master_weights || (t.zero_stage >= 1 && framework_for(t, p).zero_grads_in_training_dtype))
    return high_precision(t.precision);  // fp8 GEMMs, 16-bit parameters
  return Precision::Fp32;
}

double wgrad_accumulation_bytes(const TrainingSpec& t, const ParallelLayout& p) {
  if (!framework_for(t, p).wgrad_accumulation_fusion || t.zero_stage >= 2) return 0;
  return 2 * bytes_per_element(gradient_precision(t, p));  // read and written
}

double autograd_accumulation_share(const TrainingSpec& t, const ParallelLayout& p) {
  const int m = p.gradient_accumulation_steps;
  if (m <= 1 || t.zero_stage > 0 || t.distributed_optimizer || !framework_for(t, p).autograd_grad_accumulation) return 0;
  return (m - 1.0) / m;
}

bool offload_master_on_device(const TrainingSpec& t, const ParallelLayout& p) {
  return t.offload_optimizer && t.trains_base_weights() && !t.uses_precision_aware_optimizer() && framework_for(t, p).offload_keeps_device_master;
}

namespace {
// One GPU: nobody launches Megatron or shards over a single rank; a plain eager loop is what runs there. The
// search keeps the GPU count fixed, so this never switches under its feet.
bool implies_plain_loop(const ParallelLayout& p) { return p.world() == 1; }
}  // namespace

const char* implied_framework_name(const TrainingSpec& t, const ParallelLayout& p) {
  return implies_plain_loop(p) ? "pytorch" : implies_fsdp2(t, p) ? "fsdp2" : "megatron-core";
}

const FrameworkTraits& framework_for(const TrainingSpec& t, const ParallelLayout& p) {
  if (!t.framework.name.empty()) return t.framework;
  // Resolved once: the layout search asks for every candidate.
  static const FrameworkTraits& megatron = *find_framework("megatron-core");
  static const FrameworkTraits& fsdp2 = *find_framework("fsdp2");
  static const FrameworkTraits& plain = *find_framework("pytorch");
  return implies_plain_loop(p) ? plain : implies_fsdp2(t, p) ? fsdp2 : megatron;
}

Json framework_result_json(const TrainingSpec& t, const ParallelLayout& p) {
  return {{"name", framework_for(t, p).name}, {"source", t.framework.name.empty() ? "implied" : "scenario"}};
}

}  // namespace trainsim
