#include "models/layout/layout_check.hpp"

#include <string>

#include "models/compute/transformer.hpp"
#include "models/scenario/framework.hpp"
#include "models/step/pipeline_schedule.hpp"

namespace trainsim {

namespace {
// The first parallel dimension above 1 that the framework does not run (available == nullptr when none).
struct Dimension {
  const char* key;
  int degree;
  bool FrameworkTraits::*available;
};
Dimension unavailable(const FrameworkTraits& fw, const ParallelLayout& p) {
  for (Dimension d : {Dimension{"tp", p.tp, &FrameworkTraits::tp_available}, Dimension{"pp", p.pp, &FrameworkTraits::pp_available},
                      Dimension{"vpp", p.vpp, &FrameworkTraits::vpp_available},
                      Dimension{"cp", p.cp, &FrameworkTraits::cp_available}, Dimension{"ep", p.ep, &FrameworkTraits::ep_available},
                      Dimension{"etp", p.etp, &FrameworkTraits::ep_available}})
    if (d.degree > 1 && !(fw.*d.available)) return d;
  return {"", 1, nullptr};
}
}  // namespace

LayoutIssue expert_layout_issue(const ModelSpec& m, const ParallelLayout& p, long long num_gpus) {
  using ll = long long;
  if (!m.is_moe()) return p.ep > 1 || p.etp > 1 ? LayoutIssue::EpDense : LayoutIssue::None;
  if (m.num_experts % p.ep) return LayoutIssue::EpExperts;
  if ((num_gpus / p.pp) % (ll(p.ep) * p.etp)) return LayoutIssue::EpWorld;
  if (m.moe_intermediate_size % p.etp) return LayoutIssue::EtpFfn;
  return LayoutIssue::None;
}

LayoutIssue check_layout(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p, int num_gpus) {
  // Products in 64 bits (degrees and batch sizes are checked against their ranges where parsed, so none wraps).
  using ll = long long;
  if (p.world() != num_gpus) return LayoutIssue::WorldMismatch;
  if (m.num_attention_heads % p.tp) return LayoutIssue::TpHeads;
  if (m.num_key_value_heads % p.tp) return LayoutIssue::TpKvHeads;
  if (m.num_dense_layers() > 0 && m.intermediate_size % p.tp) return LayoutIssue::TpFfn;
  if (m.shared_expert_intermediate_size % p.tp) return LayoutIssue::TpFfn;
  if (p.pp > m.num_hidden_layers) return LayoutIssue::PpLayers;
  const bool chunks = pipeline_schedule(p.schedule).uses_model_chunks();
  if (p.vpp > 1 && !chunks) return LayoutIssue::VppSchedule;
  if (chunks && (p.pp < 2 || p.vpp < 2)) return LayoutIssue::VppSchedule;
  // Uneven interleaved splits are fine (Megatron's --pipeline-model-parallel-layout); an empty virtual stage is not.
  if (ll(p.pp) * p.vpp > pipeline_slots(m.num_hidden_layers, p)) return LayoutIssue::VppLayers;
  if (p.cp > 1 && t.seq_len % (2 * ll(p.cp))) return LayoutIssue::CpSeq;
  if (p.cp > 1 && m.linear_attention_layers > 0) return LayoutIssue::CpLinearAttention;
  if (p.sequence_parallel && p.tp > 1 && (t.seq_len / p.cp) % p.tp) return LayoutIssue::SpSeq;
  if (const LayoutIssue experts = expert_layout_issue(m, p, num_gpus); experts != LayoutIssue::None) return experts;
  const FrameworkTraits& fw = framework_for(t, p);
  if (t.zero_stage >= 2 && p.pp > 1 && !fw.shards_with_pipeline) return LayoutIssue::ZeroPipeline;
  if (p.dp_replicate > 1 && (p.dp % p.dp_replicate || p.expert_dp() % p.dp_replicate || !(t.zero_stage >= 1 || t.distributed_optimizer)))
    return LayoutIssue::DpReplicate;
  if (unavailable(fw, p).available) return LayoutIssue::FrameworkParallel;
  if (t.global_batch_size % (ll(p.micro_batch_size) * p.dp)) return LayoutIssue::BatchSplit;
  if (pipeline_schedule(p.schedule).bidirectional()) {
    const ll micro_batches = t.global_batch_size / (ll(p.micro_batch_size) * p.dp);
    if (p.pp < 2 || p.pp % 2 || micro_batches % 2 || micro_batches < 2 * ll(p.pp)) return LayoutIssue::BidirectionalShape;
  }
  return LayoutIssue::None;
}

InputError layout_error(LayoutIssue issue, const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p,
                        int num_gpus) {
  auto s = [](auto v) { return std::to_string(v); };
  switch (issue) {
    case LayoutIssue::None: break;
    case LayoutIssue::WorldMismatch:
      return InputError("/parallel", "tp*pp*cp*dp = " + s(p.tp) + "*" + s(p.pp) + "*" + s(p.cp) + "*" + s(p.dp) + " = " + s(p.world()),
                        "the number of GPUs (" + s(num_gpus) + ")", "leave dp out to derive it");
    case LayoutIssue::TpHeads:
      return InputError("/parallel/tp", s(p.tp), "a divisor of num_attention_heads (" + s(m.num_attention_heads) + ")");
    case LayoutIssue::TpKvHeads:
      return InputError("/parallel/tp", s(p.tp), "a divisor of num_key_value_heads (" + s(m.num_key_value_heads) + ")",
                        "Megatron splits KV heads across tensor-parallel ranks");
    case LayoutIssue::TpFfn:
      return InputError("/parallel/tp", s(p.tp), "a divisor of intermediate_size (" + s(m.intermediate_size) + ")");
    case LayoutIssue::PpLayers:
      return InputError("/parallel/pp", s(p.pp), "at most num_hidden_layers (" + s(m.num_hidden_layers) + ")");
    case LayoutIssue::VppSchedule:
      if (p.vpp > 1 && !pipeline_schedule(p.schedule).uses_model_chunks())
        return InputError("/parallel/schedule", std::string("\"") + to_string(p.schedule) + "\"",
                          "\"interleaved\" when vpp > 1 (vpp = " + s(p.vpp) + ")", "or set vpp to 1");
      return InputError("/parallel/schedule", "\"interleaved\"", "pp >= 2 and vpp >= 2 (pp = " + s(p.pp) + ", vpp = " + s(p.vpp) + ")",
                        "use \"1f1b\" or set vpp");
    case LayoutIssue::BidirectionalShape: {
      const long long micro_batches = t.global_batch_size / (static_cast<long long>(p.micro_batch_size) * p.dp);
      if (p.pp < 2 || p.pp % 2)
        return InputError("/parallel/pp", s(p.pp), "an even pp of at least 2 under \"dualpipe\"", "its two directions pair rank r with rank pp-1-r");
      return InputError("/training/global_batch_size", s(t.global_batch_size),
                        "an even number of micro-batches per step, at least 2*pp (" + s(2 * p.pp) + "), under \"dualpipe\"; micro_batch_size " +
                            s(p.micro_batch_size) + " x dp " + s(p.dp) + " gives " + std::to_string(micro_batches),
                        "DualPipe feeds half of them from each end (dualpipe.py asserts it)");
    }
    case LayoutIssue::VppLayers:
      return InputError("/parallel/vpp", s(p.vpp), "pp*vpp virtual stages at most the " + s(pipeline_slots(m.num_hidden_layers, p)) +
                        " pipeline slots (num_hidden_layers, plus the embedding and the loss where they count); pp = " + s(p.pp));
    case LayoutIssue::CpSeq:
      return InputError("/parallel/cp", s(p.cp), "seq_len (" + s(t.seq_len) + ") divisible by 2*cp",
                        "context parallelism splits the sequence in 2*cp chunks for load balance");
    case LayoutIssue::CpLinearAttention:
      return InputError("/parallel/cp", s(p.cp), "1 on a model with linear-attention layers",
                        "their context-parallel exchange (Megatron's all-to-all of heads) is not modelled");
    case LayoutIssue::SpSeq:
      return InputError("/parallel/sequence_parallel", "true", "seq_len/cp (" + s(t.seq_len / p.cp) + ") divisible by tp (" + s(p.tp) + ")");
    case LayoutIssue::EpDense:
      return InputError(p.ep > 1 ? "/parallel/ep" : "/parallel/etp", s(p.ep > 1 ? p.ep : p.etp), "1 for a dense model (no experts)");
    case LayoutIssue::EpExperts:
      return InputError("/parallel/ep", s(p.ep), "a divisor of num_experts (" + s(m.num_experts) + ")");
    case LayoutIssue::EpWorld:
      return InputError("/parallel/ep", s(p.ep), "ep*etp to divide the GPUs of one pipeline stage (" + s(num_gpus / p.pp) + ")");
    case LayoutIssue::EtpFfn:
      return InputError("/parallel/etp", s(p.etp), "a divisor of moe_intermediate_size (" + s(m.moe_intermediate_size) + ")");
    case LayoutIssue::ZeroPipeline:
      return InputError("/training/zero_stage", s(t.zero_stage),
                        "0 or 1 with pipeline parallelism (pp = " + s(p.pp) + ") in " + framework_for(t, p).name,
                        "DeepSpeed's pipeline engine and Megatron shard only optimizer states with pp > 1; use zero_stage 1 or "
                        "distributed_optimizer, or training.framework \"fsdp2\" (torchtitan shards each pipeline stage)");
    case LayoutIssue::DpReplicate:
      if (!(t.zero_stage >= 1 || t.distributed_optimizer))
        return InputError("/parallel/dp_replicate", s(p.dp_replicate), "1 without ZeRO sharding (zero_stage 0)",
                          "replicas of ZeRO shards need zero_stage >= 1 or distributed_optimizer");
      return InputError("/parallel/dp_replicate", s(p.dp_replicate),
                        "a divisor of dp (" + s(p.dp) + ")" + (p.expert_dp() != p.dp * p.cp ? " and of the expert data-parallel degree (" + s(p.expert_dp()) + ")" : ""));
    case LayoutIssue::FrameworkParallel: {
      const FrameworkTraits& fw = framework_for(t, p);
      const Dimension d = unavailable(fw, p);
      std::string others;
      for (const auto& name : framework_names())
        if (find_framework(name)->*d.available) others += (others.empty() ? "" : ", ") + name;
      return InputError(std::string("/parallel/") + d.key, s(d.degree), std::string("1 in ") + fw.name + " (it runs no " + (std::string(d.key) == "vpp" ? "interleaved pipeline" : d.key + std::string(" parallelism")) + ")",
                        "set training.framework to one that does: " + others);
    }
    case LayoutIssue::BatchSplit:
      return InputError("/training/global_batch_size", s(t.global_batch_size),
                        "a multiple of micro_batch_size*dp = " + s(p.micro_batch_size) + "*" + s(p.dp) + " = " +
                            s(static_cast<long long>(p.micro_batch_size) * p.dp));
  }
  return InputError("/parallel", "?", "a valid layout");
}

}  // namespace trainsim
