#!/usr/bin/env python3
"""Markdown output carries the same numbers as the JSON output of the same command.

  check_markdown.py --kind estimate|plan|cluster|simulate -- TRAINSIM ARGS...

Runs `TRAINSIM ARGS... --format md` and `--format json`, checks that the Markdown is made of pipe tables a
Markdown viewer renders (a header row, a `---` separator row with as many cells, rows with as many cells), and
compares the numbers each table shows with the JSON's, at the table's printed precision.
"""
import argparse
import json
import subprocess
import sys

GIB = 1024 ** 3


def tables(md):
    """Every pipe table as a list of rows (lists of cell strings), the header first; checks the shape."""
    out, current = [], None
    for n, line in enumerate(md.splitlines(), 1):
        if not line.startswith("|"):
            current = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if current is None:
            current = [cells]
            out.append(current)
            continue
        if len(current) == 1:
            if not all(set(c.replace(":", "")) <= {"-"} and "-" in c for c in cells):
                sys.exit(f"line {n}: the row after a table header must be the --- separator: {line}")
            if len(cells) != len(current[0]):
                sys.exit(f"line {n}: separator has {len(cells)} cells, header {len(current[0])}")
            current.append(None)
            continue
        if len(cells) != len(current[0]):
            sys.exit(f"line {n}: row has {len(cells)} cells, header {len(current[0])}: {line}")
        current.append(cells)
    return [[r for r in t if r is not None] for t in out]


def table_with(ts, first_header):
    for t in ts:
        if t[0][0] == first_header:
            return t
    sys.exit(f"no table whose first column is '{first_header}'")


def close(shown, value, digits, what):
    if abs(float(shown) - value) > 0.5 * 10 ** -digits + 1e-12:
        sys.exit(f"{what}: Markdown shows {shown}, JSON says {value:.{digits + 3}f}")


def check_estimate(ts, j):
    stages = table_with(ts, "stage")
    for row, s in zip(stages[1:], j["memory"]["stages"]):
        close(row[7], s["total_bytes"] / GIB, 2, f"stage {row[0]} total GiB")
        close(row[2], s["weights_bytes"] / GIB, 2, f"stage {row[0]} weights GiB")
    if len(stages) - 1 != len(j["memory"]["stages"]):
        sys.exit("stage rows differ from the JSON's stages")
    step = table_with(ts, "part")
    close(step[-1][1], j["step"]["time_s"], 4, "step seconds")


def check_plan(ts, j):
    plans = table_with(ts, "#")
    if len(plans) - 1 != len(j["plans"]):
        sys.exit("plan rows differ from the JSON's plans")
    for row, p in zip(plans[1:], j["plans"]):
        close(row[10].rstrip("%"), 100 * p["step"]["mfu"], 1, f"plan {row[0]} MFU")
        close(row[11], p["memory"]["total_bytes"] / GIB, 1, f"plan {row[0]} memory GiB")
        if int(row[1]) != p["num_gpus"] or int(row[3]) != p["layout"]["micro_batch_size"]:
            sys.exit(f"plan {row[0]}: GPUs or micro-batch differ from the JSON")


def check_cluster(ts, j):
    pol = table_with(ts, "policy")
    for row, p in zip(pol[1:], j["policies"]):
        if row[0] != p["name"]:
            sys.exit(f"policy {row[0]} is {p['name']} in the JSON")
        close(row[2].rstrip("%"), 100 * p["utilization"], 1, f"{row[0]} utilization")
        close(row[11].rstrip("%"), 100 * p["goodput"], 1, f"{row[0]} goodput")
        close(row[10], p["gpu_hours_lost"], 1, f"{row[0]} GPU-hours lost")
        if int(row[8].replace(",", "")) != p["preemptions"] or int(row[9].replace(",", "")) != p["failures"]:
            sys.exit(f"{row[0]}: preemptions or failures differ from the JSON")


def check_simulate(ts, j):
    parts = table_with(ts, "part")
    close(parts[-1][1], j["step"]["time_s"], 4, "simulated step")
    close(parts[-1][2], j["analytic"]["step"]["time_s"], 4, "analytic step")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kind", required=True, choices=["estimate", "plan", "cluster", "simulate"])
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    md = subprocess.run(cmd + ["--format", "md"], capture_output=True, text=True, check=True).stdout
    j = json.loads(subprocess.run(cmd + ["--format", "json"], capture_output=True, text=True, check=True).stdout)
    ts = tables(md)
    if not ts:
        sys.exit("no pipe table in the Markdown")
    globals()["check_" + a.kind](ts, j)
    print(f"{a.kind}: Markdown tables match the JSON ({len(ts)} tables)")


if __name__ == "__main__":
    main()
