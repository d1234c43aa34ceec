#!/usr/bin/env python3
"""Derives the framework presets' host-time traits from torch_moe_block.py's measurements.

Every eager measurement here is host-bound (its kernels take a fraction of the wall time), so wall time over
the kernels launched is the host's time per kernel:
- forward: Python module code, dispatch and autograd recording (the MoE loop's forward, the small Llama's);
- backward: the autograd engine (fwd+bwd minus fwd, over the backward's kernels).
ZeRO-3's per-module fetch from Python hooks is the loop with hooks minus the loop without, per hooked Linear
and pass.

Run: python3 eager_host_costs.py h100-sxm-80gb-2026-11-23/*.json
Prints each estimate and the median that the presets carry (kernel_launch_gap_us, backward_launch_gap_us,
zero3_module_fetch_us).
"""
import json
import statistics
import sys


def main(paths):
    forward, backward, fetch = [], [], []
    for path in paths:
        doc = json.load(open(path))
        if "rows" not in doc:
            continue
        experts = doc["shape"]["experts"]
        hooked_linears = 3 * experts
        by_key = {(r["variant"], r["tokens"]): r for r in doc["rows"] if "forward_s" in r}
        for (variant, tokens), r in by_key.items():
            if variant != "loop":
                continue
            kf = r["forward_profile"]["kernels"]
            kb = r["forward_backward_profile"]["kernels"] - kf
            forward.append((path, f"loop {tokens} tokens", r["forward_s"] / kf))
            backward.append((path, f"loop {tokens} tokens", (r["forward_backward_s"] - r["forward_s"]) / kb))
            hooked = by_key.get(("loop+hooks", tokens))
            if hooked:
                fetch.append((path, f"forward {tokens} tokens", (hooked["forward_s"] - r["forward_s"]) / hooked_linears))
                extra_bwd = (hooked["forward_backward_s"] - hooked["forward_s"]) - (r["forward_backward_s"] - r["forward_s"])
                fetch.append((path, f"backward {tokens} tokens", extra_bwd / hooked_linears))
        for probe in doc.get("dense_host_probe", []):
            if "host_per_kernel_forward_s" in probe:
                forward.append((path, f"llama-tiny {probe['attn_implementation']}", probe["host_per_kernel_forward_s"]))
                backward.append((path, f"llama-tiny {probe['attn_implementation']}", probe["host_per_kernel_backward_s"]))
    for name, rows in (("kernel_launch_gap_us (forward, per kernel)", forward),
                       ("backward_launch_gap_us (backward, per kernel)", backward),
                       ("zero3_module_fetch_us (per hooked module and pass)", fetch)):
        print(name)
        for path, what, value in rows:
            print(f"  {value * 1e6:8.1f} us  {what:28s} {path}")
        if rows:
            print(f"  median {statistics.median(v for _, _, v in rows) * 1e6:.1f} us over {len(rows)} estimates")


if __name__ == "__main__":
    main(sys.argv[1:])
