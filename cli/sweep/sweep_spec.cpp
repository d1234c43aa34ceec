#include "sweep_spec.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>

#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"
#include "models/core/json_text.hpp"

namespace trainsim::cli::sweep {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

constexpr std::size_t kMaxPoints = 10'000'000;  // a grid beyond this is a mistake, not a sweep
constexpr std::size_t kMaxRange = 100'000;      // values one range may produce

// What the merged table keeps of each command's JSON by default: the figures a comparison reads, none that depend
// on the machine (run times), so a sharded sweep merges to the bytes of a single-process one.
const std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>>& default_columns() {
  static const std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> table = {
      {"estimate",
       {{"step_s", "/step/time_s"}, {"mfu", "/step/mfu"}, {"tokens_per_s", "/step/tokens_per_s"}, {"memory_bytes", "/memory/total_bytes"},
        {"fits", "/memory/fits"}, {"time_to_train_s", "/training/time_to_train_s"}, {"cost", "/training/cost"}}},
      {"plan",
       {{"feasible", "/feasible"}, {"framework", "/plans/0/framework/name"}, {"tp", "/plans/0/layout/tp"}, {"pp", "/plans/0/layout/pp"},
        {"dp", "/plans/0/layout/dp"}, {"cp", "/plans/0/layout/cp"}, {"zero", "/plans/0/layout/zero_stage"}, {"recompute", "/plans/0/layout/recompute"},
        {"step_s", "/plans/0/step/time_s"}, {"mfu", "/plans/0/step/mfu"}, {"time_to_train_s", "/plans/0/training/time_to_train_s"},
        {"cost", "/plans/0/training/cost"}}},
      {"simulate", {{"step_s", "/step/time_s"}, {"analytic_step_s", "/analytic/step/time_s"}}},
      {"cluster",
       {{"policy", "/policies/0/name"}, {"utilization", "/policies/0/utilization"}, {"mean_wait_s", "/policies/0/mean_wait_s"},
        {"p99_wait_s", "/policies/0/p99_wait_s"}, {"mean_jct_s", "/policies/0/mean_jct_s"}, {"goodput", "/policies/0/goodput"}}},
      {"reliability",
       {{"ettr", "/ettr/mean"}, {"time_to_train_s", "/time_to_train_s/mean"}, {"best_interval_s", "/best_interval_s"},
        {"lost_gpu_hours", "/lost_gpu_hours/mean"}, {"interruptions", "/interruptions/mean"}}},
      {"export", {}},
  };
  return table;
}

// The columns the HTML report draws against a numeric axis by default: the figures people compare, not the layout.
const std::vector<std::pair<std::string, std::vector<std::string>>>& default_charts() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> table = {
      {"estimate", {"time_to_train_s", "cost", "mfu", "step_s"}},
      {"plan", {"time_to_train_s", "cost", "mfu", "step_s"}},
      {"simulate", {"step_s"}},
      {"cluster", {"utilization", "mean_wait_s", "p99_wait_s"}},
      {"reliability", {"ettr", "time_to_train_s", "best_interval_s"}},
      {"export", {}},
  };
  return table;
}

[[noreturn]] void bad(const std::string& path, const Json& value, const std::string& expected, const std::string& why = "") {
  throw InputError(path, json_value_text(value), expected, why);
}

std::string text_of(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// {"from", "to", "step"} (added) or {"from", "to", "times"} (multiplied), both ends included.
std::vector<Json> range_values(const Json& r, const std::string& path) {
  if (!r.is_object() || !r.contains("from") || !r.contains("to") || (r.contains("step") == r.contains("times")))
    bad(path, r, "{\"from\": A, \"to\": B, \"step\": S} or {\"from\": A, \"to\": B, \"times\": F}");
  for (const char* k : {"from", "to", "step", "times"})
    if (r.contains(k) && !(r[k].is_number() && std::isfinite(r[k].get<double>()))) bad(path + "/" + k, r[k], "a finite number");
  const double from = r["from"].get<double>(), to = r["to"].get<double>();
  const bool integral = r["from"].is_number_integer() && r["to"].is_number_integer() && (r.contains("times") || r["step"].is_number_integer());
  std::vector<Json> out;
  auto push = [&](double v) {
    if (out.size() >= kMaxRange) bad(path, r, "a range of at most " + std::to_string(kMaxRange) + " values");
    if (integral) out.emplace_back(static_cast<long long>(std::llround(v)));
    else out.emplace_back(v);
  };
  if (r.contains("step")) {
    const double step = r["step"].get<double>();
    if (!(step > 0)) bad(path + "/step", r["step"], "a step above 0");
    if (to < from) bad(path + "/to", r["to"], "at least from (" + text_of(r["from"]) + ")");
    const double n = std::floor((to - from) / step + 1e-9);
    if (n >= static_cast<double>(kMaxRange)) bad(path, r, "a range of at most " + std::to_string(kMaxRange) + " values");
    for (double i = 0; i <= n; ++i) push(from + i * step);
  } else {
    const double f = r["times"].get<double>();
    if (!(f > 1)) bad(path + "/times", r["times"], "a factor above 1");
    if (!(from > 0)) bad(path + "/from", r["from"], "above 0 with times");
    if (to < from) bad(path + "/to", r["to"], "at least from (" + text_of(r["from"]) + ")");
    for (double v = from; v <= to * (1 + 1e-12); v *= f) push(v);
  }
  return out;
}

Axis parse_axis(const Json& a, const std::string& path, const fs::path& base) {
  if (!a.is_object()) bad(path, a, "an axis {\"name\", \"path\" | \"flag\" | \"scenario\", \"values\" | \"range\"}");
  for (auto it = a.begin(); it != a.end(); ++it)
    if (it.key() != "name" && it.key() != "path" && it.key() != "flag" && it.key() != "scenario" && it.key() != "values" && it.key() != "range")
      bad(path + "/" + it.key(), it.value(), "one of name, path, flag, scenario, values, range");
  Axis x;
  const int kinds = a.contains("path") + a.contains("flag") + a.contains("scenario");
  if (kinds != 1) bad(path, a, "exactly one of \"path\" (a scenario field), \"flag\" or \"scenario\" (files)");
  if (a.contains("scenario")) {
    x.kind = Axis::Kind::Scenario;
    const Json& files = a["scenario"];
    if (!files.is_array() || files.empty()) bad(path + "/scenario", files, "a list of scenario files");
    for (std::size_t i = 0; i < files.size(); ++i) {
      if (!files[i].is_string() || files[i].get<std::string>().empty()) bad(path + "/scenario/" + std::to_string(i), files[i], "a scenario file");
      x.values.emplace_back((base / files[i].get<std::string>()).lexically_normal().string());
    }
    if (a.contains("values") || a.contains("range")) bad(path, a, "a scenario axis lists its files under \"scenario\" alone");
  } else {
    const bool is_path = a.contains("path");
    x.kind = is_path ? Axis::Kind::Path : Axis::Kind::Flag;
    const Json& t = is_path ? a["path"] : a["flag"];
    const std::string where = path + (is_path ? "/path" : "/flag");
    if (!t.is_string()) bad(where, t, is_path ? "a JSON pointer into the scenario, e.g. /hardware/gpu" : "a flag, e.g. --gpus");
    x.target = t.get<std::string>();
    if (is_path && (x.target.size() < 2 || x.target[0] != '/')) bad(where, t, "a JSON pointer into the scenario, e.g. /hardware/gpu");
    if (!is_path && (x.target.size() < 3 || !x.target.starts_with("--") || x.target.find_first_of(" =") != std::string::npos))
      bad(where, t, "a long flag such as --gpus");
    if (a.contains("values") == a.contains("range")) bad(path, a, "either \"values\" or \"range\"");
    if (a.contains("values")) {
      const Json& v = a["values"];
      if (!v.is_array() || v.empty()) bad(path + "/values", v, "a non-empty list");
      for (const Json& e : v) x.values.push_back(e);
    } else {
      x.values = range_values(a["range"], path + "/range");
      if (x.values.empty()) bad(path + "/range", a["range"], "a range with at least one value");
    }
    if (!is_path)
      for (std::size_t i = 0; i < x.values.size(); ++i)
        if (x.values[i].is_object() || x.values[i].is_array() || x.values[i].is_null())
          bad(path + "/values/" + std::to_string(i), x.values[i], "a flag value: text, a number or true/false");
  }
  if (a.contains("name")) {
    if (!a["name"].is_string() || a["name"].get<std::string>().empty()) bad(path + "/name", a["name"], "a column name");
    x.name = a["name"].get<std::string>();
  } else {
    x.name = x.kind == Axis::Kind::Scenario ? "scenario" : x.kind == Axis::Kind::Path ? x.target.substr(x.target.rfind('/') + 1) : x.target.substr(2);
  }
  return x;
}

}  // namespace

const std::vector<std::string>& sweep_commands() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& [c, _] : default_columns()) n.push_back(c);
    return n;
  }();
  return names;
}

Spec parse_spec(const Json& doc, const std::string& path) {
  Spec s;
  s.file = path;
  s.document = doc;
  const fs::path base = fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
  if (!doc.is_object()) bad("/", doc, "a sweep: {\"command\", \"scenario\", \"args\", \"axes\", \"seed\", \"columns\"}");
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    static const std::set<std::string> keys = {"command", "scenario", "args", "axes", "seed", "seed_per_point", "columns", "charts", "description"};
    if (!keys.count(it.key())) bad("/" + it.key(), it.value(), "one of command, scenario, args, axes, seed, seed_per_point, columns, charts, description");
  }
  const auto& cmds = sweep_commands();
  if (!doc.contains("command") || !doc["command"].is_string() || std::find(cmds.begin(), cmds.end(), doc["command"].get<std::string>()) == cmds.end())
    bad("/command", doc.value("command", Json()), "one of estimate, plan, simulate, cluster, reliability, export");
  s.command = doc["command"].get<std::string>();
  if (doc.contains("scenario")) {
    if (!doc["scenario"].is_string() || doc["scenario"].get<std::string>().empty()) bad("/scenario", doc["scenario"], "a scenario file");
    s.scenario = (base / doc["scenario"].get<std::string>()).lexically_normal().string();
  }
  if (doc.contains("args")) {
    const Json& a = doc["args"];
    if (!a.is_array()) bad("/args", a, "a list of arguments, e.g. [\"--framework\", \"megatron-core\"]");
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!a[i].is_string() && !a[i].is_number()) bad("/args/" + std::to_string(i), a[i], "an argument (text or a number)");
      s.args.push_back(text_of(a[i]));
    }
  }
  if (!doc.contains("axes") || !doc["axes"].is_array()) bad("/axes", doc.value("axes", Json()), "a list of axes");
  std::set<std::string> names;
  std::size_t count = 1;
  for (std::size_t i = 0; i < doc["axes"].size(); ++i) {
    const Json& a = doc["axes"][i];
    const std::string at = "/axes/" + std::to_string(i);
    std::vector<Axis> group;
    if (a.is_object() && a.contains("zip")) {
      if (a.size() != 1 || !a["zip"].is_array() || a["zip"].size() < 2) bad(at, a, "{\"zip\": [two or more axes]} that move together");
      for (std::size_t k = 0; k < a["zip"].size(); ++k) group.push_back(parse_axis(a["zip"][k], at + "/zip/" + std::to_string(k), base));
      for (std::size_t k = 1; k < group.size(); ++k)
        if (group[k].values.size() != group[0].values.size())
          bad(at + "/zip/" + std::to_string(k), a["zip"][k], "as many values as the first zipped axis (" + std::to_string(group[0].values.size()) + ")");
    } else {
      group.push_back(parse_axis(a, at, base));
    }
    for (const Axis& x : group) {
      if (!names.insert(x.name).second) bad(at, a, "axes with distinct names (\"" + x.name + "\" twice)");
      if (x.kind == Axis::Kind::Path && s.command == "export") bad(at, a, "a flag or scenario axis: export takes a plan file, not scenario fields");
    }
    if (count > kMaxPoints / group[0].values.size()) bad("/axes", doc["axes"], "at most " + std::to_string(kMaxPoints) + " points");
    count *= group[0].values.size();
    s.axes.push_back(std::move(group));
  }
  if (doc.contains("seed")) {
    const Json& v = doc["seed"];
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<long long>() >= 0)) bad("/seed", v, "a whole number from 0");
    s.seed = v.get<std::uint64_t>();
  }
  if (doc.contains("seed_per_point")) {
    if (!doc["seed_per_point"].is_boolean()) bad("/seed_per_point", doc["seed_per_point"], "true or false");
    s.seed_per_point = doc["seed_per_point"].get<bool>();
  }
  if (doc.contains("columns")) {
    const Json& c = doc["columns"];
    if (!c.is_object() || c.empty()) bad("/columns", c, "an object {name: JSON pointer into the command's JSON}");
    for (auto it = c.begin(); it != c.end(); ++it) {
      if (!it.value().is_string() || (!it.value().get<std::string>().empty() && it.value().get<std::string>()[0] != '/'))
        bad("/columns/" + it.key(), it.value(), "a JSON pointer such as /step/time_s");
      if (names.count(it.key())) bad("/columns/" + it.key(), it.value(), "a name no axis has");
      s.columns.emplace_back(it.key(), it.value().get<std::string>());
    }
  } else {
    // The command's own columns, less any an axis already names (the axis holds that value).
    for (const auto& [c, cols] : default_columns())
      if (c == s.command)
        for (const auto& col : cols)
          if (!names.count(col.first)) s.columns.push_back(col);
  }
  if (doc.contains("charts")) {
    const Json& c = doc["charts"];
    if (!c.is_array()) bad("/charts", c, "a list of column names to draw against the first numeric axis");
    for (std::size_t i = 0; i < c.size(); ++i) {
      const bool known = c[i].is_string() && std::any_of(s.columns.begin(), s.columns.end(), [&](const auto& col) { return col.first == c[i].get<std::string>(); });
      if (!known) bad("/charts/" + std::to_string(i), c[i], "one of the sweep's columns");
      s.charts.push_back(c[i].get<std::string>());
    }
  } else {
    for (const auto& [c, names_charted] : default_charts())
      if (c == s.command)
        for (const auto& n : names_charted)
          if (std::any_of(s.columns.begin(), s.columns.end(), [&](const auto& col) { return col.first == n; })) s.charts.push_back(n);
  }
  return s;
}

Spec read_spec(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in || fs::is_directory(path)) throw InputError("SWEEP", "\"" + path + "\"", "a readable sweep file (JSON)");
  std::stringstream text;
  text << in.rdbuf();
  return parse_spec(parse_json_text(text.str(), path, "SWEEP"), path);
}

std::size_t Spec::count() const {
  std::size_t n = 1;
  for (const auto& g : axes) n *= g[0].values.size();
  return n;
}

bool Spec::seeded() const { return command == "simulate" || command == "cluster" || command == "reliability"; }

Point Spec::point(std::size_t index) const {
  Point p;
  p.index = index;
  // Mixed radix, the last axis fastest.
  std::vector<std::size_t> at(axes.size());
  std::size_t rest = index;
  for (std::size_t g = axes.size(); g-- > 0;) {
    at[g] = rest % axes[g][0].values.size();
    rest /= axes[g][0].values.size();
  }
  std::string scenario_file = scenario;
  std::vector<std::string> tail;
  for (std::size_t g = 0; g < axes.size(); ++g)
    for (const Axis& x : axes[g]) {
      const Json& v = x.values[at[g]];
      p.inputs[x.name] = v;
      switch (x.kind) {
        case Axis::Kind::Scenario: scenario_file = v.get<std::string>(); break;
        case Axis::Kind::Path: tail.push_back("--set"), tail.push_back(x.target + "=" + v.dump()); break;
        case Axis::Kind::Flag: tail.push_back(x.target), tail.push_back(text_of(v)); break;
      }
    }
  if (!scenario_file.empty()) p.args.push_back(scenario_file);
  for (const std::string& a : args) p.args.push_back(a);
  for (std::string& a : tail) p.args.push_back(std::move(a));
  if (seeded()) {
    p.seed = seed + (seed_per_point ? index : 0);
    p.args.push_back("--seed");
    p.args.push_back(std::to_string(*p.seed));
  }
  if (command != "export") {
    p.args.push_back("--format");
    p.args.push_back("json");
  }
  return p;
}

std::string Spec::fingerprint() const {
  Json what = document;
  what["/resolved_scenario"] = scenario;
  // FNV-1a over the canonical dump: enough to tell two sweeps apart in one folder.
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : what.dump()) h = (h ^ c) * 1099511628211ULL;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::pair<std::size_t, std::size_t> parse_shard(const std::string& text, const std::string& flag) {
  const std::size_t slash = text.find('/');
  auto number = [](const std::string& s, std::size_t* out) {
    if (s.empty() || s.size() > 7 || s.find_first_not_of("0123456789") != std::string::npos) return false;
    *out = std::stoul(s);
    return true;
  };
  std::size_t i = 0, n = 0;
  if (slash == std::string::npos || !number(text.substr(0, slash), &i) || !number(text.substr(slash + 1), &n) || n < 1 || i >= n)
    throw InputError(flag, "\"" + text + "\"", "I/N with 0 <= I < N <= 9,999,999 (this shard of N), e.g. 0/4");
  return {i, n};
}

}  // namespace trainsim::cli::sweep
