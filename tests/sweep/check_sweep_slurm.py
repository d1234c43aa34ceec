"""trainsim sweep on a real Slurm job array (Debian's slurm-wlm: slurmctld and four slurmd on this machine, started
and stopped here by PID; tests/sim/slurm/local_slurm.py). A reliability sweep of 9 points (about a second each)
runs as `trainsim sweep submit --to slurm --shards 3`: the array and the merge job that depends on it (afterok).
  1. The merged CSV, JSON and HTML report equal, byte for byte, the merge of the same sweep run in one process.
  2. One array task is cancelled midway: the merge never starts (its dependency is not satisfied), status lists the
     cancelled shard's missing points, and running submit.sh again finishes only those (the points already written
     keep their files) and merges to the same bytes.
Exits 77 (a skip) when Slurm is not installed.

Usage: check_sweep_slurm.py TRAINSIM"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "sim", "slurm"))
from local_slurm import Slurm, which_all  # noqa: E402

SKIP = 77
SWEEP = {
    "description": "ETTR by failure rate and checkpoint interval (a second a point: 300,000 Monte-Carlo runs)",
    "command": "reliability",
    "args": ["--runs", "300000", "--threads", "1"],
    "axes": [
        {"name": "failures_per_1000_node_days", "path": "/reliability/failures/failures_per_1000_node_days", "values": [2, 8, 32]},
        {"name": "interval", "path": "/reliability/checkpoint/interval", "values": ["30min", "1h", "2h"]},
    ],
    "seed": 7,
}


class Failure(Exception):
    pass


def check(ok, what):
    if not ok:
        raise Failure(what)


def run(cmd, env=None, expect=0):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if p.returncode != expect:
        raise Failure(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return p.stdout


def wait_empty(slurm, seconds=300, keep=lambda line: True):
    deadline = time.time() + seconds
    while True:
        lines = [l for l in slurm.run(["squeue", "-h", "-o", "%i %j %T %r"]).splitlines() if keep(l)]
        if not lines:
            return
        if time.time() > deadline:
            raise Failure(f"jobs still queued after {seconds} s: {lines}")
        time.sleep(0.5)


def submit(trainsim, slurm, sweep, out, files):
    run([trainsim, "sweep", "submit", sweep, "--to", "slurm", "--shards", "3", "--out", out, "-o", files], env=slurm.env)
    text = run(["bash", os.path.join(files, "submit.sh")], env=slurm.env)
    ids = [w for w in text.split() if w.isdigit()]
    check(len(ids) >= 2, f"submit.sh: {text}")
    return ids[0], ids[1]


def main():
    if not which_all(["slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scancel"]):
        print("SKIP: Slurm is not installed (Debian: apt-get install slurm-wlm; scripts/bootstrap.sh does)")
        return SKIP
    trainsim = os.path.abspath(sys.argv[1])
    root = tempfile.mkdtemp(prefix="trainsim-sweep-slurm-")
    slurm = Slurm(os.path.join(root, "slurm"), "backfill", 16837, 17020)
    try:
        sweep = os.path.join(root, "sweep.json")
        with open(sweep, "w") as f:
            json.dump(SWEEP, f)
        # The same sweep in one process: the bytes the array's merge must give.
        one = os.path.join(root, "one")
        run([trainsim, "sweep", sweep, "--out", one])
        want = {f: run([trainsim, "sweep", "merge", one, "--format", f]) for f in ("csv", "json", "html")}
        slurm.start()

        # 1. The whole array, then the merge after it.
        out = os.path.join(root, "array")
        array, merge = submit(trainsim, slurm, sweep, out, os.path.join(root, "files"))
        wait_empty(slurm)
        sacct = open(os.path.join(slurm.root, "jobcomp.txt")).read()
        check(sacct.count(f"JobId=") >= 4, "the job completion log lists 3 array tasks and the merge")
        for f, name in (("csv", "merged.csv"), ("json", "merged.json"), ("html", "report.html")):
            got = open(os.path.join(out, name)).read()
            check(got == want[f], f"{name} from the job array differs from the single-process merge")
        print(f"ok  job array {array} (3 shards, %3) and merge {merge} (afterok): merged.csv, merged.json and report.html "
              "byte-identical to one process")

        # 2. A task cancelled midway; the resubmission runs only what is missing.
        out2 = os.path.join(root, "killed")
        files2 = os.path.join(root, "files2")
        array, merge = submit(trainsim, slurm, sweep, out2, files2)
        points = os.path.join(out2, "points")
        deadline = time.time() + 120
        while not (os.path.isdir(points) and os.path.exists(os.path.join(points, "000001.json"))):
            check(time.time() < deadline, "shard 1 wrote no point in 2 minutes")
            time.sleep(0.05)
        slurm.run(["scancel", f"{array}_1"])
        # The array ends; the merge waits on a dependency that can no longer be met.
        wait_empty(slurm, keep=lambda l: l.split()[0] != merge)
        reason = slurm.run(["squeue", "-h", "-j", merge, "-o", "%r"]).strip()
        check("Dependency" in reason, f"the merge should wait on its dependency, squeue says {reason!r}")
        slurm.run(["scancel", merge])
        wait_empty(slurm)
        status = json.loads(run([trainsim, "sweep", "status", out2, "--format", "json"]))
        missing = status["missing"]
        check(missing and all(i % 3 == 1 for i in missing) and 1 not in missing, f"missing after the cancel: {missing}")
        kept = {p: os.stat(os.path.join(points, p)).st_mtime_ns for p in os.listdir(points)}
        array2, merge2 = submit(trainsim, slurm, sweep, out2, files2)
        wait_empty(slurm)
        for p, t in kept.items():
            check(os.stat(os.path.join(points, p)).st_mtime_ns == t, f"{p} was run again")
        check(len(os.listdir(points)) == 9, "9 points after the resubmission")
        for f, name in (("csv", "merged.csv"), ("json", "merged.json"), ("html", "report.html")):
            check(open(os.path.join(out2, name)).read() == want[f], f"{name} after the resubmission differs")
        log = open(os.path.join(out2, "logs", "shard-1.log")).read()
        print(f"ok  task {array}_1 cancelled after point 1: merge {merge} held (\"{reason}\"), points {missing} missing; resubmitted as "
              f"{array2} + {merge2}: only those run ({len(kept)} kept), merge byte-identical")
    except Failure as e:
        print(f"FAIL: {e}")
        return 1
    finally:
        slurm.stop()
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
