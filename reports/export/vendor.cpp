#include "vendor.hpp"

#include <algorithm>

namespace trainsim::export_detail {

namespace {

// Sources: NVIDIA k8s-device-plugin (resource nvidia.com/gpu); ROCm k8s-device-plugin (amd.com/gpu), RCCL reads
// NCCL's NCCL_* variables (ROCm/rccl README); Ascend mind-cluster device plugin (huawei.com/Ascend910 for the 910
// series, 910B included), HCCL's HCCL_SOCKET_IFNAME / HCCL_CONNECT_TIMEOUT (CANN "HCCL environment variables"),
// CANN's set_env.sh under /usr/local/Ascend/ascend-toolkit, MindSpeed-LLM's pretrain_gpt.py (Megatron-LM on Ascend).
const VendorLaunch kNvidia{"nvidia",
                           "GPU",
                           "nvidia.com/gpu",
                           "NCCL",
                           "CUDA_VISIBLE_DEVICES",
                           "nvcr.io/nvidia/pytorch:24.12-py3",
                           "NVIDIA's PyTorch container",
                           "/workspace/Megatron-LM",
                           "Megatron-LM",
                           {}};
const VendorLaunch kAmd{"amd",
                        "GPU",
                        "amd.com/gpu",
                        "RCCL",
                        "HIP_VISIBLE_DEVICES",
                        "rocm/pytorch:latest",
                        "AMD's ROCm PyTorch container (rocm/megatron-lm holds ROCm's Megatron-LM fork)",
                        "/workspace/Megatron-LM",
                        "ROCm's Megatron-LM fork (github.com/ROCm/Megatron-LM)",
                        {}};
const VendorLaunch kHuawei{"huawei",
                           "NPU",
                           "huawei.com/Ascend910",
                           "HCCL",
                           "ASCEND_RT_VISIBLE_DEVICES",
                           "registry.example.com/ascend/cann-torch-npu:latest",
                           "a placeholder: name an image with CANN, torch and torch_npu (Ascend's ascendhub publishes them)",
                           "/workspace/MindSpeed-LLM",
                           "MindSpeed-LLM (Megatron-LM on Ascend through MindSpeed)",
                           {"source /usr/local/Ascend/ascend-toolkit/set_env.sh  # CANN's runtime and HCCL"}};

}  // namespace

std::vector<std::string> VendorLaunch::network_lines(int nics_per_node) const {
  if (vendor == "huawei")
    return {"# HCCL: the host interface HCCL bootstraps over (ip link); the NPUs' own RoCE ports carry the traffic (hccn_tool).",
            "# export HCCL_SOCKET_IFNAME=eth0",
            "# export HCCL_CONNECT_TIMEOUT=1200  # seconds; large jobs take long to link up"};
  std::string hcas;
  for (int i = 0; i < std::max(1, nics_per_node); ++i) hcas += (i ? ",mlx5_" : "mlx5_") + std::to_string(i);
  return {"# " + collectives + ": name your nodes' InfiniBand/RoCE adapters (ibstat lists them) and the interface " + collectives +
              " bootstraps over (ip link).",
          "# export NCCL_IB_HCA=" + hcas, "# export NCCL_SOCKET_IFNAME=eth0"};
}

std::string VendorLaunch::slurm_devices(int per_node) const {
  // Slurm's --gpus-per-node counts GRES of type gpu (NVIDIA through NVML, AMD through RSMI); Ascend sites declare
  // their NPUs as a GRES of their own name in gres.conf, usually "npu".
  if (vendor == "huawei") return "--gres=npu:" + std::to_string(per_node);
  return "--gpus-per-node=" + std::to_string(per_node);
}

const VendorLaunch& vendor_launch(const GpuSpec& gpu) {
  if (gpu.vendor == "amd") return kAmd;
  if (gpu.vendor == "huawei") return kHuawei;
  return kNvidia;
}

}  // namespace trainsim::export_detail
