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

// What the thumbnail's bars mean (sim::TraceEvent::category), one colour each.
const std::vector<std::string> kTimelineCategories{"compute", "tp", "cp", "ep", "pp", "dp", "wait", "optimizer", "checkpoint"};

std::string timeline_chart(const SimulateResult& r) {
  svg::TimelineChart c;
  c.title = "Timeline of the first iteration";
  c.x = {"time since the iteration began", "s", false, 0.0};
  c.row_label = "GPU";
  const double end = r.simulated.iteration_s.empty() ? 0 : r.simulated.iteration_s.front();
  // The legend lists the categories the shown GPUs spend time in, in kTimelineCategories' order.
  for (const std::string& name : kTimelineCategories)
    if (std::any_of(r.timeline.begin(), r.timeline.end(), [&](const sim::TraceEvent& e) { return e.category == name && e.start_s < end; }))
      c.categories.push_back(name);
  for (int g : r.timeline_gpus) c.rows.push_back("GPU " + std::to_string(g));
  for (const sim::TraceEvent& e : r.timeline) {
    if (e.start_s >= end) continue;  // later iterations
    const auto row = std::find(r.timeline_gpus.begin(), r.timeline_gpus.end(), e.gpu) - r.timeline_gpus.begin();
    const auto cat = std::find(c.categories.begin(), c.categories.end(), e.category) - c.categories.begin();
    c.spans.push_back({static_cast<int>(row), e.start_s, std::min(e.duration_s, end - e.start_s), static_cast<int>(cat),
                       "GPU " + std::to_string(e.gpu) + " " + e.name + ": " + fixed(1e3 * e.duration_s, 2) + " ms from " + fixed(e.start_s, 4) + " s"});
  }
  return svg::render(c);
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
  if (!r.timeline.empty())
    d.figure(timeline_chart(r), "The first iteration of " + std::to_string(r.timeline_gpus.size()) +
                                    " GPUs (the first rank of each pipeline stage shown), by what each is doing; hover a bar for its op.");
  if (r.trace_path.empty()) d.paragraph("Run with --trace FILE.json for every GPU's timeline (Chrome trace format: open it in ui.perfetto.dev or chrome://tracing).");
  else d.link(r.trace_path, "Every GPU's timeline: " + r.trace_path + " (Chrome trace format: open it in ui.perfetto.dev or chrome://tracing).");
  os << d.str();
}

}  // namespace trainsim
