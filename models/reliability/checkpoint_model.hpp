#pragma once
// Checkpoints of a training job: how big (from the model's parameters and the optimizer), where they
// go (storage tiers whose aggregate bandwidth every writer shares), and what each method costs —
// the time training blocks, the time until the checkpoint survives a failure, and the time to read it
// back on a restart. Methods and storage tiers register themselves by name.
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/reliability/storage_tier.hpp"
#include "models/scenario/spec.hpp"

namespace trainsim {

// ---- Size -----------------------------------------------------------------------------------------

// What a checkpoint holds: the whole training state (weights, master copy, optimizer moments: a bit-exact resume),
// or the weights alone (Hugging Face save_only_model, Megatron --no-save-optim: a restart resumes with fresh
// optimizer moments).
enum class CheckpointContents { Full, Weights };
const char* to_string(CheckpointContents c);

struct CheckpointSize {
  CheckpointContents contents = CheckpointContents::Full;
  double parameters = 0;            // all parameters of the model
  double trained_parameters = 0;    // parameters the checkpoint holds state for (adapters for LoRA/QLoRA)
  double state_bytes = 0;           // one checkpoint: weights + fp32 master + optimizer states (full training), adapters + theirs (LoRA)
  double restore_bytes = 0;         // read on a restart: the state, plus the frozen base weights for LoRA/QLoRA
  double per_gpu_bytes = 0;         // model states on the most loaded GPU (what a snapshot copies to host memory)
  double offloaded_host_per_gpu = 0;  // host memory the most loaded GPU's offloaded optimizer states already take
  double bytes_per_parameter = 0;   // state_bytes / trained_parameters
};
// Full training: weights in the training precision (bf16 for fp8 runs, Transformer Engine keeps bf16
// masters of the fp8 casts), plus fp32 master weights and the optimizer's states as the memory model
// counts them (Adam 12 B/param with the master: Rajbhandari et al. 2020, K = 12); gradients are not
// saved. bf16 + AdamW = 14 B/param (BLOOM's 176B checkpoints: 2.3 TB, huggingface.co/blog/bloom-megatron-deepspeed).
// Weights only: the 16-bit weights (fp32 adapters for LoRA/QLoRA), the snapshot the same share of each GPU's states.
CheckpointSize checkpoint_size(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p, const HardwareSpec& h,
                               CheckpointContents contents = CheckpointContents::Full);

// ---- Methods (registered by name) ----------------------------------------------------------------

struct CheckpointSettings {
  std::string method = "sync";
  StorageChoice storage;            // the tier, its bandwidth overrides and the jobs checkpointing to it at once
  double overhead_s = 2.0;          // per checkpoint, any method: barrier, metadata, file creation
  double host_bandwidth = 0;        // device-to-host per GPU for snapshots (0: the GPU's PCIe link)
  double incremental_fraction = 1.0 / 6.0;  // incremental: bytes of an increment / a full checkpoint
  int full_every = 10;              // incremental: one full checkpoint every this many
  double blocking_override_s = -1;  // >= 0: the blocking cost is given (--checkpoint-cost), not modelled
  CheckpointContents contents = CheckpointContents::Full;
  // Tiered: after the write to `storage`, an upload to this tier that overlaps training (empty: none).
  std::string upload_to;
  // On a detected failure the surviving ranks save the last completed step from a healthy data-parallel replica
  // before exiting (just-in-time checkpointing, Gupta et al. EuroSys'24): a crash loses the step in progress.
  bool emergency = false;
  // Retention: checkpoints kept on the tier (0: not said) and the space they may take there (0: not said).
  int keep = 0;
  double quota_bytes = 0;
};

struct CheckpointContext {
  CheckpointSize size;
  int nodes = 1, gpus_per_node = 8;
  double write_bandwidth = 0;       // this job's share of the tier, bytes/s
  double read_bandwidth = 0;
  double host_bandwidth = 0;        // device-to-host per GPU
  double peer_bandwidth = 0;        // one node to another node's memory (its inter-node NICs)
  double overhead_s = 0;
  double incremental_fraction = 1.0 / 6.0;
  int full_every = 10;
  // Tiered: the upload tier's bandwidth for this job (0: no upload), one node's read from it, and whether the first
  // tier survives the loss of a node (local NVMe does not: the replacement reads the lost shard from the upload).
  double upload_bandwidth = 0;
  double upload_node_read_bandwidth = 0;
  bool first_tier_survives_node_loss = true;
  double write_s() const { return size.state_bytes / write_bandwidth; }
  double read_s() const { return size.restore_bytes / read_bandwidth; }
  double snapshot_s() const { return size.per_gpu_bytes / host_bandwidth; }
  double peer_copy_s() const { return size.per_gpu_bytes * gpus_per_node / peer_bandwidth; }
};

struct CheckpointCosts {
  double blocking_s = 0;  // training paused per checkpoint
  double persist_s = 0;   // after the pause, until the checkpoint survives a failure (overlaps training)
  double restore_s = 0;   // reading it back on a restart
  double write_s = 0;     // one full write to the storage tier
  double upload_s = 0;    // tiered: the upload to the second tier, after the write (overlaps training)
  std::string how;        // one line: where the numbers come from
};

class CheckpointMethod {
 public:
  virtual ~CheckpointMethod() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  virtual CheckpointCosts costs(const CheckpointContext& c) const = 0;
  // Copies of each GPU's snapshot held in host memory while the method runs (async: its own; in-memory: its own
  // and a peer node's replica; sync and incremental write from the GPU: none).
  virtual int host_copies() const { return 0; }
  // Whether the checkpoint survives a node's loss by the method's own replication (in-memory: on a peer).
  virtual bool replicated() const { return false; }
};
const std::vector<std::unique_ptr<CheckpointMethod>>& checkpoint_methods();  // sorted by name
std::vector<std::string> checkpoint_method_names();
const CheckpointMethod* find_checkpoint_method(const std::string& name);
struct RegisterCheckpointMethod {
  explicit RegisterCheckpointMethod(std::unique_ptr<CheckpointMethod> m);
};

// The settings' tier with their bandwidth overrides applied. Throws InputError when the tier is unknown.
StorageTier checkpoint_tier(const CheckpointSettings& s);
// The context for a job: tier bandwidth shared as above, the GPU's host link, the node's NICs.
// Throws InputError when the method or tier is unknown.
CheckpointContext checkpoint_context(const CheckpointSize& size, const CheckpointSettings& s, const HardwareSpec& h);
// The method's costs; a blocking override replaces blocking_s (persist and restore stay modelled). A tiered
// checkpoint (upload_to) persists when the upload ends if neither the first tier nor the method survives a node's
// loss, and then restores the lost node's shard from the upload tier.
CheckpointCosts checkpoint_costs(const CheckpointSettings& s, const CheckpointContext& c);

// Host memory a node needs while the method stages its snapshots: host_copies() x the node's GPUs' snapshots,
// beside the optimizer states offloaded there.
double staging_host_bytes_per_node(const CheckpointSettings& s, const CheckpointContext& c);

// The scenario's "checkpoint" object: {method, storage (tier name or {tier, aggregate_bandwidth,
// per_node_bandwidth, concurrent_jobs}), upload_to, contents, cost, overhead, host_bandwidth, incremental_fraction,
// full_every, keep, quota}. The interval is read by the caller (it may be a name: young, daly, best).
CheckpointSettings parse_checkpoint_settings(const nlohmann::json& value, const std::string& path, std::vector<AppliedDefault>* defaults);

}  // namespace trainsim
