#!/usr/bin/env python3
"""trainsim against published runs that no fitted parameter has seen: runs `trainsim estimate --format json` on each
run's scenario in SPEC (rlhf_published.json: PPO/GRPO steps; held_out_runs.json: training steps of recipes nobody here
tuned to), prints published and predicted step time with the error (published / predicted - 1, as the accuracy run
reports speed), whether the published step falls inside the printed 10th-90th percentile band, and for RL steps
trainsim's phases; then the median |error| and the band coverage. A run that publishes its peak allocated memory
(peak_allocated_gib) is compared with trainsim's allocated bytes (the memory total less CUDA context, NCCL buffers and
the allocator's fragmentation allowance) as well. Fails when an error exceeds its run's limit (limit, memory_limit: set a
little above today's error, so that a change that moves a prediction away from its run fails).
Usage: published_runs.py TRAINSIM REPOSITORY_ROOT SPEC.json"""
import json
import os
import statistics
import subprocess
import sys


def predict(trainsim, scenario):
    out = subprocess.run([trainsim, "estimate", scenario, "--format", "json"], capture_output=True, text=True, check=True)
    doc = json.loads(out.stdout)
    if "rlhf" in doc:
        rl = doc["rlhf"]
        phases = f"{rl['rollout']['time_s']:.1f} / {rl['scoring']['time_s']:.1f} / {rl['training']['time_s']:.1f} / {rl['sync_s']:.2f}"
        return rl["step_time_s"], None, f"rollout / scoring / training / sync {phases} s", None
    step, memory = doc["step"], doc["memory"]
    band = (step["time_s_low"], step["time_s_high"])
    allocated_gib = (memory["total_bytes"] - memory["other_bytes"]) / 2**30
    return step["time_s"], band, "fits" if memory["fits"] else "does NOT fit", allocated_gib


def main():
    trainsim, root, spec_path = sys.argv[1], sys.argv[2], sys.argv[3]
    spec = json.load(open(os.path.join(root, spec_path)))
    print(spec["source"])
    print(f"{'scenario':66} {'published s':>11} {'trainsim s':>10} {'error':>7} {'in band':>8}  notes")
    failed = False
    errors, inside, memory_errors = [], [], []
    for run in spec["runs"]:
        predicted, band, notes, allocated_gib = predict(trainsim, os.path.join(root, run["scenario"]))
        error = run["step_time_s"] / predicted - 1
        errors.append(abs(error))
        in_band = "-"
        if band:
            hit = band[0] <= run["step_time_s"] <= band[1]
            inside.append(hit)
            in_band = "yes" if hit else "no"
        name = os.path.basename(run["scenario"]).removesuffix(".json")
        if "peak_allocated_gib" in run and allocated_gib is not None:
            memory_error = run["peak_allocated_gib"] / allocated_gib - 1
            memory_errors.append(abs(memory_error))
            notes += f"; allocated {run['peak_allocated_gib']:.1f} GiB published, {allocated_gib:.1f} predicted ({100 * memory_error:+.1f}%)"
            if abs(memory_error) > run["memory_limit"]:
                print(f"FAIL: {name}: memory |error| {100 * abs(memory_error):.1f}% above the limit {100 * run['memory_limit']:.0f}%")
                failed = True
        print(f"{name:66} {run['step_time_s']:11.2f} {predicted:10.2f} {100 * error:+6.1f}% {in_band:>8}  {notes}")
        if abs(error) > run["limit"]:
            print(f"FAIL: {name}: |error| {100 * abs(error):.1f}% above the limit {100 * run['limit']:.0f}%")
            failed = True
    summary = f"{len(errors)} runs: median |error| {100 * statistics.median(errors):.1f}%, max {100 * max(errors):.1f}%"
    if inside:
        summary += f"; inside the printed band {sum(inside)} of {len(inside)}"
    if memory_errors:
        summary += f"; memory of {len(memory_errors)}: median |error| {100 * statistics.median(memory_errors):.1f}%, max {100 * max(memory_errors):.1f}%"
    print(summary)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
