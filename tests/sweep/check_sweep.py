"""trainsim sweep end to end, without an engine: points numbered and recorded, shards merged to the bytes of a
single-process run, a rerun that skips finished points, status and merge of a partial sweep, bad sweep files
refused with their JSON path, a point rerun by hand from its recorded arguments, and the Kubernetes Indexed Job
checked against the batch/v1 Job schema (tests/export/upstream/batch_job.json) and run locally index by index with
JOB_COMPLETION_INDEX set, as the Job controller would.

Usage: check_sweep.py TRAINSIM"""
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "export"))
import upstream_interfaces as upstream  # noqa: E402

GRID = os.path.join(HERE, "plan_grid.json")
FORMATS = ("table", "csv", "json", "md", "html")


class Failure(Exception):
    pass


def check(ok, what):
    if not ok:
        raise Failure(what)


def run(cmd, expect=0, env=None, cwd=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=600)
    if p.returncode != expect:
        raise Failure(f"{' '.join(cmd)}: exit {p.returncode}, expected {expect}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return p


def merged(trainsim, out):
    return {f: run([trainsim, "sweep", "merge", out, "--format", f]).stdout for f in FORMATS}


def shards_and_merge(trainsim, tmp):
    # 2 models x 3 GPU types x 4 sizes = 24 points, numbered with the last axis fastest.
    one = os.path.join(tmp, "one")
    run([trainsim, "sweep", GRID, "--out", one])
    rec = json.load(open(os.path.join(one, "points", "000013.json")))
    check(rec["inputs"] == {"model": "llama3-70b", "gpu": "h100-sxm-80gb", "gpus": 16}, f"point 13 inputs {rec['inputs']}")
    check(rec["args"][:2] == ["trainsim", "plan"] and "--set" in rec["args"] and "--gpus" in rec["args"], f"point 13 args {rec['args']}")
    reference = merged(trainsim, one)
    rows = list(csv.DictReader(io.StringIO(reference["csv"])))
    check(len(rows) == 24 and [int(r["point"]) for r in rows] == list(range(24)), "24 rows in index order")
    check(json.loads(reference["json"])["complete"] is True, "complete")
    check(reference["html"].count('<svg class="chart"') == 4, "the report draws time to train, cost, MFU and step time")

    # The same sweep as 3 shards run at once: the merge is byte-identical in every format.
    three = os.path.join(tmp, "three")
    procs = [subprocess.Popen([trainsim, "sweep", GRID, "--out", three, "--shard", f"{i}/3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for i in range(3)]
    for p in procs:
        _, err = p.communicate(timeout=600)
        check(p.returncode == 0, f"a shard failed: {err.decode()}")
    sharded = merged(trainsim, three)
    for f in FORMATS:
        check(sharded[f] == reference[f], f"--format {f}: 3 shards merge to other bytes than one process")
    print("ok  24 points in one process and in 3 shards merge to the same bytes (table, csv, json, md, html)")

    # A rerun skips what is there; a lost point is run again, and only it.
    os.remove(os.path.join(three, "points", "000004.json"))
    before = os.stat(os.path.join(three, "points", "000001.json")).st_mtime_ns
    out = run([trainsim, "sweep", GRID, "--out", three, "--shard", "1/3", "--format", "json"]).stdout
    s = json.loads(out)
    check(s["points"] == 8 and s["run"] == 1 and s["skipped"] == 7, f"rerun of shard 1/3: {s}")
    check(os.stat(os.path.join(three, "points", "000001.json")).st_mtime_ns == before, "a finished point was rewritten")
    check(merged(trainsim, three)["csv"] == reference["csv"], "after the rerun")
    print("ok  a rerun of a shard runs only its missing point (1 run, 7 skipped)")

    # A partial sweep: status says what is missing; merge refuses it unless asked.
    part = os.path.join(tmp, "part")
    run([trainsim, "sweep", GRID, "--out", part, "--shard", "0/3"])
    st = json.loads(run([trainsim, "sweep", "status", part, "--format", "json"]).stdout)
    check(st["done"] == 8 and st["missing"] == [i for i in range(24) if i % 3] and st["complete"] is False, f"status {st}")
    err = run([trainsim, "sweep", "merge", part], expect=2).stderr
    check("16 of 24 points are missing (1, 2, 4, 5" in err and "trainsim sweep status" in err, f"partial merge: {err}")
    m = json.loads(run([trainsim, "sweep", "merge", part, "--allow-partial", "--format", "json"]).stdout)
    check(m["complete"] is False and m["missing"] == 16 and len(m["rows"]) == 8, "partial merge with --allow-partial")
    print("ok  status lists 16 missing points; merge refuses the partial sweep (exit 2) unless --allow-partial")

    # A point rerun by hand from its recorded arguments gives the same result.
    rec = json.load(open(os.path.join(one, "points", "000021.json")))
    again = json.loads(run([trainsim] + rec["args"][1:], cwd=os.getcwd()).stdout)
    check(again["plans"][0]["step"]["time_s"] == rec["result"]["plans"][0]["step"]["time_s"], "point 21 by hand")
    print("ok  point 21 rerun by hand from its recorded arguments")
    return reference


def other_commands(trainsim, tmp):
    """simulate (one SimGrid engine a process: each point runs in a child of its own), cluster (several runs follow
    each other in one process) and export (its files under DIR/files/NNNNNN) at two or three points each."""
    root = os.path.dirname(os.path.dirname(HERE))
    sweeps = {
        "simulate": {"command": "simulate", "axes": [{"name": "nodes_per_leaf", "flag": "--nodes-per-leaf", "values": [1, 2]}]},
        "cluster": {"command": "cluster", "args": ["--trace", "csv:" + os.path.join(root, "tests/sim/cluster/head_of_line.csv"), "--nodes", "2"],
                    "axes": [{"name": "policy", "flag": "--policy", "values": ["fifo", "easy", "backfill"]}], "seed": 3},
        "export": {"command": "export", "args": [os.path.join(root, "scenarios/examples/llama3-8b-sft-8xh100.json")],
                   "axes": [{"name": "to", "flag": "--to", "values": ["slurm", "kubeflow"]}]},
    }
    for name, doc in sweeps.items():
        path, out = os.path.join(tmp, f"{name}.json"), os.path.join(tmp, f"{name}-out")
        with open(path, "w") as f:
            json.dump(doc, f)
        run([trainsim, "sweep", path, "--out", out])
        m = json.loads(run([trainsim, "sweep", "merge", out, "--format", "json"]).stdout)
        check(m["failed"] == 0 and m["done"] == len(doc["axes"][0]["values"]), f"{name}: {[r.get('error') for r in m['rows']]}")
    check(os.path.exists(os.path.join(tmp, "export-out", "files", "000000", "train.sbatch")), "export: the point's files")
    print("ok  simulate (a process a point), cluster and export sweeps: every point done")


def refusals(trainsim, tmp):
    def bad(doc, want, name):
        path = os.path.join(tmp, f"bad-{name}.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        err = run([trainsim, "sweep", path, "--out", os.path.join(tmp, "bad-out")], expect=2).stderr
        check(re.search(want, err), f"{name}: {err.strip()}")

    base = {"command": "estimate", "axes": [{"name": "gpus", "flag": "--gpus", "values": [8, 16]}]}
    bad(dict(base, command="train"), r"/command: got \"train\"; expected one of estimate, plan", "command")
    bad(dict(base, axes=[{"name": "x", "path": "hardware/gpu", "values": [1]}]), r"/axes/0/path: got \"hardware/gpu\"", "pointer")
    bad(dict(base, axes=[{"flag": "--gpus", "range": {"from": 8, "to": 4, "times": 2}}]), r"/axes/0/range/to: got 4; expected at least from", "range")
    bad(dict(base, axes=[{"zip": [{"flag": "--gpus", "values": [8, 16]}, {"flag": "--tp", "values": [1]}]}]), r"/axes/0/zip/1: .*as many values", "zip")
    bad(dict(base, axes=[{"flag": "--gpus", "values": [8]}, {"flag": "--gpus", "values": [16]}]), r"/axes/1: .*distinct names", "names")
    bad(dict(base, columns={"x": "step"}), r"/columns/x: got \"step\"; expected a JSON pointer", "column")
    bad(dict(base, axes=[{"flag": "--gpus", "range": {"from": 1, "to": 1e9, "step": 1}}]), r"/axes/0/range: .*at most 100000 values", "huge")
    err = run([trainsim, "sweep", GRID, "--out", os.path.join(tmp, "x"), "--shard", "3/3"], expect=2).stderr
    check("--shard: got \"3/3\"; expected I/N with 0 <= I < N" in err, f"--shard: {err}")
    # One folder holds one sweep.
    other = os.path.join(tmp, "other.json")
    with open(other, "w") as f:
        json.dump(base, f)
    err = run([trainsim, "sweep", other, "--out", os.path.join(tmp, "one")], expect=2).stderr
    check("it holds another sweep" in err, f"another sweep in the folder: {err}")
    print("ok  bad sweep files, shards and folders refused with exit 2 and the JSON path")


def kubernetes(trainsim, tmp, reference):
    files = os.path.join(tmp, "k8s")
    run([trainsim, "sweep", "submit", GRID, "--to", "k8s", "--shards", "5", "--max-parallel", "2", "-o", files])
    docs = list(yaml.safe_load_all(open(os.path.join(files, "sweep-job.yaml"))))
    config = next(d for d in docs if d and d["kind"] == "ConfigMap")
    job = next(d for d in docs if d and d["kind"] == "Job")
    upstream.check_batch_job(job, "sweep-job.yaml")
    spec = job["spec"]
    check(spec["completionMode"] == "Indexed" and spec["completions"] == 5 and spec["parallelism"] == 2, f"Job spec {spec}")
    pod = spec["template"]["spec"]
    check(pod["restartPolicy"] == "Never", "Indexed Jobs retry by pod: restartPolicy Never")
    c = pod["containers"][0]
    check(c["resources"]["requests"]["cpu"] == "1" and c["resources"]["requests"]["memory"].endswith("Mi"), f"requests {c['resources']}")
    merge_job = yaml.safe_load(open(os.path.join(files, "sweep-merge-job.yaml")))
    upstream.check_batch_job(merge_job, "sweep-merge-job.yaml")
    # Every index run here as the Job controller runs it: /sweep holds the ConfigMap, /results the volume.
    sweep_dir, results = os.path.join(tmp, "k8s-sweep"), os.path.join(tmp, "k8s-results")
    os.makedirs(sweep_dir)
    for key, text in config["data"].items():
        with open(os.path.join(sweep_dir, key), "w") as f:
            f.write(text)
    script = c["args"][0].replace(" /sweep/", f" {sweep_dir}/").replace(" /results", f" {results}").replace("exec trainsim", "exec " + trainsim)
    for index in range(5):
        run(["/bin/sh", "-c", script], env=dict(os.environ, JOB_COMPLETION_INDEX=str(index)))
    got = run([trainsim, "sweep", "merge", results, "--format", "csv"]).stdout
    check(got == reference["csv"], "the Indexed Job's 5 indexes merge to another table than one process")
    print("ok  Kubernetes Indexed Job: batch/v1 schema, 5 indexes run with JOB_COMPLETION_INDEX merge to the single-process CSV")


def main():
    trainsim = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="trainsim-sweep-")
    try:
        reference = shards_and_merge(trainsim, tmp)
        other_commands(trainsim, tmp)
        refusals(trainsim, tmp)
        kubernetes(trainsim, tmp, reference)
    except (Failure, upstream.InterfaceError, KeyError, ValueError, StopIteration) as e:
        print(f"FAIL: {type(e).__name__}: {e}")
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
