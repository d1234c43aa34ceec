// The renderers of `trainsim plan` on a real search (Llama-3-8B on 8 and 16 H100s) and on layouts built by hand: the
// layout text's grammar, one row per ranked plan in every format, the per-count table's headroom against capacity.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <string>

#include "models/layout/search.hpp"
#include "models/scenario/scenario.hpp"
#include "reports/plan_document.hpp"
#include "reports/plan_report.hpp"

using namespace trainsim;
using Json = nlohmann::json;

namespace {

PlanReport llama_plan() {
  PlanReport r;
  r.scenario = parse_scenario(Json{{"model", "llama3-8b"},
                                   {"training", {{"mode", "sft"}, {"seq_len", 4096}, {"global_batch_size", 64}, {"train_tokens", "1B"}}},
                                   {"hardware", {{"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 8}, {"num_nodes", 2}}}});
  r.scenario_label = "built in the test";
  SearchOptions o;
  o.top = 5;
  o.threads = 1;
  r.result = search_plans(r.scenario, {8, 16}, search_space_from(r.scenario), o);
  return r;
}

int lines_of(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

}  // namespace

TEST_CASE("layout text: tp with +sp, pp with its virtual stages, dp with its replicas, then what applies") {
  Plan p;
  p.layout.tp = 2, p.layout.sequence_parallel = true, p.layout.pp = 4, p.layout.vpp = 2, p.layout.dp = 8;
  CHECK(layout_text(p) == "tp2+sp pp4x2 dp8");
  p.layout.sequence_parallel = false, p.layout.vpp = 1, p.layout.dp_replicate = 2, p.layout.cp = 2, p.layout.ep = 4, p.layout.etp = 2;
  p.layout.schedule = Schedule::Gpipe;
  p.training.offload_optimizer = true;
  CHECK(layout_text(p) == "tp2 pp4 dp8/2r cp2 ep4 etp2 gpipe +offload");
  p = Plan{};
  p.layout.tp = 1, p.layout.sequence_parallel = true;  // sequence parallelism means nothing without tp
  CHECK(layout_text(p) == "tp1 pp1 dp1");
}

TEST_CASE("plan renderers: one row per ranked plan in every format, the same layouts") {
  const PlanReport r = llama_plan();
  REQUIRE(!r.result.plans.empty());
  const auto rows = plan_table_rows(r);
  REQUIRE(rows.size() == r.result.plans.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CHECK(rows[i].size() == plan_table_header().size());
    CHECK(rows[i][0] == std::to_string(i + 1));
    CHECK(rows[i][1] == std::to_string(r.result.plans[i].num_gpus));
    CHECK(rows[i][2] == layout_text(r.result.plans[i]));
  }
  std::ostringstream csv, table, md, html;
  print_plan_csv(csv, r);
  print_plan_table(table, r);
  print_plan_markdown(md, r);
  write_plan_html(html, r);
  CHECK(lines_of(csv.str()) == static_cast<int>(r.result.plans.size()) + 1);  // the header and one line per plan
  const Json j = plan_report_json(r);
  CHECK(j.at("plans").size() == r.result.plans.size());
  for (const Plan& p : r.result.plans) {
    const std::string layout = layout_text(p);
    CHECK(table.str().find(layout) != std::string::npos);
    CHECK(md.str().find(layout) != std::string::npos);
    CHECK(html.str().find(layout) != std::string::npos);
  }
}

TEST_CASE("plan per-count table: the fastest plan of each searched count and its headroom under the GPU's memory") {
  const PlanReport r = llama_plan();
  const auto rows = per_count_rows(r);
  REQUIRE(rows.size() == r.result.best_per_count.size());
  REQUIRE(rows.size() == 2);  // both 8 and 16 GPUs hold Llama-3-8B
  CHECK(rows[0][0] == "8");
  CHECK(rows[1][0] == "16");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Plan& p = r.result.best_per_count[i];
    // mem + headroom = the H100's 85,520,809,984 bytes (79.65 GiB), each cell rounded to 0.1 GiB.
    CHECK(p.capacity == 85520809984.0);
    CHECK(std::fabs(std::stod(rows[i][6]) + std::stod(rows[i][7]) - 79.65) <= 0.1 + 1e-9);
    CHECK(p.memory.total <= p.capacity);
  }
}
