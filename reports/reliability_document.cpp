#include "reliability_document.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "html_document.hpp"
#include "markdown.hpp"
#include "models/core/units.hpp"
#include "svg_chart.hpp"
#include "table.hpp"

namespace trainsim {

using namespace trainsim::sim;

namespace {

using Rows = std::vector<std::vector<std::string>>;

constexpr int kWideChart = 960;  // pixels: room under the bars for names such as "incremental checkpoints"

// ---- Units on the charts' axes (the data stay in seconds and hours) -------------------------------

struct TimeUnit {
  const char* name;
  double seconds;
};
// The unit a duration of about `s` reads best in: seconds below 2 min, minutes below 2 h, hours below 2 d.
TimeUnit unit_for(double s) {
  if (!(s < 2 * 86400.0)) return {"days", 86400};
  if (s >= 2 * kSecondsPerHour) return {"hours", kSecondsPerHour};
  if (s >= 120) return {"minutes", 60};
  return {"seconds", 1};
}

std::string title(const ReliabilityReport& r) {
  return "trainsim reliability: " + r.scenario.model.name + " on " + std::to_string(r.job.gpus) + " x " + r.scenario.hardware.gpu.name;
}

std::vector<std::pair<std::string, std::string>> fact_pairs(const ReliabilityReport& r) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const ReliabilityFact& f : reliability_facts(r)) out.emplace_back(f.label, f.text);
  return out;
}

// The sweep row's cells, as one line: the tip of its point.
std::string joined(const std::vector<std::string>& header, const std::vector<std::string>& row) {
  std::string out;
  for (std::size_t i = 0; i < header.size() && i < row.size(); ++i) {
    if (row[i].empty()) continue;
    if (!out.empty()) out += ", ";
    out += header[i] + " " + row[i];
  }
  return out;
}

// ---- Charts -----------------------------------------------------------------------------------------

// A reference value to mark on a chart's x axis: "Young" at 3.7 min reads "Young 3.7 min".
struct Reference {
  std::string name;
  std::string value;  // as text, with its unit
  double at;          // in the axis' unit
};

// The chart writes every x marker's label at the top of the frame, to the right of its line (to the left past 70%
// of the width). Markers whose labels would run into each other share one label, "Young 3.7 min, Daly 3.7 min", on
// the member of the group where it stays inside the frame (the names alone where the values do not fit); the others
// keep their lines unlabelled. Positions are estimated from the values shown (`xs` and the references), widened as
// the chart's rounded ticks widen them, at the chart's estimate of 6.5 px a character.
std::vector<svg::Marker> readable_markers(std::vector<Reference> refs, const std::vector<double>& xs, bool log, int width) {
  auto t = [log](double v) { return log ? std::log10(v) : v; };
  auto shown = [log](double v) { return std::isfinite(v) && (!log || v > 0); };
  std::erase_if(refs, [&](const Reference& x) { return !shown(x.at); });
  double lo = INFINITY, hi = -INFINITY;
  for (double v : xs)
    if (shown(v)) lo = std::min(lo, t(v)), hi = std::max(hi, t(v));
  for (const Reference& x : refs) lo = std::min(lo, t(x.at)), hi = std::max(hi, t(x.at));
  const double pad = hi > lo ? 0.1 * (hi - lo) : 1;
  lo -= pad, hi += pad;
  const double frame = width - 96.0;  // the chart's left (72) and right (24) margins
  struct Extent {
    double from, to;
  };
  auto extent = [&](double pos, const std::string& label) {
    const double len = 6.5 * static_cast<double>(label.size()) + 4;
    return pos > 0.7 * frame ? Extent{pos - len, pos} : Extent{pos, pos + len};
  };
  struct Member {
    const Reference* ref;
    double pos;
  };
  struct Placed {
    std::size_t member;
    std::string label;
    Extent extent;
  };
  // The label of a group and the member that carries it.
  auto place = [&](const std::vector<Member>& g) {
    std::string full, names;
    for (const Member& m : g) {
      full += (full.empty() ? "" : ", ") + m.ref->name + " " + m.ref->value;
      names += (names.empty() ? "" : ", ") + m.ref->name;
    }
    for (const std::string& label : {full, names})
      for (std::size_t i = 0; i < g.size(); ++i) {
        const Extent e = extent(g[i].pos, label);
        if (e.from >= -4 && e.to <= frame + 4) return Placed{i, label, e};
      }
    return Placed{0, names, extent(g[0].pos, names)};
  };
  std::sort(refs.begin(), refs.end(), [](const Reference& a, const Reference& b) { return a.at < b.at; });
  std::vector<std::vector<Member>> groups;
  for (const Reference& x : refs) {
    const Member m{&x, (t(x.at) - lo) / (hi - lo) * frame};
    if (!groups.empty()) {
      const Extent e = extent(m.pos, x.name + " " + x.value), g = place(groups.back()).extent;
      if (e.from < g.to + 8 && e.to > g.from - 8) {
        groups.back().push_back(m);
        continue;
      }
    }
    groups.push_back({m});
  }
  std::vector<svg::Marker> out;
  for (const auto& g : groups) {
    const Placed p = place(g);
    for (std::size_t i = 0; i < g.size(); ++i) out.push_back({i == p.member ? p.label : "", g[i].ref->at});
  }
  return out;
}

// A log axis from just below to just above the values and markers, rather than rounded out to whole decades (the
// interval sweep spans a quarter to four times its centre: 16x, inside one or two decades).
void tight_log_range(svg::Axis& axis, const std::vector<double>& xs, const std::vector<Reference>& refs) {
  double lo = INFINITY, hi = -INFINITY;
  for (double v : xs)
    if (std::isfinite(v) && v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
  for (const Reference& x : refs)
    if (std::isfinite(x.at) && x.at > 0) lo = std::min(lo, x.at), hi = std::max(hi, x.at);
  if (hi > lo) axis.min = lo / 1.2, axis.max = hi * 1.2;
}

// ETTR at each interval of the sweep: the Monte-Carlo mean (its p05 and p95 across runs) beside Daly's complete
// model and 1 - first-order waste; Young's, Daly's and the simulated best interval marked.
std::string interval_chart(const ReliabilityReport& r) {
  const ReliabilityJob& job = r.job;
  const TimeUnit u = unit_for(r.sweep.best_interval_s());
  svg::LineChart c;
  c.title = "ETTR vs checkpoint interval";
  c.x = {"checkpoint interval", u.name, true};
  c.y = {"ETTR", "%"};
  const ReliabilityTable cells = reliability_interval_table(r);
  svg::Series mc{"Monte-Carlo mean", {}, {}, {}, true, true, false, true};
  svg::Series p05{"Monte-Carlo p05 across runs", {}, {}, {}, true, false, false, false, true};
  svg::Series p95{"Monte-Carlo p95 across runs", {}, {}, {}, true, false, false, false, true};
  svg::Series daly{"Daly's complete model", {}, {}, {}, true, false, false, false, true};
  svg::Series first{"1 - first-order waste", {}, {}, {}, true, false, false, false, true};
  for (std::size_t i = 0; i < r.sweep.rows.size(); ++i) {
    const StudyRow& x = r.sweep.rows[i];
    const double at = x.config.interval_s / u.seconds;
    mc.x.push_back(at), mc.y.push_back(100 * x.stats.ettr.mean);
    mc.tips.push_back(joined(cells.header, cells.rows[i]) + (i == r.sweep.best ? " (best by simulation)" : ""));
    p05.x.push_back(at), p05.y.push_back(100 * x.stats.ettr.p05);
    p95.x.push_back(at), p95.y.push_back(100 * x.stats.ettr.p95);
    daly.x.push_back(at), daly.y.push_back(x.model_ettr ? 100 * *x.model_ettr : NAN);
    first.x.push_back(at), first.y.push_back(x.first_order_ettr ? 100 * *x.first_order_ettr : NAN);
  }
  c.series = {mc, p05, p95, daly, first};
  std::vector<Reference> refs;
  auto mark = [&](const std::string& name, double s) {
    if (std::isfinite(s) && s > 0) refs.push_back({name, format_seconds(s), s / u.seconds});
  };
  if (std::isfinite(job.mtbf_s)) {
    mark("Young", job.young_interval_s);
    mark("Daly", job.daly_interval_s);
  }
  mark("best", r.sweep.best_interval_s());
  if (job.settings.interval == IntervalChoice::Given || job.settings.interval == IntervalChoice::Steps) mark("configured", r.base.config.interval_s);
  tight_log_range(c.x, mc.x, refs);
  c.x_markers = readable_markers(refs, mc.x, true, c.width);
  return svg::render(c);
}

// Runs per bin of the time lost per run (a frequency polygon through the bins' centres), with the p05, mean and
// p95 of the runs marked (the statistics the result table shows, in hours rather than GPU-hours).
std::string lost_time_chart(const ReliabilityReport& r) {
  const sim::LostTimeDistribution& d = r.lost_time;
  const bool minutes = d.edges_h.back() < 2;
  const double per_h = minutes ? 60 : 1;
  const std::string unit = minutes ? "min" : "h";
  svg::LineChart c;
  c.title = "Time lost per run (Monte-Carlo, " + std::to_string(r.runs) + " runs)";
  c.x = {"time lost per run", minutes ? "minutes" : "hours"};
  c.y = {"runs in the bin", "runs", false, 0};
  svg::Series s{"runs per bin of " + fixed(per_h * (d.edges_h[1] - d.edges_h[0]), 2) + " " + unit, {}, {}, {}, true, true, false, true};
  for (std::size_t i = 0; i < d.runs.size(); ++i) {
    const double lo = per_h * d.edges_h[i], hi = per_h * d.edges_h[i + 1];
    s.x.push_back((lo + hi) / 2);
    s.y.push_back(d.runs[i]);
    s.tips.push_back(std::to_string(d.runs[i]) + (d.runs[i] == 1 ? " run" : " runs") + " lost " + fixed(lo, 2) + "-" + fixed(hi, 2) + " " + unit);
  }
  c.series.push_back(std::move(s));
  const std::vector<Reference> refs{{"p05", fixed(per_h * d.p05_h, 1) + " " + unit, per_h * d.p05_h},
                                     {"mean", fixed(per_h * d.mean_h, 1) + " " + unit, per_h * d.mean_h},
                                     {"p95", fixed(per_h * d.p95_h, 1) + " " + unit, per_h * d.p95_h}};
  c.x_markers = readable_markers(refs, c.series.front().x, false, c.width);
  return svg::render(c);
}

// Per what-if variant in `rows`, the share of the mean wall clock that did not go to kept training, by where it went.
std::string what_if_chart(const std::string& chart_title, const std::vector<const StudyRow*>& rows) {
  svg::BarChart c;
  c.title = chart_title;
  c.y = {"share of the wall clock", "%"};
  c.category_label = "variant";
  c.width = kWideChart;
  const char* parts[] = {"checkpoint pauses", "redone work", "recovery", "waiting for nodes", "regrowing", "running shrunk (lost speed)"};
  for (const char* p : parts) c.segments.push_back({p, {}, {}});
  for (const StudyRow* x : rows) {
    c.categories.push_back(x->label);
    const TimeShares t = time_shares(x->stats);
    const double v[] = {t.checkpoint, t.rework, t.recovery, t.wait, t.reconfigure, t.shrunk};
    for (std::size_t i = 0; i < std::size(parts); ++i) {
      const double share = t.wall > 0 ? 100 * v[i] / t.wall : NAN;
      c.segments[i].values.push_back(share);
      c.segments[i].tips.push_back(x->label + ": " + parts[i] + " " + fixed(share, 2) + "% of " + format_seconds(t.wall) + " (" + format_seconds(v[i]) +
                                   "); ETTR " + fixed(100 * x->stats.ettr.mean, 2) + "%");
    }
  }
  return svg::render(c);
}

// The what-ifs in two charts, each with the job as configured first: other checkpoint methods (same spares, same
// elastic setting), and other spares or elastic shrink. Empty titles and rows where a group has no variant.
std::vector<std::pair<std::string, std::vector<const StudyRow*>>> what_if_groups(const ReliabilityReport& r) {
  std::vector<std::pair<std::string, std::vector<const StudyRow*>>> groups{{"What if: checkpoint methods", {}}, {"What if: spare nodes and elastic shrink", {}}};
  if (r.what_if.empty()) return {};
  const StudyRow& base = r.what_if.front();
  for (auto& g : groups) g.second.push_back(&base);
  for (std::size_t i = 1; i < r.what_if.size(); ++i) {
    const StudyRow& x = r.what_if[i];
    const bool same_recovery = x.config.spare_nodes == base.config.spare_nodes && x.config.elastic == base.config.elastic;
    groups[same_recovery ? 0 : 1].second.push_back(&x);
  }
  std::vector<std::pair<std::string, std::vector<const StudyRow*>>> out;
  for (auto& g : groups)
    if (g.second.size() > 1) out.push_back(std::move(g));
  return out;
}

// ETTR's change against the job as configured, in points, for each sensitivity case at the current interval and
// at its own.
std::string sensitivity_chart(const ReliabilityReport& r) {
  svg::BarChart c;
  c.title = "Sensitivity: ETTR against the job as configured";
  c.width = kWideChart;
  c.y = {"ETTR change", "points"};
  c.category_label = "change";
  c.stacked = false;
  c.segments = {{"at the current interval", {}, {}}, {"at the case's own interval", {}, {}}};
  const double now = r.base.stats.ettr.mean;
  for (const SensitivityRow& x : r.sensitivity) {
    c.categories.push_back(x.at_current.label);
    const StudyRow* rows[] = {&x.at_current, &x.at_own};
    for (std::size_t i = 0; i < 2; ++i) {
      const double delta = 100 * (rows[i]->stats.ettr.mean - now);
      c.segments[i].values.push_back(delta);
      c.segments[i].tips.push_back(x.at_current.label + ", " + c.segments[i].name + " (" + format_seconds(rows[i]->config.interval_s) + "): ETTR " +
                                   fixed(100 * rows[i]->stats.ettr.mean, 2) + "%, " + (delta >= 0 ? "+" : "") + fixed(delta, 2) + " points");
    }
  }
  return svg::render(c);
}

// ETTR at its best interval against the blocking checkpoint cost, with the recovery as configured and instant.
std::string frontier_chart(const ReliabilityReport& r) {
  svg::LineChart c;
  c.title = "ETTR vs blocking checkpoint cost";
  c.x = {"blocking checkpoint cost", "seconds", true};
  c.y = {"ETTR at the best interval", "%"};
  const ReliabilityTable cells = reliability_frontier_table(r);
  svg::Series mc{"Monte-Carlo mean, R = " + format_seconds(r.base.recovery_s), {}, {}, {}, true, true, false, true};
  svg::Series daly{"Daly's complete model", {}, {}, {}, true, false, false, false, true};
  svg::Series instant{"Monte-Carlo, instant recovery (R = 0)", {}, {}, {}, true, true};
  for (std::size_t i = 0; i < r.frontier.size(); ++i) {
    const FrontierPoint& p = r.frontier[i];
    const std::string tip = joined(cells.header, cells.rows[i]);
    mc.x.push_back(p.checkpoint_cost_s), mc.y.push_back(100 * p.best.stats.ettr.mean), mc.tips.push_back(tip);
    daly.x.push_back(p.checkpoint_cost_s), daly.y.push_back(100 * p.model_ettr);
    instant.x.push_back(p.checkpoint_cost_s), instant.y.push_back(100 * p.instant_recovery_ettr), instant.tips.push_back(tip);
  }
  c.series = {mc, daly, instant};
  c.y_markers.push_back({"ETTR 90%", 90});
  std::vector<Reference> refs;
  if (r.frontier_cost_for_ettr_90_s > 0) refs.push_back({"ETTR 90% at", format_seconds(r.frontier_cost_for_ettr_90_s), r.frontier_cost_for_ettr_90_s});
  if (r.frontier_cost_for_ettr_90_instant_s > 0)
    refs.push_back({"ETTR 90%, R = 0, at", format_seconds(r.frontier_cost_for_ettr_90_instant_s), r.frontier_cost_for_ettr_90_instant_s});
  tight_log_range(c.x, mc.x, refs);
  c.x_markers = readable_markers(refs, mc.x, true, c.width);
  return svg::render(c);
}

const char* const kFirstOrderNote =
    "first-order n/a: the first-order waste exceeds 100% there (the model assumes rare failures and is invalid)";

bool any_first_order_invalid(const ReliabilityReport& r) {
  for (const StudyRow& x : r.sweep.rows)
    if (!x.first_order_ettr) return true;
  return false;
}

Rows defaults_rows(const ReliabilityReport& r) {
  Rows rows;
  for (const auto& d : r.job.settings.defaults) rows.push_back({d.path, d.value, d.reason});
  return rows;
}

std::string scenario_defaults_line(const ReliabilityReport& r) {
  return std::to_string(r.scenario.defaults.size()) + " scenario defaults applied (listed under \"defaults\" in --format json).";
}

}  // namespace

// ---- Markdown ---------------------------------------------------------------------------------------

void print_reliability_markdown(std::ostream& os, const ReliabilityReport& r) {
  auto section = [&os](const ReliabilityTable& t) {
    md::heading(os, t.title);
    md::table(os, t.header, t.rows, t.numeric);
  };
  md::heading(os, title(r), 1);
  Rows facts;
  for (const auto& [label, text] : fact_pairs(r)) facts.push_back({label, text});
  md::table(os, {"", ""}, facts);

  section(reliability_result_table(r));
  os << md::text(reliability_result_note(r)) << "\n\n";
  const std::string shares = reliability_time_shares(r);
  if (!shares.empty()) os << "Where the time goes (share of wall clock): " << md::text(shares) << "\n\n";
  for (const std::string& line : reliability_closed_forms(r)) os << md::text(line) << "\n\n";

  if (!r.brief) {
    section(reliability_interval_table(r));
    if (any_first_order_invalid(r)) os << md::text(kFirstOrderNote) << "\n\n";
  }
  os << md::text(reliability_best_interval(r)) << "\n\n";
  if (!r.brief) {
    section(reliability_what_if_table(r));
    section(reliability_sensitivity_table(r));
  }
  if (r.has_frontier) {
    section(reliability_frontier_table(r));
    os << md::text(reliability_frontier_note(r)) << "\n\n";
  }

  if (!r.notes.empty()) {
    md::heading(os, "Notes");
    for (const auto& n : r.notes) os << "- " << md::cell(n) << "\n";
    os << "\n";
  }
  if (!r.job.settings.defaults.empty()) {
    md::heading(os, "Reliability defaults applied");
    md::table(os, {"path", "value", "reason"}, defaults_rows(r));
  }
  os << md::text(scenario_defaults_line(r)) << "\n";
}

// ---- HTML -------------------------------------------------------------------------------------------

void write_reliability_html(std::ostream& os, const ReliabilityReport& r) {
  html::Document d(title(r), r.label);
  d.facts(fact_pairs(r));
  auto table = [&d](const ReliabilityTable& t) { d.table(t.header, t.rows, t.numeric); };

  const ReliabilityTable result = reliability_result_table(r);
  d.heading("Result");
  d.paragraph(result.title);
  table(result);
  d.paragraph(reliability_result_note(r));
  const std::string shares = reliability_time_shares(r);
  if (!shares.empty()) d.paragraph("Where the time goes (share of wall clock): " + shares);
  if (!r.lost_time.runs.empty())
    d.figure(lost_time_chart(r),
             "How much wall clock each simulated run of the job as configured lost to checkpoints, redone work, recovery and waiting: "
             "runs per bin, with the runs' p05, mean and p95 marked. Times the job's " +
                 std::to_string(r.job.gpus) + " GPUs, these are the lost GPU-hours of the table.");

  d.heading("Checkpoint interval");
  for (const std::string& line : reliability_closed_forms(r)) d.paragraph(line);
  if (!r.sweep.rows.empty())
    d.figure(interval_chart(r),
             "Mean ETTR of the Monte-Carlo runs at each checkpoint interval (every interval sees the same failures; the dashed lines are "
             "the runs' p05 and p95, Daly's complete model and 1 - first-order waste), on a log scale; the dashed vertical lines mark "
             "Young's and Daly's intervals and the best by simulation.");
  if (!r.brief) {
    const ReliabilityTable sweep = reliability_interval_table(r);
    d.paragraph(sweep.title);
    table(sweep);
    if (any_first_order_invalid(r)) d.paragraph(kFirstOrderNote);
  }
  d.paragraph(reliability_best_interval(r));

  if (!r.brief) {
    const ReliabilityTable what_if = reliability_what_if_table(r);
    d.heading("What if");
    for (const auto& [chart_title, rows] : what_if_groups(r))
      d.figure(what_if_chart(chart_title, rows),
               "Share of each variant's mean wall clock that did not become kept training, by where it went (each variant at its own "
               "checkpoint interval by the job's rule); the rest is training kept.");
    d.paragraph(what_if.title);
    table(what_if);
    const ReliabilityTable sensitivity = reliability_sensitivity_table(r);
    d.heading("Sensitivity");
    if (!r.sensitivity.empty())
      d.figure(sensitivity_chart(r),
               "Mean ETTR of each case minus the job's as configured (" + fixed(100 * r.base.stats.ettr.mean, 2) +
                   "%), in percentage points: at the current checkpoint interval and at the case's own.");
    d.paragraph(sensitivity.title);
    table(sensitivity);
  } else {
    d.paragraph("--brief: the what-if and sensitivity studies were not run.");
  }

  if (r.has_frontier) {
    const ReliabilityTable frontier = reliability_frontier_table(r);
    d.heading("Frontier");
    if (!r.frontier.empty())
      d.figure(frontier_chart(r),
               "Mean ETTR at the best of three intervals around the exact optimum, for each blocking checkpoint cost (log scale), with the "
               "recovery as configured and with instant recovery; Daly's complete model dashed (hidden under the Monte-Carlo line where the "
               "two agree); the horizontal line is ETTR 90%, the vertical ones where each curve crosses it.");
    d.paragraph(frontier.title);
    table(frontier);
    d.paragraph(reliability_frontier_note(r));
  }

  if (!r.notes.empty()) {
    d.heading("Notes");
    for (const auto& n : r.notes) d.paragraph(n);
  }
  d.heading("Defaults");
  if (!r.job.settings.defaults.empty()) {
    d.paragraph("Reliability defaults applied:");
    d.table({"path", "value", "reason"}, defaults_rows(r));
  }
  d.paragraph(scenario_defaults_line(r));
  os << d.str();
}

}  // namespace trainsim
