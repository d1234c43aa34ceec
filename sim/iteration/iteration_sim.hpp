#pragma once
// `trainsim simulate`: training iterations of one layout replayed as a discrete-event simulation on SimGrid,
// every GPU a host of the job's fabric (sim/iteration/fabric.hpp). Each GPU runs the op stream of models/ (StepModel::
// stream; durations never recomputed here) through the pipeline schedule: per micro-batch and pass its
// stage's compute, the blocking collectives of the pass (TP, EP, ZeRO-3 without overlap) with the other
// members of their group, the overlapped ones (ZeRO-3 prefetch, ring attention, TP comm overlap) beside the
// compute of their window, the pipeline send/recv to the neighbouring stages, and per iteration the DP
// gradient buckets under the last backward, the parameter gather under the first forward, the optimizer and
// the overhead. A world barrier (the global gradient-norm all-reduce) ends each iteration.
//
// Before the iterations, each communication op of the stream runs alone on the fabric, one call with every group
// of its kind at once: the SimGrid backend of models/comm/comm_backend.hpp, listed op by op beside the analytic one.
//
// Collectives become flows, collapsed: one flow per ring edge carrying the whole collective (all-reduce,
// all-gather, reduce-scatter, ring attention), n-1 permutation rounds for an all-to-all, one flow per
// pipeline send. Blocking rings of small groups may run step by step instead (SimOptions::expand_rings_up_to),
// to measure what the collapse changes. A flow is sized so that alone on the fabric it takes the analytic time of its ops
// (collectives.hpp, latency included); where flows share a link SimGrid's max-min fair sharing (CM02,
// no cross-traffic) stretches them. So on an idle non-blocking fabric the simulation reproduces the analytic
// collective times and differs from the analytic step only where the schedule does (pipeline dependencies,
// when overlapped flows really run); contention, oversubscription, slow links and stragglers add the rest.
//
// For speed, one actor runs a whole tensor-parallel group where TP is the innermost block of ranks (and
// etp = tp): its GPUs work in lockstep, a straggler sets the group's pace, and it issues every member GPU's
// flows. A blocking TP ring that fills a node's NVSwitch is simulated as one of its edges, every edge's bytes
// counted: nothing else uses those ports meanwhile, so each edge takes the time of one.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "models/scenario/spec.hpp"
#include "models/step/step.hpp"
#include "sim/iteration/fabric.hpp"

namespace trainsim::sim {

struct TraceEvent;  // below: one span of one GPU's timeline

struct SimOptions {
  int iterations = 2;
  std::vector<std::pair<int, double>> stragglers;           // GPU rank, compute slowdown factor (>= 1)
  std::vector<std::pair<std::string, double>> slow_links;   // link id (fabric.hpp), bandwidth divisor (>= 1)
  double jitter = 0;        // relative standard deviation of every compute block (normal, clipped at +-3 sigma)
  unsigned long long seed = 1;
  // Every GPU's timeline, event by event as each ends (nothing kept: a 1,024-GPU run makes millions of events).
  std::function<void(const TraceEvent&)> trace;
  // Blocking ring collectives of groups up to this size run step by step (n-1 or 2(n-1) lockstep rounds of
  // flows); larger ones, and all overlapped ones, collapsed (one flow per ring edge for the whole collective).
  int expand_rings_up_to = 0;
  FabricOptions fabric;     // placement of the job's nodes, storage host
  // One synchronous checkpoint after the iterations: every GPU writes an equal share (Megatron's fully
  // parallel distributed save, torch DCP) to the fabric's storage host, or to its node's disks without one.
  struct CheckpointWrite {
    double bytes = 0;       // the whole checkpoint; 0: none
    double gpu_rate = 0;    // without a storage host (node-local disks): bytes/s one GPU writes, the node's / its GPUs
  } checkpoint;
  std::function<void(double done)> progress;  // fraction of iterations finished
};

struct SimBreakdown {  // seconds per iteration on the reported GPU (the slowest stage's first rank)
  double compute_s = 0;     // forward, backward, recompute and host gaps, stretched by overlapped NCCL kernels
  double tp_s = 0, cp_s = 0, ep_s = 0, dp_s = 0;  // blocking collectives: flows in flight
  double pp_s = 0;          // waiting for the previous / next stage's activations or gradients (bubble included)
  double wait_s = 0;        // waiting at a collective for slower group members (stragglers, skew)
  double optimizer_s = 0, overhead_s = 0;
};

struct LinkUse {
  std::string id;
  double bytes = 0;         // bytes the collectives put on it per iteration (each direction summed)
  double utilization = 0;   // busiest direction: time at full bandwidth / iteration time
};

struct TraceEvent {
  int gpu = 0;
  std::string name;         // "forward mb3", "tp", "dp bucket", ...
  const char* category = "compute";  // compute, tp, cp, ep, pp, dp, wait, optimizer, checkpoint
  double start_s = 0, duration_s = 0;
};

// One communication op of the stream, one call with every group of its kind at once, on both backends
// (models/comm/comm_backend.hpp): before the iterations, each op alone on the fabric.
struct OpTiming {
  std::string scope;        // "dense layer", "MoE layer", "stage", "step"
  CommOp op;
  double analytic_s = 0;    // one call, analytic
  double simulated_s = 0;   // one call, its flows alone on the fabric
};

struct SimulationResult {
  std::vector<double> iteration_s;  // each simulated iteration
  double step_time_s = 0;           // their mean
  SimBreakdown breakdown;
  int reported_gpu = 0;
  std::vector<LinkUse> links;       // hottest first
  long long flows = 0;
  int gpus = 0;
  double checkpoint_s = 0;          // the checkpoint write after the iterations, until the last GPU is done
  std::vector<OpTiming> ops;        // the stream's communication ops, analytic and on the fabric
};

// The iteration simulator's documented bound: one iteration of GPT-3 175B takes about 24 s at 4,096 GPUs (640,000
// flows) and grows with the flows; `estimate` and `plan` price any size analytically.
inline constexpr int kMaxSimulatedGpus = 16384;

// Runs the simulation in this process's SimGrid engine (once per process). Throws InputError for what it
// cannot simulate (more than kMaxSimulatedGpus GPUs, an unknown link or GPU in the options).
SimulationResult simulate_iterations(const Scenario& scenario, const StepModel& model, const SimOptions& options);

}  // namespace trainsim::sim
