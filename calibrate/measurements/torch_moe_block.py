#!/usr/bin/env python3
"""Measures, with PyTorch on one GPU, what a Mixture-of-Experts block costs when an eager framework runs its
experts as a Python loop, against one grouped GEMM per projection (what Megatron-Core's grouped GEMM does), and
what a framework pays per collective it issues from Python.

Shapes: Qwen3-30B-A3B (hidden 2048, 128 experts of inner size 768, top-8, router softmax then top-k
renormalised), one micro-batch of `tokens` tokens, bf16, every expert on this GPU (data parallel only, as the
Hugging Face Trainer runs it).

Variants of the MoE block, each forward and forward+backward:
- `loop`: the per-expert loop of transformers 4.x (Qwen3MoeSparseMoeBlock): experts as a ModuleList of
  gate/up/down nn.Linear; per expert that received tokens, torch.where on its routing mask (a data-dependent
  size, so a device-to-host sync), index the hidden states, three GEMMs, scale by the routing weight,
  index_add_ the result back.
- `hf-<impl>`: the installed transformers' own Qwen3MoeSparseMoeBlock, for each experts implementation it offers.
- `grouped`: tokens sorted by expert once, then one torch._grouped_mm per projection.
- `loop+hooks`: `loop` with a ZeRO-3-style fetch issued from Python module hooks on every expert Linear: one
  all_gather_into_tensor before each Linear's forward (again before its backward) and one reduce_scatter_tensor
  of its weight gradient, on a one-rank NCCL group (so the bytes move locally and the figure is the host's cost
  per module and call, a floor for DeepSpeed's own bookkeeping).

Each variant reports wall time per call (median of repeats), and from one profiled call the number of CUDA
kernels, their summed GPU time and the number of device-to-host synchronisations.

Prints one JSON document (stdout). Run: python3 torch_moe_block.py > torch_moe_block.json
"""
import argparse
import inspect
import json
import os
import platform
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def wall(fn, iters, repeats=5):
    """Median over `repeats` of the mean wall time of `iters` calls, the GPU drained before and after (s)."""
    out = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
        out.append((time.perf_counter() - t0) / iters)
    return statistics.median(out)


def profile(fn):
    """Kernels launched, their summed GPU time (s) and device-to-host syncs of one call of fn."""
    from torch.profiler import ProfilerActivity, profile as tprofile
    fn()
    torch.cuda.synchronize()
    with tprofile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    kernels, kernel_us, syncs = 0, 0.0, 0
    for e in prof.events():
        dev = str(getattr(e, "device_type", ""))
        if dev.endswith("CUDA") and not e.name.startswith("Memcpy") and not e.name.startswith("Memset"):
            kernels += 1
            kernel_us += e.time_range.elapsed_us()
        elif e.name in ("cudaStreamSynchronize", "cudaDeviceSynchronize"):
            syncs += 1
    return {"kernels": kernels, "kernel_time_s": kernel_us / 1e6, "syncs": syncs - 1}  # less the closing sync


class Expert(nn.Module):
    def __init__(self, hidden, inner):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, inner, bias=False)
        self.up_proj = nn.Linear(hidden, inner, bias=False)
        self.down_proj = nn.Linear(inner, hidden, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


def route(gate, x, topk):
    """Router: softmax in fp32, top-k, renormalised (Qwen3-MoE norm_topk_prob)."""
    logits = gate(x)
    probs = F.softmax(logits, dim=-1, dtype=torch.float)
    weights, selected = torch.topk(probs, topk, dim=-1)
    weights = (weights / weights.sum(dim=-1, keepdim=True)).to(x.dtype)
    return weights, selected


class LoopMoe(nn.Module):
    def __init__(self, hidden, inner, experts, topk):
        super().__init__()
        self.topk, self.num_experts = topk, experts
        self.gate = nn.Linear(hidden, experts, bias=False)
        self.experts = nn.ModuleList(Expert(hidden, inner) for _ in range(experts))

    def forward(self, x):
        weights, selected = route(self.gate, x, self.topk)
        out = torch.zeros_like(x)
        mask = F.one_hot(selected, num_classes=self.num_experts).permute(2, 1, 0)  # expert, slot, token
        hit = torch.greater(mask.sum(dim=(-1, -2)), 0).nonzero()
        for e in hit:
            slot, token = torch.where(mask[e].squeeze(0))
            y = self.experts[e](x[token]) * weights[token, slot, None]
            out.index_add_(0, token, y.to(x.dtype))
        return out


class GroupedMoe(nn.Module):
    def __init__(self, hidden, inner, experts, topk):
        super().__init__()
        self.topk, self.num_experts = topk, experts
        self.gate = nn.Linear(hidden, experts, bias=False)
        s = hidden ** -0.5
        self.w_gate = nn.Parameter(torch.randn(experts, hidden, inner) * s)
        self.w_up = nn.Parameter(torch.randn(experts, hidden, inner) * s)
        self.w_down = nn.Parameter(torch.randn(experts, inner, hidden) * inner ** -0.5)

    def forward(self, x):
        weights, selected = route(self.gate, x, self.topk)
        flat = selected.reshape(-1)
        order = flat.argsort()
        token = order // self.topk
        counts = torch.bincount(flat, minlength=self.num_experts)
        offs = counts.cumsum(0).to(torch.int32)
        xs = x[token]
        g = torch._grouped_mm(xs, self.w_gate, offs=offs)
        u = torch._grouped_mm(xs, self.w_up, offs=offs)
        y = torch._grouped_mm(F.silu(g) * u, self.w_down, offs=offs)
        y = y * weights.reshape(-1)[order, None]
        return torch.zeros_like(x).index_add_(0, token, y.to(x.dtype))


def add_zero3_hooks(model, shards):
    """ZeRO-3-style fetch per expert Linear from Python hooks on a one-rank group: gather before forward and
    before backward, reduce-scatter the weight gradient after it is accumulated."""
    import torch.distributed as dist
    handles = []
    for mod in model.modules():
        if not isinstance(mod, nn.Linear) or mod is getattr(model, "gate", None):
            continue
        n = mod.weight.numel()
        shard = torch.empty(n // shards, device="cuda", dtype=mod.weight.dtype)
        full = torch.empty(n // shards, device="cuda", dtype=mod.weight.dtype)

        def fetch(*_args, shard=shard, full=full):
            dist.all_gather_into_tensor(full, shard)

        def release(param, shard=shard, full=full):
            dist.reduce_scatter_tensor(shard, full)

        handles.append(mod.register_forward_pre_hook(lambda m, a, f=fetch: f()))
        handles.append(mod.register_full_backward_pre_hook(lambda m, g, f=fetch: f()))
        handles.append(mod.weight.register_post_accumulate_grad_hook(release))
    return handles


def hf_blocks(hidden, inner, experts, topk):
    """The installed transformers' Qwen3-MoE block, once per experts implementation it offers."""
    out = {}
    try:
        import transformers
        from transformers import Qwen3MoeConfig
        from transformers.models.qwen3_moe import modeling_qwen3_moe as mq
    except Exception as e:  # noqa: BLE001
        return {"error": repr(e)}, {}
    info = {"transformers": transformers.__version__}
    try:
        info["block_source"] = inspect.getsource(mq.Qwen3MoeSparseMoeBlock)[:6000]
        experts_cls = getattr(mq, "Qwen3MoeExperts", None)
        if experts_cls is not None:
            info["experts_source"] = inspect.getsource(experts_cls)[:6000]
    except Exception as e:  # noqa: BLE001
        info["source_error"] = repr(e)
    for impl in ("eager", "grouped_mm", "batched_mm"):
        try:
            cfg = Qwen3MoeConfig(hidden_size=hidden, moe_intermediate_size=inner, num_experts=experts,
                                 num_experts_per_tok=topk, norm_topk_prob=True, num_hidden_layers=1)
            for attr in ("_experts_implementation", "experts_implementation"):
                try:
                    setattr(cfg, attr, impl)
                except Exception:  # noqa: BLE001
                    pass
            block = mq.Qwen3MoeSparseMoeBlock(cfg).to(device="cuda", dtype=torch.bfloat16)
            for p in block.parameters():
                nn.init.normal_(p, std=hidden ** -0.5)
            out["hf-" + impl] = block
        except Exception as e:  # noqa: BLE001
            info["error_" + impl] = repr(e)
    return info, out


def block_call(block):
    """transformers' block may return (hidden, router_logits) and expects (batch, seq, hidden)."""
    def run(x):
        y = block(x.unsqueeze(0))
        return (y[0] if isinstance(y, tuple) else y).squeeze(0)
    return run


def measure(name, fwd, x, iters):
    row = {"variant": name}
    try:
        with torch.no_grad():
            fwd(x)
        g = torch.randn_like(x)

        def both():
            y = fwd(x)
            y.backward(g)
        both()
        row["forward_s"] = wall(lambda: fwd(x), iters)
        row["forward_backward_s"] = wall(both, iters)
        row["forward_profile"] = profile(lambda: fwd(x))
        row["forward_backward_profile"] = profile(both)
    except Exception as e:  # noqa: BLE001
        row["error"] = repr(e)
    return row


def cpu_table(fn, rows=18):
    """The host-side ops of one call of fn that take the most CPU time (self), as the profiler's table."""
    from torch.profiler import ProfilerActivity, profile as tprofile
    fn()
    torch.cuda.synchronize()
    with tprofile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=rows)


def dense_host_probe(results, iters=20):
    """Host time per kernel of ordinary eager module code with autograd: a small Llama model from the installed
    transformers (hidden 256, 2 layers, 128 tokens) whose kernels are far shorter than their launches, so the
    step runs at the host's pace; wall time over the profiled kernel count, forward and backward apart."""
    try:
        from transformers import LlamaConfig, LlamaForCausalLM
    except Exception as e:  # noqa: BLE001
        results["dense_host_probe"] = {"error": repr(e)}
        return
    rows = []
    for attn in ("sdpa", "eager"):
        try:
            cfg = LlamaConfig(hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4,
                              num_key_value_heads=2, vocab_size=1024, max_position_embeddings=256)
            cfg._attn_implementation = attn
            model = LlamaForCausalLM(cfg).to(device="cuda", dtype=torch.bfloat16)
            ids = torch.randint(0, 1024, (1, 128), device="cuda")
            fwd = lambda: model(input_ids=ids, labels=ids).loss
            both = lambda: fwd().backward()
            row = {"attn_implementation": attn, "forward_s": wall(fwd, iters), "forward_backward_s": wall(both, iters),
                   "forward_profile": profile(fwd), "forward_backward_profile": profile(both)}
            f, fb = row["forward_profile"], row["forward_backward_profile"]
            row["host_per_kernel_forward_s"] = row["forward_s"] / f["kernels"]
            row["host_per_kernel_backward_s"] = (row["forward_backward_s"] - row["forward_s"]) / (fb["kernels"] - f["kernels"])
            rows.append(row)
        except Exception as e:  # noqa: BLE001
            rows.append({"attn_implementation": attn, "error": repr(e)})
    results["dense_host_probe"] = rows


def collective_calls(results, iters=500):
    """Host cost per NCCL call issued from Python on a one-rank group."""
    import torch.distributed as dist
    rows = []
    for elements in (1 << 10, 1 << 20):
        a = torch.empty(elements, device="cuda", dtype=torch.bfloat16)
        b = torch.empty(elements, device="cuda", dtype=torch.bfloat16)
        for op, fn in (("all_gather_into_tensor", lambda: dist.all_gather_into_tensor(b, a)),
                       ("reduce_scatter_tensor", lambda: dist.reduce_scatter_tensor(a, b)),
                       ("all_reduce", lambda: dist.all_reduce(a))):
            fn()
            rows.append({"op": op, "elements": elements, "wall_per_call_s": wall(fn, iters)})
    results["collective_calls"] = rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", default="2048,8192")
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--inner", type=int, default=768)
    ap.add_argument("--experts", type=int, default=128)
    ap.add_argument("--topk", type=int, default=8)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--only-loop", action="store_true", help="the loop variant alone, with its host-side op table")
    args = ap.parse_args()

    import torch.distributed as dist
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda:0"))

    torch.manual_seed(0)
    results = {
        "device": torch.cuda.get_device_name(0), "torch": torch.__version__, "python": platform.python_version(),
        "shape": {"hidden": args.hidden, "inner": args.inner, "experts": args.experts, "topk": args.topk},
        "rows": [], "allocator_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
    }
    if args.only_loop:
        loop = LoopMoe(args.hidden, args.inner, args.experts, args.topk).to(device="cuda", dtype=torch.bfloat16)
        for tokens in (int(t) for t in args.tokens.split(",")):
            x = (torch.randn(tokens, args.hidden, device="cuda", dtype=torch.bfloat16)).requires_grad_()
            row = measure("loop", loop, x, args.iters)
            row["tokens"] = tokens
            row["forward_cpu_table"] = cpu_table(lambda: loop(x))
            results["rows"].append(row)
        dist.destroy_process_group()
        print(json.dumps(results, indent=1))
        return
    dense_host_probe(results)
    collective_calls(results)
    info, hf = hf_blocks(args.hidden, args.inner, args.experts, args.topk)
    results["transformers"] = info
    loop = LoopMoe(args.hidden, args.inner, args.experts, args.topk).to(device="cuda", dtype=torch.bfloat16)
    grouped = GroupedMoe(args.hidden, args.inner, args.experts, args.topk).to(device="cuda", dtype=torch.bfloat16)
    for tokens in (int(t) for t in args.tokens.split(",")):
        x = (torch.randn(tokens, args.hidden, device="cuda", dtype=torch.bfloat16)).requires_grad_()
        variants = [("loop", loop), ("grouped", grouped)] + [(k, block_call(v)) for k, v in hf.items()]
        for name, fn in variants:
            row = measure(name, fn, x, args.iters)
            row["tokens"] = tokens
            results["rows"].append(row)
            print(json.dumps(row), flush=True, file=__import__("sys").stderr)
        handles = add_zero3_hooks(loop, shards=16)
        row = measure("loop+hooks", loop, x, args.iters)
        row["tokens"] = tokens
        results["rows"].append(row)
        print(json.dumps(row), flush=True, file=__import__("sys").stderr)
        for h in handles:
            h.remove()
    dist.destroy_process_group()
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
