// Trace import: "kind:path" dispatch, the import report, and the small CSV and number readers the importers
// share (trace_alibaba.cpp, trace_chronus.cpp, trace_swf.cpp, trace_csv.cpp). Origins and schemas of the public
// traces: ../shared/traces/README.md.
#include "sim/cluster/traces/trace_import.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <unordered_set>

#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"

namespace trainsim::sim::cluster {

std::uint64_t ImportReport::skipped_total() const {
  std::uint64_t n = 0;
  for (const auto& [why, count] : skipped) n += count;
  return n;
}

void ImportReport::skip(const std::string& reason) {
  // A handful of fixed reasons per importer: a linear search is cheaper than a map.
  for (auto& [why, count] : skipped)
    if (why == reason) {
      ++count;
      return;
    }
  skipped.emplace_back(reason, 1);
}

namespace {
// Every importer, once: its KIND and how it reads PATH (the list --help, errors and the dispatch below all read).
struct TraceImporter {
  const char* kind;
  Trace (*read)(const std::string& path, bool order_only);
};
const std::vector<TraceImporter>& importers() {
  static const std::vector<TraceImporter> table = {
      {"alibaba-2023", [](const std::string& path, bool order_only) { return import_alibaba_2023(path, order_only); }},
      {"philly-chronus", [](const std::string& path, bool) { return import_philly_chronus(path); }},
      {"swf", [](const std::string& path, bool) { return import_swf(path); }},
      {"csv", [](const std::string& path, bool) { return import_trainsim_csv(path); }},
  };
  return table;
}
}  // namespace

std::vector<std::string> trace_kinds() {
  std::vector<std::string> kinds;
  for (const TraceImporter& i : importers()) kinds.emplace_back(i.kind);
  return kinds;
}

namespace {
// A job id twice (a row pasted twice, two traces concatenated): every output keys jobs by id, so the later
// submission is skipped with a counted reason rather than reported under an id that names two jobs.
void drop_repeated_ids(Trace& t) {
  std::unordered_set<std::string> seen;
  seen.reserve(t.jobs.size());
  const auto kept = std::remove_if(t.jobs.begin(), t.jobs.end(), [&](const ClusterJob& j) {
    if (seen.insert(j.id).second) return false;
    t.report.skip("a job id already used by an earlier submission");
    return true;
  });
  t.jobs.erase(kept, t.jobs.end());
  t.report.jobs = t.jobs.size();
}
}  // namespace

Trace import_trace(const std::string& spec, bool order_only) {
  const std::string known = "KIND:PATH with KIND one of " + join(trace_kinds());
  const std::size_t colon = spec.find(':');
  if (colon == std::string::npos || colon == 0)
    throw InputError("--trace", "\"" + spec + "\"", known, "e.g. philly-chronus:../shared/traces/philly-derived-chronus/trace_job_Philly_MIX1.csv");
  const std::string kind = spec.substr(0, colon), path = spec.substr(colon + 1);
  if (path.empty()) throw InputError("--trace", "\"" + spec + "\"", known + ", and PATH a file or directory");
  const auto importer = std::find_if(importers().begin(), importers().end(), [&](const TraceImporter& i) { return kind == i.kind; });
  if (importer == importers().end()) {
    const std::string near = trace_detail::near_name(kind, trace_kinds());
    throw InputError("--trace", "\"" + kind + "\"", "a trace kind: one of " + join(trace_kinds()), near.empty() ? "" : "did you mean \"" + near + "\"?");
  }
  Trace t = importer->read(path, order_only);
  t.report.source = spec;
  drop_repeated_ids(t);
  return t;
}

namespace trace_detail {

LineReader::LineReader(const std::string& file, const std::string& what) : file_(file) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) throw InputError("--trace", "\"" + file + "\"", "a readable " + what, "it is a directory");
  in_.open(file, std::ios::binary);  // binary: CRLF is handled here, the same on every platform
  if (!in_) throw InputError("--trace", "\"" + file + "\"", "a readable " + what, std::filesystem::exists(file, ec) ? "cannot be opened" : "no such file");
}

bool LineReader::next(std::string& line) {
  if (!std::getline(in_, line)) return false;
  ++line_;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line_ == 1 && line.starts_with("\xEF\xBB\xBF")) line.erase(0, 3);  // a UTF-8 BOM (spreadsheet exports)
  return true;
}

bool split_csv(std::string_view line, std::vector<std::string>& fields) {
  // One line per record: trace files have no newlines inside fields, and a stray quote then spoils one row,
  // not the rest of the file. A quote opens quoting only at a field's start; elsewhere it is a character.
  fields.clear();
  fields.emplace_back();
  bool quoted = false, at_start = true;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c != '"') fields.back() += c;
      else if (i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';  // "" inside quotes is one quote
        ++i;
      } else {
        quoted = false;
      }
    } else if (c == ',') {
      fields.emplace_back();
      at_start = true;
      continue;
    } else if (c == '"' && at_start) {
      quoted = true;
    } else {
      fields.back() += c;
    }
    at_start = false;
  }
  return !quoted;
}

std::string trim(std::string_view s) {
  const std::size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  return std::string(s.substr(b, s.find_last_not_of(" \t") - b + 1));
}

int CsvColumns::index(std::string_view name) const {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<int>(i);
  return -1;
}

CsvColumns read_csv_header(LineReader& in, const std::string& expected) {
  std::string line;
  while (in.next(line))
    if (line.find_first_not_of(" \t") != std::string::npos) break;
  const std::string where = in.file() + ":" + std::to_string(in.line_number());
  if (in.line_number() == 0 || line.find_first_not_of(" \t") == std::string::npos)
    throw InputError(in.file(), "an empty file", "a header line: " + expected);
  CsvColumns h;
  if (!split_csv(line, h.names)) throw InputError(where, "\"" + line + "\"", "a header line: " + expected, "a quote is left open");
  for (std::string& n : h.names) n = trim(n);
  std::vector<std::string_view> sorted(h.names.begin(), h.names.end());  // sorted: a 60,000-column line stays fast
  std::sort(sorted.begin(), sorted.end());
  if (const auto twice = std::adjacent_find(sorted.begin(), sorted.end()); twice != sorted.end())
    throw InputError(where, "\"" + std::string(*twice) + "\"", "each column named once: " + expected, "column named twice");
  return h;
}

int require_column(const CsvColumns& h, const std::string& name, const LineReader& in, const std::string& known) {
  const int i = h.index(name);
  if (i < 0)
    throw InputError(in.file() + ":" + std::to_string(in.line_number()), "\"" + join(h.names, ",") + "\"",
                     "a header with the column \"" + name + "\" (columns: " + known + ")", "the column \"" + name + "\" is missing");
  return i;
}

std::optional<double> parse_number(std::string_view s) {
  const std::size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return std::nullopt;
  s = s.substr(b, s.find_last_not_of(" \t") - b + 1);
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;  // from_chars reads "inf", "nan"
  return v;
}

std::optional<long long> parse_integer(std::string_view s, long long lo, long long hi) {
  // Through double, so "8.0" is 8 too; every bound used is far below 2^53, where doubles are exact integers.
  const auto v = parse_number(s);
  if (!v || *v != std::floor(*v) || *v < static_cast<double>(lo) || *v > static_cast<double>(hi)) return std::nullopt;
  return static_cast<long long>(*v);
}

std::optional<double> parse_seconds(std::string_view s) {
  const auto v = parse_number(s);
  if (!v || *v < 0 || *v > kMaxSeconds) return std::nullopt;
  return *v == 0 ? 0.0 : *v;  // never -0
}

std::vector<std::string> split_gpu_types(std::string_view s) {
  std::vector<std::string> out;
  while (true) {
    const std::size_t bar = s.find('|');
    std::string part = trim(s.substr(0, bar));
    if (!part.empty()) out.push_back(std::move(part));
    if (bar == std::string_view::npos) break;
    s.remove_prefix(bar + 1);
  }
  return out;
}

std::string near_name(const std::string& word, const std::vector<std::string>& names) {
  // Only a near miss (a typo) is worth suggesting: "slurm" is not "swf".
  if (word.empty() || word.size() > 100) return {};  // a 60,000-character name is no typo
  const auto near = closest_names(word, names, 1);
  if (near.empty()) return {};
  const bool contained = near[0].find(word) != std::string::npos || word.find(near[0]) != std::string::npos;
  return contained || edit_distance(word, near[0]) <= std::max<std::size_t>(2, word.size() / 3) ? near[0] : std::string();
}

void finish(Trace& t) {
  std::stable_sort(t.jobs.begin(), t.jobs.end(), [](const ClusterJob& a, const ClusterJob& b) { return a.submit_s < b.submit_s; });
  t.report.jobs = t.jobs.size();
}

}  // namespace trace_detail
}  // namespace trainsim::sim::cluster
