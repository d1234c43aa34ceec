#include "cluster_document.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "html_document.hpp"
#include "markdown.hpp"
#include "svg_chart.hpp"
#include "table.hpp"

namespace trainsim {

namespace {

using sim::cluster::PolicyResult;
using sim::cluster::TimeSample;

constexpr std::size_t kCdfPoints = 400;
constexpr std::size_t kPoliciesPerChart = 3;  // more: small multiples  // quantiles drawn per policy: a 30,000-job trace stays a small page

std::vector<bool> policy_numeric() { return {false, true, true, true, true, true, true, true, true, true, true, true, true}; }

// One series per policy over the run's time samples: `value` of each sample; `capacity`: the GPUs in service as a line.
template <typename Value>
std::string over_time(const ClusterRun& r, const std::string& title, const svg::Axis& y, bool capacity, Value value) {
  double last = 0;
  for (const PolicyResult& p : r.policies)
    if (!p.series.empty()) last = std::max(last, p.series.back().t_s);
  const TimeUnit u = time_unit_for(last);
  svg::LineChart c;
  c.title = title;
  c.x = {"time since the first arrival", u.name, false, 0.0};
  c.y = y;
  for (const PolicyResult& p : r.policies) {
    svg::Series s{p.name, {}, {}, {}, true, false, true};
    for (const TimeSample& t : p.series) s.x.push_back(t.t_s / u.seconds), s.y.push_back(value(t));
    c.series.push_back(std::move(s));
  }
  if (capacity && !r.policies.empty() && !r.policies.front().series.empty())
    c.y_markers.push_back({"capacity", r.policies.front().series.front().capacity_gpus});
  return svg::render(c);
}

// The same, one small chart per policy on one shared y scale (small multiples: six policies in one chart overplot).
template <typename Value>
std::vector<std::string> over_time_multiples(const ClusterRun& r, const std::string& title, const svg::Axis& y, bool capacity, Value value) {
  double last = 0, top = 0;
  for (const PolicyResult& p : r.policies) {
    if (!p.series.empty()) last = std::max(last, p.series.back().t_s);
    for (const TimeSample& t : p.series) top = std::max({top, value(t), capacity ? t.capacity_gpus : 0.0});
  }
  const TimeUnit u = time_unit_for(last);
  std::vector<std::string> charts;
  for (const PolicyResult& p : r.policies) {
    svg::LineChart c;
    c.title = title + ": " + p.name;
    c.x = {"time since the first arrival", u.name, false, 0.0, last > 0 ? last / u.seconds : 1.0};
    c.y = {y.unit, "", false, 0, top > 0 ? top : 1};  // a small chart: its title says what, the axis only the unit
    c.width = 360, c.height = 240;
    svg::Series s{p.name, {}, {}, {}, true, false, true};
    for (const TimeSample& t : p.series) s.x.push_back(t.t_s / u.seconds), s.y.push_back(value(t));
    c.series.push_back(std::move(s));
    if (capacity && !p.series.empty()) c.y_markers.push_back({"capacity", p.series.front().capacity_gpus});
    charts.push_back(svg::render(c));
  }
  return charts;
}

// The share of finished jobs that waited at most w, per policy, at kCdfPoints quantiles of the waits, on a log time
// axis (waits span seconds to days); a wait under a second is drawn at one second.
std::string wait_cdf(const ClusterRun& r) {
  svg::LineChart c;
  c.title = "Wait time distribution (CDF)";
  c.x = {"wait (log scale; under 1 s drawn at 1 s)", "seconds", true};
  c.y = {"finished jobs that waited at most this long", "fraction", false, 0, 1};
  for (const PolicyResult& p : r.policies) {
    std::vector<double> waits;
    for (const auto& rec : p.records)
      if (rec.finished && rec.wait_s >= 0) waits.push_back(std::max(rec.wait_s, 1.0));
    std::sort(waits.begin(), waits.end());
    svg::Series s{p.name, {}, {}, {}, true, false, true};
    const std::size_t n = waits.size();
    for (std::size_t k = 0; n > 0 && k <= kCdfPoints; ++k) {
      const std::size_t i = std::min(n - 1, k * (n - 1) / kCdfPoints);
      s.x.push_back(waits[i]), s.y.push_back(static_cast<double>(i + 1) / static_cast<double>(n));
    }
    c.series.push_back(std::move(s));
  }
  return svg::render(c);
}

std::string title(const ClusterRun& r) {
  std::string names;
  for (std::size_t i = 0; i < r.policies.size(); ++i) names += (i ? ", " : "") + r.policies[i].name;
  return "trainsim cluster: " + names;
}

}  // namespace

void print_cluster_markdown(std::ostream& os, const ClusterRun& r) {
  md::heading(os, title(r), 1);
  md::table(os, {"", ""}, {{"Cluster", cluster_text(r)}, {"Workload", workload_text(r)}});
  md::table(os, policy_table_header(), policy_table_rows(r), policy_numeric());
  if (r.recorded_n > 0)
    os << "Recorded in the trace (" << r.recorded_n << " jobs): wait mean " << fixed(r.recorded_mean_wait_s, 1) << " s, p50 "
       << fixed(r.recorded_p50_wait_s, 1) << " s, p99 " << fixed(r.recorded_p99_wait_s, 1) << " s.\n";
  for (const std::string& n : r.notes) os << "\n> " << md::text(n) << "\n";
}

void write_cluster_html(std::ostream& os, const ClusterRun& r) {
  html::Document d(title(r), workload_text(r));
  d.facts({{"Cluster", cluster_text(r)}, {"Workload", workload_text(r)}});
  d.heading("Policies side by side");
  d.table(policy_table_header(), policy_table_rows(r), policy_numeric());
  for (const std::string& n : r.notes) d.paragraph(n);
  d.heading("Over time");
  // More policies than one chart keeps apart: a small chart each, on one scale.
  const bool multiples = r.policies.size() > kPoliciesPerChart;
  auto chart = [&](const std::string& name, const svg::Axis& y, bool capacity, auto value, const std::string& caption) {
    if (multiples) d.figures(over_time_multiples(r, name, y, capacity, value), caption + " One chart per policy, on one scale.");
    else d.figure(over_time(r, name, y, capacity, value), caption);
  };
  chart("Allocated GPUs", {"allocated GPUs", "GPUs", false, 0.0}, true, [](const TimeSample& t) { return t.allocated_gpus; },
        "GPUs held by running jobs at each sample, per policy; the dashed line is the GPUs in service at the start.");
  chart("Queue length", {"jobs waiting", "jobs", false, 0.0}, false, [](const TimeSample& t) { return static_cast<double>(t.queued); },
        "Jobs waiting to start at each sample, per policy.");
  chart("Fragmentation", {"free GPUs no waiting job can use", "GPUs", false, 0.0}, false, [](const TimeSample& t) { return t.fragmented_gpus; },
        "Free GPUs that no waiting job can use on their node (FGD, Weng et al. ATC'23), per policy.");
  if (!r.fill) {
    d.heading("Waits");
    d.figure(wait_cdf(r), "Share of finished jobs that waited at most the time on the x axis, per policy.");
  }
  os << d.str();
}

}  // namespace trainsim
