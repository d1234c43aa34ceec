#!/usr/bin/env python3
"""Kernels and host time per decoder layer of the loops run_corpus.py runs, to check the step model's kernel
counts and launch gaps against what the libraries launch.

For each configuration the model is built with 1 and with 3 layers; the difference over 2 is one layer's share.
Three passes are profiled (CUDA kernels counted, GPU time summed) and timed (median wall time, synchronised):
the forward (loss included), forward + backward, and the whole optimizer step. Few tokens make the GPU work
small, so the wall time of a host-bound pass over its kernels is the host's time per kernel.

Prints one JSON document (stdout). Run: python3 kernel_census.py > census.json
"""
import copy
import json
import sys
import time

import torch

import run_corpus as rc  # same folder: the cases' model builder and loops


def profile_kernels(fn):
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names, total = {}, 0.0
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            total += e.device_time_total
            names[e.name[:90]] = names.get(e.name[:90], 0) + 1
    return sum(names.values()), total / 1e6, names


def passes(case, model):
    """Forward, forward + backward and the whole step of the case's plain loop."""
    tr, par = case["training"], case["parallel"]
    mb, seq, vocab = par["micro_batch_size"], tr["seq_len"], case["model"]["vocab_size"]
    ids = torch.randint(0, vocab, (mb, seq), device="cuda")
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-5, fused=True)

    def forward():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return model(input_ids=ids, labels=ids).loss

    def forward_backward():
        forward().backward()
        opt.zero_grad(set_to_none=True)

    step = rc.hf_step(case, model, opt)
    return {"forward": forward, "forward_backward": forward_backward, "step": step}


def measure(case, layers):
    c = copy.deepcopy(case)
    c["model"]["num_hidden_layers"] = layers
    model = rc.build_model(c)
    out = {}
    for name, fn in passes(c, model).items():
        fn()  # warm-up (optimizer state, autotuning)
        kernels, gpu_s, names = profile_kernels(fn)
        out[name] = {"kernels": kernels, "gpu_s": gpu_s, "wall_s": rc.median_wall(fn), "kernel_names": names}
    del model
    torch.cuda.empty_cache()
    return out


def per_layer(one, three):
    row = {}
    for name in one:
        a, b = one[name], three[name]
        k = (b["kernels"] - a["kernels"]) / 2
        w = (b["wall_s"] - a["wall_s"]) / 2
        g = (b["gpu_s"] - a["gpu_s"]) / 2
        names = {n: (b["kernel_names"].get(n, 0) - a["kernel_names"].get(n, 0)) / 2
                 for n in set(a["kernel_names"]) | set(b["kernel_names"])}
        row[name] = {"kernels_per_layer": k, "wall_per_layer_s": w, "gpu_per_layer_s": g,
                     "wall_per_kernel_us": 1e6 * w / k if k else None, "edges_kernels": a["kernels"] - k,
                     "edges_wall_s": a["wall_s"] - w, "edges_gpu_s": a["gpu_s"] - g,
                     "kernel_names_per_layer": {n: v for n, v in sorted(names.items(), key=lambda x: -x[1]) if v}}
    # backward alone: forward+backward less the forward
    f, fb = row["forward"], row["forward_backward"]
    row["backward"] = {"kernels_per_layer": fb["kernels_per_layer"] - f["kernels_per_layer"],
                       "wall_per_layer_s": fb["wall_per_layer_s"] - f["wall_per_layer_s"],
                       "gpu_per_layer_s": fb["gpu_per_layer_s"] - f["gpu_per_layer_s"]}
    b = row["backward"]
    b["wall_per_kernel_us"] = 1e6 * b["wall_per_layer_s"] / b["kernels_per_layer"] if b["kernels_per_layer"] else None
    return row


def grouped_mm_source():
    """transformers' grouped_mm experts code: which dtype its GEMMs run in under autocast over fp32 weights."""
    import inspect
    out = {}
    try:
        import transformers.integrations.moe as moe
        for name, fn in inspect.getmembers(moe, inspect.isfunction):
            if "grouped" in name or "experts" in name:
                out[name] = inspect.getsource(fn)[:5000]
    except Exception as e:  # noqa: BLE001
        out["error"] = repr(e)
    return out


def main():
    spec = json.load(open(sys.argv[1] if len(sys.argv) > 1 else "census_cases.json"))
    out = {"provenance": rc.versions(), "grouped_mm_source": grouped_mm_source(), "configurations": []}
    for case in spec["cases"]:
        t0 = time.time()
        try:
            one, three = measure(case, 1), measure(case, 3)
            row = {"id": case["id"], "per_layer": per_layer(one, three), "one_layer": one, "three_layers": three}
        except Exception:  # noqa: BLE001
            import traceback
            row = {"id": case["id"], "error": traceback.format_exc()[-2000:]}
        row["seconds"] = round(time.time() - t0, 1)
        out["configurations"].append(row)
        print(case["id"], row.get("error", "") or {k: (v["kernels_per_layer"], v.get("wall_per_kernel_us"))
                                                  for k, v in row["per_layer"].items()}, file=sys.stderr, flush=True)
    json.dump(out, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
