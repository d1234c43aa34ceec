#!/usr/bin/env python3
"""Host time per optimizer step of the pieces a training loop adds around forward and backward, per parameter
tensor: torch.nn.utils.clip_grad_norm_ (as the HF Trainer calls it, through accelerate), the learning-rate
scheduler, zero_grad, and a .item() of the loss. A small Llama from transformers (hidden 512) at 12 and 48 layers
makes the step host-bound, so the slope over the parameter tensors is each piece's host cost per tensor.

Prints one JSON document (stdout). Run: python3 step_host_costs.py > step_host_costs.json
"""
import json

import torch

import run_corpus as rc  # same folder: the model builder


def case(layers):
    return {"model": {"model_type": "llama", "num_hidden_layers": layers, "hidden_size": 512, "num_attention_heads": 8,
                      "num_key_value_heads": 8, "intermediate_size": 1536, "vocab_size": 32000, "tie_word_embeddings": False,
                      "rms_norm_eps": 1e-5, "max_position_embeddings": 4096, "rope_theta": 10000.0, "hidden_act": "silu"},
            "training": {"mode": "sft", "seq_len": 512, "global_batch_size": 1, "recompute": "none"},
            "parallel": {"micro_batch_size": 1}, "harness": {"loop": "hf"}}


def variants(model):
    from accelerate import Accelerator
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-5, fused=True)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
    acc = Accelerator()
    ids = torch.randint(0, 32000, (1, 512), device="cuda")

    def fwd_bwd():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        return loss

    def plain():
        fwd_bwd()
        opt.step()
        opt.zero_grad(set_to_none=True)

    def clip_torch():
        fwd_bwd()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)

    def clip_accelerate():
        fwd_bwd()
        acc.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)

    def clip_item():
        fwd_bwd()
        n = torch.nn.utils.clip_grad_norm_(params, 1.0)
        n.item()
        opt.step()
        opt.zero_grad(set_to_none=True)

    def scheduler_and_model_zero_grad():
        fwd_bwd()
        opt.step()
        sched.step()
        model.zero_grad()

    return {"plain": plain, "clip_torch": clip_torch, "clip_accelerate": clip_accelerate, "clip_item": clip_item,
            "scheduler_and_model_zero_grad": scheduler_and_model_zero_grad}


def main():
    rows = {}
    tensors = {}
    for layers in (12, 48):
        model = rc.build_model(case(layers))
        tensors[layers] = sum(1 for p in model.parameters() if p.requires_grad)
        rows[layers] = {name: rc.median_wall(fn, timed=15, warm=3) for name, fn in variants(model).items()}
        del model
        torch.cuda.empty_cache()
    slope = {name: (rows[48][name] - rows[12][name]) / (tensors[48] - tensors[12]) for name in rows[12]}
    extra = {name: 1e6 * (slope[name] - slope["plain"]) for name in slope}
    print(json.dumps({"provenance": rc.versions(), "tensors": tensors, "step_s": rows,
                      "slope_s_per_tensor": slope, "extra_over_plain_us_per_tensor": extra}, indent=1))


if __name__ == "__main__":
    main()
