#pragma once
// Pipeline schedules, registered by name: each says what it does to the step (the bubble), to memory (the
// activations a stage holds at its peak) and to the order the iteration simulator runs a stage's passes in.
// gpipe, 1f1b, interleaved and dualpipe are built in (pipeline_schedule.cpp); a zero-bubble schedule is one more
// class there, with its id in spec.hpp's Schedule.
#include <string>
#include <vector>

#include "models/scenario/spec.hpp"

namespace trainsim {

class PipelineSchedule {
 public:
  virtual ~PipelineSchedule() = default;
  virtual Schedule id() const = 0;
  virtual const char* name() const = 0;
  virtual std::string description() const = 0;
  virtual std::string source() const = 0;
  // Runs model chunks (vpp > 1 required; vpp > 1 requires it).
  virtual bool uses_model_chunks() const { return false; }
  // Feeds micro-batches from both ends (DualPipe): pipeline rank r holds stages r and pp - 1 - r and runs half the
  // micro-batches through each; step and memory fold the pair. Requires pp even and m >= 2 pp, m even.
  virtual bool bidirectional() const { return false; }
  // Proposed by `plan`'s search where pp > 1; a schedule no framework preset runs is priced only where named.
  virtual bool searched() const { return true; }
  // Step time of the pipeline: `m` micro-batches through pp stages whose per-micro-batch times (forward +
  // backward) sum to `sum`, the slowest taking `worst` (bidirectional: per rank, the mean of its two stages).
  virtual double pipeline_time(int m, double worst, double sum, const ParallelLayout& p) const = 0;
  // Micro-batches of activations stage `stage` holds at its peak, in units of its whole layers' activations
  // (bidirectional: of each of the rank's two stages).
  virtual double micro_batches_in_flight(const ParallelLayout& p, int stage, int m) const = 0;
  // Forward passes (micro-batch x model chunk) stage `stage` runs before its first backward, of m x vpp.
  virtual int warmup_forwards(const ParallelLayout& p, int stage, int m) const = 0;
};

const PipelineSchedule& pipeline_schedule(Schedule s);
// Pipeline rank r holds stages r and pp - 1 - r: a bidirectional schedule over more than one stage.
bool pairs_stages(const ParallelLayout& p);
const PipelineSchedule* find_pipeline_schedule(const std::string& name);
const std::vector<const PipelineSchedule*>& pipeline_schedules();  // in Schedule order
std::vector<std::string> pipeline_schedule_names();

}  // namespace trainsim
