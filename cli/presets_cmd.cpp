// `trainsim presets`: the built-in models, GPUs and fabrics, with their key figures and sources.
#include <iostream>

#include "command.hpp"
#include "models/compute/recompute_policy.hpp"
#include "models/compute/transformer.hpp"
#include "models/core/units.hpp"
#include "models/reliability/checkpoint_model.hpp"
#include "models/reliability/failure_model.hpp"
#include "models/scenario/framework.hpp"
#include "models/scenario/presets.hpp"
#include "models/scenario/scenario.hpp"
#include "models/step/pipeline_schedule.hpp"
#include "output.hpp"
#include "reports/html_document.hpp"
#include "reports/markdown.hpp"
#include "reports/table.hpp"
#include "sim/cluster/cluster_state.hpp"
#include "sim/cluster/job_failures.hpp"
#include "sim/cluster/policies/scheduler_policy.hpp"

namespace trainsim::cli {
namespace {

using Json = nlohmann::json;

// The first few aliases of a preset (names vendors and Hugging Face use), for the table.
std::string aliases_text(PresetKind kind, const std::string& name) {
  const std::vector<std::string> all = preset_aliases(kind, name);
  std::string out;
  for (std::size_t i = 0; i < all.size() && i < 3; ++i) out += (i ? ", " : "") + all[i];
  if (all.size() > 3) out += ", ...";
  return out.empty() ? "-" : out;
}

// One listing of `trainsim presets`: a titled table and lines under it.
struct PresetSection {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> lines;
};

Json presets_json(const std::string& kind) {
  Json out = Json::object();
  if (kind.empty() || kind == "models") out["models"] = preset_table(PresetKind::Model);
  if (kind.empty() || kind == "gpus") out["gpus"] = preset_table(PresetKind::Gpu);
  if (kind.empty() || kind == "fabrics") out["fabrics"] = preset_table(PresetKind::Fabric);
  if (kind.empty() || kind == "frameworks") {
    out["frameworks"] = Json::object();
    for (const auto& name : framework_names()) out["frameworks"][name] = framework_preset_json(name);
    // Megatron's selective-recompute modules (training.recompute_modules).
    out["recompute_modules"] = Json::array();
    for (const RecomputeModuleName& n : recompute_module_names()) out["recompute_modules"].push_back(n.name);
  }
  if (kind.empty() || kind == "schedules") {
    out["schedules"] = Json::object();
    for (const PipelineSchedule* sc : pipeline_schedules())
      out["schedules"][sc->name()] = {{"description", sc->description()}, {"source", sc->source()}, {"model_chunks", sc->uses_model_chunks()},
                                          {"bidirectional", sc->bidirectional()}, {"searched", sc->searched()}};
  }
  if (kind.empty() || kind == "policies") {
    out["policies"] = Json::object();
    for (const sim::cluster::PolicyInfo& p : sim::cluster::policies()) out["policies"][p.name] = {{"description", p.description}, {"source", p.source}};
    out["job_failure_presets"] = Json::array();  // cluster.job_failures
    for (const sim::cluster::JobFailurePreset& p : sim::cluster::job_failure_presets()) out["job_failure_presets"].push_back(p.name);
  }
  if (kind.empty() || kind == "checkpoints") {
    out["storage_tiers"] = Json::object();
    for (const StorageTier& t : storage_tiers())
      out["storage_tiers"][t.name] = {{"description", t.description}, {"source", t.source}, {"aggregate_bandwidth", t.aggregate_bandwidth},
                                      {"per_node_bandwidth", t.per_node_bandwidth}, {"survives_node_loss", t.survives_node_loss}};
    out["checkpoint_methods"] = Json::object();
    for (const auto& m : checkpoint_methods()) out["checkpoint_methods"][m->name()] = {{"description", m->description()}};
    out["failure_presets"] = failure_preset_names();
    out["time_distributions"] = Json::object();
    for (const DistributionInfo& d : time_distributions())
      out["time_distributions"][d.name] = {{"description", d.description}, {"for_failures", d.for_failures}};
  }
  return out;
}

std::vector<PresetSection> preset_sections(const std::string& kind) {
  std::vector<PresetSection> sections;
  auto add = [&](std::string title, std::vector<std::string> header) -> PresetSection& {
    sections.push_back({std::move(title), std::move(header), {}, {}});
    return sections.back();
  };
  if (kind.empty() || kind == "models") {
    PresetSection& section = add("Models",
                                 {"name", "params", "active", "layers", "hidden", "heads/kv", "ffn", "vocab", "experts", "also known as"});
    for (const auto& name : preset_names(PresetKind::Model)) {
      Scenario s = parse_scenario(Json{{"model", name}, {"hardware", {{"num_gpus", 1}, {"gpus_per_node", 1}}}});
      const ModelSpec& m = s.model;
      ModelParams p = count_parameters(m);
      section.rows.push_back({name, format_count(p.total), format_count(p.active), std::to_string(m.num_hidden_layers), std::to_string(m.hidden_size),
                 std::to_string(m.num_attention_heads) + "/" + std::to_string(m.num_key_value_heads),
                 std::to_string(m.is_moe() ? m.moe_intermediate_size : m.intermediate_size), std::to_string(m.vocab_size),
                 m.is_moe() ? std::to_string(m.num_experts) + " top-" + std::to_string(m.num_experts_per_tok) : "-",
                 aliases_text(PresetKind::Model, name)});
    }
  }
  if (kind.empty() || kind == "gpus") {
    PresetSection& section = add("GPUs (dense peak)",
                                 {"name", "memory", "HBM BW", "bf16", "fp8", "TDP", "USD/h", "node fabric", "also known as"});
    for (const auto& name : preset_names(PresetKind::Gpu)) {
      GpuSpec g = parse_gpu(Json(name), "/hardware/gpu");
      section.rows.push_back({name, format_bytes(g.memory_bytes), fixed(g.memory_bandwidth / 1e12) + " TB/s", format_rate(g.flops_bf16),
                 g.flops_fp8 > 0 ? format_rate(g.flops_fp8) : "-", g.tdp_watts > 0 ? fixed(g.tdp_watts, 0) + " W" : "-",
                 g.price_per_hour > 0 ? fixed(g.price_per_hour) : "unknown", g.default_intra_node, aliases_text(PresetKind::Gpu, name)});
    }
  }
  if (kind.empty() || kind == "fabrics") {
    PresetSection& section = add("Fabrics (one direction; per GPU within a node, per NIC between nodes)",
                                 {"name", "kind", "GB/s", "latency us", "NVLS"});
    for (const auto& name : preset_names(PresetKind::Fabric)) {
      FabricSpec f = parse_fabric(Json(name), "/hardware/intra_node");
      section.rows.push_back({name, f.kind, fixed(f.bandwidth / 1e9, 1), fixed(f.latency_s * 1e6, 1), f.has_nvls ? "yes" : "no"});
    }
  }
  if (kind.empty() || kind == "frameworks") {
    PresetSection& section = add("Frameworks (training.framework / --framework; traits and their sources: --format json)",
                                 {"name", "parallel", "grad bucket", "ZeRO-3 gather", "overlap grad/param", "host per kernel fwd/bwd", "MoE", "fused norm/rope/act",
                 "attention (Hopper)", "what"});
    auto yn = [](bool b) { return std::string(b ? "yes" : "no"); };
    // A bucket as the framework sizes it: a fixed element count, or a multiple of hidden_size².
    auto bucket_text = [](double elements, double hidden_squared) {
      return hidden_squared > 0 ? fixed(hidden_squared, 1) + " x h^2" : format_count(elements);
    };
    for (const auto& name : framework_names()) {
      const FrameworkTraits& f = *find_framework(name);
      std::string bucket = bucket_text(f.grad_bucket_elements, f.grad_bucket_hidden_squared);
      if (f.grad_bucket_elements_per_dp_rank > 0) bucket = "max(" + bucket + ", " + format_count(f.grad_bucket_elements_per_dp_rank) + " x dp)";
      std::string dims = "dp";
      for (auto [key, available] : {std::pair{" tp", f.tp_available}, std::pair{" pp", f.pp_available}, std::pair{" cp", f.cp_available},
                                    std::pair{" ep", f.ep_available}})
        if (available) dims += key;
      section.rows.push_back({name, dims, bucket,
                 (f.param_gather_unit == GatherUnit::Layer ? "per layer"
                                                           : bucket_text(f.param_gather_bucket_elements, f.param_gather_bucket_hidden_squared) + " buckets") +
                     (f.zero3_module_fetch_us > 0 ? ", " + fixed(f.zero3_module_fetch_us, 0) + " us/module" : ""),
                 yn(f.overlap_grad_reduce) + "/" + yn(f.overlap_param_gather),
                 f.cuda_graphs ? "graphs" : fixed(f.kernel_launch_gap_us, 1) + "/" + fixed(f.backward_launch_gap_us, 1) + " us",
                 f.moe_grouped_gemm ? "grouped" : (f.moe_loop_host_sync ? "loop, sync" : "loop"),
                 yn(f.fused_norm) + "/" + yn(f.fused_rope) + "/" + yn(f.fused_activation),
                 f.attention_kernel == AttentionKernel::Flash2 ? "flash2" : "cudnn", f.description});
    }
    // The named options and older releases each preset file lists (training.framework {"preset": NAME, ...}).
    for (const auto& name : framework_names()) {
      const Json& file = framework_preset_json(name);
      if (auto options = file.find("options"); options != file.end())
        for (auto option = options->begin(); option != options->end(); ++option) {
          std::string values;
          for (auto v = option->at("values").begin(); v != option->at("values").end(); ++v) values += (values.empty() ? "" : " | ") + v.key();
          section.lines.push_back("option: {\"preset\": \"" + name + "\", \"" + option.key() + "\": " + values + "}");
        }
      if (auto versions = file.find("versions"); versions != file.end())
        for (const auto& v : *versions)
          section.lines.push_back("release: {\"preset\": \"" + name + "\", \"version\": ...} below " + v.at("below").get<std::string>() +
                                           " changes " + std::to_string(v.at("traits").size()) + " traits");
    }
  }
  if (kind.empty() || kind == "schedules") {
    PresetSection& section = add("Pipeline schedules (parallel.schedule)",
                                 {"name", "what", "source"});
    for (const PipelineSchedule* sc : pipeline_schedules()) section.rows.push_back({sc->name(), sc->description(), sc->source()});
  }
  if (kind.empty() || kind == "policies") {
    std::string placements;  // from the placement list, so a new placement is named without touching this text
    for (const std::string& name : sim::cluster::placement_names()) placements += (placements.empty() ? "" : "|") + name;
    PresetSection& section = add("Cluster scheduling policies (trainsim cluster --policy ORDER[+" + placements + "])",
                                 {"name", "what", "source"});
    for (const sim::cluster::PolicyInfo& p : sim::cluster::policies()) section.rows.push_back({p.name, p.description, p.source});
  }
  if (kind.empty() || kind == "checkpoints") {
    PresetSection& tiers = add("Checkpoint storage tiers (reliability.checkpoint.storage, upload_to; data.storage)",
                               {"name", "aggregate", "per node", "outlives a node", "what"});
    for (const StorageTier& tier : storage_tiers())
      tiers.rows.push_back({tier.name, tier.aggregate_bandwidth > 0 ? format_bandwidth(tier.aggregate_bandwidth) : "grows with the nodes",
                            format_bandwidth(tier.per_node_bandwidth), tier.survives_node_loss ? "yes" : "no", tier.description});
    PresetSection& methods = add("Checkpoint methods (reliability.checkpoint.method)", {"name", "what"});
    for (const auto& method : checkpoint_methods()) methods.rows.push_back({method->name(), method->description()});
  }
  return sections;
}

int run_presets(const std::string& format, const std::string& kind) {
  const std::vector<PresetSection> sections = preset_sections(kind);
  const std::string title = "trainsim presets" + (kind.empty() ? std::string() : " " + kind);
  emit_result(format, presets_json(kind), "presets",
              {[&](std::ostream& os) {
                 for (std::size_t i = 0; i < sections.size(); ++i) {
                   os << (i ? "\n" : "") << sections[i].title << "\n";
                   TextTable t(sections[i].header);
                   for (const auto& row : sections[i].rows) t.add_row(row);
                   t.print(os);
                   for (const auto& line : sections[i].lines) os << "  " << line << "\n";
                 }
               },
               nullptr,
               [&](std::ostream& os) {
                 md::heading(os, title, 1);
                 for (const PresetSection& sec : sections) {
                   md::heading(os, sec.title);
                   md::table(os, sec.header, sec.rows);
                   for (const auto& line : sec.lines) os << "- " << md::text(line) << "\n";
                   if (!sec.lines.empty()) os << "\n";
                 }
               },
               [&](std::ostream& os) {
                 html::Document d(title, "the built-in presets and plug-ins, with their key figures (--format json: every field and its source)");
                 for (const PresetSection& sec : sections) {
                   d.heading(sec.title);
                   d.table(sec.header, sec.rows);
                   for (const auto& line : sec.lines) d.paragraph(line);
                 }
                 os << d.str();
               }});
  return kExitOk;
}

const RegisterCommand registered{{"presets", "List built-in models, GPUs, interconnects, frameworks, pipeline schedules, cluster scheduling policies and checkpoint tiers and methods",
                                  [](CLI::App& app) -> std::function<int()> {
                                    auto format = std::make_shared<std::string>("table");
                                    auto kind = std::make_shared<std::string>();
                                    app.add_option("kind", *kind, "models, gpus, fabrics, frameworks, schedules, policies or checkpoints (default: all)")
                                        ->check(CLI::IsMember({"models", "gpus", "fabrics", "frameworks", "schedules", "policies", "checkpoints"}));
                                    app.add_option("--format", *format, "table (default), json, md or html");
                                    return [format, kind] { return run_presets(*format, *kind); };
                                  }}};

}  // namespace
}  // namespace trainsim::cli
