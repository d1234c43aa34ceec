#pragma once
// One question about a communication op of the op stream, answered by interchangeable backends: how long one
// call takes when every group of its kind runs it at the same moment. The analytic backend answers with the
// collective model (collectives.hpp, what the step fold adds up); the SimGrid backend of `trainsim simulate`
// (sim/iteration/iteration_sim.cpp) runs the call's flows alone on the job's fabric and measures them. The two are
// listed side by side, op by op, so a difference in the step can be traced to the ops the fabric slows.
#include "models/step/op_stream.hpp"

namespace trainsim {

class CommBackend {
 public:
  virtual ~CommBackend() = default;
  virtual const char* name() const = 0;
  // Seconds one call of `op` takes; negative when the backend cannot run this op.
  virtual double call_time(const CommOp& op) = 0;
};

class AnalyticCommBackend final : public CommBackend {
 public:
  const char* name() const override { return "analytic"; }
  double call_time(const CommOp& op) override { return op.call_s; }
};

}  // namespace trainsim
