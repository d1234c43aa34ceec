#!/usr/bin/env python3
"""Where a host-bound plain step's time goes: the corpus's plain loop (run_corpus.py hf_step) cut into its phases,
each timed alone with the GPU synchronised around it (median of 10), with its kernels and their GPU time from one
profiled pass: forward (with the labels' loss), backward, optimizer.step (fused AdamW), zero_grad; and the whole
step as run_corpus.py times it.

Run on the GPU machine: python3 step_phases.py cases.json -o OUT.json --only ID[,ID]
"""
import argparse
import json

import torch

import run_corpus


def timed(fn):
    return run_corpus.median_wall(fn, timed=10, warm=2)


def profiled(fn):
    gpu_s, kernels = run_corpus.kernel_time(fn)
    return kernels, gpu_s


def phases(case):
    model = run_corpus.build_model(case)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-5, fused=True)
    tr, par = case["training"], case["parallel"]
    mb, seq, vocab = par["micro_batch_size"], tr["seq_len"], case["model"]["vocab_size"]
    ids = run_corpus.token_batch(mb, seq, vocab)
    state = {}

    def forward():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            state["loss"] = model(input_ids=ids, labels=ids).loss

    def backward():
        state["loss"].backward()

    def forward_backward():
        forward()
        backward()

    def step():
        opt.step()

    def zero():
        opt.zero_grad(set_to_none=True)

    whole = run_corpus.hf_step(case, model, opt)
    out = {"id": case["id"], "parameter_tensors": len(params)}
    out["forward_s"] = timed(forward)
    out["forward_backward_s"] = timed(forward_backward)  # gradients accumulate: the same kernels
    out["forward_backward_zero_grad_s"] = timed(lambda: (forward_backward(), zero()))
    forward_backward()
    out["optimizer_step_s"] = timed(step)
    out["whole_step_s"] = timed(whole)
    for name, fn in (("forward", forward), ("forward_backward", lambda: (forward_backward(), zero())), ("optimizer_step", step),
                     ("whole_step", whole)):
        if name == "optimizer_step":
            forward_backward()
        out[name + "_kernels"], out[name + "_gpu_s"] = profiled(fn)
    del model, opt
    torch.cuda.empty_cache()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--only", required=True)
    args = ap.parse_args()
    doc = json.load(open(args.cases))
    cases = {c["id"]: c for c in (doc["cases"] if isinstance(doc, dict) else doc)}
    rows = []
    for cid in args.only.split(","):
        r = phases(cases[cid])
        rows.append(r)
        print(json.dumps({k: (round(v, 5) if isinstance(v, float) else v) for k, v in r.items()}), flush=True)
        with open(args.output, "w") as f:
            json.dump({"description": __doc__.split("\n\n")[0], "versions": run_corpus.versions(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
