#pragma once
// Pipeline schedules, registered by name: each says what it does to the step (the bubble), to memory (the
// activations a stage holds at its peak) and to the order the iteration simulator runs a stage's passes in.
// gpipe, 1f1b and interleaved are built in (pipeline_schedule.cpp); a zero-bubble or DualPipe schedule is one
// more class there, with its id in spec.hpp's Schedule.
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
  // Step time of the pipeline: `m` micro-batches through pp stages whose per-micro-batch times (forward +
  // backward) sum to `sum`, the slowest taking `worst`.
  virtual double pipeline_time(int m, double worst, double sum, const ParallelLayout& p) const = 0;
  // Micro-batches of activations stage `stage` holds at its peak, in units of its whole layers' activations.
  virtual double micro_batches_in_flight(const ParallelLayout& p, int stage, int m) const = 0;
  // Forward passes (micro-batch x model chunk) stage `stage` runs before its first backward, of m x vpp.
  virtual int warmup_forwards(const ParallelLayout& p, int stage, int m) const = 0;
};

const PipelineSchedule& pipeline_schedule(Schedule s);
const PipelineSchedule* find_pipeline_schedule(const std::string& name);
const std::vector<const PipelineSchedule*>& pipeline_schedules();  // in Schedule order
std::vector<std::string> pipeline_schedule_names();

}  // namespace trainsim
