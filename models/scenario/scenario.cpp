#include "models/scenario/scenario.hpp"

#include <cmath>
#include <cstdio>

#include "models/comm/collectives.hpp"
#include "models/compute/expert_load.hpp"
#include "models/compute/recompute_policy.hpp"
#include "models/compute/transformer.hpp"
#include "models/core/json_reader.hpp"
#include "models/layout/layout_check.hpp"
#include "models/scenario/scenario_parts.hpp"
#include "models/step/data_feed.hpp"

namespace trainsim {

namespace {
// How the routed tokens load the expert-parallel ranks, said where it changes the answer (expert_load.hpp).
std::string expert_load_note(const Scenario& s) {
  if (!s.model.is_moe() || s.parallel.ep <= 1) return "";
  const std::string ranks = std::to_string(s.parallel.ep) + " expert-parallel ranks";
  if (s.training.moe_expert_load_cv <= 0)
    return "training: routing taken as even over the " + ranks +
           " (uniform, as forced load balancing routes, or a router trained from scratch with an auxiliary loss); under dropless "
           "routing a pretrained router loads its busiest rank more: training.moe_expert_load_cv (1.67 for Qwen3-235B's in "
           "Megatron's dropless runs)";
  return "training: the busiest of the " + ranks + " receives " + format_number(busiest_expert_rank_load(s.model, s.training, s.parallel), 3) +
         "x the mean routed tokens (moe_expert_load_cv " + format_number(s.training.moe_expert_load_cv, 3) +
         "): its experts, all-to-alls and activations set the MoE layers' pace and memory";
}
}  // namespace

Scenario parse_scenario(const Json& doc, bool check_layout) {
  if (!doc.is_object()) throw InputError("/", json_value_text(doc), "a JSON object with sections model, training, parallel, hardware");
  JsonReader top(doc, "", nullptr);
  top.mark_read({"name", "description", "$schema", "calibration", "reliability", "cluster"});  // read by `trainsim reliability`, `trainsim cluster`
  Scenario s;
  if (!top.has("model")) throw InputError("/model", "nothing", "a model preset name or section", "e.g. \"model\": \"llama3-8b\"");
  auto section = [&](const char* key) -> Json {
    if (!top.has(key)) return Json::object();
    const Json& v = top.raw(key);
    if (v.is_string())
      throw InputError(std::string("/") + key, json_value_text(v), "an object, or a path to a JSON file holding that section",
                       "the file was not found");
    return v;
  };
  s.model = parse_model(top.raw("model"), &s.defaults, &s.notes);
  s.training = parse_training(section("training"), s.model, &s.defaults);
  int num_gpus_given = 0;
  s.hardware = parse_hardware(section("hardware"), &s.defaults, &num_gpus_given);
  ParallelInput parallel = parse_parallel(section("parallel"), &s.defaults);
  if (top.has("data")) s.data = parse_data_feed(top.raw("data"), "/data", &s.defaults);
  top.reject_unknown();
  check_precision_supported(s.training, s.hardware.gpu);
  if (!s.hardware.has_price())
    s.notes.push_back("no price is known for " + s.hardware.gpu.name +
                      ": costs are unknown; set hardware.price_per_gpu_hour (or --price-per-gpu-hour) to get them");
  s.parallel = derive_layout(parallel, s.model, s.training, s.hardware, num_gpus_given, &s.defaults, check_layout);
  // The named framework's split rule (an implied one is Megatron-Core wherever there is a pipeline).
  if (!s.training.framework.name.empty()) s.parallel.split_rule = s.training.framework.pipeline_split;
  if (s.parallel.sequence_parallel && s.parallel.tp == 1) s.notes.push_back("parallel: sequence_parallel has no effect at tp = 1");
  // Without RDMA every collective across nodes runs through the kernel's TCP stack: say so where it applies.
  if (s.hardware.num_nodes > 1 && s.hardware.inter_node.kind == "ethernet")
    s.notes.push_back("hardware: " + s.hardware.inter_node.name + " carries NCCL over TCP sockets (no RDMA): " +
                      format_number(100 * fabric_efficiency(s.hardware.inter_node).ring, 3) + "% of its line rate and " +
                      format_number(s.hardware.inter_node.latency_s * 1e6, 3) +
                      " us a hop (collectives.cpp); the step's communication rows show which collective pays for it");
  if (s.hardware.num_nodes > 1 && nic_line_rate(s.hardware) < s.hardware.inter_node.bandwidth)
    s.notes.push_back("hardware: " + s.hardware.inter_node.name + " NICs run at most at the " + s.hardware.gpu.name + "'s PCIe link (" +
                      s.hardware.gpu.host_link + ", " + format_quantity(s.hardware.gpu.host_link_rate, Quantity::Bandwidth) +
                      " a direction): priced at " + format_number(nic_line_rate(s.hardware) * 8e-9, 3) + " Gb/s a NIC, not " +
                      format_number(s.hardware.inter_node.bandwidth * 8e-9, 3));
  if (check_layout) {
    if (std::string note = pipeline_balance_note(s.model.num_hidden_layers, s.parallel); !note.empty()) s.notes.push_back(note);
  }
  if (s.training.framework.name.empty())
    s.defaults.push_back({"/training/framework", implied_framework_name(s.training, s.parallel),
                          std::string("implied by the layout (") + kImpliedFrameworkRule + "; plan picks it per candidate layout)"});
  if (std::string note = expert_load_note(s); !note.empty()) s.notes.push_back(note);
  const FrameworkTraits& fw = framework_for(s.training, s.parallel);
  if (s.parallel.tp_comm_overlap && s.parallel.tp > 1 && !fw.tp_comm_overlap_available)
    s.notes.push_back("parallel: tp_comm_overlap has no effect in " + fw.name + " (no TP communication overlap): TP communication is exposed");
  return s;
}

void require_supervised_mode(const TrainingSpec& training, const std::string& command) {
  if (!training.is_rl()) return;
  throw InputError("/training/mode", std::string("\"") + to_string(training.mode) + "\"",
                   "pretrain, sft, lora, qlora or dpo for `trainsim " + command + "`",
                   "a PPO or GRPO step (rollout, scoring, updates, weight sync) is priced by `trainsim estimate`");
}

std::string pipeline_balance_note(int num_layers, const ParallelLayout& p) {
  if (p.pp <= 1 || num_layers <= 0) return "";
  int most = 0, rank = 0;
  for (int stage = 0; stage < p.pp; ++stage)
    if (const int l = layers_in_stage(num_layers, p, stage); l > most) most = l, rank = stage;
  const double mean = static_cast<double>(num_layers) / p.pp;
  if (most < kUnbalancedPipeline * mean) return "";
  char text[320];
  std::snprintf(text, sizeof text,
                "parallel: an unbalanced pipeline: rank %d holds %d of %d layers where an even split gives %.1f (%d virtual stages, %s); "
                "that rank sets the pace: choose pp x vpp dividing the layers",
                rank, most, num_layers, mean, virtual_stages(p),
                p.split_rule == PipelineSplitRule::ExtraToMiddle  ? "torchtitan's split: one extra layer on each of the first middle stages"
                : p.split_rule == PipelineSplitRule::ExtraToFirst ? "NeMo AutoModel's split: one extra layer on each of the first stages"
                                                                  : "Megatron's uneven split: the first and last take the remainder");
  return text;
}

void check_precision_supported(const TrainingSpec& t, const GpuSpec& gpu) {
  if (gpu.peak_flops(t.precision) > 0) return;
  std::vector<std::string> supported;
  for (Precision p : {Precision::Bf16, Precision::Fp16, Precision::Fp8, Precision::Fp32})
    if (gpu.peak_flops(p) > 0) supported.push_back(to_string(p));
  throw InputError("/training/precision", std::string("\"") + to_string(t.precision) + "\"",
                   "a precision " + gpu.name + " has tensor-core or vector throughput for: " + join(supported),
                   "its peak_flops lists no " + std::string(to_string(t.precision)) + " rate");
}

void validate_layout(const ModelSpec& model, const TrainingSpec& training, const ParallelLayout& layout,
                     const HardwareSpec& hardware) {
  if (auto issue = check_layout(model, training, layout, hardware.num_gpus); issue != LayoutIssue::None)
    throw layout_error(issue, model, training, layout, hardware.num_gpus);
}

Json to_json(const ModelSpec& m) {
  Json j = {{"name", m.name},
            {"num_hidden_layers", m.num_hidden_layers},
            {"hidden_size", m.hidden_size},
            {"num_attention_heads", m.num_attention_heads},
            {"num_key_value_heads", m.num_key_value_heads},
            {"head_dim", m.head_dim},
            {"intermediate_size", m.intermediate_size},
            {"hidden_act", m.hidden_act},
            {"vocab_size", m.vocab_size},
            {"tie_word_embeddings", m.tie_word_embeddings},
            {"max_position_embeddings", m.max_position_embeddings},
            {"position_embedding_type", to_string(m.position_embedding)},
            {"norm_type", to_string(m.norm)},
            {"attention_bias", m.attention_bias},
            {"qkv_bias", m.qkv_bias},
            {"mlp_bias", m.mlp_bias},
            {"qk_norm", m.qk_norm},
            {"norm_epsilon", m.norm_epsilon},
            {"attention_dropout", m.attention_dropout},
            {"hidden_dropout", m.hidden_dropout}};
  if (m.rope_theta > 0) j["rope_theta"] = m.rope_theta;
  if (!m.rope_scaling_type.empty()) {
    j["rope_scaling"] = {{"rope_type", m.rope_scaling_type}};
    if (m.rope_scaling_factor > 0) j["rope_scaling"]["factor"] = m.rope_scaling_factor;
  }
  if (m.is_moe()) {
    j["num_experts"] = m.num_experts;
    j["num_experts_per_tok"] = m.num_experts_per_tok;
    j["moe_intermediate_size"] = m.moe_intermediate_size;
    j["shared_expert_intermediate_size"] = m.shared_expert_intermediate_size;
    j["first_k_dense_replace"] = m.first_k_dense_replace;
    j["scoring_func"] = m.router_score;
    j["norm_topk_prob"] = m.router_norm_topk;
    if (m.router_groups > 0) j["n_group"] = m.router_groups;
    if (m.router_group_topk > 0) j["topk_group"] = m.router_group_topk;
    if (m.router_scaling_factor > 0) j["routed_scaling_factor"] = m.router_scaling_factor;
    if (m.router_expert_bias) j["topk_method"] = "noaux_tc";
  }
  if (m.is_mla()) {
    if (m.q_lora_rank > 0) j["q_lora_rank"] = m.q_lora_rank;
    j["kv_lora_rank"] = m.kv_lora_rank;
    j["qk_nope_head_dim"] = m.qk_nope_head_dim;
    j["qk_rope_head_dim"] = m.qk_rope_head_dim;
    j["v_head_dim"] = m.v_head_dim;
  }
  if (!m.source.empty()) j["source"] = m.source;
  return j;
}

Json to_json(const TrainingSpec& t) {
  Json j = {{"mode", to_string(t.mode)},
            {"seq_len", t.seq_len},
            {"precision", to_string(t.precision)},
            {"optimizer", t.optimizer_name},
            {"zero_stage", t.zero_stage},
            {"distributed_optimizer", t.distributed_optimizer},
            {"recompute", to_string(t.recompute)},
            {"flash_attention", t.flash_attention},
            {"offload_optimizer", t.offload_optimizer},
            {"packing", t.packing}};
  if (t.document_tokens > 0) j["document_tokens"] = t.document_tokens;
  if (t.recompute == Recompute::Selective && t.recompute_modules != kRecomputeCoreAttn) j["recompute_modules"] = recompute_module_list(t.recompute_modules);
  if (t.grad_precision_given) j["grad_precision"] = to_string(t.grad_precision);  // else the framework's, decided again on reload
  if (t.moment_precision != Precision::Fp32) j["optimizer_moments_dtype"] = to_string(t.moment_precision);
  if (t.offload_optimizer && t.offload_fraction < 1) j["offload_optimizer_fraction"] = t.offload_fraction;
  if (t.moe_expert_load_cv > 0) j["moe_expert_load_cv"] = t.moe_expert_load_cv;
  if (t.offload_optimizer && t.optimizer_offload_device == OffloadDevice::Nvme) j["offload_optimizer_device"] = "nvme";
  if (t.param_offload != OffloadDevice::None) j["offload_params"] = to_string(t.param_offload);
  if (!t.master_weights) j["master_weights_dtype"] = "none";
  else if (t.master_precision != Precision::Fp32) j["master_weights_dtype"] = to_string(t.master_precision);
  if (t.precision_aware_optimizer) j["precision_aware_optimizer"] = true;
  if (t.train_tokens > 0) j["train_tokens"] = t.train_tokens;
  if (t.dataset_samples > 0) {
    j["dataset_samples"] = t.dataset_samples;
    j["epochs"] = t.epochs;
  }
  if (t.mode == TrainingMode::Dpo && t.uses_adapters()) j["adapters"] = t.quantized_base() ? "qlora" : "lora";
  if (t.uses_adapters()) j["lora"] = {{"rank", t.lora.rank}, {"alpha", t.lora.alpha}, {"target_modules", t.lora.target_modules}};
  if (!t.framework.name.empty()) j["framework"] = framework_to_json(t.framework);  // implied: left out, so a reload implies it again
  // RL: an update's batch is derived from the rollout again on reload (derive_layout).
  if (t.is_rl()) j["rlhf"] = to_json(t.rl);
  else j["global_batch_size"] = t.global_batch_size;
  return j;
}

Json to_json(const RlhfSpec& rl) {
  Json j = {{"prompts_per_step", rl.prompts_per_step}, {"group_size", rl.group_size}, {"prompt_len", rl.prompt_len},
            {"response_len", rl.response_len}, {"max_response_len", rl.max_response_len}, {"samples_per_update", rl.samples_per_update},
            {"update_epochs", rl.update_epochs}, {"kl_reference", rl.kl_reference},
            {"placement", rl.placement == RolloutPlacement::Separate ? "separate" : "colocated"},
            {"gpu_memory_utilization", rl.gpu_memory_utilization}, {"prefix_caching", rl.prefix_caching}, {"max_num_seqs", rl.max_num_seqs}};
  if (rl.reward_model) j["reward_model"] = to_json(*rl.reward_model);
  if (rl.critic_model) j["critic_model"] = to_json(*rl.critic_model);
  if (rl.placement == RolloutPlacement::Separate) j["rollout_gpus"] = rl.rollout_gpus;
  if (rl.rollout_tp > 0) j["rollout_tp"] = rl.rollout_tp;
  if (rl.steps > 0) j["steps"] = rl.steps;
  return j;
}

Json to_json(const ParallelLayout& p) {
  return {{"tp", p.tp}, {"pp", p.pp}, {"dp", p.dp}, {"cp", p.cp}, {"ep", p.ep}, {"etp", p.etp}, {"vpp", p.vpp}, {"dp_replicate", p.dp_replicate},
          {"sequence_parallel", p.sequence_parallel}, {"tp_comm_overlap", p.tp_comm_overlap}, {"micro_batch_size", p.micro_batch_size},
          {"gradient_accumulation_steps", p.gradient_accumulation_steps}, {"schedule", to_string(p.schedule)},
          {"rank_order", p.rank_order}, {"account_for_embedding_in_pipeline_split", p.embedding_in_pipeline_split},
          {"account_for_loss_in_pipeline_split", p.loss_in_pipeline_split}};
}

namespace {
Json fabric_json(const FabricSpec& f) {
  Json j = {{"name", f.name}, {"kind", f.kind}, {"bandwidth", f.bandwidth}, {"latency", f.latency_s}, {"nvls", f.has_nvls}};
  if (!f.source.empty()) j["source"] = f.source;
  return j;
}
}  // namespace

Json to_json(const HardwareSpec& h) {
  const GpuSpec& g = h.gpu;
  Json flops = Json::object();
  auto put = [&](const char* k, double v) { if (v > 0) flops[k] = v; };
  put("fp32", g.flops_fp32); put("tf32", g.flops_tf32); put("fp16", g.flops_fp16); put("bf16", g.flops_bf16); put("fp8", g.flops_fp8);
  Json gpu = {{"name", g.name}, {"memory", g.memory_bytes}, {"memory_bandwidth", g.memory_bandwidth}, {"peak_flops", flops},
              {"intra_node", g.default_intra_node}, {"inter_node", g.default_inter_node}, {"gpus_per_node", g.default_gpus_per_node}};
  gpu["vendor"] = g.vendor;
  if (g.tdp_watts > 0) gpu["tdp"] = g.tdp_watts;
  if (g.price_per_hour > 0) gpu["price_per_hour"] = g.price_per_hour;
  if (!g.source.empty()) gpu["source"] = g.source;
  if (g.sms > 0) gpu["sms"] = g.sms;
  gpu["gemm_tile"] = {g.gemm_tile_m, g.gemm_tile_n};
  if (!g.gemm_published.empty()) {
    Json points = Json::array();
    for (const auto& pg : g.gemm_published) {
      Json e = {{"dtype", pg.precision == Precision::Fp32 ? "tf32" : to_string(pg.precision)}};
      if (pg.m > 0) e["m"] = std::llround(pg.m), e["n"] = std::llround(pg.n), e["k"] = std::llround(pg.k);
      if (pg.tflops > 0) e["tflops"] = pg.tflops;
      else e["efficiency"] = pg.efficiency;
      if (!pg.source.empty()) e["source"] = pg.source;
      points.push_back(e);
    }
    gpu["gemm_published"] = points;
  }
  if (g.hbm_copy_bandwidth > 0) gpu["hbm_copy_bandwidth"] = g.hbm_copy_bandwidth;
  if (!g.fused_attention.empty()) gpu["fused_attention"] = g.fused_attention;
  Json j = {{"gpu", gpu},
            {"gpus_per_node", h.gpus_per_node},
            {"num_nodes", h.num_nodes},
            {"num_gpus", h.num_gpus},
            {"intra_node", fabric_json(h.intra_node)},
            {"inter_node", {{"fabric", fabric_json(h.inter_node)}, {"nics_per_node", h.nics_per_node}}},
            {"price_per_gpu_hour", h.has_price() ? Json(h.price_per_gpu_hour) : Json(nullptr)}};
  if (h.host_memory_bytes > 0) j["host_memory"] = h.host_memory_bytes;
  return j;
}

Json to_json(const Scenario& s) {
  Json j = {{"model", to_json(s.model)}, {"training", to_json(s.training)}, {"parallel", to_json(s.parallel)}, {"hardware", to_json(s.hardware)}};
  if (s.data.given) j["data"] = to_json(s.data);
  return j;
}

Json defaults_to_json(const Scenario& s) {
  Json arr = Json::array();
  for (const auto& d : s.defaults) arr.push_back({{"path", d.path}, {"value", d.value}, {"reason", d.reason}});
  return arr;
}

}  // namespace trainsim
