// DualPipe (DeepSeek-V3 technical report, arXiv 2412.19437, §3.2.1 and Table 2; deepseek-ai/DualPipe): the bubble
// (PP/2 - 1)(F&B + B - 3W), PP + 1 chunks of activations and two copies of the parameters per rank, the
// all-to-all and pipeline traffic under the other direction's chunk, derived by hand below.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include "models/core/errors.hpp"
#include "models/layout/search.hpp"
#include "models/memory/memory.hpp"
#include "models/scenario/scenario.hpp"
#include "models/step/op_stream.hpp"
#include "models/step/pipeline_schedule.hpp"
#include "models/step/step.hpp"

using namespace trainsim;
using trainsim::test::approx;
using Json = nlohmann::json;

namespace {
Json gpt3_on_64(const Json& parallel, int global_batch = 64) {
  return {{"model", "gpt3-175b"},
          {"training", {{"seq_len", 2048}, {"global_batch_size", global_batch}, {"recompute", "full"}, {"framework", "megatron-core"}}},
          {"parallel", parallel},
          {"hardware", {{"gpu", "a100-sxm-80gb"}, {"num_gpus", 64}}}};
}
}  // namespace

TEST_CASE("dualpipe is registered, bidirectional, and left out of the search") {
  const PipelineSchedule* d = find_pipeline_schedule("dualpipe");
  REQUIRE(d != nullptr);
  CHECK(d->id() == Schedule::DualPipe);
  CHECK(d->bidirectional());
  CHECK(!d->searched());
  CHECK(!d->uses_model_chunks());
  for (Schedule s : {Schedule::Gpipe, Schedule::OneFOneB, Schedule::Interleaved}) CHECK(!pipeline_schedule(s).bidirectional());
}

TEST_CASE("dualpipe's bubble and activations, Table 2 of the report") {
  // pp 16, 120 micro-batches of 1 s per stage (DeepSeek-V3: 15,360 sequences over dp 128). With a chunk's forward
  // F = 1/3, its full backward B = 2/3, the weight half W = 1/3 and the overlapped pair F&B = F + B = 1, the bubble
  // is (16/2 - 1)(1 + 2/3 - 1) = 14/3 s: 124.667 s, where 1F1B takes 120 + 15 = 135 s.
  ParallelLayout p;
  p.pp = 16;
  p.gradient_accumulation_steps = 120;
  const PipelineSchedule& d = pipeline_schedule(Schedule::DualPipe);
  CHECK(d.pipeline_time(120, 1.0, 16.0, p) == approx(120 + 14.0 / 3));
  CHECK(pipeline_schedule(Schedule::OneFOneB).pipeline_time(120, 1.0, 16.0, p) == approx(135.0));
  // PP + 1 = 17 chunks on every rank: 8.5 micro-batches of each of its two stages, the first rank as the middle.
  CHECK(d.micro_batches_in_flight(p, 0, 120) == approx(8.5));
  CHECK(d.micro_batches_in_flight(p, 7, 120) == approx(8.5));
  // dualpipe.py steps 1 and 2: 2(pp/2 - h - 1) + 2(h + 1) = pp forwards before the first backward.
  CHECK(d.warmup_forwards(p, 0, 120) == 16);
  CHECK(d.warmup_forwards(p, 5, 120) == 16);
}

TEST_CASE("dualpipe folds a rank's two stages and hides the all-to-all under the other chunk") {
  // Four layers on pp 4 (one per stage), 8 micro-batches. Per layer and micro-batch: forward 1 s, backward 2 s; an
  // all-to-all of 2 calls x 0.5 s in each of forward and backward under the paired chunk; SM share 0.1. Embedding
  // 0.2 s on stage 0, head 0.6 s on stage 3; a pipeline send/recv of 2 x 0.05 s, also paired.
  ModelSpec m;
  m.num_hidden_layers = 4;
  ParallelLayout p;
  p.pp = 4;
  p.schedule = Schedule::DualPipe;
  StepStream s;
  s.micro_batches = 8;
  s.sm_share = 0.1;
  s.dense.compute.forward_s = 1;
  s.dense.compute.backward_s = 2;
  auto op = [](ParallelDim d, Collective c, Pass pass, double calls, double call_s) {
    CommOp o{};
    o.dim = d, o.collective = c, o.pass = pass, o.window = OverlapWindow::PairedChunk, o.calls = calls, o.call_s = call_s;
    return o;
  };
  s.dense.comm.add(op(ParallelDim::Ep, Collective::AllToAll, Pass::Forward, 2, 0.5));
  s.dense.comm.add(op(ParallelDim::Ep, Collective::AllToAll, Pass::Backward, 2, 0.5));
  s.moe = s.dense;
  s.edge.embedding_s = 0.2;
  s.edge.head_s = 0.6;
  s.stage_comm.add(op(ParallelDim::Pp, Collective::SendRecv, Pass::Forward, 2, 0.05));

  // All-to-all: 2 s under 3 s of the layer's passes: max(2 - 3, 0.1 x 2) = 0.2 exposed. Send/recv: 0.1 s under the
  // stage's 3 s: 0.01. Stages per micro-batch: 3.41 (embedding), 3.21, 3.21, 3.81 (head). Rank 0 holds stages 0
  // and 3: (3.41 + 3.81)/2 = 3.61, rank 1 stages 1 and 2: 3.21; the ranks sum to 13.64.
  // Pipeline: 8 x 3.61 + (4/2 - 1) x 2/3 x 13.64/4 = 28.88 + 2.27333.
  const StepBreakdown b = fold_step(s, m, p);
  CHECK(b.compute_s == approx(8 * (3 + 0.4)));
  CHECK(b.ep_comm_s == approx(8 * 0.2));
  CHECK(b.pp_comm_s == approx(8 * 0.01));
  CHECK(b.bubble_s == approx(2.0 / 3 * 3.41));
  CHECK(b.total_s == approx(28.88 + 2.0 / 3 * 3.41));

  // The same stream with blocking traffic under 1F1B: 2 s of all-to-all and 0.1 s of send/recv per layer and stage.
  for (CommOp* o : {&s.dense.comm.ops[0], &s.dense.comm.ops[1], &s.moe.comm.ops[0], &s.moe.comm.ops[1], &s.stage_comm.ops[0]}) o->window = OverlapWindow::None;
  p.schedule = Schedule::OneFOneB;
  const StepBreakdown one = fold_step(s, m, p);
  CHECK(one.ep_comm_s == approx(8 * 2.0));
  CHECK(one.total_s == approx(8 * 5.7 + (5.3 + 5.1 + 5.1 + 5.7 - 5.7)));
}

TEST_CASE("dualpipe's stream puts the expert all-to-all and the pipeline traffic under the paired chunk") {
  const Scenario sc = parse_scenario({{"model", "mixtral-8x7b"},
                                      {"training", {{"seq_len", 4096}, {"global_batch_size", 256}, {"framework", "megatron-core"}}},
                                      {"parallel", {{"tp", 1}, {"pp", 4}, {"ep", 8}, {"micro_batch_size", 1}, {"schedule", "dualpipe"}}},
                                      {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 64}}}});
  const StepStream s = StepModel(sc.model, sc.training, sc.hardware).stream(sc.parallel);
  int a2a = 0;
  for (const CommOp& o : s.moe.comm) {
    if (o.collective != Collective::AllToAll) continue;
    ++a2a;
    CHECK(o.window == OverlapWindow::PairedChunk);
  }
  CHECK(a2a == 2);  // forward and backward
  REQUIRE(s.stage_comm.size == 1);
  CHECK(s.stage_comm.ops[0].window == OverlapWindow::PairedChunk);
}

TEST_CASE("dualpipe's memory: a rank holds two stages' states and PP + 1 chunks of activations") {
  const Scenario one = parse_scenario(gpt3_on_64({{"tp", 8}, {"pp", 8}, {"micro_batch_size", 1}, {"schedule", "1f1b"}}));
  const Scenario dual = parse_scenario(gpt3_on_64({{"tp", 8}, {"pp", 8}, {"micro_batch_size", 1}, {"schedule", "dualpipe"}}));
  const MemoryModel mo(one.model, one.training, one.hardware), md(dual.model, dual.training, dual.hardware);
  const StageMemory first = mo.stage(one.parallel, 0), last = mo.stage(one.parallel, 7), rank0 = md.stage(dual.parallel, 0);
  // Two copies of the parameters (report, Table 2): stage 0's (embedding) and stage 7's (head) on rank 0.
  CHECK(rank0.layers == first.layers + last.layers);
  CHECK(rank0.weights == approx(first.weights + last.weights));
  CHECK(rank0.gradients == approx(first.gradients + last.gradients));
  CHECK(rank0.optimizer == approx(first.optimizer + last.optimizer));
  // 1F1B holds pp = 8 micro-batches on stage 0 and one on stage 7; DualPipe (8 + 1)/2 = 4.5 of each.
  CHECK(rank0.activations_layers == approx(first.activations_layers / 8 * 4.5 + last.activations_layers * 4.5));
  CHECK(rank0.layer_microbatches_in_flight == approx(4.5 * (first.layers + last.layers)));
  CHECK(md.stage(dual.parallel, 7).total == approx(rank0.total));  // rank 7 holds the same pair
}

TEST_CASE("dualpipe needs an even pp and an even number of micro-batches, at least 2 pp") {
  // 64 sequences over dp 1 (tp 8 x pp 8): 64 micro-batches of 1 >= 16; over dp 2 (pp 4): 32 >= 8. pp 2 with micro-batch
  // 32: 64 / (32 x 4) would not divide; micro-batch 16 x dp 4 gives one micro-batch, fewer than 2 pp = 4.
  CHECK_NOTHROW(parse_scenario(gpt3_on_64({{"tp", 8}, {"pp", 8}, {"micro_batch_size", 1}, {"schedule", "dualpipe"}})));
  try {
    parse_scenario(gpt3_on_64({{"tp", 8}, {"pp", 2}, {"micro_batch_size", 16}, {"schedule", "dualpipe"}}));
    FAIL("expected an error");
  } catch (const InputError& e) {
    CHECK(e.path() == "/training/global_batch_size");
    CHECK(std::string(e.what()).find("at least 2*pp (4)") != std::string::npos);
  }
  try {
    parse_scenario(gpt3_on_64({{"tp", 8}, {"pp", 1}, {"micro_batch_size", 1}, {"schedule", "dualpipe"}}));
    FAIL("expected an error");
  } catch (const InputError& e) {
    CHECK(e.path() == "/parallel/pp");
  }
}

TEST_CASE("plan prices dualpipe where the scenario names it and never proposes it otherwise") {
  const Scenario free = parse_scenario(gpt3_on_64({{"tp", 8}, {"micro_batch_size", 1}}, 128));
  SearchOptions options;
  options.top = 200;
  for (const Plan& p : search_plans(free, {64}, search_space_from(free), options).plans) CHECK(p.layout.schedule != Schedule::DualPipe);
  // On H200s: on 80 GB only an offloaded optimizer would fit it, and Megatron's keeps its fp32 master on the GPU.
  Json named_doc = gpt3_on_64({{"tp", 8}, {"pp", 4}, {"micro_batch_size", 1}, {"schedule", "dualpipe"}}, 128);
  named_doc["hardware"]["gpu"] = "h200-sxm-141gb";
  const Scenario named = parse_scenario(named_doc);
  const SearchResult r = search_plans(named, {64}, search_space_from(named), options);
  REQUIRE(!r.plans.empty());
  for (const Plan& p : r.plans) {
    CHECK(p.layout.schedule == Schedule::DualPipe);
    CHECK(p.layout.pp % 2 == 0);
  }
}
