// Step-time assembly, FLOP formulas and layout search: published formulas and invariants.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include "models/calibration/accuracy_bands.hpp"
#include "models/compute/flops.hpp"
#include "models/layout/search.hpp"
#include "models/memory/memory.hpp"
#include "models/scenario/framework.hpp"
#include "models/scenario/scenario.hpp"
#include "models/step/step.hpp"

using namespace trainsim;
using Json = nlohmann::json;

namespace {
// An H100's host copies: PCIe Gen5 x16, 63 GB/s a direction raw, at the 0.83 pinned copies reach (spec.hpp
// kPcieCopyEfficiency): 52.3 GB/s.
constexpr double kH100Copy = 63e9 * 0.83;
Scenario gpt3(Json parallel, const char* recompute = "full", int gbs = 1536) {
  return parse_scenario({{"model", "gpt3-175b"},
                         {"training", {{"seq_len", 2048}, {"global_batch_size", gbs}, {"recompute", recompute}, {"train_tokens", "300B"}}},
                         {"parallel", parallel},
                         {"hardware", {{"gpu", "a100-sxm-80gb"}, {"num_gpus", 1024}}}});
}
}  // namespace

TEST_CASE("Megatron's FLOP formulas: 72·B·s·L·h²(...) model, 96·B·s·L·h²(...) with full recompute") {
  // Narayanan et al. SC'21 §5.1 for GPT (f = 4h, MHA): model FLOPs 72·B·s·L·h²·(1 + s/(6h) + V/(12·h·L));
  // with full recomputation 96·B·s·L·h²·(1 + s/(6h) + V/(16·h·L)).
  Scenario s = gpt3({{"tp", 8}, {"pp", 16}});
  const double B = 1536, seq = 2048, L = 96, h = 12288, V = 50257;
  CHECK(model_flops_per_iteration(s.model, s.training, B) == trainsim::test::approx(72 * B * seq * L * h * h * (1 + seq / (6 * h) + V / (12 * h * L))));
  CHECK(hardware_flops_per_iteration(s.model, s.training, B) == trainsim::test::approx(96 * B * seq * L * h * h * (1 + seq / (6 * h) + V / (16 * h * L))));
}

TEST_CASE("gated MLP and GQA enter the FLOP formula as in the reference README") {
  // 12·B·s·L·h²·(1 + (f/h)·g + n_kv/n_heads + s/h + V/(2·L·h)), g = 3/2 (Llama-3-8B: f = 14336, 8 of 32 KV heads).
  Scenario s = parse_scenario({{"model", "llama3-8b"}, {"training", {{"seq_len", 8192}, {"global_batch_size", 8}}}, {"hardware", {{"num_gpus", 8}}}});
  const double B = 8, seq = 8192, L = 32, h = 4096, f = 14336, V = 128256;
  CHECK(model_flops_per_iteration(s.model, s.training, B) ==
        trainsim::test::approx(12 * B * seq * L * h * h * (1 + f / h * 1.5 + 8.0 / 32 + seq / h + V / (2 * L * h))));
}

TEST_CASE("the pipeline bubble shrinks with more micro-batches") {
  // Narayanan et al. SC'21 §2.2: bubble fraction (p-1)/m for 1F1B.
  StepEstimate few, many;
  for (int gbs : {128, 1024}) {
    Scenario s = gpt3({{"tp", 8}, {"pp", 16}, {"micro_batch_size", 1}}, "full", gbs);
    StepModel sm(s.model, s.training, s.hardware);
    (gbs == 128 ? few : many) = sm.estimate(s.parallel);
  }
  // The pipeline's share of the step: what is left after the gradient reduce, the optimizer and the once-per-step
  // passes (the fabric sets the first: A100 nodes default to HDR 200 Gb/s).
  auto pipeline = [](const StepEstimate& e) { return e.time_s - e.breakdown.dp_comm_s - e.breakdown.optimizer_s - e.breakdown.overhead_s; };
  const double few_fraction = few.breakdown.bubble_s / pipeline(few), many_fraction = many.breakdown.bubble_s / pipeline(many);
  CHECK(few_fraction > many_fraction);
  CHECK(few_fraction == trainsim::test::approx(15.0 / (16 + 15)).epsilon(0.1));  // m = 16: bubble ≈ (p-1)/(m+p-1) of the pipeline
}

TEST_CASE("interleaving divides the bubble by the number of model chunks") {
  Scenario plain = gpt3({{"tp", 8}, {"pp", 8}, {"micro_batch_size", 1}});
  Scenario inter = gpt3({{"tp", 8}, {"pp", 8}, {"vpp", 3}, {"micro_batch_size", 1}});
  StepModel a(plain.model, plain.training, plain.hardware), b(inter.model, inter.training, inter.hardware);
  CHECK(b.estimate(inter.parallel).breakdown.bubble_s < a.estimate(plain.parallel).breakdown.bubble_s / 2.5);
}

TEST_CASE("recomputation costs time; time to train and cost follow from the step") {
  Scenario none = gpt3({{"tp", 8}, {"pp", 16}, {"sequence_parallel", true}}, "selective");
  Scenario full = gpt3({{"tp", 8}, {"pp", 16}, {"sequence_parallel", true}}, "full");
  StepModel a(none.model, none.training, none.hardware), b(full.model, full.training, full.hardware);
  StepEstimate ea = a.estimate(none.parallel), eb = b.estimate(full.parallel);
  CHECK(eb.time_s > ea.time_s);
  CHECK(eb.breakdown.recompute_s > ea.breakdown.recompute_s);
  // 300B tokens in steps of 1,536 x 2,048 = 3,145,728 tokens: 95,367.4 -> 95,368 steps.
  CHECK(a.training_cost(ea, none.parallel).iterations == 95368);
  CHECK(ea.mfu > 0.2);
  CHECK(ea.mfu < 0.7);
}

TEST_CASE("a run's time, GPU-hours, cost and energy by hand") {
  HardwareSpec hw;
  hw.price_per_gpu_hour = 1.79;  // an A100's list price
  hw.gpu.tdp_watts = 400;
  // 100 steps of 36 s = 3,600 s = 1 h; on 1,024 GPUs 1,024 GPU-hours, $1,832.96, 409.6 kWh at 400 W.
  const TrainingCost c = run_cost(100, 36, 1024, hw);
  CHECK(c.time_to_train_s == doctest::Approx(3600));
  CHECK(c.gpu_hours == doctest::Approx(1024));
  CHECK(c.priced);
  CHECK(c.cost == doctest::Approx(1832.96));
  CHECK(c.energy_known);
  CHECK(c.energy_kwh == doctest::Approx(409.6));
  hw.price_per_gpu_hour = 0;  // no price: no cost, not a cost of zero
  CHECK_FALSE(run_cost(100, 36, 1024, hw).priced);
}

TEST_CASE("the search keeps what the scenario fixes") {
  Scenario s = parse_scenario({{"model", "llama3-8b"},
                               {"training", {{"seq_len", 4096}, {"global_batch_size", 64}, {"recompute", "selective"}, {"zero_stage", 1}}},
                               {"parallel", {{"tp", 2}, {"micro_batch_size", 2}}},
                               {"hardware", {{"num_gpus", 16}}}},
                              false);
  SearchOptions so;
  so.threads = 2;
  SearchResult r = search_plans(s, {16}, search_space_from(s), so);
  REQUIRE(!r.plans.empty());
  for (const auto& p : r.plans) {
    CHECK(p.layout.tp == 2);
    CHECK(p.layout.micro_batch_size == 2);
    CHECK(p.training.recompute == Recompute::Selective);
    CHECK(p.training.zero_stage == 1);
  }
  CHECK(r.feasible <= r.searched);
}

TEST_CASE("a fully fixed layout is the one reported, and the search is deterministic across thread counts") {
  Scenario fixed = gpt3({{"tp", 8}, {"pp", 16}, {"dp", 8}, {"micro_batch_size", 1}, {"sequence_parallel", true}, {"vpp", 1},
                         {"cp", 1}, {"schedule", "1f1b"}},
                        "selective");
  fixed.defaults.clear();  // everything given
  SearchOptions so;
  SearchResult r = search_plans(fixed, {1024}, search_space_from(fixed), so);
  REQUIRE(r.plans.size() == 1);
  CHECK(r.plans[0].layout.pp == 16);

  Scenario open_free = parse_scenario({{"model", "gpt3-175b"}, {"training", {{"seq_len", 2048}, {"global_batch_size", 1536}}},
                                       {"hardware", {{"gpu", "a100-sxm-80gb"}, {"num_gpus", 1024}}}},
                                      false);
  SearchOptions one, two;
  one.threads = 1;
  two.threads = 2;
  one.top = two.top = 5;
  SearchResult a = search_plans(open_free, {1024}, search_space_from(open_free), one);
  SearchResult b = search_plans(open_free, {1024}, search_space_from(open_free), two);
  REQUIRE(a.plans.size() == b.plans.size());
  CHECK(a.searched == b.searched);
  for (std::size_t i = 0; i < a.plans.size(); ++i) CHECK(a.plans[i].step.time_s == b.plans[i].step.time_s);
}

TEST_CASE("tensor-parallel communication overlap hides what the GEMMs cover") {
  Scenario plain = gpt3({{"tp", 8}, {"pp", 16}, {"sequence_parallel", true}}, "selective");
  Scenario overlap = gpt3({{"tp", 8}, {"pp", 16}, {"sequence_parallel", true}, {"tp_comm_overlap", true}}, "selective");
  StepModel a(plain.model, plain.training, plain.hardware), b(overlap.model, overlap.training, overlap.hardware);
  const StepEstimate ea = a.estimate(plain.parallel), eb = b.estimate(overlap.parallel);
  CHECK(ea.breakdown.tp_comm_s > 0);
  CHECK(eb.breakdown.tp_comm_s < ea.breakdown.tp_comm_s);
  CHECK(eb.time_s == trainsim::test::approx(ea.time_s - (ea.breakdown.tp_comm_s - eb.breakdown.tp_comm_s) -
                                     (ea.breakdown.bubble_s - eb.breakdown.bubble_s)));
}

TEST_CASE("every step carries the band of its framework family and regime, from presets/accuracy_bands.json") {
  // GPT-3 175B on many A100 nodes with tp 8 implies megatron-core: the megatron/multinode group (Korthikanti 2022,
  // SC'21 and Megatron-Core runs); the band is the step time times its 10th and 90th percentiles of measured /
  // predicted time.
  Scenario s = gpt3({{"tp", 8}, {"pp", 8}, {"sequence_parallel", true}}, "selective");
  const StepEstimate e = StepModel(s.model, s.training, s.hardware).estimate(s.parallel);
  REQUIRE(e.band != nullptr);
  CHECK(e.band->group == "megatron/multinode");
  CHECK(e.band->cases >= kMinBandCases);
  CHECK(e.band->low <= e.band->median);
  CHECK(e.band->median <= e.band->high);
  CHECK(e.time_s_low == trainsim::test::approx(e.time_s * e.band->low));
  CHECK(e.time_s_high == trainsim::test::approx(e.time_s * e.band->high));
  // A group with no runs falls back to its family, then to all runs.
  // A regime with fewer than kMinBandCases runs is an extrapolation: the first fallback's band, widened by the spread
  // between sources (presets/accuracy_bands.json source_spread), never narrower than the group's own.
  const AccuracyBand& own = accuracy_band("megatron", "multinode", false);
  CHECK_FALSE(own.extrapolated);
  CHECK(own.regime == "megatron/multinode");
  const AccuracyBand& node = accuracy_band("megatron", "node", false);  // two runs on one node: the family's band
  CHECK(node.extrapolated);
  CHECK(node.regime == "megatron/node");
  CHECK(node.group == "megatron");
  CHECK(node.low <= accuracy_band("megatron", "multinode", false).high);
  CHECK(accuracy_band("no-such-family", "multinode", false).group == "all");
  CHECK(accuracy_band("no-such-family", "multinode", false).extrapolated);
  // The keys, most specific first: an MoE model on one node of a PyTorch framework.
  CHECK(band_keys("pytorch", "node", true) == std::vector<std::string>{"pytorch/node/moe", "pytorch/node", "pytorch", "all"});
  CHECK(band_scale(1, 8) == "1gpu");
  CHECK(band_scale(8, 8) == "node");
  CHECK(band_scale(16, 8) == "multinode");
  // ZeRO-3 at tp 1 implies FSDP2, a PyTorch framework: its own family's band.
  Scenario f = gpt3({{"tp", 1}, {"pp", 1}}, "full", 2048);
  f.training.zero_stage = 3;
  const StepEstimate ef = StepModel(f.model, f.training, f.hardware).estimate(f.parallel);
  REQUIRE(ef.band != nullptr);
  CHECK(ef.band->group.rfind("pytorch", 0) == 0);
  // A step that waits on the host for at least a fifth of its time has a regime of its own, looked up first.
  CHECK(band_keys("pytorch", "1gpu", true, true) == std::vector<std::string>{"pytorch/1gpu/host", "pytorch/1gpu/moe", "pytorch/1gpu", "pytorch", "all"});
  CHECK(host_bound_step(0.2, 1.0));
  CHECK_FALSE(host_bound_step(0.19, 1.0));
  // A tiny Llama on one H100 at 128 tokens: launches, not GPU work, set the pace; a 1B model at 4 x 4096 tokens: GPU work.
  auto one_gpu = [](int hidden, int layers, int batch, int seq) {
    return parse_scenario({{"model",
                            {{"num_hidden_layers", layers}, {"hidden_size", hidden}, {"num_attention_heads", 8}, {"num_key_value_heads", 8},
                             {"intermediate_size", 4 * hidden}, {"vocab_size", 32000}, {"hidden_act", "silu"}}},
                           {"training", {{"seq_len", seq}, {"global_batch_size", batch}, {"framework", "transformers"}}},
                           {"parallel", {{"tp", 1}, {"pp", 1}, {"micro_batch_size", batch}}},
                           {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 1}}}});
  };
  const Scenario tiny = one_gpu(256, 4, 1, 128), big = one_gpu(2048, 16, 4, 4096);
  const StepEstimate et = StepModel(tiny.model, tiny.training, tiny.hardware).estimate(tiny.parallel);
  const StepEstimate eb = StepModel(big.model, big.training, big.hardware).estimate(big.parallel);
  REQUIRE(host_bound_step(et.breakdown.host_s, et.time_s));
  REQUIRE_FALSE(host_bound_step(eb.breakdown.host_s, eb.time_s));
  CHECK(et.band->regime == "pytorch/1gpu/host");
  CHECK(eb.band->regime == "pytorch/1gpu");
}

TEST_CASE("offloaded optimizer on NVMe: PCIe, the CPU step at host memory bandwidth, then NVMe read and write") {
  // Llama-3-70B on one H100, ZeRO-3 under DeepSpeed, optimizer on NVMe: per parameter, the bf16 gradient down and the
  // bf16 weight up over PCIe Gen5 (2 + 2 B at 52.3 GB/s), CPU Adam reading and writing fp32 master and moments plus
  // gradient and weight (2 x 12 + 2 + 2 = 28 B at 25 GB/s per GPU), and the 12 B of states read from and written to
  // the node's NVMe (2 x 12 B at the local-nvme tier's 12 GB/s, one GPU on the node).
  Json doc = {{"model", "llama3-70b"},
              {"training", {{"mode", "sft"}, {"seq_len", 2048}, {"global_batch_size", 4}, {"zero_stage", 3}, {"recompute", "full"},
                            {"framework", "deepspeed"}, {"offload_optimizer", true}}},
              {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 1}, {"gpus_per_node", 1}}}};
  const Scenario cpu = parse_scenario(doc);
  const double P = count_parameters(cpu.model).total;
  const double on_cpu = StepModel(cpu.model, cpu.training, cpu.hardware).stream(cpu.parallel).optimizer_s;
  CHECK(on_cpu == trainsim::test::approx(P * 4 / kH100Copy + P * 28 / 25e9));
  doc["training"]["offload_optimizer_device"] = "nvme";
  const Scenario nvme = parse_scenario(doc);
  CHECK(StepModel(nvme.model, nvme.training, nvme.hardware).stream(nvme.parallel).optimizer_s ==
        trainsim::test::approx(on_cpu + P * 24 / 12e9));
}

TEST_CASE("an offloaded optimizer steps fused on the host, or as torch.optim's single-tensor loop: a memory pass per op") {
  // Llama-3-8B on 8 H100 under Megatron-Core's distributed optimizer with --optimizer-cpu-offload: each GPU updates
  // P/8 parameters. Per parameter, the fp32 gradient down and the fp32 master up over PCIe Gen5 (4 + 4 B at 52.3 GB/s:
  // HybridDeviceOptimizer copies the host result back into the GPU's master), the GPU's copy of it into the bf16
  // weight (a 6 B multi-tensor pass), then the CPU step at 25 GB/s per GPU. Megatron hands torch.optim.AdamW fused=True (megatron/core/optimizer/
  // __init__.py), torch's fused CPU kernel: 2 x 12 + 4 + 2 = 30 B. Without it (the trait false: torch.optim's default
  // on host tensors), one pass per op of torch/optim/adam.py _single_tensor_adam over fp32 parameter, gradient and
  // moments: param.mul_ 8, lerp_ 12, mul_ 8, addcmul_ 12, sqrt 8, div 8, add_ 8, addcdiv_ 16: 80 B.
  Json doc = {{"model", "llama3-8b"},
              {"training", {{"mode", "sft"}, {"seq_len", 4096}, {"global_batch_size", 8}, {"distributed_optimizer", true},
                            {"framework", "megatron-core"}, {"offload_optimizer", true}}},
              {"parallel", {{"tp", 1}, {"pp", 1}, {"dp", 8}}},
              {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 8}}}};
  auto optimizer_s = [&] {
    const Scenario s = parse_scenario(doc);
    return StepModel(s.model, s.training, s.hardware).stream(s.parallel).optimizer_s;
  };
  const double local = count_parameters(parse_scenario(doc).model).total / 8;
  const GpuSpec h100 = parse_scenario(doc).hardware.gpu;
  const double links = local * 8 / kH100Copy + multi_tensor_time(h100, gpu_compute_traits(h100), local * 6);
  CHECK(optimizer_s() == trainsim::test::approx(links + local * 30 / 25e9));
  doc["training"]["framework"] = {{"preset", "megatron-core"}, {"host_optimizer_fused", false}};
  CHECK(optimizer_s() == trainsim::test::approx(links + local * 80 / 25e9));
  // SGD with momentum and weight decay (torch/optim/sgd.py _single_tensor_sgd): grad.add(param) 12, buf.mul_ 8,
  // buf.add_(grad) 12, param.add_(buf) 12: 44 B; fused: 2 x (4 + 4) + 4 + 2 = 22 B.
  doc["training"]["optimizer"] = "sgd";
  CHECK(optimizer_s() == trainsim::test::approx(links + local * 44 / 25e9));
  doc["training"]["framework"] = "megatron-core";
  CHECK(optimizer_s() == trainsim::test::approx(links + local * 22 / 25e9));
  // The presets: the single-tensor loop where the stack leaves torch.optim's default on host tensors.
  CHECK_FALSE(find_framework("pytorch")->host_optimizer_fused);
  CHECK(find_framework("deepspeed")->host_optimizer_fused);
}

TEST_CASE("offloaded parameters: each ZeRO-3 gather first fetches this GPU's shard over PCIe (and from NVMe)") {
  // Llama-3-8B on 8 H100 under DeepSpeed ZeRO-3: a layer's gather of G bytes brings the local G/8 over PCIe Gen5
  // (52.3 GB/s) first, and from the node's NVMe at 12/8 GB/s a GPU when the shards live there.
  Json doc = {{"model", "llama3-8b"},
              {"training", {{"mode", "sft"}, {"seq_len", 4096}, {"global_batch_size", 8}, {"zero_stage", 3}, {"framework", "deepspeed"}}},
              {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 8}}}};
  auto gathers = [&](const char* where) {
    doc["training"]["offload_params"] = where;
    const Scenario s = parse_scenario(doc);
    std::vector<CommOp> out;
    for (const CommOp& op : StepModel(s.model, s.training, s.hardware).stream(s.parallel).dense.comm)
      if (op.collective == Collective::AllGather) out.push_back(op);
    return out;
  };
  const auto none = gathers("none"), cpu = gathers("cpu"), nvme = gathers("nvme");
  REQUIRE(!none.empty());
  REQUIRE(none.size() == cpu.size());
  for (std::size_t i = 0; i < none.size(); ++i) {
    CHECK(cpu[i].call_s == trainsim::test::approx(none[i].call_s + none[i].bytes / 8 / kH100Copy));
    CHECK(nvme[i].call_s == trainsim::test::approx(none[i].call_s + none[i].bytes / 8 * (1 / kH100Copy + 8 / 12e9)));
  }
}

TEST_CASE("the fullest op stream fits its lists: every pass of a DPO MoE layer under tp+sp, cp, ep, ZeRO-3 and HSDP") {
  // Forward, the reference model's forward, full recompute and backward (4 passes) each with TP all-gather and
  // reduce-scatter, the CP exchange, the MoE all-to-alls, the expert-TP all-gather and reduce-scatter (etp follows tp
  // here: 2) and a ZeRO-3 gather, plus the reduce-scatter and the HSDP all-reduce: 4 x 7 + 2 = 30, the most a layer
  // can hold. A list past its capacity throws instead of dropping an op.
  const Scenario s = parse_scenario({{"model", "mixtral-8x7b"},
                                     {"training", {{"mode", "dpo"}, {"seq_len", 4096}, {"global_batch_size", 64}, {"zero_stage", 3}, {"recompute", "full"}}},
                                     {"parallel", {{"tp", 2}, {"sequence_parallel", true}, {"cp", 2}, {"ep", 2}, {"dp_replicate", 2}}},
                                     {"hardware", {{"num_gpus", 64}}}});
  StepStream stream;
  CHECK_NOTHROW(stream = StepModel(s.model, s.training, s.hardware).stream(s.parallel));
  CHECK(s.parallel.etp == 2);
  CHECK(stream.moe.comm.size == 30);
  CHECK(stream.moe.comm.size == kLayerCommOps);
  CommList<2> small;
  CommOp op{};
  op.calls = 1;
  small.add(op);
  small.add(op);
  CHECK_THROWS_AS(small.add(op), std::logic_error);
}

TEST_CASE("expert tensor parallelism all-gathers the routed tokens and reduce-scatters the expert outputs") {
  // Megatron's MoEAlltoAllTokenDispatcher (token_dispatcher.py): after the all-to-all, gather_from_sequence_parallel_region
  // over the expert-TP group; before the combine, reduce_scatter_to_sequence_parallel_region. Qwen3-30B-A3B at 4096
  // tokens, tp 2 + sp, ep 2, etp 2: a rank routes 2048 x 8 rows of 2048 hidden in bf16, the gathered buffer twice
  // that: 2 x 2048 x 8 x 2048 x 2 = 134,217,728 bytes, one call of each per pass (the backward runs each as the other).
  Json doc = {{"model", "qwen3-30b-a3b"},
              {"training", {{"seq_len", 4096}, {"global_batch_size", 8}, {"framework", "megatron-core"}, {"recompute", "none"}}},
              {"parallel", {{"tp", 2}, {"pp", 1}, {"ep", 2}, {"etp", 2}, {"sequence_parallel", true}, {"micro_batch_size", 1}}},
              {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 8}}}};
  auto etp_ops = [&] {
    const Scenario s = parse_scenario(doc);
    std::vector<CommOp> out;
    for (const CommOp& op : StepModel(s.model, s.training, s.hardware).stream(s.parallel).moe.comm)
      if (op.dim == ParallelDim::Ep && op.collective != Collective::AllToAll) out.push_back(op);
    return out;
  };
  const std::vector<CommOp> ops = etp_ops();
  REQUIRE(ops.size() == 4);  // all-gather and reduce-scatter, forward and backward
  int gathers = 0;
  for (const CommOp& op : ops) {
    CHECK(op.bytes == trainsim::test::approx(2.0 * 2048 * 8 * 2048 * 2));
    CHECK(op.calls == 1);
    CHECK(op.group.size == 2);
    gathers += op.collective == Collective::AllGather;
  }
  CHECK(gathers == 2);
  doc["parallel"]["etp"] = 1;
  CHECK(etp_ops().empty());
}

TEST_CASE("paged-out optimizer states page in and out over PCIe at every step") {
  // The paged-out bytes cross the H100's PCIe Gen5 link (52.3 GB/s) twice a step, on top of the optimizer's own step.
  Json doc = {{"model", "llama3-8b"}, {"training", {{"mode", "sft"}, {"seq_len", 2048}, {"global_batch_size", 4}, {"recompute", "full"}}},
              {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 1}, {"gpus_per_node", 1}}}};
  const Scenario plain = parse_scenario(doc);
  doc["training"]["optimizer"] = "paged_adamw";
  const Scenario paged = parse_scenario(doc);
  const double out = MemoryModel(paged.model, paged.training, paged.hardware).worst_stage(paged.parallel).paged;
  REQUIRE(out > 0);
  CHECK(StepModel(paged.model, paged.training, paged.hardware).stream(paged.parallel).optimizer_s ==
        trainsim::test::approx(StepModel(plain.model, plain.training, plain.hardware).stream(plain.parallel).optimizer_s + 2 * out / kH100Copy));
}
