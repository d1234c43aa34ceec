#pragma once
// The value types a scenario resolves to. Field names follow the scenario format (Hugging Face
// config.json names for the model), units are SI (bytes, seconds, FLOP/s, bytes/s, W, USD).
#include <cstdint>
#include <string>
#include <vector>

namespace trainsim {

enum class MlpKind { Plain, Gated };  // "gelu" = 2 matrices; "silu"/"swiglu"/"geglu" = gated, 3 matrices
enum class NormKind { LayerNorm, RmsNorm };
enum class PositionEmbedding { Rope, Learned, Alibi };

struct ModelSpec {
  std::string name;
  std::string source;
  int num_hidden_layers = 0;
  int hidden_size = 0;
  int num_attention_heads = 0;
  int num_key_value_heads = 0;  // defaults to num_attention_heads (MHA)
  int head_dim = 0;             // defaults to hidden_size / num_attention_heads
  int intermediate_size = 0;    // dense FFN size
  std::string hidden_act = "silu";
  MlpKind mlp = MlpKind::Gated;
  int vocab_size = 0;
  bool tie_word_embeddings = false;
  int max_position_embeddings = 0;
  PositionEmbedding position_embedding = PositionEmbedding::Rope;
  NormKind norm = NormKind::RmsNorm;
  bool attention_bias = false;  // biases on Q/K/V/O
  bool qkv_bias = false;        // biases on Q/K/V only (Qwen2)
  bool mlp_bias = false;
  bool qk_norm = false;         // per-head RMSNorm on Q and K (Qwen3)
  double attention_dropout = 0.0;
  double hidden_dropout = 0.0;
  // Mixture of experts (num_experts == 0: dense).
  int num_experts = 0;
  int num_experts_per_tok = 0;
  int moe_intermediate_size = 0;            // per expert; defaults to intermediate_size (Mixtral)
  int shared_expert_intermediate_size = 0;  // total size of the always-on shared expert(s)
  int first_k_dense_replace = 0;            // the first k layers are dense

  bool is_moe() const { return num_experts > 0; }
  int num_moe_layers() const { return is_moe() ? num_hidden_layers - first_k_dense_replace : 0; }
  int num_dense_layers() const { return num_hidden_layers - num_moe_layers(); }
};

enum class TrainingMode { Pretrain, Sft, Lora, Qlora, Dpo };
enum class Precision { Fp32, Fp16, Bf16, Fp8 };
enum class OptimizerKind { Adam, Sgd, Adam8bit };
enum class Recompute { None, Selective, Full };

struct LoraSpec {
  int rank = 16;
  double alpha = 32;
  std::vector<std::string> target_modules{"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
};

struct TrainingSpec {
  TrainingMode mode = TrainingMode::Pretrain;
  int seq_len = 0;
  int global_batch_size = 0;  // sequences per optimizer step (DPO: preference pairs)
  double train_tokens = 0;    // 0 = not given
  double dataset_samples = 0;
  double epochs = 0;
  Precision precision = Precision::Bf16;
  Precision grad_precision = Precision::Fp32;  // gradient buffer the optimizer reads (Megatron main_grad, FSDP)
  OptimizerKind optimizer = OptimizerKind::Adam;
  std::string optimizer_name = "adamw";
  int zero_stage = 0;
  bool distributed_optimizer = false;
  Recompute recompute = Recompute::None;
  bool flash_attention = true;
  bool offload_optimizer = false;
  bool packing = true;
  LoraSpec lora;

  bool trains_base_weights() const { return mode == TrainingMode::Pretrain || mode == TrainingMode::Sft || mode == TrainingMode::Dpo; }
  bool uses_adapters() const { return mode == TrainingMode::Lora || mode == TrainingMode::Qlora; }
};

enum class Schedule { Gpipe, OneFOneB, Interleaved };

struct ParallelLayout {
  int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, etp = 1, vpp = 1;
  bool sequence_parallel = false;
  bool tp_comm_overlap = false;  // overlap TP all-gather/reduce-scatter with the adjacent GEMMs (Megatron --tp-comm-overlap)
  int micro_batch_size = 1;
  int gradient_accumulation_steps = 1;
  Schedule schedule = Schedule::OneFOneB;
  std::string rank_order = "tp-cp-ep-dp-pp";

  int model_parallel() const { return tp * pp * cp; }
  int world() const { return tp * pp * cp * dp; }
  // Expert data-parallel degree: the ranks that hold the same experts (Megatron-core MoE groups).
  int expert_dp() const { return world() / (pp * ep * etp); }
};

struct GpuSpec {
  std::string name;
  std::string source;
  double memory_bytes = 0;
  double memory_bandwidth = 0;  // bytes/s, HBM/GDDR
  double flops_fp32 = 0, flops_tf32 = 0, flops_fp16 = 0, flops_bf16 = 0, flops_fp8 = 0;  // dense peak FLOP/s
  double tdp_watts = 0;
  double price_per_hour = 0;  // USD per GPU-hour (on-demand cloud list price; override in the scenario)
  std::string default_intra_node;
  int default_gpus_per_node = 8;

  double peak_flops(Precision p) const;
};

struct FabricSpec {
  std::string name;
  std::string source;
  std::string kind;         // "nvlink", "pcie", "infiniband", "roce", "omnipath", "ethernet"
  double bandwidth = 0;     // bytes/s per GPU (intra-node) or per NIC (inter-node), one direction
  double latency_s = 0;     // one-way small-message latency
  bool has_nvls = false;    // NVLink SHARP (in-switch reduction) available
};

struct HardwareSpec {
  GpuSpec gpu;
  int gpus_per_node = 8;
  int num_nodes = 1;
  int num_gpus = 8;  // GPUs the job uses: whole nodes, or part of one node
  FabricSpec intra_node;
  FabricSpec inter_node;
  int nics_per_node = 8;
  double host_memory_bytes = 0;  // per node; 0 = not given
  double price_per_gpu_hour = 0; // USD; defaults to the GPU preset's price

};

// A resolved default: which field was filled in, with what, and why. Printed with every result.
struct AppliedDefault {
  std::string path;
  std::string value;
  std::string reason;
};

struct Scenario {
  ModelSpec model;
  TrainingSpec training;
  ParallelLayout parallel;
  HardwareSpec hardware;
  std::vector<AppliedDefault> defaults;
  std::vector<std::string> notes;  // e.g. ignored Hugging Face config keys
};

const char* to_string(TrainingMode m);
const char* to_string(Precision p);
const char* to_string(Recompute r);
const char* to_string(Schedule s);
const char* to_string(PositionEmbedding p);
const char* to_string(NormKind n);
double bytes_per_element(Precision p);

}  // namespace trainsim
