// Checkpoint model: size from the parameters, storage tiers sharing their bandwidth, and what each
// method blocks, persists and restores.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include "models/compute/transformer.hpp"
#include "models/core/errors.hpp"
#include "models/reliability/checkpoint_model.hpp"
#include "models/scenario/scenario.hpp"

using namespace trainsim;
using Json = nlohmann::json;

namespace {
Scenario scenario(const Json& doc) { return parse_scenario(doc, false); }
}  // namespace

TEST_CASE("checkpoint size: weights + fp32 master + Adam moments for full training") {
  // bf16 weights (2) + fp32 master (4) + two fp32 Adam moments (8) = 14 bytes per parameter.
  const Scenario s = scenario({{"model", "llama3.1-405b"}, {"training", {{"global_batch_size", 2048}, {"distributed_optimizer", true}}},
                               {"parallel", {{"tp", 8}, {"pp", 1}}}, {"hardware", {{"num_nodes", 2048}}}});
  const CheckpointSize c = checkpoint_size(s.model, s.training, s.parallel, s.hardware);
  CHECK(c.parameters == trainsim::test::approx(count_parameters(s.model).total));
  CHECK(c.bytes_per_parameter == trainsim::test::approx(14.0));
  CHECK(c.state_bytes == trainsim::test::approx(14.0 * c.parameters));
  CHECK(c.restore_bytes == c.state_bytes);
  // The per-GPU snapshot is the most loaded GPU's states: far less than the whole.
  CHECK(c.per_gpu_bytes > 0);
  CHECK(c.per_gpu_bytes < c.state_bytes / 8);

  // BLOOM-176B's checkpoints were 2.3 TB (huggingface.co/blog/bloom-megatron-deepspeed): bf16 + Adam at
  // 14 B/param is 2.46e12 bytes = 2.24 TiB, within 3% of 2.3 read as TiB.
  const Scenario b = scenario({{"model", "bloom-176b"}, {"training", {{"global_batch_size", 2048}}}, {"hardware", {{"gpu", "a100-sxm-80gb"}, {"num_nodes", 48}}}});
  const double bloom_tib = checkpoint_size(b.model, b.training, b.parallel, b.hardware).state_bytes / 1099511627776.0;
  CHECK(bloom_tib == trainsim::test::approx(2.3).epsilon(0.03));

  // fp32 training keeps no separate master copy: 4 + 8 = 12 B/param; SGD: 2 + 4 + 4 = 10.
  Scenario f = s;
  f.training.precision = Precision::Fp32;
  CHECK(checkpoint_size(f.model, f.training, f.parallel, f.hardware).bytes_per_parameter == trainsim::test::approx(12.0));
  f = s;
  f.training.optimizer = OptimizerKind::Sgd;
  CHECK(checkpoint_size(f.model, f.training, f.parallel, f.hardware).bytes_per_parameter == trainsim::test::approx(10.0));
}

TEST_CASE("checkpoint size: LoRA saves the adapters, a restart also reads the base") {
  const Scenario s = scenario({{"model", "llama3-70b"}, {"training", {{"mode", "lora"}, {"global_batch_size", 16}, {"lora", {{"rank", 16}}}}},
                               {"hardware", {{"num_gpus", 8}}}});
  const CheckpointSize c = checkpoint_size(s.model, s.training, s.parallel, s.hardware);
  CHECK(c.trained_parameters == trainsim::test::approx(lora_parameters(s.model, s.training.lora)));
  CHECK(c.state_bytes == trainsim::test::approx(12.0 * c.trained_parameters));  // fp32 adapters + two Adam moments
  CHECK(c.restore_bytes == trainsim::test::approx(c.state_bytes + 2.0 * c.parameters));
  CHECK(c.state_bytes < 0.05 * c.restore_bytes);  // 0.2B adapters vs 70.6B frozen
}

TEST_CASE("checkpoint size: weights only keeps the 16-bit weights (or the fp32 adapters)") {
  // Llama-3-8B in bf16 with AdamW: 2 B/param of weights out of the full state's 14 (Hugging Face save_only_model,
  // Megatron --no-save-optim drop the master copy and both moments).
  const Scenario s = scenario({{"model", "llama3-8b"}, {"training", {{"global_batch_size", 64}}}, {"hardware", {{"num_gpus", 8}}}});
  const CheckpointSize full = checkpoint_size(s.model, s.training, s.parallel, s.hardware);
  const CheckpointSize w = checkpoint_size(s.model, s.training, s.parallel, s.hardware, CheckpointContents::Weights);
  CHECK(w.state_bytes == trainsim::test::approx(8030261248.0 * 2));
  CHECK(w.bytes_per_parameter == trainsim::test::approx(2.0));
  CHECK(w.restore_bytes == w.state_bytes);
  CHECK(w.per_gpu_bytes == trainsim::test::approx(full.per_gpu_bytes * 2 / 14));  // the same share of each GPU's states
  // LoRA: the fp32 adapters alone, 4 B/param instead of 12 with their moments; a restart still reads the base.
  const Scenario l = scenario({{"model", "llama3-8b"}, {"training", {{"mode", "lora"}, {"global_batch_size", 8}}}, {"hardware", {{"num_gpus", 1}}}});
  const CheckpointSize lw = checkpoint_size(l.model, l.training, l.parallel, l.hardware, CheckpointContents::Weights);
  CHECK(lw.state_bytes == trainsim::test::approx(41943040.0 * 4));  // r = 16 on all seven projections of 32 layers
  CHECK(lw.restore_bytes == trainsim::test::approx(41943040.0 * 4 + 8030261248.0 * 2));
}

TEST_CASE("tiered checkpoints: local NVMe first, then an upload that must end before the checkpoint outlives a node") {
  // 16 nodes write 14 B/param of Llama-3-70B to their NVMe (12 GB/s a node, not shared), then upload to the object
  // store (10 GB/s a node, 200 GB/s for the bucket: 16 nodes get 160 GB/s).
  const Scenario s = scenario({{"model", "llama3-70b"}, {"training", {{"global_batch_size", 512}, {"distributed_optimizer", true}}},
                               {"parallel", {{"tp", 8}}}, {"hardware", {{"num_nodes", 16}}}});
  const CheckpointSize size = checkpoint_size(s.model, s.training, s.parallel, s.hardware);
  CheckpointSettings cs;
  cs.storage.tier = "local-nvme";
  const CheckpointCosts local = checkpoint_costs(cs, checkpoint_context(size, cs, s.hardware));
  cs.upload_to = "object-store";
  const CheckpointContext ctx = checkpoint_context(size, cs, s.hardware);
  const CheckpointCosts tiered = checkpoint_costs(cs, ctx);
  const double bytes = size.state_bytes;
  CHECK(ctx.write_bandwidth == trainsim::test::approx(16 * 12e9));
  CHECK(ctx.upload_bandwidth == trainsim::test::approx(160e9));
  CHECK(tiered.blocking_s == trainsim::test::approx(local.blocking_s));  // the upload overlaps training
  CHECK(tiered.upload_s == trainsim::test::approx(bytes / 160e9));
  CHECK(tiered.persist_s == trainsim::test::approx(bytes / 160e9));      // sync: counts once uploaded
  // A restart: 15 nodes read their own shard at 12 GB/s, the replacement reads the lost one at 10 GB/s.
  CHECK(tiered.restore_s == trainsim::test::approx(std::max(bytes / (16 * 12e9), bytes / 16 / 10e9)));
  // The parallel file system outlives a node by itself: the upload (for safekeeping) does not delay persistence.
  cs.storage.tier = "parallel-fs";
  const CheckpointCosts pfs = checkpoint_costs(cs, checkpoint_context(size, cs, s.hardware));
  CHECK(pfs.persist_s == 0);
  CHECK(pfs.upload_s == trainsim::test::approx(bytes / 160e9));
  // In-memory replicates to a peer: the upload to the object store is off its recovery path too.
  cs.storage.tier = "local-nvme";
  cs.method = "in-memory";
  const CheckpointContext mem_ctx = checkpoint_context(size, cs, s.hardware);
  CHECK(checkpoint_costs(cs, mem_ctx).persist_s == trainsim::test::approx(mem_ctx.peer_copy_s()));
}

TEST_CASE("staging an asynchronous checkpoint takes host memory: one snapshot a GPU, two for in-memory") {
  const Scenario s = scenario({{"model", "llama3-70b"}, {"training", {{"global_batch_size", 512}, {"distributed_optimizer", true}}},
                               {"parallel", {{"tp", 8}}}, {"hardware", {{"num_nodes", 16}}}});
  const CheckpointSize size = checkpoint_size(s.model, s.training, s.parallel, s.hardware);
  CheckpointSettings cs;
  const CheckpointContext ctx = checkpoint_context(size, cs, s.hardware);
  CHECK(staging_host_bytes_per_node(cs, ctx) == 0);  // sync writes from the GPU
  cs.method = "async";
  CHECK(staging_host_bytes_per_node(cs, ctx) == trainsim::test::approx(8 * size.per_gpu_bytes));
  cs.method = "in-memory";  // its own snapshot and a peer node's replica
  CHECK(staging_host_bytes_per_node(cs, ctx) == trainsim::test::approx(16 * size.per_gpu_bytes));
}

TEST_CASE("storage tiers share their aggregate bandwidth") {
  std::vector<std::string> names;
  for (const auto& t : storage_tiers()) names.push_back(t.name);
  CHECK(names == std::vector<std::string>{"local-nvme", "object-store", "parallel-fs"});
  const StorageTier& pfs = *find_storage_tier("parallel-fs");
  CHECK(pfs.aggregate_bandwidth == 2e12);  // Llama 3 paper: Tectonic sustains 2 TB/s
  // Few nodes: limited by their clients; many: by the tier, split among the jobs writing at once.
  CHECK(shared_bandwidth(pfs, 4, 1) == trainsim::test::approx(4 * pfs.per_node_bandwidth));
  CHECK(shared_bandwidth(pfs, 2048, 1) == trainsim::test::approx(2e12));
  CHECK(shared_bandwidth(pfs, 2048, 4) == trainsim::test::approx(0.5e12));
  // Local NVMe scales with the nodes and is not shared.
  const StorageTier& nvme = *find_storage_tier("local-nvme");
  CHECK(shared_bandwidth(nvme, 2048, 4) == trainsim::test::approx(2048 * nvme.per_node_bandwidth));
}

TEST_CASE("checkpoint methods: sync blocks for the write, async and in-memory for a snapshot") {
  const Scenario s = scenario({{"model", "llama3.1-405b"}, {"training", {{"global_batch_size", 2048}, {"distributed_optimizer", true}}},
                               {"parallel", {{"tp", 8}, {"pp", 1}}}, {"hardware", {{"num_nodes", 2048}}}});
  const CheckpointSize size = checkpoint_size(s.model, s.training, s.parallel, s.hardware);
  CheckpointSettings cs;
  const CheckpointContext ctx = checkpoint_context(size, cs, s.hardware);
  CHECK(ctx.write_bandwidth == trainsim::test::approx(2e12));
  CHECK(ctx.write_s() == trainsim::test::approx(size.state_bytes / 2e12));

  std::vector<std::string> names;
  for (const auto& m : checkpoint_methods()) names.push_back(m->name());
  CHECK(names == std::vector<std::string>{"async", "in-memory", "incremental", "sync"});

  auto costs = [&](const char* method) {
    CheckpointSettings x = cs;
    x.method = method;
    return checkpoint_costs(x, ctx);
  };
  const CheckpointCosts sync = costs("sync"), async = costs("async"), mem = costs("in-memory"), inc = costs("incremental");
  CHECK(sync.blocking_s == trainsim::test::approx(cs.overhead_s + ctx.write_s()));
  CHECK(sync.persist_s == 0);
  CHECK(async.blocking_s == trainsim::test::approx(cs.overhead_s + ctx.snapshot_s()));
  CHECK(async.persist_s == trainsim::test::approx(ctx.write_s()));
  CHECK(async.blocking_s < sync.blocking_s);
  CHECK(mem.restore_s < sync.restore_s);  // from a peer's memory (Gemini), not the file system
  CHECK(mem.persist_s == trainsim::test::approx(ctx.peer_copy_s()));
  // Incremental: 1 full + 9 increments of 1/6 on average.
  CHECK(inc.blocking_s == trainsim::test::approx(cs.overhead_s + ctx.write_s() * (1 + 9.0 / 6) / 10));
  CHECK(inc.restore_s > sync.restore_s);

  // Two jobs checkpointing at once halve the tier's share, and double the write.
  CheckpointSettings shared = cs;
  shared.storage.concurrent_jobs = 2;
  CHECK(checkpoint_context(size, shared, s.hardware).write_s() == trainsim::test::approx(2 * ctx.write_s()));
  // A given blocking cost replaces the modelled one.
  CheckpointSettings given = cs;
  given.blocking_override_s = 60;
  CHECK(checkpoint_costs(given, ctx).blocking_s == 60);

  CheckpointSettings bad = cs;
  bad.method = "snapshot";
  CHECK_THROWS_WITH_AS(checkpoint_costs(bad, ctx), doctest::Contains("expected one of async, in-memory, incremental, sync"), InputError);
}

TEST_CASE("the scenario's checkpoint object") {
  std::vector<AppliedDefault> d;
  CheckpointSettings s = parse_checkpoint_settings(
      Json{{"method", "async"}, {"interval", "30min"}, {"storage", {{"tier", "object-store"}, {"aggregate_bandwidth", "100GB/s"}, {"concurrent_jobs", 3}}}},
      "/reliability/checkpoint", &d);
  CHECK(s.method == "async");
  CHECK(s.storage.tier == "object-store");
  CHECK(s.storage.aggregate_bandwidth == 100e9);
  CHECK(s.storage.concurrent_jobs == 3);
  CHECK_THROWS_WITH_AS(parse_checkpoint_settings(Json{{"method", "asynch"}}, "/reliability/checkpoint", nullptr),
                       doctest::Contains("/reliability/checkpoint/method: got \"asynch\"; expected one of async"), InputError);
  CHECK_THROWS_WITH_AS(parse_checkpoint_settings(Json{{"storage", "nfs"}}, "/c", nullptr), doctest::Contains("/c/storage"), InputError);
  const CheckpointSettings t = parse_checkpoint_settings(Json{{"storage", "local-nvme"}, {"upload_to", "object-store"}, {"contents", "weights"}}, "/c", nullptr);
  CHECK(t.upload_to == "object-store");
  CHECK(t.contents == CheckpointContents::Weights);
  CHECK_THROWS_WITH_AS(parse_checkpoint_settings(Json{{"upload_to", "tape"}}, "/c", nullptr), doctest::Contains("/c/upload_to"), InputError);
  CHECK_THROWS_WITH_AS(parse_checkpoint_settings(Json{{"contents", "optimizer"}}, "/c", nullptr), doctest::Contains("expected one of full, weights"), InputError);
  CHECK_THROWS_WITH_AS(parse_checkpoint_settings(Json{{"costt", "1s"}}, "/c", nullptr), doctest::Contains("did you mean \"cost\""), InputError);
}

TEST_CASE("checkpoint inputs outside their plausible range are errors naming the path") {
  CHECK_THROWS_WITH_AS(parse_checkpoint_settings(Json{{"cost", "2d"}}, "/reliability/checkpoint", nullptr),
                       doctest::Contains("/reliability/checkpoint/cost: got \"2d\"; expected a blocking checkpoint cost from 0 to 1 day"), InputError);
  CHECK_THROWS_WITH_AS(parse_checkpoint_settings(Json{{"overhead", "2h"}}, "/c", nullptr), doctest::Contains("/c/overhead: got \"2h\""), InputError);
  CHECK_THROWS_WITH_AS(parse_checkpoint_settings(Json{{"storage", {{"aggregate_bandwidth", "1KB/s"}}}}, "/c", nullptr),
                       doctest::Contains("/c/storage/aggregate_bandwidth: got \"1KB/s\"; expected a bandwidth from 100 MB/s to 1 PB/s"), InputError);
  CHECK_THROWS_WITH_AS(parse_checkpoint_settings(Json{{"storage", {{"concurrent_jobs", 0}}}}, "/c", nullptr),
                       doctest::Contains("/c/storage/concurrent_jobs: got 0"), InputError);
  CHECK_THROWS_WITH_AS(parse_checkpoint_settings(Json{{"full_every", 100000}}, "/c", nullptr), doctest::Contains("/c/full_every: got 100000"),
                       InputError);
  CHECK_THROWS_WITH_AS(parse_checkpoint_settings(Json{{"incremental_fraction", 0}}, "/c", nullptr),
                       doctest::Contains("/c/incremental_fraction: got 0"), InputError);
  CHECK(parse_checkpoint_settings(Json{{"cost", "60s"}, {"host_bandwidth", "50GB/s"}}, "/c", nullptr).blocking_override_s == 60);
}
