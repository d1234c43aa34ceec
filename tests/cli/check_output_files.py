#!/usr/bin/env python3
"""Outputs never destroy inputs, failed writes are errors, interrupted runs leave old files as they were.

  check_output_files.py TRAINSIM

Each case runs trainsim in a fresh temporary folder and checks the exit code, a message naming the flag and
the path, and that every input file still holds what it held:
  - an output (--report, --trace, --jobs-csv, --timeseries-csv, -o) that is one of the run's inputs: exit 2;
  - the same file named by two output flags, an empty path, a folder: exit 2;
  - standard output or an output file on a full device (/dev/full): exit 1, "could not write";
  - an output to a device that works (/dev/null, /dev/stdout): exit 0;
  - a run killed while it simulates: the file its --trace names still holds its old bytes (outputs are written
    to a temporary file and renamed when complete, never opened for writing before the run ends);
  - the same run stopped by SIGTERM (or Ctrl-C): no temporary file is left either;
  - an output named through a symbolic link: the linked file is written, the link stays.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCENARIO = os.path.join(ROOT, "scenarios", "examples", "llama3-8b-sft-8xh100.json")
BIG = os.path.join(ROOT, "scenarios", "examples", "gpt3-175b-pretrain-1024xa100.json")
TRACE = os.path.join(ROOT, "tests", "sim", "cluster", "head_of_line.csv")


def main():
    trainsim = os.path.abspath(sys.argv[1])
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        shutil.copy(SCENARIO, "s.json")
        shutil.copy(TRACE, "h.csv")
        with open("g.csv", "w") as f:
            f.write("dtype,m,n,k,tflops\nbf16,4096,4096,4096,600\n")
        os.mkdir("folder")
        os.symlink("s.json", "link.json")
        originals = {name: open(name, "rb").read() for name in ("s.json", "h.csv", "g.csv")}
        cluster = [trainsim, "cluster", "--trace", "csv:h.csv", "--nodes", "2", "--policy", "fifo"]

        cases = [
            # (name, argv, exit code, stderr pattern, stdout to /dev/full)
            ("--report onto the scenario", [trainsim, "estimate", "s.json", "--report", "s.json"], 2, r"--report: got \"s\.json\".*the input \"s\.json\""),
            ("--report onto the scenario by a link", [trainsim, "estimate", "s.json", "--report", "link.json"], 2, r"--report: got \"link\.json\".*the input"),
            ("--report onto the scenario as ./", [trainsim, "plan", "s.json", "--top", "1", "--report", "./s.json"], 2, r"--report: got \"\./s\.json\".*the input"),
            ("--trace onto the scenario", [trainsim, "simulate", "s.json", "--iterations", "1", "--trace", "s.json"], 2, r"--trace: got \"s\.json\".*the input"),
            ("--jobs-csv onto the trace", cluster + ["--jobs-csv", "h.csv"], 2, r"--jobs-csv: got \"h\.csv\".*the input"),
            ("--timeseries-csv onto the trace", cluster + ["--timeseries-csv", "h.csv"], 2, r"--timeseries-csv: got \"h\.csv\".*the input"),
            ("--report onto the trace", cluster + ["--report", "h.csv"], 2, r"--report: got \"h\.csv\".*the input"),
            ("-o onto the GEMM table", [trainsim, "calibrate", "import", "gemm", "g.csv", "-o", "g.csv"], 2, r"-o: got \"g\.csv\".*the input"),
            ("--trace and --report on one file", [trainsim, "simulate", "s.json", "--iterations", "1", "--trace", "t.json", "--report", "t.json"], 2,
             r"--report: got \"t\.json\".*--trace writes it too"),
            ("empty --report", [trainsim, "estimate", "s.json", "--report", ""], 2, r"--report: got an empty path"),
            ("empty --trace", [trainsim, "simulate", "s.json", "--trace", ""], 2, r"--trace: got an empty path"),
            ("--report is a folder", [trainsim, "estimate", "s.json", "--report", "folder"], 2, r"--report: got \"folder\".*that is a directory"),
            ("--report in a missing folder", [trainsim, "estimate", "s.json", "--report", "nowhere/r.html"], 2, r"--report: got \"nowhere/r\.html\".*no folder"),
            ("a folder as the GEMM table", [trainsim, "calibrate", "import", "gemm", "folder", "-o", "p.json"], 2, r"CSV: got \"folder\".*that is a directory"),
            ("a folder as nccl-tests output", [trainsim, "calibrate", "import", "nccl-tests", "folder", "-o", "p.json"], 2, r"LOG: got \"folder\".*that is a directory"),
            ("a folder as a training log", [trainsim, "validate", "log", "folder", "--plan", "s.json"], 2, r"LOG: got \"folder\".*that is a directory"),
            ("--trace to a full device", [trainsim, "simulate", "s.json", "--iterations", "1", "--trace", "/dev/full"], 1,
             r"could not write /dev/full \(--trace\): No space left on device"),
            ("--jobs-csv to a full device", cluster + ["--jobs-csv", "/dev/full"], 1, r"could not write /dev/full \(--jobs-csv\)"),
            ("--timeseries-csv to a full device", cluster + ["--timeseries-csv", "/dev/full"], 1, r"could not write /dev/full \(--timeseries-csv\)"),
            ("--report to a full device", [trainsim, "estimate", "s.json", "--report", "/dev/full"], 1, r"could not write /dev/full \(--report\)"),
            ("--report to /dev/null", [trainsim, "estimate", "s.json", "--report", "/dev/null"], 0, r"^$"),
        ]
        for command in (["estimate", "s.json"], ["plan", "s.json", "--top", "2"], ["simulate", "s.json", "--iterations", "1"],
                        cluster[1:], ["reliability", "s.json", "--runs", "20"], ["presets"], ["estimate", "s.json", "--format", "json"]):
            cases.append((f"{' '.join(command[:1])} {' '.join(command[1:3])} > /dev/full", [trainsim] + command, 1,
                          r"could not write standard output: (No space left on device|a write failed)", True))

        for case in cases:
            name, argv, code, pattern = case[:4]
            full = len(case) > 4
            stdout = open("/dev/full", "w") if full else subprocess.PIPE
            r = subprocess.run(argv, stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120)
            if full:
                stdout.close()
            if r.returncode != code or not re.search(pattern, r.stderr.strip()):
                failures.append(f"{name}: exit {r.returncode} (expected {code}), stderr {r.stderr.strip()[:300]!r} (expected /{pattern}/)")
            for f, content in originals.items():
                if open(f, "rb").read() != content:
                    failures.append(f"{name}: the input {f} was changed")
                    with open(f, "wb") as out:
                        out.write(content)
            print(f"{name}: exit {r.returncode}")

        # An interrupted run: the old trace file keeps its bytes.
        with open("old.json", "w") as f:
            f.write("OLD")
        p = subprocess.Popen([trainsim, "simulate", BIG, "--iterations", "5", "--trace", "old.json"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.5)
        still_running = p.poll() is None
        p.send_signal(signal.SIGKILL)
        p.wait()
        if not still_running:
            failures.append("interrupted run: the simulation ended within 1.5 s, so nothing was interrupted (use a longer run)")
        elif open("old.json").read() != "OLD":
            failures.append("interrupted run: old.json no longer holds its old bytes")
        else:
            print("interrupted run: old.json kept its old bytes")
        for n in os.listdir("."):
            if n.startswith(".old.json."):
                os.remove(n)  # SIGKILL cannot be caught: its temporary stays (hidden, named after the target)
        # Ctrl-C or a polite kill: the old file intact and no temporary left.
        p = subprocess.Popen([trainsim, "simulate", BIG, "--iterations", "5", "--trace", "old.json"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.5)
        p.send_signal(signal.SIGTERM)
        p.wait()
        leftovers = [n for n in os.listdir(".") if n.startswith(".old.json.")]
        if open("old.json").read() != "OLD" or leftovers:
            failures.append(f"terminated run: old.json holds {open('old.json').read(10)!r}, temporaries left: {leftovers}")
        else:
            print("terminated run: old.json kept its old bytes, no temporary left")

        # An output through a symbolic link: the file it names gets the report, the link stays a link.
        with open("real.html", "w") as f:
            f.write("OLD")
        os.symlink("real.html", "via_link.html")
        r = subprocess.run([trainsim, "estimate", "s.json", "--report", "via_link.html"], capture_output=True, text=True, timeout=120)
        if r.returncode != 0 or not os.path.islink("via_link.html") or not open("real.html").read().startswith("<!DOCTYPE html>"):
            failures.append(f"output through a link: exit {r.returncode}, link kept {os.path.islink('via_link.html')}, real.html starts {open('real.html').read(15)!r}")
        else:
            print("output through a link: the linked file written, the link kept")

        # A completed run replaces the file, keeping its mode.
        os.chmod("old.json", 0o640)
        r = subprocess.run([trainsim, "simulate", "s.json", "--iterations", "1", "--trace", "old.json"], capture_output=True, text=True, timeout=120)
        mode = os.stat("old.json").st_mode & 0o777
        if r.returncode != 0 or open("old.json").read(1) != "{" or mode != 0o640:
            failures.append(f"completed run: exit {r.returncode}, old.json starts {open('old.json').read(10)!r}, mode {mode:o} (expected 0, JSON, 640)")
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
