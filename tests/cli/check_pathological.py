#!/usr/bin/env python3
"""Inputs too large to keep in the repository, made here: each must end in exit code 2 with a message that
names what is wrong, within a few seconds, without a crash (no signal, no 'internal error').

  check_pathological.py TRAINSIM
"""
import os
import re
import subprocess
import sys
import tempfile


def run(cmd, timeout=60):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def main():
    trainsim = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        cases = []
        # 60,000 levels of nesting (a recursive printer or parser overflows the stack on this).
        deep = os.path.join(tmp, "deep.json")
        with open(deep, "w") as f:
            f.write('{"model": "llama3-8b", "training": ' + "[" * 60000 + "]" * 60000 + "}")
        cases.append(("deep nesting", [trainsim, "estimate", deep], r"nesting deeper than 100 levels"))
        deep_profile = os.path.join(tmp, "deep_profile.json")
        with open(deep_profile, "w") as f:
            f.write("[" * 60000 + "]" * 60000)
        cases.append(("deep calibration profile", [trainsim, "estimate", "--calibration", deep_profile], r"nesting deeper than 100 levels"))
        # A number with 30,000 digits in a scenario.
        digits = os.path.join(tmp, "digits.json")
        with open(digits, "w") as f:
            f.write('{"model": "llama3-8b", "training": {"seq_len": ' + "9" * 30000 + "}}")
        cases.append(("30,000-digit number", [trainsim, "estimate", digits], r"/training/seq_len"))
        # Invalid UTF-8 in a scenario.
        bad_utf8 = os.path.join(tmp, "utf8.json")
        with open(bad_utf8, "wb") as f:
            f.write(b'{"model": "llama3-8b\xff\xfe"}')
        cases.append(("invalid UTF-8", [trainsim, "estimate", bad_utf8], r"valid JSON"))
        # A megabyte-long key.
        long_key = os.path.join(tmp, "long_key.json")
        with open(long_key, "w") as f:
            f.write('{"model": "llama3-8b", "training": {"' + "k" * 1_000_000 + '": 1}}')
        cases.append(("1 MB key", [trainsim, "estimate", long_key], r"no such field here"))
        for name, cmd, pattern in cases:
            try:
                proc = run(cmd)
            except subprocess.TimeoutExpired:
                failures.append(f"{name}: timed out")
                continue
            if proc.returncode != 2:
                failures.append(f"{name}: exit {proc.returncode}, expected 2; stderr: {proc.stderr[-500:]}")
            elif not re.search(pattern, proc.stderr):
                failures.append(f"{name}: stderr does not match {pattern!r}: {proc.stderr[-500:]}")
            elif len(proc.stderr) > 2000:
                failures.append(f"{name}: the message is {len(proc.stderr)} characters long")
            else:
                print(f"ok: {name}: {proc.stderr.strip()[:160]}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
