// Property test: random valid scenarios (seeded, reproducible) through the memory model, the step model, the cost
// and the layout search never yield NaN, infinity, a negative time, memory or cost; and memory per GPU grows when
// the model grows (more layers) at a fixed layout.
#include <doctest/doctest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "models/core/errors.hpp"
#include "models/layout/search.hpp"
#include "models/memory/memory.hpp"
#include "models/scenario/scenario.hpp"
#include "models/step/step.hpp"

using namespace trainsim;
using Json = nlohmann::json;

namespace {

bool sane(double v) { return std::isfinite(v) && v >= 0; }

#define CHECK_SANE(v) CHECK_MESSAGE(sane(v), #v " = " << (v))

void check_stage(const StageMemory& s) {
  CHECK_SANE(s.weights);
  CHECK_SANE(s.gradients);
  CHECK_SANE(s.optimizer);
  CHECK_SANE(s.activations);
  CHECK_SANE(s.other);
  CHECK_SANE(s.host);
  CHECK(s.total > 0);
  CHECK(std::isfinite(s.total));
}

void check_step(const StepEstimate& e, const TrainingCost& c) {
  CHECK(e.time_s > 0);
  CHECK(std::isfinite(e.time_s));
  CHECK_SANE(e.tokens_per_s);
  CHECK_SANE(e.mfu);
  CHECK(e.mfu <= 1.0);
  CHECK_SANE(e.hfu);
  const StepBreakdown& b = e.breakdown;
  for (double part : {b.compute_s, b.recompute_s, b.tp_comm_s, b.cp_comm_s, b.ep_comm_s, b.pp_comm_s, b.dp_comm_s, b.bubble_s, b.optimizer_s, b.overhead_s})
    CHECK_SANE(part);
  CHECK_SANE(c.iterations);
  CHECK_SANE(c.time_to_train_s);
  CHECK_SANE(c.gpu_hours);
  CHECK_SANE(c.cost);
  CHECK_SANE(c.energy_kwh);
}

std::vector<int> divisors(int n, int limit) {
  std::vector<int> out;
  for (int d = 1; d <= n && d <= limit; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

template <class T>
T pick(std::mt19937_64& rng, const std::vector<T>& v) {
  return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
}

// A random scenario that is meant to be valid; parse_scenario decides.
Json random_scenario(std::mt19937_64& rng) {
  static const std::vector<std::string> models{"llama3-8b", "llama2-13b", "qwen2.5-7b", "qwen3-8b", "mixtral-8x7b", "gpt3-175b",
                                               "megatron-gpt-22b", "qwen3-30b-a3b", "bloom-176b", "mpt-7b"};
  static const std::vector<std::string> gpu_names{"h100-sxm-80gb", "a100-sxm-80gb", "h200-sxm-141gb", "b200-sxm-180gb", "mi300x-192gb",
                                             "l40s-48gb", "a800-sxm-80gb"};
  static const std::vector<std::string> modes{"pretrain", "sft", "lora", "qlora", "dpo"};
  const std::string model = pick(rng, models);
  const Scenario shape = parse_scenario(Json{{"model", model}, {"training", {{"global_batch_size", 8}}}}, false);
  const ModelSpec& m = shape.model;
  const int nodes = pick(rng, std::vector<int>{1, 2, 4, 16});
  const int gpus = nodes * 8;
  const int tp = pick(rng, divisors(std::gcd(m.num_attention_heads, m.num_key_value_heads), 8));
  const int pp = pick(rng, divisors(m.num_hidden_layers, std::min(8, gpus / tp)));
  const int dp = gpus / (tp * pp);
  const int mbs = pick(rng, std::vector<int>{1, 2, 4});
  const int accumulation = pick(rng, std::vector<int>{1, 2, 8});
  Json doc = {{"model", model},
              {"training",
               {{"mode", pick(rng, modes)},
                {"seq_len", pick(rng, std::vector<int>{512, 2048, 4096, 8192})},
                {"global_batch_size", mbs * dp * accumulation},
                {"train_tokens", pick(rng, std::vector<std::string>{"1B", "100B", "15T"})},
                {"precision", pick(rng, std::vector<std::string>{"bf16", "fp16", "fp32", "fp8"})},
                {"zero_stage", pp > 1 ? pick(rng, std::vector<int>{0, 1}) : pick(rng, std::vector<int>{0, 1, 2, 3})},
                {"recompute", pick(rng, std::vector<std::string>{"none", "selective", "full"})},
                {"offload_optimizer", pick(rng, std::vector<bool>{false, false, true})},
                {"flash_attention", pick(rng, std::vector<bool>{true, true, false})}}},
              {"parallel", {{"tp", tp}, {"pp", pp}, {"dp", dp}, {"micro_batch_size", mbs}, {"sequence_parallel", tp > 1}}},
              {"hardware", {{"gpu", pick(rng, gpu_names)}, {"num_nodes", nodes}}}};
  if (m.is_moe()) {
    const int ep = pick(rng, divisors(m.num_experts, std::min(8, dp)));
    doc["parallel"]["ep"] = ep;
  }
  return doc;
}

}  // namespace

TEST_CASE("property: random valid scenarios give finite, non-negative memory, step time and cost") {
  std::mt19937_64 rng(20261122);
  int valid = 0, rejected = 0;
  for (int i = 0; i < 400; ++i) {
    const Json doc = random_scenario(rng);
    CAPTURE(doc.dump());
    Scenario s;
    try {
      s = parse_scenario(doc);
    } catch (const InputError&) {
      ++rejected;  // e.g. fp8 on an A100, ep that does not divide the stage: rejected with a message, fine
      continue;
    }
    ++valid;
    const MemoryModel mm(s.model, s.training, s.hardware);
    const MemoryEstimate mem = mm.estimate(s.parallel);
    for (const auto& st : mem.stages) check_stage(st);
    CHECK_SANE(mem.host_per_node);
    const StepModel sm(s.model, s.training, s.hardware);
    const StepEstimate e = sm.estimate(s.parallel);
    check_step(e, sm.training_cost(e, s.parallel));

    // Memory grows with the model: twice the layers (each stage holds twice as many) at the same layout.
    ModelSpec bigger = s.model;
    bigger.num_hidden_layers *= 2;
    bigger.first_k_dense_replace *= 2;
    const MemoryEstimate big = MemoryModel(bigger, s.training, s.hardware).estimate(s.parallel);
    CHECK(big.worst.total > mem.worst.total);
    // Weights and optimizer states together (FSDP's shards are the fp32 copy counted with the optimizer).
    CHECK(big.worst.weights + big.worst.optimizer + big.worst.host > mem.worst.weights + mem.worst.optimizer + mem.worst.host);
  }
  MESSAGE(valid << " valid scenarios, " << rejected << " rejected with an input error");
  CHECK(valid > 200);
}

TEST_CASE("property: every plan the search returns is finite and non-negative") {
  std::mt19937_64 rng(7);
  int searched = 0;
  for (int i = 0; i < 40; ++i) {
    Json doc = random_scenario(rng);
    doc.erase("parallel");  // let the search choose
    doc["training"].erase("zero_stage");
    doc["training"].erase("recompute");
    doc["training"].erase("offload_optimizer");
    CAPTURE(doc.dump());
    Scenario s;
    try {
      s = parse_scenario(doc, false);
    } catch (const InputError&) {
      continue;
    }
    SearchOptions o;
    o.top = 5;
    o.threads = 1;
    const SearchResult r = search_plans(s, {s.hardware.num_gpus}, search_space_from(s), o);
    searched += r.searched > 0;
    CHECK(r.feasible <= r.fit_memory);
    CHECK(r.fit_memory <= r.searched);
    for (const Plan& p : r.plans) {
      check_stage(p.memory);
      CHECK(p.memory.total <= s.hardware.gpu.memory_bytes);
      check_step(p.step, p.cost);
    }
  }
  CHECK(searched > 20);
}
