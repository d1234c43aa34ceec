#!/usr/bin/env python3
"""Where the GPU waits for the host in one training step: one step of a case's plain loop profiled with CPU and CUDA
activity; it counts the host's synchronising calls (cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize,
device-to-host copies) and the host time they block, and sums the GPU's idle gaps between consecutive kernels
(gaps above 5 us, the launch cost of back-to-back kernels) beside the step's wall and kernel time. It checks the
model's host costs for MoE loops (transformers' fp32 grouped_mm runs one GEMM per expert, with syncs in between).

Prints one JSON document (stdout). Run: python3 host_syncs.py cases.json ID[,ID...] > host_syncs.json
"""
import json
import sys

import torch
from torch.profiler import ProfilerActivity, profile

import run_corpus as rc

SYNC_CALLS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cudaMemcpy", "cudaMemcpyAsync")


def profiled(step):
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    calls, kernels = {}, []
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            kernels.append((e.time_range.start, e.time_range.end))
        elif e.name in SYNC_CALLS:
            row = calls.setdefault(e.name, {"count": 0, "host_s": 0.0})
            row["count"] += 1
            row["host_s"] += (e.time_range.end - e.time_range.start) / 1e6
    kernels.sort()
    gaps, gap_count, end = 0.0, 0, None
    for start, stop in kernels:
        if end is not None and start - end > 5:
            gaps += (start - end) / 1e6
            gap_count += 1
        end = stop if end is None else max(end, stop)
    span = (kernels[-1][1] - kernels[0][0]) / 1e6 if kernels else 0.0
    return {"kernels": len(kernels), "kernel_span_s": span, "gpu_idle_gaps_s": gaps, "gpu_idle_gaps": gap_count,
            "sync_calls": calls}


def measure(case):
    return {"id": case["id"],
            **rc.with_plain_step(case, lambda step: {"wall_s": rc.median_wall(step, timed=3, warm=2), **profiled(step)})}


def main():
    cases = {c["id"]: c for c in json.load(open(sys.argv[1]))["cases"]}
    rows = [measure(cases[cid]) for cid in sys.argv[2].split(",")]
    for r in rows:
        print(r["id"], round(r["wall_s"], 4), round(r["gpu_idle_gaps_s"], 4), r["sync_calls"], file=sys.stderr, flush=True)
    json.dump({"provenance": rc.versions(), "cases": rows}, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
