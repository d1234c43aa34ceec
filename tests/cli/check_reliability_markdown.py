#!/usr/bin/env python3
"""`trainsim reliability --format md` shows the numbers of `--format json`, at the precision its tables print.

  check_reliability_markdown.py -- TRAINSIM reliability ARGS...

Runs the command twice (same scenario, runs and seed: the Monte-Carlo is deterministic), once with --format json
and once with --format md, and checks, from the JSON: the result table's ETTR (mean, p05, p95), interruptions and
lost GPU-hours; the checkpoint-interval table's ETTR at every interval and its best row; the what-if and
sensitivity tables' ETTR per row. Exits 1 naming the first cell that differs.
"""
import json
import subprocess
import sys


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {proc.returncode}: {proc.stderr[-2000:]}")
    return proc.stdout


def tables(md):
    """Pipe tables by the heading above them: {heading: [header, row, ...]} (the --- separator dropped)."""
    out, heading, current = {}, None, None
    for line in md.splitlines():
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
            current = None
        elif line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            if current is None:
                current = out.setdefault(heading, [])
            if not all(set(c) <= set("-: ") and "-" in c for c in cells):
                current.append(cells)
        else:
            current = None
    return out


def table(tabs, prefix):
    for heading, rows in tabs.items():
        if heading and heading.startswith(prefix):
            return rows[0], rows[1:]
    sys.exit(f"FAIL: no Markdown table under a heading starting {prefix!r}; headings: {list(tabs)}")


def pct(f):
    return f"{100 * f:.2f}%"


failures = []


def expect(where, shown, expected):
    if shown != expected:
        failures.append(f"{where}: Markdown shows {shown!r}, the JSON gives {expected!r}")


def main():
    cmd = sys.argv[1:]
    if cmd[:1] == ["--"]:
        cmd = cmd[1:]
    if not cmd:
        sys.exit(__doc__)
    j = json.loads(run(cmd + ["--format", "json"]))
    md = run(cmd + ["--format", "md"])
    tabs = tables(md)

    header, rows = table(tabs, "Result")
    result = {r[0]: dict(zip(header, r)) for r in rows}
    for key in ("mean", "p05", "p95"):
        expect(f"Result, ETTR {key}", result["ETTR"][key], pct(j["ettr"][key]))
    expect("Result, interruptions mean", result["interruptions"]["mean"], f"{j['interruptions']['mean']:.1f}")
    expect("Result, lost GPU-hours mean", result["lost GPU-hours"]["mean"], f"{j['lost_gpu_hours']['mean']:.0f}")

    if "what_if" in j:  # not --brief: the sweep, what-if and sensitivity tables
        header, rows = table(tabs, "Checkpoint interval")
        sweep = j["interval_sweep"]
        if len(rows) != len(sweep):
            failures.append(f"Checkpoint interval: {len(rows)} rows, the JSON has {len(sweep)}")
        for i, (row, x) in enumerate(zip(rows, sweep)):
            cells = dict(zip(header, row))
            expect(f"Checkpoint interval, row {i + 1} ETTR", cells["ETTR"], pct(x["ettr"]["mean"]))
            is_best = x["interval_s"] == j["best_interval_s"]
            expect(f"Checkpoint interval, row {i + 1} best", cells["best"] == "*", is_best)
        header, rows = table(tabs, "What if")
        for row, x in zip(rows, j["what_if"]):
            cells = dict(zip(header, row))
            expect(f"What if, {x['label']} label", cells["variant"], x["label"])
            expect(f"What if, {x['label']} ETTR", cells["ETTR"], pct(x["ettr"]["mean"]))
        header, rows = table(tabs, "Sensitivity")
        for row, x in zip(rows, j["sensitivity"]):
            cells = dict(zip(header, row))
            label = x["at_current_interval"]["label"]
            expect(f"Sensitivity, {label} ETTR", cells["ETTR"], pct(x["at_current_interval"]["ettr"]["mean"]))
            expect(f"Sensitivity, {label} ETTR there", cells["ETTR there"], pct(x["at_own_interval"]["ettr"]["mean"]))

    if failures:
        for f in failures:
            print("FAIL:", f)
        return 1
    print(f"ok: the Markdown's numbers are the JSON's (ETTR {pct(j['ettr']['mean'])} at {j['interval_s']:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
