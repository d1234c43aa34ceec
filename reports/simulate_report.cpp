#include "simulate_report.hpp"

#include <algorithm>
#include <cmath>

#include "table.hpp"

namespace trainsim {

namespace {
using Json = nlohmann::json;
using Part = SimulatePart;
}  // namespace

std::vector<SimulatePart> simulate_parts(const SimulateResult& r) {
  const sim::SimBreakdown& s = r.simulated.breakdown;
  const StepBreakdown& a = r.analytic.breakdown;
  return {{"compute_s", "compute (incl. host gaps, recompute)", s.compute_s, a.compute_s + a.host_s + a.recompute_s},
          {"tp_comm_s", "tensor-parallel comm", s.tp_s, a.tp_comm_s},
          {"cp_comm_s", "context-parallel comm", s.cp_s, a.cp_comm_s},
          {"ep_comm_s", "expert-parallel all-to-all", s.ep_s, a.ep_comm_s},
          {"dp_comm_s", "data-parallel comm", s.dp_s, a.dp_comm_s},
          {"pp_wait_s", "pipeline p2p and bubble", s.pp_s, a.pp_comm_s + a.bubble_s},
          {"wait_s", "waiting for group members / overlapped comm", s.wait_s, 0.0},
          {"optimizer_s", "optimizer", s.optimizer_s, a.optimizer_s},
          {"overhead_s", "step overhead", s.overhead_s, a.overhead_s}};
}

namespace {

// "dense layer backward dp reduce-scatter", "step dp all-reduce".
std::string op_label(const sim::OpTiming& o) {
  const std::string pass = o.op.pass == Pass::Step ? "" : std::string(to_string(o.op.pass)) + " ";
  return o.scope + " " + pass + to_string(o.op.dim) + " " + to_string(o.op.collective);
}

}  // namespace

Json simulate_json(const SimulateResult& r) {
  Json j;
  j["scenario"] = r.scenario_label;
  const sim::SimulationResult& s = r.simulated;
  Json breakdown = Json::object();
  Json analytic_breakdown = Json::object();
  for (const Part& p : simulate_parts(r)) {
    breakdown[p.key] = p.simulated;
    analytic_breakdown[p.key] = p.analytic;
  }
  j["step"] = {{"time_s", s.step_time_s}, {"iterations_s", s.iteration_s}, {"breakdown", breakdown}, {"reported_gpu", s.reported_gpu}};
  j["analytic"] = {{"step", {{"time_s", r.analytic.time_s}, {"time_s_low", r.analytic.time_s_low}, {"time_s_high", r.analytic.time_s_high},
                             {"breakdown", analytic_breakdown}}}};
  j["difference"] = r.analytic.time_s > 0 ? s.step_time_s / r.analytic.time_s - 1 : 0.0;
  Json ops = Json::array();
  for (const sim::OpTiming& o : s.ops)
    ops.push_back({{"scope", o.scope}, {"pass", to_string(o.op.pass)}, {"dim", to_string(o.op.dim)}, {"collective", to_string(o.op.collective)},
                   {"group_size", o.op.group.size}, {"bytes_per_call", o.op.bytes}, {"calls", o.op.calls}, {"overlap", to_string(o.op.window)},
                   {"analytic_call_s", o.analytic_s}, {"simulated_call_s", o.simulated_s}});
  j["ops"] = ops;
  Json links = Json::array();
  for (const sim::LinkUse& l : s.links) links.push_back({{"id", l.id}, {"bytes", l.bytes}, {"utilization", l.utilization}});
  j["links"] = links;
  const NetworkSpec& n = r.scenario.hardware.network;
  j["network"] = {{"topology", to_string(n.topology)}, {"nodes_per_leaf", n.nodes_per_leaf}, {"oversubscription", n.oversubscription}, {"levels", n.levels},
                  {"placement", r.placement}};
  if (r.checkpoint)
    j["checkpoint"] = {{"write_s", s.checkpoint_s}, {"analytic_write_s", r.checkpoint->analytic_s}, {"bytes", r.checkpoint->bytes},
                       {"storage", r.checkpoint->storage}, {"analytic_bandwidth", r.checkpoint->bandwidth}};
  j["simulation"] = {{"gpus", s.gpus}, {"flows", s.flows}, {"wall_s", r.wall_s}};
  return j;
}

void print_simulate_table(std::ostream& os, const SimulateResult& r) {
  const sim::SimulationResult& s = r.simulated;
  const NetworkSpec& n = r.scenario.hardware.network;
  os << "Scenario    " << r.scenario_label << "\n";
  os << "Fabric      " << to_string(n.topology) << ", " << n.nodes_per_leaf << " nodes per leaf, oversubscription " << fixed(n.oversubscription, 1)
     << ":1, " << s.gpus << " GPUs, nodes placed " << r.placement << "\n";
  os << "Step        simulated " << fixed(s.step_time_s, 3) << " s, analytic " << fixed(r.analytic.time_s, 3) << " s ("
     << (s.step_time_s >= r.analytic.time_s ? "+" : "") << fixed(100 * (s.step_time_s / r.analytic.time_s - 1), 1) << "%)\n";
  if (r.checkpoint) {
    const SimulatedCheckpoint& c = *r.checkpoint;
    os << "Checkpoint  simulated " << fixed(s.checkpoint_s, 2) << " s, analytic " << fixed(c.analytic_s, 2) << " s to " << c.storage << " ("
       << fixed(c.bytes / 1e9, 1) << " GB at " << fixed(c.bandwidth / 1e9, 1) << " GB/s)\n";
  }
  os << "Simulated   " << s.iteration_s.size() << " iterations, " << s.flows << " flows in " << fixed(r.wall_s, 2) << " s\n\n";
  TextTable t({"Where the step goes (GPU " + std::to_string(s.reported_gpu) + ")", "simulated s", "analytic s"});
  for (const Part& p : simulate_parts(r)) t.add_row({p.label, fixed(p.simulated, 4), fixed(p.analytic, 4)});
  t.print(os);
  if (!s.ops.empty()) {
    os << "\n";
    TextTable o(simulate_op_header());
    for (auto& row : simulate_op_rows(r)) o.add_row(std::move(row));
    o.print(os);
  }
  if (!s.links.empty()) {
    os << "\n";
    TextTable l({"Hottest links", "GB per step", "utilization"});
    for (std::size_t i = 0; i < std::min<std::size_t>(10, s.links.size()); ++i)
      l.add_row({s.links[i].id, fixed(s.links[i].bytes / 1e9, 2), fixed(100 * s.links[i].utilization, 1) + "%"});
    l.print(os);
  }
  os << "\nThe simulator replays the analytic op stream on the fabric: each collective alone takes its analytic time;"
        " differences come from the pipeline schedule, contention on shared links and stragglers.\n";
}

const std::vector<std::string>& simulate_op_header() {
  static const std::vector<std::string> h{"Communication op (one call, all groups)", "group", "MB/call", "calls", "analytic ms", "fabric ms", "ratio"};
  return h;
}

std::vector<std::vector<std::string>> simulate_op_rows(const SimulateResult& r) {
  std::vector<std::vector<std::string>> rows;
  for (const sim::OpTiming& x : r.simulated.ops)
    rows.push_back({op_label(x), std::to_string(x.op.group.size), fixed(x.op.bytes / 1e6, 1), fixed(x.op.calls, x.op.calls == std::floor(x.op.calls) ? 0 : 2),
                    fixed(1e3 * x.analytic_s, 3), fixed(1e3 * x.simulated_s, 3), x.analytic_s > 0 ? fixed(x.simulated_s / x.analytic_s, 2) : "-"});
  return rows;
}

void print_simulate_csv(std::ostream& os, const SimulateResult& r) {
  os << "section,key,simulated,analytic\n";
  os << "step,time_s," << r.simulated.step_time_s << "," << r.analytic.time_s << "\n";
  if (r.checkpoint) os << "checkpoint,write_s," << r.simulated.checkpoint_s << "," << r.checkpoint->analytic_s << "\n";
  for (const Part& p : simulate_parts(r)) os << "breakdown," << p.key << "," << p.simulated << "," << p.analytic << "\n";
  for (const sim::OpTiming& o : r.simulated.ops)
    os << "op_call_s," << csv_field(op_label(o)) << ","
       << o.simulated_s << "," << o.analytic_s << "\n";
  for (const sim::LinkUse& l : r.simulated.links) os << "link_bytes," << csv_field(l.id) << "," << l.bytes << ",\nlink_utilization," << csv_field(l.id) << "," << l.utilization << ",\n";
}

ChromeTraceWriter::ChromeTraceWriter(std::ostream& os, int gpus) : os_(os) {
  os_ << "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  for (int g = 0; g < gpus; ++g)
    os_ << (g ? ",\n" : "") << Json{{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", g}, {"args", {{"name", "GPU " + std::to_string(g)}}}}.dump();
  events_ = gpus;
}

void ChromeTraceWriter::add(const sim::TraceEvent& e) {
  os_ << (events_++ ? ",\n" : "")
      << Json{{"name", e.name}, {"cat", e.category}, {"ph", "X"}, {"pid", 0}, {"tid", e.gpu}, {"ts", e.start_s * 1e6}, {"dur", e.duration_s * 1e6}}.dump();
}

void ChromeTraceWriter::finish() { os_ << "\n]}\n"; }

std::vector<int> timeline_gpus(const ParallelLayout& p) {
  const long long world = p.world();
  std::vector<int> gpus;
  if (p.rank_order.size() >= 2 && p.rank_order.compare(p.rank_order.size() - 2, 2, "pp") == 0) {
    const int shown = std::min(p.pp, kTimelineRows);
    for (int i = 0; i < shown; ++i) {
      const long long stage = shown > 1 ? static_cast<long long>(i) * (p.pp - 1) / (shown - 1) : 0;
      gpus.push_back(static_cast<int>(stage * (world / p.pp)));
    }
  } else {
    for (int g = 0; g < std::min<long long>(world, kTimelineRows); ++g) gpus.push_back(g);
  }
  return gpus;
}

}  // namespace trainsim
