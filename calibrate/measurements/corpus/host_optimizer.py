#!/usr/bin/env python3
"""What an offloaded optimizer's step costs on the host: torch.optim.AdamW over fp32 CPU tensors, fused (torch's CPU
kernel, what Megatron's --optimizer-cpu-offload and torchtitan ask for) and single-tensor (torch.optim's default on
host tensors), with one OpenMP thread per process (what torchrun leaves each rank: OMP_NUM_THREADS=1) and with all
of them, one process and one per GPU at once; and the PCIe copies around it (the fp32 gradient down into pinned
memory, the fp32 master up into a bf16 parameter).

trainsim prices the host step at OffloadAssumptions::host_memory_bandwidth_per_gpu (25 GB/s, models/step/step.hpp)
over the bytes it counts per parameter: 30 fused (2 x 12 of states + 4 of gradient + 2 of 16-bit copy), 80 for the
single-tensor loop (step_stream.cpp host_optimizer_step_bytes). Each row reports the bandwidth those counts imply,
to set against that assumption.

Prints one JSON document (stdout). Run: python3 host_optimizer.py [--elements 268435456] [--processes 8]
"""
import argparse
import json
import multiprocessing as mp
import os
import platform
import time

import run_corpus as rc  # same folder: the shared timer

COUNTED_BYTES = {"fused": 30.0, "single-tensor": 80.0}  # trainsim's per-parameter counts, fp32 AdamW


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def adamw_step_s(elements, tensors, kind, threads, steps):
    """Median seconds of one AdamW step over `elements` fp32 parameters split into `tensors` tensors."""
    import torch

    torch.set_num_threads(threads)
    size = elements // tensors
    params = [torch.zeros(size, dtype=torch.float32, requires_grad=True) for _ in range(tensors)]
    for p in params:
        p.grad = torch.randn(size, dtype=torch.float32)
    options = {"fused": True} if kind == "fused" else {"foreach": False}
    opt = torch.optim.AdamW(params, lr=1e-5, weight_decay=0.1, **options)
    return rc.median_wall(opt.step, timed=steps)  # the untimed first step allocates the moments


def worker(args, queue):
    try:
        queue.put(adamw_step_s(*args))
    except Exception as e:  # noqa: BLE001 -- the parent re-raises it, never waits on a result that will not come
        queue.put(repr(e))


def concurrent_step_s(processes, elements, tensors, kind, threads, steps):
    """Each of `processes` processes steps its own parameters at once; the slowest one's median."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=worker, args=((elements, tensors, kind, threads, steps), queue)) for _ in range(processes)]
    for p in procs:
        p.start()
    results = [queue.get() for _ in procs]
    for p in procs:
        p.join()
    errors = [r for r in results if isinstance(r, str)]
    if errors:
        raise RuntimeError(errors[0])
    return max(results)


def pcie_rows(elements):
    """The copies around the host step, one GPU: fp32 gradient to pinned host memory, fp32 master to a bf16 parameter."""
    import torch

    if not torch.cuda.is_available():
        return []
    grad = torch.randn(elements, device="cuda", dtype=torch.float32)
    host = torch.empty(elements, dtype=torch.float32, pin_memory=True)
    param = torch.empty(elements, device="cuda", dtype=torch.bfloat16)
    rows = []
    for name, copy, moved in (("d2h fp32 gradient -> pinned fp32", lambda: host.copy_(grad, non_blocking=True), 4.0),
                              ("h2d pinned fp32 master -> bf16 parameter", lambda: param.copy_(host, non_blocking=True), 4.0)):
        t = rc.median_wall(copy, timed=5)
        rows.append({"copy": name, "elements": elements, "seconds": t, "gb_per_s": elements * moved / t / 1e9})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--elements", type=int, default=1 << 28, help="fp32 parameters per process (default 268M: 4.3 GB of states)")
    ap.add_argument("--tensors", type=int, default=64, help="how many tensors they are split into")
    ap.add_argument("--processes", type=int, default=8, help="processes stepping at once, as the ranks of one node")
    ap.add_argument("--steps", type=int, default=3)
    a = ap.parse_args()
    import torch

    cores = os.cpu_count() or 1
    rows = []
    for kind in ("fused", "single-tensor"):
        for processes, threads in ((1, 1), (1, cores), (a.processes, 1)):
            try:
                if processes == 1:
                    t = adamw_step_s(a.elements, a.tensors, kind, threads, a.steps)
                else:
                    t = concurrent_step_s(processes, a.elements, a.tensors, kind, threads, a.steps)
            except Exception as e:  # noqa: BLE001 (torch before 2.4 has no fused CPU AdamW)
                rows.append({"kind": kind, "processes": processes, "threads_per_process": threads, "error": repr(e)})
                continue
            rows.append({"kind": kind, "processes": processes, "threads_per_process": threads, "elements_per_process": a.elements,
                         "step_s": t, "elements_per_s_per_process": a.elements / t,
                         "counted_bytes_per_parameter": COUNTED_BYTES[kind],
                         "implied_gb_per_s_per_process": a.elements * COUNTED_BYTES[kind] / t / 1e9})
    doc = {"what": "torch.optim.AdamW over fp32 host tensors (fused / single-tensor) and the PCIe copies around it",
           "torch": torch.__version__, "cpu": cpu_model(), "cores": cores,
           "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
           "date": time.strftime("%Y-%m-%d"), "adamw": rows, "pcie": pcie_rows(a.elements // 4)}
    print(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main()
