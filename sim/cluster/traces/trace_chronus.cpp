// Philly-derived job trace of the Chronus artifact (Gao et al., SoCC'21), from
// github.com/S-Lab-System-Group/ChronusArtifact @ bc7e15fe : code/data/exp/trace_job_Philly_MIX1.csv (MIT).
// Sampled from Microsoft's Philly trace (ATC'19) with real job sizes and virtual clusters as users; its times are
// rescaled (submissions over 20,151 s). Schema and facts: ../shared/traces/README.md. The rows are not in
// submit order: finish() sorts them.
#include "sim/cluster/traces/trace_import.hpp"

namespace trainsim::sim::cluster {

using namespace trace_detail;

Trace import_philly_chronus(const std::string& path) {
  LineReader in(path, "Chronus job trace (trace_job_Philly_*.csv)");
  const std::string known = "job_id,user,num_gpu,submit_time,duration,best_effort";
  const CsvColumns h = read_csv_header(in, known);
  const int id = require_column(h, "job_id", in, known), user = require_column(h, "user", in, known),
            gpus = require_column(h, "num_gpu", in, known), submit = require_column(h, "submit_time", in, known),
            duration = require_column(h, "duration", in, known), best_effort = require_column(h, "best_effort", in, known);
  Trace t;
  ImportReport& r = t.report;
  for_each_csv_row(in, h.names.size(), r, [&](const std::vector<std::string>& f) {
    const auto g = parse_integer(f[gpus], 0, kMaxGpus);
    if (!g) return r.skip("num_gpu not a whole number from 0 to 1,000,000");
    if (*g == 0) return r.skip("no GPU requested (num_gpu 0)");
    const auto at = parse_seconds(f[submit]);
    if (!at) return r.skip("submit_time not a time from 0 to 1e12 s");
    const auto run = parse_seconds(f[duration]);
    if (!run) return r.skip("duration not a time from 0 to 1e12 s");
    const std::string be = trim(f[best_effort]);
    if (be != "0" && be != "1") return r.skip("best_effort not 0 or 1");
    ClusterJob j;
    j.id = trim(f[id]);
    j.user = trim(f[user]);
    j.gpus = static_cast<int>(*g);
    j.submit_s = *at;
    j.duration_s = *run;
    j.gang = true;  // data-parallel training jobs: all workers start together
    // Chronus's best-effort jobs (no deadline) form their own queue; the strict (deadline) jobs use the default.
    if (be == "1") j.queue = "best-effort";
    t.jobs.push_back(std::move(j));
  });
  finish(t);
  return t;
}

}  // namespace trainsim::sim::cluster
