#!/usr/bin/env python3
"""Is the HF Trainer's step slower than a plain loop's over the same model by a mechanism, or by this host's
run-to-run variance? Alternates, round after round, the plain loop and the Trainer (run_corpus.py, each a fresh
model) on cases of cases.json, and inside one process blocks of plain steps and steps with the Trainer's extras
(clip_grad_norm_ through accelerate, scheduler, model.zero_grad) on one model (step_host_costs.py's variants).

Prints one JSON document (stdout). Run: python3 trainer_ab.py cases.json PLAIN_ID TRAINER_ID [ROUNDS] > trainer_ab.json
"""
import contextlib
import json
import statistics
import sys

import torch

import run_corpus as rc  # same folder: the loops
import step_host_costs as hc  # same folder: the Trainer's extras as separate variants


def main():
    cases = {c["id"]: c for c in json.load(open(sys.argv[1]))["cases"]}
    plain, trainer = cases[sys.argv[2]], cases[sys.argv[3]]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    out = {"provenance": rc.versions(), "plain_id": plain["id"], "trainer_id": trainer["id"], "rounds": []}
    for r in range(rounds):
        with contextlib.redirect_stdout(sys.stderr):  # the Trainer prints its metrics: keep stdout the JSON document
            row = {"plain_s": rc.run_case(plain, 2, 6, "/tmp/trainsim-ab")["step_time_s"]}
            torch.cuda.empty_cache()
            row["trainer_s"] = rc.run_case(trainer, 2, 6, "/tmp/trainsim-ab")["step_time_s"]
        torch.cuda.empty_cache()
        print(r, row, file=sys.stderr, flush=True)
        out["rounds"].append(row)
    model = rc.build_model(plain)
    variants = hc.variants(model)
    blocks = {"plain": [], "clip_accelerate": [], "scheduler_and_model_zero_grad": []}
    for _ in range(rounds * 2):
        for name in blocks:
            blocks[name].append(rc.median_wall(variants[name], timed=8, warm=2))
    out["in_process_blocks_s"] = blocks
    out["in_process_median_s"] = {k: statistics.median(v) for k, v in blocks.items()}
    out["tensors"] = sum(1 for p in model.parameters() if p.requires_grad)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
