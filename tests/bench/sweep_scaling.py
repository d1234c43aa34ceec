"""How fast `trainsim sweep` runs and how it scales: a timed script (a sweep is a whole process, not a function).

An estimate sweep of 5 models x 4 GPU types x 5 cluster sizes x 4 sequence lengths x N token budgets (10,000 points
by default) runs
  1. in one process: its time, the time per point, and how much of it is the command itself (the sweep's own
     records and files are the rest);
  2. as 1, 2 and 4 shards started at once on this machine: the speed-up;
and the per-point cost extrapolates what 1,000 cores (1,000 shards) would take for a million points.
Prints the figures; asserts only that every point ran and that the sharded merges equal the single-process one.

Usage: sweep_scaling.py TRAINSIM [--budgets N] (N token budgets: 25 gives 10,000 points)"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def sweep_file(path, budgets):
    doc = {"description": "the README's speed figures", "command": "estimate", "args": ["--set", "/training/global_batch_size=1024"],
           "axes": [{"name": "model", "path": "/model", "values": ["llama3-8b", "llama3-70b", "qwen2.5-7b", "qwen2.5-14b", "llama3.1-8b"]},
                    {"name": "gpu", "path": "/hardware/gpu", "values": ["h100-sxm-80gb", "a100-sxm-80gb", "h200-sxm-141gb", "b200"]},
                    {"name": "gpus", "flag": "--gpus", "range": {"from": 8, "to": 128, "times": 2}},
                    {"name": "seq_len", "path": "/training/seq_len", "values": [1024, 2048, 4096, 8192]},
                    {"name": "tokens", "path": "/training/train_tokens", "range": {"from": 1e9, "to": budgets * 1e9, "step": 1e9}}]}
    with open(path, "w") as f:
        json.dump(doc, f)
    return 5 * 4 * 5 * 4 * budgets


def run_shards(trainsim, sweep, out, shards):
    start = time.perf_counter()
    procs = [subprocess.Popen([trainsim, "sweep", sweep, "--out", out, "--shard", f"{i}/{shards}", "--format", "json"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for i in range(shards)]
    summaries = []
    for p in procs:
        out_text, err = p.communicate(timeout=3600)
        if p.returncode != 0:
            sys.exit(f"a shard failed: {err.decode()}")
        summaries.append(json.loads(out_text))
    return time.perf_counter() - start, summaries


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trainsim")
    ap.add_argument("--budgets", type=int, default=25)
    a = ap.parse_args()
    trainsim = os.path.abspath(a.trainsim)
    tmp = tempfile.mkdtemp(prefix="trainsim-sweep-bench-")
    try:
        sweep = os.path.join(tmp, "sweep.json")
        points = sweep_file(sweep, a.budgets)
        wall, (s,) = run_shards(trainsim, sweep, os.path.join(tmp, "one"), 1)
        if s["run"] != points:
            sys.exit(f"{s['run']} of {points} points ran")
        own = max(0.0, s["seconds"] - s["command_seconds"]) / points
        print(f"one process: {points} points in {wall:.2f} s ({1e3 * wall / points:.2f} ms a point: the command "
              f"{1e3 * s['command_seconds'] / points:.2f} ms, the sweep's own {1e3 * own:.2f} ms); {s['failed']} points failed")
        reference = subprocess.run([trainsim, "sweep", "merge", os.path.join(tmp, "one"), "--format", "csv"], capture_output=True, text=True).stdout
        times = {}
        for shards in (1, 2, 4):
            out = os.path.join(tmp, f"shards{shards}")
            times[shards], _ = run_shards(trainsim, sweep, out, shards)
            merged = subprocess.run([trainsim, "sweep", "merge", out, "--format", "csv"], capture_output=True, text=True).stdout
            if merged != reference:
                sys.exit(f"{shards} shards merge to another table")
            print(f"{shards} shard{'s' if shards > 1 else ''} at once on {os.cpu_count()} cores: {times[shards]:.2f} s, "
                  f"speed-up {times[1] / times[shards]:.2f}x")
        per_point = times[1] / points
        shard_start = 0.05  # a process start and the sweep file read, generously
        million = 1_000_000
        print(f"extrapolated: {million:,} points on 1,000 cores (1,000 shards of {million // 1000:,}) take about "
              f"{million // 1000 * per_point + shard_start:.1f} s of compute each, plus the engine's own start-up per task")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
