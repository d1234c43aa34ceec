#include "plan_document.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "estimate_report.hpp"
#include "html_document.hpp"
#include "markdown.hpp"
#include "models/compute/recompute_policy.hpp"
#include "models/core/units.hpp"
#include "svg_chart.hpp"
#include "table.hpp"

namespace trainsim {

namespace {

using Rows = std::vector<std::vector<std::string>>;
constexpr std::size_t kBreakdownPlans = 5;  // step breakdowns side by side

std::vector<bool> plan_numeric() {
  return {true, true, false, true, false, true, false, true, false, true, true, true, true, true, false};
}

std::string title(const PlanReport& r) {
  const Scenario& s = r.scenario;
  std::string counts;
  for (std::size_t i = 0; i < r.result.gpu_counts.size(); ++i) counts += (i ? ", " : "") + std::to_string(r.result.gpu_counts[i]);
  return "trainsim plan: " + s.model.name + " on {" + counts + "} x " + s.hardware.gpu.name;
}

std::string searched(const PlanReport& r) {
  return std::to_string(r.result.searched) + " layouts searched in " + fixed(r.seconds, 2) + " s; " + std::to_string(r.result.fit_memory) +
         " fit in memory" + (r.budget_text.empty() ? "" : ", " + std::to_string(r.result.feasible) + " within the budget " + r.budget_text);
}

std::string tip(const Plan& p) {
  return std::to_string(p.num_gpus) + " GPUs, " + layout_text(p) + ", mbs " + std::to_string(p.layout.micro_batch_size) + ", recompute " +
         recompute_text(p.training) + ", ZeRO " + std::to_string(p.training.zero_stage) + ": " + format_seconds(p.cost.time_to_train_s) +
         ", MFU " + fixed(100 * p.step.mfu, 1) + "%";
}

// The time unit for the plans' times to train.
TimeUnit train_unit(const PlanReport& r) {
  double longest = 0;
  for (const Plan& p : r.result.plans) longest = std::max(longest, p.cost.time_to_train_s);
  for (const Plan& p : r.result.pareto) longest = std::max(longest, p.cost.time_to_train_s);
  return time_unit_for(longest);
}

// Time to train against GPUs: every ranked plan, and the Pareto front with its likely band.
std::string time_vs_gpus(const PlanReport& r) {
  const TimeUnit u = train_unit(r);
  const double unit_s = u.seconds;
  svg::LineChart c;
  c.title = "Time to train against GPUs";
  c.x = {"GPUs", "count", r.result.gpu_counts.size() > 2};
  c.x_ticks.assign(r.result.gpu_counts.begin(), r.result.gpu_counts.end());  // the counts searched, not decades
  c.y = {"time to train", u.name, false, 0.0};
  svg::Series plans{"ranked plans", {}, {}, {}, false, true};
  for (const Plan& p : r.result.plans) {
    plans.x.push_back(p.num_gpus);
    plans.y.push_back(p.cost.time_to_train_s / unit_s);
    plans.tips.push_back(tip(p));
  }
  c.series.push_back(plans);
  svg::Series front{"Pareto front", {}, {}, {}, true, true};
  front.highlight = true;
  svg::Series low{"front, likely fastest", {}, {}, {}, true, false}, high{"front, likely slowest", {}, {}, {}, true, false};
  low.dashed = high.dashed = true;
  for (const Plan& p : r.result.pareto) {
    const double t = p.cost.time_to_train_s / unit_s;
    front.x.push_back(p.num_gpus);
    front.y.push_back(t);
    front.tips.push_back(tip(p));
    if (p.step.band && p.step.time_s > 0) {
      low.x.push_back(p.num_gpus), low.y.push_back(t * p.step.time_s_low / p.step.time_s);
      high.x.push_back(p.num_gpus), high.y.push_back(t * p.step.time_s_high / p.step.time_s);
    }
  }
  c.series.push_back(front);
  if (low.x.size() > 1) c.series.push_back(low), c.series.push_back(high);
  return svg::render(c);
}

// Cost against time to train: the trade-off a budget meeting decides.
std::string cost_vs_time(const PlanReport& r) {
  const TimeUnit u = train_unit(r);
  const double unit_s = u.seconds;
  svg::LineChart c;
  c.title = "Cost against time to train";
  c.x = {"time to train", u.name};
  c.y = {"cost", "USD"};
  svg::Series plans{"ranked plans", {}, {}, {}, false, true}, front{"Pareto front", {}, {}, {}, true, true};
  front.highlight = true;
  for (const Plan& p : r.result.plans) {
    plans.x.push_back(p.cost.time_to_train_s / unit_s), plans.y.push_back(p.cost.cost), plans.tips.push_back(tip(p));
  }
  std::vector<Plan> sorted = r.result.pareto;
  std::sort(sorted.begin(), sorted.end(), [](const Plan& a, const Plan& b) { return a.cost.time_to_train_s < b.cost.time_to_train_s; });
  for (const Plan& p : sorted) {
    front.x.push_back(p.cost.time_to_train_s / unit_s), front.y.push_back(p.cost.cost), front.tips.push_back(tip(p));
  }
  c.series = {plans, front};
  return svg::render(c);
}

// The first plans' step breakdowns as stacked bars, one bar per plan.
std::string breakdowns(const PlanReport& r) {
  svg::BarChart c;
  c.title = "Step time by part, top plans";
  c.y = {"seconds per step", "s"};
  c.category_label = "plan";
  const std::size_t n = std::min(kBreakdownPlans, r.result.plans.size());
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < n; ++i)
    for (const auto& [name, v] : step_parts(r.result.plans[i].step.breakdown))
      if (std::find(parts.begin(), parts.end(), name) == parts.end()) parts.push_back(name);
  for (const auto& name : parts) c.segments.push_back({name, {}, {}});
  for (std::size_t i = 0; i < n; ++i) {
    const Plan& p = r.result.plans[i];
    c.categories.push_back("#" + std::to_string(i + 1) + " " + layout_text(p));
    const auto have = step_parts(p.step.breakdown);
    for (std::size_t k = 0; k < parts.size(); ++k) {
      const auto it = std::find_if(have.begin(), have.end(), [&](const auto& x) { return x.first == parts[k]; });
      const double v = it == have.end() ? 0.0 : it->second;
      c.segments[k].values.push_back(v);
      c.segments[k].tips.push_back("#" + std::to_string(i + 1) + " " + parts[k] + ": " + fixed(v, 4) + " s");
    }
  }
  return svg::render(c);
}

const std::vector<bool> kPerCountNumeric{true, false, true, true, true, true, true, true, false};

Rows pareto_rows(const PlanReport& r) {
  Rows rows;
  for (const Plan& p : r.result.pareto)
    rows.push_back({std::to_string(p.num_gpus), layout_text(p), format_seconds(p.cost.time_to_train_s),
                    p.cost.priced && p.cost.time_to_train_s > 0 ? format_usd(p.cost.cost) : "-", fixed(100 * p.step.mfu, 1) + "%"});
  return rows;
}

}  // namespace

void print_plan_markdown(std::ostream& os, const PlanReport& r) {
  md::heading(os, title(r), 1);
  os << md::text(searched(r)) << ". Scenario: " << md::cell(r.scenario_label) << ".\n\n";
  if (r.result.plans.empty()) {
    os << "No plan: none fits in memory" << (r.budget_text.empty() ? "" : " within the budget") << ".\n";
    return;
  }
  md::table(os, plan_table_header(), plan_table_rows(r), plan_numeric());
  if (r.result.best_per_count.size() > 1) {
    md::heading(os, "Fastest plan per GPU count");
    md::table(os, per_count_header(), per_count_rows(r), kPerCountNumeric);
  }
  if (r.result.pareto.size() > 1) {
    md::heading(os, "Pareto front (GPUs vs time vs cost)");
    md::table(os, {"GPUs", "layout", "time", "cost", "MFU"}, pareto_rows(r), {true, false, true, true, true});
  }
}

void write_plan_html(std::ostream& os, const PlanReport& r) {
  html::Document d(title(r), searched(r));
  const Scenario& s = r.scenario;
  d.facts({{"Scenario", r.scenario_label},
           {"Training", describe_training(s)},
           {"Framework", framework_summary(r)}});
  if (r.result.plans.empty()) {
    d.paragraph("No plan: none of the layouts fits in memory" + std::string(r.budget_text.empty() ? "" : " within the budget") + ".");
    os << d.str();
    return;
  }
  d.heading("Time to train");
  d.figure(time_vs_gpus(r), "Each ranked plan; the Pareto front of GPUs against time to train and cost in bold, its likely range (the "
                            "10th-90th percentile of the model's cross-validated error) dashed. Hover a point for its layout.");
  if (s.hardware.has_price() && s.training.train_tokens > 0)
    d.figure(cost_vs_time(r), "Cost against time to train for the ranked plans; the Pareto front in bold.");
  d.heading("Ranked plans");
  d.table(plan_table_header(), plan_table_rows(r), plan_numeric());
  d.heading("Where the time goes");
  d.figure(breakdowns(r), "Seconds per step by part for the top plans (critical pipeline stage, exposed communication only).");
  if (r.result.best_per_count.size() > 1) {
    d.heading("Fastest plan per GPU count", 3);
    d.table(per_count_header(), per_count_rows(r), kPerCountNumeric);
  }
  if (r.result.pareto.size() > 1) {
    d.heading("Pareto front", 3);
    d.table({"GPUs", "layout", "time", "cost", "MFU"}, pareto_rows(r), {true, false, true, true, true});
  }
  os << d.str();
}

}  // namespace trainsim
