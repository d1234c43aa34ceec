#!/usr/bin/env python3
"""Does a GPU slow its GEMMs down to stay within its power limit, and by how much, in a pure GEMM loop and in a
loop where GEMMs alternate with memory-bound kernels as in a training step? Each phase runs for a fixed time while
nvidia-smi samples the SM clock, the board power and the active clock-limit reasons every 100 ms; GEMM time is
taken from CUDA events around each GEMM, so the rate is the GEMMs' own whatever else runs between them.

  burst     : 40 GEMMs after 5 s idle (the GPU at its top clock)
  gemm-only : GEMMs back to back
  mixed-D   : each GEMM followed by device-to-device copies taking about D of the GEMM's time
  idle-D    : each batch of 20 GEMMs followed by the host sleeping D of the batch's time (the GPU idle)
  copy-only : device-to-device copies back to back (a memory-bound kernel's power and clock)

Prints one JSON document (stdout). Run: python3 gemm_power.py [SECONDS_PER_PHASE] [idle]  (idle: only the 8192^3 idle-D and copy-only phases)
"""
import json
import statistics
import subprocess
import sys
import time

import torch

import run_corpus as rc

SHAPES = ((8192, 8192, 8192), (8192, 8192, 2048))  # m, n, k; the second a 1B model's MLP GEMM at 8,192 tokens
QUERY = "timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active"


def sampler():
    return subprocess.Popen(["nvidia-smi", f"--query-gpu={QUERY}", "--format=csv,noheader,nounits", "-lms", "100"],
                            stdout=subprocess.PIPE, text=True)


def samples(proc):
    proc.terminate()
    out = proc.communicate(timeout=10)[0]
    rows = []
    for line in out.strip().splitlines():
        parts = [p.strip() for p in line.split(",")]
        try:
            rows.append({"clock_mhz": float(parts[1]), "power_w": float(parts[2]), "temp_c": float(parts[3]),
                         "reasons": parts[4] if len(parts) > 4 else ""})
        except (ValueError, IndexError):
            continue
    return rows


def summary(rows):
    if not rows:
        return {}
    steady = rows[len(rows) // 3:]  # the last two thirds: past the first ramp
    reasons = {}
    for r in steady:
        reasons[r["reasons"]] = reasons.get(r["reasons"], 0) + 1
    return {"samples": len(rows), "clock_mhz_median": statistics.median(r["clock_mhz"] for r in steady),
            "power_w_median": statistics.median(r["power_w"] for r in steady),
            "temp_c_max": max(r["temp_c"] for r in rows), "limit_reasons": reasons}


def phase(shape, seconds, copy_fraction, max_gemms=None, idle_fraction=0.0):
    m, n, k = shape
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    src = torch.empty(256 * 2**20, device="cuda", dtype=torch.uint8)  # 256 MiB copies between the GEMMs
    dst = torch.empty_like(src)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record(); a @ b; e1.record(); torch.cuda.synchronize()
    copy_t0 = time.perf_counter()
    dst.copy_(src); torch.cuda.synchronize()
    copy_s = max(time.perf_counter() - copy_t0, 1e-5)
    copies = round(copy_fraction * e0.elapsed_time(e1) / 1e3 / copy_s) if copy_fraction > 0 else 0
    proc = sampler()
    time.sleep(0.3)
    pairs, start = [], time.perf_counter()
    while time.perf_counter() - start < seconds and (max_gemms is None or len(pairs) < max_gemms):
        batch = []
        for _ in range(20 if max_gemms is None else max_gemms):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record(); a @ b; e.record()
            for _ in range(copies):
                dst.copy_(src)
            batch.append((s, e))
        torch.cuda.synchronize()
        pairs += [s.elapsed_time(e) / 1e3 for s, e in batch]
        if idle_fraction > 0:
            time.sleep(idle_fraction * sum(s.elapsed_time(e) / 1e3 for s, e in batch))
    wall = time.perf_counter() - start
    rows = samples(proc)
    flops = 2.0 * m * n * k
    steady = pairs[len(pairs) // 3:]
    return {"shape": [m, n, k], "copy_fraction": copy_fraction, "idle_fraction": idle_fraction, "copies_per_gemm": copies, "gemms": len(pairs),
            "wall_s": wall, "gemm_share_of_wall": sum(pairs) / wall,
            "tflops_first_10": flops / statistics.median(pairs[:10]) / 1e12,
            "tflops_steady_median": flops / statistics.median(steady) / 1e12,
            "setup_s": time.perf_counter() - t0 - wall, **summary(rows)}


def copy_only(seconds):
    src = torch.empty(1024 * 2**20, device="cuda", dtype=torch.uint8)
    dst = torch.empty_like(src)
    proc = sampler()
    start, n = time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        for _ in range(50):
            dst.copy_(src)
        torch.cuda.synchronize()
        n += 50
    wall = time.perf_counter() - start
    return {"phase": "copy-only", "copy_bytes_per_s": 2 * src.numel() * n / wall, **summary(samples(proc))}


def idle_phases(seconds):
    out = [copy_only(seconds)]
    for frac in (0.25, 0.5, 1.0):
        row = {"phase": f"idle-{frac}", **phase(SHAPES[0], seconds, 0.0, idle_fraction=frac)}
        print(row["phase"], round(row["tflops_steady_median"]), row.get("clock_mhz_median"), row.get("power_w_median"),
              file=sys.stderr, flush=True)
        out.append(row)
    return out


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 12
    if len(sys.argv) > 2 and sys.argv[2] == "idle":
        json.dump({"provenance": rc.versions(), "phases": idle_phases(seconds)}, sys.stdout, indent=1)
        return
    out = []
    for shape in SHAPES:
        time.sleep(5)
        out.append({"phase": "burst", **phase(shape, 2, 0.0, max_gemms=40)})
        for frac in (0.0, 0.5, 1.0):
            row = {"phase": "gemm-only" if frac == 0 else f"mixed-{frac}", **phase(shape, seconds, frac)}
            print(row["phase"], shape, round(row["tflops_steady_median"]), row.get("clock_mhz_median"),
                  row.get("power_w_median"), file=sys.stderr, flush=True)
            out.append(row)
    json.dump({"provenance": rc.versions(), "phases": out}, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
