// Standard Workload Format v2.2 of the Parallel Workloads Archive (Feitelson et al., JPDC 2014;
// https://www.cs.huji.ac.il/labs/parallel/workload/swf.html): one job per line, 18 whitespace-separated fields,
// -1 for "not recorded", header comments starting with ';'. Processors are read as GPUs. No SWF trace ships in
// ../shared/traces (see its README); the tests use made-up rows.
#include <algorithm>
#include <cmath>

#include "sim/cluster/traces/trace_import.hpp"

namespace trainsim::sim::cluster {

using namespace trace_detail;

namespace {

// Fields (1-based in the standard, 0-based here).
enum Field { kJob = 0, kSubmit = 1, kWait = 2, kRun = 3, kAllocated = 4, kRequested = 7, kRequestedTime = 8, kStatus = 10, kUser = 11, kQueue = 14 };
constexpr std::size_t kFields = 18;

void split_blanks(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  std::size_t i = 0;
  while (true) {
    i = line.find_first_not_of(" \t", i);
    if (i == std::string_view::npos) return;
    const std::size_t end = std::min(line.find_first_of(" \t", i), line.size());
    out.push_back(line.substr(i, end - i));
    i = end;
  }
}

std::string text_or_empty(std::string_view v) { return v == "-1" ? std::string() : std::string(v); }  // -1: not recorded

}  // namespace

Trace import_swf(const std::string& path) {
  LineReader in(path, "Standard Workload Format file (.swf)");
  Trace t;
  ImportReport& r = t.report;
  std::string line;
  std::vector<std::string_view> f;
  while (in.next(line)) {
    split_blanks(line, f);
    if (f.empty() || f[0].front() == ';') continue;  // blank, or a header comment
    ++r.rows;
    if (f.size() != kFields) {
      r.skip("not 18 fields");
      continue;
    }
    const auto status = parse_number(f[kStatus]);
    if (!status) {
      r.skip("status (field 11) not a number");
      continue;
    }
    // A checkpointed job has a summary line (status 0, 1 or 5) and one line per part (2, 3, 4): count it once.
    if (*status == 2 || *status == 3 || *status == 4) {
      r.skip("partial execution (status 2, 3 or 4; the job's summary line counts)");
      continue;
    }
    const auto submit = parse_seconds(f[kSubmit]);
    const auto wait = parse_number(f[kWait]), run = parse_number(f[kRun]), asked_time = parse_number(f[kRequestedTime]);
    const auto allocated = parse_number(f[kAllocated]), requested = parse_number(f[kRequested]);
    if (!submit) r.skip("submit time (field 2) not a time from 0 to 1e12 s");
    else if (!wait || !run || !asked_time || !allocated || !requested) r.skip("a number field (3, 4, 5, 8 or 9) not a number");
    else if (*run < 0) r.skip("run time not recorded (-1)");
    else if (*run > kMaxSeconds || *wait > kMaxSeconds) r.skip("run or wait time above 1e12 s");
    else {
      // The request when recorded, else what the job was given.
      const double procs = *requested > 0 ? *requested : *allocated;
      if (procs <= 0) r.skip("no processors (fields 5 and 8 not above 0)");
      else if (procs != std::floor(procs) || procs > static_cast<double>(kMaxGpus)) r.skip("processors not a whole number up to 1,000,000");
      else {
        ClusterJob j;
        j.id = std::string(f[kJob]);
        j.submit_s = *submit;
        j.gpus = static_cast<int>(procs);
        j.duration_s = *run == 0 ? 0.0 : *run;
        j.recorded_wait_s = *wait >= 0 ? *wait : -1;
        j.walltime_s = *asked_time > 0 ? std::min(*asked_time, kMaxSeconds) : 0;
        j.user = text_or_empty(f[kUser]);
        j.queue = text_or_empty(f[kQueue]);
        j.gang = true;  // a parallel job's processors start together
        t.jobs.push_back(std::move(j));
      }
    }
  }
  finish(t);
  return t;
}

}  // namespace trainsim::sim::cluster
