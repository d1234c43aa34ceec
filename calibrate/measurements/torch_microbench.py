#!/usr/bin/env python3
"""Measures, with PyTorch on one GPU, two quantities the step model takes from publications or fits:

1. Fused causal attention (torch.nn.functional.scaled_dot_product_attention, each available backend): forward
   and forward+backward time, as TFLOP/s of the kernel's useful FLOPs (4·b·h·s²·d/2 forward, 2.5x that backward).
2. Eager host overhead per kernel: the wall time per launch of a tiny elementwise op issued back to back from
   Python (the GPU work is ~2 us, so the loop runs at the host's launch rate), against the same ops replayed
   from a CUDA graph.

Prints one JSON document (stdout). Run: python3 torch_microbench.py > torch_microbench.json
"""
import json
import platform
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def cuda_events_time(fn, iters):
    """Mean time of `iters` back-to-back calls, timed with CUDA events (seconds)."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 1e3 / iters


def cuda_time(fn, iters):
    """Median over 5 repeats of cuda_events_time."""
    out = sorted(cuda_events_time(fn, iters) for _ in range(5))
    return out[len(out) // 2]


def attention(results):
    shapes = [  # (batch, query heads, kv heads, sequence, head dim)
        (1, 32, 8, 4096, 128),   # Llama-3-8B layer, tp 1 (the default scenario)
        (2, 32, 8, 8192, 128),   # torchtitan Llama-3.1-8B, local batch 2, seq 8192
        (1, 8, 1, 4096, 128),    # Llama-3-70B at tp 8
        (1, 32, 8, 1024, 128),   # short sequences
        (1, 32, 8, 16384, 128),  # long sequences
    ]
    backends = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION}
    for b, hq, hkv, s, d in shapes:
        q = torch.randn(b, hq, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        k = torch.randn(b, hkv, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        v = torch.randn(b, hkv, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        kr, vr = k.repeat_interleave(hq // hkv, 1).detach().requires_grad_(), v.repeat_interleave(hq // hkv, 1).detach().requires_grad_()
        fwd_flops = 4 * b * hq * s * s * d / 2
        for name, backend in backends.items():
            row = {"batch": b, "heads": hq, "kv_heads": hkv, "seq": s, "head_dim": d, "backend": name}
            try:
                with sdpa_kernel(backend):
                    fwd = lambda: F.scaled_dot_product_attention(q, kr, vr, is_causal=True)
                    o = fwd()
                    g = torch.randn_like(o)
                    both = lambda: torch.autograd.grad(F.scaled_dot_product_attention(q, kr, vr, is_causal=True), (q, kr, vr), g)
                    both()
                    t_f = cuda_time(fwd, 10)
                    t_fb = cuda_time(both, 10)
                row.update(forward_s=t_f, forward_backward_s=t_fb, forward_tflops=fwd_flops / t_f / 1e12,
                           backward_tflops=2.5 * fwd_flops / (t_fb - t_f) / 1e12)
            except Exception as e:  # backend not available for this shape or build
                row["error"] = str(e).splitlines()[0][:200]
            results["attention"].append(row)
        del q, k, v, kr, vr
        torch.cuda.empty_cache()


def launch_overhead(results):
    x = torch.zeros(1, device="cuda")
    n = 20000
    for _ in range(1000):
        x.add_(1)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        x.add_(1)
    torch.cuda.synchronize()
    eager = (time.perf_counter() - t0) / n
    # The same n ops captured once into a CUDA graph and replayed: the GPU time per op without host launches.
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(10):
            x.add_(1)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(1000):
            x.add_(1)
    graph.replay()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n // 1000):
        graph.replay()
    torch.cuda.synchronize()
    graphed = (time.perf_counter() - t0) / n
    results["launch"] = {"eager_s_per_op": eager, "cuda_graph_s_per_op": graphed, "ops": n,
                         "op": "x.add_(1) on a 1-element fp32 tensor, issued back to back from Python"}


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    results = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda,
               "cudnn": torch.backends.cudnn.version(), "python": platform.python_version(),
               "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "attention": []}
    launch_overhead(results)
    attention(results)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
