#include "estimate_report.hpp"

#include <algorithm>
#include <cmath>

#include "models/compute/recompute_policy.hpp"
#include "models/core/units.hpp"
#include "models/scenario/scenario.hpp"
#include "models/step/pipeline_schedule.hpp"
#include "plan_report.hpp"
#include "rlhf_report.hpp"
#include "table.hpp"

namespace trainsim {

using Json = nlohmann::json;

Json stage_memory_json(const StageMemory& s, double capacity) {
  return {{"stage", s.stage},
          {"layers", s.layers},
          {"parameters", s.parameters},
          {"weights_bytes", s.weights},
          {"gradients_bytes", s.gradients},
          {"optimizer_bytes", s.optimizer},
          {"activations_bytes", s.activations},
          {"other_bytes", s.other},
          {"total_bytes", s.total},
          {"capacity_bytes", capacity},
          {"fits", s.total <= capacity},
          {"host_bytes", s.host},
          {"nvme_bytes", s.nvme},
          {"detail",
           {{"activations_layers_bytes", s.activations_layers},
            {"activations_recompute_bytes", s.activations_recompute},
            {"activations_embedding_logits_bytes", s.activations_edges},
            {"weights_held_by_autograd_bytes", s.weights_held_by_autograd},
            {"layer_microbatches_in_flight", s.layer_microbatches_in_flight},
            {"cuda_context_bytes", s.cuda_context},
            {"nccl_bytes", s.nccl},
            {"fragmentation_bytes", s.fragmentation},
            // What PyTorch's counters would show for the same peak (memory.hpp MemoryCounter).
            {"torch_max_reserved_bytes", s.counted(MemoryCounter::AllocatorReserved)},
            {"torch_max_allocated_bytes", s.counted(MemoryCounter::AllocatorAllocated)}}}};
}

Json memory_json(const MemoryEstimate& m) {
  Json j = stage_memory_json(m.worst, m.capacity);
  j["fits"] = m.fits;
  j["device_fits"] = m.device_fits;
  j["host_fits"] = m.host_fits;
  j["host_per_node_bytes"] = m.host_per_node;
  j["host_capacity_bytes"] = m.host_capacity > 0 ? Json(m.host_capacity) : Json(nullptr);
  j["stages"] = Json::array();
  for (const auto& s : m.stages) j["stages"].push_back(stage_memory_json(s, m.capacity));
  return j;
}

Json estimate_json(const EstimateResult& r) {
  const MemoryEstimate& m = r.memory;
  Json suggestions = Json::array();
  for (const auto& s : r.suggestions) suggestions.push_back({{"change", s.change}, {"total_bytes", s.total_bytes}, {"fits", s.fits}});
  Json j = {{"command", "estimate"},
          {"scenario_source", r.scenario_label},
          {"scenario", to_json(r.scenario)},
          {"defaults", defaults_to_json(r.scenario)},
          {"notes", r.scenario.notes},
          {"framework", framework_result_json(r.scenario.training, r.scenario.parallel)},
          {"model",
           {{"name", r.scenario.model.name},
            {"parameters", m.params.total},
            {"active_parameters", m.params.active},
            {"trainable_parameters", m.trainable_parameters}}},
          {"memory", memory_json(m)},
          {"step", step_json(r.step)},
          {"training", training_cost_json(r.cost)},
          {"suggestions", suggestions}};
  if (r.data_feed) j["data_feed"] = to_json(*r.data_feed);
  if (r.rlhf) j["rlhf"] = rlhf_json(*r.rlhf, r.scenario);
  return j;
}

std::string describe_framework(const TrainingSpec& t, const ParallelLayout& p) {
  if (t.framework.name.empty()) return std::string(framework_for(t, p).name) + " (implied by the layout)";
  std::string out = t.framework.name + " (from the scenario";
  if (!t.framework.overridden.empty()) {
    out += "; overrides:";
    for (const auto& k : t.framework.overridden) out += " " + k;
  }
  return out + ")";
}

std::string describe_training(const Scenario& s) {
  const TrainingSpec& t = s.training;
  const ParallelLayout& p = s.parallel;
  std::string z = t.zero_stage > 0 ? "ZeRO-" + std::to_string(t.zero_stage) : t.distributed_optimizer ? "distributed optimizer" : "no ZeRO";
  return std::string(to_string(t.mode)) + ", seq " + std::to_string(t.seq_len) + ", global batch " +
         std::to_string(t.global_batch_size) + " = micro " + std::to_string(p.micro_batch_size) + " x dp " +
         std::to_string(p.dp) + " x accumulation " + std::to_string(p.gradient_accumulation_steps) + ", " + to_string(t.precision) +
         ", " + t.optimizer_name + ", " + z + ", recompute " + recompute_text(t) +
         (t.flash_attention ? ", flash attention" : "") + (t.offload_optimizer ? ", optimizer offloaded" : "");
}

std::string describe_layout(const Scenario& s) {
  const ParallelLayout& p = s.parallel;
  std::string out = "tp " + std::to_string(p.tp) + (p.sequence_parallel && p.tp > 1 ? "+sp" : "") + " . pp " + std::to_string(p.pp);
  if (p.vpp > 1) out += "x" + std::to_string(p.vpp);
  out += " . dp " + std::to_string(p.dp);
  if (p.dp_replicate > 1) out += " (" + std::to_string(p.dp_replicate) + " replicas of " + std::to_string(p.zero_shard_ranks()) + "-rank shards)";
  out += " . cp " + std::to_string(p.cp);
  if (s.model.is_moe()) out += " . ep " + std::to_string(p.ep) + " . etp " + std::to_string(p.etp);
  out += " (" + std::string(to_string(p.schedule)) + "), " + std::to_string(s.hardware.num_gpus) + " x " + s.hardware.gpu.name +
         " on " + std::to_string(s.hardware.num_nodes) + (s.hardware.num_nodes == 1 ? " node" : " nodes");
  return out;
}

void print_estimate_table(std::ostream& os, const EstimateResult& r) {
  const Scenario& s = r.scenario;
  const MemoryEstimate& m = r.memory;
  const StageMemory& w = m.worst;
  os << "Scenario   " << r.scenario_label << "\n";
  os << "Model      " << s.model.name << ": " << format_count(m.params.total) << " parameters";
  if (s.model.is_moe()) os << " (" << format_count(m.params.active) << " active)";
  if (!s.training.trains_base_weights()) os << ", " << format_count(m.trainable_parameters) << " trainable (adapters)";
  os << "\nTraining   " << describe_training(s) << "\nLayout     " << describe_layout(s) << "\n";
  os << "Framework  " << describe_framework(s.training, s.parallel) << "\n\n";

  // Under a bidirectional schedule (DualPipe) a row is a pipeline rank holding stages r and pp-1-r.
  const bool ranks = pairs_stages(s.parallel);
  os << "Memory per GPU, most loaded " << (ranks ? "rank" : "stage") << " (" << w.stage << " of " << s.parallel.pp << ", " << w.layers
     << " layers), GiB\n";
  TextTable t({"part", "GiB", "what"});
  std::string weights_what = format_count(w.parameters) + " parameters on this GPU";
  if (w.weights_held_by_autograd > 0) weights_what += ", " + gib(w.weights_held_by_autograd) + " GiB of it gathers held by autograd (memory_efficient_linear false)";
  t.add_row({"weights", gib(w.weights), weights_what});
  // Adapters keep fp32 weights, gradients and states of their own (kAdapter*Bytes), whatever the base's gradient dtype.
  t.add_row({"gradients", gib(w.gradients),
             s.training.trains_base_weights() ? std::string(to_string(gradient_precision(s.training, s.parallel))) + " gradient buffer"
                                              : std::string("fp32 adapter gradients")});
  std::string offloaded;  // what lives off the GPU: host memory (optimizer states, gradient partitions, parameters), NVMe
  if (w.host > 0) offloaded += gib(w.host) + " GiB in host memory" + (w.paged > 0 ? " (" + gib(w.paged) + " GiB paged out by the paged optimizer)" : "");
  if (w.nvme > 0) offloaded += (offloaded.empty() ? "" : ", ") + gib(w.nvme) + " GiB on NVMe";
  std::string optimizer_what = offloaded.empty() ? s.training.optimizer_name + " states" : "offloaded: " + offloaded;
  // What an offloaded optimizer leaves on the GPU: a partial offload's share, Megatron's fp32 master.
  const bool master = offload_master_on_device(s.training, s.parallel);
  const bool partial = s.training.offload_optimizer && s.training.offload_fraction < 1;
  if (w.optimizer > 0 && (master || partial))
    optimizer_what += std::string("; on the GPU: ") + (master ? "the fp32 master" : "") + (master && partial ? " and " : "") +
                      (partial ? "the states not offloaded" : "");
  t.add_row({"optimizer", gib(w.optimizer), optimizer_what});
  t.add_row({"activations", gib(w.activations), "layers " + gib(w.activations_layers) + " (" + fixed(w.layer_microbatches_in_flight, 0) +
                                                   " layer-micro-batches), recompute " + gib(w.activations_recompute) + ", embedding/logits " + gib(w.activations_edges)});
  t.add_row({"other", gib(w.other), "CUDA context " + gib(w.cuda_context) + ", NCCL " + gib(w.nccl) + ", fragmentation " + gib(w.fragmentation)});
  t.add_row({"total", gib(w.total), "of " + gib(m.capacity) + " GiB on a " + s.hardware.gpu.name});
  t.print(os);
  const double margin = m.capacity - w.total;
  if (m.fits) os << "\nFits: " << gib(margin) << " GiB free (" << fixed(100.0 * margin / m.capacity, 1) << "%).\n";
  else if (!m.device_fits) os << "\nDoes NOT fit: needs " << gib(-margin) << " GiB more than the GPU has.\n";
  else os << "\nDoes NOT fit: the GPUs have room (" << gib(margin) << " GiB free), the node's host memory does not.\n";
  if (m.host_per_node > 0) {
    const int per_node = std::min(s.hardware.gpus_per_node, s.hardware.num_gpus);
    os << "Host memory per node: " << gib(m.host_per_node) << " GiB offloaded (" << per_node << " GPUs x " << gib(w.host) << " GiB)";
    if (m.host_capacity <= 0) os << "; not checked: set hardware.host_memory\n";
    else if (m.host_fits) os << " of the node's " << gib(m.host_capacity) << " GiB\n";
    else os << ", " << gib(m.host_per_node - m.host_capacity) << " GiB more than the node's " << gib(m.host_capacity) << " GiB\n";
  }

  if (s.parallel.pp > 1) {
    os << (ranks ? "\nPer pipeline rank (rank r holds stages r and pp-1-r), GiB\n" : "\nPer pipeline stage, GiB\n");
    TextTable st({ranks ? "rank" : "stage", "layers", "weights", "grads", "optimizer", "activations", "other", "total", "fits"});
    for (const auto& x : m.stages)
      st.add_row({std::to_string(x.stage), std::to_string(x.layers), gib(x.weights), gib(x.gradients), gib(x.optimizer), gib(x.activations),
                  gib(x.other), gib(x.total), x.total <= m.capacity ? "yes" : "no"});
    st.print(os);
  }

  if (r.rlhf)
    os << "\nOne actor update: " << s.training.global_batch_size << " packed sequences of " << s.training.seq_len
       << " tokens (critical pipeline stage, exposed communication only)\n";
  else
    os << "\nStep time (critical pipeline stage, exposed communication only)\n";
  print_step_table(os, r.step, r.cost, s);
  if (r.rlhf) print_rlhf_section(os, *r.rlhf, s);
  if (r.data_feed) os << "\nData feed: " << data_feed_line(*r.data_feed) << "\n";

  std::vector<FitSuggestion> fitting;
  for (const auto& f : r.suggestions) if (f.fits) fitting.push_back(f);
  if (!m.fits) {
    if (fitting.empty()) {
      os << "\nNo single change fits. Closest:\n";
      std::vector<FitSuggestion> all = r.suggestions;
      std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.total_bytes < b.total_bytes; });
      for (std::size_t i = 0; i < all.size() && i < 3; ++i) os << "  " << all[i].change << " -> " << gib(all[i].total_bytes) << " GiB\n";
    } else {
      os << "\nSingle changes that make it fit (cheapest first):\n";
      for (const auto& f : fitting) os << "  " << f.change << " -> " << gib(f.total_bytes) << " GiB\n";
    }
  }
  os << "\n" << s.defaults.size() << " defaults applied (listed under \"defaults\" in --format json).\n";
  for (const auto& n : s.notes) os << "Note: " << n << "\n";
}

void print_estimate_csv(std::ostream& os, const EstimateResult& r) {
  os << "stage,layers,parameters,weights_bytes,gradients_bytes,optimizer_bytes,activations_bytes,other_bytes,total_bytes,capacity_bytes,fits,host_bytes\n";
  for (const auto& s : r.memory.stages) {
    os << s.stage << ',' << s.layers << ',' << fixed(s.parameters, 0) << ',' << fixed(s.weights, 0) << ',' << fixed(s.gradients, 0) << ','
       << fixed(s.optimizer, 0) << ',' << fixed(s.activations, 0) << ',' << fixed(s.other, 0) << ',' << fixed(s.total, 0) << ','
       << fixed(r.memory.capacity, 0) << ',' << (s.total <= r.memory.capacity ? "true" : "false") << ',' << fixed(s.host, 0) << '\n';
  }
}

}  // namespace trainsim
