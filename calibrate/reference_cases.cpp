#include "reference_cases.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "models/core/errors.hpp"
#include "models/core/units.hpp"
#include "models/memory/memory.hpp"
#include "models/step/step.hpp"

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

// What a memory figure counts, as the case states it in measured.memory_counter ("device": nvidia-smi,
// "reserved": torch.cuda.max_memory_reserved, "allocated": torch.cuda.max_memory_allocated); the whole device
// when the case says nothing.
MemoryCounter memory_counter_of(const Json& measured, const std::string& id) {
  const std::string counter = measured.value("memory_counter", "device");
  if (counter == "device") return MemoryCounter::Device;
  if (counter == "reserved") return MemoryCounter::AllocatorReserved;
  if (counter == "allocated") return MemoryCounter::AllocatorAllocated;
  throw std::runtime_error(id + ": measured.memory_counter \"" + counter + "\": expected device, reserved or allocated");
}

// The publication or project a case comes from, the unit left out in cross-validation: its `source` text up to
// the first " @", " (", "," or ":" ("pytorch/torchtitan @ b5bcd76 : ..." -> "pytorch/torchtitan", "Korthikanti et
// al. 2022, arXiv ..." -> "Korthikanti et al. 2022"); the file when the case names none.
std::string source_of(const std::string& file, const Json& c) {
  const std::string text = c.value("source", "");
  std::size_t cut = text.size();
  for (const char* sep : {" @", " (", ",", ":"}) cut = std::min(cut, text.find(sep));
  std::string key = text.substr(0, cut);
  while (!key.empty() && key.back() == ' ') key.pop_back();
  return key.empty() ? file.substr(0, file.rfind('.')) : key;
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

double megatron_hfu_flops(const ModelSpec& m, double batch, double s) {
  const double L = m.num_hidden_layers, h = m.hidden_size, V = m.vocab_size;
  return 96 * batch * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h));
}

Json reference_case_scenario(const Json& c) {
  return without_notes(Json{{"model", c.at("model")}, {"training", c.at("training")}, {"parallel", c.at("parallel")}, {"hardware", c.at("hardware")}});
}

const char* to_string(ReferenceMetric m) {
  switch (m) {
    case ReferenceMetric::IterationSeconds: return "iteration s";
    case ReferenceMetric::HardwareTflopsPerGpu: return "TFLOP/s/GPU";
    case ReferenceMetric::TokensPerSecondPerGpu: return "tokens/s/GPU";
    case ReferenceMetric::MfuPercent: return "MFU %";
    case ReferenceMetric::MemoryGiB: return "memory GiB";
    case ReferenceMetric::FitsInMemory: return "fits (1/0)";
  }
  return "?";
}

ReferenceSet load_reference_cases(const ReferenceDirs& dirs, const FittedParameters* fitted) {
  const std::string& dir = dirs.published;
  ReferenceSet out;
  auto add = [&](const std::string& file, const Json& c, ReferenceMetric metric, double measured, const Scenario& s, bool searched,
                 MemoryCounter counter = MemoryCounter::Device) {
    ReferenceCase rc;
    rc.id = c.at("id").get<std::string>();
    rc.file = file;
    rc.source = source_of(file, c);
    rc.metric = metric;
    rc.measured = measured;
    rc.scenario = s;
    rc.searched = searched;
    rc.counted = !c.contains("unsupported");
    rc.memory_counter = counter;
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
        parse_scenario(reference_case_scenario(c)), false);

  // 2024-26 runs: the published layout, searched where the source leaves the micro-batch out. Compared:
  // iteration time, tokens/s/GPU or MFU (Megatron's formula on both sides), and memory per GPU. Model TFLOP/s
  // are not compared (FLOP conventions differ between frameworks; the file's notes).
  out.files.push_back("modern_runs.json");
  const Json modern = load(dir, "modern_runs.json");  // kept alive: a range-for over a temporary's member dangles
  for (const auto& c : modern.at("cases")) {
    const std::string id = c.at("id");
    const Json doc = reference_case_scenario(c);
    const bool fixed = doc["parallel"].contains("micro_batch_size");
    Scenario s;
    try {
      s = parse_scenario(doc, fixed);
    } catch (const InputError& e) {
      // A case the file marks unsupported that trainsim still refuses is listed with trainsim's own reason.
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
    if (m.contains("memory_per_gpu_GiB"))
      add("modern_runs.json", c, ReferenceMetric::MemoryGiB, m["memory_per_gpu_GiB"].get<double>(), s, !fixed, memory_counter_of(m, id));
    if (!m.contains("iteration_time_s") && !m.contains("tokens_per_s_per_gpu") && !m.contains("mfu_percent") && !m.contains("memory_per_gpu_GiB")) {
      const StepEstimate e = StepModel(s.model, s.training, s.hardware, nullptr, fitted).estimate(s.parallel);
      const double tflops = m.contains("model_tflops_per_gpu") ? m["model_tflops_per_gpu"].get<double>() : 0.0;
      char text[256];
      std::snprintf(text, sizeof text, ": runs at %.2f s a step, %.1f%% MFU by trainsim's FLOP count; the source gives model TFLOP/s only (%.0f)",
                    e.time_s, 100 * e.mfu, tflops);
      out.uncompared.push_back(id + text);
    }
  }

  // Single-GPU steps measured on one GPU: step time, the caching allocator's peak allocated and reserved bytes,
  // and whether the step ran out of memory (every case is a fit verdict: measured.oom or a measured step).
  auto add_single_gpu = [&](const std::string& file, const Json& doc) {
    out.files.push_back(file);
    for (const auto& c : doc.at("cases")) {
      const Scenario s = parse_scenario(reference_case_scenario(c));
      const Json& m = c.at("measured");
      const bool oom = m.value("oom", false);
      add(file, c, ReferenceMetric::FitsInMemory, oom ? 0.0 : 1.0, s, false);
      if (oom) continue;
      add(file, c, ReferenceMetric::IterationSeconds, m.at("step_time_s").get<double>(), s, false);
      add(file, c, ReferenceMetric::MemoryGiB, m.at("peak_allocated_bytes").get<double>() / kBytesPerGiB, s, false, MemoryCounter::AllocatorAllocated);
      add(file, c, ReferenceMetric::MemoryGiB, m.at("peak_reserved_bytes").get<double>() / kBytesPerGiB, s, false, MemoryCounter::AllocatorReserved);
    }
  };
  add_single_gpu("h100_single_gpu_runs.json", load(dir, "h100_single_gpu_runs.json"));
  if (!dirs.measured.empty()) {
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(dirs.measured))
      if (e.path().extension() == ".json") files.push_back(e.path().filename().string());
    std::sort(files.begin(), files.end());  // a stable order whatever the file system lists
    std::map<std::string, std::string> superseded;  // id -> the id of the case measuring it again
    for (const auto& f : files) {
      const Json doc = load(dirs.measured, f);
      for (const auto& c : doc.at("cases"))
        if (c.contains("supersedes")) superseded[c.at("supersedes").get<std::string>()] = c.at("id").get<std::string>();
      add_single_gpu(f, doc);
    }
    for (auto& c : out.cases)
      if (auto it = superseded.find(c.id); it != superseded.end()) c.counted = false, c.superseded_by = it->second;
  }
  return out;
}

double predict_case(const ReferenceCase& c, const FittedParameters* fitted) {
  const Scenario& s = c.scenario;
  if (c.metric == ReferenceMetric::MemoryGiB) {
    const StageMemory worst = MemoryModel(s.model, s.training, s.hardware).worst_stage(s.parallel);
    return worst.counted(c.memory_counter) / kBytesPerGiB;
  }
  if (c.metric == ReferenceMetric::FitsInMemory) return MemoryModel(s.model, s.training, s.hardware).estimate(s.parallel).fits ? 1.0 : 0.0;
  const StepEstimate e = StepModel(s.model, s.training, s.hardware, nullptr, fitted).estimate(s.parallel);
  const double gpus = s.hardware.num_gpus;
  switch (c.metric) {
    case ReferenceMetric::IterationSeconds: return e.time_s;
    case ReferenceMetric::HardwareTflopsPerGpu:
      return megatron_hfu_flops(s.model, s.training.global_batch_size, s.training.seq_len) / (e.time_s * gpus) / 1e12;
    case ReferenceMetric::TokensPerSecondPerGpu: return e.tokens_per_s / gpus;
    case ReferenceMetric::MfuPercent: return 100 * e.mfu;
    case ReferenceMetric::MemoryGiB:
    case ReferenceMetric::FitsInMemory: break;
  }
  return 0;
}

double time_ratio(const ReferenceCase& c, double predicted) {
  return c.metric == ReferenceMetric::IterationSeconds ? c.measured / predicted : predicted / c.measured;
}

double case_error(const ReferenceCase& c, double predicted) {
  if (c.metric == ReferenceMetric::FitsInMemory) return predicted == c.measured ? 0.0 : 1.0;
  return c.metric == ReferenceMetric::MemoryGiB ? predicted / c.measured - 1 : time_ratio(c, predicted) - 1;
}

}  // namespace trainsim
