#!/usr/bin/env python3
"""End-to-end checks of `trainsim export`: every target's files parse (YAML, JSON, bash) and carry the
plan's parallel degrees, batch sizes and node/GPU counts; --dry-run prints the same files and writes none.

  check_export.py --trainsim BIN --scenario FILE      export a scenario file (its layout is fixed)
  check_export.py --trainsim BIN --plan-json          export the JSON of `trainsim plan --format json --top 1`
  check_export.py --trainsim BIN --estimate FILE      export the JSON of `trainsim estimate --format json FILE`
  check_export.py --trainsim BIN --errors             bad input: exit code 2, a message naming it, nothing written
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

import yaml

import upstream_interfaces as upstream  # the targets' own interfaces, from upstream/*.json

TARGETS = ["megatron", "deepspeed", "torchrun", "slurm", "volcano", "kubeflow"]


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


def run(cmd, cwd=None, expect=0):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=cwd)
    if expect is not None and proc.returncode != expect:
        raise Failure(f"{' '.join(cmd)}: exit {proc.returncode}, expected {expect}\nstdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}")
    return proc


# ---- What the plan says --------------------------------------------------------------------------

def expected_from(scenario, layout, num_gpus, step, training_cost, framework):
    hw, tr, model = scenario["hardware"], scenario["training"], scenario["model"]
    gpn = hw["gpus_per_node"]
    nodes = max(1, -(-num_gpus // gpn))
    e = {
        "tp": layout["tp"], "pp": layout["pp"], "vpp": layout["vpp"], "dp": layout["dp"], "cp": layout["cp"],
        "ep": layout["ep"], "etp": layout["etp"], "mbs": layout["micro_batch_size"],
        "gas": layout["gradient_accumulation_steps"], "sp": layout["sequence_parallel"],
        "gbs": tr["global_batch_size"], "seq": tr["seq_len"], "precision": tr["precision"],
        "zero": layout.get("zero_stage", tr["zero_stage"]), "distopt": tr.get("distributed_optimizer", False),
        "offload": layout.get("offload_optimizer", tr.get("offload_optimizer", False)),
        "recompute": layout.get("recompute", tr["recompute"]),
        "layers": model["num_hidden_layers"], "moe": model.get("num_experts", 0) > 0,
        "num_gpus": num_gpus, "nodes": nodes, "gpus_per_node": num_gpus // nodes,
        "time_known": training_cost.get("time_to_train_s", 0) > 0, "mfu": step.get("mfu", 0),
        "step_s": step.get("time_s", 0), "framework": framework, "scenario_doc": None,
    }
    check(e["gbs"] == e["mbs"] * e["dp"] * e["gas"], f"plan itself inconsistent: {e}")
    check(e["num_gpus"] == e["tp"] * e["pp"] * e["cp"] * e["dp"], f"plan itself inconsistent: {e}")
    return e


def expected_for_scenario(trainsim, path):
    est = json.loads(run([trainsim, "estimate", path, "--format", "json"]).stdout)
    s = est["scenario"]
    e = expected_from(s, s["parallel"], s["hardware"]["num_gpus"], est["step"], est["training"], est["framework"]["name"])
    e["scenario_doc"] = s
    # The scenario's own fixed values, independently of trainsim's resolution.
    with open(path) as f:
        raw = json.load(f)
    for key, name in [("tp", "tp"), ("pp", "pp"), ("vpp", "vpp"), ("dp", "dp"), ("cp", "cp"), ("micro_batch_size", "mbs")]:
        if key in raw.get("parallel", {}):
            check(raw["parallel"][key] == e[name], f"{path}: parallel.{key} {raw['parallel'][key]} resolved as {e[name]}")
    if isinstance(raw.get("hardware"), dict) and "num_nodes" in raw["hardware"]:
        check(raw["hardware"]["num_nodes"] == e["nodes"], f"{path}: num_nodes")
    return e


def expected_for_plan(plan_path):
    with open(plan_path) as f:
        doc = json.load(f)
    p = doc["plans"][0]
    return expected_from(doc["scenario"], p["layout"], p["num_gpus"], p["step"], p["training"], p["framework"]["name"])


def expected_for_estimate(est_path):
    with open(est_path) as f:
        est = json.load(f)
    s = est["scenario"]
    e = expected_from(s, s["parallel"], s["hardware"]["num_gpus"], est["step"], est["training"], est["framework"]["name"])
    e["scenario_doc"] = s
    return e


# ---- Reading the files back ------------------------------------------------------------------------

def parse_args(words):
    """Megatron-style argument words -> {flag: value or True} (a flag followed by a flag has no value)."""
    out, i = {}, 0
    while i < len(words):
        w = words[i]
        check(w.startswith("--"), f"unexpected argument word {w!r} in {words}")
        if i + 1 < len(words) and not words[i + 1].startswith("--"):
            out[w] = words[i + 1]
            i += 2
        else:
            out[w] = True
            i += 1
    return out


def bash_array(script, name):
    """The words bash puts in array `name`, evaluated by bash itself (LR unset, so its default)."""
    m = re.search(rf"^{name}=\(\n.*?^\)\n", script, re.S | re.M)
    check(m, f"no {name}=( ... ) block")
    env = {k: v for k, v in os.environ.items() if k != "LR"}
    proc = subprocess.run(["bash", "-c", m.group(0) + f'printf "%s\\n" "${{{name}[@]}}"'], capture_output=True, text=True, env=env)
    check(proc.returncode == 0, f"bash could not evaluate {name}: {proc.stderr}")
    return proc.stdout.splitlines()


def bash_syntax_ok(script, what):
    proc = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True)
    check(proc.returncode == 0, f"{what}: bash -n failed: {proc.stderr}")


def container_args(script, path):
    """The Megatron arguments a container's bash script runs pretrain_gpt.py with, checked against Megatron-LM's flags
    (bash evaluates the array, so a ${VAR:-default} word is its default)."""
    bash_syntax_ok(script, "container script")
    check(re.search(r'"\$MEGATRON_DIR/pretrain_gpt\.py" "\$\{MEGATRON_ARGS\[@\]\}"', script), "container script does not run pretrain_gpt.py")
    words = bash_array(script, "MEGATRON_ARGS")
    upstream.check_megatron_args(words, path)
    return script, parse_args(words)


def torchrun_counts(text):
    m = re.search(r"torchrun --nnodes (\S+) --nproc-per-node (\S+)", text)
    check(m, "no torchrun --nnodes N --nproc-per-node G")
    return int(m.group(1)), int(m.group(2))


def check_megatron_args(a, e, full=True):
    """The Megatron argument list against the plan."""
    tp, pp, cp = int(a["--tensor-model-parallel-size"]), int(a["--pipeline-model-parallel-size"]), int(a["--context-parallel-size"])
    check((tp, pp, cp) == (e["tp"], e["pp"], e["cp"]), f"tp/pp/cp {tp}/{pp}/{cp} != plan {e['tp']}/{e['pp']}/{e['cp']}")
    check(e["num_gpus"] // (tp * pp * cp) == e["dp"], f"implied dp {e['num_gpus'] // (tp * pp * cp)} != plan {e['dp']}")
    if e["vpp"] > 1:
        check(int(a["--num-layers-per-virtual-pipeline-stage"]) == e["layers"] // (e["pp"] * e["vpp"]), "layers per virtual stage")
    else:
        check("--num-layers-per-virtual-pipeline-stage" not in a, "virtual stages without vpp")
    if e["moe"]:
        check(int(a["--expert-model-parallel-size"]) == e["ep"], "ep")
        check(int(a["--expert-tensor-parallel-size"]) == e["etp"], "etp")
    check(("--sequence-parallel" in a) == (e["sp"] and e["tp"] > 1), "--sequence-parallel")
    mbs, gbs = int(a["--micro-batch-size"]), int(a["--global-batch-size"])
    check((mbs, gbs) == (e["mbs"], e["gbs"]), f"micro/global batch {mbs}/{gbs} != plan {e['mbs']}/{e['gbs']}")
    check(gbs == mbs * e["dp"] * e["gas"], "global batch != micro x dp x accumulation")
    check(int(a["--seq-length"]) == e["seq"], "--seq-length")
    if not full:
        return
    check(int(a["--num-layers"]) == e["layers"], "--num-layers")
    check(("--use-distributed-optimizer" in a) == (e["zero"] >= 1 or e["distopt"]), "--use-distributed-optimizer")
    check(("--bf16" in a) == (e["precision"] in ("bf16", "fp8")), "--bf16")
    check(("--recompute-activations" in a) == (e["recompute"] == "selective"), "--recompute-activations")
    check((a.get("--recompute-granularity") == "full") == (e["recompute"] == "full"), "--recompute-granularity full")
    check(int(a["--train-iters"]) > 0, "--train-iters")


def header_ok(text, path, e):
    lines = text.splitlines()
    first = lines[1] if lines and lines[0].startswith("#!") else lines[0]
    check(first.startswith("#") and "trainsim" in first, f"{path}: first comment does not name trainsim: {first!r}")
    head = "\n".join(lines[:8])
    check(re.search(r"tp \d+", head), f"{path}: header does not give the layout")
    if e["mfu"] > 0:
        check("MFU" in head and "step" in head, f"{path}: header does not give the predicted step time and MFU")


# ---- Per-target checks ------------------------------------------------------------------------------

def needs_one_connection(e):
    """megatron/training/arguments.py: tensor or context parallelism wants CUDA_DEVICE_MAX_CONNECTIONS=1, which
    Megatron-FSDP (ZeRO-2/3 exports) refuses."""
    return (e["tp"] > 1 or e["cp"] > 1) and e["zero"] < 2


def check_megatron(files, e):
    text = files["pretrain_gpt.sh"]
    header_ok(text, "pretrain_gpt.sh", e)
    bash_syntax_ok(text, "pretrain_gpt.sh")
    words = bash_array(text, "MEGATRON_ARGS")
    upstream.check_megatron_args(words, "pretrain_gpt.sh")
    check_megatron_args(parse_args(words), e)
    check(torchrun_counts(text) == (e["nodes"], e["gpus_per_node"]), "torchrun nodes / processes per node")
    check(("CUDA_DEVICE_MAX_CONNECTIONS=1" in text) == needs_one_connection(e), "CUDA_DEVICE_MAX_CONNECTIONS=1 iff tp or cp > 1 without FSDP")


def check_deepspeed(files, e):
    c = json.loads(files["ds_config.json"])
    upstream.check_deepspeed_config(c, "ds_config.json")
    check("trainsim" in c["comment"][0], "ds_config.json: comment does not name trainsim")
    check(c["train_batch_size"] == e["gbs"], "train_batch_size")
    check(c["train_micro_batch_size_per_gpu"] == e["mbs"], "train_micro_batch_size_per_gpu")
    check(c["gradient_accumulation_steps"] == e["gas"], "gradient_accumulation_steps")
    check(c["train_batch_size"] == c["train_micro_batch_size_per_gpu"] * c["gradient_accumulation_steps"] * e["dp"],
          "train_batch_size != micro x accumulation x dp (DeepSpeed rejects that)")
    check(c["bf16"]["enabled"] == (e["precision"] in ("bf16", "fp8")), "bf16.enabled")
    check(c["fp16"]["enabled"] == (e["precision"] == "fp16"), "fp16.enabled")
    check(c["zero_optimization"]["stage"] == max(e["zero"], 1 if e["distopt"] else 0), "zero_optimization.stage")
    check(("offload_optimizer" in c["zero_optimization"]) == bool(e["offload"]), "offload_optimizer")
    if e["offload"]:
        check(c["zero_optimization"]["offload_optimizer"]["device"] == "cpu", "offload device")
    check(("activation_checkpointing" in c) == (e["recompute"] != "none"), "activation_checkpointing iff recompute")
    check(isinstance(c["gradient_clipping"], (int, float)), "gradient_clipping")
    sh = files["launch_deepspeed.sh"]
    header_ok(sh, "launch_deepspeed.sh", e)
    bash_syntax_ok(sh, "launch_deepspeed.sh")
    m = re.search(r"^deepspeed .*--num_nodes (\d+) --num_gpus (\d+) \\\n  (\S+) \"\$\{(\w+)\[@\]\}\"", sh, re.M)
    check(m, "no `deepspeed ... --num_nodes N --num_gpus G` line running a program with its argument array")
    check((int(m.group(1)), int(m.group(2))) == (e["nodes"], e["gpus_per_node"]), "deepspeed nodes / GPUs")
    args = parse_args(bash_array(sh, m.group(4)))
    check(args["--deepspeed_config"].endswith("/ds_config.json"), "--deepspeed_config $CONFIG_DIR/ds_config.json")
    # tp or pp > 1 runs as Megatron-DeepSpeed (DeepSpeed has no tensor parallelism of its own; its pipeline engine needs a
    # PipelineModule): pretrain_gpt.py with the layout in the fork's names and --zero-stage as in ds_config.json.
    megatron_ds = e["tp"] > 1 or e["pp"] > 1
    check(("pretrain_gpt.py" in m.group(3)) == megatron_ds, f"program {m.group(3)}: Megatron-DeepSpeed iff tp > 1 or pp > 1")
    if megatron_ds:
        upstream.check_megatron_args(bash_array(sh, m.group(4)), "launch_deepspeed.sh", snapshot="megatron_deepspeed")
        check((int(args["--tensor-model-parallel-size"]), int(args["--pipeline-model-parallel-size"])) == (e["tp"], e["pp"]), "tp / pp")
        check(int(args["--zero-stage"]) == c["zero_optimization"]["stage"] and args.get("--deepspeed") is True, "--zero-stage, --deepspeed")
        check((int(args["--micro-batch-size"]), int(args["--global-batch-size"])) == (e["mbs"], e["gbs"]), "micro / global batch")


def check_torchrun(files, e):
    text = files["launch_torchrun.sh"]
    header_ok(text, "launch_torchrun.sh", e)
    bash_syntax_ok(text, "launch_torchrun.sh")
    check(re.search(r"--rdzv-backend c10d --rdzv-endpoint \"\$MASTER_ADDR:29500\"", text), "c10d rendezvous at $MASTER_ADDR:29500")
    check(torchrun_counts(text) == (e["nodes"], e["gpus_per_node"]), "torchrun nodes / processes per node")
    # torchrun starts the plan's own stack: Megatron-LM for these megatron-core plans.
    check(e["framework"] == "megatron-core" and '"$MEGATRON_DIR/pretrain_gpt.py" "${MEGATRON_ARGS[@]}"' in text, "torchrun runs the plan's Megatron-LM")
    words = bash_array(text, "MEGATRON_ARGS")
    upstream.check_megatron_args(words, "launch_torchrun.sh")
    check_megatron_args(parse_args(words), e)


def check_slurm(files, e):
    text = files["train.sbatch"]
    header_ok(text, "train.sbatch", e)
    bash_syntax_ok(text, "train.sbatch")
    sb = dict(re.findall(r"^#SBATCH (--[a-z-]+)(?:=(\S*))?$", text, re.M))
    check(int(sb["--nodes"]) == e["nodes"], f"#SBATCH --nodes={sb.get('--nodes')} != {e['nodes']}")
    check(sb["--ntasks-per-node"] == "1", "--ntasks-per-node=1")
    check(int(sb["--gpus-per-node"]) == e["gpus_per_node"], "--gpus-per-node")
    check(int(sb["--cpus-per-task"]) > 0, "--cpus-per-task")
    check("--exclusive" in sb, "--exclusive")
    check(("--time" in sb) == e["time_known"], "--time iff a predicted time to train")
    if "--time" in sb:
        check(re.fullmatch(r"\d+-\d\d:\d\d:\d\d", sb["--time"]), f"--time format {sb['--time']}")
    # #SBATCH lines must come before the first command.
    first_command = next(i for i, l in enumerate(text.splitlines()) if l.strip() and not l.startswith("#"))
    check(all(i < first_command for i, l in enumerate(text.splitlines()) if l.startswith("#SBATCH")), "#SBATCH after a command")
    check(re.search(r"^# export NCCL_IB_HCA=", text, re.M), "NCCL_IB_HCA placeholder")
    check("NCCL_SOCKET_IFNAME" in text, "NCCL_SOCKET_IFNAME comment")
    check(bool(re.search(r"^export CUDA_DEVICE_MAX_CONNECTIONS=1", text, re.M)) == needs_one_connection(e),
          "CUDA_DEVICE_MAX_CONNECTIONS=1 iff tp or cp > 1 without FSDP")
    check(re.search(r"^srun .*torchrun", text, re.M), "srun + torchrun")
    check(torchrun_counts(text) == (e["nodes"], e["gpus_per_node"]), "torchrun nodes / processes per node")
    words = bash_array(text, "MEGATRON_ARGS")
    upstream.check_megatron_args(words, "train.sbatch")
    check_megatron_args(parse_args(words), e)


def job_document(text, kind):
    """The job of a manifest (after the ConfigMap of the stack's files, when it has some)."""
    docs = [d for d in yaml.safe_load_all(text) if d]
    jobs = [d for d in docs if d.get("kind") == kind]
    check(len(jobs) == 1, f"one {kind} in the manifest, found kinds {[d.get('kind') for d in docs]}")
    for d in docs:
        check(d.get("kind") in (kind, "ConfigMap"), f"unexpected document {d.get('kind')}")
    return jobs[0]


def gpu_limit(pod_template):
    c = pod_template["spec"]["containers"][0]
    return int(c["resources"]["limits"]["nvidia.com/gpu"]), c


def check_volcano(files, e, queue="default", job="", **_):
    text = files["volcano-job.yaml"]
    header_ok(text, "volcano-job.yaml", e)
    y = job_document(text, "Job")
    upstream.check_volcano_job(y, "volcano-job.yaml")
    check(y["apiVersion"] == "batch.volcano.sh/v1alpha1" and y["kind"] == "Job", "apiVersion / kind")
    if job:
        check(y["metadata"]["name"] == job, "--job-name")
    s = y["spec"]
    check(s["schedulerName"] == "volcano", "schedulerName")
    check(s["queue"] == queue, f"queue {s['queue']} != {queue}")
    check(len(s["tasks"]) == 1, "one task")
    check(s["minAvailable"] == s["tasks"][0]["replicas"] == e["nodes"], f"minAvailable {s['minAvailable']} == replicas == nodes {e['nodes']}")
    check("env" in s["plugins"] and "svc" in s["plugins"], "env and svc plugins")
    check(any(p["event"] == "PodFailed" for p in s["policies"]), "policies")
    gpus, c = gpu_limit(s["tasks"][0]["template"])
    check(gpus == e["gpus_per_node"], "nvidia.com/gpu limit")
    words, a = container_args(c["args"][0], "volcano-job.yaml")
    check_megatron_args(a, e)
    check(torchrun_counts(words) == (e["nodes"], e["gpus_per_node"]), "torchrun nodes / processes per node")


def check_kubeflow(files, e, queue="default", job="", **_):
    text = files["pytorchjob.yaml"]
    header_ok(text, "pytorchjob.yaml", e)
    y = job_document(text, "PyTorchJob")
    upstream.check_pytorchjob(y, "pytorchjob.yaml")
    check(y["apiVersion"] == "kubeflow.org/v1" and y["kind"] == "PyTorchJob", "apiVersion / kind")
    if job:
        check(y["metadata"]["name"] == job, "--job-name")
    s = y["spec"]
    check("elasticPolicy" not in s, "elasticPolicy omitted")
    check(str(s["nprocPerNode"]) == str(e["gpus_per_node"]), "nprocPerNode")
    check(s["runPolicy"]["schedulingPolicy"]["queue"] == queue, "queue")
    r = s["pytorchReplicaSpecs"]
    check(r["Master"]["replicas"] == 1, "one Master")
    total = sum(spec["replicas"] for spec in r.values())
    check(total == e["nodes"], f"Master + Worker replicas {total} != nodes {e['nodes']}")
    check(("Worker" in r) == (e["nodes"] > 1), "Workers iff more than one node")
    for role, spec in r.items():
        gpus, c = gpu_limit(spec["template"])
        check(c["name"] == "pytorch", f"{role}: the container must be named pytorch")
        check(gpus == e["gpus_per_node"], f"{role}: nvidia.com/gpu limit")
        words, a = container_args(c["args"][0], f"pytorchjob.yaml {role}")
        check_megatron_args(a, e)
        check(torchrun_counts(words) == (e["nodes"], e["gpus_per_node"]), "torchrun nodes / processes per node")


CHECKS = {"megatron": check_megatron, "deepspeed": check_deepspeed, "torchrun": check_torchrun, "slurm": check_slurm,
          "volcano": check_volcano, "kubeflow": check_kubeflow}


def split_dry_run(stdout, out_dir):
    """`==> PATH <==` headers -> {name relative to out_dir: content}."""
    files, name, buf = {}, None, []
    for line in stdout.splitlines(keepends=True):
        m = re.match(r"^==> (.+) <==\n$", line)
        if m:
            if name is not None:
                files[name] = "".join(buf)
            name, buf = os.path.relpath(m.group(1), out_dir), []
        elif line.startswith("dry run: ") and name is not None:
            files[name] = "".join(buf)
            name = None
        elif name is not None:
            buf.append(line)
    check(name is None, "dry run output does not end with its summary line")
    # Each file (ending in a newline) is followed by one blank separator line.
    for k, v in files.items():
        check(v.endswith("\n\n"), f"dry run: {k} is not followed by a blank line")
    return {k: v[:-1] for k, v in files.items()}


def target_framework(target, e):
    """The framework a target runs the plan with: Megatron-LM is megatron-core; DeepSpeed runs tp or pp > 1 as
    Megatron-DeepSpeed (DeepSpeed has no tensor parallelism of its own); launchers and schedulers start the plan's own."""
    if target == "megatron":
        return "megatron-core"
    if target == "deepspeed":
        return "megatron-deepspeed" if e["tp"] > 1 or e["pp"] > 1 else "deepspeed"
    return e["framework"]


def estimate_under(trainsim, e, framework, tmp):
    """`trainsim estimate` of the plan's own scenario with training.framework set: its JSON, or None when the layout cannot
    run there (exit 2) or does not fit in memory. An independent route to the figures a re-priced export must carry."""
    doc = json.loads(json.dumps(e["scenario_doc"]))
    doc["training"]["framework"] = framework
    path = os.path.join(tmp, f"under-{framework}.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    proc = run([trainsim, "estimate", path, "--format", "json"], expect=None)
    if proc.returncode == 2:
        return None
    check(proc.returncode == 0, f"estimate under {framework}: exit {proc.returncode}: {proc.stderr}")
    est = json.loads(proc.stdout)
    return est if est["memory"]["fits"] else None


def check_priced_for(text, path, framework, mfu, plan_framework):
    """The header names the framework the figures were priced for, with that framework's MFU."""
    m = re.search(r"^(?:# |\s*\")Predicted by trainsim for ([\w-]+): step [^,]*, MFU ([\d.]+)%", text, re.M)
    check(m, f"{path}: no 'Predicted by trainsim for FRAMEWORK: step ..., MFU ...' header line")
    check(m.group(1) == framework, f"{path}: priced for {m.group(1)}, expected {framework}")
    check(m.group(2) == f"{100 * mfu:.1f}", f"{path}: MFU {m.group(2)}% != {100 * mfu:.1f}% that estimate gives under {framework}")
    check(("Re-evaluated for " + framework) in text if framework != plan_framework else "Re-evaluated" not in text,
          f"{path}: says it was re-evaluated iff the target runs another framework than the plan's {plan_framework}")


def export_and_check(trainsim, plan, e, tmp):
    for target in TARGETS:
        extra = ["--queue", "research", "--job-name", "my-run-1"] if target in ("volcano", "kubeflow") else []
        framework, mfu = target_framework(target, e), e["mfu"]
        if framework != e["framework"] and e["scenario_doc"] is not None:
            est = estimate_under(trainsim, e, framework, tmp)
            if est is None:
                # The layout cannot run or does not fit under the target's framework: refused, saying what would fit.
                out = os.path.join(tmp, f"refused-{target}")
                proc = run([trainsim, "export", plan, "--to", target, "-o", out] + extra, expect=2)
                check(re.search(rf'--to: got "{target}"; expected a target .*trainsim plan (\S+ )?--framework {framework}', proc.stderr),
                      f"{target}: refusal does not say why and what fits: {proc.stderr}")
                check(not os.path.exists(out), f"{target}: refused but wrote {out}")
                print(f"ok  {target}: refused ({framework}): {proc.stderr.strip()[:160]}")
                continue
            mfu = est["step"]["mfu"]
        # Dry run, from an empty folder: prints, writes nothing.
        cwd = os.path.join(tmp, f"cwd-{target}")
        os.makedirs(cwd)
        dry_out = os.path.join(tmp, f"dry-{target}")
        proc = run([trainsim, "export", plan, "--to", target, "-o", dry_out, "--dry-run"] + extra, cwd=cwd)
        check(not os.path.exists(dry_out), f"{target}: --dry-run created {dry_out}")
        check(os.listdir(cwd) == [], f"{target}: --dry-run wrote {os.listdir(cwd)}")
        printed = split_dry_run(proc.stdout, dry_out)
        check(printed, f"{target}: --dry-run printed no file")
        # Real run into a folder.
        out = os.path.join(tmp, f"out-{target}")
        proc = run([trainsim, "export", plan, "--to", target, "-o", out] + extra)
        written = {}
        for name in sorted(os.listdir(out)):
            with open(os.path.join(out, name)) as f:
                written[name] = f.read()
            check(f"wrote {os.path.join(out, name)}" in proc.stdout, f"{target}: did not say it wrote {name}")
            if name.endswith((".sh", ".sbatch")):
                check(os.access(os.path.join(out, name), os.X_OK), f"{target}: {name} is not executable")
        check(written == printed, f"{target}: --dry-run printed {sorted(printed)} differently from what was written {sorted(written)}")
        try:
            for name, text in written.items():
                if e["mfu"] > 0 and e["scenario_doc"] is not None:
                    check_priced_for(text, name, framework, mfu, e["framework"])
            if extra:
                CHECKS[target](written, e, queue="research", job="my-run-1")
            else:
                CHECKS[target](written, e)
        except (Failure, upstream.InterfaceError, KeyError, ValueError, TypeError, yaml.YAMLError,
                json.JSONDecodeError) as ex:
            raise Failure(f"{target} from {plan}: {type(ex).__name__}: {ex}") from ex
        print(f"ok  {target}: {', '.join(sorted(written))}")


def check_errors(trainsim, scenario, tmp):
    plan_path = os.path.join(tmp, "plan.json")
    with open(plan_path, "w") as f:
        f.write(run([trainsim, "plan", "--format", "json", "--top", "1"]).stdout)
    with open(plan_path) as f:
        plan = json.load(f)

    def variant(name, change):
        doc = json.loads(json.dumps(plan))
        change(doc)
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    no_plans = variant("no_plans.json", lambda d: d.update(plans=[]))
    no_layout = variant("no_layout.json", lambda d: d["plans"][0].pop("layout"))
    partial_layout = variant("partial_layout.json", lambda d: d["plans"][0]["layout"].pop("tp"))
    bad_tp = variant("bad_tp.json", lambda d: d["plans"][0]["layout"].update(tp=3))
    cases = [
        ([scenario, "--to", "nope"], r'--to: got "nope"; expected one of .*megatron'),
        ([no_plans, "--to", "megatron"], r"/plans: got \[\]; expected at least one plan with a fixed layout"),
        ([no_layout, "--to", "slurm"], r"/plans/0/layout: got nothing"),
        ([partial_layout, "--to", "volcano"], r"/plans/0/layout/tp: got nothing; expected a fixed layout"),
        ([bad_tp, "--to", "kubeflow"], r"/plans/0/layout"),
        ([scenario, "--to", "volcano", "--job-name", "Bad_Name"], r"--job-name: got \"Bad_Name\""),
        ([os.path.join(tmp, "missing.json"), "--to", "torchrun"], r"no such file"),
    ]
    for args, pattern in cases:
        out = os.path.join(tmp, "never-written")
        proc = run([trainsim, "export"] + args + ["-o", out], expect=None)
        check(proc.returncode == 2, f"{' '.join(args)}: exit {proc.returncode}, expected 2\n{proc.stderr}")
        check(re.search(pattern, proc.stderr), f"{' '.join(args)}: stderr {proc.stderr!r} does not match {pattern!r}")
        check(not os.path.exists(out), f"{' '.join(args)}: wrote {out} despite the error")
        print(f"ok  exit 2: {proc.stderr.strip()}")
    # --to lists the registered exporters in --help.
    help_text = run([trainsim, "export", "--help"]).stdout
    for target in TARGETS:
        check(target in help_text, f"export --help does not list {target}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trainsim", required=True)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--scenario")
    g.add_argument("--plan-json", action="store_true")
    g.add_argument("--estimate")
    g.add_argument("--errors", metavar="SCENARIO")
    args = ap.parse_args()
    trainsim = os.path.abspath(args.trainsim)
    with tempfile.TemporaryDirectory(prefix="trainsim-export-") as tmp:
        try:
            if args.errors:
                check_errors(trainsim, os.path.abspath(args.errors), tmp)
                return 0
            if args.scenario:
                plan = os.path.abspath(args.scenario)
                e = expected_for_scenario(trainsim, plan)
            elif args.estimate:
                plan = os.path.join(tmp, "estimate.json")
                with open(plan, "w") as f:
                    f.write(run([trainsim, "estimate", os.path.abspath(args.estimate), "--format", "json"]).stdout)
                e = expected_for_estimate(plan)
            else:
                plan = os.path.join(tmp, "plan.json")
                with open(plan, "w") as f:
                    f.write(run([trainsim, "plan", "--format", "json", "--top", "1"]).stdout)
                e = expected_for_plan(plan)
            print("plan:", {k: e[k] for k in ("tp", "pp", "vpp", "dp", "cp", "ep", "mbs", "gbs", "gas", "nodes", "gpus_per_node")})
            export_and_check(trainsim, plan, e, tmp)
        except Failure as ex:
            print("FAIL:", ex)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
