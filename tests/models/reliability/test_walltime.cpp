// The scheduler time limit: time to train over the expected goodput under default failures, plus a margin.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <cmath>

#include "models/reliability/checkpoint_model.hpp"
#include "models/reliability/failure_model.hpp"
#include "models/reliability/reliability.hpp"
#include "models/reliability/walltime.hpp"
#include "models/scenario/scenario.hpp"

using namespace trainsim;

TEST_CASE("walltime: GPT-3 175B on 128 DGX A100 nodes, against Young's first-order model") {
  const Scenario s = parse_scenario(nlohmann::json::parse(R"({
    "model": "gpt3-175b", "training": {"seq_len": 2048, "global_batch_size": 1536, "train_tokens": "300B"},
    "parallel": {"tp": 8, "pp": 8, "dp": 16}, "hardware": {"gpu": "a100-sxm-80gb", "num_gpus": 1024}})"));
  const double compute = 30 * 86400.0;
  const WalltimeEstimate w = walltime_estimate(s.model, s.training, s.parallel, s.hardware, compute, 0.25);
  // Default failures: 4 per 1,000 node-days on 128 nodes -> 0.512 a day -> MTBF 86400 / 0.512 = 168,750 s.
  CHECK(w.mtbf_s == trainsim::test::approx(86400.0 / (128 * 4.0 / 1000)).epsilon(0.02));
  // Young (1974): tau ~ sqrt(2 delta M); first-order goodput 1 - delta/tau - (tau/2 + R)/M. Daly's complete model
  // agrees with it to second order in delta/M and R/M (both small here).
  const double young = std::sqrt(2 * w.checkpoint_s * w.mtbf_s);
  const double first_order = 1 - w.checkpoint_s / young - (young / 2 + w.recovery_s) / w.mtbf_s;
  CHECK(w.interval_s == trainsim::test::approx(young).epsilon(0.05));
  CHECK(w.ettr == trainsim::test::approx(first_order).epsilon(0.005));
  CHECK(w.ettr < 1);
  CHECK(w.expected_s == trainsim::test::approx(compute / w.ettr));
  CHECK(w.limit_s == trainsim::test::approx(compute / w.ettr * 1.25));
}

TEST_CASE("walltime: a job that cannot progress has no finite limit") {
  const Scenario s = parse_scenario(nlohmann::json::parse(R"({"model": "llama3-8b", "training": {"global_batch_size": 8}})"));
  HardwareSpec huge = s.hardware;
  huge.num_nodes = 1000000;  // a million nodes: MTBF ~ 22 s, shorter than one recovery
  huge.num_gpus = 8000000;
  const WalltimeEstimate w = walltime_estimate(s.model, s.training, s.parallel, huge, 3600, 0.25);
  CHECK(w.mtbf_s < w.recovery_s);
  CHECK((!std::isfinite(w.limit_s) || w.limit_s > 1e6));
}
