#pragma once
// A training framework as the step model sees it: the traits that make one layout run at different speeds
// in Megatron-Core, DeepSpeed, FSDP, ... Each preset is one file under presets/frameworks/ (compiled in),
// every trait with its unit in its name and its upstream source. A scenario names a preset in
// training.framework, optionally with trait overrides; when it names none, the layout implies one
// (implied_framework_name).
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace trainsim {

struct TrainingSpec;    // spec.hpp
struct ParallelLayout;  // spec.hpp
enum class Precision;  // spec.hpp
// How a framework spreads layers over (virtual) pipeline stages when they do not divide evenly (transformer.hpp):
// Megatron keeps the middle stages equal and gives the first and last the remainder; torchtitan gives every stage
// n / stages and one extra layer to each of the first middle stages.
enum class PipelineSplitRule { UnevenEnds, ExtraToMiddle, ExtraToFirst };
const char* to_string(PipelineSplitRule r);           // "uneven-ends", "extra-to-middle", "extra-to-first"
PipelineSplitRule pipeline_split_rule(const std::string& name);  // one of those names (else UnevenEnds)

// How ZeRO-3 all-gathers parameters: one call per transformer layer (FSDP units) or in buckets of
// param_gather_bucket_elements (DeepSpeed's prefetch bucket).
enum class GatherUnit { Layer, Bucket };
enum class AttentionKernel { Fused, Flash2 };
// What training.recompute "selective" means in the framework (recompute_policy.hpp).
enum class SelectiveRecompute { AttentionCore, EveryOtherMatmul };
// How an MoE layer sends tokens to their experts (moe_dispatch.hpp): a copy per routed expert, or DeepEP's one
// copy per destination node and GPU.
enum class MoeDispatcher { AllToAll, DeepEp };

struct FrameworkTraits {
  std::string name;  // preset name; empty in TrainingSpec = not named (the layout implies one)
  std::string description;
  // The release the scenario names (training.framework.version); empty: the preset's, its current release. A preset
  // file's "versions" table lists the traits of older releases ({"below": "5.0", "traits": {...}}).
  std::string version;
  // Named options the scenario chose (training.framework {"experts_implementation": "eager"}): each value of a
  // preset file's "options" table sets traits of its own, over the release's and under the scenario's explicit ones.
  std::vector<std::pair<std::string, std::string>> options;
  // Collective granularity. ZeRO 0-2 reduce gradients (and gather a sharded optimizer's parameters) in
  // buckets of max(grad_bucket_elements, grad_bucket_elements_per_dp_rank x dp) elements; ZeRO-3 reduce-
  // scatters per layer (GatherUnit::Layer) or in grad_bucket_elements buckets filled across layers.
  double grad_bucket_elements = 0;
  double grad_bucket_elements_per_dp_rank = 0;
  GatherUnit param_gather_unit = GatherUnit::Layer;
  double param_gather_bucket_elements = 0;  // GatherUnit::Bucket only
  // Buckets sized by the model instead (transformers fills DeepSpeed's "auto" sizes from hidden_size): when
  // above 0, the bucket is this many x hidden_size² elements and replaces the fixed count above.
  double grad_bucket_hidden_squared = 0, param_gather_bucket_hidden_squared = 0;
  // What overlaps what. overlap_grad_reduce: the ZeRO 0-2 gradient reduce with the last backward.
  // overlap_param_gather: ZeRO-3's per-layer gathers and reduce-scatters with the layers' compute (prefetch on
  // side streams), and, together with overlap_grad_reduce, a sharded optimizer's parameter all-gather with
  // the next forward (Megatron's --overlap-param-gather needs --overlap-grad-reduce; DeepSpeed's overlap_comm
  // governs both).
  bool overlap_grad_reduce = true;
  bool overlap_param_gather = true;
  bool tp_comm_overlap_available = false;  // parallel.tp_comm_overlap takes effect only where true
  // Host: CPU time per kernel of eager PyTorch module code, in the forward (Python module calls, dispatch and
  // autograd recording) and in the backward (the autograd engine); CUDA graphs replay the step without either.
  double kernel_launch_gap_us = 0;
  double backward_launch_gap_us = 0;
  bool cuda_graphs = false;
  // ZeRO-3 fetched per module from Python hooks (DeepSpeed): host time per parameter-holding module and pass
  // (the pre-forward and pre-backward hooks that issue its gather, the release and the gradient's reduce),
  // beside the kernels. 0 where a unit is a whole layer (FSDP): one hook per layer is lost in the launches.
  double zero3_module_fetch_us = 0;
  // Kernels: MoE experts as one grouped GEMM (vs a loop of per-expert GEMMs); fused norm / RoPE / gated
  // activation (vs the eager op sequence of the reference modeling code, layer_walk.cpp).
  bool moe_grouped_gemm = true;
  // How grouped experts reach the GPU: 0, one grouped kernel whose tiles share the waves (torch._grouped_mm, CUTLASS
  // grouped GEMM); n > 0, one cuBLAS GEMM call per local expert from C++, round-robin over n CUDA streams
  // (Transformer Engine's GroupedLinear: 4; the grouped_gemm package's default cuBLAS mode: 1), each call its own
  // launch on the host and its own tiles, sharing the SMs only with the n - 1 beside it. Only where moe_grouped_gemm.
  int moe_gemm_streams = 0;
  bool fused_norm = true, fused_rope = true, fused_activation = true;
  // Cross-entropy over the logits as one fused kernel (vs logits.float() + log_softmax + nll, compute.cpp edge_compute).
  bool fused_cross_entropy = true;
  // What a fused loss keeps for its backward: an fp32 softmax of the logits' shape (Megatron's
  // vocab_parallel_cross_entropy saves exp_logits and writes the gradient over it), or only a per-token
  // log-sum-exp, the gradient then written beside the 16-bit logits (flash-attn's CrossEntropyLoss, Inductor's
  // fusion of logits.float() + log_softmax + nll under torch.compile).
  bool cross_entropy_keeps_softmax = true;
  // Fused attention kernel on Hopper: cuDNN / FlashAttention-3 class (Transformer Engine, PyTorch SDPA with
  // cuDNN) or FlashAttention-2 (the flash-attn package, SDPA's flash backend), about half as fast there
  // (compute.cpp). Other GPUs run FlashAttention-2-class kernels either way.
  AttentionKernel attention_kernel = AttentionKernel::Fused;
  // "selective" recomputation: Megatron's attention core (Korthikanti et al. 2022), or torchtitan's per-op
  // policy that saves every other matmul's output and recomputes the rest of the block.
  SelectiveRecompute selective_recompute = SelectiveRecompute::AttentionCore;
  // ZeRO-2/3 (sharded gradients and weights) together with pipeline parallelism: FSDP2 shards each pipeline
  // stage's module (torchtitan), DeepSpeed's pipeline engine and Megatron allow ZeRO-1 / the distributed
  // optimizer only (layout_check refuses the rest).
  bool shards_with_pipeline = false;
  // Sharded weights under pipeline parallelism stay gathered from a stage's first forward to its last backward,
  // and its gradients accumulate unsharded in fp32 until then (torchtitan: reshard_after_forward=False with pp,
  // the pipelining stage's no-sync backward): one gather and one reduce-scatter per step instead of per
  // micro-batch, for the memory of the whole stage's unsharded weights and fp32 gradients.
  bool pipeline_keeps_unsharded = false;
  // Under ZeRO (stage >= 1) with 16-bit training, gradients are accumulated, reduced and partitioned in the training
  // dtype (DeepSpeed's grad_accum_dtype defaults to the model dtype when ZeRO is on); fp32 main gradients otherwise
  // (Megatron's main_grad, FSDP's fp32 sharded parameters and reduce_dtype). The scenario's grad_precision wins.
  bool zero_grads_in_training_dtype = false;
  // Under ZeRO-3 the sharded parameters are the fp32 master copy itself, cast to 16 bits only for the all-gather
  // (FSDP mixed precision keeps the parameters' own dtype): no resident 16-bit shard beside the optimizer's fp32
  // copy. DeepSpeed and Megatron keep both.
  bool fp32_sharded_parameters = false;
  // Under ZeRO-3 the root unit -- the parameters outside the per-layer units: embeddings, final norm, LM head -- is
  // not resharded after the forward and stays gathered through the backward (FSDP's root heuristic: its parameters
  // would be all-gathered again at once for the backward).
  bool root_unit_stays_gathered = false;
  // Under ZeRO-3 the linear layers save the weight itself for backward (DeepSpeed's LinearFunctionForZeroStage3,
  // swapped in for torch's linear by deepspeed.zero.Init; Megatron's own linear autograd functions; FSDP frees a
  // gather by resizing its storage, which no saved tensor keeps). false: torch's linear saves the weight's transpose,
  // a view that keeps a released DeepSpeed gather alive (the release only swaps the parameter's .data) until that
  // layer's backward, so every layer whose activations are kept holds its gathered 16-bit weights.
  bool memory_efficient_linear = true;
  // Tensor parallelism by DTensor parallel styles (torch.distributed.tensor.parallel, torchtitan) rather than
  // Megatron's layers. Under sequence parallelism a column-parallel linear's autograd then keeps the all-gathered
  // input (Megatron keeps the sequence shard and gathers it again in backward, Korthikanti et al. §4.2.2), and the
  // vocab-parallel loss (loss_parallel) runs log_softmax and nll as torch ops: up to four fp32 tensors of the
  // logits' shape at once in its backward (log-probabilities, zeros_like, exp, their sum) where aten's kernels hold three.
  bool dtensor_tensor_parallel = false;
  // Parallel dimensions the framework runs; layout_check refuses a layout with tp, pp, cp or ep (etp) above 1
  // where the framework has none (HF Trainer is data parallel only; its modeling code keeps every expert on
  // every rank).
  bool tp_available = true, pp_available = true, cp_available = true, ep_available = true;
  // Where a MoE scenario does not give parallel.etp, the experts are tensor-split like the dense layers (Megatron-LM
  // arguments.py: an unset --expert-tensor-parallel-size becomes --tensor-model-parallel-size); false: not split (1).
  bool etp_follows_tp = false;
  // Several pipeline stages per rank (the interleaved schedule, parallel.vpp > 1): Megatron-Core and torchtitan; DeepSpeed's
  // pipeline engine runs one stage per rank.
  bool vpp_available = true;
  // The per-expert loop reads the routing result on the host once per expert (torch.where on the routing mask
  // has a data-dependent size), so the host cannot launch ahead across experts: each expert's forward kernels
  // run at the pace of their launches (layer_walk.cpp). Only where moe_grouped_gemm is false.
  bool moe_loop_host_sync = false;
  MoeDispatcher moe_dispatcher = MoeDispatcher::AllToAll;
  // How layers fall on pipeline stages when they do not divide evenly (spec.hpp PipelineSplitRule; scenario parsing
  // copies it into the layout).
  PipelineSplitRule pipeline_split = PipelineSplitRule::UnevenEnds;
  // Once per step, outside the layers (step.cpp, step_bookkeeping_s): the gradient norm is computed over the local
  // gradients (clip_grad_norm: one read pass) and the gradients are multiplied by the clip coefficient every step
  // (clip_scales_always: a read and a write pass; Megatron scales only when the norm exceeds the threshold), and a
  // contiguous gradient buffer is zeroed before the next step (zero_grad_memset: a write pass; set_to_none frees).
  bool clip_grad_norm = false;
  bool clip_scales_always = false;
  bool zero_grad_memset = false;
  // fp16's dynamic loss scaling, once per step before the optimizer: passes over the local gradients (the optimizer's
  // share) to find inf/nan and unscale them: 2 where one kernel checks and unscales in place (a read and a write:
  // torch._amp_foreach_non_finite_check_and_unscale_, under Megatron's MixedPrecisionOptimizer and torch's GradScaler),
  // 1 where the check only reads and the unscale rides on the clipping's scale (DeepSpeed). bf16 needs no loss scale.
  double loss_scale_grad_passes = 0;
  // Gradient accumulation through autograd (a plain loop, HF Trainer, DDP's no_sync): from the second micro-batch of a
  // step each trainable parameter's new gradient is added into its .grad (torch/csrc/autograd/functions/
  // accumulate_grad.h: variable_grad += new_grad; the first micro-batch's gradient is stolen, not copied): one kernel
  // per parameter tensor reading two gradients and writing one, below ZeRO (autograd_accumulation_share).
  bool autograd_grad_accumulation = false;
  // ZeRO-2 reduces each micro-batch's gradients as its backward produces them and accumulates the reduced partition
  // (DeepSpeed stage_1_and_2.py reduce_ready_partitions_and_remove_grads: "if self.partition_gradients or
  // self.is_gradient_accumulation_boundary"), so a step of m micro-batches pays m gradient reductions, not one; ZeRO-1
  // reduces at the accumulation boundary only.
  bool zero2_reduce_per_micro_batch = false;
  // Parameters kept in fp32 and cast to the training precision at each use by torch.autocast (a plain loop, HF
  // Trainer with bf16=True over fp32 weights), below ZeRO-3: each trained linear's weight is cast in every forward
  // (read 4, write 2 bytes) and its gradient cast back in backward (read 2, write 4); the 16-bit copies live only
  // while autograd holds them for the layer's backward. false: persistent 16-bit weights beside an fp32 master
  // (Megatron, DeepSpeed) or sharded casts at the gather (FSDP).
  bool autocast_fp32_weights = false;
  // The modeling code's q, k and v projections, and the gated MLP's gate and up projections, are separate Linear
  // modules (transformers' LlamaAttention q_proj/k_proj/v_proj and LlamaMLP gate_proj/up_proj, torchtitan's wq/wk/wv
  // and w1/w3): one GEMM each, and under autocast one weight cast and one input cast each, instead of one fused GEMM.
  bool separate_projections = false;
  // MoE experts' GEMMs run in the parameters' dtype, outside autocast: transformers 5.x grouped_mm casts the tokens
  // to the expert weights' dtype (torch's grouped_mm is not autocast-enabled), so fp32 parameters under autocast
  // (autocast_fp32_weights) run the experts as fp32 GEMMs on the CUDA cores (FFMA), not as 16-bit tensor-core GEMMs.
  bool moe_experts_in_weight_dtype = false;
  // A per-expert loop (moe_grouped_gemm false) indexes one 3-D parameter holding every expert's weights
  // (transformers 5.x eager experts: F.linear(x, self.gate_up_proj[expert])), so autograd's select backward gives
  // each expert a gradient of the whole parameter, zero-filled and accumulated into the parameter's gradient: four
  // passes over it per expert in the gradient's dtype (measured on an H100: 13-15 bytes per element per expert in
  // fp32, 6-8 in bf16; calibrate/measurements/corpus/indexed_expert_grad.py).
  bool moe_expert_weights_indexed = false;
  // The router's probabilities scale the experts' activation (act(fc1 output) x prob before fc2: Megatron-Core's
  // GroupedMLP / TEGroupedMLP activation_func_with_probs), so the combine sums unweighted outputs and the
  // probabilities' gradient comes from the activation's backward: the experts' outputs are not kept for the backward.
  // False: the combine weights each expert's output (transformers' modeling code, DeepSpeed-MoE, MegaBlocks), which
  // the probabilities' gradient needs, so every routed token's output is kept (h elements per routed token).
  bool moe_probs_in_activation = false;
  // Under fp8 training the routed experts' activation (SwiGLU) inputs are cached in fp8 with fine-grained scales (one
  // fp32 scale per 1x128 tile) for the activation's backward, not in 16 bits (DeepSeek-V3 report §3.3.2,
  // "Low-Precision Storage"). None of the presets' stacks does it: a scenario turns it on for DeepSeek's own.
  bool moe_act_input_fp8 = false;
  // LoRA over MoE experts held as 3-D parameters (transformers 5.x) is peft's ParamWrapper: each forward materializes
  // every local expert's W + s·B·A (kept by the experts' GEMMs for their backward), the backward computes the gradient
  // of the whole merged weight (the weight-gradient GEMMs of full training) and reduces it into B and A. Its memory
  // passes over the expert weights per step, in their dtype, beyond the GEMMs; 0: adapters on the tokens, a small
  // A·B pair per expert Linear (peft over nn.Linear experts, Megatron's and ms-swift's LoRA).
  double moe_expert_adapter_merge_passes = 0;
  // Kernels of the token dispatch and combine around grouped experts, per MoE layer and pass, beside the router's
  // softmax and top-k and the experts themselves: Megatron-Core's fused permute and unpermute (2 and 2); transformers
  // 5.x's grouped_mm_experts_forward runs them as eager ops (the sort, gathers, offsets, masks, weighting and combine,
  // and their backward). Only where moe_grouped_gemm: a per-expert loop's routing is counted per expert.
  double moe_dispatch_kernels_forward = 2, moe_dispatch_kernels_backward = 2;
  // The dispatch sorts the routed rows with torch.sort, whose kernels depend on their number: ATen sorts up to 4,096
  // rows in place in one kernel, which moe_dispatch_kernels_forward counts, and more with cub's radix sort, 9 kernels
  // more (compute_detail.hpp, kLargeSortExtraKernels).
  bool moe_dispatch_sorts = false;
  // Full recompute runs through torch.utils.checkpoint without reentrance (transformers' gradient checkpointing,
  // torchtitan's checkpoint_wrapper): saved-tensor hooks in Python around every saved tensor, host time the fitted
  // checkpoint_hook_us prices. false: an autograd Function that saves the layer's inputs only (Megatron's
  // CheckpointFunction, reentrant checkpointing).
  bool checkpoint_saved_tensor_hooks = false;
  // Full recompute stops after the layer's last saved tensor: torch.utils.checkpoint without reentrance around an eager
  // layer (its early stop, PyTorch 2.1 and later), or a compiled checkpointed block whose backward graph keeps only
  // what the gradients need; the down projection's GEMM and the residual add are not rerun (layer_walk.cpp). Read only
  // with checkpoint_saved_tensor_hooks: reentrant checkpointing never stops early. false: the whole forward reruns
  // (Megatron's CheckpointFunction, a layer compiled before the checkpoint wraps it, whose saves come after its whole
  // forward: torchtune compiles, then checkpoints).
  bool checkpoint_early_stop = false;
  // The pipeline engine sends and receives each activation and gradient in its own blocking call: four
  // transfers a micro-batch and model chunk stand between a stage's compute (DeepSpeed's PipelineEngine:
  // SendActivation, RecvActivation, SendGrad, RecvGrad, deepspeed/runtime/pipe/p2p.py refusing async_op). false: a
  // stage's send and its receive go out together in one batched call, two a micro-batch (Megatron's
  // send_forward_recv_backward / send_backward_recv_forward, torch.distributed.pipelining's batched p2p).
  bool pipeline_p2p_blocking = false;
  // Without sequence parallelism each TP rank sends only its 1/tp of a stage boundary's activation (and gradient) and
  // the receiving stage all-gathers it over its TP group (NVLink): Megatron-LM's scatter/gather optimization (Narayanan
  // et al. SC'21 4.1; scatter_gather_tensors_in_pipeline, on from 2021-02 until p2p moved into megatron/core in
  // 2023-01), DeepSpeed's pipeline engine's pipe_partitioned / grad_partitioned. false: every TP rank sends the whole.
  bool pipeline_p2p_scatter_gather = false;
  // The optimizer step on the GPU: one fused pass over each parameter's state (apex's and Transformer Engine's
  // FusedAdam, DeepSpeed's, torch.optim's fused=True), or torch.optim's foreach path (its default on CUDA without
  // fused=True), which launches few kernels but makes one pass over the states per elementwise op, as does a Python
  // loop of single-tensor ops over few large tensors. Priced in step_stream.cpp, optimizer_pass_bytes.
  bool optimizer_foreach = false;
  // An offloaded optimizer steps on the host in one fused pass per parameter (DeepSpeed's CPUAdam, torch's fused CPU
  // kernels), or as torch.optim's single-tensor loop, one pass over host memory per elementwise op (torch.optim runs
  // that on CPU tensors unless fused is asked for: foreach is CUDA-only). Priced in step_stream.cpp,
  // optimizer_pass_bytes.
  bool host_optimizer_fused = true;
  // The weight-gradient GEMM accumulates into the gradient buffer itself (Megatron's gradient_accumulation_fusion:
  // apex's wgrad_gemm_accum_fp32, Transformer Engine's fuse_wgrad_accumulation into main_grad), so it reads and
  // writes its output in the gradient's dtype, 8 bytes per weight element in fp32, where an unfused GEMM writes it once
  // in the training dtype: a GEMM over few tokens (an expert at a few hundred) is then bound by that traffic. Megatron
  // refuses it with Megatron-FSDP's sharded gradients (zero_stage >= 2; megatron/training/arguments.py).
  bool wgrad_accumulation_fusion = false;
  // DPO's frozen reference model is built as a training model, with a data-parallel wrapper's gradient buffer of its
  // own (gradient precision, one element per parameter) that no backward ever fills: ms-swift's Megatron DPO before
  // #6027 (2025-09-30), whose get_model() wrapped the reference in Megatron's DDP. false: the reference holds weights only.
  bool reference_model_gradient_buffer = false;
  // An offloaded optimizer keeps the fp32 master copy of its parameters on the GPU and steps host copies of it:
  // Megatron builds the fp32 main-parameter shards on the GPU (distrib_optimizer.py, shard_model_param.clone().float();
  // the non-distributed Float16OptimizerWithFloat16Params likewise) and hands them to HybridDeviceOptimizer, which steps
  // pinned host copies with the moments and a pinned fp32 gradient copy and copies each result back into the GPU's
  // master (cpu_offloading/hybrid_optimizer.py, core_v0.12 to main). So the GPU keeps the master's bytes, the host
  // holds master, moments and gradient, and the master (not the 16-bit weight) crosses PCIe upward. Not under
  // --use-precision-aware-optimizer (offload_master_on_device): the optimizer then makes the master from its host
  // copy of the 16-bit shard. false: the master lives on the host only (DeepSpeed's ZeRO-Offload, FSDP's CPU offload;
  // a launch that asks for the precision-aware optimizer, as ms-swift's offloading scripts do).
  bool offload_keeps_device_master = false;

  std::vector<std::string> overridden;  // trait keys the scenario set (for the resolved scenario JSON)

  double launch_gap_s() const { return cuda_graphs ? 0.0 : kernel_launch_gap_us * 1e-6; }
  double backward_launch_gap_s() const { return cuda_graphs ? 0.0 : backward_launch_gap_us * 1e-6; }
  double grad_bucket(double hidden_size) const {
    return grad_bucket_hidden_squared > 0 ? grad_bucket_hidden_squared * hidden_size * hidden_size : grad_bucket_elements;
  }
  double param_gather_bucket(double hidden_size) const {
    return param_gather_bucket_hidden_squared > 0 ? param_gather_bucket_hidden_squared * hidden_size * hidden_size : param_gather_bucket_elements;
  }
};

std::vector<std::string> framework_names();       // registered presets, in name order
const FrameworkTraits* find_framework(const std::string& name);  // nullptr when unknown
const nlohmann::json& framework_preset_json(const std::string& name);  // the preset file (traits with sources)

// training.framework: a preset name or {"preset": NAME, "version": "4.57", <trait>: value, ...}. Unknown names and traits, wrong
// types and values out of range are InputErrors naming `path`.
FrameworkTraits parse_framework(const nlohmann::json& value, const std::string& path);
// The scenario form of named traits: the name, or {"preset": NAME, overrides...}.
nlohmann::json framework_to_json(const FrameworkTraits& f);

// Whether the scenario's LoRA adapts MoE experts through merged 3-D weights (moe_expert_adapter_merge_passes > 0 and an
// MLP module among the adapters' targets): the compute model prices the merge, the memory model the merged weights.
bool merges_expert_adapters(const FrameworkTraits& fw, const TrainingSpec& t);

// Whether autocast casts the trained weights per use (autocast_fp32_weights): not under ZeRO-3, whose gathers cast
// the shards, nor in fp32 training, nor over 16-bit parameters without a master copy (nothing to cast). The compute
// model prices the casts, the memory model the 16-bit copies.
bool autocast_casts_weights(const FrameworkTraits& fw, const TrainingSpec& t);

// The gradient buffer the optimizer reads and the data-parallel reduce moves: fp32 in fp32 training, else the
// scenario's training.grad_precision when given, else the framework's (zero_grads_in_training_dtype).
Precision gradient_precision(const TrainingSpec& t, const ParallelLayout& p);

// HBM bytes per output element of a weight-gradient GEMM that accumulates into the gradient buffer
// (wgrad_accumulation_fusion): read and written in the gradient's dtype, 8 in fp32; 0 where it does not (the trait
// off, or zero_stage >= 2, whose sharded gradients Megatron refuses to fuse into): the GEMM writes its output once.
double wgrad_accumulation_bytes(const TrainingSpec& t, const ParallelLayout& p);

// The share of a step's micro-batches whose gradients autograd adds into .grad (autograd_grad_accumulation): the
// micro-batches after the first, (m - 1) / m of them on average per micro-batch; 0 with one micro-batch a step, under
// ZeRO (sharded gradients accumulate in the framework's own buffers) or where the framework accumulates otherwise.
double autograd_accumulation_share(const TrainingSpec& t, const ParallelLayout& p);

// Whether an offloaded optimizer leaves its fp32 master on the GPU (offload_keeps_device_master): with
// offload_optimizer, and without Megatron's precision-aware optimizer (training.precision_aware_optimizer, or
// non-fp32 moments or master), under which HybridDeviceOptimizer makes the fp32 master from its host copy.
bool offload_master_on_device(const TrainingSpec& t, const ParallelLayout& p);

// The framework a layout implies when the scenario names none: tp/pp/ep > 1 -> megatron-core;
// ZeRO-3 at tp = pp = ep = 1 (any cp) -> fsdp2; otherwise megatron-core.
const char* implied_framework_name(const TrainingSpec& t, const ParallelLayout& p);
extern const char* const kImpliedFrameworkRule;
// The traits the step model uses for this layout: the scenario's, else the implied preset's.
const FrameworkTraits& framework_for(const TrainingSpec& t, const ParallelLayout& p);
// {"name": ..., "source": "scenario" | "implied"} for results.
nlohmann::json framework_result_json(const TrainingSpec& t, const ParallelLayout& p);

}  // namespace trainsim
