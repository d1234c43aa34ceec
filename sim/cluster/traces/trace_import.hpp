#pragma once
// Importers of real cluster traces into ClusterJobs, named by kind as on the command line:
//   alibaba-2023:DIR     Alibaba GPU trace v2023 ("openb", FGD, ATC'23): DIR/openb_pod_list_default.csv (or a
//                        pod-list CSV given directly) and, beside it, openb_node_list_all_node.csv
//   philly-chronus:FILE  Philly-derived job trace of the Chronus artifact (SoCC'21)
//   swf:FILE             Standard Workload Format of the Parallel Workloads Archive (v2.2)
//   csv:FILE             trainsim's own CSV (header: id,submit_s,gpus,duration_s[,user,queue,priority,
//                        gpu_milli,gpu_types,walltime_s,checkpoint_interval_s,gang,elastic_min,elastic_max,
//                        recorded_wait_s])
// Each reads its file line by line (never the whole file at once), keeps one compact record per job, skips
// rows it cannot use with a counted reason (ImportReport), and returns the jobs sorted by submit time (stable).
// Alibaba's node list adds its own skips under reasons starting "node list: " (CPU-only nodes): they are not rows,
// so there skipped_total() exceeds rows - jobs.
// A file that cannot be opened, an unknown kind or a malformed header is an InputError (exit code 2) naming
// the file, the line and what was expected.
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/cluster/cluster_job.hpp"

namespace trainsim::sim::cluster {

struct Trace {
  std::vector<ClusterJob> jobs;       // sorted by submit_s
  std::vector<TraceNodePool> nodes;   // the trace's own node list, when it has one (Alibaba); else empty
  ImportReport report;
};

// "kind:path" as above.
// `order_only`: the caller needs only the jobs' order and requests (the --fill experiment), so a trace without
// times is read too (Alibaba's resampled openb_pod_list_multigpu50.csv: one job per pod, a second apart).
Trace import_trace(const std::string& spec, bool order_only = false);

// The kinds, for --help and error messages.
std::vector<std::string> trace_kinds();

// One importer per file (trace_alibaba.cpp, trace_chronus.cpp, trace_swf.cpp, trace_csv.cpp).
Trace import_alibaba_2023(const std::string& path, bool order_only = false);
Trace import_philly_chronus(const std::string& path);
Trace import_swf(const std::string& path);
Trace import_trainsim_csv(const std::string& path);

// Shared by the importers (defined in trace_import.cpp); not meant for callers outside sim/cluster.
namespace trace_detail {

inline constexpr double kMaxSeconds = 1e12;  // ~31,700 years: keeps submit + duration finite and exact to 1 ms
inline constexpr long long kMaxGpus = 1'000'000;

// A file read one line at a time, without the CR of a CRLF ending (and the UTF-8 BOM of the first line).
class LineReader {
 public:
  LineReader(const std::string& file, const std::string& what);  // InputError naming the file when unreadable
  bool next(std::string& line);                                   // false at the end
  std::uint64_t line_number() const { return line_; }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::ifstream in_;
  std::uint64_t line_ = 0;
};

// One CSV line into fields (RFC 4180 quoting within the line: "a,""b""" is a,"b"). False when a quote is left open.
bool split_csv(std::string_view line, std::vector<std::string>& fields);

// The header's column names, trimmed. `index` is -1 for a column the header lacks.
struct CsvColumns {
  std::vector<std::string> names;
  int index(std::string_view name) const;
};
// Reads the header line; InputError naming the file when there is none, a quote is open or a name is repeated.
CsvColumns read_csv_header(LineReader& in, const std::string& expected);
// The index of a required column; InputError naming the file, the column and `known` when it is missing.
int require_column(const CsvColumns& h, const std::string& name, const LineReader& in, const std::string& known);

// Calls row(fields) for every non-blank data line with as many fields as the header; counts the rest as skipped.
template <class Row>
void for_each_csv_row(LineReader& in, std::size_t columns, ImportReport& report, Row&& row) {
  std::string line;
  std::vector<std::string> fields;
  while (in.next(line)) {
    if (line.find_first_not_of(" \t") == std::string::npos) continue;  // blank lines are not rows
    ++report.rows;
    if (!split_csv(line, fields)) report.skip("unterminated quoted field");
    else if (fields.size() != columns) report.skip("wrong number of fields (not as many as the header's columns)");
    else row(fields);
  }
}

// Numbers: the whole text (blanks around allowed) must be one finite number; std::nullopt otherwise.
std::optional<double> parse_number(std::string_view s);
std::optional<long long> parse_integer(std::string_view s, long long lo, long long hi);  // integral, within [lo, hi]
std::optional<double> parse_seconds(std::string_view s);                                 // within [0, kMaxSeconds]
std::string trim(std::string_view s);
std::vector<std::string> split_gpu_types(std::string_view s);  // "V100M16|V100M32": the parts, empty ones dropped
std::string near_name(const std::string& word, const std::vector<std::string>& names);  // a typo's fix, or ""

// Sorts the jobs by submit time (stable: ties keep the file's order) and sets report.jobs.
void finish(Trace& t);

}  // namespace trace_detail

}  // namespace trainsim::sim::cluster
