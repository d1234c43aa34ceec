#include "models/memory/memory_advice.hpp"

#include "models/calibration/accuracy_bands.hpp"
#include "models/layout/layout_check.hpp"
#include "models/memory/memory.hpp"

namespace trainsim {

std::vector<FitSuggestion> fit_suggestions(const Scenario& s) {
  std::vector<FitSuggestion> out;
  auto consider = [&](const std::string& change, TrainingSpec t, ParallelLayout p, HardwareSpec h) {
    const long long mp = p.model_parallel();
    if (mp == 0 || h.num_gpus % mp) return;
    p.dp = static_cast<int>(h.num_gpus / mp);
    const long long split = static_cast<long long>(p.micro_batch_size) * p.dp;
    if (t.global_batch_size % split) return;
    p.gradient_accumulation_steps = static_cast<int>(t.global_batch_size / split);
    if (check_layout(s.model, t, p, h.num_gpus) != LayoutIssue::None) return;
    MemoryModel mm(s.model, t, h);
    StageMemory w = mm.worst_stage(p);
    out.push_back({change, w.total, w.total <= h.gpu.memory_bytes && mm.host_fits(w.host)});
  };
  const TrainingSpec& t0 = s.training;
  const ParallelLayout& p0 = s.parallel;
  const HardwareSpec& h0 = s.hardware;

  if (t0.recompute == Recompute::None) { TrainingSpec t = t0; t.recompute = Recompute::Selective; consider("recompute=selective", t, p0, h0); }
  if (t0.recompute != Recompute::Full) { TrainingSpec t = t0; t.recompute = Recompute::Full; consider("recompute=full", t, p0, h0); }
  for (int z = t0.zero_stage + 1; z <= 3; ++z) { TrainingSpec t = t0; t.zero_stage = z; consider("zero_stage=" + std::to_string(z), t, p0, h0); }
  if (p0.micro_batch_size > 1) { ParallelLayout p = p0; p.micro_batch_size = 1; consider("micro_batch_size=1", t0, p, h0); }
  if (!p0.sequence_parallel && p0.tp > 1) { ParallelLayout p = p0; p.sequence_parallel = true; consider("sequence_parallel=true", t0, p, h0); }
  for (int f : {2, 4, 8}) {
    ParallelLayout p = p0; p.tp = p0.tp * f; p.sequence_parallel = true;
    if (p.tp <= h0.gpus_per_node) consider("tp=" + std::to_string(p.tp) + " with sequence_parallel", t0, p, h0);
  }
  for (int f : {2, 4}) {
    ParallelLayout p = p0; p.pp = p0.pp * f;
    TrainingSpec t = t0; if (t.zero_stage >= 2) t.zero_stage = 1;
    consider("pp=" + std::to_string(p.pp) + (t0.zero_stage >= 2 ? " (zero_stage=1)" : ""), t, p, h0);
  }
  { ParallelLayout p = p0; p.cp = p0.cp * 2; consider("cp=" + std::to_string(p.cp), t0, p, h0); }
  if (!t0.framework.memory_efficient_linear && t0.zero_stage >= 3 && t0.recompute != Recompute::Full) {
    TrainingSpec t = t0; t.framework.memory_efficient_linear = true;
    consider("framework memory_efficient_linear=true (the model built under deepspeed.zero.Init)", t, p0, h0);
  }
  if (!t0.offload_optimizer && !t0.paged_optimizer) { TrainingSpec t = t0; t.offload_optimizer = true; consider("offload_optimizer=true", t, p0, h0); }
  // A paged optimizer (bitsandbytes, for PyTorch-family stacks; Megatron has none) never runs out of GPU memory by its
  // states: suggesting one says what paging would cost.
  if (!t0.paged_optimizer && !t0.offload_optimizer && t0.optimizer != OptimizerKind::Sgd && !megatron_family(framework_for(t0, p0))) {
    TrainingSpec t = t0;
    t.paged_optimizer = true;
    t.optimizer_name = t.optimizer == OptimizerKind::Adam8bit ? "paged_adamw8bit" : "paged_adamw";
    consider("optimizer=" + t.optimizer_name + " (states page out to host memory)", t, p0, h0);
  }
  if (t0.zero_stage >= 1 || t0.distributed_optimizer) {
    HardwareSpec h = h0; h.num_gpus = h0.num_gpus * 2; h.num_nodes = (h.num_gpus + h.gpus_per_node - 1) / h.gpus_per_node;
    consider("num_gpus=" + std::to_string(h.num_gpus) + " (more sharding)", t0, p0, h);
  }
  return out;
}

}  // namespace trainsim
