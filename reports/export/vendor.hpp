#pragma once
// What a launch file names for the accelerator's maker (GpuSpec::vendor): the Kubernetes device-plugin resource,
// the collectives library and its environment, the visible-devices variable and a container image. One table, so
// an Ascend or AMD plan never exports nvidia.com/gpu or NCCL settings.
#include <string>
#include <vector>

#include "models/scenario/spec.hpp"

namespace trainsim::export_detail {

struct VendorLaunch {
  std::string vendor;            // "nvidia", "amd", "huawei"
  std::string device_word;       // "GPU" / "NPU" for comments
  std::string k8s_resource;      // device plugin's extended resource name
  std::string collectives;       // "NCCL", "RCCL", "HCCL"
  std::string visible_devices;   // the runtime's device mask variable
  std::string default_image;     // a container image with the vendor's PyTorch
  std::string image_note;        // what the image must hold, or that it is a placeholder
  // Commented-out network settings a multi-node job usually needs (the adapters and the bootstrap interface).
  std::vector<std::string> network_lines(int nics_per_node) const;
  // Megatron-LM on this hardware: the checkout pretrain_gpt.py comes from (MindSpeed-LLM on Ascend).
  std::string megatron_dir;
  std::string megatron_stack;    // in words
  // Lines of bash a launch runs first on this vendor's software (empty for NVIDIA), e.g. sourcing CANN's environment.
  std::vector<std::string> setup_lines;
  // Slurm: how a job asks for the devices of a node ("--gpus-per-node=8", or a generic resource name).
  std::string slurm_devices(int per_node) const;
};

const VendorLaunch& vendor_launch(const GpuSpec& gpu);

}  // namespace trainsim::export_detail
