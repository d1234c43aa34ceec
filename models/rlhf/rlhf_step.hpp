#pragma once
// One step of PPO or GRPO as OpenRLHF, verl, NeMo RL, TRL and ms-swift run it synchronously (on-policy), in four
// phases one after the other:
//   rollout   the engines generate the step's samples (rollout.hpp);
//   scoring   forward passes over every sample: the actor's log-probabilities under the weights that generated them,
//             the frozen reference model's (KL penalty), a reward model's score (none for a rule), PPO's critic's
//             values. A forward pass costs a third of a training pass over the same tokens (the backward computes
//             two products per forward one: Narayanan et al. SC'21 §5.1), at the actor's layout;
//   training  the actor's updates (and PPO's critic's): samples_per_update samples each, update_epochs passes, each
//             priced by the step model (step.hpp) over the packed sequences they fill;
//   sync      the new weights into the engines: colocated, each GPU copies its engine's 16-bit shard over the node's
//             NVLink; separate pools, each engine GPU receives the whole 16-bit model over the network (NCCL broadcast
//             from the trainer, as OpenRLHF and verl do), at its share of the node's NICs.
// Memory: the actor's states and activations (memory.hpp), the reference and reward models' 16-bit weights and PPO's
// critic as trained, all sharded like the actor. Colocated, a model sleeps in host memory while another runs
// (OpenRLHF --deepspeed_enable_sleep, verl's param and optimizer offload, NeMo RL's offload before refit), so the
// training phase holds the largest of them, and the generation phase the engine's reservation (gpu_memory_utilization
// of the GPU) beside the actor's weights; separate pools, the training GPUs hold them all at once.
#include <string>
#include <vector>

#include "models/rlhf/rollout.hpp"
#include "models/step/step.hpp"

namespace trainsim {

struct RlhfStepEstimate {
  RolloutEstimate rollout;
  bool colocated = true;
  int training_gpus = 0, rollout_gpus = 0;  // colocated: the same GPUs
  long long samples = 0;                    // per step
  double tokens = 0;                        // per step: samples x (prompt + mean response)
  int updates = 0;                          // optimizer steps of the actor per RL step
  double logprobs_s = 0, reference_s = 0, reward_s = 0, values_s = 0, scoring_s = 0;
  double actor_update_s = 0, critic_update_s = 0, training_s = 0;
  double sync_s = 0;
  double step_s = 0;
  double samples_per_s = 0, tokens_per_s = 0;
  // Per GPU: the training phase (actor, frozen models, critic) and the generation phase.
  double training_phase_bytes = 0, generation_phase_bytes = 0, capacity_bytes = 0;
  double actor_bytes = 0, reference_bytes = 0, reward_bytes = 0, critic_bytes = 0;
  bool fits = false;
  TrainingCost cost;  // rl.steps steps on every GPU of both pools
};

// The step of a scenario with training.mode ppo or grpo (training.rl). Throws InputError when the reward or critic
// model does not fit the actor's layout, or no engine size holds the weights and a full sequence.
RlhfStepEstimate estimate_rlhf_step(const Scenario& s, const CalibrationProfile* calibration = nullptr);

}  // namespace trainsim
