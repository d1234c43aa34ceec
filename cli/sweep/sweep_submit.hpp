#pragma once
// trainsim sweep submit SWEEP.json --to slurm|k8s --shards N: the files that run a sweep's shards on an engine the
// user already has, each shard `trainsim sweep SWEEP.json --shard I/N --out DIR`:
//   slurm  sweep_array.sbatch (a job array, --array=0-(N-1)%MAX, reading SLURM_ARRAY_TASK_ID), sweep_merge.sbatch
//          (the merged CSV, JSON and HTML report) and submit.sh (sbatch the array, then the merge with
//          --dependency=afterok on it);
//   k8s    sweep-job.yaml: a ConfigMap with the sweep and its scenario files, and a batch/v1 Job with
//          completionMode Indexed (one completion per shard, reading JOB_COMPLETION_INDEX) writing to a
//          PersistentVolumeClaim; sweep-merge-job.yaml for after it.
// Each shard's CPU, memory and time limit come from one point run here first (its time and peak memory) times the
// points per shard, with a margin.
#include <CLI/CLI.hpp>
#include <functional>
#include <memory>

namespace trainsim::cli::sweep {

void add_submit_subcommand(CLI::App& sweep, const std::shared_ptr<std::function<int()>>& chosen);

}  // namespace trainsim::cli::sweep
