#!/usr/bin/env python3
"""trainsim's PPO/GRPO step against published runs (rlhf_published.json): runs `trainsim estimate --format json` on each
run's scenario, prints published and predicted step time with the error (published / predicted - 1, as the accuracy
run reports speed) and trainsim's phases, and fails when an error exceeds the run's limit.
Usage: rlhf_published.py TRAINSIM REPOSITORY_ROOT"""
import json
import os
import subprocess
import sys


def main():
    trainsim, root = sys.argv[1], sys.argv[2]
    spec = json.load(open(os.path.join(root, "tests/accuracy/rlhf_published.json")))
    print(spec["source"])
    print(f"{'scenario':48} {'published s':>11} {'trainsim s':>10} {'error':>7}  rollout / scoring / training / sync s")
    failed = False
    for run in spec["runs"]:
        out = subprocess.run([trainsim, "estimate", os.path.join(root, run["scenario"]), "--format", "json"],
                             capture_output=True, text=True, check=True)
        rl = json.loads(out.stdout)["rlhf"]
        predicted = rl["step_time_s"]
        error = run["step_time_s"] / predicted - 1
        phases = f"{rl['rollout']['time_s']:.1f} / {rl['scoring']['time_s']:.1f} / {rl['training']['time_s']:.1f} / {rl['sync_s']:.2f}"
        name = os.path.basename(run["scenario"]).removesuffix(".json")
        print(f"{name:48} {run['step_time_s']:11.1f} {predicted:10.1f} {100 * error:+6.1f}%  {phases}")
        if abs(error) > run["limit"]:
            print(f"FAIL: {name}: |error| {100 * abs(error):.1f}% above the limit {100 * run['limit']:.0f}%")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
