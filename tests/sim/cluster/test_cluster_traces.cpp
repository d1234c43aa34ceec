// The cluster trace importers (sim/cluster/traces/trace_import.hpp): each on small made-up files (skip reasons with exact
// counts, sorting, fractional GPUs, GPU-type lists, quoted fields, CRLF, header errors), then on the real Alibaba
// 2023 and Chronus traces in ../shared/traces when that folder is there.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <unistd.h>

#include "models/core/errors.hpp"
#include "sim/cluster/cluster_sim.hpp"
#include "sim/cluster/cluster_spec.hpp"
#include "sim/cluster/traces/trace_import.hpp"
#include "sim/cluster/workload/synthetic_workload.hpp"

using namespace trainsim;
using namespace trainsim::sim::cluster;
namespace fs = std::filesystem;

namespace {

// A fresh folder under the system's temp directory, removed at the end of the test.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name) : path(fs::temp_directory_path() / ("trainsim-test-" + name + "-" + std::to_string(getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name, std::ios::binary) << text;
    return (path / name).string();
  }
};

std::uint64_t skipped(const Trace& t, const std::string& reason) {
  for (const auto& [why, n] : t.report.skipped)
    if (why == reason) return n;
  return 0;
}

bool sorted(const Trace& t) {
  return std::is_sorted(t.jobs.begin(), t.jobs.end(), [](const ClusterJob& a, const ClusterJob& b) { return a.submit_s < b.submit_s; });
}

std::vector<std::string> ids(const Trace& t) {
  std::vector<std::string> out;
  for (const ClusterJob& j : t.jobs) out.push_back(j.id);
  return out;
}

// The message of the InputError that `f` throws ("" when it throws none).
template <class F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return {};
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("import_trace: kinds by name; an unknown kind, a missing file or a directory is an InputError") {
  CHECK(trace_kinds() == std::vector<std::string>{"alibaba-2023", "philly-chronus", "swf", "csv"});
  std::string msg = input_error([] { import_trace("slurm:jobs.csv"); });
  CHECK(contains(msg, "--trace: got \"slurm\""));
  CHECK(contains(msg, "alibaba-2023, philly-chronus, swf, csv"));
  CHECK(contains(input_error([] { import_trace("philly-chronus"); }), "KIND:PATH"));
  CHECK(contains(input_error([] { import_trace("swf:"); }), "KIND:PATH"));
  CHECK(contains(input_error([] { import_trace("philly-chonus:x.csv"); }), "did you mean \"philly-chronus\""));
  CHECK_FALSE(contains(input_error([] { import_trace("slurm:x.csv"); }), "did you mean"));  // no typo of any kind
  const TempDir dir("traces-errors");
  const std::string missing = (dir.path / "nope.csv").string();
  for (const std::string& kind : trace_kinds()) {
    msg = input_error([&] { import_trace(kind + ":" + missing); });
    CHECK(contains(msg, "nope.csv"));
    CHECK(contains(msg, "no such file"));
  }
  CHECK(contains(input_error([&] { import_trace("csv:" + dir.path.string()); }), "it is a directory"));
  // An empty file has no header.
  const std::string empty = dir.write("empty.csv", "");
  CHECK(contains(input_error([&] { import_trace("philly-chronus:" + empty); }), "an empty file"));
  // SWF has no header: an empty file is an empty workload.
  const Trace none = import_trace("swf:" + empty);
  CHECK(none.jobs.empty());
  CHECK(none.report.rows == 0);
}

TEST_CASE("CSV lines: quoted fields, doubled quotes, empty fields; an open quote is reported") {
  using trace_detail::split_csv;
  std::vector<std::string> f;
  CHECK(split_csv(R"(a,"b,c","d""e",,"")", f));
  CHECK(f == std::vector<std::string>{"a", "b,c", "d\"e", "", ""});
  CHECK(split_csv("", f));
  CHECK(f == std::vector<std::string>{""});
  CHECK(split_csv(R"(ab"c,d)", f));  // a quote inside a field is a character
  CHECK(f == std::vector<std::string>{"ab\"c", "d"});
  CHECK_FALSE(split_csv(R"(a,"b)", f));
  CHECK(trace_detail::split_gpu_types("V100M16|V100M32") == std::vector<std::string>{"V100M16", "V100M32"});
  CHECK(trace_detail::split_gpu_types(" T4 ||") == std::vector<std::string>{"T4"});
  CHECK(trace_detail::split_gpu_types("").empty());
}

TEST_CASE("numbers: the whole text, finite, in range") {
  using namespace trace_detail;
  CHECK(parse_number(" 12.5 ") == 12.5);
  CHECK(parse_number("1e3") == 1000.0);
  for (const char* bad : {"", " ", "12x", "nan", "inf", "-inf", "1e400", "0x10", "+5", "1,5"}) CHECK_MESSAGE(!parse_number(bad), bad);
  CHECK(parse_integer("8", 0, 10) == 8);
  CHECK(parse_integer("8.0", 0, 10) == 8);
  CHECK_FALSE(parse_integer("8.5", 0, 10));
  CHECK_FALSE(parse_integer("11", 0, 10));
  CHECK_FALSE(parse_integer("99999999999999999999999", 0, 10));
  CHECK(parse_seconds("0") == 0.0);
  CHECK_FALSE(parse_seconds("-1"));
  CHECK_FALSE(parse_seconds("2e12"));
}

TEST_CASE("alibaba-2023: pods to jobs, fractional GPUs, GPU types, skips; node pools per (model, GPUs per node)") {
  const TempDir dir("traces-alibaba");
  // Columns found by name: cpu_milli and memory_mib moved to the end here. CRLF line ends, a blank line.
  const std::string pods = dir.write("openb_pod_list_default.csv",
      "name,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time,cpu_milli,memory_mib\r\n"
      "p0,1,1000,,LS,Running,100,500,110,1000,1024\r\n"
      "p1,1,460,,BE,Running,50,80,50,1000,1024\r\n"
      "p2,0,0,,LS,Running,10,20,10,1000,1024\r\n"                       // CPU-only
      "p3,2,1000,\"V100M16|V100M32\",LS,Failed,50,60,55,1000,1024\r\n"  // same submit as p1: stays after it
      "\r\n"
      "p4,1,1000,,LS,Pending,5,,,1000,1024\r\n"                         // never scheduled
      "p5,4,500,,LS,Running,1,2,1,1000,1024\r\n"                        // half of each of 4 GPUs
      "p6,1,1000,,LS,Running,1,2,3,1000,1024\r\n"                       // deleted before scheduled
      "p7,1,abc,,LS,Running,1,2,1,1000,1024\r\n"
      "p8,8,1000,G2,Guaranteed,Running,0,0,0,1000,1024\r\n"             // duration 0 is a job
      "p9,1,1000,,LS,Running,1,2\r\n");                                 // a field short
  dir.write("openb_node_list_all_node.csv",
            "sn,cpu_milli,memory_mib,gpu,model\n"
            "n0,32000,262144,0,\n"
            "n1,96000,786432,8,G2\n"
            "n2,96000,786432,8,G2\n"
            "n3,64000,262144,2,T4\n"
            "n4,64000,262144,4,T4\n"
            "n5,64000,262144,x,T4\n");
  const Trace t = import_trace("alibaba-2023:" + dir.path.string());
  CHECK(t.report.source == "alibaba-2023:" + dir.path.string());
  CHECK(t.report.rows == 10);
  CHECK(t.report.jobs == 4);
  CHECK(ids(t) == std::vector<std::string>{"p8", "p1", "p3", "p0"});
  CHECK(skipped(t, "no GPU requested (CPU-only pod)") == 1);
  CHECK(skipped(t, "never scheduled in the trace (no scheduled_time)") == 1);
  CHECK(skipped(t, "multi-GPU pod with gpu_milli other than 1000 (a share of several GPUs)") == 1);
  CHECK(skipped(t, "deletion_time before scheduled_time") == 1);
  CHECK(skipped(t, "gpu_milli not a whole number from 1 to 1000") == 1);
  CHECK(skipped(t, "wrong number of fields (not as many as the header's columns)") == 1);
  CHECK(skipped(t, "node list: CPU-only node") == 1);
  CHECK(skipped(t, "node list: gpu not a whole number from 0 to 64") == 1);
  CHECK(t.report.skipped_total() == 8);  // 6 pods, 2 nodes
  const ClusterJob& p0 = t.jobs[3];
  CHECK(p0.submit_s == 100);
  CHECK(p0.duration_s == 390);
  CHECK(p0.recorded_wait_s == 10);
  CHECK(p0.queue == "LS");
  CHECK(p0.gpu_types.empty());
  CHECK(p0.gang);
  const ClusterJob& p1 = t.jobs[1];
  CHECK(p1.gpus == 1);
  CHECK(p1.gpu_milli == 460);
  CHECK(t.jobs[2].gpu_types == std::vector<std::string>{"V100M16", "V100M32"});
  CHECK(t.jobs[2].gpus == 2);
  CHECK(t.jobs[2].gpu_milli == 1000);
  CHECK(t.jobs[0].duration_s == 0);
  CHECK(t.jobs[0].gpu_types == std::vector<std::string>{"G2"});
  REQUIRE(t.nodes.size() == 3);
  CHECK((t.nodes[0].gpu_model == "G2" && t.nodes[0].gpus_per_node == 8 && t.nodes[0].nodes == 2));
  CHECK((t.nodes[1].gpu_model == "T4" && t.nodes[1].gpus_per_node == 2 && t.nodes[1].nodes == 1));
  CHECK((t.nodes[2].gpu_model == "T4" && t.nodes[2].gpus_per_node == 4 && t.nodes[2].nodes == 1));

  // The pod list given as a file: the node list beside it is read too.
  const Trace by_file = import_trace("alibaba-2023:" + pods);
  CHECK(ids(by_file) == ids(t));
  CHECK(by_file.nodes.size() == 3);
  // A pod list alone: no node list. A directory without one: an InputError naming it.
  const TempDir lone("traces-alibaba-lone");
  const std::string lone_pods = lone.write("pods.csv", "name,num_gpu,gpu_milli,gpu_spec,qos,creation_time,deletion_time,scheduled_time\nq,1,1000,,LS,0,5,1\n");
  const Trace alone = import_trace("alibaba-2023:" + lone_pods);
  CHECK(alone.jobs.size() == 1);
  CHECK(alone.nodes.empty());
  lone.write("openb_pod_list_default.csv", "name,num_gpu,gpu_milli,gpu_spec,qos,creation_time,deletion_time,scheduled_time\n");
  CHECK(contains(input_error([&] { import_trace("alibaba-2023:" + lone.path.string()); }), "openb_node_list_all_node.csv"));
  // A header without scheduled_time: the column named.
  const std::string bad = lone.write("bad.csv", "name,num_gpu,gpu_milli,gpu_spec,qos,creation_time,deletion_time\n");
  const std::string msg = input_error([&] { import_trace("alibaba-2023:" + bad); });
  CHECK(contains(msg, "bad.csv:1"));
  CHECK(contains(msg, "the column \"scheduled_time\" is missing"));
}

TEST_CASE("philly-chronus: sorted by submit time, GPU-less rows skipped, best-effort as a queue") {
  const TempDir dir("traces-chronus");
  const std::string file = dir.write("trace.csv",
      "job_id,user,num_gpu,submit_time,iterations,model_name,duration,interval,expect_time_list,expect_value_list,best_effort,job_type\r\n"
      "0,vc_a,1,300,100,vgg16,700,14,1105,10,0,strict\r\n"
      "1,vc_b,8,20,100,resnet50,60,8,128,10,1,best\r\n"
      "2,vc_a,0,10,100,alexnet,30,17,50,10,0,strict\r\n"
      "3,vc_c,32,20,100,bert,4000,5,318,10,0,strict\r\n"
      "4,vc_c,2,5,100,bert,-3,5,318,10,0,strict\r\n"
      "5,vc_c,2,5,100,bert,3,5,318,10,2,strict\r\n");
  const Trace t = import_trace("philly-chronus:" + file);
  CHECK(t.report.rows == 6);
  CHECK(ids(t) == std::vector<std::string>{"1", "3", "0"});
  CHECK(skipped(t, "no GPU requested (num_gpu 0)") == 1);
  CHECK(skipped(t, "duration not a time from 0 to 1e12 s") == 1);
  CHECK(skipped(t, "best_effort not 0 or 1") == 1);
  CHECK(t.report.skipped_total() == 3);
  CHECK(t.jobs[0].queue == "best-effort");
  CHECK(t.jobs[0].user == "vc_b");
  CHECK(t.jobs[0].gpus == 8);
  CHECK(t.jobs[0].duration_s == 60);
  CHECK(t.jobs[1].queue.empty());
  CHECK(t.jobs[1].gpus == 32);
  CHECK(t.jobs[1].recorded_wait_s < 0);  // not in this trace
  CHECK(contains(input_error([&] { import_trace("philly-chronus:" + dir.write("h.csv", "job_id,user,submit_time,duration,best_effort\n")); }),
                 "the column \"num_gpu\" is missing"));
}

TEST_CASE("swf: the 18 fields, requested over allocated processors, -1 as not recorded, comments and partial lines") {
  const TempDir dir("traces-swf");
  const std::string file = dir.write("log.swf",
      "; Version: 2.2\n"
      ";  MaxProcs: 64\n"
      "  ; an indented comment\n"
      "1 0 10 3600 8 -1 -1 16 7200 -1 1 3 1 -1 2 -1 -1 -1\n"          // requested 16 over allocated 8
      "2\t5\t-1\t60\t4\t-1\t-1\t-1\t-1\t-1\t1\t-1\t1\t-1\t-1\t-1\t-1\t-1\r\n"  // tabs, CRLF; requested -1: allocated
      "3 7 0 -1 4 -1 -1 4 100 -1 5 3 1 -1 1 -1 -1 -1\n"               // cancelled before it ran
      "4 8 0 10 -1 -1 -1 -1 100 -1 0 3 1 -1 1 -1 -1 -1\n"             // no processors
      "5 9 0 10 4 -1 -1 4 100 -1 1 3 1 -1 1 -1 -1\n"                  // 17 fields
      "6 9 0 10 4 -1 -1 4 100 -1 3 3 1 -1 1 -1 -1 -1\n"               // a partial execution
      "7 1 2 0 1.5 -1 -1 -1 100 -1 1 3 1 -1 1 -1 -1 -1\n"             // 1.5 processors
      "\n");
  const Trace t = import_trace("swf:" + file);
  CHECK(t.report.rows == 7);
  CHECK(ids(t) == std::vector<std::string>{"1", "2"});
  CHECK(skipped(t, "run time not recorded (-1)") == 1);
  CHECK(skipped(t, "no processors (fields 5 and 8 not above 0)") == 1);
  CHECK(skipped(t, "not 18 fields") == 1);
  CHECK(skipped(t, "partial execution (status 2, 3 or 4; the job's summary line counts)") == 1);
  CHECK(skipped(t, "processors not a whole number up to 1,000,000") == 1);
  const ClusterJob& a = t.jobs[0];
  CHECK(a.gpus == 16);
  CHECK(a.duration_s == 3600);
  CHECK(a.walltime_s == 7200);
  CHECK(a.recorded_wait_s == 10);
  CHECK(a.user == "3");
  CHECK(a.queue == "2");
  const ClusterJob& b = t.jobs[1];
  CHECK(b.submit_s == 5);
  CHECK(b.gpus == 4);
  CHECK(b.walltime_s == 0);
  CHECK(b.recorded_wait_s == -1);
  CHECK(b.user.empty());
  CHECK(b.queue.empty());
}

TEST_CASE("csv: trainsim's own columns in any order, quoted fields, CRLF, defaults; bad cells skipped naming the column") {
  const TempDir dir("traces-csv");
  const std::string file = dir.write("jobs.csv",
      "\xEF\xBB\xBFsubmit_s,id,gpus,duration_s,user,queue,priority,gpu_milli,gpu_types,walltime_s,checkpoint_interval_s,gang\r\n"
      "30,a,4,100,\"smith, j\",prod,5,,\"H100|A100\",200,50,false\r\n"
      "10,b,1,20,,,,250,,,,\r\n"
      "10,c,2,5,,,,,,,,\r\n"
      "1,d,0,5,,,,,,,,\r\n"
      "1,e,two,5,,,,,,,,\r\n"
      "1,f,2,-5,,,,,,,,\r\n"
      "nan,g,2,5,,,,,,,,\r\n"
      "1,h,2,5,,,,500,,,,\r\n"
      "1,i,2,5,,,,,,,,yes\r\n"
      "1,j,2,5,,,x,,,,,\r\n"
      "1,k,2,5\r\n"
      "1,\"l,2,5,,,,,,,,\r\n");
  const Trace t = import_trace("csv:" + file);
  CHECK(t.report.rows == 12);
  CHECK(ids(t) == std::vector<std::string>{"b", "c", "a"});
  CHECK(skipped(t, "gpus not a positive integer (at most 1,000,000)") == 2);
  CHECK(skipped(t, "duration_s not a time from 0 to 1e12 s") == 1);
  CHECK(skipped(t, "submit_s not a time from 0 to 1e12 s") == 1);
  CHECK(skipped(t, "gpu_milli below 1000 on a job of more than one GPU") == 1);
  CHECK(skipped(t, "gang not true, false, 1 or 0") == 1);
  CHECK(skipped(t, "priority not an integer (within +-1e9)") == 1);
  CHECK(skipped(t, "wrong number of fields (not as many as the header's columns)") == 1);
  CHECK(skipped(t, "unterminated quoted field") == 1);
  CHECK(t.report.skipped_total() == 9);
  const ClusterJob& a = t.jobs[2];
  CHECK(a.user == "smith, j");
  CHECK(a.queue == "prod");
  CHECK(a.priority == 5);
  CHECK(a.gpu_types == std::vector<std::string>{"H100", "A100"});
  CHECK(a.walltime_s == 200);
  CHECK(a.checkpoint_interval_s == 50);
  CHECK_FALSE(a.gang);
  const ClusterJob& b = t.jobs[0];
  CHECK(b.gpu_milli == 250);
  CHECK(b.gang);  // defaults for empty cells
  CHECK(b.priority == 0);
  CHECK(b.walltime_s == 0);
  CHECK(b.recorded_wait_s == -1);

  // Elastic ranges and a recorded wait.
  const Trace e = import_trace("csv:" + dir.write("elastic.csv", "id,submit_s,gpus,duration_s,elastic_min,elastic_max,recorded_wait_s\n"
                                                                 "x,0,8,10,4,16,3\ny,0,8,10,9,16,\n"));
  REQUIRE(e.jobs.size() == 1);
  CHECK(e.jobs[0].elastic_min == 4);
  CHECK(e.jobs[0].elastic_max == 16);
  CHECK(e.jobs[0].recorded_wait_s == 3);

  // Host requests: a job of 0 GPUs is a CPU-only pod when it asks for CPU, an error when it asks nothing.
  const Trace h = import_trace("csv:" + dir.write("host.csv", "id,submit_s,gpus,duration_s,cpu_milli,memory_mib\n"
                                                              "g,0,1,10,4000,8192\ncpu,0,0,10,30000,\nnone,0,0,10,,\nbad,0,1,10,-1,\n"));
  REQUIRE(h.jobs.size() == 2);
  CHECK(h.jobs[0].cpu_milli == 4000);
  CHECK(h.jobs[0].memory_mib == 8192);
  CHECK(h.jobs[1].gpus == 0);
  CHECK(h.jobs[1].cpu_milli == 30000);
  CHECK(skipped(h, "gpus not a positive integer (at most 1,000,000)") == 1);
  CHECK(skipped(h, "cpu_milli not a whole number from 0 to 1e9") == 1);
  // A Slurm account per job (account limits, cluster.accounts).
  const Trace acc = import_trace("csv:" + dir.write("account.csv", "id,submit_s,gpus,duration_s,user,account\nx,0,1,10,alice,vision\ny,0,1,10,bob,\n"));
  REQUIRE(acc.jobs.size() == 2);
  CHECK(acc.jobs[0].account == "vision");
  CHECK(acc.jobs[1].account.empty());

  // Header errors: the file, the column and the known columns named.
  std::string msg = input_error([&] { import_trace("csv:" + dir.write("missing.csv", "id,submit_s,duration_s\n1,0,5\n")); });
  CHECK(contains(msg, "missing.csv:1"));
  CHECK(contains(msg, "the column \"gpus\" is missing"));
  CHECK(contains(msg, "id,submit_s,gpus,duration_s,user"));
  msg = input_error([&] { import_trace("csv:" + dir.write("unknown.csv", "id,submit_s,gpu,duration_s\n")); });
  CHECK(contains(msg, "unknown.csv:1: got \"gpu\""));
  CHECK(contains(msg, "did you mean \"gpus\""));
  msg = input_error([&] { import_trace("csv:" + dir.write("twice.csv", "id,submit_s,gpus,duration_s,gpus\n")); });
  CHECK(contains(msg, "column named twice"));
}

TEST_CASE("the real traces in ../shared/traces: Alibaba GPU v2023 (openb) and Chronus (Philly-derived)") {
  const fs::path traces = fs::path(TRAINSIM_SHARED_DIR) / "traces";
  if (!fs::is_directory(traces)) {
    MESSAGE("skipped: " << traces.string() << " not found (the public traces sit beside the repository)");
    return;
  }
  using clock = std::chrono::steady_clock;
  // Expected values computed independently with Python's csv module on the same files:
  //   rows = list(csv.DictReader(open(pods))); g = [r for r in rows if int(r['num_gpu']) > 0]
  //   8,152 rows; num_gpu 0: 1,088; of the GPU pods 861 lack scheduled_time (897 in all; 36 are CPU-only);
  //   no deletion before scheduling, every multi-GPU pod has gpu_milli 1000: 8,152 - 1,088 - 861 = 6,203 jobs,
  //   2,573 of them below 1000 milli; sum(deletion - scheduled) = 191,369,677 s, sum(scheduled - creation) = 433,907 s.
  //   Nodes: Counter((n['model'], int(n['gpu'])) for n in nodes if int(n['gpu']) > 0): 12 pools, 1,213 nodes,
  //   6,212 GPUs; 310 CPU-only nodes.
  const fs::path openb = traces / "alibaba-gpu-v2023-openb";
  if (fs::is_directory(openb)) {
    const auto start = clock::now();
    const Trace t = import_trace("alibaba-2023:" + openb.string());
    MESSAGE("alibaba-2023 import: " << std::chrono::duration<double, std::milli>(clock::now() - start).count() << " ms");
    CHECK(t.report.rows == 8152);
    CHECK(t.report.jobs == 6203);
    CHECK(t.jobs.size() == 6203);
    CHECK(skipped(t, "no GPU requested (CPU-only pod)") == 1088);
    CHECK(skipped(t, "never scheduled in the trace (no scheduled_time)") == 861);
    CHECK(skipped(t, "node list: CPU-only node") == 310);
    CHECK(t.report.skipped.size() == 3);
    CHECK(sorted(t));
    CHECK(t.jobs.front().id == "openb-pod-0000");
    CHECK(std::count_if(t.jobs.begin(), t.jobs.end(), [](const ClusterJob& j) { return j.gpu_milli < 1000; }) == 2573);
    CHECK(std::max_element(t.jobs.begin(), t.jobs.end(), [](const ClusterJob& a, const ClusterJob& b) { return a.gpus < b.gpus; })->gpus == 8);
    double run = 0, wait = 0;
    for (const ClusterJob& j : t.jobs) run += j.duration_s, wait += j.recorded_wait_s;
    CHECK(run == 191369677.0);
    CHECK(wait == 433907.0);
    // Host requests read: python3 sums cpu_milli over the pods kept (GPU pods with a scheduled_time) to 57,761,316.
    std::int64_t pod_cpu = 0;
    for (const ClusterJob& j : t.jobs) pod_cpu += j.cpu_milli;
    CHECK(pod_cpu == 57761316);
    // One pool per GPU model, node size and host shape: 15 distinct (model, gpu, cpu_milli, memory_mib) rows among
    // the 1,213 GPU nodes (12 by model and size; P100 x2 comes with 8, 16 and 64 cores, V100M16 x8 with 64 and 82).
    CHECK(t.nodes.size() == 15);
    std::int64_t node_cpu = 0, node_memory = 0;
    for (const TraceNodePool& p : t.nodes) node_cpu += p.nodes * p.cpu_milli, node_memory += p.nodes * p.memory_mib;
    CHECK(node_cpu == 107018000);       // python3: sum of cpu_milli over the GPU rows
    CHECK(node_memory == 503828480);    // and of memory_mib
    int nodes = 0, gpus = 0;
    std::map<std::string, std::pair<int, int>> by_model;  // nodes, GPUs
    for (const TraceNodePool& p : t.nodes) {
      nodes += p.nodes;
      gpus += p.nodes * p.gpus_per_node;
      by_model[p.gpu_model].first += p.nodes;
      by_model[p.gpu_model].second += p.nodes * p.gpus_per_node;
    }
    CHECK(nodes == 1213);
    CHECK(gpus == 6212);
    // ../shared/traces/README.md: nodes/GPUs by model.
    const std::map<std::string, std::pair<int, int>> expected = {{"G2", {549, 4392}},    {"T4", {404, 842}},     {"P100", {134, 265}}, {"G3", {39, 312}},
                                                                 {"V100M32", {30, 204}}, {"V100M16", {55, 195}}, {"A10", {2, 2}}};
    CHECK(by_model == expected);
    // The same pods with GPU-type constraints (gpuspec33): Python, over the 6,203 rows kept above, counts 2,092
    // non-empty gpu_spec cells holding 2,792 '|'-separated types (1,750 name one type, the rest 2 to 7).
    const Trace spec = import_trace("alibaba-2023:" + (openb / "openb_pod_list_gpuspec33.csv").string());
    CHECK(spec.jobs.size() == 6203);
    CHECK(spec.nodes.size() == 15);  // the node list beside it
    std::size_t constrained = 0, types = 0;
    for (const ClusterJob& j : spec.jobs) constrained += !j.gpu_types.empty(), types += j.gpu_types.size();
    CHECK(constrained == 2092);
    CHECK(types == 2792);
    // The resampled multigpu50 list has no times: refused, saying which lists can be replayed.
    CHECK(contains(input_error([&] { import_trace("alibaba-2023:" + (openb / "openb_pod_list_multigpu50.csv").string()); }),
                   "use openb_pod_list_default.csv or a gpuspec one"));
    // For the fill experiment only the order and the requests count: read, one job per pod, in file order, the
    // CPU-only pods kept (they hold CPU on GPU nodes, as in FGD's experiments). The file: 9,061 pods (`wc -l` less
    // the header), 1,088 of them CPU-only (awk -F, 'NR>1 && $4==0'), asking 137,776,412 thousandths of a core and
    // 530,427,459 MiB in all (python3 sums).
    const Trace multi = import_trace("alibaba-2023:" + (openb / "openb_pod_list_multigpu50.csv").string(), true);
    CHECK(multi.report.rows == 9061);
    CHECK(multi.report.skipped.size() == 1);  // the node list's CPU-only nodes, no pod
    CHECK(multi.jobs.size() == 9061);
    CHECK(std::count_if(multi.jobs.begin(), multi.jobs.end(), [](const ClusterJob& j) { return j.gpus == 0; }) == 1088);
    std::int64_t multi_cpu = 0, multi_memory = 0;
    for (const ClusterJob& j : multi.jobs) multi_cpu += j.cpu_milli, multi_memory += j.memory_mib;
    CHECK(multi_cpu == 137776412);
    CHECK(multi_memory == 530427459);
    CHECK(multi.jobs.front().id == "openb-pod-0000");
    CHECK(std::is_sorted(multi.jobs.begin(), multi.jobs.end(), [](const ClusterJob& a, const ClusterJob& b) { return a.submit_s < b.submit_s; }));
  }
  // A synthetic workload drawn from Chronus in blocks of its own job sequence, at the trace's own scale (30,756
  // jobs over its 20,150 s of arrivals at its load within that span, 0.8163 of 1,280 GPUs), waits under FIFO as the trace
  // does on 160 nodes of 8: mean and p99 within 25% (means of 6 draws; one draw's mean wait varies by a third).
  // Poisson arrivals at the same load wait 0-30 s: the trace's waits come from its bursts.
  const fs::path chronus_file = traces / "philly-derived-chronus" / "trace_job_Philly_MIX1.csv";
  if (fs::is_regular_file(chronus_file)) {
    const Trace t = import_trace("philly-chronus:" + chronus_file.string());
    const ClusterSpec cluster = parse_cluster({{"pools", {{{"gpu", "a100-sxm-80gb"}, {"gpus_per_node", 8}, {"nodes", 160}}}}}, "/cluster", nullptr);
    ClusterSimOptions o;
    o.policy = "fifo";
    const PolicyResult real = simulate_cluster(cluster, t.jobs, o);
    const WorkloadFit fit = fit_workload(t.jobs, "chronus");
    SyntheticSpec spec;
    spec.jobs = static_cast<int>(t.jobs.size());
    spec.span_s = t.jobs.back().submit_s - t.jobs.front().submit_s;
    // The trace's own load as --load means it: GPU-time within its span of arrivals (a job arriving late counts
    // to the span's end), 0.8638 of the GPUs over the whole runs, 0.8163 within the span.
    double gpu_s = 0;
    for (const ClusterJob& j : t.jobs) gpu_s += j.gpus * j.duration_s;
    CHECK(gpu_s / (1280 * spec.span_s) == doctest::Approx(0.8638).epsilon(1e-3));
    spec.load = load_in_span(t.jobs, 1280, spec.span_s);
    CHECK(spec.load == doctest::Approx(0.8163).epsilon(1e-3));
    spec.cluster_gpus = spec.max_gpus = 1280;
    double mean = 0, p99 = 0;
    const int draws = 6;
    for (int seed = 1; seed <= draws; ++seed) {
      spec.seed = static_cast<std::uint64_t>(seed);
      const PolicyResult r = simulate_cluster(cluster, synthesize_workload(fit, spec, nullptr), o);
      mean += r.mean_wait_s / draws, p99 += r.p99_wait_s / draws;
    }
    MESSAGE("Chronus load within its span " << spec.load << "; FIFO waits: trace mean " << real.mean_wait_s << " s, p99 " << real.p99_wait_s << " s; blocks mean " << mean << " s, p99 " << p99 << " s");
    CHECK(mean == doctest::Approx(real.mean_wait_s).epsilon(0.25));
    CHECK(p99 == doctest::Approx(real.p99_wait_s).epsilon(0.25));
  }
  // Chronus: 30,940 rows, num_gpu 0 in 184, 30,756 jobs, largest 32 GPUs, 9,156 best-effort, 15,441 places where
  // the file goes back in time; sum(num_gpu) 42,947 and sum(num_gpu * duration) 22,279,688 GPU-s over the jobs;
  // the first job after a stable sort by submit time is 5620 (submit 1 s).
  const fs::path chronus = traces / "philly-derived-chronus" / "trace_job_Philly_MIX1.csv";
  if (fs::is_regular_file(chronus)) {
    const auto start = clock::now();
    const Trace t = import_trace("philly-chronus:" + chronus.string());
    MESSAGE("philly-chronus import: " << std::chrono::duration<double, std::milli>(clock::now() - start).count() << " ms");
    CHECK(t.report.rows == 30940);
    CHECK(t.report.skipped_total() == 184);
    CHECK(skipped(t, "no GPU requested (num_gpu 0)") == 184);
    CHECK(t.jobs.size() == 30756);
    CHECK(sorted(t));
    CHECK(t.jobs.front().id == "5620");
    CHECK(std::max_element(t.jobs.begin(), t.jobs.end(), [](const ClusterJob& a, const ClusterJob& b) { return a.gpus < b.gpus; })->gpus == 32);
    CHECK(std::count_if(t.jobs.begin(), t.jobs.end(), [](const ClusterJob& j) { return j.queue == "best-effort"; }) == 9156);
    long long gpus = 0;
    double gpu_s = 0;
    for (const ClusterJob& j : t.jobs) gpus += j.gpus, gpu_s += j.gpus * j.duration_s;
    CHECK(gpus == 42947);
    CHECK(gpu_s == 22279688.0);
  }
}
