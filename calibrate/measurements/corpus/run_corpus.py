#!/usr/bin/env python3
"""Runs real training steps on one GPU, case by case, and writes what it measured as a reference file that
trainsim's accuracy run reads (the format of ../shared/reference/h100_single_gpu_runs.json).

Each case of the cases file is a trainsim scenario (model as a Hugging Face config, training, parallel, hardware)
plus a `harness` section saying which loop runs it:

  loop "hf"          transformers AutoModelForCausalLM.from_config (random weights, attention sdpa), parameters in
                     fp32 under torch.autocast(bf16), loss from the model's labels, torch.optim.AdamW(fused=True),
                     zero_grad(set_to_none=True); gradient accumulation as a loop over micro-batches with the loss
                     divided by their number; gradient_checkpointing_enable(use_reentrant=False) under full recompute.
                     With training.mode "lora": the model in bf16 and peft LoRA adapters (fp32) on all linear layers.
  loop "hf-trainer"  the same model under transformers.Trainer (bf16=True, its default optimizer, scheduler,
                     max_grad_norm 1.0, DataLoader, callbacks), timed from one optimizer step's end to the next.
  loop "hf-dpo"      DPO as TRL runs it: a frozen bf16 reference forward (no_grad) and the policy's forward and
                     backward over chosen and rejected sequences concatenated, sigmoid loss on summed log-probs.
  harness.routing    "uniform": each token to num_experts_per_tok distinct experts drawn uniformly (a trained
                     router's balance) instead of the random-weight router's top-k, which collapses onto few experts.
  training.framework {"preset": "transformers", "experts_implementation": "eager"} (trainsim's option of the
                     same name) picks transformers' experts implementation for MoE models; absent: the library's
                     default (grouped_mm in 5.x), reported in the output.

A step is one optimizer step; step_time_s is the median of the timed steps, wall time with the GPU synchronised at
each step's end. Memory is torch.cuda.max_memory_allocated / max_memory_reserved over the timed steps, after the
allocator's cache was emptied between cases. One profiled step sums the GPU's kernel time (gpu_kernel_time_s), so a
case says how much of its step the GPU sat waiting for the host.

Run: python3 run_corpus.py cases.json -o results/GPU-DATE.json [--only ID[,ID]] [--deadline SECONDS] [--fresh-process]
    [--remeasure PREFIX] [--skip-superseded results]
(--fresh-process: each case in a process of its own, as a training job runs; host-bound steps need it)
Writes the output after every case, so a run stopped early keeps what it measured.
"""
import argparse
import contextlib
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback

import torch
import torch.nn.functional as F

NOT_CONFIG_KEYS = {"name", "note", "norm_type", "model_type"}


def versions():
    out = {"python": platform.python_version(), "torch": torch.__version__, "cuda": torch.version.cuda,
           "cudnn": torch.backends.cudnn.version(), "platform": platform.platform()}
    for name in ("transformers", "peft", "accelerate"):
        try:
            out[name] = __import__(name).__version__
        except Exception:  # noqa: BLE001
            out[name] = None
    p = torch.cuda.get_device_properties(0)
    out["gpu"] = p.name
    out["sms"] = p.multi_processor_count
    out["gpu_memory_bytes"] = p.total_memory
    try:
        out["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,clocks.max.sm,power.limit",
                                        "--format=csv,noheader"], capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as e:  # noqa: BLE001
        out["driver"] = repr(e)
    out["PYTORCH_CUDA_ALLOC_CONF"] = os.environ.get("PYTORCH_CUDA_ALLOC_CONF")
    return out


def experts_implementation(case):
    """The experts implementation the case's training.framework names (one fact for trainsim and the harness)."""
    framework = case["training"].get("framework")
    return framework.get("experts_implementation") if isinstance(framework, dict) else None


def hf_config(case):
    from transformers import CONFIG_MAPPING
    model = case["model"]
    kwargs = {k: v for k, v in model.items() if k not in NOT_CONFIG_KEYS}
    cfg = CONFIG_MAPPING[model["model_type"]](**kwargs)
    cfg._attn_implementation = "sdpa"
    if experts_implementation(case):
        cfg._experts_implementation = experts_implementation(case)
    return cfg


def build_model(case):
    """The transformers model of the case on the GPU: fp32 for full training (autocast computes in bf16), bf16 with
    fp32 LoRA adapters for LoRA."""
    from transformers import AutoModelForCausalLM
    tr = case["training"]
    cfg = hf_config(case)
    lora = tr["mode"] == "lora"
    kwargs = {"dtype": torch.bfloat16 if lora else torch.float32}
    if experts_implementation(case):
        kwargs["experts_implementation"] = experts_implementation(case)
    with torch.device("cuda"):
        try:
            model = AutoModelForCausalLM.from_config(cfg, **kwargs)
        except TypeError:  # a release without the experts_implementation argument
            kwargs.pop("experts_implementation", None)
            model = AutoModelForCausalLM.from_config(cfg, **kwargs)
    model.to(kwargs["dtype"])  # whatever the release did with the dtype argument
    if tr.get("recompute", "none") == "full":
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.config.use_cache = False
    if lora:
        from peft import LoraConfig, get_peft_model
        if tr.get("recompute", "none") == "full":
            model.enable_input_require_grads()
        spec = tr.get("lora", {})
        model = get_peft_model(model, LoraConfig(r=spec.get("rank", 16), lora_alpha=spec.get("alpha", 32), lora_dropout=0.0,
                                                 target_modules="all-linear", task_type="CAUSAL_LM"))
    if case.get("harness", {}).get("routing") == "uniform":
        uniform_routing(model)
    model.train()
    return model


def uniform_routing(model):
    """Routes every token to num_experts_per_tok distinct experts drawn uniformly at random, in place of the router's
    top-k: a randomly initialised router sends the tokens of deeper layers to few experts (four Qwen3-30B-A3B layers at
    1,024 tokens hit 127, 75, 48 and 37 of 128 experts: moe_adapter_mechanics.py), where a trained router with a
    load-balancing loss spreads them. The router still runs, and its top-k weights still scale the experts' outputs."""
    def reroute(module, args, kwargs):
        args = list(args)
        index = kwargs["top_k_index"] if "top_k_index" in kwargs else args[1]
        tokens, k = index.shape[0], index.shape[-1]
        experts = getattr(module, "num_experts", None) or module.gate_up_proj.shape[0]
        fresh = torch.rand(tokens, experts, device=index.device).topk(k, dim=-1).indices.to(index.dtype).view_as(index)
        if "top_k_index" in kwargs:
            kwargs["top_k_index"] = fresh
        else:
            args[1] = fresh
        return tuple(args), kwargs
    hooked = [m.register_forward_pre_hook(reroute, with_kwargs=True) for m in model.modules()
              if type(m).__name__.endswith("Experts")]
    if not hooked:
        raise RuntimeError("harness.routing uniform: the model has no *Experts module to route")


def experts_reported(model):
    cfg = getattr(model, "config", None)
    return getattr(cfg, "_experts_implementation", None) if cfg is not None else None


def token_batch(n, seq, vocab):
    ids = torch.randint(0, vocab, (n, seq), device="cuda")
    return ids


def hf_step(case, model, opt):
    """One optimizer step of the plain loop (with gradient accumulation over micro-batches)."""
    tr, par = case["training"], case["parallel"]
    mb, seq, vocab = par["micro_batch_size"], tr["seq_len"], case["model"]["vocab_size"]
    accum = tr["global_batch_size"] // mb

    def step():
        for _ in range(accum):
            ids = token_batch(mb, seq, vocab)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(input_ids=ids, labels=ids).loss
            (loss / accum).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


def with_plain_step(case, measure):
    """measure(step) for one optimizer step of the case's plain loop (hf_step over the case's model, fused AdamW);
    the model's GPU memory released after."""
    model = build_model(case)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5, fused=True)
    try:
        return measure(hf_step(case, model, opt))
    finally:
        del model, opt
        torch.cuda.empty_cache()


def sequence_logps(logits, ids):
    logp = F.log_softmax(logits[:, :-1].float(), dim=-1)
    return torch.gather(logp, 2, ids[:, 1:, None]).squeeze(-1).sum(-1)


def dpo_step(case, model, opt, reference):
    tr, par = case["training"], case["parallel"]
    mb, seq, vocab = par["micro_batch_size"], tr["seq_len"], case["model"]["vocab_size"]
    accum = tr["global_batch_size"] // mb

    def step():
        for _ in range(accum):
            ids = token_batch(2 * mb, seq, vocab)  # chosen rows then rejected rows
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                ref = sequence_logps(reference(input_ids=ids).logits, ids)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                pol = sequence_logps(model(input_ids=ids).logits, ids)
            ratio = (pol[:mb] - ref[:mb]) - (pol[mb:] - ref[mb:])
            loss = -F.logsigmoid(0.1 * ratio).mean()
            (loss / accum).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


def kernel_time(step):
    """Summed GPU kernel time and kernel count of one profiled step."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    total, kernels = 0.0, 0
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            total += e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
            kernels += 1
    return total / 1e6, kernels


def wall_times(fn, warm, timed, before_timed=None):
    """Wall time of each of `timed` calls of fn after `warm` untimed ones, the GPU (if any: host-only work such as an
    offloaded optimizer's step is timed on machines without one too) synchronised around each."""
    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    for _ in range(warm):
        fn()
    sync()
    if before_timed:
        before_timed()
    times = []
    for _ in range(timed):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return times


def median_wall(fn, timed=7, warm=1):
    return statistics.median(wall_times(fn, warm, timed))


def timed_loop(step, warm, timed):
    return wall_times(step, warm, timed, before_timed=torch.cuda.reset_peak_memory_stats)


def count_parameters(model):
    total = sum(p.numel() for p in model.parameters())
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return total, trainable


def run_plain(case, warm, timed):
    model = build_model(case)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-5, fused=True)
    reference = None
    if case["harness"]["loop"] == "hf-dpo":
        from transformers import AutoModelForCausalLM
        with torch.device("cuda"):
            reference = AutoModelForCausalLM.from_config(hf_config(case), dtype=torch.bfloat16)
        reference.config.use_cache = False
        reference.eval().requires_grad_(False)
        step = dpo_step(case, model, opt, reference)
    else:
        step = hf_step(case, model, opt)
    out = {}
    times = timed_loop(step, warm, timed)
    out["peak_allocated_bytes"] = torch.cuda.max_memory_allocated()
    out["peak_reserved_bytes"] = torch.cuda.max_memory_reserved()
    out["step_times_s"] = times
    out["step_time_s"] = statistics.median(times)
    out["parameters"], out["trainable_parameters"] = count_parameters(model)
    if reference is not None:
        out["reference_parameters"] = sum(p.numel() for p in reference.parameters())
    out["experts_implementation"] = experts_reported(model.get_base_model() if hasattr(model, "get_base_model") else model)
    try:
        out["gpu_kernel_time_s"], out["kernels"] = kernel_time(step)
    except Exception as e:  # noqa: BLE001
        out["profile_error"] = repr(e)
    return out


class TokenRows(torch.utils.data.Dataset):
    def __init__(self, n, seq, vocab):
        self.n, self.seq, self.vocab = n, seq, vocab

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        ids = torch.randint(0, self.vocab, (self.seq,))
        return {"input_ids": ids, "labels": ids.clone()}


def run_trainer(case, warm, timed, workdir):
    from transformers import Trainer, TrainerCallback, TrainingArguments
    tr, par = case["training"], case["parallel"]
    mb = par["micro_batch_size"]
    accum = tr["global_batch_size"] // mb
    steps = warm + timed
    marks = []

    class StepClock(TrainerCallback):
        def on_train_begin(self, args, state, control, **kw):
            torch.cuda.synchronize()
            marks.append(time.perf_counter())

        def on_step_end(self, args, state, control, **kw):
            torch.cuda.synchronize()
            marks.append(time.perf_counter())
            if len(marks) == warm + 1:
                torch.cuda.reset_peak_memory_stats()

    model = build_model(case)
    args = TrainingArguments(output_dir=workdir, per_device_train_batch_size=mb, gradient_accumulation_steps=accum,
                             max_steps=steps, bf16=True, save_strategy="no", report_to="none", disable_tqdm=True,
                             logging_steps=500, learning_rate=1e-5, dataloader_num_workers=0,
                             gradient_checkpointing=False)  # build_model enabled it (use_reentrant=False) under full recompute
    data = TokenRows(steps * mb * accum, tr["seq_len"], case["model"]["vocab_size"])
    trainer = Trainer(model=model, args=args, train_dataset=data, callbacks=[StepClock()])
    result = trainer.train()
    out = {"peak_allocated_bytes": torch.cuda.max_memory_allocated(), "peak_reserved_bytes": torch.cuda.max_memory_reserved()}
    times = [b - a for a, b in zip(marks, marks[1:])][warm:]
    out["step_times_s"] = times
    out["step_time_s"] = statistics.median(times)
    out["train_runtime_s"] = result.metrics.get("train_runtime")
    out["optimizer"] = str(args.optim)
    out["parameters"], out["trainable_parameters"] = count_parameters(model)
    del trainer
    return out


def run_case(case, warm, timed, workdir):
    loop = case["harness"]["loop"]
    try:
        if loop == "hf-trainer":
            return run_trainer(case, warm, timed, workdir)
        return run_plain(case, warm, timed)
    except torch.cuda.OutOfMemoryError:
        return {"oom": True}


def run_in_fresh_process(a, case_id, workdir):
    """The case's measurement from a child process of this script that runs it alone."""
    os.makedirs(workdir, exist_ok=True)
    out = os.path.join(workdir, f"{case_id}.json")
    subprocess.run([sys.executable, os.path.abspath(__file__), a.cases, "-o", out, "--only", case_id, "--warm", str(a.warm),
                    "--timed", str(a.timed)], check=True)
    child = json.load(open(out))
    if not child["cases"]:
        raise RuntimeError(child["skipped"][0]["why"] if child["skipped"] else "no measurement")
    return child["cases"][0]["measured"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--only", default="", help="comma-separated case ids")
    ap.add_argument("--warm", type=int, default=2)
    ap.add_argument("--timed", type=int, default=6)
    ap.add_argument("--deadline", type=float, default=0, help="seconds after which no new case starts (0: none)")
    ap.add_argument("--fresh-process", action="store_true",
                    help="run each case in a Python process of its own, as a training job runs (a host-bound step slows in a "
                         "process that ran other cases before: census/host_bound_rerun-h100-sxm-80gb-2026-11-28.json)")
    ap.add_argument("--remeasure", default="", metavar="PREFIX",
                    help="measure cases again under new ids: PREFIX replaces each id's first dash-separated part "
                         "(h100c-hf-... -> PREFIX-hf-...) and the row names the old id in `supersedes`, which the accuracy "
                         "run then shows without counting (with --fresh-process: retire one-process values)")
    ap.add_argument("--skip-superseded", default="", metavar="DIR",
                    help="skip the cases a results file of DIR already measured again (names in `supersedes`): with "
                         "--fresh-process --remeasure, measure only the one-process values not yet retired")
    ap.add_argument("--append", action="store_true",
                    help="keep the output file's cases (a case measured again replaces its row) and its runs' provenance")
    a = ap.parse_args()
    start = time.time()
    spec = json.load(open(a.cases))
    only = {s for s in a.only.split(",") if s}
    superseded = set()
    if a.skip_superseded:
        for name in sorted(os.listdir(a.skip_superseded)):
            if name.endswith(".json"):
                with open(os.path.join(a.skip_superseded, name)) as f:
                    superseded |= {c["supersedes"] for c in json.load(f).get("cases", []) if "supersedes" in c}
    info = versions()
    date = time.strftime("%Y-%m-%d", time.gmtime())
    source = (f"measured {date} on one {info['gpu']}, torch {info['torch']}, transformers {info['transformers']}, "
              f"peft {info['peft']} (trainsim calibrate/measurements/corpus/run_corpus.py; "
              f"{'a fresh process per case' if a.fresh_process else 'one process'}, one GPU; "
              f"median of {a.timed} timed steps after {a.warm} warm-up steps)")
    doc = {"description": spec["description"] + f" Measured {date}: {info['gpu']}, driver {info['driver']}, "
                                                f"torch {info['torch']}, CUDA {info['cuda']}, cuDNN {info['cudnn']}.",
           "runs": [info], "cases": [], "skipped": []}
    if a.append and os.path.exists(a.output):
        earlier = json.load(open(a.output))
        doc["description"] = earlier["description"]
        doc["runs"] = earlier["runs"] + doc["runs"]
        ids = {c["id"] for c in spec["cases"] if not only or c["id"] in only}
        doc["cases"] = [c for c in earlier["cases"] if c["id"] not in ids and c.get("supersedes") not in ids]
    workdir = os.environ.get("TMPDIR", "/tmp") + "/trainsim-corpus"
    for case in spec["cases"]:
        if (only and case["id"] not in only) or case["id"] in superseded:
            continue
        if a.deadline and time.time() - start > a.deadline:
            doc["skipped"].append({"id": case["id"], "why": "deadline"})
            continue
        t0 = time.time()
        row = dict(case)
        row["source"] = source
        if a.remeasure:
            row["id"] = a.remeasure + "-" + case["id"].split("-", 1)[1]
            row["supersedes"] = case["id"]
        try:
            row["measured"] = run_in_fresh_process(a, case["id"], workdir) if a.fresh_process else run_case(case, a.warm, a.timed, workdir)
        except Exception:  # noqa: BLE001
            doc["skipped"].append({"id": case["id"], "why": traceback.format_exc()[-3000:]})
            row = None
        with contextlib.suppress(Exception):
            gc.collect()
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
        if row is not None:
            row["measured"]["harness_seconds"] = round(time.time() - t0, 1)
            doc["cases"].append(row)
            m = row["measured"]
            print(f"{case['id']}: {'OOM' if m.get('oom') else '%.4f s' % m['step_time_s']} "
                  f"({m['harness_seconds']} s)", file=sys.stderr, flush=True)
        else:
            print(f"{case['id']}: FAILED\n{doc['skipped'][-1]['why']}", file=sys.stderr, flush=True)
        write(a.output, doc)
    write(a.output, doc)  # the cases the deadline skipped


def write(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
