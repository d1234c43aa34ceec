#include "models/rlhf/rlhf_step.hpp"

#include <algorithm>
#include <cmath>

#include "models/compute/transformer.hpp"
#include "models/core/errors.hpp"
#include "models/core/units.hpp"
#include "models/memory/memory.hpp"
#include "models/scenario/scenario.hpp"

namespace trainsim {
namespace {

// A forward pass is a third of a forward + backward over the same tokens (SC'21 §5.1); per token of the update.
double forward_s_per_token(const StepEstimate& e, const TrainingSpec& t) {
  const StepBreakdown& b = e.breakdown;
  const double pass = b.compute_s + b.host_s + b.tp_comm_s + b.cp_comm_s + b.ep_comm_s + b.pp_comm_s + b.bubble_s;
  return pass / 3.0 / (static_cast<double>(t.global_batch_size) * t.seq_len);
}

// A reward or critic model at the actor's layout: its step and its memory.
struct SideModel {
  StepEstimate step;
  StageMemory memory;
};
SideModel side_model(const ModelSpec& m, const Scenario& s, const char* key, const CalibrationProfile* calibration) {
  try {
    validate_layout(m, s.training, s.parallel, s.hardware);
  } catch (const InputError& e) {
    throw InputError(std::string("/training/rlhf/") + key, m.name, "a model the actor's layout can run", e.what());
  }
  SideModel out;
  out.step = StepModel(m, s.training, s.hardware, calibration).estimate(s.parallel);
  out.memory = MemoryModel(m, s.training, s.hardware).estimate(s.parallel).worst;
  return out;
}

}  // namespace

RlhfStepEstimate estimate_rlhf_step(const Scenario& s, const CalibrationProfile* calibration) {
  const RlhfSpec& rl = s.training.rl;
  const HardwareSpec& hw = s.hardware;
  RlhfStepEstimate r;
  r.colocated = rl.placement == RolloutPlacement::Colocated;
  r.training_gpus = hw.num_gpus;
  r.rollout_gpus = r.colocated ? hw.num_gpus : rl.rollout_gpus;
  r.samples = rl.samples_per_step();
  r.tokens = static_cast<double>(r.samples) * rl.mean_sample_tokens();

  // Rollout: engines of rollout_tp GPUs over the pool.
  int tp = rl.rollout_tp;
  if (tp == 0) {
    tp = smallest_rollout_tp(s.model, rl, hw.gpu, hw.gpus_per_node, r.rollout_gpus);
    if (tp == 0)
      throw InputError("/training/rlhf/rollout_tp", "left out",
                       "an engine size that holds the 16-bit weights and one sequence of prompt_len + max_response_len tokens",
                       "no power of two up to gpus_per_node (" + std::to_string(hw.gpus_per_node) + ") dividing " +
                           std::to_string(r.rollout_gpus) + " GPUs does at gpu_memory_utilization " + format_number(rl.gpu_memory_utilization, 2));
  } else if (r.rollout_gpus % tp || s.model.num_attention_heads % tp) {
    throw InputError("/training/rlhf/rollout_tp", std::to_string(tp),
                     "a divisor of the rollout GPUs (" + std::to_string(r.rollout_gpus) + ") and of the attention heads (" +
                         std::to_string(s.model.num_attention_heads) + ")");
  }
  const GpuComputeTraits traits = gpu_compute_traits(hw.gpu);
  const CommModel comm = make_comm_model(hw);
  r.rollout = estimate_rollout(s.model, rl, hw.gpu, traits, comm, tp, r.rollout_gpus / tp);

  // The actor: one update, its forward share and its memory.
  const StepEstimate actor = StepModel(s.model, s.training, hw, calibration).estimate(s.parallel);
  const MemoryEstimate actor_memory = MemoryModel(s.model, s.training, hw).estimate(s.parallel);
  const double per_token = forward_s_per_token(actor, s.training);
  r.updates = static_cast<int>((r.samples + rl.samples_per_update - 1) / rl.samples_per_update) * rl.update_epochs;
  r.logprobs_s = per_token * r.tokens;
  if (rl.kl_reference) r.reference_s = r.logprobs_s;
  r.actor_update_s = r.updates * actor.time_s;
  r.actor_bytes = actor_memory.worst.total;
  r.reference_bytes = rl.kl_reference ? actor_memory.worst.weights : 0;
  if (rl.reward_model) {
    const SideModel reward = side_model(*rl.reward_model, s, "reward_model", calibration);
    r.reward_s = forward_s_per_token(reward.step, s.training) * r.tokens;
    r.reward_bytes = reward.memory.weights;
  }
  if (s.training.mode == TrainingMode::Ppo) {
    const ModelSpec& critic_model = rl.critic_model ? *rl.critic_model : rl.reward_model ? *rl.reward_model : s.model;
    const SideModel critic = side_model(critic_model, s, rl.critic_model ? "critic_model" : "reward_model", calibration);
    r.values_s = forward_s_per_token(critic.step, s.training) * r.tokens;
    r.critic_update_s = r.updates * critic.step.time_s;
    r.critic_bytes = critic.memory.total - critic.memory.other;  // one CUDA context and NCCL per GPU: the actor's
  }
  r.scoring_s = r.logprobs_s + r.reference_s + r.reward_s + r.values_s;
  r.training_s = r.actor_update_s + r.critic_update_s;

  // Sync: the engines' 16-bit weights from the trainer.
  const double model_bytes = 2.0 * count_parameters(s.model).total;
  if (r.colocated) {
    r.sync_s = comm.intra_bandwidth > 0 ? model_bytes / tp / comm.intra_bandwidth : memory_bound_time(hw.gpu, traits, model_bytes / tp);
  } else {
    const double per_gpu_network = comm.nic_bandwidth * comm.nics_per_node / std::max(1, comm.gpus_per_node);
    r.sync_s = model_bytes / per_gpu_network + comm.inter_latency_s;
  }
  r.step_s = r.rollout.time_s + r.scoring_s + r.training_s + r.sync_s;
  r.samples_per_s = r.step_s > 0 ? static_cast<double>(r.samples) / r.step_s : 0;
  r.tokens_per_s = r.step_s > 0 ? r.tokens / r.step_s : 0;

  // Memory per GPU by phase.
  r.capacity_bytes = actor_memory.capacity;
  // Colocated, a model sleeps in host memory while another runs (OpenRLHF --deepspeed_enable_sleep, verl's offload,
  // NeMo RL's offload before refit): the phase holds the largest; separate, the training pool holds them all at once.
  r.training_phase_bytes = r.colocated ? std::max({r.actor_bytes, r.reference_bytes, r.reward_bytes, r.critic_bytes})
                                       : r.actor_bytes + r.reference_bytes + r.reward_bytes + r.critic_bytes;
  const double engine_bytes = rl.gpu_memory_utilization * hw.gpu.memory_bytes;
  r.generation_phase_bytes = engine_bytes + (r.colocated ? actor_memory.worst.weights : 0);
  r.fits = r.rollout.fits && r.training_phase_bytes <= r.capacity_bytes &&
           (!r.colocated || r.generation_phase_bytes <= r.capacity_bytes);

  if (rl.steps > 0)
    r.cost = run_cost(static_cast<double>(rl.steps), r.step_s, r.training_gpus + (r.colocated ? 0 : r.rollout_gpus), hw);
  return r;
}

}  // namespace trainsim
