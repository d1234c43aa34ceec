#!/usr/bin/env python3
"""The SM clock and board power while real training steps run (nvidia-smi every 100 ms, as gemm_power.py samples
them), beside the step's wall time and its GEMMs' achieved rate (one step profiled with kernel_times.py): how far
a training step's GEMMs sit from the power limit that a GEMM-only loop hits.

Cases: the plain loops of kernel_times_cases.json (IDs) and the hand-written decoders of torch_decoder.py
(SHAPE like gpt-1.3b-s2048-b4-none, without RoPE as ../shared's cases ran).

Prints one JSON document (stdout). Run: python3 step_power.py kernel_times_cases.json ID[,ID...] [SHAPE,...]
"""
import json
import sys
import time

import torch

import gemm_power as gp
import kernel_times as kt
import run_corpus as rc
import torch_decoder as td


def sampled(step, steps):
    for _ in range(2):
        step()
    torch.cuda.synchronize()
    proc = gp.sampler()
    time.sleep(0.3)
    walls = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        walls.append(time.perf_counter() - t0)
    rows = gp.samples(proc)
    prof = kt.profile_step(step)
    gemm_s = sum(v["gpu_s"] for k, v in prof["by_kind"].items() if k in ("gemm", "grouped_gemm"))
    return {"steps": steps, "wall_s_median": sorted(walls)[len(walls) // 2], "gpu_s": prof["gpu_s"],
            "gemm_gpu_s": gemm_s, "by_kind": prof["by_kind"], **gp.summary(rows)}


def hf_case(case, steps):
    return {"id": case["id"], **rc.with_plain_step(case, lambda step: sampled(step, steps))}


def decoder_case(name, steps):
    model, opt, step = td.decoder_step(name, False)
    out = {"id": f"torch-decoder-{name}", **sampled(step, steps)}
    del model, opt
    torch.cuda.empty_cache()
    return out


def main():
    cases = {c["id"]: c for c in json.load(open(sys.argv[1]))["cases"]}
    rows = []
    for cid in sys.argv[2].split(","):
        rows.append(hf_case(cases[cid], 20))
        print(rows[-1]["id"], rows[-1]["wall_s_median"], rows[-1].get("clock_mhz_median"), rows[-1].get("power_w_median"),
              file=sys.stderr, flush=True)
    for name in (sys.argv[3].split(",") if len(sys.argv) > 3 else []):
        rows.append(decoder_case(name, 15))
        print(rows[-1]["id"], rows[-1]["wall_s_median"], rows[-1].get("clock_mhz_median"), rows[-1].get("power_w_median"),
              file=sys.stderr, flush=True)
    json.dump({"provenance": rc.versions(), "cases": rows}, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
