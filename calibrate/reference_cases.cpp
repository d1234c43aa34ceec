#include "reference_cases.hpp"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "models/errors.hpp"
#include "models/memory.hpp"
#include "models/step.hpp"

namespace trainsim {

using Json = nlohmann::json;

namespace {

Json load(const std::string& dir, const std::string& name) {
  std::ifstream in(dir + "/" + name);
  if (!in) throw std::runtime_error("cannot read " + dir + "/" + name);
  return Json::parse(in);
}

// modern_runs.json keeps comments as "note" keys at any depth; a scenario has none.
Json without_notes(const Json& j) {
  if (j.is_object()) {
    Json out = Json::object();
    for (const auto& [k, v] : j.items())
      if (k != "note") out[k] = without_notes(v);
    return out;
  }
  if (j.is_array()) {
    Json out = Json::array();
    for (const auto& v : j) out.push_back(without_notes(v));
    return out;
  }
  return j;
}

// torchtitan commits whose training.compile also compiles the loss (torchtitan/components/loss.py
// build_cross_entropy_loss wraps it in torch.compile from spring 2025; at 9dec370, Dec 2024, train.py leaves the
// loss eager). Inductor fuses logits.float() with log-softmax and nll: the loss keeps what a fused kernel keeps.
constexpr const char* kTorchtitanCompiledLoss[] = {"e7c0cae"};

// The framework each source measured with, where its case does not name one (training.framework): the
// llm-foundry rows ran PyTorch FSDP1, torchtitan rows FSDP2 (torch.compile fuses the norm, RoPE and
// activation: Inductor), the DeepSpeed rows Hugging Face transformers with DeepSpeed, Megatron rows
// Megatron-Core (what the layout implies anyway). `stack` is the case's own "framework" text (versions).
Json with_framework(Json scenario, const std::string& id, const std::string& stack) {
  Json& p = scenario["parallel"];
  if (id.rfind("torchtitan", 0) == 0 && p.value("pp", 1) > 1 && !p.contains("vpp") && !p.contains("micro_batch_size")) {
    // torchtitan's pipeline defaults where the source states none (torchtitan/parallelisms/pipelining_utils.py
    // at the runs' commit): a looped (interleaved) schedule splits the model into 2 stages per rank, and runs as
    // many micro-batches as pipeline ranks.
    if (p.value("schedule", "") == "interleaved") p["vpp"] = 2;
    const int dp = p.value("dp", 1), pp = p.value("pp", 1);
    const int batch = scenario["training"].value("global_batch_size", 0);
    if (dp > 0 && batch % (dp * pp) == 0) p["micro_batch_size"] = batch / (dp * pp);
  }
  if (scenario["training"].contains("framework")) return scenario;
  if (id.rfind("mosaicml", 0) == 0) {
    scenario["training"]["framework"] = "fsdp";
  } else if (id.rfind("torchtitan", 0) == 0 && id.find("compile") != std::string::npos) {
    Json fw = {{"preset", "fsdp2"}, {"fused_norm", true}, {"fused_rope", true}, {"fused_activation", true}};
    for (const char* commit : kTorchtitanCompiledLoss)
      if (stack.find(commit) != std::string::npos) fw["fused_cross_entropy"] = true;
    scenario["training"]["framework"] = fw;
  } else if (id.rfind("torchtitan", 0) == 0) {
    scenario["training"]["framework"] = "fsdp2";
  } else if (id.rfind("deepspeed", 0) == 0) {
    scenario["training"]["framework"] = "deepspeed";
  } else if (id.rfind("mcore", 0) == 0 || id.rfind("megatron", 0) == 0) {
    scenario["training"]["framework"] = "megatron-core";
  }
  return scenario;
}

// What a modern_runs.json case states only in its note (or its source table), as scenario fields: the Megatron-MoE-ModelZoo rows
// name their token dispatcher ("DeepEP dispatcher", "DeepEP (flex) token dispatcher", "NCCL all-to-all
// dispatcher") and their --recompute-modules ("Selective recompute of layernorm + MoE activation", "of
// layernorm + moe", "of norm, act, shared_expert"), transcribed here.
Json with_note_settings(Json scenario, const Json& c) {
  const std::string id = c.at("id").get<std::string>(), note = c.value("note", "");
  if (id.rfind("mcore", 0) != 0) return scenario;
  // Row 1's 1F1B-overlap variant names DeepEP in its id ("Row 1 plus ..." in its note: row 1's modules too).
  if (note.find("DeepEP") != std::string::npos || id.find("deepep") != std::string::npos) {
    Json fw = scenario["training"].contains("framework") ? scenario["training"]["framework"] : Json("megatron-core");
    if (fw.is_string()) fw = {{"preset", fw}};
    fw["moe_dispatcher"] = "deepep";
    scenario["training"]["framework"] = fw;
  }
  static const std::pair<const char*, std::vector<std::string>> kModules[] = {
      {"Selective recompute of layernorm + MoE activation", {"layernorm", "moe_act"}},
      {"Selective recompute of layernorm + moe", {"layernorm", "moe"}},
      {"Selective recompute of norm, act, shared_expert", {"layernorm", "moe_act", "shared_experts"}},
      {"Row 1 plus", {"layernorm", "moe_act"}},
  };
  Json& t = scenario["training"];
  // The one row whose note leaves its modules out: the source table (Megatron-MoE-ModelZoo
  // best_practice/qwen3/readme.md @ e8650517, H100, row "A2A ... PP 32 ... VPP 3") lists recompute "norm, act".
  if (id == "mcore_qwen3_235b_h100x256_tp2pp32vpp3ep8_alltoall" && t.value("recompute", "") == "selective" && !t.contains("recompute_modules"))
    t["recompute_modules"] = {"layernorm", "moe_act"};
  if (t.value("recompute", "") == "selective" && !t.contains("recompute_modules"))
    for (const auto& [text, modules] : kModules)
      if (note.find(text) != std::string::npos) t["recompute_modules"] = modules;
  return scenario;
}

// What each source's memory figure counts. The DeepSpeed LLaMA-7B benchmark (chenyaofo's gist, its footnote):
// torch.cuda.max_memory_allocated. torchtitan's "Memory(GiB)" / "memory:": the caching allocator's peak reserved
// bytes (torchtitan/metrics.py DeviceMemoryMonitor.get_peak_stats, "reserved_bytes.all.peak", at the runs' commits).
MemoryCounter memory_counter_of(const std::string& id) {
  if (id.rfind("deepspeed", 0) == 0) return MemoryCounter::AllocatorAllocated;
  if (id.rfind("torchtitan", 0) == 0) return MemoryCounter::AllocatorReserved;
  return MemoryCounter::Device;
}

// The publication or project of a case (modern_runs.json gathers several: the id's first word names it).
std::string source_of(const std::string& file, const std::string& id) {
  if (file == "korthikanti2022.json") return "korthikanti2022";
  if (file == "megatron_sc21_table1.json") return "narayanan2021";
  if (file == "mosaicml_h100_fsdp.json") return "mosaicml";
  if (id.rfind("megatron_readme", 0) == 0) return "megatron-readme";
  if (id.rfind("mcore", 0) == 0) return "megatron-moe";
  const auto cut = id.find_first_of("_-");
  return id.substr(0, cut);
}

// Narayanan et al. SC'21 §5.1: hardware FLOPs per iteration with full recompute,
// 96·B·s·L·h²·(1 + s/(6h) + V/(16·L·h)): the formula behind Table 1's TFLOP/s.
double megatron_hfu_flops(const ModelSpec& m, double batch, double s) {
  const double L = m.num_hidden_layers, h = m.hidden_size, V = m.vocab_size;
  return 96 * batch * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h));
}

// The best layout of the search where the source leaves parts of it out; false when none fits.
bool search_layout(Scenario& s, const FittedParameters* fitted) {
  SearchOptions so;
  so.top = 1;
  so.threads = 1;
  so.fitted = fitted;
  const SearchResult r = search_plans(s, {s.hardware.num_gpus}, search_space_from(s), so);
  if (r.plans.empty()) return false;
  s.parallel = r.plans.front().layout;
  s.training = r.plans.front().training;
  return true;
}

}  // namespace

Json reference_case_scenario(const Json& c) {
  Json doc = without_notes(Json{{"model", c.at("model")}, {"training", c.at("training")}, {"parallel", c.at("parallel")}, {"hardware", c.at("hardware")}});
  // More virtual pipeline stages than layers: Megatron runs that only with the embedding and the loss counted as
  // pipeline layers (--account-for-embedding/loss-in-pipeline-split; every virtual stage needs a slot), so a
  // published layout of that shape had them (Megatron-MoE-ModelZoo's Qwen3-235B pp 32 x vpp 3: 94 + 2 slots).
  Json& p = doc["parallel"];
  const int layers = doc["model"].is_object() ? doc["model"].value("num_hidden_layers", 0) : 0;
  if (layers > 0 && p.value("pp", 1) * p.value("vpp", 1) > layers && !p.contains("account_for_embedding_in_pipeline_split") &&
      !p.contains("account_for_loss_in_pipeline_split"))
    p["account_for_embedding_in_pipeline_split"] = p["account_for_loss_in_pipeline_split"] = true;
  return doc;
}

const char* to_string(ReferenceMetric m) {
  switch (m) {
    case ReferenceMetric::IterationSeconds: return "iteration s";
    case ReferenceMetric::HardwareTflopsPerGpu: return "TFLOP/s/GPU";
    case ReferenceMetric::TokensPerSecondPerGpu: return "tokens/s/GPU";
    case ReferenceMetric::MfuPercent: return "MFU %";
    case ReferenceMetric::MemoryGiB: return "memory GiB";
  }
  return "?";
}

ReferenceSet load_reference_cases(const std::string& dir, const FittedParameters* fitted) {
  ReferenceSet out;
  auto add = [&](const std::string& file, const Json& c, ReferenceMetric metric, double measured, const Scenario& s, bool searched) {
    ReferenceCase rc;
    rc.id = c.at("id").get<std::string>();
    rc.file = file;
    rc.source = source_of(file, rc.id);
    rc.metric = metric;
    rc.measured = measured;
    rc.scenario = s;
    rc.searched = searched;
    rc.counted = !c.contains("unsupported");
    rc.memory_counter = memory_counter_of(rc.id);
    out.cases.push_back(std::move(rc));
  };

  // Korthikanti et al. 2022, Table 5: iteration time of fixed layouts.
  out.files.push_back("korthikanti2022.json");
  const Json korthikanti = load(dir, "korthikanti2022.json");  // kept alive: a range-for over a temporary's member dangles
  for (const auto& c : korthikanti.at("cases"))
    add("korthikanti2022.json", c, ReferenceMetric::IterationSeconds, c["measured"]["iteration_time_s"].get<double>(), parse_scenario(reference_case_scenario(c)),
        false);

  // Narayanan et al. SC'21, Table 1: TFLOP/s per GPU (full recompute); micro-batch and interleaving searched.
  out.files.push_back("megatron_sc21_table1.json");
  const Json sc21 = load(dir, "megatron_sc21_table1.json");  // kept alive: a range-for over a temporary's member dangles
  for (const auto& c : sc21.at("cases")) {
    Scenario s = parse_scenario(reference_case_scenario(c), false);
    if (!search_layout(s, fitted)) throw std::runtime_error(c["id"].get<std::string>() + ": no layout fits");
    add("megatron_sc21_table1.json", c, ReferenceMetric::HardwareTflopsPerGpu, c["measured"]["hardware_tflops_per_gpu"].get<double>(), s, true);
  }

  // MosaicML llm-foundry, FSDP on H100: tokens per second per GPU at the published layout.
  out.files.push_back("mosaicml_h100_fsdp.json");
  const Json mosaicml = load(dir, "mosaicml_h100_fsdp.json");  // kept alive: a range-for over a temporary's member dangles
  for (const auto& c : mosaicml.at("cases"))
    add("mosaicml_h100_fsdp.json", c, ReferenceMetric::TokensPerSecondPerGpu, c["measured"]["tokens_per_s_per_gpu"].get<double>(),
        parse_scenario(with_framework(reference_case_scenario(c), c["id"], c.value("framework", ""))), false);

  // 2024-26 runs: the published layout, searched where the source leaves the micro-batch out. Compared:
  // iteration time, tokens/s/GPU or MFU (Megatron's formula on both sides), and memory per GPU. Model TFLOP/s
  // are not compared (FLOP conventions differ between frameworks; the file's notes).
  out.files.push_back("modern_runs.json");
  const Json modern = load(dir, "modern_runs.json");  // kept alive: a range-for over a temporary's member dangles
  for (const auto& c : modern.at("cases")) {
    const std::string id = c.at("id");
    const Json doc = with_note_settings(with_framework(reference_case_scenario(c), id, c.value("framework", "")), c);
    const bool fixed = doc["parallel"].contains("micro_batch_size");
    Scenario s;
    try {
      s = parse_scenario(doc, fixed);
    } catch (const InputError& e) {
      // The file marks what trainsim could not express when it was written; what trainsim still refuses is
      // listed with its own reason. A case marked unsupported that parses now is run (and shown, not counted).
      if (!c.contains("unsupported")) throw;
      out.refused.push_back(id + ": " + e.what());
      continue;
    }
    if (!fixed && !search_layout(s, fitted)) {
      if (!c.contains("unsupported")) throw std::runtime_error(id + ": no layout fits");
      out.refused.push_back(id + ": the search found no layout (each refused by the layout rules or out of memory)");
      continue;
    }
    const Json& m = c.at("measured");
    if (m.contains("iteration_time_s")) add("modern_runs.json", c, ReferenceMetric::IterationSeconds, m["iteration_time_s"].get<double>(), s, !fixed);
    else if (m.contains("tokens_per_s_per_gpu"))
      add("modern_runs.json", c, ReferenceMetric::TokensPerSecondPerGpu, m["tokens_per_s_per_gpu"].get<double>(), s, !fixed);
    else if (m.contains("mfu_percent")) add("modern_runs.json", c, ReferenceMetric::MfuPercent, m["mfu_percent"].get<double>(), s, !fixed);
    if (m.contains("memory_per_gpu_GiB")) add("modern_runs.json", c, ReferenceMetric::MemoryGiB, m["memory_per_gpu_GiB"].get<double>(), s, !fixed);
    if (!m.contains("iteration_time_s") && !m.contains("tokens_per_s_per_gpu") && !m.contains("mfu_percent") && !m.contains("memory_per_gpu_GiB")) {
      const StepEstimate e = StepModel(s.model, s.training, s.hardware, nullptr, fitted).estimate(s.parallel);
      const double tflops = m.contains("model_tflops_per_gpu") ? m["model_tflops_per_gpu"].get<double>() : 0.0;
      char text[256];
      std::snprintf(text, sizeof text, ": runs at %.2f s a step, %.1f%% MFU by trainsim's FLOP count; the source gives model TFLOP/s only (%.0f)",
                    e.time_s, 100 * e.mfu, tflops);
      out.uncompared.push_back(id + text);
    }
  }
  return out;
}

double predict_case(const ReferenceCase& c, const FittedParameters* fitted) {
  const Scenario& s = c.scenario;
  if (c.metric == ReferenceMetric::MemoryGiB) {
    const StageMemory worst = MemoryModel(s.model, s.training, s.hardware).worst_stage(s.parallel);
    return worst.counted(c.memory_counter) / (1024.0 * 1024 * 1024);
  }
  const StepEstimate e = StepModel(s.model, s.training, s.hardware, nullptr, fitted).estimate(s.parallel);
  const double gpus = s.hardware.num_gpus;
  switch (c.metric) {
    case ReferenceMetric::IterationSeconds: return e.time_s;
    case ReferenceMetric::HardwareTflopsPerGpu:
      return megatron_hfu_flops(s.model, s.training.global_batch_size, s.training.seq_len) / (e.time_s * gpus) / 1e12;
    case ReferenceMetric::TokensPerSecondPerGpu: return e.tokens_per_s / gpus;
    case ReferenceMetric::MfuPercent: return 100 * e.mfu;
    case ReferenceMetric::MemoryGiB: break;
  }
  return 0;
}

double time_ratio(const ReferenceCase& c, double predicted) {
  return c.metric == ReferenceMetric::IterationSeconds ? c.measured / predicted : predicted / c.measured;
}

double case_error(const ReferenceCase& c, double predicted) {
  return c.metric == ReferenceMetric::MemoryGiB ? predicted / c.measured - 1 : time_ratio(c, predicted) - 1;
}

}  // namespace trainsim
