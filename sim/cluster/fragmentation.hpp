#pragma once
// GPU fragmentation as Weng et al. define it (FGD, "Beware of Fragmentation", USENIX ATC'23, section 4): the
// free GPU capacity of a node that a task drawn from the target workload could not use, in expectation over the
// workload's task classes. For one class m on node n:
//  - m asks no GPU, or may not use n's GPU type, or n lacks the CPU, memory or GPUs m needs: every free
//    thousandth of n's GPUs is a fragment (m leaves them idle);
//  - m fits: the free thousandths of the GPUs that hold less than m asks per GPU (a partly used GPU for a
//    whole-GPU task, a sliver for a 0.5-GPU one).
// F_n = sum over m of share_m x fragment_n(m). FGD places a task where F grows least (the steepest descent).
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "cluster_job.hpp"

namespace trainsim::sim::cluster {

// One kind of task of the target workload and its share of the tasks.
struct TaskClass {
  int gpus = 0;                 // whole GPUs (0: a CPU-only task; 1 with gpu_milli < 1000: a share of one)
  int gpu_milli = 0;            // thousandths per GPU asked
  std::int64_t cpu_milli = 0, memory_mib = 0;
  std::vector<std::string> gpu_types;  // allowed models (empty: any)
  std::int64_t count = 0;  // tasks of the class in the workload
  double share = 0;         // count over the tasks of the classes kept
};

// The target workload of a job list: its distinct requests, most frequent first, kept until they cover
// `coverage` of the jobs, their shares renormalised over those kept. The default keeps every class: the paper's
// simulator keeps the most popular 95% ("typical pods", for speed), and on the openb default trace that cut drops
// the one class (1 GPU, 16.4 cores) whose absence lets FGD starve G2 nodes of CPU: 90.1% of the GPUs allocated
// against 94.7% with every class (the paper: 95.4%). The memo makes the whole workload cheap.
std::vector<TaskClass> target_workload(const std::vector<ClusterJob>& jobs, bool gpu_sharing, double coverage = 1.0);

// What the measure reads of a node: its GPU model, free host resources (a limit of 0: not limited) and the free
// thousandths of each GPU.
struct NodeView {
  const std::string* gpu_model = nullptr;
  std::int64_t cpu_free = 0, cpu_limit = 0, memory_free = 0, memory_limit = 0;
  const std::int16_t* gpu_free = nullptr;
  int gpus = 0;
};

// Whether a task of `gpus` GPUs of `gpu_milli` each (0 GPUs: CPU only) and these host requests fits the node.
bool fits_node(const NodeView& n, int gpus, int gpu_milli, std::int64_t cpu_milli, std::int64_t memory_mib);

class FragmentationMeasure {
 public:
  explicit FragmentationMeasure(std::vector<TaskClass> workload);
  const std::vector<TaskClass>& workload() const { return workload_; }
  // F_n in thousandths of a GPU. Memoised on what it reads of the node (model, free CPU, free GPU thousandths in
  // sorted order): a cluster of a few node shapes revisits few states.
  double of(const NodeView& n) const;

 private:
  double compute(const NodeView& n) const;
  std::vector<TaskClass> workload_;
  mutable std::unordered_map<std::string, double> memo_;
};

}  // namespace trainsim::sim::cluster
