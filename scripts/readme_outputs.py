#!/usr/bin/env python3
"""Regenerates the README's command blocks: every fenced block whose first line is `$ ./build/trainsim ...`
(continued with trailing backslashes) gets the command's current output below it. Usage: readme_outputs.py [README]"""
import shlex
import subprocess
import sys


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "README.md"
    lines = open(path, encoding="utf-8").read().split("\n")
    out, i, changed = [], 0, 0
    while i < len(lines):
        out.append(lines[i])
        if lines[i] == "```" and i + 1 < len(lines) and lines[i + 1].startswith("$ ./build/trainsim"):
            command = [lines[i + 1]]
            j = i + 2
            while command[-1].endswith("\\"):
                command.append(lines[j])
                j += 1
            end = j
            while lines[end] != "```":
                end += 1
            text = " ".join(c.rstrip("\\").strip() for c in command)[2:]
            result = subprocess.run(shlex.split(text), capture_output=True, text=True, timeout=600)
            if result.returncode != 0:
                sys.exit(f"error: `{text}` exited {result.returncode}: {result.stderr.strip()}")
            out.extend(command)
            out.extend(result.stdout.rstrip("\n").split("\n"))
            i = end
            changed += 1
            continue
        i += 1
    open(path, "w", encoding="utf-8").write("\n".join(out))
    print(f"{path}: {changed} command blocks regenerated")


if __name__ == "__main__":
    main()
