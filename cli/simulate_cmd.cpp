// `trainsim simulate [SCENARIO]`: training iterations of the scenario's layout replayed on a SimGrid model of
// its fabric (sim/iteration/iteration_sim.hpp), next to the analytic step.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>

#include "command.hpp"
#include "flag_checks.hpp"
#include "flag_values.hpp"
#include "models/core/errors.hpp"
#include "models/reliability/checkpoint_model.hpp"
#include "models/scenario/scenario.hpp"
#include "models/step/step.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "reports/simulate_document.hpp"
#include "reports/simulate_report.hpp"
#include "run_files.hpp"
#include "scenario_input.hpp"
#include "sim/iteration/iteration_sim.hpp"
#include "sim/reliability/job_setup.hpp"

namespace trainsim::cli {
namespace {

struct SimulateFlags {
  int iterations = 2;
  std::vector<std::string> stragglers, slow_nodes, slow_links;
  double jitter = 0;
  unsigned long long seed = 1;
  std::string trace;
  std::string placement = "packed";
  bool checkpoint = false;
  int expand_rings = 0;
};

// The scenario's checkpoint (reliability.checkpoint: storage tier and bandwidth overrides) written once after
// the iterations: the storage host on the spine takes this job's share of the tier's aggregate bandwidth, each
// node writes through a client link at the tier's per-node bandwidth.
void add_checkpoint(const ScenarioInput& input, SimulateResult& r, sim::SimOptions* opt) {
  const HardwareSpec& h = r.scenario.hardware;
  const int per_node = std::max(1, std::min(h.gpus_per_node, h.num_gpus));
  std::string label;
  const sim::ReliabilitySettings settings = sim::parse_reliability_settings(load_scenario_document(input, &label), per_node);
  const CheckpointSettings& cs = settings.checkpoint;
  const StorageTier tier = checkpoint_tier(cs);
  const CheckpointContext c = checkpoint_context(checkpoint_size(r.scenario.model, r.scenario.training, r.scenario.parallel, h, cs.contents), cs, h);
  r.checkpoint = SimulatedCheckpoint{tier.name, c.size.state_bytes, c.write_bandwidth, c.write_s()};
  opt->checkpoint.bytes = c.size.state_bytes;
  opt->checkpoint.gpu_rate = tier.per_node_bandwidth / per_node;
  if (tier.aggregate_bandwidth > 0) {
    opt->fabric.storage_bandwidth = tier.aggregate_bandwidth / std::max(1, cs.storage.concurrent_jobs);
    opt->fabric.storage_client_bandwidth = tier.per_node_bandwidth;
  }
}

int run_simulate(const ScenarioInput& input, const SimulateFlags& flags) {
  SimulateResult r;
  std::optional<LoadedCalibration> calibration;
  r.scenario = load_scenario(input, &r.scenario_label, true, &calibration);
  require_supervised_mode(r.scenario.training, "simulate");
  sim::SimOptions opt;
  if (flags.iterations < 1 || flags.iterations > 100) throw InputError("--iterations", std::to_string(flags.iterations), "1 to 100 iterations");
  if (!(flags.jitter >= 0 && flags.jitter <= 0.3)) throw InputError("--jitter", std::to_string(flags.jitter), "a relative standard deviation from 0 to 0.3");
  opt.iterations = flags.iterations;
  opt.jitter = flags.jitter;
  opt.seed = flags.seed;
  // A straggler GPU, or a slow node: every GPU of the job's node NODE (ranks NODE x gpus_per_node ..).
  const int world = static_cast<int>(r.scenario.parallel.world()), per_node = std::max(1, r.scenario.hardware.gpus_per_node);
  const int nodes = (world + per_node - 1) / per_node;
  for (const std::string& s : flags.stragglers) opt.stragglers.push_back(index_factor("--straggler", s, world, "GPU", "GPU rank"));
  for (const std::string& s : flags.slow_nodes) {
    const auto [node, factor] = index_factor("--slow-node", s, nodes, "NODE", "node");
    for (int g = node * per_node; g < std::min(world, (node + 1) * per_node); ++g) opt.stragglers.emplace_back(g, factor);
  }
  for (const std::string& s : flags.slow_links) opt.slow_links.push_back(id_factor("--slow-link", s));
  const bool tracing = !flags.trace.empty();
  if (tracing) check_output_path("--trace", flags.trace);
  if (!input.report.empty()) check_output_path("--report", input.report);
  if (!sim::parse_placement(flags.placement, &opt.fabric.placement))
    throw InputError("--placement", "\"" + flags.placement + "\"", "packed, spread or random");
  opt.fabric.seed = flags.seed;
  if (flags.expand_rings < 0 || flags.expand_rings > 65536) throw InputError("--expand-rings", std::to_string(flags.expand_rings), "a group size from 0 to 65536");
  opt.expand_rings_up_to = flags.expand_rings;
  r.placement = flags.placement;
  if (flags.checkpoint) add_checkpoint(input, r, &opt);
  StepModel sm(r.scenario.model, r.scenario.training, r.scenario.hardware, calibration ? &calibration->profile : nullptr);
  r.analytic = sm.estimate(r.scenario.parallel);
  ProgressBar bar("simulating");
  bar.update(0);  // on screen at once: building a large platform takes a while before the first iteration
  opt.progress = [&bar](double done) { bar.update(done); };
  const auto start = std::chrono::steady_clock::now();
  // A page shows a thumbnail of a few GPUs' timeline: kept as the events end, bounded.
  const bool page = !input.report.empty() || input.format == "html";
  if (page) r.timeline_gpus = timeline_gpus(r.scenario.parallel);
  auto keep = [&r](const sim::TraceEvent& e) {
    if (r.timeline.size() < kTimelineEvents && std::find(r.timeline_gpus.begin(), r.timeline_gpus.end(), e.gpu) != r.timeline_gpus.end())
      r.timeline.push_back(e);
  };
  auto simulate = [&] { r.simulated = sim::simulate_iterations(r.scenario, sm, opt); };
  if (tracing) {
    // The timeline streams into the trace file as the events end (its temporary until the run is complete).
    write_output_file("--trace", flags.trace, [&](std::ostream& os) {
      ChromeTraceWriter writer(os, world);
      opt.trace = [&writer, &keep, page](const sim::TraceEvent& e) {
        writer.add(e);
        if (page) keep(e);
      };
      simulate();
      writer.finish();
    });
  } else {
    if (page) opt.trace = keep;
    simulate();
  }
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  bar.finish();
  if (tracing) {
    // The report links the timeline by a path relative to the report's own folder.
    namespace fs = std::filesystem;
    r.trace_path = input.report.empty() ? flags.trace : fs::absolute(flags.trace).lexically_relative(fs::absolute(input.report).parent_path()).string();
  }
  emit_result(input.format, simulate_json(r), "simulate",
              {[&](std::ostream& os) { print_simulate_table(os, r); }, [&](std::ostream& os) { print_simulate_csv(os, r); },
               [&](std::ostream& os) { print_simulate_markdown(os, r); }, [&](std::ostream& os) { write_simulate_html(os, r); }},
              input.report);
  return kExitOk;
}

const RegisterCommand registered{{"simulate", "Replay training iterations on a SimGrid model of the fabric: contention, topology, stragglers",
                                  [](CLI::App& app) -> std::function<int()> {
                                    auto input = std::make_shared<ScenarioInput>();
                                    auto flags = std::make_shared<SimulateFlags>();
                                    add_scenario_options(app, *input);
                                    add_calibration_option(app, *input);
                                    app.add_option("--iterations", flags->iterations, "iterations to simulate (default 2)");
                                    app.add_option("--straggler", flags->stragglers, "GPU:FACTOR, a GPU whose compute is FACTOR times slower (repeatable)");
                                    app.add_option("--slow-node", flags->slow_nodes, "NODE:FACTOR, a node (in rank order) whose GPUs all compute FACTOR times slower (repeatable)");
                                    app.add_option("--slow-link", flags->slow_links, "ID:FACTOR, a link with 1/FACTOR of its bandwidth (ids in --format json links[])");
                                    app.add_option("--jitter", flags->jitter, "relative standard deviation of every compute block (e.g. 0.02)");
                                    app.add_option("--seed", flags->seed, "random seed for --jitter")->check(seed_value());
                                    app.add_option("--trace", flags->trace, "write a Chrome-trace / Perfetto timeline (JSON) to FILE")->check(non_empty_path());
                                    app.add_option("--placement", flags->placement,
                                                   "packed (default: nodes in rank order fill a leaf), spread (consecutive nodes on different leaves) or random (--seed)");
                                    app.add_option("--expand-rings", flags->expand_rings,
                                                   "run blocking ring collectives of groups up to N GPUs step by step (default 0: every ring collapsed to one flow per edge)");
                                    app.add_flag("--checkpoint", flags->checkpoint,
                                                 "after the iterations, write one checkpoint to the scenario's storage tier (reliability.checkpoint) through the fabric");
                                    return [input, flags] { return run_simulate(*input, *flags); };
                                  }}};

}  // namespace
}  // namespace trainsim::cli
