#include "models/scenario/spec.hpp"

#include <algorithm>

#include "models/step/pipeline_schedule.hpp"

namespace trainsim {

double GpuSpec::peak_flops(Precision p) const {
  switch (p) {
    case Precision::Fp32: return flops_tf32 > 0 ? flops_tf32 : flops_fp32;  // frameworks run fp32 GEMMs as TF32
    case Precision::Fp16: return flops_fp16;
    case Precision::Bf16: return flops_bf16;
    case Precision::Fp8: return flops_fp8;
  }
  return 0;
}

const char* to_string(TrainingMode m) {
  switch (m) {
    case TrainingMode::Pretrain: return "pretrain";
    case TrainingMode::Sft: return "sft";
    case TrainingMode::Lora: return "lora";
    case TrainingMode::Qlora: return "qlora";
    case TrainingMode::Dpo: return "dpo";
    case TrainingMode::Ppo: return "ppo";
    case TrainingMode::Grpo: return "grpo";
  }
  return "";
}

const char* to_string(Precision p) {
  switch (p) {
    case Precision::Fp32: return "fp32";
    case Precision::Fp16: return "fp16";
    case Precision::Bf16: return "bf16";
    case Precision::Fp8: return "fp8";
  }
  return "";
}

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
  }
  return "";
}

const char* to_string(Schedule s) { return pipeline_schedule(s).name(); }

const char* to_string(PositionEmbedding p) {
  switch (p) {
    case PositionEmbedding::Rope: return "rope";
    case PositionEmbedding::Learned: return "learned";
    case PositionEmbedding::Alibi: return "alibi";
    case PositionEmbedding::None: return "none";
  }
  return "";
}

const char* to_string(NormKind n) { return n == NormKind::LayerNorm ? "layernorm" : "rmsnorm"; }

double host_link_bandwidth(const GpuSpec& g) {
  if (g.host_link_rate > 0) return g.host_link_rate * kPcieCopyEfficiency;
  return (g.flops_fp8 > 0 && g.memory_bandwidth > 3e12 ? 63e9 : 31.5e9) * kPcieCopyEfficiency;
}

double nic_line_rate(const HardwareSpec& h) {
  return h.gpu.host_link_rate > 0 ? std::min(h.inter_node.bandwidth, h.gpu.host_link_rate) : h.inter_node.bandwidth;
}

const char* to_string(OffloadDevice d) { return d == OffloadDevice::Nvme ? "nvme" : d == OffloadDevice::Cpu ? "cpu" : "none"; }

OptimizerStateBytes optimizer_state_bytes(const TrainingSpec& t) {
  OptimizerStateBytes b;
  b.master = t.precision == Precision::Fp32 || !t.master_weights ? 0.0 : bytes_per_element(t.master_precision);
  const double moment = bytes_per_element(t.moment_precision);
  switch (t.optimizer) {
    case OptimizerKind::Adam: b.states = 2 * moment; break;
    case OptimizerKind::Adam8bit: b.states = 2.0; break;
    case OptimizerKind::Sgd: b.states = moment; break;
  }
  return b;
}

double bytes_per_element(Precision p) {
  switch (p) {
    case Precision::Fp32: return 4;
    case Precision::Fp16:
    case Precision::Bf16: return 2;
    case Precision::Fp8: return 1;
  }
  return 2;
}

double activation_bytes(Precision p) { return p == Precision::Fp32 ? 4 : 2; }

// Transformer Engine (transformer_engine/pytorch/module/linear.py, _Linear.forward, "Cached input tensor"):
// under fp8 the input saved for backward is the fp8-quantized one.
double saved_gemm_input_bytes(Precision p) { return bytes_per_element(p); }

const char* to_string(NetworkTopology t) {
  switch (t) {
    case NetworkTopology::FatTree: return "fat-tree";
    case NetworkTopology::Rail: return "rail";
    case NetworkTopology::SingleSwitch: return "single-switch";
  }
  return "?";
}

}  // namespace trainsim
