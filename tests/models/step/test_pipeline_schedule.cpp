// Pipeline schedules (models/step/pipeline_schedule.*): the registry, and each schedule's bubble, activations in
// flight and warm-up, against Narayanan et al. SC'21 §2.2 and Korthikanti et al. 2022 §4.2.3, derived by hand.
#include <doctest/doctest.h>

#include "models/step/pipeline_schedule.hpp"
#include "tests/approx.hpp"

using namespace trainsim;
using trainsim::test::approx;

namespace {
ParallelLayout layout(int pp, int vpp, int m) {
  ParallelLayout p;
  p.pp = pp;
  p.vpp = vpp;
  p.gradient_accumulation_steps = m;
  return p;
}
}  // namespace

TEST_CASE("schedules are registered by name") {
  CHECK(pipeline_schedule_names() == std::vector<std::string>{"gpipe", "1f1b", "interleaved", "dualpipe"});
  for (const PipelineSchedule* s : pipeline_schedules()) {
    CHECK(find_pipeline_schedule(s->name()) == s);
    CHECK(&pipeline_schedule(s->id()) == s);
    CHECK(std::string(to_string(s->id())) == s->name());
    CHECK(!s->source().empty());
  }
  CHECK(find_pipeline_schedule("zero-bubble") == nullptr);
  CHECK(pipeline_schedule(Schedule::Interleaved).uses_model_chunks());
  CHECK(!pipeline_schedule(Schedule::OneFOneB).uses_model_chunks());
}

TEST_CASE("the bubble: (pp - 1) stage times, divided by vpp when interleaved") {
  // 8 equal stages of 1 s per micro-batch, 32 micro-batches: 1F1B and GPipe take (m + p - 1) t = 39 s, a bubble
  // fraction (p - 1)/m = 7/32 (SC'21 eq. 1); interleaved with v = 4: (m + (p - 1)/v) t = 33.75 s (eq. 2).
  const ParallelLayout p = layout(8, 4, 32);
  CHECK(pipeline_schedule(Schedule::Gpipe).pipeline_time(32, 1.0, 8.0, p) == approx(39.0));
  CHECK(pipeline_schedule(Schedule::OneFOneB).pipeline_time(32, 1.0, 8.0, p) == approx(39.0));
  CHECK(pipeline_schedule(Schedule::Interleaved).pipeline_time(32, 1.0, 8.0, p) == approx(33.75));
  // Unequal stages: the slowest sets the pace, the others fill the ramp (7 stages of 0.5 s, one of 1 s).
  CHECK(pipeline_schedule(Schedule::OneFOneB).pipeline_time(32, 1.0, 4.5, p) == approx(32 + 3.5));
}

TEST_CASE("activations in flight and warm-up forwards") {
  const ParallelLayout p = layout(8, 4, 32);
  // GPipe holds every micro-batch; 1F1B stage s holds pp - s (8 on the first stage, 1 on the last).
  CHECK(pipeline_schedule(Schedule::Gpipe).micro_batches_in_flight(p, 0, 32) == approx(32.0));
  CHECK(pipeline_schedule(Schedule::OneFOneB).micro_batches_in_flight(p, 0, 32) == approx(8.0));
  CHECK(pipeline_schedule(Schedule::OneFOneB).micro_batches_in_flight(p, 7, 32) == approx(1.0));
  CHECK(pipeline_schedule(Schedule::OneFOneB).warmup_forwards(p, 0, 32) == 7);
  // Interleaved, stage 0: (p - 1) x 2 + (v - 1) x p = 14 + 24 = 38 warm-up chunk forwards; 39 chunks of 1/4 of
  // the stage = 9.75 micro-batches = p (1 + (p - 1)/(p v)) = 8 x 1.21875 (Korthikanti 2022 §4.2.3).
  CHECK(pipeline_schedule(Schedule::Interleaved).warmup_forwards(p, 0, 32) == 38);
  CHECK(pipeline_schedule(Schedule::Interleaved).micro_batches_in_flight(p, 0, 32) == approx(9.75));
  // With only pp micro-batches Megatron runs every forward first (schedules.py: all_warmup_microbatches), so
  // every stage holds all 8 x 4 chunks = 8 micro-batches.
  const ParallelLayout q = layout(8, 4, 8);
  CHECK(pipeline_schedule(Schedule::Interleaved).warmup_forwards(q, 7, 8) == 32);
  CHECK(pipeline_schedule(Schedule::Interleaved).micro_batches_in_flight(q, 7, 8) == approx(8.0));
}
