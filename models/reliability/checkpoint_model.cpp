#include "models/reliability/checkpoint_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "models/compute/transformer.hpp"
#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"
#include "models/core/name_registry.hpp"
#include "models/memory/memory.hpp"
#include "models/reliability/reliability_limits.hpp"
#include "models/scenario/framework.hpp"

namespace trainsim {

// ---- Size -----------------------------------------------------------------------------------------

const char* to_string(CheckpointContents c) { return c == CheckpointContents::Weights ? "weights" : "full"; }

CheckpointSize checkpoint_size(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p, const HardwareSpec& h,
                               CheckpointContents contents) {
  CheckpointSize s;
  s.contents = contents;
  s.parameters = count_parameters(m).total;
  const bool weights_only = contents == CheckpointContents::Weights;
  const double base_weight_bytes = bytes_per_element(high_precision(t.precision));
  if (t.trains_base_weights()) {
    s.trained_parameters = s.parameters;
    // Optimizer states (with the fp32 master copy) exactly as the memory model counts them, unsharded.
    const double optimizer = full_model_states(s.parameters, 0, 1, 1, t, gradient_precision(t, p)).optimizer;
    const double full_state = s.parameters * base_weight_bytes + optimizer;
    s.state_bytes = weights_only ? s.parameters * base_weight_bytes : full_state;
    s.restore_bytes = s.state_bytes;
    // DPO's frozen reference model is the initial policy: read again on a restart, never written.
    if (t.has_reference_copy()) s.restore_bytes += s.parameters * base_weight_bytes;
    // A snapshot copies the model states the most loaded GPU holds (optimizer states already offloaded
    // to host memory do not cross PCIe again).
    const MemoryModel mm(m, t, h);
    const StageMemory worst = mm.worst_stage(p);
    // Weights only: each GPU copies the same share of its states as the checkpoint keeps of the whole.
    s.per_gpu_bytes = (worst.weights + worst.optimizer) * s.state_bytes / full_state;
    s.offloaded_host_per_gpu = worst.host;
  } else {
    // LoRA / QLoRA: PEFT saves the fp32 adapters and their two Adam moments (12 B/param); a restart also
    // reads the frozen base (QLoRA in NF4; the 16-bit embeddings and norms are a rounding error at this scale).
    s.trained_parameters = lora_parameters(m, t.lora, merges_expert_adapters(framework_for(t, p), t));
    s.state_bytes = s.trained_parameters * (kAdapterWeightBytes + (weights_only ? 0.0 : kAdapterOptimizerBytes));
    const double base = t.quantized_base() ? s.parameters * kNf4BytesPerParam : s.parameters * base_weight_bytes;
    s.restore_bytes = s.state_bytes + base;
    s.per_gpu_bytes = s.state_bytes / std::max(1, p.tp * p.pp);
  }
  s.bytes_per_parameter = s.trained_parameters > 0 ? s.state_bytes / s.trained_parameters : 0;
  return s;
}

namespace {

// ---- Methods ---------------------------------------------------------------------------------------

NameRegistry<std::unique_ptr<CheckpointMethod>>& method_registry() {
  static NameRegistry<std::unique_ptr<CheckpointMethod>> all;
  return all;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g s", s);
  return buf;
}

// Synchronous: training stops while every node writes its shard (Megatron-LM save, torch.save).
class SyncCheckpoint final : public CheckpointMethod {
 public:
  std::string name() const override { return "sync"; }
  std::string description() const override { return "training blocks while the checkpoint is written to storage"; }
  CheckpointCosts costs(const CheckpointContext& c) const override {
    CheckpointCosts k;
    k.write_s = c.write_s();
    k.blocking_s = c.overhead_s + k.write_s;
    k.restore_s = c.read_s();
    k.how = "blocks for overhead " + seconds_text(c.overhead_s) + " + write " + seconds_text(k.write_s);
    return k;
  }
};

// Asynchronous: a snapshot to host memory blocks briefly, the write to storage overlaps training; the
// checkpoint counts once written (CheckFreq, Mohan et al. FAST'21; PyTorch DCP async_save).
class AsyncCheckpoint final : public CheckpointMethod {
 public:
  std::string name() const override { return "async"; }
  std::string description() const override { return "snapshot to host memory blocks; the write to storage overlaps training (CheckFreq)"; }
  int host_copies() const override { return 1; }
  CheckpointCosts costs(const CheckpointContext& c) const override {
    CheckpointCosts k;
    k.write_s = c.write_s();
    k.blocking_s = c.overhead_s + c.snapshot_s();
    k.persist_s = k.write_s;
    k.restore_s = c.read_s();
    k.how = "blocks for overhead + device-to-host snapshot " + seconds_text(c.snapshot_s()) + "; persists in " + seconds_text(k.write_s);
    return k;
  }
};

// In-memory: snapshot to host memory, replicated to a peer node's memory; a restart reads from the
// peer, not from storage (Gemini, Wang et al. SOSP'23: 13x faster recovery). Writes to storage happen
// rarely and off the critical path (not modelled).
class InMemoryCheckpoint final : public CheckpointMethod {
 public:
  std::string name() const override { return "in-memory"; }
  std::string description() const override { return "snapshot to host memory, replicated to a peer node; restore from the peer (Gemini)"; }
  int host_copies() const override { return 2; }
  bool replicated() const override { return true; }
  CheckpointCosts costs(const CheckpointContext& c) const override {
    CheckpointCosts k;
    k.write_s = c.write_s();
    k.blocking_s = c.overhead_s + c.snapshot_s();
    k.persist_s = c.peer_copy_s();
    k.restore_s = c.peer_copy_s();
    k.how = "blocks for overhead + snapshot " + seconds_text(c.snapshot_s()) + "; peer copy over the NICs " + seconds_text(k.persist_s);
    return k;
  }
};

// Incremental: one full checkpoint every `full_every`, increments of `incremental_fraction` of its size in
// between, written synchronously; a restart reads the full one and half the increments on average
// (Check-N-Run, Eisenman et al. NSDI'22: 6-17x less write bandwidth for recommendation models; dense LLM
// weights all change every step, so the default fraction 1/6 is the optimistic end for them).
class IncrementalCheckpoint final : public CheckpointMethod {
 public:
  std::string name() const override { return "incremental"; }
  std::string description() const override { return "full checkpoint every N, increments in between (Check-N-Run)"; }
  CheckpointCosts costs(const CheckpointContext& c) const override {
    CheckpointCosts k;
    const double n = std::max(1, c.full_every), f = c.incremental_fraction;
    k.write_s = c.write_s();
    k.blocking_s = c.overhead_s + k.write_s * (1 + (n - 1) * f) / n;
    k.restore_s = c.read_s() * (1 + f * (n - 1) / 2);
    k.how = "blocks for overhead + the average of 1 full write and " + std::to_string(int(n - 1)) + " increments of " +
            std::to_string(int(std::lround(100 * f))) + "%";
    return k;
  }
};

const RegisterCheckpointMethod reg_sync{std::make_unique<SyncCheckpoint>()};
const RegisterCheckpointMethod reg_async{std::make_unique<AsyncCheckpoint>()};
const RegisterCheckpointMethod reg_memory{std::make_unique<InMemoryCheckpoint>()};
const RegisterCheckpointMethod reg_incremental{std::make_unique<IncrementalCheckpoint>()};


}  // namespace

const std::vector<std::unique_ptr<CheckpointMethod>>& checkpoint_methods() { return method_registry().entries(); }
std::vector<std::string> checkpoint_method_names() { return method_registry().names(); }

const CheckpointMethod* find_checkpoint_method(const std::string& name) {
  const auto* m = method_registry().find(name);
  return m ? m->get() : nullptr;
}

RegisterCheckpointMethod::RegisterCheckpointMethod(std::unique_ptr<CheckpointMethod> m) { method_registry().add(std::move(m)); }

StorageTier checkpoint_tier(const CheckpointSettings& s) {
  return resolved_tier(s.storage, "checkpoint storage");
}

CheckpointContext checkpoint_context(const CheckpointSize& size, const CheckpointSettings& s, const HardwareSpec& h) {
  const StorageTier tier = checkpoint_tier(s);
  CheckpointContext c;
  c.size = size;
  c.nodes = std::max(1, h.num_nodes);
  c.gpus_per_node = std::max(1, std::min(h.gpus_per_node, h.num_gpus));
  c.write_bandwidth = c.read_bandwidth = shared_bandwidth(tier, c.nodes, s.storage.concurrent_jobs);
  c.host_bandwidth = s.host_bandwidth > 0 ? s.host_bandwidth : host_link_bandwidth(h.gpu);
  c.peer_bandwidth = std::max(1, h.nics_per_node) * (h.inter_node.bandwidth > 0 ? nic_line_rate(h) : 50e9);
  c.overhead_s = s.overhead_s;
  c.incremental_fraction = s.incremental_fraction;
  c.full_every = s.full_every;
  c.first_tier_survives_node_loss = tier.survives_node_loss;
  if (!s.upload_to.empty()) {
    const StorageChoice upload{s.upload_to, 0, 0, s.storage.concurrent_jobs};
    c.upload_bandwidth = shared_bandwidth(upload, c.nodes, "checkpoint upload tier");
    c.upload_node_read_bandwidth = shared_bandwidth(upload, 1, "checkpoint upload tier");
  }
  return c;
}

CheckpointCosts checkpoint_costs(const CheckpointSettings& s, const CheckpointContext& c) {
  const CheckpointMethod* m = find_checkpoint_method(s.method);
  if (!m) method_registry().unknown("checkpoint method", s.method, {.hint = ""});
  CheckpointCosts k = m->costs(c);
  if (c.upload_bandwidth > 0) {
    k.upload_s = c.size.state_bytes / c.upload_bandwidth;
    if (!c.first_tier_survives_node_loss && !m->replicated()) {
      // Only the uploaded copy outlives a node: the checkpoint counts once the upload ends (it starts when the
      // first tier holds it), and a restart reads the lost node's shard from the upload tier while the others
      // read their own.
      k.persist_s += k.upload_s;
      k.restore_s = std::max(k.restore_s, c.size.restore_bytes / c.nodes / c.upload_node_read_bandwidth);
    }
    k.how += "; uploads in " + seconds_text(k.upload_s);
  }
  if (s.blocking_override_s >= 0) {
    k.blocking_s = s.blocking_override_s;
    k.how = "blocking cost given: " + seconds_text(s.blocking_override_s);
  }
  return k;
}

double staging_host_bytes_per_node(const CheckpointSettings& s, const CheckpointContext& c) {
  const CheckpointMethod* m = find_checkpoint_method(s.method);
  if (!m) method_registry().unknown("checkpoint method", s.method, {.hint = ""});
  return (m->host_copies() * c.size.per_gpu_bytes + c.size.offloaded_host_per_gpu) * c.gpus_per_node;
}

CheckpointSettings parse_checkpoint_settings(const Json& value, const std::string& path, std::vector<AppliedDefault>* defaults) {
  CheckpointSettings s;
  if (value.is_null()) {
    if (defaults) {
      defaults->push_back({path + "/method", "\"sync\"", "training blocks while the checkpoint is written"});
      defaults->push_back({path + "/storage", "\"parallel-fs\"", "a shared parallel file system, 2 TB/s aggregate"});
      defaults->push_back({path + "/overhead", "2", "per-checkpoint barrier and metadata, seconds (assumption)"});
    }
    return s;
  }
  JsonReader r(value, path, defaults);
  r.mark_read({"method", "storage", "interval", "cost", "overhead", "host_bandwidth", "incremental_fraction", "full_every"});
  const std::string contents = r.get_enum("contents", {"full", "weights"}, "full", "");
  s.contents = contents == "weights" ? CheckpointContents::Weights : CheckpointContents::Full;
  if (r.has("upload_to")) s.upload_to = r.get_enum("upload_to", storage_tier_names(), "", "");
  s.emergency = r.get_bool("emergency", false, "");
  if (r.has("keep")) s.keep = reliability_limits::read_int(r, "keep", 0, "", reliability_limits::kKeepCheckpoints);
  if (r.has("quota")) s.quota_bytes = reliability_limits::read_quantity(r, "quota", Quantity::Bytes, 0, "", reliability_limits::kStorageQuota);
  s.method = r.get_enum("method", method_registry().names(), "sync", "training blocks while the checkpoint is written");
  s.storage = read_storage_choice(r, "storage", StorageChoice{}, "a shared parallel file system, 2 TB/s aggregate");
  namespace lim = reliability_limits;
  if (r.has("cost")) s.blocking_override_s = lim::read_quantity(r, "cost", Quantity::Time, 0, "", lim::kCheckpointCost);
  s.overhead_s = lim::read_quantity(r, "overhead", Quantity::Time, s.overhead_s, "per-checkpoint barrier and metadata, seconds (assumption)",
                                    lim::kCheckpointOverhead);
  if (r.has("host_bandwidth")) s.host_bandwidth = lim::read_quantity(r, "host_bandwidth", Quantity::Bandwidth, 0, "", lim::kNodeBandwidth);
  s.incremental_fraction = lim::read_number(r, "incremental_fraction", s.incremental_fraction, "", lim::kIncrementalFraction);
  s.full_every = lim::read_int(r, "full_every", s.full_every, "", lim::kFullEvery);
  r.reject_unknown();
  return s;
}

}  // namespace trainsim
