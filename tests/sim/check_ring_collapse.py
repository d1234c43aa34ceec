#!/usr/bin/env python3
"""What collapsing rings changes: `trainsim simulate` with every blocking ring collapsed (one flow per edge for
the whole collective, the default) against the same run with rings expanded step by step (--expand-rings:
n-1 or 2(n-1) lockstep rounds), on contended fabrics. Fails when the step time or any part of its breakdown
differs by more than the bound.

  check_ring_collapse.py TRAINSIM BOUND [simulate flags...]
"""
import json
import subprocess
import sys


def simulate(trainsim, flags):
    run = subprocess.run([trainsim, "simulate", "--format", "json"] + flags, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit("trainsim simulate failed (%d): %s" % (run.returncode, run.stderr))
    return json.loads(run.stdout)


def main():
    trainsim, bound, flags = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    collapsed = simulate(trainsim, flags)
    expanded = simulate(trainsim, flags + ["--expand-rings", "65536"])
    if expanded["simulation"]["flows"] <= collapsed["simulation"]["flows"]:
        sys.exit("the expanded run has no more flows (%d) than the collapsed one (%d): no ring was expanded"
                 % (expanded["simulation"]["flows"], collapsed["simulation"]["flows"]))
    a, b = collapsed["step"]["time_s"], expanded["step"]["time_s"]
    error = abs(a - b) / b
    print("step: collapsed %.9f s (%d flows), step by step %.9f s (%d flows): %.2e" % (
        a, collapsed["simulation"]["flows"], b, expanded["simulation"]["flows"], error))
    if error > bound:
        sys.exit("collapse error %.3e above %.1e" % (error, bound))
    for key, value in expanded["step"]["breakdown"].items():
        if abs(collapsed["step"]["breakdown"][key] - value) > bound * b:
            sys.exit("breakdown %s: collapsed %.9f s, step by step %.9f s" % (key, collapsed["step"]["breakdown"][key], value))


if __name__ == "__main__":
    main()
