// Every preset loads, and every model preset's parameter count matches its publisher's total.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <cmath>

#include "models/compute/transformer.hpp"
#include "models/scenario/presets.hpp"
#include "models/scenario/scenario.hpp"

using namespace trainsim;
using Json = nlohmann::json;

TEST_CASE("model presets match published parameter totals within 1%") {
  // published_parameters in presets/models.json come from the model cards / papers cited in each entry.
  for (const auto& name : preset_names(PresetKind::Model)) {
    CAPTURE(name);
    const Json& entry = preset_table(PresetKind::Model).at(name);
    REQUIRE(entry.contains("source"));
    Scenario s = parse_scenario(Json{{"model", name}, {"hardware", {{"num_gpus", 1}, {"gpus_per_node", 1}}}});
    ModelParams p = count_parameters(s.model);
    if (!entry.contains("published_parameters")) continue;  // no published total (checked by formula elsewhere)
    const double published = entry["published_parameters"].get<double>();
    CHECK(std::fabs(p.total / published - 1) < 0.01);
    if (entry.contains("published_active_parameters")) {
      const double active = entry["published_active_parameters"].get<double>();
      CHECK(std::fabs(p.active / active - 1) < 0.03);  // published active counts are given to 2 digits (3.3B, 22B, 12.9B)
    }
  }
}

TEST_CASE("required presets exist") {
  for (const char* m : {"gpt3-175b", "megatron-gpt-22b", "megatron-gpt-530b", "megatron-gpt-1t", "llama2-7b", "llama2-13b", "llama2-70b",
                        "llama3-8b", "llama3-70b", "llama3.1-8b", "llama3.1-70b", "llama3.1-405b", "qwen2.5-7b", "qwen2.5-14b",
                        "qwen2.5-72b", "qwen3-8b", "qwen3-32b", "qwen3-30b-a3b", "qwen3-235b-a22b", "mixtral-8x7b", "bloom-176b",
                        "mpt-7b", "mpt-30b", "mpt-70b"})
    CHECK_MESSAGE(preset_table(PresetKind::Model).contains(m), m);
  for (const char* g : {"a100-sxm-40gb", "a100-sxm-80gb", "a100-pcie-40gb", "a100-pcie-80gb", "a800-sxm-80gb", "h100-sxm-80gb",
                        "h100-pcie-80gb", "h800-sxm-80gb", "h200-sxm-141gb", "b200-sxm-180gb", "l40s-48gb", "rtx4090-24gb",
                        "mi300x-192gb", "ascend-910b-64gb"})
    CHECK_MESSAGE(preset_table(PresetKind::Gpu).contains(g), g);
  for (const char* f : {"nvlink3-nvswitch", "nvlink4-nvswitch", "nvlink5-nvswitch", "pcie4", "pcie5", "ib-hdr-200", "ib-ndr-400",
                        "ib-xdr-800", "roce-100", "roce-200", "roce-400", "omnipath-100", "eth-10", "eth-25", "eth-100", "eth-200"})
    CHECK_MESSAGE(preset_table(PresetKind::Fabric).contains(f), f);
}

TEST_CASE("every GPU preset parses, names an existing node fabric, and has a source") {
  for (const auto& name : preset_names(PresetKind::Gpu)) {
    CAPTURE(name);
    GpuSpec g = parse_gpu(Json(name), "/hardware/gpu");
    CHECK(g.memory_bytes > 1e9);
    CHECK(g.flops_bf16 > 1e14);
    CHECK(!g.source.empty());
    CHECK(preset_table(PresetKind::Fabric).contains(g.default_intra_node));
  }
  // Datasheet anchors (NVIDIA H100 datasheet: 989.4 dense bf16 TFLOPS, 3.35 TB/s; nvidia-smi: 81559 MiB).
  GpuSpec h100 = parse_gpu(Json("h100-sxm-80gb"), "/hardware/gpu");
  CHECK(h100.flops_bf16 == trainsim::test::approx(989.4e12));
  CHECK(h100.memory_bandwidth == trainsim::test::approx(3.35e12));
  CHECK(h100.memory_bytes == trainsim::test::approx(81559.0 * 1048576));
}

TEST_CASE("every fabric preset parses; cut-down NVLink for A800 and H800") {
  for (const auto& name : preset_names(PresetKind::Fabric)) {
    CAPTURE(name);
    FabricSpec f = parse_fabric(Json(name), "/hardware/intra_node");
    CHECK(f.bandwidth > 1e9);
    CHECK(f.latency_s > 0);
  }
  // NVLink 4 = 900 GB/s bidirectional per H100; H800 = 400 GB/s bidirectional (NVIDIA product briefs).
  CHECK(parse_fabric(Json("nvlink4-nvswitch"), "x").bandwidth == trainsim::test::approx(450e9));
  CHECK(parse_fabric(Json(parse_gpu(Json("h800-sxm-80gb"), "x").default_intra_node), "x").bandwidth == trainsim::test::approx(200e9));
  CHECK(parse_fabric(Json("ib-ndr-400"), "x").bandwidth == trainsim::test::approx(50e9));  // 400 Gb/s / 8
}
