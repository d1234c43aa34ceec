#include "rlhf_report.hpp"

#include "models/core/units.hpp"
#include "plan_report.hpp"
#include "table.hpp"

namespace trainsim {

using Json = nlohmann::json;

namespace {
std::string share(double part, double whole) { return whole > 0 ? fixed(100 * part / whole, 1) + "%" : "-"; }
}  // namespace

Json rlhf_json(const RlhfStepEstimate& e, const Scenario& s) {
  const RlhfSpec& rl = s.training.rl;
  const RolloutEstimate& g = e.rollout;
  return {{"algorithm", to_string(s.training.mode)},
          {"placement", e.colocated ? "colocated" : "separate"},
          {"gpus", {{"training", e.training_gpus}, {"rollout", e.rollout_gpus}, {"total", e.training_gpus + (e.colocated ? 0 : e.rollout_gpus)}}},
          {"samples_per_step", e.samples},
          {"tokens_per_step", e.tokens},
          {"updates_per_step", e.updates},
          {"step_time_s", e.step_s},
          {"samples_per_s", e.samples_per_s},
          {"tokens_per_s", e.tokens_per_s},
          {"rollout",
           {{"time_s", g.time_s},
            {"prefill_s", g.prefill_s},
            {"decode_s", g.decode_s},
            {"engines", g.engines},
            {"engine_tp", g.tp},
            {"samples_per_engine", g.samples_per_engine},
            {"concurrent_sequences", g.concurrent},
            {"waves", g.waves},
            {"decode_steps", g.decode_steps},
            {"response_length_scale", g.length_scale},
            {"generated_tokens", g.generated_tokens},
            {"weights_bytes_per_gpu", g.weights_bytes_per_gpu},
            {"kv_bytes_per_token", g.kv_bytes_per_token},
            {"kv_capacity_tokens", g.kv_capacity_tokens},
            {"fits", g.fits}}},
          {"scoring",
           {{"time_s", e.scoring_s}, {"policy_logprobs_s", e.logprobs_s}, {"reference_s", e.reference_s}, {"reward_s", e.reward_s},
            {"critic_values_s", e.values_s}}},
          {"training", {{"time_s", e.training_s}, {"actor_s", e.actor_update_s}, {"critic_s", e.critic_update_s}}},
          {"sync_s", e.sync_s},
          {"memory",
           {{"training_phase_bytes", e.training_phase_bytes},
            {"generation_phase_bytes", e.generation_phase_bytes},
            {"actor_bytes", e.actor_bytes},
            {"reference_bytes", e.reference_bytes},
            {"reward_bytes", e.reward_bytes},
            {"critic_bytes", e.critic_bytes},
            {"capacity_bytes", e.capacity_bytes},
            {"fits", e.fits}}},
          {"run", rl.steps > 0 ? training_cost_json(e.cost) : Json(nullptr)}};
}

std::vector<std::pair<std::string, double>> rlhf_phases(const RlhfStepEstimate& e) {
  return {{"rollout", e.rollout.time_s}, {"scoring", e.scoring_s}, {"training", e.training_s}, {"weight sync", e.sync_s}};
}

std::vector<std::vector<std::string>> rlhf_phase_rows(const RlhfStepEstimate& e, bool indent) {
  std::vector<std::vector<std::string>> rows;
  std::string phase;
  auto add = [&](const std::string& name, double v) {
    phase = name.substr(0, name.find(' '));
    rows.push_back({name, fixed(v, 3), share(v, e.step_s)});
  };
  auto part = [&](const std::string& name, double v) { rows.push_back({(indent ? "  " : phase + ": ") + name, fixed(v, 3), share(v, e.step_s)}); };
  add("rollout", e.rollout.time_s);
  part("prefill", e.rollout.prefill_s);
  part("decode", e.rollout.decode_s);
  add("scoring", e.scoring_s);
  part("actor log-probabilities", e.logprobs_s);
  if (e.reference_s > 0) part("reference model", e.reference_s);
  if (e.reward_s > 0) part("reward model", e.reward_s);
  if (e.values_s > 0) part("critic values", e.values_s);
  add("training (" + std::to_string(e.updates) + (e.updates == 1 ? " update)" : " updates)"), e.training_s);
  part("actor", e.actor_update_s);
  if (e.critic_update_s > 0) part("critic", e.critic_update_s);
  add("weight sync", e.sync_s);
  rows.push_back({"step", fixed(e.step_s, 3), "100.0%"});
  return rows;
}

std::string rlhf_line(const RlhfStepEstimate& e) {
  return fixed(e.step_s, 2) + " s a step (rollout " + share(e.rollout.time_s, e.step_s) + "), " + format_count(static_cast<double>(e.samples)) +
         " samples, " + format_count(e.tokens_per_s) + " tokens/s";
}

std::string rlhf_cost_line(const RlhfStepEstimate& e) {
  const TrainingCost& c = e.cost;
  if (!(c.time_to_train_s > 0)) return "no step count given (training.rlhf.steps)";
  return fixed(c.iterations, 0) + " steps in " + format_seconds(c.time_to_train_s) + ", " + fixed(c.gpu_hours, 0) + " GPU-hours, " +
         (c.priced ? format_usd(c.cost) : std::string("cost unknown (no price)"));
}

void print_rlhf_section(std::ostream& os, const RlhfStepEstimate& e, const Scenario& s) {
  const RlhfSpec& rl = s.training.rl;
  const RolloutEstimate& g = e.rollout;
  os << "\n" << (s.training.mode == TrainingMode::Ppo ? "PPO" : "GRPO") << " step: " << rl.prompts_per_step << " prompts x " << rl.group_size
     << " responses = " << e.samples << " samples of " << rl.prompt_len << " + " << rl.response_len << " tokens (at most "
     << rl.max_response_len << " generated), " << (e.colocated ? "engines colocated with training on " + std::to_string(e.training_gpus) + " GPUs"
                                                             : std::to_string(e.rollout_gpus) + " rollout GPUs beside " +
                                                                   std::to_string(e.training_gpus) + " training GPUs")
     << "\n";
  TextTable t({"phase", "seconds", "share"});
  for (auto& row : rlhf_phase_rows(e, true)) t.add_row(std::move(row));
  t.print(os);
  os << "  " << format_count(e.samples_per_s) << " samples/s, " << format_count(e.tokens_per_s) << " tokens/s; " << rlhf_cost_line(e) << "\n";
  if (!g.fits) {
    os << "  rollout: NOT priced: an engine of tp " << g.tp << " holds " << format_count(g.kv_capacity_tokens) << " tokens of KV cache beside its "
       << gib(g.weights_bytes_per_gpu) << " GiB of weights per GPU, less than one sequence of " << rl.prompt_len + rl.max_response_len
       << " tokens (raise rollout_tp or gpu_memory_utilization)\n";
  } else {
  os << "  rollout: " << g.engines << " engine" << (g.engines == 1 ? "" : "s") << " of tp " << g.tp << ", " << g.samples_per_engine
     << " samples each, " << g.concurrent << " at once (" << g.waves << (g.waves == 1 ? " wave" : " waves") << "), the longest of a wave decoding "
     << fixed(g.decode_steps, 0) << " steps";
  if (g.length_scale > 0) os << " (response lengths with an exponential tail of scale " << fixed(g.length_scale, 0) << " tokens)";
  os << "; KV cache " << format_bytes(g.kv_bytes_per_token) << " a token per GPU, room for " << format_count(g.kv_capacity_tokens) << " tokens\n";
  }
  os << "  memory per GPU: training phase " << gib(e.training_phase_bytes) << " GiB (" << (e.colocated ? "the largest of " : "")
     << "actor " << gib(e.actor_bytes);
  if (e.reference_bytes > 0) os << ", reference " << gib(e.reference_bytes);
  if (e.reward_bytes > 0) os << ", reward model " << gib(e.reward_bytes);
  if (e.critic_bytes > 0) os << ", critic " << gib(e.critic_bytes);
  os << (e.colocated ? "; the others sleep in host memory" : ", all resident") << "), generation phase " << gib(e.generation_phase_bytes) << " GiB (the engine's " << fixed(100 * rl.gpu_memory_utilization, 0) << "%"
     << (e.colocated ? " and the actor's weights" : "") << "), of " << gib(e.capacity_bytes) << " GiB: "
     << (e.fits ? "fits" : !g.fits ? "does NOT fit (the engine cannot hold one full-length sequence)" : "does NOT fit") << "\n";
}

}  // namespace trainsim
