#!/usr/bin/env python3
"""The rate of torch's grouped_mm as transformers 5.x calls it for MoE experts (input (S, K) sorted by expert, the
expert weights (E, N, K) transposed, int32 offsets), against one dense GEMM of the same total shape, in bf16 and in
fp32, forward alone and forward + backward with and without the weights' gradient (full fine-tuning vs LoRA over
frozen experts), at Mixtral-8x7B and Qwen3-30B-A3B expert shapes and a range of tokens per expert. Balanced routing.

Prints one JSON document (stdout). Run: python3 grouped_mm_rate.py > grouped_mm_rate.json
"""
import json

import torch

import run_corpus as rc  # same folder: provenance

SHAPES = (  # name, experts, K (input), N (output): gate+up, then down
    ("mixtral-gate_up", 8, 4096, 2 * 14336), ("mixtral-down", 8, 14336, 4096),
    ("qwen3moe-gate_up", 128, 2048, 2 * 768), ("qwen3moe-down", 128, 768, 2048),
)
TOKENS_PER_EXPERT = (64, 256, 1024)


def grouped_mm(x, w, offs):
    f = getattr(torch.nn.functional, "grouped_mm", None) or torch._grouped_mm
    return f(x, w.transpose(-2, -1), offs=offs)


def event_time(fn, reps=5):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) / 1e3)
    return sorted(times)[len(times) // 2]


def run(name, experts, k, n, per_expert, dtype):
    s = experts * per_expert
    x = torch.randn(s, k, device="cuda", dtype=dtype, requires_grad=True)
    w = torch.randn(experts, n, k, device="cuda", dtype=dtype) * 0.02
    offs = torch.arange(1, experts + 1, device="cuda", dtype=torch.int32) * per_expert
    dense_w = torch.randn(n, k, device="cuda", dtype=dtype) * 0.02
    g = torch.randn(s, n, device="cuda", dtype=dtype)
    flops = 2.0 * s * k * n
    row = {"shape": name, "experts": experts, "k": k, "n": n, "tokens_per_expert": per_expert, "dtype": str(dtype)}

    def fwd():
        with torch.no_grad():
            grouped_mm(x, w, offs)

    def fwd_bwd(weight_grad):
        w.requires_grad_(weight_grad)
        y = grouped_mm(x, w, offs)
        y.backward(g)
        x.grad = None
        w.grad = None

    row["forward_s"] = event_time(fwd)
    row["forward_bwd_input_s"] = event_time(lambda: fwd_bwd(False))
    row["forward_bwd_input_weight_s"] = event_time(lambda: fwd_bwd(True))
    row["dense_forward_s"] = event_time(lambda: torch.nn.functional.linear(x.detach(), dense_w))
    row["forward_tflops"] = flops / row["forward_s"] / 1e12
    row["dense_forward_tflops"] = flops / row["dense_forward_s"] / 1e12
    row["backward_input_tflops"] = flops / (row["forward_bwd_input_s"] - row["forward_s"]) / 1e12
    row["backward_input_weight_tflops"] = 2 * flops / (row["forward_bwd_input_weight_s"] - row["forward_s"]) / 1e12
    return row


def main():
    rows = []
    for dtype in (torch.bfloat16, torch.float32):
        for name, e, k, n in SHAPES:
            for t in TOKENS_PER_EXPERT:
                try:
                    rows.append(run(name, e, k, n, t, dtype))
                except Exception as ex:  # noqa: BLE001
                    rows.append({"shape": name, "tokens_per_expert": t, "dtype": str(dtype), "error": repr(ex)[:500]})
                torch.cuda.empty_cache()
    print(json.dumps({"provenance": rc.versions(), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
