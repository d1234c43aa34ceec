#!/usr/bin/env python3
"""The README's terminal examples, regenerated from the binary and checked against it.

A fenced block whose first line is `$ COMMAND` (continued over lines ending in a backslash) is an example: the
rest of the block is what COMMAND prints. `--check` runs every example and fails, with a diff, where the README
says something else; `--update` rewrites the blocks from the binary's output. A block holding a line `...` or a
command with `&&` or `|` is an excerpt, neither run nor checked.

Timings that differ run to run (a search's or a simulation's seconds, the threads it ran on) are compared as
placeholders, and the README keeps whatever it shows for them.

  scripts/readme_examples.py --trainsim build/trainsim [--check | --update] [README.md]
"""
import argparse
import difflib
import re
import shlex
import subprocess
import sys

# Parts of the output that vary from run to run: compared as placeholders.
VOLATILE = [
    (re.compile(r"in \d+(\.\d+)? s on \d+ threads?"), "in <seconds> on <threads>"),
    (re.compile(r"\d+ threads?, \d+(\.\d+)? s"), "<threads>, <seconds>"),
]


def normalize(line):
    for pattern, placeholder in VOLATILE:
        line = pattern.sub(placeholder, line)
    return line.rstrip()


def examples(lines):
    """(first line of the block's output, end line, command) for every example block."""
    i = 0
    while i < len(lines):
        if lines[i].startswith("```") and i + 1 < len(lines) and lines[i + 1].startswith("$ "):
            start = i + 1
            command_lines = [lines[start][2:]]
            j = start
            while command_lines[-1].rstrip().endswith("\\"):
                j += 1
                command_lines.append(lines[j])
            end = j + 1
            while end < len(lines) and not lines[end].startswith("```"):
                end += 1
            command = " ".join(c.rstrip().rstrip("\\").strip() for c in command_lines)
            body = lines[j + 1:end]
            excerpt = "&&" in command or "|" in command or any(b.strip() == "..." for b in body)
            if not excerpt:
                yield j + 1, end, command
            i = end + 1
        else:
            i += 1


def run(trainsim, command):
    argv = shlex.split(command)
    if argv[0] not in ("trainsim", "./build/trainsim"):
        raise SystemExit(f"readme_examples: {command!r} does not run trainsim")
    done = subprocess.run([trainsim] + argv[1:], capture_output=True, text=True, timeout=600)
    if done.returncode not in (0, 1):
        raise SystemExit(f"readme_examples: {command!r} exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout.rstrip("\n").split("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trainsim", required=True)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="fail where the README differs from the binary (default)")
    mode.add_argument("--update", action="store_true", help="rewrite the example blocks from the binary")
    ap.add_argument("readme", nargs="?", default="README.md")
    args = ap.parse_args()
    with open(args.readme) as f:
        lines = f.read().split("\n")
    failures, checked, out, last = [], 0, [], 0
    for first, end, command in examples(lines):
        checked += 1
        actual = run(args.trainsim, command)
        shown = lines[first:end]
        if [normalize(a) for a in actual] != [normalize(s) for s in shown]:
            diff = difflib.unified_diff([normalize(s) for s in shown], [normalize(a) for a in actual], "README", "binary", lineterm="", n=1)
            failures.append(f"README.md:{first}: `{command}` prints something else:\n" + "\n".join(diff))
        # Keep the README's own line where the binary's differs from it only in its timings.
        padded = shown + [None] * max(0, len(actual) - len(shown))
        kept = [s if s is not None and normalize(s) == normalize(a) else a for a, s in zip(actual, padded)]
        out += lines[last:first] + kept
        last = end
    out += lines[last:]
    if args.update:
        with open(args.readme, "w") as f:
            f.write("\n".join(out))
        print(f"readme_examples: {checked} examples regenerated, {len(failures)} changed")
        return 0
    for failure in failures:
        print(failure)
    print(f"readme_examples: {checked} examples, {len(failures)} differ from the binary" + ("" if not failures else
          " (scripts/readme_examples.py --update after checking the change)"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
