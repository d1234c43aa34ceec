"""The cluster simulator against a real Slurm: replays slice.csv (a time-compressed Chronus slice, make_slice.py)
through Debian's slurm-wlm (slurmctld and four slurmd on this machine, 8 CPUs each standing in for 8 GPUs,
select/cons_tres) and through `trainsim cluster` on the same four 8-GPU nodes, with the same walltimes, once with
sched/builtin against `--policy fifo` and once with sched/backfill against `--policy backfill`, and compares start
order and per-job waits: FIFO in the same order, backfill with Kendall tau-b >= 0.98 and every wait within 10 s. Both Slurms run at once on their own ports, each from its own directory;
the daemons are started here and stopped by PID. Exits 77 (a skip) when Slurm is not installed.

Slurm settings beside the defaults, matched in trainsim where they are not Slurm's defaults there:
  bf_interval=1 (trainsim: cluster.scheduler.backfill_interval 1 s), bf_resolution=1 (trainsim plans to the
  second), auth/none and cred/none (one machine, no munge), jobcomp/filetxt (start and end of every job).

Usage: check_slurm_replay.py TRAINSIM SLICE_CSV [--keep DIR]"""
import csv
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from local_slurm import CPUS, NODES, Slurm, which_all

SKIP = 77
MIN_TAU = 0.98
MAX_WAIT_DIFF_S = 10.0


class ReplaySlurm(Slurm):
    """The local Slurm replaying a trace: each job a `sleep` of its duration."""

    def replay(self, jobs):
        """Submits each job at its time (from now), waits for all to end; returns {name: (submit, start, end)}
        in seconds from the first submission, read from Slurm's job completion log."""
        t0 = time.time()
        for j in jobs:
            delay = t0 + j["submit_s"] - time.time()
            if delay > 0:
                time.sleep(delay)
            g = j["gpus"]
            shape = ["-N", "1", "-n", str(g)] if g <= CPUS else ["-N", str(g // CPUS), f"--ntasks-per-node={CPUS}"]
            minutes = max(1, round(j["walltime_s"] / 60))
            self.run(["sbatch", "--parsable", "-J", j["id"], "-o", "/dev/null", f"--time={minutes}", *shape,
                      "--wrap", f"sleep {j['duration_s']}"])
        deadline = time.time() + 600
        while self.run(["squeue", "-h", "-o", "%i"]).strip():
            if time.time() > deadline:
                raise RuntimeError("Slurm jobs still queued after 10 minutes")
            time.sleep(1)
        return read_jobcomp(os.path.join(self.root, "jobcomp.txt"))


def read_jobcomp(path):
    stamp = lambda s: datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").timestamp()
    out = {}
    for line in open(path):
        f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
        out[f["Name"]] = (stamp(f["SubmitTime"]), stamp(f["StartTime"]), stamp(f["EndTime"]))
    first = min(v[0] for v in out.values())
    return {k: (s - first, b - first, e - first) for k, (s, b, e) in out.items()}


def kendall_tau_b(x, y):
    """Kendall's tau-b of two paired lists (ties in either count as neither concordant nor discordant)."""
    conc = disc = tx = ty = 0
    n = len(x)
    for i in range(n):
        for k in range(i + 1, n):
            a, b = x[i] - x[k], y[i] - y[k]
            if a == 0 and b == 0:
                continue
            if a == 0:
                tx += 1
            elif b == 0:
                ty += 1
            elif (a > 0) == (b > 0):
                conc += 1
            else:
                disc += 1
    denom = ((conc + disc + tx) * (conc + disc + ty)) ** 0.5
    return ((conc - disc) / denom if denom else 1.0), disc


def trainsim_starts(trainsim, jobs, slurm, policy, workdir):
    """Runs the same jobs through `trainsim cluster`, each submitted when Slurm recorded it and holding its GPUs as
    long as it held Slurm's CPUs (the sleep plus Slurm's launch and teardown, a second or two that would otherwise
    add up along every chain of jobs waiting for each other): {name: start}."""
    submits = {k: round(v[0]) for k, v in slurm.items()}
    held = {k: max(1, round(v[2] - v[1])) for k, v in slurm.items()}
    trace = os.path.join(workdir, f"{policy}-trace.csv")
    with open(trace, "w") as f:
        f.write("id,submit_s,gpus,duration_s,walltime_s\n")
        for j in sorted(jobs, key=lambda j: (submits[j["id"]], j["order"])):
            f.write(f"{j['id']},{submits[j['id']]},{j['gpus']},{held[j['id']]},{j['walltime_s']}\n")
    scenario = os.path.join(workdir, "cluster.json")
    with open(scenario, "w") as f:
        json.dump({"cluster": {"pools": [{"gpu": "h100-sxm-80gb", "gpus_per_node": CPUS, "nodes": NODES}], "failures": "none",
                               "scheduler": {"backfill_interval": 1}}}, f)
    out = os.path.join(workdir, f"{policy}-jobs.csv")
    subprocess.run([trainsim, "cluster", scenario, "--trace", "csv:" + trace, "--policy", policy, "--jobs-csv", out, "--format", "json"],
                   check=True, capture_output=True, text=True)
    return {r["id"]: float(r["start_s"]) for r in csv.DictReader(open(out))}


def compare(name, jobs, slurm, sim):
    ids = sorted(slurm, key=lambda k: (slurm[k][1], k))
    print(f"\n{name}: job, GPUs, submit, start in Slurm / trainsim, wait in Slurm / trainsim")
    worst = 0.0
    for k in ids:
        sub, start, _ = slurm[k]
        j = next(j for j in jobs if j["id"] == k)
        diff = (sim[k] - sub) - (start - sub)
        worst = max(worst, abs(diff))
        print(f"  {k:>8} {j['gpus']:>3} {sub:6.0f} {start:6.0f} / {sim[k]:6.0f}   {start - sub:5.0f} / {sim[k] - sub:5.0f}")
    tau, inverted = kendall_tau_b([slurm[k][1] for k in ids], [sim[k] for k in ids])
    print(f"{name}: Kendall tau-b of start times {tau:.3f} ({inverted} pairs inverted; pairs started in the same second"
          f" by one and not the other count as ties), largest wait difference {worst:.0f} s")
    return tau, inverted, worst


def main():
    if not which_all(["slurmctld", "slurmd", "sbatch", "squeue", "sinfo"]):
        print("SKIP: Slurm is not installed (Debian: apt-get install slurm-wlm; scripts/bootstrap.sh does)")
        return SKIP
    trainsim, slice_csv = sys.argv[1], sys.argv[2]
    jobs = []
    for i, r in enumerate(csv.DictReader(open(slice_csv))):
        jobs.append({"id": r["id"], "submit_s": float(r["submit_s"]), "gpus": int(r["gpus"]), "duration_s": int(r["duration_s"]),
                     "walltime_s": float(r["walltime_s"]), "order": i})
    keep = sys.argv[sys.argv.index("--keep") + 1] if "--keep" in sys.argv else None
    root = keep or tempfile.mkdtemp(prefix="trainsim-slurm-")
    runs = {"fifo": ReplaySlurm(os.path.join(root, "builtin"), "builtin", 16817, 17000),
            "backfill": ReplaySlurm(os.path.join(root, "backfill"), "backfill", 16827, 17010)}
    results, errors = {}, []
    try:
        for s in runs.values():
            s.start()

        def replay(policy):
            try:
                results[policy] = runs[policy].replay(jobs)
            except Exception as e:  # reported below, after both replays end
                errors.append(f"{policy}: {e}")

        threads = [threading.Thread(target=replay, args=(p,)) for p in runs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for s in runs.values():
            s.stop()
    if errors:
        print("\n".join(errors))
        return 1
    failed = []
    for policy, slurm in results.items():
        sim = trainsim_starts(trainsim, jobs, slurm, policy, root)
        tau, inverted, worst = compare(f"sched/{'builtin' if policy == 'fifo' else 'backfill'} vs trainsim --policy {policy}", jobs, slurm, sim)
        # FIFO: the same order (no pair inverted). Backfill: the order (tau-b) and every wait within Slurm's latency.
        # sched/builtin launches each job 1-3 s after its resources free, which adds up along chains of waiting
        # jobs; its waits are printed, not held to the bound.
        if policy == "fifo" and inverted > 0:
            failed.append(f"fifo: {inverted} pairs of jobs start in the other order")
        if policy == "backfill" and tau < MIN_TAU:
            failed.append(f"backfill: start order differs (tau-b {tau:.3f} < {MIN_TAU})")
        if policy == "backfill" and worst > MAX_WAIT_DIFF_S:
            failed.append(f"backfill: a wait differs by {worst:.0f} s (> {MAX_WAIT_DIFF_S:.0f} s)")
    if not keep:
        shutil.rmtree(root, ignore_errors=True)
    if failed:
        print("\n".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
