#pragma once
// Renderers of `trainsim simulate`: table, JSON (contract keys step.time_s, analytic.step.time_s,
// step.breakdown, links[].{id, bytes, utilization}), CSV, and the Chrome-trace / Perfetto timeline.
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "models/step/step.hpp"
#include "sim/iteration/iteration_sim.hpp"

namespace trainsim {

// The checkpoint write simulated after the iterations (--checkpoint) and its analytic counterpart.
struct SimulatedCheckpoint {
  std::string storage;     // tier name
  double bytes = 0;        // one full checkpoint
  double bandwidth = 0;    // bytes/s the analytic model gives the job (checkpoint_model.hpp)
  double analytic_s = 0;   // bytes / bandwidth
};

// One part of the step, simulated beside analytic (JSON key, label).
struct SimulatePart {
  const char* key;
  const char* label;
  double simulated, analytic;
};

struct SimulateResult {
  std::string scenario_label;
  Scenario scenario;
  StepEstimate analytic;
  sim::SimulationResult simulated;
  std::string placement = "packed";
  std::optional<SimulatedCheckpoint> checkpoint;
  double wall_s = 0;  // how long the simulation took
  std::string trace_path;  // --trace FILE (the Perfetto timeline), empty: none written
  // The HTML page's timeline thumbnail: the events of a few GPUs (the first rank of each pipeline stage), at most
  // kTimelineEvents, kept while the simulation runs when a page is written.
  std::vector<int> timeline_gpus;
  std::vector<sim::TraceEvent> timeline;
};
inline constexpr int kTimelineRows = 8;
inline constexpr std::size_t kTimelineEvents = 4000;
// The GPUs a thumbnail shows: the first rank of each pipeline stage (Megatron's rank order puts pp outermost), at most
// kTimelineRows of them evenly spread; other rank orders: the first kTimelineRows GPUs.
std::vector<int> timeline_gpus(const ParallelLayout& p);

// The simulated breakdown beside the analytic one, part by part (the analytic bubble is the simulator's
// pipeline wait; its straggler / skew wait has no analytic counterpart).
std::vector<SimulatePart> simulate_parts(const SimulateResult& r);
// Each communication op, one call over all its groups: the analytic time beside the fabric's (terminal, Markdown, HTML).
const std::vector<std::string>& simulate_op_header();
std::vector<std::vector<std::string>> simulate_op_rows(const SimulateResult& r);

nlohmann::json simulate_json(const SimulateResult& r);
void print_simulate_table(std::ostream& os, const SimulateResult& r);
void print_simulate_csv(std::ostream& os, const SimulateResult& r);
// Chrome trace event format (complete events, microseconds; one track per GPU), written as the simulation makes
// the events: the file grows, the memory does not (a 1,024-GPU GPT-3 run makes about a million events).
class ChromeTraceWriter {
 public:
  ChromeTraceWriter(std::ostream& os, int gpus);  // the header and one track name per GPU
  void add(const sim::TraceEvent& e);
  void finish();  // closes the JSON document; nothing may be added after
  long long events() const { return events_; }

 private:
  std::ostream& os_;
  long long events_ = 0;
};

}  // namespace trainsim
