#!/usr/bin/env python3
"""A hand-written PyTorch decoder as ../shared/reference/h100_single_gpu_runs.json's "h100-torch-dense-*" cases
describe it (RMSNorm, fused QKV projection, SDPA causal attention with GQA, gated SiLU or plain GELU MLP, untied LM
head, fp32 parameters under autocast bf16, loss as logits.float() + cross_entropy, fused AdamW, zero_grad to None,
per-block torch.utils.checkpoint when recompute is full), timed with and without rotary position embeddings
(rotate_half in the activations' dtype) to tell which one those cases ran, and one step profiled per kernel kind.

Prints one JSON document (stdout). Run: python3 torch_decoder.py SHAPE[,SHAPE...] where SHAPE is
gpt-1.3b-s2048-b4-none, llama-1b-s2048-b4-none, ... (see SHAPES).
"""
import json
import sys

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

import kernel_times as kt
import run_corpus as rc

SHAPES = {  # layers, hidden, heads, kv heads, ffn, activation, vocab: the cases' model sections
    "gpt-1.3b": (24, 2048, 16, 16, 8192, "gelu", 50304),
    "llama-1b": (16, 2048, 32, 8, 8192, "silu", 128256),
    "llama-3b": (28, 3072, 24, 8, 8192, "silu", 128256),
}


def rotate(x, cos, sin):
    half = x.shape[-1] // 2
    return x * cos + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * sin


class Block(torch.nn.Module):
    def __init__(self, h, heads, kv, ffn, act):
        super().__init__()
        self.heads, self.kv, self.d, self.act = heads, kv, h // heads, act
        self.n1, self.n2 = torch.nn.RMSNorm(h), torch.nn.RMSNorm(h)
        self.qkv = torch.nn.Linear(h, (heads + 2 * kv) * self.d, bias=False)
        self.out = torch.nn.Linear(h, h, bias=False)
        self.up = torch.nn.Linear(h, 2 * ffn if act == "silu" else ffn, bias=False)
        self.down = torch.nn.Linear(ffn, h, bias=False)

    def forward(self, x, rope):
        b, s, h = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, s, self.heads + 2 * self.kv, self.d).transpose(1, 2).split(
            [self.heads, self.kv, self.kv], dim=1)
        if rope is not None:
            q, k = rotate(q, *rope), rotate(k, *rope)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=self.kv != self.heads)
        x = x + self.out(a.transpose(1, 2).reshape(b, s, h))
        u = self.up(self.n2(x))
        if self.act == "silu":
            g, u = u.chunk(2, dim=-1)
            u = F.silu(g) * u
        else:
            u = F.gelu(u)
        return x + self.down(u)


class Decoder(torch.nn.Module):
    def __init__(self, shape, rope):
        super().__init__()
        layers, h, heads, kv, ffn, act, vocab = shape
        self.embed = torch.nn.Embedding(vocab, h)
        self.blocks = torch.nn.ModuleList(Block(h, heads, kv, ffn, act) for _ in range(layers))
        self.norm, self.head = torch.nn.RMSNorm(h), torch.nn.Linear(h, vocab, bias=False)
        self.rope, self.d, self.recompute = rope, h // heads, False

    def forward(self, ids):
        x = self.embed(ids)
        rope = None
        if self.rope:
            pos = torch.arange(ids.shape[1], device=ids.device, dtype=torch.float32)
            inv = 1.0 / (10000 ** (torch.arange(0, self.d, 2, device=ids.device, dtype=torch.float32) / self.d))
            ang = torch.outer(pos, inv).repeat(1, 2)
            rope = (ang.cos().to(torch.bfloat16), ang.sin().to(torch.bfloat16))
        for blk in self.blocks:
            x = checkpoint(blk, x, rope, use_reentrant=False) if self.recompute else blk(x, rope)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.float()[:, :-1].reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))


def decoder_step(name, rope):
    """The decoder SHAPE-sSEQ-bBATCH-RECOMPUTE names on the GPU, its optimizer, and one training step of it."""
    model_name, rest = name.split("-s", 1)
    seq, mb, recompute = rest.split("-")
    seq, mb = int(seq), int(mb[1:])
    shape = SHAPES[model_name]
    with torch.device("cuda"):
        model = Decoder(shape, rope)
    model.recompute = recompute == "full"
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)

    def step():
        ids = rc.token_batch(mb, seq, shape[-1])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(ids)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return model, opt, step


def measure(name, rope):
    model, opt, step = decoder_step(name, rope)
    torch.cuda.reset_peak_memory_stats()
    wall = rc.median_wall(step, timed=6, warm=2)
    out = {"shape": name, "rope": rope, "wall_s": wall, "parameters": sum(p.numel() for p in model.parameters()),
           "peak_allocated_bytes": torch.cuda.max_memory_allocated(), **kt.profile_step(step)}
    out["top_kernels"] = out["top_kernels"][:15]
    del model, opt
    torch.cuda.empty_cache()
    return out


def main():
    rows = []
    for name in sys.argv[1].split(","):
        for rope in (False, True):
            row = measure(name, rope)
            print(name, "rope" if rope else "no rope", row["wall_s"], row["gpu_s"], file=sys.stderr, flush=True)
            rows.append(row)
    json.dump({"provenance": rc.versions(), "runs": rows}, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
