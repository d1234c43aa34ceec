#include "sim/cluster/workload/model_jobs.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>

#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"
#include "models/core/json_text.hpp"
#include "models/core/units.hpp"
#include "models/scenario/scenario.hpp"
#include "models/step/step.hpp"
#include "sim/reliability/job_setup.hpp"

namespace trainsim::sim::cluster {

namespace {

Json load_scenario(const Json& value, const std::string& base_dir, const std::string& path) {
  if (value.is_object()) return value;
  if (!value.is_string()) throw InputError(path, json_value_text(value), "a scenario: a file path or an object {model, training, parallel, hardware}");
  std::string file = value.get<std::string>();
  if (!file.empty() && file[0] != '/' && !base_dir.empty()) file = base_dir + "/" + file;
  std::ifstream in(file);
  if (!in) throw InputError(path, json_value_text(value), "a readable scenario file");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_json_text(text, file, "scenario");
}

// An elastic job given as a scenario resizes by whole data-parallel replicas (tp·pp·cp GPUs), at the step
// model's speed on each count of replicas.
void set_elastic(const Scenario& s, const StepEstimate& step, int min_gpus, int max_gpus, int cluster_gpus, const std::string& at, ClusterJob* j) {
  const int replica = s.parallel.tp * s.parallel.pp * s.parallel.cp;
  if (max_gpus == 0) max_gpus = j->gpus;
  if (min_gpus == 0) min_gpus = j->gpus;
  const std::string expected = "a multiple of the data-parallel replica's " + std::to_string(replica) + " GPUs (tp x pp x cp), with elastic_min <= " +
                               std::to_string(j->gpus) + " (the layout's GPUs) <= elastic_max";
  if (min_gpus % replica != 0 || min_gpus > j->gpus) throw InputError(at + "/elastic_min", std::to_string(min_gpus), expected);
  if (max_gpus % replica != 0 || max_gpus < j->gpus) throw InputError(at + "/elastic_max", std::to_string(max_gpus), expected);
  j->elastic_min = min_gpus;
  j->elastic_max = max_gpus;
  j->elastic_step = replica;
  // Sizes past the cluster's GPUs never run: no speed for them.
  for (int g = min_gpus; g <= std::min(max_gpus, std::max(cluster_gpus, j->gpus)); g += replica) j->elastic_speed.push_back(g == j->gpus ? 1.0 : speed_at_replicas(s, step, g / replica));
}

}  // namespace

std::vector<ClusterJob> jobs_from_scenarios(const Json& list, const std::string& base_dir, const std::string& path, const ClusterSpec& cluster,
                                            std::vector<ModelJobInfo>* info) {
  if (!list.is_array()) throw InputError(path, json_value_text(list), "a list of jobs {id, submit, scenario, user, queue, priority, checkpoint_interval, elastic_min, elastic_max}");
  std::vector<ClusterJob> out;
  int cluster_gpus = 0;
  for (const NodePool& p : cluster.pools) cluster_gpus += p.total_gpus();
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = path + "/" + std::to_string(i);
    if (!list[i].is_object()) throw InputError(at, json_value_text(list[i]), "a job {id, submit, scenario, ...}");
    JsonReader r(list[i], at, nullptr);
    if (!r.has("scenario")) throw InputError(at + "/scenario", r.absent_text("scenario"), "the job's scenario (a file or an object)");
    const Scenario s = parse_scenario(load_scenario(r.raw("scenario"), base_dir, at + "/scenario"));
    require_supervised_mode(s.training, "cluster");
    if (!(s.training.train_tokens > 0))
      throw InputError(at + "/scenario/training/train_tokens", "nothing", "the tokens the job trains (its duration comes from them)");
    ClusterJob j;
    j.id = r.get_string("id", "job-" + std::to_string(i), "");
    j.submit_s = r.get_quantity("submit", Quantity::Time, 0, "", {0, 1e12});
    j.user = r.get_string("user", "", "");
    j.queue = r.get_string("queue", "", "");
    j.priority = r.get_int("priority", 0, "", -1000000, 1000000);
    j.checkpoint_interval_s = r.get_quantity("checkpoint_interval", Quantity::Time, 0, "", {0, 365 * 86400.0});
    const int elastic_min = r.get_int("elastic_min", 0, "", 0, 1000000), elastic_max = r.get_int("elastic_max", 0, "", 0, 1000000);
    r.reject_unknown();
    const StepModel packed(s.model, s.training, s.hardware);
    const StepEstimate step = packed.estimate(s.parallel);
    HardwareSpec spread = s.hardware;
    spread.inter_node.bandwidth /= cluster.oversubscription;
    const StepEstimate cross = StepModel(s.model, s.training, spread).estimate(s.parallel);
    const TrainingCost cost = packed.training_cost(step, s.parallel);
    j.gpus = static_cast<int>(s.parallel.world());
    j.gpu_types = {s.hardware.gpu.name};
    j.duration_s = cost.time_to_train_s;
    j.cross_leaf_slowdown = step.time_s > 0 ? std::max(1.0, cross.time_s / step.time_s) : 1.0;
    if (elastic_min > 0 || elastic_max > 0) set_elastic(s, step, elastic_min, elastic_max, cluster_gpus, at, &j);
    if (info) info->push_back({j.id, step.time_s, cross.time_s, cost.iterations});
    out.push_back(std::move(j));
  }
  std::stable_sort(out.begin(), out.end(), [](const ClusterJob& a, const ClusterJob& b) { return a.submit_s < b.submit_s; });
  return out;
}

}  // namespace trainsim::sim::cluster
