// The data feed against the GPUs: every number below is derived by hand from the scenario (sequences a step, bytes
// a sequence) and the tier's documented bandwidths, at a given step time (not the step model's).
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include "models/core/errors.hpp"
#include "models/scenario/scenario.hpp"
#include "models/step/data_feed.hpp"

using namespace trainsim;
using Json = nlohmann::json;

namespace {
Scenario with_data(const Json& data, const char* model = "llama3-8b", const char* mode = "sft", int nodes = 1) {
  return parse_scenario({{"model", model},
                         {"training", {{"mode", mode}, {"seq_len", 4096}, {"global_batch_size", 64 * nodes}}},
                         {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_nodes", nodes}}},
                         {"data", data}});
}
}  // namespace

TEST_CASE("pre-tokenized ids from a parallel file system: int32 ids above 65,500 tokens of vocabulary, uint16 below") {
  // Llama-3's 128,256-token vocabulary: 4 B a token. 64 sequences of 4,096 tokens every 4 s on one node: 16 a second,
  // 16 x 4,096 x 4 = 262,144 B/s against the node's 25 GB/s client link (the tier's 2 TB/s is not the limit).
  const DataFeedEstimate e = estimate_data_feed(with_data({{"storage", "parallel-fs"}}), 4.0);
  CHECK(e.bytes_per_sample == 4096 * 4);
  CHECK(e.samples_per_s == trainsim::test::approx(16));
  CHECK(e.tokens_per_s == trainsim::test::approx(16 * 4096));
  CHECK(e.read_bytes_per_s == trainsim::test::approx(262144));
  CHECK(e.storage_bytes_per_s == trainsim::test::approx(25e9));
  CHECK(e.worker_samples_per_s == 0);  // memory-mapped ids: no worker bound
  CHECK(e.headroom == trainsim::test::approx(25e9 / 262144));
  CHECK_FALSE(e.starves);
  CHECK(e.feed_bound_step_s == 4.0);
  // GPT-3's 50,257 tokens (the GPT-2 BPE) fit uint16: 2 B a token.
  CHECK(estimate_data_feed(with_data(Json::object(), "gpt3-175b"), 4.0).bytes_per_sample == 4096 * 2);
  // DPO reads two sequences a pair.
  CHECK(estimate_data_feed(with_data(Json::object(), "llama3-8b", "dpo"), 4.0).samples_per_s == trainsim::test::approx(32));
}

TEST_CASE("raw text is tokenized by the workers: 2 a GPU at 1M tokens/s each") {
  // A 4,096-token sequence costs a worker 4.096 ms; 16 workers on the node prepare 3,906.25 sequences a second
  // against the 16 needed: 244x headroom, the workers the tighter bound (text is 4 B a token: 262 kB/s read).
  const DataFeedEstimate e = estimate_data_feed(with_data({{"format", "text"}}), 4.0);
  CHECK(e.worker_samples_per_s == trainsim::test::approx(16 / 4.096e-3));
  CHECK(e.headroom == trainsim::test::approx(3906.25 / 16));
  CHECK(e.bottleneck == "workers");
  CHECK(e.read_bytes_per_s == trainsim::test::approx(16 * 4096 * 4.0));
}

TEST_CASE("images from an object store at 10 MB/s a node starve the GPUs") {
  // 1 MB a sample, 16 a second: 16 MB/s needed against 10 MB/s. The step stretches to 4 s x 16 / 10 = 6.4 s.
  const DataFeedEstimate e =
      estimate_data_feed(with_data({{"storage", {{"tier", "object-store"}, {"per_node_bandwidth", "10MB/s"}}}, {"bytes_per_sample", "1MB"}}), 4.0);
  CHECK(e.storage_bytes_per_s == trainsim::test::approx(10e6));
  CHECK(e.headroom == trainsim::test::approx(10.0 / 16));
  CHECK(e.starves);
  CHECK(e.bottleneck == "storage");
  CHECK(e.feed_bound_step_s == trainsim::test::approx(6.4));
  // 64 nodes share the bucket's 200 GB/s with 3 other jobs: 50 GB/s for the job, 781 MB/s a node, under the
  // 10 GB/s client link.
  const DataFeedEstimate shared =
      estimate_data_feed(with_data({{"storage", {{"tier", "object-store"}, {"concurrent_jobs", 4}}}}, "llama3-8b", "sft", 64), 4.0);
  CHECK(shared.storage_bytes_per_s == trainsim::test::approx(50e9 / 64));
}

TEST_CASE("the main process as loader (0 workers) adds its time to every step") {
  // 20 ms a sequence, 8 sequences a GPU a step: 160 ms between steps.
  const DataFeedEstimate e = estimate_data_feed(with_data({{"cpu_per_sample", "20ms"}, {"workers_per_gpu", 0}}), 4.0);
  CHECK(e.starves);
  CHECK(e.bottleneck == "main process");
  CHECK(e.feed_bound_step_s == trainsim::test::approx(4.16));
}

TEST_CASE("the data section's errors name the path") {
  CHECK_THROWS_WITH_AS(with_data({{"format", "parquet"}}), doctest::Contains("/data/format"), InputError);
  CHECK_THROWS_WITH_AS(with_data({{"storage", "tape"}}), doctest::Contains("/data/storage"), InputError);
  CHECK_THROWS_WITH_AS(with_data({{"workers_per_gpu", 1000}}), doctest::Contains("/data/workers_per_gpu"), InputError);
  CHECK_THROWS_WITH_AS(with_data({{"cpu_per_sample", "0s"}}), doctest::Contains("/data/cpu_per_sample"), InputError);
  CHECK_THROWS_WITH_AS(with_data({{"worker", 2}}), doctest::Contains("did you mean \"workers_per_gpu\""), InputError);
  CHECK_THROWS_WITH_AS(with_data(Json("fast")), doctest::Contains("/data"), InputError);
  // The section survives the scenario's JSON round trip (what plan and sweep echo).
  const Scenario s = with_data({{"storage", {{"tier", "object-store"}, {"per_node_bandwidth", "10MB/s"}}}, {"format", "text"}});
  const Scenario again = parse_scenario(to_json(s));
  CHECK(again.data.given);
  CHECK(again.data.storage.per_node_bandwidth == 10e6);
  CHECK(again.data.format == DataFormat::Text);
}
