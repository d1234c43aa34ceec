#!/usr/bin/env python3
"""Replays every speed case of ../shared/reference in `trainsim simulate` on a non-blocking fabric and compares
the simulated step with the analytic one (issue: the two must agree within 5% where nothing is contended).

  scripts/simulate_reference.py [--build build] [--max-gpus 1024] [--iterations 1] [--timeout 300]

The cases' scenarios, at the layouts they ran, come from `trainsim_accuracy --write-scenarios`. Cases above
--max-gpus are listed as skipped (the simulator's wall time grows with GPUs x micro-batches).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def gpus_of(doc):
    h = doc["hardware"]
    if "num_gpus" in h:
        return int(h["num_gpus"])
    return int(h.get("num_nodes", 1)) * int(h.get("gpus_per_node", 8))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--max-gpus", type=int, default=1024)
    ap.add_argument("--iterations", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=300, help="seconds per case before it is listed as too slow")
    args = ap.parse_args()
    trainsim = os.path.join(args.build, "trainsim")
    rows, worst = [], 0.0
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([os.path.join(args.build, "tests", "trainsim_accuracy"), "--write-scenarios", tmp],
                       check=True, stdout=subprocess.DEVNULL)
        for name in sorted(os.listdir(tmp)):
            path = os.path.join(tmp, name)
            doc = json.load(open(path))
            gpus = gpus_of(doc)
            case = name[:-5]
            if gpus > args.max_gpus:
                print(f"{case:58s} {gpus:6d} GPUs  skipped (above --max-gpus)", flush=True)
                continue
            t0 = time.time()
            try:
                run = subprocess.run([trainsim, "simulate", path, "--iterations", str(args.iterations), "--format", "json"],
                                     capture_output=True, text=True, timeout=args.timeout)
            except subprocess.TimeoutExpired:
                print(f"{case:58s} {gpus:6d} GPUs  stopped after {args.timeout:.0f} s (--timeout)", flush=True)
                continue
            wall = time.time() - t0
            if run.returncode != 0:
                print(f"{case:58s} {gpus:6d} GPUs  refused: {run.stderr.strip().splitlines()[-1]}", flush=True)
                continue
            out = json.loads(run.stdout)
            sim, ana = out["step"]["time_s"], out["analytic"]["step"]["time_s"]
            diff = sim / ana - 1
            worst = max(worst, abs(diff))
            rows.append(diff)
            print(f"{case:58s} {gpus:6d} GPUs  simulated {sim:9.3f} s  analytic {ana:9.3f} s  {100 * diff:+6.2f}%  ({wall:.1f} s wall)", flush=True)
    if rows:
        rows.sort(key=abs)
        print(f"\n{len(rows)} cases simulated: median |difference| {100 * abs(rows[len(rows) // 2]):.2f}%, max {100 * worst:.2f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
