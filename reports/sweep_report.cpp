#include "sweep_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "html_document.hpp"
#include "markdown.hpp"
#include "models/core/units.hpp"
#include "svg_chart.hpp"
#include "table.hpp"

namespace trainsim::sweep_report {
namespace {

using Json = nlohmann::json;

constexpr std::size_t kMaxSeries = 12;  // lines per chart; more are listed as left out

std::vector<std::string> names(const Json& list) {
  std::vector<std::string> out;
  for (const Json& n : list) out.push_back(n.get<std::string>());
  return out;
}

// A cell for people: numbers to 6 significant digits, text as it is, nothing as "-".
std::string cell(const Json& v) {
  if (v.is_null()) return "-";
  if (v.is_number()) return format_number(v.get<double>(), 6);
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

// A cell for scripts: numbers in full (JSON's shortest round-trip form).
std::string raw(const Json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

struct Grid {
  std::vector<std::string> header;
  std::vector<std::vector<Json>> rows;
  std::vector<bool> numeric;
};

Grid grid(const Json& m) {
  Grid g;
  const auto axes = names(m["axes"]), columns = names(m["columns"]);
  g.header.push_back("point");
  for (const auto& a : axes) g.header.push_back(a);
  for (const auto& c : columns) g.header.push_back(c);
  g.header.push_back("exit");
  g.header.push_back("error");
  for (const Json& r : m["rows"]) {
    std::vector<Json> row{r["index"]};
    for (const auto& a : axes) row.push_back(r["inputs"].value(a, Json()));
    for (const auto& c : columns) row.push_back(r["values"].value(c, Json()));
    row.push_back(r["exit_code"]);
    row.push_back(r.value("error", Json()));
    g.rows.push_back(std::move(row));
  }
  g.numeric.assign(g.header.size(), true);
  for (std::size_t k = 0; k < g.header.size(); ++k)
    for (const auto& row : g.rows)
      if (!row[k].is_null() && !row[k].is_number()) g.numeric[k] = false;
  g.numeric.back() = false;
  return g;
}

std::vector<std::vector<std::string>> as_text(const Grid& g, bool for_scripts) {
  std::vector<std::vector<std::string>> out;
  for (const auto& row : g.rows) {
    std::vector<std::string> r;
    for (const Json& v : row) r.push_back(for_scripts ? raw(v) : cell(v));
    out.push_back(std::move(r));
  }
  return out;
}

std::string summary(const Json& m) {
  std::string s = m["swept_command"].get<std::string>() + " at " + std::to_string(m["points"].get<std::size_t>()) + " points: " +
                  std::to_string(m["done"].get<std::size_t>()) + " done, " + std::to_string(m["failed"].get<std::size_t>()) + " failed";
  if (m["missing"].get<std::size_t>() > 0) s += ", " + std::to_string(m["missing"].get<std::size_t>()) + " MISSING (a partial sweep)";
  return s;
}

}  // namespace

Json merge(const Json& header, const std::vector<std::string>& axes, const std::vector<Column>& columns, const std::vector<std::string>& charts,
           const std::vector<std::optional<Json>>& records) {
  Json m;
  m["command"] = "sweep merge";
  m["sweep"] = header.value("sweep", std::string());
  m["fingerprint"] = header.value("fingerprint", std::string());
  m["swept_command"] = header.value("command", std::string());
  m["points"] = records.size();
  m["axes"] = axes;
  Json cols = Json::array(), pointers = Json::object();
  for (const Column& c : columns) cols.push_back(c.name), pointers[c.name] = c.pointer;
  m["columns"] = cols;
  m["column_pointers"] = pointers;
  m["charts"] = charts;
  std::size_t done = 0, failed = 0;
  Json rows = Json::array(), missing = Json::array();
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (!records[i]) {
      missing.push_back(i);
      continue;
    }
    const Json& r = *records[i];
    Json row;
    row["index"] = i;
    row["inputs"] = r.value("inputs", Json::object());
    row["seed"] = r.value("seed", Json());
    row["exit_code"] = r["exit_code"];
    Json values = Json::object();
    if (r["exit_code"] == 0) {
      ++done;
      const Json& result = r.contains("result") ? r["result"] : Json();
      for (const Column& c : columns) {
        Json v;
        try {
          const Json::json_pointer p(c.pointer);
          if (result.contains(p)) v = result[p];
        } catch (const Json::exception&) {
        }
        values[c.name] = (v.is_object() || v.is_array()) ? Json(v.dump()) : v;
      }
    } else {
      ++failed;
      row["error"] = r.value("error", std::string());
    }
    row["values"] = values;
    rows.push_back(std::move(row));
  }
  m["done"] = done;
  m["failed"] = failed;
  m["missing"] = missing.size();
  m["complete"] = missing.empty();
  m["missing_points"] = missing;
  m["rows"] = rows;
  return m;
}

void print_table(std::ostream& os, const Json& m) {
  os << "Sweep      " << m["sweep"].get<std::string>() << " (fingerprint " << m["fingerprint"].get<std::string>() << ")\n";
  os << "Points     " << summary(m) << "\n\n";
  const Grid g = grid(m);
  TextTable t(g.header);
  for (auto& row : as_text(g, false)) t.add_row(std::move(row));
  t.print(os);
}

void print_csv(std::ostream& os, const Json& m) {
  const Grid g = grid(m);
  for (std::size_t k = 0; k < g.header.size(); ++k) os << (k ? "," : "") << csv_field(g.header[k]);
  os << "\n";
  for (const auto& row : as_text(g, true)) {
    for (std::size_t k = 0; k < row.size(); ++k) os << (k ? "," : "") << csv_field(row[k]);
    os << "\n";
  }
}

void print_markdown(std::ostream& os, const Json& m) {
  md::heading(os, "Sweep " + m["sweep"].get<std::string>(), 2);
  os << md::text(summary(m)) << "\n\n";
  const Grid g = grid(m);
  md::table(os, g.header, as_text(g, false), g.numeric);
}

std::string html(const Json& m) {
  html::Document doc("Sweep: " + m["sweep"].get<std::string>(), summary(m));
  const auto axes = names(m["axes"]), columns = names(m["columns"]);
  const Json& rows = m["rows"];
  // x: the first axis whose values are all numbers, two or more of them; one line per value of the other axes.
  std::string x_axis;
  for (const auto& a : axes) {
    std::set<double> seen;
    bool all_numbers = !rows.empty();
    for (const Json& r : rows) {
      const Json v = r["inputs"].value(a, Json());
      if (!v.is_number()) all_numbers = false;
      else seen.insert(v.get<double>());
    }
    if (all_numbers && seen.size() >= 2) {
      x_axis = a;
      break;
    }
  }
  if (!x_axis.empty()) {
    for (const auto& c : names(m["charts"])) {
      // Seconds read better in the unit their size calls for.
      const bool seconds = c.size() > 2 && c.ends_with("_s");
      double y_max = 0;
      for (const Json& r : rows)
        if (const Json y = r["values"].value(c, Json()); y.is_number()) y_max = std::max(y_max, y.get<double>());
      const TimeUnit unit = time_unit_for(y_max);
      const double scale = seconds ? unit.seconds : 1.0;
      std::map<std::string, svg::Series> by_key;
      std::vector<std::string> order;
      bool any = false;
      double lo = INFINITY, hi = -INFINITY;
      for (const Json& r : rows) {
        const Json y = r["values"].value(c, Json());
        if (!y.is_number()) continue;
        std::string key;
        for (const auto& a : axes)
          if (a != x_axis) key += (key.empty() ? "" : ", ") + a + " " + cell(r["inputs"].value(a, Json()));
        if (key.empty()) key = c;
        if (!by_key.count(key)) order.push_back(key), by_key[key].name = key;
        const double x = r["inputs"][x_axis].get<double>();
        by_key[key].x.push_back(x);
        by_key[key].y.push_back(y.get<double>() / scale);
        by_key[key].tips.push_back(x_axis + " " + cell(r["inputs"][x_axis]) + ": " + cell(y));
        lo = std::min(lo, x), hi = std::max(hi, x);
        any = true;
      }
      if (!any) continue;
      svg::LineChart chart;
      chart.title = c + " against " + x_axis;
      chart.x.label = x_axis;
      chart.x.log = lo > 0 && hi / lo >= 8;
      chart.y.label = seconds ? c.substr(0, c.size() - 2) : c;
      if (seconds) chart.y.unit = unit.name;
      for (std::size_t k = 0; k < order.size() && k < kMaxSeries; ++k) {
        svg::Series s = by_key[order[k]];
        s.points = true;
        chart.series.push_back(std::move(s));
      }
      std::string caption = c + " at each " + x_axis + (order.size() > 1 ? ", one line per value of the other axes" : "");
      if (order.size() > kMaxSeries) caption += " (the first " + std::to_string(kMaxSeries) + " of " + std::to_string(order.size()) + " lines shown)";
      doc.figure(svg::render(chart), caption);
    }
  }
  doc.heading("Points");
  const Grid g = grid(m);
  doc.table(g.header, as_text(g, false), g.numeric);
  return doc.str();
}

}  // namespace trainsim::sweep_report
