// The `hardware` section: GPU, node, fabrics, prices.
#include "json_reader.hpp"
#include "presets.hpp"
#include "scenario.hpp"
#include "scenario_parts.hpp"

namespace trainsim {

GpuSpec parse_gpu(const Json& value, const std::string& path) {
  Json gpu = expand_preset(PresetKind::Gpu, value, path);
  JsonReader r(gpu, path, nullptr);
  GpuSpec g;
  g.name = r.get_string("name", "custom-gpu", "");
  g.source = r.get_string("source", "", "");
  g.memory_bytes = r.required_quantity("memory", Quantity::Bytes);
  g.memory_bandwidth = r.required_quantity("memory_bandwidth", Quantity::Bandwidth);
  if (!r.has("peak_flops")) throw InputError(path + "/peak_flops", "nothing", "an object {fp32, tf32, fp16, bf16, fp8} of dense peak FLOP/s");
  JsonReader f(r.raw("peak_flops"), path + "/peak_flops", nullptr);
  g.flops_fp32 = f.get_quantity("fp32", Quantity::FlopRate, 0, "");
  g.flops_tf32 = f.get_quantity("tf32", Quantity::FlopRate, 0, "");
  g.flops_fp16 = f.get_quantity("fp16", Quantity::FlopRate, 0, "");
  g.flops_bf16 = f.get_quantity("bf16", Quantity::FlopRate, 0, "");
  g.flops_fp8 = f.get_quantity("fp8", Quantity::FlopRate, 0, "");
  f.reject_unknown();
  if (g.flops_bf16 <= 0 && g.flops_fp16 <= 0)
    throw InputError(path + "/peak_flops", json_value_text(gpu["peak_flops"]), "at least a bf16 or fp16 dense peak");
  g.tdp_watts = r.get_quantity("tdp", Quantity::Power, 0, "");
  g.price_per_hour = r.get_quantity("price_per_hour", Quantity::Money, 0, "");
  g.default_intra_node = r.get_string("intra_node", "pcie5", "");
  g.default_gpus_per_node = r.get_int("gpus_per_node", 8, "", 1);
  r.mark_read({"preset", "price_source"});
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
  f.bandwidth = r.required_quantity("bandwidth", Quantity::Bandwidth);
  if (f.bandwidth <= 0) throw InputError(path + "/bandwidth", json_value_text(fabric["bandwidth"]), "a bandwidth > 0");
  f.latency_s = r.get_quantity("latency", Quantity::Time, 5e-6, "");
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
  h.gpus_per_node = r.get_int("gpus_per_node", h.gpu.default_gpus_per_node, "the GPU preset's node size", 1);

  bool has_nodes = r.has("num_nodes"), has_gpus = r.has("num_gpus");
  int nodes = has_nodes ? r.required_int("num_nodes") : 0;
  int gpus = has_gpus ? r.required_int("num_gpus") : 0;
  r.mark_read({"num_nodes", "num_gpus"});
  if (has_nodes && has_gpus && gpus > nodes * h.gpus_per_node)
    throw InputError(path + "/num_gpus", std::to_string(gpus),
                     "at most num_nodes x gpus_per_node = " + std::to_string(nodes * h.gpus_per_node));
  if (!has_gpus && has_nodes) gpus = nodes * h.gpus_per_node;
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
    ir.record_default("fabric", "ib-ndr-400", "400 Gb/s InfiniBand NDR, one NIC per GPU");
    h.inter_node = parse_fabric(Json("ib-ndr-400"), path + "/inter_node/fabric");
  }
  ir.mark_read({"fabric"});
  h.nics_per_node = ir.get_int("nics_per_node", h.gpus_per_node, "one NIC per GPU", 1);
  ir.reject_unknown();

  h.host_memory_bytes = r.get_quantity("host_memory", Quantity::Bytes, 0, "");
  h.price_per_gpu_hour = r.get_quantity("price_per_gpu_hour", Quantity::Money, h.gpu.price_per_hour,
                                        "the GPU preset's representative on-demand price");
  r.mark_read({"preset"});
  r.reject_unknown();
  return h;
}

}  // namespace trainsim
