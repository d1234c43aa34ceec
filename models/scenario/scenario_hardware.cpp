// The `hardware` section: GPU, node, fabrics, prices.
#include <algorithm>

#include "models/core/json_reader.hpp"
#include "models/core/limits.hpp"
#include "models/scenario/presets.hpp"
#include "models/scenario/scenario.hpp"
#include "models/scenario/scenario_parts.hpp"

namespace trainsim {

namespace {

Precision gemm_dtype_precision(const std::string& dtype) {
  return dtype == "fp16" ? Precision::Fp16 : dtype == "fp8" ? Precision::Fp8 : dtype == "tf32" ? Precision::Fp32 : Precision::Bf16;
}

// sms, gemm_tile, gemm_published, hbm_copy_bandwidth, fused_attention (GpuSpec).
void read_compute_traits(JsonReader& r, GpuSpec* g) {
  g->sms = r.get_int("sms", 0, "", 0, 100000);
  if (r.has("gemm_tile")) {
    const Json& tile = r.raw("gemm_tile");
    auto edge = [](const Json& v) { return v.is_number_integer() && v.get<long long>() >= 16 && v.get<long long>() <= 1024; };
    if (!tile.is_array() || tile.size() != 2 || !edge(tile[0]) || !edge(tile[1]))
      throw InputError(r.child_path("gemm_tile"), json_value_text(tile), "[m, n]: the GEMM output tile, two integers in [16, 1024]");
    g->gemm_tile_m = tile[0].get<int>();
    g->gemm_tile_n = tile[1].get<int>();
  }
  if (r.has("gemm_published")) {
    const Json& list = r.raw("gemm_published");
    if (!list.is_array()) throw InputError(r.child_path("gemm_published"), json_value_text(list), "an array of {dtype, m, n, k, tflops or efficiency, source}");
    for (std::size_t i = 0; i < list.size(); ++i) {
      JsonReader pr(list[i], r.child_path("gemm_published") + "/" + std::to_string(i), nullptr);
      PublishedGemm pg;
      pg.precision = gemm_dtype_precision(pr.get_enum("dtype", {"bf16", "fp16", "fp8", "tf32"}, "bf16", ""));
      const bool shaped = pr.has("m") || pr.has("n") || pr.has("k");
      if (shaped) {
        pg.m = pr.required_int("m", 1, 1 << 24);
        pg.n = pr.required_int("n", 1, 1 << 24);
        pg.k = pr.required_int("k", 1, 1 << 24);
      }
      if (pr.has("tflops") == pr.has("efficiency"))
        throw InputError(pr.path(), json_value_text(list[i]), "exactly one of \"tflops\" (achieved) and \"efficiency\" (achieved / dense peak)");
      pg.tflops = pr.get_number("tflops", 0, "", 1e-3, 1e6);
      pg.efficiency = pr.get_number("efficiency", 0, "", 1e-3, 1.0);
      if (pg.tflops > 0) {
        const double peak = g->peak_flops(pg.precision) > 0 ? g->peak_flops(pg.precision) : g->flops_bf16;
        if (peak > 0 && pg.tflops * 1e12 > 1.05 * peak)
          throw InputError(pr.child_path("tflops"), json_value_text(list[i]["tflops"]),
                           "at most the dense peak (" + format_rate(peak) + ", 5% allowed for boost clocks)", "a GEMM cannot beat the peak: check the units");
      }
      pg.source = pr.get_string("source", "", "");
      pr.reject_unknown();
      g->gemm_published.push_back(pg);
    }
  }
  g->hbm_copy_bandwidth = r.get_quantity("hbm_copy_bandwidth", Quantity::Bandwidth, 0, "", limits::kGpuMemoryBandwidth);
  if (g->hbm_copy_bandwidth > 1.05 * g->memory_bandwidth)
    throw InputError(r.child_path("hbm_copy_bandwidth"), json_value_text(r.raw("hbm_copy_bandwidth")),
                     "at most the memory bandwidth (" + format_quantity(g->memory_bandwidth, Quantity::Bandwidth) + ")");
  if (r.has("fused_attention")) g->fused_attention = r.get_enum("fused_attention", {"flash-attention-2", "hopper-cudnn"}, "", "");
  r.mark_read({"fused_attention"});
}

}  // namespace

namespace {
// A preset's value as a number (a quantity string or a number), or 0 when absent or unreadable (the reader
// reports unreadable values on the merged document).
double preset_quantity(const Json& v, Quantity kind) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) return parse_quantity(v.get<std::string>(), kind).value_or(0.0);
  return 0.0;
}

// A GPU written as a preset with overrides is a variant of the preset's GPU (a 96 GB, 500 W H100, say). Its
// published measurements were taken on the preset's GPU: what carries over to the variant is the fraction of
// the peak they reached, not the absolute figure. So when the variant changes the memory bandwidth or a dense
// peak and keeps the preset's measurements, the copy bandwidth scales with the memory bandwidth and each
// published GEMM becomes its efficiency (achieved / the preset's peak), applied to the variant's peak.
void carry_preset_fractions(const Json& value, const std::string& path, Json* merged) {
  if (!value.is_object() || !value.contains("preset")) return;
  const Json base = expand_preset(PresetKind::Gpu, value["preset"], path + "/preset");
  if (value.contains("memory_bandwidth") && !value.contains("hbm_copy_bandwidth") && base.contains("hbm_copy_bandwidth")) {
    const double old_bw = preset_quantity(base["memory_bandwidth"], Quantity::Bandwidth);
    const double new_bw = preset_quantity(value["memory_bandwidth"], Quantity::Bandwidth);
    const double copy = preset_quantity(base["hbm_copy_bandwidth"], Quantity::Bandwidth);
    if (old_bw > 0 && new_bw > 0 && copy > 0) (*merged)["hbm_copy_bandwidth"] = copy * new_bw / old_bw;
  }
  if (value.contains("peak_flops") && !value.contains("gemm_published") && base.contains("gemm_published") &&
      base["gemm_published"].is_array() && base.contains("peak_flops") && base["peak_flops"].is_object()) {
    Json points = base["gemm_published"];
    for (Json& pt : points) {
      if (!pt.is_object() || !pt.contains("tflops") || !pt["tflops"].is_number()) continue;
      const std::string dtype = pt.value("dtype", std::string("bf16"));
      const double peak = preset_quantity(base["peak_flops"].value(dtype, Json()), Quantity::FlopRate);
      if (peak <= 0) continue;
      pt["efficiency"] = std::min(1.0, pt["tflops"].get<double>() * 1e12 / peak);
      pt.erase("tflops");
    }
    (*merged)["gemm_published"] = points;
  }
}
}  // namespace

GpuSpec parse_gpu(const Json& value, const std::string& path) {
  Json gpu = expand_preset(PresetKind::Gpu, value, path);
  carry_preset_fractions(value, path, &gpu);
  JsonReader r(gpu, path, nullptr);
  GpuSpec g;
  g.name = r.get_string("name", "custom-gpu", "");
  g.source = r.get_string("source", "", "");
  g.memory_bytes = r.required_quantity("memory", Quantity::Bytes, limits::kGpuMemory);
  g.memory_bandwidth = r.required_quantity("memory_bandwidth", Quantity::Bandwidth, limits::kGpuMemoryBandwidth);
  if (!r.has("peak_flops")) throw InputError(path + "/peak_flops", "nothing", "an object {fp32, tf32, fp16, bf16, fp8} of dense peak FLOP/s");
  JsonReader f(r.raw("peak_flops"), path + "/peak_flops", nullptr);
  // A precision the GPU lacks is left out (not 0): training in it is then rejected (check_precision_supported).
  g.flops_fp32 = f.get_quantity("fp32", Quantity::FlopRate, 0, "", limits::kGpuPeakFlops);
  g.flops_tf32 = f.get_quantity("tf32", Quantity::FlopRate, 0, "", limits::kGpuPeakFlops);
  g.flops_fp16 = f.get_quantity("fp16", Quantity::FlopRate, 0, "", limits::kGpuPeakFlops);
  g.flops_bf16 = f.get_quantity("bf16", Quantity::FlopRate, 0, "", limits::kGpuPeakFlops);
  g.flops_fp8 = f.get_quantity("fp8", Quantity::FlopRate, 0, "", limits::kGpuPeakFlops);
  f.reject_unknown();
  if (g.flops_bf16 <= 0 && g.flops_fp16 <= 0)
    throw InputError(path + "/peak_flops", json_value_text(gpu["peak_flops"]), "at least a bf16 or fp16 dense peak");
  g.tdp_watts = r.get_quantity("tdp", Quantity::Power, 0, "", limits::kGpuPower);
  g.price_per_hour = r.get_quantity("price_per_hour", Quantity::Money, 0, "", limits::kPricePerGpuHour);  // absent: unknown
  g.vendor = r.get_enum("vendor", {"nvidia", "amd", "huawei"}, "nvidia", "");
  g.default_intra_node = r.get_string("intra_node", "pcie5", "");
  g.default_inter_node = r.get_string("inter_node", "ib-ndr-400", "");
  g.default_gpus_per_node = r.get_int("gpus_per_node", 8, "", 1, limits::kMaxGpusPerNode);
  if (r.has("host_link")) {
    const FabricSpec link = parse_fabric(r.raw("host_link"), r.child_path("host_link"));
    if (link.kind != "pcie")
      throw InputError(r.child_path("host_link"), json_value_text(r.raw("host_link")), "a PCIe link (pcie4, pcie5 or a fabric of kind \"pcie\")",
                       "host_link is the GPU's PCIe link to its host and NICs");
    g.host_link = link.name;
    g.host_link_rate = link.bandwidth;
  }
  read_compute_traits(r, &g);
  r.mark_read({"preset", "price_source", "traits_source", "hbm_copy_source", "inter_node_source", "host_link_source"});
  r.reject_unknown();
  return g;
}

FabricSpec parse_fabric(const Json& value, const std::string& path) {
  Json fabric = expand_preset(PresetKind::Fabric, value, path);
  JsonReader r(fabric, path, nullptr);
  FabricSpec f;
  f.name = r.get_string("name", "custom-fabric", "");
  f.source = r.get_string("source", "", "");
  f.kind = r.get_enum("kind", {"nvlink", "pcie", "infiniband", "roce", "omnipath", "ethernet", "infinity-fabric", "hccs"},
                      "infiniband", "");
  f.bandwidth = r.required_quantity("bandwidth", Quantity::Bandwidth, limits::kFabricBandwidth);
  f.latency_s = r.get_quantity("latency", Quantity::Time, 5e-6, "", limits::kFabricLatency);
  f.has_nvls = r.get_bool("nvls", false, "");
  r.mark_read({"preset"});
  r.reject_unknown();
  return f;
}

HardwareSpec parse_hardware(const Json& section, std::vector<AppliedDefault>* defaults, int* num_gpus_given) {
  const std::string path = "/hardware";
  JsonReader r(section, path, defaults);
  HardwareSpec h;
  if (r.has("gpu")) {
    h.gpu = parse_gpu(r.raw("gpu"), path + "/gpu");
  } else {
    r.record_default("gpu", "h100-sxm-80gb", "the most common training GPU");
    h.gpu = parse_gpu(Json("h100-sxm-80gb"), path + "/gpu");
  }
  r.mark_read({"gpu"});
  h.gpus_per_node = r.get_int("gpus_per_node", h.gpu.default_gpus_per_node, "the GPU preset's node size", 1, limits::kMaxGpusPerNode);

  bool has_nodes = r.has("num_nodes"), has_gpus = r.has("num_gpus");
  int nodes = has_nodes ? r.required_int("num_nodes", 1, limits::kMaxNodes) : 0;
  int gpus = has_gpus ? r.required_int("num_gpus", 1, limits::kMaxGpus) : 0;
  r.mark_read({"num_nodes", "num_gpus"});
  const long long node_gpus = static_cast<long long>(nodes) * h.gpus_per_node;
  if (has_nodes && has_gpus && gpus > node_gpus)
    throw InputError(path + "/num_gpus", std::to_string(gpus), "at most num_nodes x gpus_per_node = " + std::to_string(node_gpus),
                     "give one of num_gpus and num_nodes; --gpus alone grows the cluster");
  if (!has_gpus && has_nodes) {
    if (node_gpus > limits::kMaxGpus)
      throw InputError(path + "/num_nodes", std::to_string(nodes),
                       "at most " + std::to_string(limits::kMaxGpus / h.gpus_per_node) + " nodes of " + std::to_string(h.gpus_per_node) +
                           " GPUs (" + std::to_string(limits::kMaxGpus) + " GPUs in all)");
    gpus = static_cast<int>(node_gpus);
  }
  *num_gpus_given = gpus;
  h.num_gpus = gpus;
  h.num_nodes = nodes;  // completed by derive_layout once the GPU count is known

  if (r.has("intra_node")) h.intra_node = parse_fabric(r.raw("intra_node"), path + "/intra_node");
  else {
    r.record_default("intra_node", h.gpu.default_intra_node, "the GPU preset's usual node interconnect");
    h.intra_node = parse_fabric(Json(h.gpu.default_intra_node), path + "/intra_node");
  }
  r.mark_read({"intra_node"});

  Json inter = r.has("inter_node") ? r.raw("inter_node") : Json::object();
  r.mark_read({"inter_node"});
  JsonReader ir(inter, path + "/inter_node", defaults);
  if (ir.has("fabric")) h.inter_node = parse_fabric(ir.raw("fabric"), path + "/inter_node/fabric");
  else {
    ir.record_default("fabric", h.gpu.default_inter_node, "the GPU preset's usual fabric (DGX A100: HDR 200 Gb/s; Hopper and later: NDR 400)");
    h.inter_node = parse_fabric(Json(h.gpu.default_inter_node), path + "/inter_node/fabric");
  }
  ir.mark_read({"fabric"});
  h.nics_per_node = ir.get_int("nics_per_node", h.gpus_per_node, "one NIC per GPU", 1, limits::kMaxNicsPerNode);
  ir.reject_unknown();

  if (r.has("network")) {
    JsonReader nr(r.raw("network"), path + "/network", defaults);
    const std::string topo = nr.get_enum("topology", {"fat-tree", "rail", "single-switch"}, "fat-tree", "");
    h.network.topology = topo == "rail" ? NetworkTopology::Rail : topo == "single-switch" ? NetworkTopology::SingleSwitch : NetworkTopology::FatTree;
    h.network.nodes_per_leaf = nr.get_int("nodes_per_leaf", 32, "", 1, 4096);
    h.network.oversubscription = nr.get_number("oversubscription", 1, "", 1, 64);
    h.network.levels = nr.get_int("levels", 2, "", 2, 3);
    nr.reject_unknown();
  }
  r.mark_read({"network"});

  h.host_memory_bytes = r.get_quantity("host_memory", Quantity::Bytes, 0, "", limits::kHostMemory);
  // No price anywhere is "unknown" (0 here): costs print as unknown, never as $0.
  h.price_per_gpu_hour = r.get_quantity("price_per_gpu_hour", Quantity::Money, h.gpu.price_per_hour,
                                        h.gpu.price_per_hour > 0 ? "the GPU preset's representative on-demand price" : "", limits::kPricePerGpuHour);
  r.mark_read({"preset"});
  r.reject_unknown();
  return h;
}

}  // namespace trainsim
