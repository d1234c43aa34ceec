#!/usr/bin/env python3
"""The progress bar of `trainsim plan` is erased before the result: run on a pseudo-terminal (where the bar is
drawn), replay what a terminal would show, and check that no bar text is left above or in the result.

  check_progress.py TRAINSIM
"""
import os
import pty
import re
import sys


def screen(raw):
    """Lines as a terminal shows them: '\\r' returns to the line start, ESC[K erases to its end."""
    lines, line, col = [], [], 0
    i = 0
    text = raw.decode("utf-8", "replace")
    while i < len(text):
        c = text[i]
        if text.startswith("\x1b[K", i):
            del line[col:]
            i += 3
            continue
        if c == "\r":
            col = 0
        elif c == "\n":
            lines.append("".join(line))
            line, col = [], 0
        else:
            if col < len(line):
                line[col] = c
            else:
                line.append(c)
            col += 1
        i += 1
    if line:
        lines.append("".join(line))
    return lines


def main():
    trainsim = sys.argv[1]
    pid, fd = pty.fork()
    if pid == 0:
        # A search long enough to draw the bar: GPT-3 175B on 64..1024 GPUs.
        os.execv(trainsim, [trainsim, "plan", "--model", "gpt3-175b", "--gpu", "a100-sxm-80gb", "--gpus", "64..1024",
                            "--seq-len", "2048", "--global-batch-size", "1536", "--train-tokens", "300B", "--top", "3"])
    raw = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        raw += chunk
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        print("FAIL: trainsim plan exited", os.waitstatus_to_exitcode(status))
        return 1
    lines = screen(raw)
    drawn = b"searching layouts" in raw
    left = [l for l in lines if "searching layouts" in l or re.search(r"\[#+ *\]", l)]
    if not any(l.startswith("Scenario") for l in lines):
        print("FAIL: no result printed:", lines[:5])
        return 1
    if left:
        print("FAIL: progress bar left on screen:", left[:3])
        return 1
    print(f"ok: bar drawn: {drawn}; none left on screen; {len(lines)} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
