#pragma once
// The value types a scenario resolves to. Field names follow the scenario format (Hugging Face
// config.json names for the model), units are SI (bytes, seconds, FLOP/s, bytes/s, W, USD).
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "models/reliability/storage_tier.hpp"
#include "models/scenario/framework.hpp"

namespace trainsim {

enum class MlpKind { Plain, Gated };  // "gelu" = 2 matrices; "silu"/"swiglu"/"geglu" = gated, 3 matrices
enum class NormKind { LayerNorm, RmsNorm };
enum class PositionEmbedding { Rope, Learned, Alibi, None };  // None: no position signal (NoPE)

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
  // Rotary embeddings: base frequency (0 = not given: the framework's default, 10000) and context-extension
  // scaling as Hugging Face's rope_scaling names it ("llama3", "linear", "dynamic", "yarn"; empty = none).
  double rope_theta = 0;
  std::string rope_scaling_type;
  double rope_scaling_factor = 0;
  double attention_dropout = 0.0;
  double hidden_dropout = 0.0;
  // Mixture of experts (num_experts == 0: dense).
  int num_experts = 0;
  int num_experts_per_tok = 0;
  int moe_intermediate_size = 0;            // per expert; defaults to intermediate_size (Mixtral)
  int shared_expert_intermediate_size = 0;  // total size of the always-on shared expert(s)
  int first_k_dense_replace = 0;            // the first k layers are dense
  // Multi-head latent attention (DeepSeek-V2/V3, arXiv:2405.04434 §2.1; kv_lora_rank > 0): queries through a
  // rank-q_lora_rank bottleneck (0: a full q projection), keys and values up-projected from a shared
  // kv_lora_rank latent; each head's query/key has qk_nope_head_dim + qk_rope_head_dim dims (the rotary part
  // of the key shared by all heads), its value v_head_dim.
  int q_lora_rank = 0, kv_lora_rank = 0, qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
  // Sliding-window attention (Mistral, Gemma 2/3, GPT-OSS): on sliding_layers of the layers a query attends to
  // at most the sliding_window keys before it (itself included); the other layers attend to the whole causal
  // prefix. 0 / 0: every layer full.
  int sliding_window = 0;
  int sliding_layers = 0;
  // Linear attention (Qwen3-Next's Gated DeltaNet, linear_attention.hpp) on linear_attention_layers of the layers;
  // the others softmax attention, with a sigmoid gate on its output when attention_output_gate (Qwen3-Next: the
  // q projection doubled).
  int linear_attention_layers = 0;
  int linear_num_key_heads = 0, linear_num_value_heads = 0, linear_key_head_dim = 0, linear_value_head_dim = 0, linear_conv_kernel_dim = 0;
  bool attention_output_gate = false;
  // Multi-token prediction (DeepSeek-V3 arXiv 2412.19437 §2.2; Megatron --mtp-num-layers): after the last layer,
  // mtp_layers modules each norm the hidden state and the next token's embedding, project the pair (2h -> h), run
  // one more transformer layer of the last layer's kind and the shared LM head and loss. Megatron puts them on the
  // last pipeline stage.
  int mtp_layers = 0;
  // Described, not priced (exports write them so the launched model is the one priced): the norms' epsilon
  // (config.json rms_norm_eps / layer_norm_eps) and the MoE router (DeepSeek-V3 arXiv 2412.19437 §2.1.2): the score
  // function ("softmax" | "sigmoid", config scoring_func), whether the top-k weights are renormalised (norm_topk_prob),
  // group-limited routing (router_groups groups, tokens routed within the best router_group_topk; 0 = none), the
  // routed weights' scaling factor (0 = none) and the auxiliary-loss-free expert bias (topk_method "noaux_tc").
  double norm_epsilon = 1e-5;
  std::string router_score = "softmax";
  bool router_norm_topk = true;
  int router_groups = 0, router_group_topk = 0;
  double router_scaling_factor = 0;
  bool router_expert_bias = false;

  bool is_moe() const { return num_experts > 0; }
  bool is_mla() const { return kv_lora_rank > 0; }
  // Per-head query/key and value widths: MLA's, else head_dim for both.
  int qk_head_dim() const { return is_mla() ? qk_nope_head_dim + qk_rope_head_dim : head_dim; }
  int value_head_dim() const { return is_mla() ? v_head_dim : head_dim; }
  int num_moe_layers() const { return is_moe() ? num_hidden_layers - first_k_dense_replace : 0; }
  int num_dense_layers() const { return num_hidden_layers - num_moe_layers(); }
  bool last_layer_moe() const { return is_moe() && num_moe_layers() > 0; }
  // Share of the layers with linear attention (a stage is taken to hold the model's mix).
  double linear_attention_share() const {
    return num_hidden_layers > 0 ? static_cast<double>(linear_attention_layers) / num_hidden_layers : 0.0;
  }
};

// Ppo and Grpo: reinforcement learning over generated samples (the actor trains every weight; rlhf_step.hpp).
enum class TrainingMode { Pretrain, Sft, Lora, Qlora, Dpo, Ppo, Grpo };
// What trains: every weight, or low-rank adapters over a frozen base (16-bit, or 4-bit NF4 under QLoRA).
enum class AdapterKind { None, Lora, Qlora };
enum class Precision { Fp32, Fp16, Bf16, Fp8 };
enum class OptimizerKind { Adam, Sgd, Adam8bit };
// Where offloaded states live: host memory, or NVMe behind it (ZeRO-Infinity, Rajbhandari et al. SC'21).
enum class OffloadDevice { None, Cpu, Nvme };
enum class Recompute { None, Selective, Full };
// Megatron-core's --recompute-modules under selective recompute: the modules whose activations are dropped after
// the forward and recomputed before the backward (transformer_config.py recompute_modules; default core_attn).
enum RecomputeModule : unsigned {
  kRecomputeCoreAttn = 1u << 0,       // attention core (Korthikanti et al. 2022 §5)
  kRecomputeLayernorm = 1u << 1,      // the two norms' outputs (QKV and MLP / router inputs)
  kRecomputeMlp = 1u << 2,            // a dense layer's MLP
  kRecomputeMoe = 1u << 3,            // a whole MoE block: router, dispatch, experts, combine, shared experts
  kRecomputeMoeAct = 1u << 4,         // the experts' activation function
  kRecomputeSharedExperts = 1u << 5,  // the shared experts
  kRecomputeMlaUpProj = 1u << 6,      // MLA's up-projections (per-head Q, K, V)
};

struct LoraSpec {
  int rank = 16;
  double alpha = 32;
  std::vector<std::string> target_modules{"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
};

// Reinforcement learning from generated samples (training.rlhf, with mode "ppo" or "grpo"): each step a serving
// engine generates group_size responses to each of prompts_per_step prompts (the rollout), frozen models score them
// (the actor's own log-probabilities, the reference model's for the KL penalty, a reward model's or a rule's
// reward, PPO's critic's values), the actor (and PPO's critic) train on them in updates of samples_per_update
// samples, and the new weights go to the engine. As OpenRLHF, verl, NeMo RL, TRL and ms-swift run it.
enum class RolloutPlacement { Colocated, Separate };
struct RlhfSpec {
  int prompts_per_step = 0;
  int group_size = 1;            // responses per prompt (GRPO's group; PPO: usually 1)
  int prompt_len = 0;            // tokens
  int response_len = 0;          // mean generated tokens
  int max_response_len = 0;      // the engine's cap on generated tokens (vLLM max_tokens)
  int samples_per_update = 0;    // samples per optimizer step of the actor
  int update_epochs = 1;         // passes over the step's samples (PPO epochs)
  bool kl_reference = true;      // a frozen reference model's log-probabilities (KL penalty > 0)
  // The reward: a rule (a function, no model) or a model's forward over every sample; PPO's critic: a value model
  // that trains beside the actor. nullptr: none.
  std::shared_ptr<const ModelSpec> reward_model, critic_model;
  RolloutPlacement placement = RolloutPlacement::Colocated;
  int rollout_gpus = 0;          // Separate: GPUs of the generation pool (the others train)
  int rollout_tp = 0;            // tensor parallel of one generation engine
  double gpu_memory_utilization = 0;  // the engine's share of each rollout GPU's memory (vLLM gpu_memory_utilization)
  bool prefix_caching = true;    // a group's responses share their prompt's prefill (vLLM automatic prefix caching)
  int max_num_seqs = 256;        // sequences an engine runs at once at most (vLLM max_num_seqs)
  long long steps = 0;           // RL steps of the whole run (0: not given; time and cost to train need it)

  long long samples_per_step() const { return static_cast<long long>(prompts_per_step) * group_size; }
  double mean_sample_tokens() const { return static_cast<double>(prompt_len) + response_len; }
};

struct TrainingSpec {
  TrainingMode mode = TrainingMode::Pretrain;
  // DPO's policy as adapters over a frozen base (training.adapters: TRL + peft, ms-swift --tuner_type lora);
  // modes lora and qlora imply theirs (adapter_kind()).
  AdapterKind dpo_adapters = AdapterKind::None;
  int seq_len = 0;
  int global_batch_size = 0;  // sequences per optimizer step (DPO: preference pairs)
  double train_tokens = 0;    // 0 = not given
  double dataset_samples = 0;
  double epochs = 0;
  Precision precision = Precision::Bf16;
  Precision grad_precision = Precision::Fp32;  // gradient buffer the optimizer reads (Megatron main_grad, FSDP)
  bool grad_precision_given = false;           // false: the framework decides (gradient_precision, framework.hpp)
  OptimizerKind optimizer = OptimizerKind::Adam;
  std::string optimizer_name = "adamw";
  // bitsandbytes' paged optimizers (paged_adamw, paged_adamw8bit): the states live in CUDA unified memory and page
  // out to host memory when the GPU is full, paging back in for each step.
  bool paged_optimizer = false;
  int zero_stage = 0;
  bool distributed_optimizer = false;
  Recompute recompute = Recompute::None;
  unsigned recompute_modules = kRecomputeCoreAttn;  // under Recompute::Selective with Megatron's policy
  bool flash_attention = true;
  bool offload_optimizer = false;
  // With offload_optimizer, the share of the optimizer states (and their step) on the host; the rest stays on the GPU
  // (Megatron --optimizer-offload-fraction, DeepSpeed offload_optimizer.ratio).
  double offload_fraction = 1.0;
  // MoE under dropless routing: the coefficient of variation of the tokens an expert receives per micro-batch that
  // the router adds beyond sampling (0: uniform, as forced load balancing routes; a trained router that specialises
  // its experts more). The busiest expert-parallel rank sets each MoE layer's pace (expert_load.hpp).
  double moe_expert_load_cv = 0;
  OffloadDevice optimizer_offload_device = OffloadDevice::Cpu;  // with offload_optimizer (DeepSpeed offload_optimizer.device)
  // ZeRO-3's parameter shards off the GPU (DeepSpeed offload_param.device): fetched over PCIe (from NVMe through host
  // memory) before each gather; the GPU keeps only the layers being gathered.
  OffloadDevice param_offload = OffloadDevice::None;
  // The parameter offload in effect: ZeRO-3 only (a layout search may try lower stages, which keep parameters).
  OffloadDevice params_offloaded() const { return zero_stage >= 3 ? param_offload : OffloadDevice::None; }
  // Megatron's precision-aware optimizer (--use-precision-aware-optimizer): the dtype of Adam's two moments
  // (--exp-avg-dtype / --exp-avg-sq-dtype; DeepSeek-V3 keeps them in bf16) and of the master weights
  // (--main-params-dtype). fp32 both by default.
  Precision moment_precision = Precision::Fp32;
  Precision master_precision = Precision::Fp32;
  // false: no master copy (master_weights_dtype "none"): the optimizer steps the 16-bit parameters themselves, as
  // torch.optim does over a model loaded in bf16 (NeMo AutoModel's default), with the gradients in their dtype.
  bool master_weights = true;
  // --use-precision-aware-optimizer with fp32 states (training.precision_aware_optimizer): the optimizer holds the
  // master (under CPU offload, HybridDeviceOptimizer makes it from its host copy: none stays on the GPU).
  bool precision_aware_optimizer = false;
  // The precision-aware optimizer is in use: asked for, or needed by non-fp32 moments or master.
  bool uses_precision_aware_optimizer() const {
    return precision_aware_optimizer || moment_precision != Precision::Fp32 || master_precision != Precision::Fp32;
  }
  bool packing = true;
  // Packed rows whose attention is masked per document (FlexAttention's block-causal mask, FlashAttention's varlen
  // kernels, Transformer Engine's THD format): the mean tokens of a document. 0: the row attends causally as one
  // sequence (pretraining's packing).
  double document_tokens = 0;
  LoraSpec lora;
  // training.framework as named (name empty: not named; framework_for() resolves the one the layout implies).
  FrameworkTraits framework;
  RlhfSpec rl;  // modes ppo and grpo

  bool is_rl() const { return mode == TrainingMode::Ppo || mode == TrainingMode::Grpo; }

  // Sequences one sample holds: a DPO preference pair is a chosen and a rejected sequence, both run through
  // the policy and the reference model. Every count of tokens or activations per sample uses this.
  int sequences_per_sample() const { return mode == TrainingMode::Dpo ? 2 : 1; }
  // Tokens one optimizer step processes: global batch x sequences per sample x sequence length.
  double tokens_per_step() const { return static_cast<double>(global_batch_size) * sequences_per_sample() * seq_len; }

  AdapterKind adapter_kind() const {
    return mode == TrainingMode::Lora ? AdapterKind::Lora : mode == TrainingMode::Qlora ? AdapterKind::Qlora
           : mode == TrainingMode::Dpo ? dpo_adapters : AdapterKind::None;
  }
  bool uses_adapters() const { return adapter_kind() != AdapterKind::None; }
  bool trains_base_weights() const { return !uses_adapters(); }
  bool quantized_base() const { return adapter_kind() == AdapterKind::Qlora; }  // the frozen base in NF4
  // DPO keeps a frozen reference copy of the weights, unless the policy is adapters over a frozen base: then the
  // reference is that base with the adapters disabled (TRL DPOTrainer with a peft_config, ms-swift's LoRA DPO).
  bool has_reference_copy() const { return mode == TrainingMode::Dpo && !uses_adapters(); }
};

enum class Schedule { Gpipe, OneFOneB, Interleaved, DualPipe };

struct ParallelLayout {
  int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, etp = 1, vpp = 1;
  // Hybrid sharding: ZeRO shards over dp·cp / dp_replicate ranks and keeps dp_replicate replicas of the shards,
  // whose gradients are all-reduced across them (FSDP HSDP: torchtitan data_parallel_replicate_degree, FSDP1
  // HYBRID_SHARD; Megatron --num-distributed-optimizer-instances). 1: shard over the whole data-parallel group.
  int dp_replicate = 1;
  bool sequence_parallel = false;
  bool tp_comm_overlap = false;  // overlap TP all-gather/reduce-scatter with the adjacent GEMMs (Megatron --tp-comm-overlap)
  // The embedding / the loss take a pipeline slot of their own, as a layer does (Megatron
  // --account-for-embedding-in-pipeline-split, --account-for-loss-in-pipeline-split).
  bool embedding_in_pipeline_split = false, loss_in_pipeline_split = false;
  PipelineSplitRule split_rule = PipelineSplitRule::UnevenEnds;  // the framework's (pipeline_split trait)
  int micro_batch_size = 1;
  int gradient_accumulation_steps = 1;
  Schedule schedule = Schedule::OneFOneB;
  std::string rank_order = "tp-cp-ep-dp-pp";

  // Products of degrees in 64 bits, saturating (degrees come from users: 2^20 x 2^20 x ... must not wrap).
  long long model_parallel() const { return saturating_product({tp, pp, cp}); }
  long long world() const { return saturating_product({tp, pp, cp, dp}); }
  // Expert data-parallel degree: the ranks that hold the same experts (Megatron-core MoE groups).
  int expert_dp() const { return static_cast<int>(world() / saturating_product({pp, ep, etp})); }
  // The ranks one ZeRO shard group spans (dense parameters, experts): the data-parallel group over the replicas.
  int zero_shard_ranks() const { return static_cast<int>(saturating_product({dp, cp}) / dp_replicate); }
  int expert_zero_shard_ranks() const { return expert_dp() / dp_replicate; }

  static long long saturating_product(std::initializer_list<long long> factors) {
    long long out = 1;
    for (long long f : factors)
      if (__builtin_mul_overflow(out, f, &out)) return std::numeric_limits<long long>::max();
    return out;
  }
};

// A published GEMM measurement of a GPU: the achieved rate at one shape, or (shape unknown) a fraction of the
// dense peak. The compute model takes its GEMM ceiling from it exactly as from a calibration profile's point.
struct PublishedGemm {
  Precision precision = Precision::Bf16;
  double m = 0, n = 0, k = 0;  // 0: shape not published
  double tflops = 0;           // achieved, 1e12 FLOP/s; 0 when only `efficiency` is known
  double efficiency = 0;       // achieved / dense peak, when no rate is published for this GPU
  std::string source;
};

struct GpuSpec {
  std::string name;
  std::string source;
  double memory_bytes = 0;
  double memory_bandwidth = 0;  // bytes/s, HBM/GDDR
  double flops_fp32 = 0, flops_tf32 = 0, flops_fp16 = 0, flops_bf16 = 0, flops_fp8 = 0;  // dense peak FLOP/s
  double tdp_watts = 0;
  double price_per_hour = 0;  // USD per GPU-hour (on-demand cloud list price; override in the scenario)
  // Who makes it: the device plugin, collectives library and software stack a launch file names (exports).
  std::string vendor = "nvidia";  // "nvidia" | "amd" | "huawei"
  std::string default_intra_node;
  std::string default_inter_node = "ib-ndr-400";  // the preset's usual inter-node fabric (gpus.json "inter_node")
  int default_gpus_per_node = 8;
  // The GPU's PCIe link to its host and to the NICs beside it (gpus.json "host_link": a pcie fabric preset): its
  // name and raw rate per direction; empty and 0 when not stated.
  std::string host_link;
  double host_link_rate = 0;
  // What the compute model knows beyond the datasheet (models/compute/compute.hpp, gpu_compute_traits), each from a
  // source in the preset: SM count and GEMM output tile (tile/wave quantization; 0 SMs = none), published
  // GEMM ceilings, the measured device-to-device copy bandwidth (0 = unknown: a mean fraction), and which
  // fused-attention efficiencies apply ("hopper-cudnn": measured on H100; empty: FlashAttention-2's, scaled).
  int sms = 0;
  int gemm_tile_m = 128, gemm_tile_n = 128;
  std::vector<PublishedGemm> gemm_published;
  double hbm_copy_bandwidth = 0;
  std::string fused_attention;

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

// How nodes are wired (read by the iteration simulator, sim/iteration/fabric.hpp; the analytic model gives every
// collective its group's bandwidth). fat-tree: nodes under leaf switches, leaves under one spine layer
// (levels 2) or pods of nodes_per_leaf leaves under a core layer (levels 3, the k-ary fat-tree of Al-Fares
// et al. SIGCOMM 2008), each leaf's uplinks carrying 1/oversubscription of its downlinks. rail: GPU i of
// every node on rail switch i (NVIDIA DGX SuperPOD), rails joined by a spine. single-switch: one
// non-blocking switch.
enum class NetworkTopology { FatTree, Rail, SingleSwitch };
struct NetworkSpec {
  NetworkTopology topology = NetworkTopology::FatTree;
  int nodes_per_leaf = 32;        // DGX SuperPOD scalable unit: 32 nodes per leaf group
  double oversubscription = 1;    // leaf downlink / uplink bandwidth, >= 1
  int levels = 2;
};
const char* to_string(NetworkTopology t);  // "fat-tree", "rail", "single-switch"

struct HardwareSpec {
  GpuSpec gpu;
  NetworkSpec network;
  int gpus_per_node = 8;
  int num_nodes = 1;
  int num_gpus = 8;  // GPUs the job uses: whole nodes, or part of one node
  FabricSpec intra_node;
  FabricSpec inter_node;
  int nics_per_node = 8;
  double host_memory_bytes = 0;  // per node; 0 = not given
  double price_per_gpu_hour = 0; // USD; defaults to the GPU preset's price; 0 = unknown (never a price of zero)
  bool has_price() const { return price_per_gpu_hour > 0; }

};

// A resolved default: which field was filled in, with what, and why. Printed with every result.
struct AppliedDefault {
  std::string path;
  std::string value;
  std::string reason;
};

// The scenario's "data" section: where the training data is read from and what a DataLoader worker does to each
// sample, to check that the feed keeps up with the GPUs (data_feed.hpp).
enum class DataFormat { Tokens, Text };
struct DataFeedSpec {
  bool given = false;            // the scenario has a "data" section
  StorageChoice storage;         // where the dataset is read from (its share of the tier, shared_bandwidth)
  DataFormat format = DataFormat::Tokens;  // pre-tokenized (memory-mapped ids) or raw text tokenized on the fly
  double bytes_per_token = 0;    // 0: the format's (ids: 2 or 4 by vocabulary; text: 4 UTF-8 bytes)
  double bytes_per_sample = 0;   // > 0: bytes read per sequence (images, audio, compressed shards), instead
  double cpu_per_sample_s = 0;   // > 0: a worker's CPU time per sequence (decode, transforms), instead of tokenizing
  double tokenize_tokens_per_s = 1e6;  // text: one worker's tokenizer rate
  int workers_per_gpu = 2;       // DataLoader workers per GPU (Megatron --num-workers)
};

struct Scenario {
  ModelSpec model;
  TrainingSpec training;
  ParallelLayout parallel;
  HardwareSpec hardware;
  DataFeedSpec data;
  std::vector<AppliedDefault> defaults;
  std::vector<std::string> notes;  // e.g. ignored Hugging Face config keys
};

const char* to_string(TrainingMode m);
const char* to_string(Precision p);
const char* to_string(Recompute r);
const char* to_string(OffloadDevice d);
const char* to_string(Schedule s);
const char* to_string(PositionEmbedding p);
const char* to_string(NormKind n);
double bytes_per_element(Precision p);
// The 16-bit dtype fp8 training keeps beside its fp8 GEMMs (Transformer Engine): the parameters, their gradients, and
// the GEMMs that stay in 16 bits (attention, the LM head, routers); any other precision is its own.
inline Precision high_precision(Precision p) { return p == Precision::Fp8 ? Precision::Bf16 : p; }
// QLoRA stores frozen linear weights as 4-bit NF4 with double-quantized constants: 4 + 0.127 bits per parameter
// (Dettmers et al. 2023, §3 "Double Quantization").
constexpr double kNf4BytesPerParam = (4.0 + 0.127) / 8.0;
// PEFT keeps LoRA adapters in fp32 under autocast: weights, gradients, then two Adam moments.
constexpr double kAdapterWeightBytes = 4.0, kAdapterGradBytes = 4.0, kAdapterOptimizerBytes = 8.0;
// The optimizer's own bytes per trainable parameter: the master copy (none when training in fp32) and the states
// (Adam: two moments in moment_precision; SGD: one momentum; 8-bit Adam: two 1-byte moments, Dettmers et al. 2022).
struct OptimizerStateBytes {
  double master = 0, states = 0;
  double total() const { return master + states; }
};
OptimizerStateBytes optimizer_state_bytes(const TrainingSpec& t);
// PCIe link between a GPU and its host, one direction, as achievable copy bandwidth: the stated link's raw rate
// times kPcieCopyEfficiency; a GPU that states none is taken to sit on Gen5 x16 if it has fp8 and more than
// 3 TB/s of memory bandwidth (Hopper and later), else on Gen4 x16.
double host_link_bandwidth(const GpuSpec& g);
// Pinned host <-> device copies reach about 26 of PCIe 4.0 x16's 31.5 GB/s and 53 of 5.0 x16's 63 (NVIDIA's
// bandwidthTest / nvbandwidth on A100 and H100 hosts): 0.83 of the raw rate, the rest TLP headers and flow control.
inline constexpr double kPcieCopyEfficiency = 0.83;
// A NIC moves at most what its PCIe slot carries: GPUDirect RDMA runs GPU -> PCIe switch -> NIC, both links of
// the platform's generation (the GPU's). The fabric's line rate, capped by the GPU's stated host link.
double nic_line_rate(const HardwareSpec& h);
// Stored activations: the training dtype's size, 16-bit under fp8 (norms, attention and activation functions
// run in bf16 there).
double activation_bytes(Precision p);
// Inputs a linear layer keeps for its weight-gradient GEMM: the GEMM's operand dtype (1 byte under fp8).
double saved_gemm_input_bytes(Precision p);

}  // namespace trainsim
