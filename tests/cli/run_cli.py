#!/usr/bin/env python3
"""Runs the trainsim CLI once and checks what a user (or a script) would rely on.

  run_cli.py [--exit N] [--stdout REGEX]... [--stderr REGEX]... [--golden FILE [--update]] -- trainsim ARGS...

--golden compares the command's JSON output with FILE: same keys and strings, numbers equal to a
relative 1e-9 (bit-for-bit output is not promised across compilers). --update rewrites FILE.
"""
import argparse
import json
import math
import re
import subprocess
import sys


def diff(expected, actual, path=""):
    """First difference between two JSON values, or None."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in sorted(set(expected) | set(actual)):
            if key not in actual:
                return f"{path}/{key}: missing from output"
            if key not in expected:
                return f"{path}/{key}: not in the golden file"
            d = diff(expected[key], actual[key], f"{path}/{key}")
            if d:
                return d
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return f"{path}: {len(actual)} items, golden has {len(expected)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            d = diff(e, a, f"{path}/{i}")
            if d:
                return d
        return None
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)) and not isinstance(expected, bool):
        if math.isclose(expected, actual, rel_tol=1e-9, abs_tol=1e-9):
            return None
        return f"{path}: {actual} != golden {expected}"
    return None if expected == actual else f"{path}: {actual!r} != golden {expected!r}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exit", type=int, default=0)
    ap.add_argument("--stdout", action="append", default=[])
    ap.add_argument("--stderr", action="append", default=[])
    ap.add_argument("--golden")
    ap.add_argument("--update", action="store_true")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.command[1:] if args.command and args.command[0] == "--" else args.command
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        print("FAIL: timed out after 120 s:", " ".join(cmd))
        return 1
    failures = []
    if proc.returncode != args.exit:
        failures.append(f"exit code {proc.returncode}, expected {args.exit}")
    for pattern in args.stdout:
        if not re.search(pattern, proc.stdout, re.M):
            failures.append(f"stdout does not match {pattern!r}")
    for pattern in args.stderr:
        if not re.search(pattern, proc.stderr, re.M):
            failures.append(f"stderr does not match {pattern!r}")
    if args.golden and not failures:
        actual = json.loads(proc.stdout)
        if args.update:
            with open(args.golden, "w") as f:
                json.dump(actual, f, indent=2, sort_keys=True)
                f.write("\n")
        else:
            with open(args.golden) as f:
                d = diff(json.load(f), actual)
            if d:
                failures.append(f"JSON differs from {args.golden}: {d} (rerun with --update after checking the change)")
    if failures:
        print("command:", " ".join(cmd))
        print("stdout:", proc.stdout[-3000:])
        print("stderr:", proc.stderr[-3000:])
        for f in failures:
            print("FAIL:", f)
        return 1
    print("ok:", " ".join(cmd))
    return 0


if __name__ == "__main__":
    sys.exit(main())
