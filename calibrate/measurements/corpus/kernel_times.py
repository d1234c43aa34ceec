#!/usr/bin/env python3
"""Where one training step's GPU time goes, kernel by kernel, for cases of cases.json: the case's plain loop
(run_corpus.py hf_step) after two warm-up steps, one step profiled, GPU time summed per kernel name and per kind
(GEMM, grouped GEMM, attention, fill, copy, elementwise, reduction), beside the step's wall time. It checks the step
model's per-op prices (trainsim estimate --format json, step.ops) where a case misses.

Prints one JSON document (stdout). Run: python3 kernel_times.py cases.json ID[,ID...] > kernel_times.json
"""
import json
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

import run_corpus as rc  # same folder: the model builder and the loops

KINDS = (  # first match wins: (kind, substrings of the kernel name)
    ("grouped_gemm", ("grouped", "GroupProblemShape", "enable_3x_kernel")),
    ("attention", ("sdpa", "flash", "fmha", "dot_do_o", "convert_dq")),
    ("gemm", ("nvjet", "gemm", "sgemm", "xmma", "cutlass", "splitKreduce")),
    ("fill", ("FillFunctor", "Memset", "zero_")),
    ("copy", ("copy", "Memcpy", "Cat", "gather", "scatter", "index")),
    ("reduction", ("reduce_kernel", "SoftMax", "softmax", "nll_loss", "norm", "multi_tensor_apply")),
    ("elementwise", ("elementwise", "Functor", "silu", "pow", "rsqrt")),
)


def kind(name):
    for k, keys in KINDS:
        if any(s in name for s in keys):
            return k
    return "other"


def profile_step(step):
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    by_name, by_kind = {}, {}
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        s = e.device_time_total / 1e6
        row = by_name.setdefault(e.name[:120], {"kind": kind(e.name), "count": 0, "gpu_s": 0.0})
        row["count"] += 1
        row["gpu_s"] += s
        k = by_kind.setdefault(row["kind"], {"count": 0, "gpu_s": 0.0})
        k["count"] += 1
        k["gpu_s"] += s
    top = sorted(by_name.items(), key=lambda x: -x[1]["gpu_s"])[:40]
    return {"gpu_s": sum(v["gpu_s"] for v in by_kind.values()), "by_kind": by_kind,
            "top_kernels": [dict(name=n, **v) for n, v in top]}


def measure(case):
    return {"id": case["id"],
            **rc.with_plain_step(case, lambda step: {"wall_s": rc.median_wall(step, timed=3, warm=2), **profile_step(step)})}


def main():
    cases = {c["id"]: c for c in json.load(open(sys.argv[1]))["cases"]}
    rows = []
    for cid in sys.argv[2].split(","):
        t0 = time.time()
        try:
            row = measure(cases[cid])
        except Exception:  # noqa: BLE001
            import traceback
            row = {"id": cid, "error": traceback.format_exc()[-2000:]}
        row["seconds"] = round(time.time() - t0, 1)
        rows.append(row)
        print(cid, row.get("wall_s"), row.get("gpu_s"), row.get("error", ""), file=sys.stderr, flush=True)
    json.dump({"provenance": rc.versions(), "cases": rows}, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
