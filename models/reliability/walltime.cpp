#include "models/reliability/walltime.hpp"

#include <cmath>
#include <limits>

#include "models/reliability/checkpoint_model.hpp"
#include "models/reliability/failure_model.hpp"
#include "models/reliability/recovery_model.hpp"
#include "models/reliability/reliability.hpp"

namespace trainsim {

WalltimeEstimate walltime_estimate(const ModelSpec& m, const TrainingSpec& t, const ParallelLayout& p, const HardwareSpec& h,
                                   double compute_s, double margin) {
  WalltimeEstimate w;
  w.compute_s = compute_s;
  w.margin = margin;
  const FailureModel failures = failure_preset("default");
  const int gpus_per_node = std::max(1, std::min(h.gpus_per_node, h.num_gpus));
  w.mtbf_s = failures.job_mtbf_s(std::max(1, h.num_nodes), gpus_per_node);
  const CheckpointSettings checkpoint;  // sync, parallel file system
  const CheckpointContext context = checkpoint_context(checkpoint_size(m, t, p, h), checkpoint, h);
  const CheckpointCosts costs = checkpoint_costs(checkpoint, context);
  w.checkpoint_s = costs.blocking_s;
  double replacement_share = 0;
  for (std::size_t i = 0; i < failures.components.size(); ++i)
    if (failures.components[i].needs_replacement) replacement_share += failures.share(i, gpus_per_node);
  w.recovery_s = mean_recovery_s(RecoverySettings{}, costs.restore_s, replacement_share);
  w.interval_s = optimal_interval_s(w.checkpoint_s, w.mtbf_s);
  w.ettr = expected_ettr(w.checkpoint_s, w.interval_s, w.recovery_s, w.mtbf_s);
  const double inf = std::numeric_limits<double>::infinity();
  w.expected_s = w.ettr > 0 && std::isfinite(w.ettr) ? compute_s / w.ettr : inf;
  w.limit_s = w.expected_s * (1 + margin);
  return w;
}

}  // namespace trainsim
