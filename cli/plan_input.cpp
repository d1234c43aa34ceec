#include "plan_input.hpp"

#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"
#include "models/scenario/scenario.hpp"
#include "models/step/step.hpp"
#include "scenario_input.hpp"
#include "sim/reliability/job_setup.hpp"

namespace trainsim::cli {
namespace {

using Json = nlohmann::json;

double number_at(const Json& j, const char* a, const char* b) {
  if (!j.is_object() || !j.contains(a) || !j[a].is_object() || !j[a].contains(b) || !j[a][b].is_number()) return 0;
  return j[a][b].get<double>();
}

const Json& object_at(const Json& doc, const char* key, const std::string& path, const std::string& expected) {
  if (!doc.contains(key)) throw InputError(path, "nothing", expected);
  if (!doc[key].is_object()) throw InputError(path, json_value_text(doc[key]), expected);
  return doc[key];
}

// Re-throws a scenario error with the path it has in the plan/estimate JSON.
[[noreturn]] void rethrow_in(const InputError& e, bool from_plan) {
  const std::string& p = e.path();
  std::string path = "/scenario" + p;
  if (from_plan) {
    for (const char* moved : {"/training/recompute", "/training/zero_stage", "/training/offload_optimizer"})
      if (p == moved) path = "/plans/0/layout/" + p.substr(10);
    if (p.rfind("/parallel", 0) == 0) path = "/plans/0/layout" + p.substr(9);
    if (p == "/hardware/num_gpus" || p == "/hardware/num_nodes") path = "/plans/0/num_gpus";
  }
  throw InputError(path, e.value(), e.expected(), e.hint());
}

// The scenario of `trainsim plan --format json` with its first plan's layout and GPU count fixed.
Json scenario_of_plan(const Json& doc, PlanInput& out) {
  Json scenario = object_at(doc, "scenario", "/scenario", "the resolved scenario that trainsim plan --format json writes");
  if (!doc.contains("plans") || !doc["plans"].is_array())
    throw InputError("/plans", doc.contains("plans") ? json_value_text(doc["plans"]) : "nothing", "the list of plans trainsim plan writes");
  if (doc["plans"].empty())
    throw InputError("/plans", "[]", "at least one plan with a fixed layout", "no layout fit in memory: nothing to export");
  const Json& plan = doc["plans"][0];
  if (!plan.is_object()) throw InputError("/plans/0", json_value_text(plan), "a plan object with layout and num_gpus");
  const Json& layout = object_at(plan, "layout", "/plans/0/layout", "the plan's fixed layout {tp, pp, dp, micro_batch_size, ...}");
  for (const char* key : {"tp", "pp", "dp", "micro_batch_size"})
    if (!layout.contains(key)) throw InputError(std::string("/plans/0/layout/") + key, "nothing", "a fixed layout: every degree given");
  if (!plan.contains("num_gpus") || !plan["num_gpus"].is_number_integer() || plan["num_gpus"].get<long long>() < 1)
    throw InputError("/plans/0/num_gpus", plan.contains("num_gpus") ? json_value_text(plan["num_gpus"]) : "nothing", "the plan's GPU count");
  if (!scenario.contains("hardware") || !scenario["hardware"].is_object())
    throw InputError("/scenario/hardware", scenario.contains("hardware") ? json_value_text(scenario["hardware"]) : "nothing",
                     "the resolved hardware section");

  Json parallel = scenario.contains("parallel") && scenario["parallel"].is_object() ? scenario["parallel"] : Json::object();
  for (const char* key : {"tp", "pp", "vpp", "dp", "cp", "ep", "etp", "micro_batch_size", "gradient_accumulation_steps", "sequence_parallel",
                          "tp_comm_overlap", "schedule"}) {
    if (layout.contains(key)) parallel[key] = layout[key];
    else parallel.erase(key);  // derived, as for estimate
  }
  scenario["parallel"] = parallel;
  Json& training = scenario["training"];
  if (!training.is_object()) throw InputError("/scenario/training", json_value_text(training), "the resolved training section");
  for (const char* key : {"recompute", "zero_stage", "offload_optimizer"})
    if (layout.contains(key)) training[key] = layout[key];
  Json& hardware = scenario["hardware"];
  const long long gpus = plan["num_gpus"].get<long long>();
  hardware["num_gpus"] = gpus;
  if (hardware.contains("gpus_per_node") && hardware["gpus_per_node"].is_number_integer() && hardware["gpus_per_node"].get<long long>() > 0) {
    const long long per_node = hardware["gpus_per_node"].get<long long>();
    hardware["num_nodes"] = (gpus + per_node - 1) / per_node;
  } else {
    hardware.erase("num_nodes");
  }
  out.step_time_s = number_at(plan, "step", "time_s");
  out.mfu = number_at(plan, "step", "mfu");
  out.time_to_train_s = number_at(plan, "training", "time_to_train_s");
  out.iterations = number_at(plan, "training", "iterations");
  return scenario;
}

}  // namespace

PlanInput load_plan_input(const std::string& path) {
  PlanInput out;
  out.source = path;
  std::string* kind = &out.kind;
  const Json doc = read_json_file(path, "PLAN");
  if (!doc.is_object())
    throw InputError("PLAN", json_value_text(doc), "a scenario, or the JSON that trainsim plan / estimate --format json wrote");
  std::string command;
  if (doc.contains("command")) {
    if (!doc["command"].is_string() || (doc["command"] != "plan" && doc["command"] != "estimate"))
      throw InputError("/command", json_value_text(doc["command"]), "\"plan\" or \"estimate\" (the JSON those commands write), or a scenario file");
    command = doc["command"].get<std::string>();
  } else if (doc.contains("plans")) {
    command = "plan";
  }

  Scenario scenario;
  if (command.empty()) {
    *kind = "scenario";
    ScenarioInput input;
    input.path = path;
    std::string label;
    const Json document = load_scenario_document(input, &label);
    scenario = parse_scenario(document, true);
    const sim::ReliabilitySettings reliability = sim::parse_reliability_settings(document, scenario.hardware.gpus_per_node);
    out.elastic = reliability.recovery.elastic;
    out.elastic_min_fraction = reliability.recovery.elastic_min_fraction;
    if (reliability.interval == sim::IntervalChoice::Steps) out.save_steps = reliability.interval_steps;
    StepModel sm(scenario.model, scenario.training, scenario.hardware);
    const StepEstimate step = sm.estimate(scenario.parallel);
    const TrainingCost cost = sm.training_cost(step, scenario.parallel);
    out.step_time_s = step.time_s;
    out.mfu = step.mfu;
    out.time_to_train_s = cost.time_to_train_s;
    out.iterations = cost.iterations;
  } else {
    *kind = command + " JSON";
    const bool from_plan = command == "plan";
    const Json scenario_doc =
        from_plan ? scenario_of_plan(doc, out) : object_at(doc, "scenario", "/scenario", "the resolved scenario that trainsim estimate --format json writes");
    if (!from_plan) {
      out.step_time_s = number_at(doc, "step", "time_s");
      out.mfu = number_at(doc, "step", "mfu");
      out.time_to_train_s = number_at(doc, "training", "time_to_train_s");
      out.iterations = number_at(doc, "training", "iterations");
    }
    try {
      scenario = parse_scenario(scenario_doc, true);
    } catch (const InputError& e) {
      rethrow_in(e, from_plan);
    }
  }
  require_supervised_mode(scenario.training, "export");
  out.scenario = std::move(scenario);
  return out;
}


}  // namespace trainsim::cli
