#!/usr/bin/env python3
"""Times real training steps of a Llama-shaped decoder on one GPU with PyTorch, to check the step model end to
end where nothing is communicated: GEMMs, attention, the memory-bound ops an eager framework runs unfused, the
host's launch gaps and the optimizer.

1. Sustained GEMM: an 8192^3 bf16 matmul issued back to back for --gemm-seconds, TFLOP/s per second next to the
   SM clock and board power (nvidia-smi, 1 s samples): does the clock hold at full load or does the power
   limit pull it down?
2. Training steps: embedding, N decoder layers (RMSNorm, separate q/k/v/o projections, rotate-half RoPE, causal
   SDPA with GQA, SwiGLU MLP with separate gate/up/down, residual adds), final norm, LM head, cross-entropy,
   backward, AdamW (fused, fp32 master weights). Mixed precision as FSDP2 runs it: bf16 copies of the fp32
   master weights for compute (cast once per step), bf16 gradients accumulated into fp32. Each configuration
   runs with two depths, so the per-layer time (the slope) is separated from the embedding, head and
   optimizer (the intercept). One profiled step per configuration sums the GPU's kernel time by kind, so the
   wall time the GPU sat idle waiting for the host is measured, not inferred.

Prints one JSON document (stdout). Run: python3 torch_train_step.py > torch_train_step.json
"""
import argparse
import json
import platform
import subprocess
import threading
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from torch_microbench import cuda_events_time  # same folder


class PowerSampler:
    """nvidia-smi samples (SM clock MHz, power W, temperature C) once a second in a background thread."""

    def __init__(self):
        self.samples, self._stop = [], threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            try:
                out = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,power.draw,temperature.gpu",
                                      "--format=csv,noheader,nounits", "-i", "0"],
                                     capture_output=True, text=True, timeout=5).stdout.strip()
                clock, power, temp = (float(v) for v in out.split(","))
                self.samples.append({"t": time.time(), "sm_clock_mhz": clock, "power_w": power, "temp_c": temp})
            except Exception:
                pass
            self._stop.wait(1.0)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def sustained_gemm(seconds):
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    flops = 2 * n ** 3
    per_second = []
    with PowerSampler() as sampler:
        t_end = time.time() + seconds
        while time.time() < t_end:
            t = cuda_events_time(lambda: torch.matmul(a, b, out=c), 20)
            per_second.append({"t": time.time(), "tflops": flops / t / 1e12})
    first = per_second[:5]
    last = [p for p in per_second if p["t"] > per_second[-1]["t"] - 10]
    tail = [s for s in sampler.samples if s["t"] > per_second[-1]["t"] - 10]
    mean = lambda xs, k: sum(x[k] for x in xs) / max(1, len(xs))
    return {"shape": [n, n, n], "seconds": seconds, "first_tflops": mean(first, "tflops"),
            "last_10s_tflops": mean(last, "tflops"), "last_10s_sm_clock_mhz": mean(tail, "sm_clock_mhz"),
            "last_10s_power_w": mean(tail, "power_w"), "max_temp_c": max((s["temp_c"] for s in sampler.samples), default=None),
            "samples": sampler.samples, "tflops_series": [round(p["tflops"], 1) for p in per_second]}


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, hd = c.hidden, c.hidden // c.heads
        self.c, self.hd = c, hd
        self.attn_norm, self.mlp_norm = nn.RMSNorm(h, eps=1e-5), nn.RMSNorm(h, eps=1e-5)
        self.q = nn.Linear(h, c.heads * hd, bias=False)
        self.k = nn.Linear(h, c.kv_heads * hd, bias=False)
        self.v = nn.Linear(h, c.kv_heads * hd, bias=False)
        self.o = nn.Linear(c.heads * hd, h, bias=False)
        self.gate = nn.Linear(h, c.ffn, bias=False)
        self.up = nn.Linear(h, c.ffn, bias=False)
        self.down = nn.Linear(c.ffn, h, bias=False)

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        y = self.attn_norm(x)
        q = self.q(y).view(b, s, -1, self.hd).transpose(1, 2)
        k = self.k(y).view(b, s, -1, self.hd).transpose(1, 2)
        v = self.v(y).view(b, s, -1, self.hd).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, s, -1))
        y = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(y)) * self.up(y))


class Decoder(nn.Module):
    def __init__(self, c, layers):
        super().__init__()
        self.embed = nn.Embedding(c.vocab, c.hidden)
        self.layers = nn.ModuleList(Layer(c) for _ in range(layers))
        self.norm = nn.RMSNorm(c.hidden, eps=1e-5)
        self.head = nn.Linear(c.hidden, c.vocab, bias=False)
        self.checkpoint = False

    def forward(self, tokens, cos, sin):
        x = self.embed(tokens)
        for layer in self.layers:
            if self.checkpoint:
                x = torch.utils.checkpoint.checkpoint(layer, x, cos, sin, use_reentrant=False)
            else:
                x = layer(x, cos, sin)
        return self.head(self.norm(x))


def rope_tables(c, device):
    hd = c.hidden // c.heads
    inv = 1.0 / (500000.0 ** (torch.arange(0, hd, 2, device=device, dtype=torch.float32) / hd))
    ang = torch.outer(torch.arange(c.seq, device=device, dtype=torch.float32), inv)
    emb = torch.cat((ang, ang), dim=-1)
    return emb.cos().to(torch.bfloat16)[None, None], emb.sin().to(torch.bfloat16)[None, None]


def kernel_kind(name):
    n = name.lower()
    if any(s in n for s in ("flash", "fmha", "cudnn", "attention", "sdpa")):
        return "attention"
    if any(s in n for s in ("gemm", "nvjet", "xmma", "cutlass", "matmul", "sm90_", "sm80_")):
        return "gemm"
    if any(s in n for s in ("adam", "multi_tensor", "foreach")):
        return "optimizer"
    return "other"


def run_config(c, layers, compiled, checkpoint, steps):
    torch.manual_seed(0)
    master = Decoder(c, layers).cuda()                       # fp32 master weights, the optimizer's
    model = Decoder(c, layers).cuda().to(torch.bfloat16)     # bf16 compute copy (FSDP2's param_dtype)
    model.checkpoint = checkpoint
    mp, cp = list(master.parameters()), list(model.parameters())
    for p in mp:
        p.grad = torch.zeros_like(p)
    opt = torch.optim.AdamW(mp, lr=1e-5, fused=True)
    fwd = torch.compile(model) if compiled else model
    tokens = torch.randint(0, c.vocab, (c.batch, c.seq), device="cuda")
    labels = torch.randint(0, c.vocab, (c.batch, c.seq), device="cuda")
    cos, sin = rope_tables(c, "cuda")

    def step():
        with torch.no_grad():
            torch._foreach_copy_(cp, mp)                    # cast fp32 master -> bf16 compute weights
        logits = fwd(tokens, cos, sin)
        loss = F.cross_entropy(logits.view(-1, c.vocab).float(), labels.view(-1))
        loss.backward()
        with torch.no_grad():
            torch._foreach_add_([p.grad for p in mp], [q.grad for q in cp])  # bf16 grads into fp32
        for q in cp:
            q.grad = None
        opt.step()
        opt.zero_grad(set_to_none=False)

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    blocks = []  # mean step time per block of 10 steps: does the clock (power limit) pull later steps down?
    with PowerSampler() as sampler:
        t0 = time.perf_counter()
        for i in range(0, steps, 10):
            tb = time.perf_counter()
            for _ in range(min(10, steps - i)):
                step()
            torch.cuda.synchronize()
            blocks.append((time.perf_counter() - tb) / min(10, steps - i))
        wall = (time.perf_counter() - t0) / steps
    busy = [s for s in sampler.samples[1:]]
    row = {"layers": layers, "compiled": compiled, "checkpoint": checkpoint, "step_s": wall,
           "block_step_s": blocks, "sm_clock_mhz": [s["sm_clock_mhz"] for s in busy], "power_w": [s["power_w"] for s in busy],
           "max_allocated_gib": torch.cuda.max_memory_allocated() / 2 ** 30,
           "max_reserved_gib": torch.cuda.max_memory_reserved() / 2 ** 30,
           "params": sum(p.numel() for p in mp)}
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        t1 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        prof_wall = time.perf_counter() - t1
    kinds, kernels = {}, 0
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA and e.device_time > 0:
            k = kernel_kind(e.name)
            kinds[k] = kinds.get(k, 0.0) + e.device_time / 1e6
            kernels += 1
    row.update(profiled_wall_s=prof_wall, kernel_s=kinds, kernel_total_s=sum(kinds.values()), kernels=kernels)
    del master, model, opt, fwd
    torch.cuda.empty_cache()
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--ffn", type=int, default=14336)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--kv-heads", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=128256)
    ap.add_argument("--seq", type=int, default=8192)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--depths", default="2,4")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--gemm-seconds", type=int, default=0)
    ap.add_argument("--variants", default="eager,compiled,eager+checkpoint")
    c = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    out = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda,
           "cudnn": torch.backends.cudnn.version(), "python": platform.python_version(),
           "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "model": {k: getattr(c, k) for k in ("hidden", "ffn", "heads", "kv_heads", "vocab", "seq", "batch")},
           "runs": []}
    if c.gemm_seconds:
        out["sustained_gemm"] = sustained_gemm(c.gemm_seconds)
    for variant in c.variants.split(","):
        for layers in (int(d) for d in c.depths.split(",")):
            try:
                row = run_config(c, layers, "compiled" in variant, "checkpoint" in variant, c.steps)
            except Exception as e:
                row = {"layers": layers, "error": str(e).splitlines()[0][:300]}
                torch.cuda.empty_cache()
            row["variant"] = variant
            out["runs"].append(row)
            print(json.dumps(row), flush=True, file=__import__("sys").stderr)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
