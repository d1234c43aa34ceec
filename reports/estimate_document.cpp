#include "estimate_document.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "html_document.hpp"
#include "markdown.hpp"
#include "models/core/units.hpp"
#include "plan_report.hpp"
#include "rlhf_report.hpp"
#include "svg_chart.hpp"
#include "table.hpp"

namespace trainsim {

namespace {

using Rows = std::vector<std::vector<std::string>>;

const std::vector<std::string> kStageHeader{"stage", "layers", "weights GiB", "gradients GiB", "optimizer GiB", "activations GiB",
                                            "other GiB", "total GiB", "fits"};
const std::vector<bool> kStageNumeric{true, true, true, true, true, true, true, true, false};

Rows stage_rows(const MemoryEstimate& m) {
  Rows rows;
  for (const StageMemory& s : m.stages)
    rows.push_back({std::to_string(s.stage), std::to_string(s.layers), gib(s.weights), gib(s.gradients), gib(s.optimizer), gib(s.activations),
                    gib(s.other), gib(s.total), s.total <= m.capacity ? "yes" : "no"});
  return rows;
}

Rows step_rows(const StepEstimate& st) {
  Rows rows;
  for (const auto& [name, v] : step_parts(st.breakdown)) rows.push_back({name, fixed(v, 4), fixed(100 * v / st.time_s, 1) + "%"});
  rows.push_back({"step", fixed(st.time_s, 4), "100.0%"});
  return rows;
}

std::string verdict(const MemoryEstimate& m) {
  const double margin = m.capacity - m.worst.total;
  if (m.fits) return "fits: " + gib(margin) + " GiB free on the most loaded GPU";
  if (!m.device_fits) return "does NOT fit: the most loaded GPU needs " + gib(-margin) + " GiB more than its " + gib(m.capacity) + " GiB";
  return "does NOT fit: the GPUs have room, the node's host memory does not";
}

std::string speed_line(const EstimateResult& r) {
  const StepEstimate& st = r.step;
  std::string s = fixed(st.time_s, 3) + " s a step";
  if (st.band) s += " (likely " + fixed(st.time_s_low, 2) + "-" + fixed(st.time_s_high, 2) + " s)";
  return s + ", " + format_count(st.tokens_per_s) + " tokens/s, MFU " + fixed(100 * st.mfu, 1) + "%";
}

std::string cost_line(const EstimateResult& r) {
  if (r.rlhf) return rlhf_cost_line(*r.rlhf);
  const TrainingCost& c = r.cost;
  if (!(c.time_to_train_s > 0)) return "no token count given";
  return format_count(r.scenario.training.train_tokens) + " tokens in " + format_seconds(c.time_to_train_s) + ", " + fixed(c.gpu_hours, 0) +
         " GPU-hours, " + (c.priced ? format_usd(c.cost) : std::string("cost unknown (no price)"));
}

std::vector<std::pair<std::string, std::string>> facts(const EstimateResult& r) {
  const Scenario& s = r.scenario;
  std::vector<std::pair<std::string, std::string>> out{{"Scenario", r.scenario_label},
          {"Model", s.model.name + ", " + format_count(r.memory.params.total) + " parameters"},
          {"Training", describe_training(s)},
          {"Layout", describe_layout(s)},
          {"Framework", describe_framework(s.training, s.parallel)},
          {"Memory", verdict(r.memory)},
          {r.rlhf ? "One actor update" : "Speed", speed_line(r)},
          {"Cost", cost_line(r)}};
  if (r.data_feed) out.push_back({"Data feed", data_feed_line(*r.data_feed)});
  if (r.rlhf) {  // after Memory, before the actor update's speed
    const auto memory = std::find_if(out.begin(), out.end(), [](const auto& f) { return f.first == "Memory"; });
    out.insert(memory + 1, {"RL step", rlhf_line(*r.rlhf)});
  }
  return out;
}

// Stacked GiB per pipeline stage, the GPU's capacity as a line.
std::string memory_chart(const EstimateResult& r) {
  svg::BarChart c;
  c.title = "Memory per GPU by pipeline stage";
  c.y = {"memory per GPU", "GiB"};
  c.category_label = "pipeline stage";
  const char* parts[] = {"weights", "gradients", "optimizer", "activations", "other"};
  for (const char* p : parts) c.segments.push_back({p, {}, {}});
  for (const StageMemory& s : r.memory.stages) {
    c.categories.push_back("stage " + std::to_string(s.stage));
    const double v[] = {s.weights, s.gradients, s.optimizer, s.activations, s.other};
    for (std::size_t i = 0; i < 5; ++i) {
      c.segments[i].values.push_back(v[i] / kBytesPerGiB);
      c.segments[i].tips.push_back("stage " + std::to_string(s.stage) + " " + parts[i] + ": " + gib(v[i]) + " GiB");
    }
  }
  c.y_markers.push_back({"capacity " + gib(r.memory.capacity) + " GiB", r.memory.capacity / kBytesPerGiB});
  return svg::render(c);
}

// One bar per part of a step, seconds with their share of the step.
std::string seconds_chart(const std::string& title, const std::string& category, const std::vector<std::pair<std::string, double>>& parts,
                          double total_s, int digits) {
  svg::BarChart c;
  c.title = title;
  c.y = {"seconds per step", "s"};
  c.category_label = category;
  c.stacked = false;
  c.segments.push_back({"seconds", {}, {}});
  for (const auto& [name, v] : parts) {
    c.categories.push_back(name);
    c.segments[0].values.push_back(v);
    c.segments[0].tips.push_back(name + ": " + fixed(v, digits) + " s (" + fixed(100 * v / total_s, 1) + "%)");
  }
  return svg::render(c);
}

std::string rlhf_chart(const RlhfStepEstimate& e) { return seconds_chart("RL step by phase", "phase", rlhf_phases(e), e.step_s, 3); }

std::string step_chart(const StepEstimate& st) {
  return seconds_chart("Step time by part (critical pipeline stage, exposed communication only)", "part", step_parts(st.breakdown), st.time_s, 4);
}

}  // namespace

void print_estimate_markdown(std::ostream& os, const EstimateResult& r) {
  md::heading(os, "trainsim estimate: " + r.scenario.model.name + " on " + std::to_string(r.scenario.hardware.num_gpus) + " x " +
                      r.scenario.hardware.gpu.name, 1);
  Rows fact_rows;
  for (const auto& [k, v] : facts(r)) fact_rows.push_back({k, v});
  md::table(os, {"", ""}, fact_rows);
  md::heading(os, "Memory per GPU by pipeline stage (capacity " + gib(r.memory.capacity) + " GiB)");
  md::table(os, kStageHeader, stage_rows(r.memory), kStageNumeric);
  md::heading(os, r.rlhf ? "One actor update" : "Step time");
  md::table(os, {"part", "seconds", "share"}, step_rows(r.step), {false, true, true});
  if (r.rlhf) {
    md::heading(os, "RL step");
    md::table(os, {"phase", "seconds", "share"}, rlhf_phase_rows(*r.rlhf, false), {false, true, true});
  }
}

void write_estimate_html(std::ostream& os, const EstimateResult& r) {
  html::Document d("trainsim estimate: " + r.scenario.model.name + " on " + std::to_string(r.scenario.hardware.num_gpus) + " x " +
                       r.scenario.hardware.gpu.name,
                   r.scenario_label);
  d.facts(facts(r));
  d.heading("Memory");
  d.figure(memory_chart(r), "GiB per GPU on each pipeline stage, by what holds it; the dashed line is the GPU's capacity.");
  d.table(kStageHeader, stage_rows(r.memory), kStageNumeric);
  if (!r.memory.fits && !r.suggestions.empty()) {
    Rows rows;
    for (const auto& s : r.suggestions) rows.push_back({s.change, gib(s.total_bytes), s.fits ? "yes" : "no"});
    d.heading("Single changes", 3);
    d.table({"change", "total GiB", "fits"}, rows, {false, true, false});
  }
  if (r.rlhf) {
    d.heading("RL step");
    d.figure(rlhf_chart(*r.rlhf), "Seconds per step in each phase: the engines generate, frozen models score, the actor (and critic) "
                                  "train, the new weights go to the engines; the phases run one after the other.");
    d.table({"phase", "seconds", "share"}, rlhf_phase_rows(*r.rlhf, false), {false, true, true});
  }
  d.heading(r.rlhf ? "One actor update" : "Step time");
  d.figure(step_chart(r.step), "Seconds per step on the critical pipeline stage; communication counts only where it is not hidden.");
  d.table({"part", "seconds", "share"}, step_rows(r.step), {false, true, true});
  os << d.str();
}

}  // namespace trainsim
