#!/usr/bin/env python3
"""Where transformers.Trainer spends host time per optimizer step beyond a plain loop over the same model: the
profiler's host-op table (self CPU time) for 8 steps of each, on a small Llama (48 layers of hidden 512) whose
step is host-bound.

Prints one JSON document (stdout). Run: python3 trainer_host_profile.py > trainer_host_profile.json
"""
import json
import time

import torch
from torch.profiler import ProfilerActivity, profile

import run_corpus as rc  # same folder: the model builder and the Trainer's dataset

STEPS = 8


def case():
    return {"model": {"model_type": "llama", "num_hidden_layers": 48, "hidden_size": 512, "num_attention_heads": 8,
                      "num_key_value_heads": 8, "intermediate_size": 1536, "vocab_size": 32000, "tie_word_embeddings": False,
                      "rms_norm_eps": 1e-5, "max_position_embeddings": 4096, "rope_theta": 10000.0, "hidden_act": "silu"},
            "training": {"mode": "sft", "seq_len": 512, "global_batch_size": 1, "recompute": "none"},
            "parallel": {"micro_batch_size": 1}, "harness": {"loop": "hf"}}


def table(prof):
    return prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=30)


def plain():
    c = case()
    model = rc.build_model(c)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5, fused=True)
    step = rc.hf_step(c, model, opt)
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(STEPS):
            step()
        torch.cuda.synchronize()
    return {"wall_per_step_s": (time.perf_counter() - t0) / STEPS, "table": table(prof)}


def trainer():
    from transformers import Trainer, TrainerCallback, TrainingArguments
    c = case()
    model = rc.build_model(c)
    holder = {}

    class Window(TrainerCallback):
        def on_step_end(self, args, state, control, **kw):
            if state.global_step == 3:
                torch.cuda.synchronize()
                holder["t0"] = time.perf_counter()
                holder["prof"] = profile(activities=[ProfilerActivity.CPU])
                holder["prof"].__enter__()
            if state.global_step == 3 + STEPS:
                torch.cuda.synchronize()
                holder["prof"].__exit__(None, None, None)
                holder["wall"] = (time.perf_counter() - holder["t0"]) / STEPS

    args = TrainingArguments(output_dir="/tmp/trainsim-trainer-profile", per_device_train_batch_size=1, max_steps=4 + STEPS,
                             bf16=True, save_strategy="no", report_to="none", disable_tqdm=True, logging_steps=500,
                             learning_rate=1e-5, dataloader_num_workers=0)
    data = rc.TokenRows(64, 512, 32000)
    Trainer(model=model, args=args, train_dataset=data, callbacks=[Window()]).train()
    return {"wall_per_step_s": holder["wall"], "table": table(holder["prof"]),
            "training_args": {k: str(v) for k, v in args.to_dict().items()
                              if k in ("optim", "max_grad_norm", "logging_nan_inf_filter", "average_tokens_across_devices",
                                       "include_num_input_tokens_seen", "torch_empty_cache_steps")}}


def main():
    out = {"provenance": rc.versions(), "plain": plain()}
    torch.cuda.empty_cache()
    out["trainer"] = trainer()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
