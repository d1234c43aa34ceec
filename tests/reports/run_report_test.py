#!/usr/bin/env python3
"""One CTest test for one HTML report: write it with trainsim, check its HTML, then open it in Chromium.

  run_report_test.py --html OUT --max-bytes N [--min-charts K] --chromium PATH --out-dir DIR -- COMMAND...

1. Deletes OUT, runs COMMAND (a trainsim command that writes OUT); it must exit 0 and write OUT.
2. check_html.py OUT --max-bytes N --min-charts K must pass (always: it needs only Python).
3. browser_check.py on OUT, screenshot into DIR. Without Chromium (PATH empty, "...-NOTFOUND" or not
   executable) this step is skipped with a printed note and the test still passes on steps 1 and 2:
   a machine without a browser should still catch broken HTML.
Exits 0 when every step that ran passed, 1 otherwise.
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def step(title, argv):
    print(f"== {title}: {' '.join(argv)}", flush=True)
    return subprocess.run(argv).returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--html", required=True)
    ap.add_argument("--max-bytes", type=int, default=2_000_000)
    ap.add_argument("--min-charts", type=int, default=0)
    ap.add_argument("--chromium", default="")
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("no COMMAND after --")

    if os.path.exists(args.html):
        os.remove(args.html)
    os.makedirs(os.path.dirname(os.path.abspath(args.html)), exist_ok=True)
    rc = step("report", command)
    if rc != 0:
        print(f"FAIL: the command exited {rc}")
        return 1
    if not os.path.isfile(args.html):
        print(f"FAIL: the command exited 0 but wrote no {args.html}")
        return 1

    rc = step("html", [sys.executable, os.path.join(HERE, "check_html.py"), args.html,
                       "--max-bytes", str(args.max_bytes), "--min-charts", str(args.min_charts)])
    if rc != 0:
        print("FAIL: check_html.py found problems (above)")
        return 1

    rc = step("browser", [sys.executable, os.path.join(HERE, "browser_check.py"), "--chromium", args.chromium,
                          "--out-dir", args.out_dir, args.html])
    if rc == 77:
        print("NOTE: chromium not found, browser check skipped; the report was written and its HTML is valid")
        return 0
    if rc != 0:
        print("FAIL: browser_check.py found problems (above)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
