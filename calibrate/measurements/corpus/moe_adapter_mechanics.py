#!/usr/bin/env python3
"""How peft's LoRA meets transformers 5.x MoE experts, and how many experts a step's routing reaches.

1. LoRA over a Mixtral case (all-linear, as run_corpus.py builds it): which modules peft wrapped, the adapter
   shapes and trainable counts per kind of module, the wrapper's forward source, and the step's GPU time by kernel
   kind with the default targets against adapters on the attention and router alone (experts frozen).
2. A Qwen3-MoE case under eager experts: the experts module's parameters, its forward source, and the experts each
   layer's routing hit in one forward (a hook on the experts module reads top_k_index).

Prints one JSON document (stdout). Run: python3 moe_adapter_mechanics.py cases.json LORA_ID EAGER_ID > out.json
"""
import copy
import inspect
import json
import sys

import torch

import kernel_times as kt  # same folder: the per-kind profile
import run_corpus as rc  # same folder: the model builder and the loop


def source(obj, limit=6000):
    try:
        return inspect.getsource(obj)[:limit]
    except Exception as e:  # noqa: BLE001
        return repr(e)


def adapters(model):
    rows = {}
    for name, mod in model.named_modules():
        if hasattr(mod, "lora_A") and len(getattr(mod, "lora_A", {})):
            a = next(iter(mod.lora_A.values()))
            b = next(iter(mod.lora_B.values()))
            key = type(mod).__name__ + ":" + name.split(".")[-1]
            row = rows.setdefault(key, {"count": 0, "lora_A": None, "lora_B": None, "trainable": 0, "example": name})
            row["count"] += 1
            wa = a.weight if hasattr(a, "weight") else a
            wb = b.weight if hasattr(b, "weight") else b
            row["lora_A"], row["lora_B"] = list(wa.shape), list(wb.shape)
            row["trainable"] += wa.numel() + wb.numel()
            row["parameter_name"] = getattr(mod, "parameter_name", None)
    return rows


def step_profile(case, model):
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5, fused=True)
    step = rc.hf_step(case, model, opt)
    wall = rc.median_wall(step, timed=3, warm=2)
    prof = kt.profile_step(step)
    prof["top_kernels"] = prof["top_kernels"][:12]
    return {"wall_s": wall, **prof, "trainable": sum(p.numel() for p in model.parameters() if p.requires_grad)}


def lora_part(case):
    out = {}
    model = rc.build_model(case)
    out["adapters"] = adapters(model)
    wrappers = {type(m) for _, m in model.named_modules() if hasattr(m, "lora_A") and hasattr(m, "parameter_name")}
    out["wrapper_sources"] = {t.__name__: {n: source(getattr(t, n)) for n in ("forward", "get_delta_weight", "_activate_lora")
                                           if hasattr(t, n)} for t in wrappers}
    out["default_targets"] = step_profile(case, model)
    del model
    torch.cuda.empty_cache()
    # Adapters on the attention projections and the router only: peft target_modules as an explicit list.
    import peft
    original = peft.LoraConfig

    def narrow(*a, **kw):
        kw["target_modules"] = ["q_proj", "k_proj", "v_proj", "o_proj", "gate"]
        return original(*a, **kw)
    peft.LoraConfig = narrow
    try:
        model = rc.build_model(case)
        out["attention_router_targets"] = {"adapters": adapters(model), **step_profile(case, model)}
    finally:
        peft.LoraConfig = original
    del model
    torch.cuda.empty_cache()
    return out


def eager_part(case):
    out = {}
    model = rc.build_model(case)
    experts = [(n, m) for n, m in model.named_modules() if type(m).__name__.endswith("Experts")]
    if experts:
        n, m = experts[0]
        out["experts_class"] = type(m).__name__
        out["experts_parameters"] = {k: list(p.shape) for k, p in m.named_parameters(recurse=False)}
        out["experts_forward"] = source(type(m).forward)
    hits = []

    def hook(mod, args, kwargs):
        idx = kwargs.get("top_k_index", args[1] if len(args) > 1 else None)
        if idx is not None:
            hits.append(int(torch.unique(idx).numel()))
    handles = [m.register_forward_pre_hook(hook, with_kwargs=True) for _, m in experts]
    tr, par = case["training"], case["parallel"]
    ids = torch.randint(0, case["model"]["vocab_size"], (par["micro_batch_size"], tr["seq_len"]), device="cuda")
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        model(input_ids=ids)
    for h in handles:
        h.remove()
    out["experts_hit_per_layer"] = hits
    del model
    torch.cuda.empty_cache()
    return out


def main():
    cases = {c["id"]: c for c in json.load(open(sys.argv[1]))["cases"]}
    out = {"provenance": rc.versions()}
    for key, fn, cid in (("lora", lora_part, sys.argv[2]), ("eager", eager_part, sys.argv[3])):
        try:
            out[key] = fn(copy.deepcopy(cases[cid]))
        except Exception:  # noqa: BLE001
            import traceback
            out[key] = {"error": traceback.format_exc()[-3000:]}
        print(key, "done", file=sys.stderr, flush=True)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
