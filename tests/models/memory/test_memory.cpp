// Memory model: ZeRO model states (Rajbhandari et al. 2020), activation terms (Korthikanti et al. 2022)
// checked against hand-derived values, and invariants.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <cmath>

#include "models/core/errors.hpp"
#include "models/memory/memory.hpp"
#include "models/scenario/scenario.hpp"
#include "models/step/step.hpp"
#include "tests/models/reference_data.hpp"

using namespace trainsim;
using Json = nlohmann::json;

TEST_CASE("ZeRO paper Figure 1: 7.5B parameters, 64 data-parallel ranks, K = 12") {
  auto ref = test::reference_file("zero_model_states.json");
  if (!ref) {
    MESSAGE("skipped: ../shared/reference/zero_model_states.json not found");
    return;
  }
  for (const auto& c : (*ref)["cases"]) {
    CAPTURE(c["id"].get<std::string>());
    TrainingSpec t;
    t.precision = Precision::Fp16;
    t.optimizer = OptimizerKind::Adam;
    t.zero_stage = c["zero_stage"].get<int>();
    const double dp = c["dp"].get<double>();
    ModelStates s = full_model_states(c["parameters"].get<double>(), 0, dp, dp, t, Precision::Fp16);  // the paper's fp16 weights and gradients
    const double published = c["measured"]["model_states_bytes_per_gpu"].get<double>();
    // The paper prints GB with one decimal (120, 31.4, 16.6, 1.9 GB): within half of 0.1 GB.
    CHECK(std::fabs(s.total() - published) <= 0.05e9);
  }
}

namespace {
Scenario gpt_case(Json parallel, std::string recompute, bool flash) {
  // Korthikanti et al. 2022 Table 3, 22B: 48 layers, h 6144, 64 heads, s 2048, b 4, dropout on.
  Json model = {{"num_hidden_layers", 48}, {"hidden_size", 6144}, {"num_attention_heads", 64}, {"intermediate_size", 24576},
                {"hidden_act", "gelu"}, {"vocab_size", 51200}, {"attention_dropout", 0.1}, {"hidden_dropout", 0.1}};
  return parse_scenario({{"model", model},
                         {"training", {{"seq_len", 2048}, {"global_batch_size", 4}, {"precision", "fp16"}, {"recompute", recompute},
                                       {"flash_attention", flash}}},
                         {"parallel", parallel},
                         {"hardware", {{"gpu", "a100-sxm-80gb"}, {"num_gpus", 8}}}});
}
}  // namespace

TEST_CASE("activations per layer reduce to Korthikanti's terms for GPT") {
  const double s = 2048, b = 4, h = 6144, a = 64, t = 8;
  SUBCASE("tensor parallel, no recompute: sbh(10 + 24/t + 5as/(ht))") {
    Scenario sc = gpt_case({{"tp", 8}, {"micro_batch_size", 4}}, "none", false);
    LayerActivations la = layer_activations(sc.model, sc.training, sc.parallel, false);
    CHECK(la.stored == trainsim::test::approx(s * b * h * (10 + 24 / t + 5 * a * s / (h * t))));
  }
  SUBCASE("tensor + sequence parallel, selective recompute: 34sbh/t") {
    Scenario sc = gpt_case({{"tp", 8}, {"micro_batch_size", 4}, {"sequence_parallel", true}}, "selective", false);
    CHECK(layer_activations(sc.model, sc.training, sc.parallel, false).stored == trainsim::test::approx(34 * s * b * h / t));
  }
  SUBCASE("full recompute keeps the layer input: 2sbh/t with sequence parallel") {
    Scenario sc = gpt_case({{"tp", 8}, {"micro_batch_size", 4}, {"sequence_parallel", true}}, "full", false);
    CHECK(layer_activations(sc.model, sc.training, sc.parallel, false).stored == trainsim::test::approx(2 * s * b * h / t));
  }
  SUBCASE("flash attention drops the 5as^2b term and keeps a fp32 log-sum-exp") {
    Scenario sc = gpt_case({{"tp", 8}, {"micro_batch_size", 4}, {"sequence_parallel", true}}, "none", true);
    CHECK(layer_activations(sc.model, sc.training, sc.parallel, false).stored == trainsim::test::approx(34 * s * b * h / t + 4 * s * b * a / t));
  }
}

TEST_CASE("micro-batches in flight per schedule") {
  ParallelLayout p;
  p.pp = 8;
  p.gradient_accumulation_steps = 64;
  p.schedule = Schedule::OneFOneB;
  CHECK(layers_in_flight(p, 96, 0) == trainsim::test::approx(8 * 12));  // pp micro-batches of 12 layers
  CHECK(layers_in_flight(p, 96, 7) == trainsim::test::approx(1 * 12));
  p.schedule = Schedule::Gpipe;
  CHECK(layers_in_flight(p, 96, 3) == trainsim::test::approx(64 * 12));
  p.schedule = Schedule::Interleaved;
  p.vpp = 3;
  // Korthikanti §4.2.3: 96 layers x (1 + (p-1)/(p·v)) = 96 x 31/24 = 124.
  CHECK(layers_in_flight(p, 96, 0) == trainsim::test::approx(124));
  p.gradient_accumulation_steps = 2;  // fewer micro-batches than the warm-up: all of them
  CHECK(layers_in_flight(p, 96, 0) == trainsim::test::approx(2 * 3 * 4));
}

TEST_CASE("ZeRO-3: more GPUs never raise per-GPU model-state memory") {
  double previous = 1e300;
  for (int gpus : {8, 16, 32, 64, 128, 256}) {
    Scenario s = parse_scenario({{"model", "llama3-70b"},
                                 {"training", {{"seq_len", 4096}, {"global_batch_size", 256}, {"zero_stage", 3}}},
                                 {"hardware", {{"num_gpus", gpus}}}});
    MemoryModel mm(s.model, s.training, s.hardware);
    StageMemory w = mm.worst_stage(s.parallel);
    const double states = w.weights + w.gradients + w.optimizer;
    CHECK(states <= previous);
    previous = states;
  }
}

TEST_CASE("offloading moves optimizer states to the host; QLoRA stores 4-bit weights") {
  // ZeRO-Offload's layout (DeepSpeed): the fp32 master lives on the host only.
  Json doc = {{"model", "llama3-8b"}, {"training", {{"global_batch_size", 8}, {"offload_optimizer", true}, {"framework", "deepspeed"}}},
              {"hardware", {{"num_gpus", 8}}}};
  Scenario s = parse_scenario(doc);
  StageMemory w = MemoryModel(s.model, s.training, s.hardware).worst_stage(s.parallel);
  CHECK(w.optimizer == 0);
  CHECK(w.host == trainsim::test::approx(8030261248.0 * 12));  // fp32 master + 2 moments, not sharded

  Scenario q = parse_scenario({{"model", "llama3-8b"}, {"training", {{"mode", "qlora"}, {"global_batch_size", 1}}},
                               {"hardware", {{"gpu", "rtx4090-24gb"}, {"num_gpus", 1}, {"gpus_per_node", 1}}}});
  StageMemory qw = MemoryModel(q.model, q.training, q.hardware).worst_stage(q.parallel);
  // Linear weights 6,979,321,856 at 4.127 bits + embeddings/norms 1,050,939,392 in bf16 + 41.9M fp32 adapters.
  const double linear = 32 * (41943040.0 + 176160768.0), rest = 8030261248.0 - linear;
  CHECK(qw.weights == trainsim::test::approx(linear * 4.127 / 8 + rest * 2 + 41943040.0 * 4));
  CHECK(qw.gradients == trainsim::test::approx(41943040.0 * 4));
}

TEST_CASE("DPO holds a frozen reference model and twice the sequences") {
  Json doc = {{"model", "llama3-8b"}, {"training", {{"global_batch_size", 8}, {"zero_stage", 3}}}, {"hardware", {{"num_gpus", 8}}}};
  Scenario sft = parse_scenario(doc);
  doc["training"]["mode"] = "dpo";
  Scenario dpo = parse_scenario(doc);
  StageMemory a = MemoryModel(sft.model, sft.training, sft.hardware).worst_stage(sft.parallel);
  StageMemory b = MemoryModel(dpo.model, dpo.training, dpo.hardware).worst_stage(dpo.parallel);
  CHECK(b.weights - a.weights == trainsim::test::approx(8030261248.0 * 2 / 8));
  CHECK(b.activations_layers == trainsim::test::approx(2 * a.activations_layers));
}

TEST_CASE("a DPO reference built as a training model holds a gradient buffer of its own") {
  // ms-swift's Megatron DPO before #6027 (2025-09-30) built the reference with get_model(), which wraps it in Megatron's
  // DDP: an fp32 main_grad buffer for every parameter that no backward fills. Llama-3-8B (8,030,261,248 parameters)
  // under the distributed optimizer on 8 GPUs: the buffer is not sharded (ZeRO-1), 4 B per parameter.
  Json doc = {{"model", "llama3-8b"},
              {"training", {{"mode", "dpo"}, {"global_batch_size", 8}, {"distributed_optimizer", true}, {"framework", "megatron-core"}}},
              {"parallel", {{"tp", 1}, {"pp", 1}, {"dp", 8}}},
              {"hardware", {{"num_gpus", 8}}}};
  auto worst = [&] {
    const Scenario s = parse_scenario(doc);
    return MemoryModel(s.model, s.training, s.hardware).worst_stage(s.parallel);
  };
  const StageMemory plain = worst();
  doc["training"]["framework"] = {{"preset", "megatron-core"}, {"reference_model_gradient_buffer", true}};
  const StageMemory wrapped = worst();
  CHECK(wrapped.gradients - plain.gradients == trainsim::test::approx(8030261248.0 * 4));
  CHECK(wrapped.weights == plain.weights);
}

TEST_CASE("DPO with adapters: the reference is the base with the adapters disabled, no second copy") {
  // TRL's DPOTrainer with a peft_config passes no ref_model and computes the reference log-probabilities under
  // model.disable_adapter() (trl/trainer/dpo_trainer.py, "null_ref_context"); ms-swift's LoRA DPO does the same.
  // So the weights are the LoRA fine-tuning's: the bf16 base (8,030,261,248 x 2 B) and the fp32 adapters
  // (r = 16 on all seven projections of 32 layers: 41,943,040 x 4 B), nothing more.
  Json doc = {{"model", "llama3-8b"}, {"training", {{"mode", "lora"}, {"global_batch_size", 8}}}, {"hardware", {{"num_gpus", 1}, {"gpus_per_node", 1}}}};
  const Scenario lora = parse_scenario(doc);
  doc["training"]["mode"] = "dpo";
  doc["training"]["adapters"] = "lora";
  const Scenario dpo = parse_scenario(doc);
  CHECK(dpo.training.uses_adapters());
  CHECK_FALSE(dpo.training.has_reference_copy());
  const StageMemory a = MemoryModel(lora.model, lora.training, lora.hardware).worst_stage(lora.parallel);
  const StageMemory b = MemoryModel(dpo.model, dpo.training, dpo.hardware).worst_stage(dpo.parallel);
  CHECK(b.weights == trainsim::test::approx(8030261248.0 * 2 + 41943040.0 * 4));
  CHECK(b.weights == trainsim::test::approx(a.weights));
  CHECK(b.gradients == trainsim::test::approx(41943040.0 * 4));   // fp32 adapter gradients only
  CHECK(b.activations_layers == trainsim::test::approx(2 * a.activations_layers));  // chosen + rejected
  // QLoRA under DPO keeps the NF4 base of QLoRA fine-tuning (4.127 bits per linear weight).
  doc["training"]["adapters"] = "qlora";
  const Scenario dq = parse_scenario(doc);
  doc["training"]["mode"] = "qlora";
  doc["training"].erase("adapters");
  const Scenario q = parse_scenario(doc);
  CHECK(MemoryModel(dq.model, dq.training, dq.hardware).worst_stage(dq.parallel).weights ==
        trainsim::test::approx(MemoryModel(q.model, q.training, q.hardware).worst_stage(q.parallel).weights));
  // adapters belongs to DPO: with another mode it is an error naming the field.
  doc["training"]["adapters"] = "lora";
  CHECK_THROWS_WITH_AS(parse_scenario(doc), doctest::Contains("/training/adapters"), InputError);
}

TEST_CASE("activation bytes follow the precision: fp32 doubles what bf16 stores, fp8 keeps GEMM inputs in one byte") {
  // Llama-3-8B layer, s = 4096, b = 1, tp 1, flash attention, no dropout, no recompute.
  const Scenario s = parse_scenario(Json::parse(R"({"model": "llama3-8b", "training": {"seq_len": 4096, "global_batch_size": 8},
    "hardware": {"num_gpus": 8}})"));
  TrainingSpec t = s.training;
  const double sb = 4096, h = 4096, q = 4096, kv = 1024, a = 32, f = 14336;
  t.precision = Precision::Bf16;
  const double bf16 = layer_activations(s.model, t, s.parallel, false).stored;
  // By hand (Korthikanti et al. 2022 terms, gated MLP, GQA): LN1 in, QKV in, LN2 in 3·2h; Q, K, V 2q + 4kv;
  // out-proj in 2q; fp32 log-sum-exp 4a; fc1 in 2h; gate and up outputs 4f; fc2 in 2f.
  CHECK(bf16 == trainsim::test::approx(sb * (6 * h + 2 * q + 4 * kv + 2 * q + 4 * a + 2 * h + 6 * f)));
  t.precision = Precision::Fp32;
  const double fp32 = layer_activations(s.model, t, s.parallel, false).stored;
  // Everything doubles except the fp32 log-sum-exp (already 4 bytes).
  CHECK(fp32 == trainsim::test::approx(2 * bf16 - 4 * a * sb));
  t.precision = Precision::Fp8;
  const double fp8 = layer_activations(s.model, t, s.parallel, false).stored;
  // Transformer Engine keeps the inputs of the fp8 GEMMs (QKV, out-proj, fc1, fc2) in fp8: one byte each saved.
  CHECK(fp8 == trainsim::test::approx(bf16 - sb * (h + q + h + f)));
}

TEST_CASE("offloaded optimizer states are checked against the node's host memory") {
  // Llama-3-8B SFT, no ZeRO, 8 GPUs each offloading fp32 master + Adam moments (ZeRO-Offload's layout: the master on
  // the host only): 12 B x 8.03B = 96.4 GB per GPU.
  Json doc = Json::parse(R"({"model": "llama3-8b", "training": {"mode": "sft", "global_batch_size": 8, "offload_optimizer": true, "framework": "deepspeed"},
    "parallel": {"tp": 1, "pp": 1, "dp": 8}, "hardware": {"num_gpus": 8, "host_memory": "2TB"}})");
  const Scenario roomy = parse_scenario(doc);
  const MemoryEstimate fits = MemoryModel(roomy.model, roomy.training, roomy.hardware).estimate(roomy.parallel);
  CHECK(fits.worst.host == trainsim::test::approx(12.0 * fits.params.total));
  CHECK(fits.host_per_node == trainsim::test::approx(8 * 12.0 * fits.params.total));
  CHECK(fits.host_fits);
  doc["hardware"]["host_memory"] = "10GB";
  const Scenario tight = parse_scenario(doc);
  const MemoryEstimate e = MemoryModel(tight.model, tight.training, tight.hardware).estimate(tight.parallel);
  CHECK_FALSE(e.host_fits);
  CHECK_FALSE(e.fits);
  CHECK(e.host_capacity == trainsim::test::approx(10e9));
  // Not given: not checked (and said so by the report).
  doc["hardware"].erase("host_memory");
  const Scenario unknown = parse_scenario(doc);
  CHECK(MemoryModel(unknown.model, unknown.training, unknown.hardware).estimate(unknown.parallel).host_fits);
}

TEST_CASE("PyTorch's memory counters see parts of the device total") {
  // torch.cuda.max_memory_reserved holds the allocator's segments (fragmentation included), not the CUDA context
  // or NCCL's cudaMalloc'd buffers; max_memory_allocated holds live tensors only (PyTorch CUDA semantics notes).
  StageMemory s;
  s.weights = 2, s.gradients = 3, s.optimizer = 5, s.activations = 20;
  s.cuda_context = 0.75, s.nccl = 0.25, s.fragmentation = 2;
  s.other = s.cuda_context + s.nccl + s.fragmentation;
  s.total = 30 + s.other;
  CHECK(s.counted(MemoryCounter::Device) == test::approx(33.0));
  CHECK(s.counted(MemoryCounter::AllocatorReserved) == test::approx(32.0));  // 30 of tensors + 2 of fragmentation
  CHECK(s.counted(MemoryCounter::AllocatorAllocated) == test::approx(30.0));
}

// Megatron's precision-aware optimizer (--exp-avg-dtype / --exp-avg-sq-dtype / --main-params-dtype) and DeepSeek-V3's
// bf16 AdamW moments (DeepSeek-V3 technical report, arXiv 2412.19437, section 3.3.3): per trainable parameter the
// fp32 master (4 B) plus two moments of the dtype given, by hand: fp32 4 + 8 = 12 (ZeRO's K), bf16 4 + 4 = 8, fp8
// 4 + 2 = 6, fp16 master with bf16 moments 2 + 4 = 6; SGD's one momentum in bf16 4 + 2 = 6.
TEST_CASE("optimizer state dtypes: the master copy and the moments as the precision-aware optimizer keeps them") {
  TrainingSpec t;
  t.precision = Precision::Bf16;
  const double P = 1e9;
  auto bytes = [&](Precision moments, Precision master, OptimizerKind o) {
    t.moment_precision = moments;
    t.master_precision = master;
    t.optimizer = o;
    return full_model_states(P, 0, 1, 1, t, Precision::Fp32).optimizer / P;
  };
  CHECK(bytes(Precision::Fp32, Precision::Fp32, OptimizerKind::Adam) == 12);
  CHECK(bytes(Precision::Bf16, Precision::Fp32, OptimizerKind::Adam) == 8);
  CHECK(bytes(Precision::Fp8, Precision::Fp32, OptimizerKind::Adam) == 6);
  CHECK(bytes(Precision::Bf16, Precision::Fp16, OptimizerKind::Adam) == 6);
  CHECK(bytes(Precision::Bf16, Precision::Fp32, OptimizerKind::Sgd) == 6);
  // A scenario names them; 8-bit Adam keeps its own 1-byte moments, so a moments dtype beside it is refused.
  const Json base = {{"model", "llama3-8b"}, {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 8}}}};
  Json doc = base;
  doc["training"] = {{"seq_len", 2048}, {"global_batch_size", 8}, {"optimizer_moments_dtype", "bf16"}, {"master_weights_dtype", "fp16"}};
  const Scenario s = parse_scenario(doc);
  CHECK(s.training.moment_precision == Precision::Bf16);
  CHECK(s.training.master_precision == Precision::Fp16);
  doc["training"] = {{"seq_len", 2048}, {"global_batch_size", 8}, {"optimizer", "adam8bit"}, {"optimizer_moments_dtype", "bf16"}};
  CHECK_THROWS_WITH_AS(parse_scenario(doc), doctest::Contains("/training/optimizer_moments_dtype"), InputError);
}

// Training without a master copy (master_weights_dtype "none": torch.optim over a model loaded in bf16, as NeMo
// AutoModel does): per parameter by hand, bf16 weights 2 + bf16 gradients 2 (autograd writes them in the parameter's
// dtype) + AdamW's two moments 2 x 2 (torch.zeros_like the parameter) = 8 bytes, against 2 + 4 + 12 = 18 with an fp32
// master and fp32 gradients; with fp32 moments asked for, 2 + 2 + 8 = 12. The step reads and writes the weights and
// the moments and reads the gradient: 2 + 2 + 2 x (2 + 2) + 2 = 14 bytes against 2 x (4 + 8) + 2 + 2 = 28 with an fp32
// master, fp32 moments and bf16 gradients, so half the optimizer time.
TEST_CASE("without a master copy the optimizer steps the 16-bit weights: 8 bytes a parameter under bf16 AdamW") {
  const Json base = {{"model", "llama3-8b"}, {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 1}}}};
  Json doc = base;
  doc["training"] = {{"seq_len", 2048}, {"global_batch_size", 1}, {"framework", "pytorch"}, {"master_weights_dtype", "none"}};
  const Scenario s = parse_scenario(doc);
  CHECK_FALSE(s.training.master_weights);
  CHECK(s.training.moment_precision == Precision::Bf16);
  CHECK(gradient_precision(s.training, s.parallel) == Precision::Bf16);
  const double P = 1e9;
  const ModelStates none = full_model_states(P, 0, 1, 1, s.training, gradient_precision(s.training, s.parallel));
  CHECK((none.weights + none.gradients + none.optimizer) / P == 8);
  doc["training"]["optimizer_moments_dtype"] = "fp32";
  const Scenario fp32_moments = parse_scenario(doc);
  CHECK(full_model_states(P, 0, 1, 1, fp32_moments.training, Precision::Bf16).optimizer / P == 8);

  Json master = base;
  master["training"] = {{"seq_len", 2048}, {"global_batch_size", 1}, {"framework", "pytorch"}, {"grad_precision", "bf16"}};
  const Scenario m = parse_scenario(master);
  CHECK(m.training.master_weights);
  const double none_s = StepModel(s.model, s.training, s.hardware).stream(s.parallel).optimizer_s;
  const double master_s = StepModel(m.model, m.training, m.hardware).stream(m.parallel).optimizer_s;
  CHECK(none_s / master_s == test::approx(14.0 / 28.0).epsilon(1e-9));

  // FSDP2 keeps fp32 shards that are the master copy; without one its shards are the 16-bit parameters.
  Json fsdp = base;
  fsdp["hardware"]["num_gpus"] = 8;
  fsdp["training"] = {{"seq_len", 2048}, {"global_batch_size", 8}, {"framework", "fsdp2"}, {"zero_stage", 3}};
  const Scenario f32 = parse_scenario(fsdp);
  fsdp["training"]["master_weights_dtype"] = "none";
  const Scenario f16 = parse_scenario(fsdp);
  const StageMemory with_master = MemoryModel(f32.model, f32.training, f32.hardware).worst_stage(f32.parallel);
  const StageMemory without = MemoryModel(f16.model, f16.training, f16.hardware).worst_stage(f16.parallel);
  const double shard = without.parameters / 8;
  CHECK(with_master.optimizer == test::approx(shard * 12).epsilon(1e-3));  // fp32 master + moments, no 16-bit shard
  CHECK(without.optimizer == test::approx(shard * 4).epsilon(1e-3));       // bf16 moments only
  CHECK(without.weights - with_master.weights == test::approx(shard * 2).epsilon(1e-3));

  doc["training"]["master_weights_dtype"] = "bf16";
  CHECK_THROWS_WITH_AS(parse_scenario(doc), doctest::Contains("/training/master_weights_dtype"), InputError);
}

// Partial optimizer offload (Megatron --optimizer-offload-fraction, DeepSpeed offload_optimizer.ratio): a share f of
// the optimizer states lives on the host and the rest on the GPU, and the optimizer step is that share of the fully
// offloaded step plus the rest of the on-GPU one (the two parts one after the other), by the definition. DeepSpeed's
// layout: the offloaded share's master on the host only.
TEST_CASE("a partial optimizer offload splits the states and the step by its fraction") {
  Json doc = {{"model", "llama3-8b"},
              {"training", {{"seq_len", 2048}, {"global_batch_size", 64}, {"zero_stage", 1}, {"offload_optimizer", true}, {"framework", "deepspeed"}}},
              {"parallel", {{"tp", 1}, {"pp", 1}, {"dp", 8}}},
              {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 8}}}};
  auto run = [&](bool offload, double f) {
    doc["training"]["offload_optimizer"] = offload;
    if (offload) doc["training"]["offload_optimizer_fraction"] = f;
    else doc["training"].erase("offload_optimizer_fraction");
    const Scenario s = parse_scenario(doc);
    const MemoryEstimate m = MemoryModel(s.model, s.training, s.hardware).estimate(s.parallel);
    const StepEstimate e = StepModel(s.model, s.training, s.hardware).estimate(s.parallel);
    return std::pair<MemoryEstimate, double>{m, e.breakdown.optimizer_s};
  };
  const auto [on_gpu, gpu_step] = run(false, 1);
  const auto [all, host_step] = run(true, 1);
  const auto [quarter, quarter_step] = run(true, 0.25);
  CHECK(quarter.worst.host == doctest::Approx(0.25 * on_gpu.worst.optimizer).epsilon(1e-12));
  CHECK(quarter.worst.optimizer == doctest::Approx(0.75 * on_gpu.worst.optimizer).epsilon(1e-12));
  CHECK(all.worst.optimizer == 0);
  CHECK(quarter_step == doctest::Approx(0.25 * host_step + 0.75 * gpu_step).epsilon(1e-9));
  doc["training"]["offload_optimizer"] = false;
  doc["training"]["offload_optimizer_fraction"] = 0.5;
  CHECK_THROWS_WITH_AS(parse_scenario(doc), doctest::Contains("/training/offload_optimizer_fraction"), InputError);
}

TEST_CASE("ZeRO-Infinity: parameters and optimizer states on NVMe, gradient partitions in host memory") {
  // Llama-3-70B full fine-tuning on one H100 under DeepSpeed ZeRO-3 (Rajbhandari et al. SC'21): with offload_param
  // and offload_optimizer on NVMe, NVMe holds the 16-bit parameter shard (2 B/param) and the fp32 master and two
  // moments (12 B/param); each reduced gradient partition goes to an fp32 buffer in host memory for the CPU step
  // (4 B/param, DeepSpeed's stage-3 CPU offload); the GPU keeps only the layers being gathered.
  Json doc = {{"model", "llama3-70b"},
              {"training", {{"mode", "sft"}, {"seq_len", 2048}, {"global_batch_size", 4}, {"zero_stage", 3}, {"recompute", "full"},
                            {"framework", "deepspeed"}, {"offload_params", "nvme"}, {"offload_optimizer", true}, {"offload_optimizer_device", "nvme"}}},
              {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 1}, {"gpus_per_node", 1}}}};
  const Scenario s = parse_scenario(doc);
  const double P = count_parameters(s.model).total;
  const StageMemory w = MemoryModel(s.model, s.training, s.hardware).worst_stage(s.parallel);
  CHECK(w.nvme == trainsim::test::approx(P * (2 + 12)));
  CHECK(w.host == trainsim::test::approx(P * 4));
  CHECK(w.optimizer == 0);
  CHECK(w.weights < 0.03 * P * 2);     // two gathered layers of 80: 2.5% of the weights
  CHECK(w.gradients < 0.015 * P * 2);  // one layer's unsharded gradients: 1.25%
  CHECK(w.total < 16.0 * (1 << 30));  // 70B trains on one 80 GB GPU (Llama-3-70B: 12.4 GiB)
  // In host memory instead: the same bytes counted against the node's host memory.
  doc["training"]["offload_params"] = "cpu";
  doc["training"]["offload_optimizer_device"] = "cpu";
  const Scenario c = parse_scenario(doc);
  const StageMemory wc = MemoryModel(c.model, c.training, c.hardware).worst_stage(c.parallel);
  CHECK(wc.nvme == 0);
  CHECK(wc.host == trainsim::test::approx(P * (2 + 12 + 4)));
  // Parameters are offloaded only where ZeRO-3 shards them; NVMe only for offloaded optimizer states.
  doc["training"]["zero_stage"] = 2;
  CHECK_THROWS_WITH_AS(parse_scenario(doc), doctest::Contains("/training/offload_params"), InputError);
  doc["training"]["zero_stage"] = 3;
  doc["training"]["offload_optimizer"] = false;
  CHECK_THROWS_WITH_AS(parse_scenario(doc), doctest::Contains("/training/offload_optimizer_device"), InputError);
}

TEST_CASE("a paged optimizer pages out what does not fit the GPU, never more than its states") {
  // Llama-3-8B full fine-tuning on one H100 (fp32 parameters under autocast: 12 B/param of master and moments) needs
  // 46 GiB more than the GPU has; bitsandbytes' PagedAdamW keeps its states in unified memory, so exactly that much
  // pages out to host memory and the GPU is full, not over. Its 8-bit variant (2 B/param of moments) pages far less.
  Json doc = {{"model", "llama3-8b"}, {"training", {{"mode", "sft"}, {"seq_len", 2048}, {"global_batch_size", 4}, {"recompute", "full"}}},
              {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 1}, {"gpus_per_node", 1}}}};
  const Scenario plain = parse_scenario(doc);
  const StageMemory a = MemoryModel(plain.model, plain.training, plain.hardware).worst_stage(plain.parallel);
  doc["training"]["optimizer"] = "paged_adamw";
  const Scenario paged = parse_scenario(doc);
  const StageMemory b = MemoryModel(paged.model, paged.training, paged.hardware).worst_stage(paged.parallel);
  const double capacity = paged.hardware.gpu.memory_bytes;
  REQUIRE(a.total > capacity);
  CHECK(b.paged == trainsim::test::approx(a.total - capacity));
  CHECK(b.total == trainsim::test::approx(capacity));
  CHECK(b.host == trainsim::test::approx(b.paged));
  CHECK(b.optimizer + b.paged == trainsim::test::approx(a.optimizer));
  // Room to spare (LoRA's adapters): nothing pages out.
  doc["training"]["mode"] = "lora";
  const Scenario small = parse_scenario(doc);
  CHECK(MemoryModel(small.model, small.training, small.hardware).worst_stage(small.parallel).paged == 0);
  // A paged optimizer moves its own states: offload_optimizer beside it is refused.
  doc["training"]["offload_optimizer"] = true;
  CHECK_THROWS_WITH_AS(parse_scenario(doc), doctest::Contains("/training/offload_optimizer"), InputError);
}

TEST_CASE("Megatron's offloaded optimizer keeps the fp32 master on the GPU and steps host copies of it") {
  // megatron/core/optimizer/distrib_optimizer.py makes the fp32 main-parameter shards on the GPU
  // (shard_model_param.clone().float()); HybridDeviceOptimizer (cpu_offloading/hybrid_optimizer.py) steps pinned host
  // copies beside the Adam moments and a pinned copy of each fp32 gradient, then copies the result back into the
  // GPU's master. Llama-3-8B (8,030,261,248 parameters), distributed optimizer over dp 8: 1,003,782,656 parameters
  // stepped per GPU. On the GPU: the 4 B master each. On the host: master 4 + moments 8 + gradient copy 4 = 16 B each,
  // where ZeRO-Offload (DeepSpeed) holds 12 B there and nothing on the GPU.
  Json doc = {{"model", "llama3-8b"},
              {"training", {{"global_batch_size", 8}, {"distributed_optimizer", true}, {"offload_optimizer", true}, {"framework", "megatron-core"}}},
              {"parallel", {{"tp", 1}, {"pp", 1}, {"dp", 8}}},
              {"hardware", {{"gpu", "a100-sxm-80gb"}, {"num_gpus", 8}}}};
  const double stepped = 8030261248.0 / 8;
  auto run = [&] {
    const Scenario s = parse_scenario(doc);
    const StageMemory w = MemoryModel(s.model, s.training, s.hardware).worst_stage(s.parallel);
    return std::pair<StageMemory, double>{w, StepModel(s.model, s.training, s.hardware).estimate(s.parallel).breakdown.optimizer_s};
  };
  const auto [megatron, megatron_step] = run();
  CHECK(megatron.optimizer == trainsim::test::approx(stepped * 4));
  CHECK(megatron.host == trainsim::test::approx(stepped * 16));
  // --optimizer-offload-fraction 0.25: the GPU keeps every master and three quarters of the moments.
  doc["training"]["offload_optimizer_fraction"] = 0.25;
  const StageMemory quarter = run().first;
  CHECK(quarter.optimizer == trainsim::test::approx(stepped * (0.75 * 12 + 0.25 * 4)));
  CHECK(quarter.host == trainsim::test::approx(stepped * 0.25 * 16));
  doc["training"].erase("offload_optimizer_fraction");
  // --use-precision-aware-optimizer: HybridDeviceOptimizer makes the master from its host copy; the host holds the same.
  doc["training"]["precision_aware_optimizer"] = true;
  const StageMemory aware = run().first;
  CHECK(aware.optimizer == 0);
  CHECK(aware.host == trainsim::test::approx(stepped * 16));
  doc["training"]["precision_aware_optimizer"] = "yes";
  CHECK_THROWS_WITH_AS(parse_scenario(doc), doctest::Contains("/training/precision_aware_optimizer"), InputError);
  doc["training"].erase("precision_aware_optimizer");
  doc["training"]["framework"] = {{"preset", "megatron-core"}, {"offload_keeps_device_master", false}};
  const auto [host_master, host_master_step] = run();
  CHECK(host_master.optimizer == 0);
  CHECK(host_master.host == trainsim::test::approx(stepped * 12));
  // The step: the fp32 master (4 B) crosses PCIe up instead of the bf16 weight (2 B), at the A100's PCIe Gen4
  // (host_link_bandwidth), and the GPU then reads it and writes the bf16 weight (6 B) at its memory-bound rate: at
  // least the extra PCIe time.
  const Scenario s = parse_scenario(doc);
  CHECK(megatron_step - host_master_step >= stepped * 2 / host_link_bandwidth(s.hardware.gpu));
  CHECK(megatron_step - host_master_step < stepped * 2 / host_link_bandwidth(s.hardware.gpu) + stepped * 6 / s.hardware.gpu.memory_bandwidth * 2);
}

TEST_CASE("expert tensor parallelism keeps etp times the routed rows, each etp-th as wide") {
  // Megatron's MoEAlltoAllTokenDispatcher all-gathers the routed tokens over the expert-TP group after the all-to-all
  // (megatron/core/transformer/moe/token_dispatcher.py, gather_from_sequence_parallel_region over expt_tp). Qwen3-30B-A3B
  // at 4096 tokens, tp 2 with sequence parallelism: a rank routes 2048 tokens x 8 experts = 16,384 rows. At etp 2 its
  // experts keep 32,768 rows of inputs (2 B x 2048 hidden) and 32,768 rows of 768 / 2 inner: the inner activations are
  // those of etp 1 (16,384 rows of 768), the saved inputs twice as many, 2 B x 16,384 x 2048 bytes more.
  Json doc = {{"model", "qwen3-30b-a3b"},
              {"training", {{"seq_len", 4096}, {"global_batch_size", 8}, {"framework", "megatron-core"}, {"recompute", "none"}}},
              {"parallel", {{"tp", 2}, {"pp", 1}, {"ep", 2}, {"etp", 1}, {"sequence_parallel", true}, {"micro_batch_size", 1}}},
              {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 8}}}};
  auto moe_layer = [&](int etp) {
    doc["parallel"]["etp"] = etp;
    const Scenario s = parse_scenario(doc);
    return layer_activations(s.model, s.training, s.parallel, true).stored;
  };
  CHECK(moe_layer(2) - moe_layer(1) == trainsim::test::approx(2.0 * 16384 * 2048));
}

TEST_CASE("a frozen base keeps only what its adapters need; peft's adapters each keep their own copy of their input") {
  // Llama-3.1-8B (h = q = 4096, k = v = 1024, f = 14336, 32 heads) in transformers' eager modeling code (eager
  // RMSNorm and SwiGLU, flash attention), bf16, one sequence of 2048 tokens: bytes a token keeps per layer.
  // Autograd saves a tensor only for a gradient some input needs (PyTorch's generated functions guard each save by
  // should_compute_output; Transformer Engine's Linear keeps its input only when its weight requires grad).
  auto per_token = [](Json training) {
    training.merge_patch(Json{{"seq_len", 2048}, {"global_batch_size", 1}, {"recompute", "none"}, {"flash_attention", true}});
    const Scenario s = parse_scenario({{"model", "llama3.1-8b"},
                                       {"training", training},
                                       {"parallel", {{"tp", 1}, {"pp", 1}, {"micro_batch_size", 1}}},
                                       {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 1}}}});
    return layer_activations(s.model, s.training, s.parallel, false).full / 2048;
  };
  const double h = 4096, f = 14336, core = 4 * 32;  // flash attention's fp32 log-sum-exp per head
  const Json all_linear = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
  auto lora = [&](Json targets, bool autocast) {
    return per_token({{"mode", "lora"}, {"lora", {{"rank", 16}, {"alpha", 32}, {"target_modules", targets}}},
                      {"framework", {{"preset", "transformers"}, {"autocast_fp32_weights", autocast}}}});
  };
  // Full fine-tuning: each eager norm keeps its fp32 input (4 B) and the normalized input for the weight's product
  // (2 B); the QKV, fc1, out-projection and fc2 inputs (2 B each); Q, K, V (2q + 4kv = 3h); gate, up and the
  // activation's output for the product (6 B of f).
  CHECK(per_token({{"mode", "sft"}, {"framework", "transformers"}}) == trainsim::test::approx(2 * 6 * h + 2 * h + 2 * h + 3 * h + 2 * h + 8 * f + core));
  // LoRA on every linear, adapters in fp32 under autocast (peft): the frozen norms keep only their fp32 input, and
  // each adapter keeps its own 16-bit copy of its input: three of the QKV input, two of fc1's, one beside the
  // attention output (which attention's backward keeps), one of fc2's; plus each adapter's rank-16 B input (2 B x 16).
  CHECK(lora(all_linear, true) == trainsim::test::approx(2 * 4 * h + 3 * 2 * h + 2 * 2 * h + 3 * h + 2 * 2 * h + 8 * f + core + 7 * 32));
  // Without autocast (16-bit adapters, as NeMo AutoModel's and torchtune's) the adapters of a group share its one input.
  CHECK(lora(all_linear, false) == trainsim::test::approx(2 * 4 * h + 2 * h + 2 * h + 3 * h + 2 * h + 8 * f + core + 7 * 32));
  // Adapters on q and v only: the frozen MLP keeps no input of its linears (gate, up and the activation's output
  // still: the product's and the activation's backward need them), the out-projection no copy.
  CHECK(lora(Json{"q_proj", "v_proj"}, true) == trainsim::test::approx(2 * 4 * h + 2 * 2 * h + 3 * h + 2 * h + 6 * f + core + 2 * 32));
}
