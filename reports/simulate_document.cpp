#include "simulate_document.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "html_document.hpp"
#include "markdown.hpp"
#include "svg_chart.hpp"
#include "table.hpp"

namespace trainsim {

namespace {

using Rows = std::vector<std::vector<std::string>>;
constexpr std::size_t kHotLinks = 12;

Rows part_rows(const SimulateResult& r) {
  Rows rows;
  for (const SimulatePart& p : simulate_parts(r)) rows.push_back({p.label, fixed(p.simulated, 4), fixed(p.analytic, 4)});
  rows.push_back({"step", fixed(r.simulated.step_time_s, 4), fixed(r.analytic.time_s, 4)});
  return rows;
}

Rows link_rows(const SimulateResult& r) {
  Rows rows;
  const auto& links = r.simulated.links;
  for (std::size_t i = 0; i < std::min(kHotLinks, links.size()); ++i)
    rows.push_back({links[i].id, fixed(links[i].bytes / 1e9, 2), fixed(100 * links[i].utilization, 1) + "%"});
  return rows;
}

std::string title(const SimulateResult& r) {
  return "trainsim simulate: " + r.scenario.model.name + " on " + std::to_string(r.simulated.gpus) + " x " + r.scenario.hardware.gpu.name;
}

std::string step_line(const SimulateResult& r) {
  const double a = r.analytic.time_s, s = r.simulated.step_time_s;
  return "simulated " + fixed(s, 3) + " s, analytic " + fixed(a, 3) + " s (" + (s >= a ? "+" : "") + fixed(a > 0 ? 100 * (s / a - 1) : 0.0, 1) + "%)";
}

std::string parts_chart(const SimulateResult& r) {
  svg::BarChart c;
  c.title = "Step by part, simulated beside analytic (GPU " + std::to_string(r.simulated.reported_gpu) + ")";
  c.y = {"seconds per step", "s"};
  c.category_label = "part";
  c.stacked = false;
  c.segments = {{"simulated", {}, {}}, {"analytic", {}, {}}};
  for (const SimulatePart& p : simulate_parts(r)) {
    if (p.simulated <= 0 && p.analytic <= 0) continue;
    c.categories.push_back(p.label);
    c.segments[0].values.push_back(p.simulated), c.segments[0].tips.push_back(std::string(p.label) + ": " + fixed(p.simulated, 4) + " s simulated");
    c.segments[1].values.push_back(p.analytic), c.segments[1].tips.push_back(std::string(p.label) + ": " + fixed(p.analytic, 4) + " s analytic");
  }
  return svg::render(c);
}

std::string links_chart(const SimulateResult& r) {
  svg::BarChart c;
  c.title = "Hottest links";
  c.y = {"utilization of the busiest direction", "%"};
  c.category_label = "link";
  c.segments = {{"utilization", {}, {}}};
  const auto& links = r.simulated.links;
  for (std::size_t i = 0; i < std::min(kHotLinks, links.size()); ++i) {
    c.categories.push_back(links[i].id);
    c.segments[0].values.push_back(100 * links[i].utilization);
    c.segments[0].tips.push_back(links[i].id + ": " + fixed(links[i].bytes / 1e9, 2) + " GB a step, " + fixed(100 * links[i].utilization, 1) + "%");
  }
  c.y_markers.push_back({"saturated", 100});
  return svg::render(c);
}

}  // namespace

void print_simulate_markdown(std::ostream& os, const SimulateResult& r) {
  md::heading(os, title(r), 1);
  os << "Step: " << md::text(step_line(r)) << ". Scenario: " << md::cell(r.scenario_label) << ".\n\n";
  md::table(os, {"part", "simulated s", "analytic s"}, part_rows(r), {false, true, true});
  if (!r.simulated.ops.empty()) {
    md::heading(os, "Communication ops: analytic against the fabric");
    md::table(os, simulate_op_header(), simulate_op_rows(r), {false, true, true, true, true, true, true});
  }
  if (!r.simulated.links.empty()) {
    md::heading(os, "Hottest links");
    md::table(os, {"link", "GB per step", "utilization"}, link_rows(r), {false, true, true});
  }
}

void write_simulate_html(std::ostream& os, const SimulateResult& r) {
  html::Document d(title(r), r.scenario_label);
  d.facts({{"Step", step_line(r)},
           {"Simulated", std::to_string(r.simulated.iteration_s.size()) + " iterations, " + std::to_string(r.simulated.flows) + " flows in " +
                             fixed(r.wall_s, 2) + " s, nodes placed " + r.placement}});
  d.heading("Where the step goes");
  d.figure(parts_chart(r), "Seconds per step on the reported GPU: the SimGrid replay of the op stream beside the analytic fold.");
  d.table({"part", "simulated s", "analytic s"}, part_rows(r), {false, true, true});
  if (!r.simulated.ops.empty()) {
    d.heading("Communication ops: analytic against the fabric");
    d.paragraph("One call of each collective over all its groups: its analytic time, the time the fabric gave it, and their ratio.");
    d.table(simulate_op_header(), simulate_op_rows(r), {false, true, true, true, true, true, true});
  }
  if (!r.simulated.links.empty()) {
    d.heading("Hottest links");
    d.figure(links_chart(r), "Share of the iteration each link's busiest direction spends at full bandwidth.");
    d.table({"link", "GB per step", "utilization"}, link_rows(r), {false, true, true});
  }
  d.heading("Timeline");
  if (r.trace_path.empty()) d.paragraph("Run with --trace FILE.json for every GPU's timeline (Chrome trace format: open it in ui.perfetto.dev or chrome://tracing).");
  else d.link(r.trace_path, "Every GPU's timeline: " + r.trace_path + " (Chrome trace format: open it in ui.perfetto.dev or chrome://tracing).");
  os << d.str();
}

}  // namespace trainsim
