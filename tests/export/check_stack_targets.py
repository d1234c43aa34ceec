#!/usr/bin/env python3
"""End-to-end checks of the framework-stack export targets (hf-trainer, trl, ms-swift, torchtitan) and of the stacks
the schedulers launch for transformers, fsdp and fsdp2 plans.

Every plan is exported, every file parsed (JSON, YAML, TOML, bash), checked against the target's own interface
(upstream_interfaces.py and its snapshots) and against numbers derived here from the scenario file itself: the
layout with its defaults, the batch split, the steps from train_tokens or dataset_samples x epochs. The framework a
target runs is derived here too; the header's prediction must be `trainsim estimate` of the plan under it.

  check_stack_targets.py --trainsim BIN --case hf-trainer|trl|ms-swift|torchtitan|refusals|schedulers
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import tomllib

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import launch_files  # noqa: E402  reading launch files back
import upstream_interfaces as upstream  # noqa: E402  the targets' own interfaces, from upstream/*.json
from launch_files import Failure, check, flags  # noqa: E402

EXAMPLES = "scenarios/examples"
PLANS = "tests/export/plans"


def run(cmd, expect=0, env=None):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    if expect is not None and proc.returncode != expect:
        raise Failure(f"{' '.join(cmd)}: exit {proc.returncode}, expected {expect}\nstdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}")
    return proc


# ---- What the scenario says, derived here --------------------------------------------------------------

SUFFIX = {"": 1, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}


def count(v):
    """100000, "100K", "2T" -> a number (the scenario format's count suffixes)."""
    if isinstance(v, (int, float)):
        return float(v)
    m = re.fullmatch(r"\s*([0-9.]+)\s*([KMBGT]?)\s*", str(v))
    check(m, f"count {v!r}")
    return float(m.group(1)) * SUFFIX[m.group(2)]


def plan_numbers(trainsim, path):
    """The scenario's own layout, batch and run length (defaults: degrees 1, micro-batch 1, the missing data-parallel
    degree and accumulation derived from the GPUs and the global batch), checked against trainsim's resolution."""
    with open(path) as f:
        raw = json.load(f)
    est = json.loads(run([trainsim, "estimate", path, "--format", "json"]).stdout)
    tr, par, hw = raw["training"], raw.get("parallel", {}), raw.get("hardware", {})
    gpn = hw.get("gpus_per_node", 8)
    gpus = hw["num_gpus"] if "num_gpus" in hw else hw["num_nodes"] * gpn
    e = {k: par.get(k, 1) for k in ("tp", "pp", "cp", "ep", "etp", "vpp", "dp_replicate")}
    e["mbs"] = par.get("micro_batch_size", 1)
    e["dp"] = par.get("dp", gpus // (e["tp"] * e["pp"] * e["cp"]))
    e["gbs"] = tr["global_batch_size"]
    e["gas"] = par.get("gradient_accumulation_steps", e["gbs"] // (e["mbs"] * e["dp"]))
    e["sp"] = par.get("sequence_parallel", False)
    e.update(gpus=gpus, nodes=max(1, -(-gpus // gpn)), mode=tr.get("mode", "pretrain"), seq=tr.get("seq_len"), zero=tr.get("zero_stage", 0),
             distopt=tr.get("distributed_optimizer", False), offload=tr.get("offload_optimizer", False), recompute=tr.get("recompute", "none"),
             precision=tr.get("precision", "bf16"), packing=tr.get("packing", True), lora=tr.get("lora", {}), path=path,
             optimizer=tr.get("optimizer", "adamw"))
    e["gpus_per_node"] = gpus // e["nodes"]
    # What trains: adapters under lora / qlora, and under dpo when training.adapters names them.
    e["adapters"] = e["mode"] if e["mode"] in ("lora", "qlora") else tr.get("adapters", "none") if e["mode"] == "dpo" else "none"
    fw = tr.get("framework")
    e["own_framework"] = fw if isinstance(fw, str) else (fw or {}).get("preset") or est["framework"]["name"]
    s = est["scenario"]
    e["seq"] = e["seq"] or s["training"]["seq_len"]
    e["layers"] = s["model"]["num_hidden_layers"]
    e["moe"] = s["model"].get("num_experts", 0) > 0
    # Expert tensor parallelism left out: Megatron-LM's arguments.py sets an unset --expert-tensor-parallel-size to the
    # tensor-parallel size (where ep x tp fits a stage's GPUs and the expert's inner size); other frameworks keep 1.
    if "etp" not in par and e["moe"] and e["own_framework"] == "megatron-core" and e["tp"] > 1:
        inner = s["model"].get("moe_intermediate_size") or s["model"]["intermediate_size"]
        if (gpus // e["pp"]) % (e["ep"] * e["tp"]) == 0 and inner % e["tp"] == 0:
            e["etp"] = e["tp"]
    # The run length: train_tokens / tokens per step (a DPO sample is two sequences), or dataset_samples x epochs / batch.
    pairs = 2 if e["mode"] == "dpo" else 1
    if "train_tokens" in tr:
        e["steps"] = math.ceil(count(tr["train_tokens"]) / (e["gbs"] * pairs * e["seq"]))
    elif "dataset_samples" in tr:
        e["steps"] = math.ceil(count(tr["dataset_samples"]) * tr.get("epochs", 1) / e["gbs"])
    else:
        e["steps"] = 0
    # The plan must be what trainsim resolved, and consistent with itself.
    for key, name in [("tp", "tp"), ("pp", "pp"), ("cp", "cp"), ("dp", "dp"), ("micro_batch_size", "mbs"), ("gradient_accumulation_steps", "gas")]:
        check(s["parallel"][key] == e[name], f"{path}: parallel.{key} resolved as {s['parallel'][key]}, the scenario gives {e[name]}")
    check(e["gbs"] == e["mbs"] * e["dp"] * e["gas"], f"{path}: global batch != micro x dp x accumulation")
    check(gpus == e["tp"] * e["pp"] * e["cp"] * e["dp"], f"{path}: GPUs != tp x pp x cp x dp")
    if e["steps"]:
        check(round(est["training"]["iterations"]) == e["steps"], f"{path}: trainsim's {est['training']['iterations']} steps, derived {e['steps']}")
    return e


def zero_of(e):
    """DeepSpeed's stage for the plan: Megatron's distributed optimizer shards optimizer states = ZeRO-1."""
    return max(e["zero"], 1 if e["distopt"] else 0)


def hf_framework(e):
    """Which framework a Hugging Face target runs (the brief's rule): the plan's own when it is transformers, fsdp or
    deepspeed; DeepSpeed when the plan needs ZeRO-1 or an optimizer-only CPU offload, which the Trainer has only through
    DeepSpeed (FSDP's offload moves parameters too: torch FSDP CPUOffload); transformers otherwise."""
    if e["own_framework"] == "deepspeed" or zero_of(e) == 1 or e["offload"]:
        return "deepspeed"
    return e["own_framework"] if e["own_framework"] in ("transformers", "fsdp") else "transformers"


def expected_framework(target, e):
    if target == "torchtitan":
        return "fsdp2"
    if target == "ms-swift" and (e["own_framework"] == "megatron-core" or max(e["tp"], e["pp"], e["cp"], e["ep"]) > 1):
        return "megatron-core"
    return hf_framework(e)


def check_prediction(trainsim, files, e, framework):
    """Every file with a header names the framework, and its MFU is `trainsim estimate` of the plan under it."""
    args = [trainsim, "estimate", e["path"], "--format", "json"]
    if framework != e["own_framework"]:
        args += ["--framework", framework]
    est = json.loads(run(args).stdout)
    mfu = f"MFU {100 * est['step']['mfu']:.1f}%"
    for name, text in files.items():
        if name.endswith(".json"):
            continue  # TrainingArguments and fsdp_config files hold no comments; ds_config's is checked in its key
        m = re.search(r"Predicted by trainsim for (\S+): step .*?(MFU [0-9.]+%)", text)
        check(m, f"{name}: no 'Predicted by trainsim for <framework>' header line")
        check(m.group(1) == framework, f"{name}: predicted for {m.group(1)}, the target runs {framework}")
        check(m.group(2) == mfu, f"{name}: header {m.group(2)}, trainsim estimate --framework {framework} gives {mfu}")
        if e["steps"]:
            check(f", {e['steps']} steps" in m.group(0) or f", {e['steps']} steps" in text, f"{name}: header does not give {e['steps']} steps")
        if framework != e["own_framework"]:
            check(f"the plan was priced for {e['own_framework']}" in text, f"{name}: header does not say the plan was priced for {e['own_framework']}")


# ---- Reading files back --------------------------------------------------------------------------------

def export(trainsim, path, target, tmp, extra=()):
    out = tempfile.mkdtemp(dir=tmp, prefix=target + "-")
    run([trainsim, "export", path, "--to", target, "-o", out, *extra])
    files = {}
    for name in sorted(os.listdir(out)):
        with open(os.path.join(out, name)) as f:
            files[name] = f.read()
        if name.endswith((".sh", ".sbatch")):
            check(os.access(os.path.join(out, name), os.X_OK), f"{name} is not executable")
    return files


def bash_ok(text, name):
    proc = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True)
    check(proc.returncode == 0, f"{name}: bash -n: {proc.stderr}")


def bash_array(script, name, env_extra=None):
    """The words bash puts in array `name`, with CONFIG_DIR and DATASET set."""
    env = dict(CONFIG_DIR="/cfg", DATASET="my/dataset", NODE_RANK="0", MASTER_ADDR="node0", **(env_extra or {}))
    return launch_files.bash_array(script, name, env)


def yaml_no_header_keys(text, name):
    """A YAML config: it must start with trainsim's comment header and hold a mapping."""
    check(text.startswith("# Generated by trainsim export"), f"{name}: no trainsim header comment")
    d = yaml.safe_load(text)
    check(isinstance(d, dict), f"{name}: not a mapping")
    return d


def fsdp_strategy(e):
    """FSDP1's sharding strategy for the plan (torch.distributed.fsdp.ShardingStrategy, as accelerate's
    FSDP_SHARDING_STRATEGY names it): full shard = ZeRO-3, shard grad op = ZeRO-2 (and the stand-in for ZeRO-1), their
    hybrid forms when the shards are replicated (dp_replicate > 1)."""
    full = e["zero"] >= 3
    if e["dp_replicate"] > 1:
        return "HYBRID_SHARD" if full else "HYBRID_SHARD_ZERO2"
    return "FULL_SHARD" if full else "SHARD_GRAD_OP"


def hf_kind(e, framework):
    if framework == "deepspeed":
        return "DEEPSPEED"
    if e["gpus"] == 1:
        return "NO"
    return "FSDP" if zero_of(e) >= 1 else "MULTI_GPU"


def check_training_arguments(a, e, framework, name, fsdp_in_arguments):
    """TrainingArguments against the plan. The Trainer's global batch is per_device_train_batch_size x processes x
    gradient_accumulation_steps (training_args.py gradient_accumulation_steps help): every GPU is a data-parallel rank here."""
    upstream.check_training_arguments(a, name)
    check(a["per_device_train_batch_size"] == e["mbs"], f"{name}: per_device_train_batch_size {a['per_device_train_batch_size']} != {e['mbs']}")
    check(a["gradient_accumulation_steps"] == e["gas"], f"{name}: gradient_accumulation_steps")
    check(a["per_device_train_batch_size"] * e["gpus"] * a["gradient_accumulation_steps"] == e["gbs"], f"{name}: the Trainer's global batch != {e['gbs']}")
    if e["steps"]:
        check(a["max_steps"] == e["steps"], f"{name}: max_steps {a.get('max_steps')} != {e['steps']}")
    check(a["bf16"] == (e["precision"] in ("bf16", "fp8")) and a["fp16"] == (e["precision"] == "fp16"), f"{name}: bf16 / fp16")
    kind = hf_kind(e, framework)
    # Under FSDP the layers are checkpointed by FSDP's wrapper (fsdp_config activation_checkpointing); TrainingArguments'
    # own switch would add an all-gather per layer (transformers training_args.py _process_fsdp_args warning).
    check(a["gradient_checkpointing"] == (e["recompute"] != "none" and kind != "FSDP"), f"{name}: gradient_checkpointing")
    if kind == "FSDP" and fsdp_in_arguments:
        option = a["fsdp"].split()
        check(option[0] == fsdp_strategy(e).lower() and "auto_wrap" in option, f"{name}: fsdp {a['fsdp']!r}, expected {fsdp_strategy(e).lower()} auto_wrap")
        check(a["fsdp_config"]["activation_checkpointing"] == (e["recompute"] != "none"), f"{name}: fsdp_config.activation_checkpointing")
    else:
        check("fsdp" not in a, f"{name}: fsdp in TrainingArguments")
    check(("deepspeed" in a) == (kind == "DEEPSPEED" and not fsdp_in_arguments), f"{name}: deepspeed iff DeepSpeed runs it")


def check_accelerate(text, e, framework, name="accelerate_config.yaml"):
    c = yaml_no_header_keys(text, name)
    upstream.check_accelerate_config(c, name)
    kind = hf_kind(e, framework)
    check(c["distributed_type"] == kind, f"{name}: distributed_type {c['distributed_type']}, expected {kind}")
    check(c["num_processes"] == e["gpus"] and c["num_machines"] == e["nodes"], f"{name}: num_processes (all machines) / num_machines")
    mp = {"bf16": "bf16", "fp8": "bf16", "fp16": "fp16", "fp32": "no"}[e["precision"]]
    check(c["mixed_precision"] == mp, f"{name}: mixed_precision {c['mixed_precision']}")
    check(("fsdp_config" in c) == (kind == "FSDP") and ("deepspeed_config" in c) == (kind == "DEEPSPEED"), f"{name}: plugin sections")
    if kind == "FSDP":
        f = c["fsdp_config"]
        # accelerate launch defaults fsdp_sharding_strategy to FULL_SHARD and FSDP1 prefers it (commands/launch.py,
        # utils/dataclasses.py FullyShardedDataParallelPlugin): it must be the plan's.
        check(f["fsdp_sharding_strategy"] == fsdp_strategy(e) == f["fsdp_reshard_after_forward"], f"{name}: FSDP sharding {f}")
        check(f["fsdp_activation_checkpointing"] == (e["recompute"] != "none"), f"{name}: fsdp_activation_checkpointing")
        check(f["fsdp_version"] == 1, f"{name}: FSDP1 (the version with HYBRID_SHARD)")
    if kind == "DEEPSPEED":
        d = c["deepspeed_config"]
        check(d["deepspeed_config_file"] == "ds_config.json", f"{name}: deepspeed_config_file")
        # With a config file, accelerate refuses its own ZeRO keys (utils/dataclasses.py _deepspeed_config_checks).
        check(not {"zero_stage", "offload_optimizer_device", "gradient_accumulation_steps", "gradient_clipping"} & set(d), f"{name}: ZeRO keys beside the file")
        check(d["zero3_init_flag"] == (zero_of(e) >= 3), f"{name}: zero3_init_flag")
    return c


def check_ds_config(text, e, name="ds_config.json"):
    c = json.loads(text)
    upstream.check_deepspeed_config(c, name, allow_auto=True)
    check(c["train_batch_size"] == e["gbs"] and c["train_micro_batch_size_per_gpu"] == e["mbs"] and c["gradient_accumulation_steps"] == e["gas"],
          f"{name}: batch sizes")
    check(c["zero_optimization"]["stage"] == zero_of(e), f"{name}: ZeRO stage {c['zero_optimization']['stage']} != {zero_of(e)}")
    check(("offload_optimizer" in c["zero_optimization"]) == bool(e["offload"]), f"{name}: offload_optimizer")
    # The Trainer fills "auto" from TrainingArguments (transformers integrations/deepspeed.py trainer_config_process);
    # without params DeepSpeed would train at its own default learning rate.
    if "optimizer" in c:
        check(c["optimizer"]["params"].get("lr") == "auto", f"{name}: optimizer.params.lr must be auto")
    return c


def check_accelerate_launch(text, e, name, array, config_flag="--config_file"):
    bash_ok(text, name)
    a = flags(bash_array(text, array))
    check(a[config_flag] == "/cfg/accelerate_config.yaml", f"{name}: {config_flag}")
    check(a["--machine_rank"] == "0", f"{name}: --machine_rank $NODE_RANK")
    check(("--main_process_ip" in a) == (e["nodes"] > 1), f"{name}: --main_process_ip iff several nodes")
    return a


# ---- Per target ------------------------------------------------------------------------------------------

def check_hf_trainer(trainsim, path, tmp):
    e = plan_numbers(trainsim, path)
    fw = expected_framework("hf-trainer", e)
    files = export(trainsim, path, "hf-trainer", tmp)
    kind = hf_kind(e, fw)
    want = {"training_args.json", "accelerate_config.yaml", "launch_accelerate.sh"} | ({"ds_config.json"} if kind == "DEEPSPEED" else set())
    check(set(files) == want, f"files {sorted(files)}, expected {sorted(want)}")
    check_prediction(trainsim, files, e, fw)
    args = json.loads(files["training_args.json"])
    check_training_arguments(args, e, fw, "training_args.json", fsdp_in_arguments=False)
    # bitsandbytes' paged optimizers by the names TrainingArguments.optim takes (training_args.py OptimizerNames).
    paged = {"paged_adamw": "paged_adamw_32bit", "paged_adamw8bit": "paged_adamw_8bit"}
    if e["optimizer"] in paged:
        check(args["optim"] == paged[e["optimizer"]], f"training_args.json: optim {args['optim']} for {e['optimizer']}")
    check_accelerate(files["accelerate_config.yaml"], e, fw)
    if kind == "DEEPSPEED":
        check(args["deepspeed"] == "ds_config.json", "training_args.json: deepspeed names ds_config.json")
        check_ds_config(files["ds_config.json"], e)
    sh = files["launch_accelerate.sh"]
    a = check_accelerate_launch(sh, e, "launch_accelerate.sh", "ACCELERATE_ARGS")
    check(("--deepspeed_config_file" in a) == (kind == "DEEPSPEED"), "launch_accelerate.sh: --deepspeed_config_file iff DeepSpeed")
    check(re.search(r'^accelerate launch "\$\{ACCELERATE_ARGS\[@\]\}" \\\n  "\$TRAIN_SCRIPT" "\$CONFIG_DIR/training_args.json"$', sh, re.M),
          "launch_accelerate.sh: accelerate launch ... train.py training_args.json")
    if e["mode"] == "dpo":
        check("WARNING: DPO" in sh, "launch_accelerate.sh: DPO warning")
    print(f"ok  hf-trainer {path}: {fw}, {kind}")


def check_trl(trainsim, path, tmp):
    e = plan_numbers(trainsim, path)
    fw = expected_framework("trl", e)
    files = export(trainsim, path, "trl", tmp)
    kind = hf_kind(e, fw)
    command = "dpo" if e["mode"] == "dpo" else "sft"
    config = f"{command}_config.yaml"
    want = {config, "accelerate_config.yaml", "launch_trl.sh"} | ({"ds_config.json"} if kind == "DEEPSPEED" else set())
    check(set(files) == want, f"files {sorted(files)}, expected {sorted(want)}")
    check_prediction(trainsim, files, e, fw)
    c = yaml_no_header_keys(files[config], config)
    if command == "dpo":
        upstream.check_trl_dpo_config(c, config)
        # trl/trainer/dpo_config.py: max_length bounds each tokenized sequence (prompt + completion); the step prices
        # the reference model's forward every step (precompute_ref_log_probs would drop it).
        check(c["precompute_ref_log_probs"] is False, f"{config}: precompute_ref_log_probs")
        check(isinstance(c["beta"], float), f"{config}: beta")
    else:
        # No SFT snapshot: its only key outside DPOConfig's classes is packing (trl/trainer/sft_config.py at f2cd5771).
        upstream.check_trl_dpo_config({k: v for k, v in c.items() if k != "packing"}, config)
        check(c["packing"] == e["packing"], f"{config}: packing")
    check(c["max_length"] == e["seq"], f"{config}: max_length {c['max_length']} != seq_len {e['seq']}")
    check_training_arguments({k: v for k, v in c.items() if k in training_argument_keys(c)}, e, fw, config, fsdp_in_arguments=False)
    # TRL's configs default gradient_checkpointing and bf16 to true (trl/trainer/base_config.py): both must be written.
    check("gradient_checkpointing" in c and "bf16" in c, f"{config}: gradient_checkpointing and bf16 written")
    if e["adapters"] != "none":
        lora = e["lora"]
        check(c["use_peft"] is True and c["lora_r"] == lora.get("rank", 16) and c["lora_alpha"] == lora.get("alpha", 32), f"{config}: LoRA")
        check(c.get("load_in_4bit", False) == (e["adapters"] == "qlora"), f"{config}: load_in_4bit iff qlora")
    else:
        check("use_peft" not in c, f"{config}: use_peft without adapters")
    check_accelerate(files["accelerate_config.yaml"], e, fw)
    if kind == "DEEPSPEED":
        check_ds_config(files["ds_config.json"], e)
    sh = files["launch_trl.sh"]
    a = check_accelerate_launch(sh, e, "launch_trl.sh", "TRL_ARGS", config_flag="--accelerate_config")
    # trl/cli/accelerate_config.py resolves --accelerate_config into accelerate's --config_file.
    check(a["--config"] == f"/cfg/{config}", "launch_trl.sh: --config")
    check(re.search(rf'^trl {command} "\$\{{TRL_ARGS\[@\]\}}"', sh, re.M), f"launch_trl.sh: trl {command}")
    print(f"ok  trl {path}: {command}, {fw}, {kind}")


def training_argument_keys(c):
    fields, _ = upstream.class_fields("transformers", upstream.load("transformers")["entry"]["TrainingArguments"])
    return [k for k in c if k in fields]


def check_ms_swift(trainsim, path, tmp):
    e = plan_numbers(trainsim, path)
    fw = expected_framework("ms-swift", e)
    files = export(trainsim, path, "ms-swift", tmp)
    check_prediction(trainsim, files, e, fw)
    sh = files["launch_swift.sh"]
    bash_ok(sh, "launch_swift.sh")
    env = dict(re.findall(r'^export (NPROC_PER_NODE|NNODES)=(\d+)', sh, re.M))
    # swift/cli/main.py: these variables make ms-swift start torchrun with --nproc_per_node / --nnodes.
    check(int(env["NPROC_PER_NODE"]) == e["gpus_per_node"] and int(env["NNODES"]) == e["nodes"], "launch_swift.sh: NPROC_PER_NODE / NNODES")
    for var in ("NODE_RANK", "MASTER_ADDR", "MASTER_PORT"):
        check(re.search(rf"^export {var}=", sh, re.M), f"launch_swift.sh: {var}")
    sub = {"pretrain": "pt", "dpo": "rlhf"}.get(e["mode"], "sft")
    program = ("megatron " if fw == "megatron-core" else "swift ") + sub
    check(re.search(rf'^{program} "\$\{{SWIFT_ARGS\[@\]\}}"', sh, re.M), f"launch_swift.sh: runs {program}")
    words = bash_array(sh, "SWIFT_ARGS")
    # `swift` commands inherit transformers' TrainingArguments (swift/arguments/sft_args.py SftArguments <-
    # Seq2SeqTrainingArguments), a base the swift snapshot does not hold: those flags are checked against the transformers
    # snapshot instead (all take one string here), the rest against ms-swift's. The snapshot holds sft and rlhf; pt's
    # arguments are sft's (swift/arguments/pretrain_args.py, swift/megatron/arguments/pretrain_args.py derive from them).
    command = program.replace(" pt", " sft")
    swift_fields, _ = upstream.class_fields("swift", upstream.load("swift")["entry"][command])
    hf_fields, _ = upstream.class_fields("transformers", upstream.load("transformers")["entry"]["TrainingArguments"])
    inherited, kept, i = {}, [], 0
    while i < len(words):
        j = i + 1
        while j < len(words) and not words[j].startswith("--"):
            j += 1
        name = words[i][2:]
        if fw != "megatron-core" and name not in swift_fields and name in hf_fields:
            check(j == i + 2 and upstream.word_ok(words[i + 1], hf_fields[name]["kinds"]),
                  f"launch_swift.sh: --{name} {words[i + 1:j]}: TrainingArguments takes one {hf_fields[name]['kinds']}")
            inherited[name] = words[i + 1]
        else:
            kept += words[i:j]
        i = j
    words = kept
    a = upstream.check_swift_args(command, words, "launch_swift.sh")
    a.update(inherited)
    check(a.get("rlhf_type") == ("dpo" if e["mode"] == "dpo" else None), "launch_swift.sh: --rlhf_type dpo iff dpo")
    check(a["tuner_type"] == ("lora" if e["adapters"] != "none" else "full"), "launch_swift.sh: --tuner_type")
    check(int(a["max_length"]) == e["seq"], "launch_swift.sh: --max_length")
    if fw == "megatron-core":
        for flag, key in [("tensor_model_parallel_size", "tp"), ("pipeline_model_parallel_size", "pp"), ("context_parallel_size", "cp"),
                          ("micro_batch_size", "mbs"), ("global_batch_size", "gbs")]:
            check(int(a[flag]) == e[key], f"launch_swift.sh: --{flag} {a[flag]} != {e[key]}")
        if e["moe"]:
            check(int(a["expert_model_parallel_size"]) == e["ep"] and int(a["expert_tensor_parallel_size"]) == e["etp"], "launch_swift.sh: ep / etp")
        # Megatron's data-parallel size is implied: GPUs / (tp x pp x cp); its accumulation global / (micro x dp).
        dp = e["gpus"] // (int(a["tensor_model_parallel_size"]) * int(a["pipeline_model_parallel_size"]) * int(a["context_parallel_size"]))
        check(dp == e["dp"] and int(a["global_batch_size"]) // (int(a["micro_batch_size"]) * dp) == e["gas"], "launch_swift.sh: implied dp / accumulation")
        check((a.get("sequence_parallel") == "true") == (e["sp"] and e["tp"] > 1), "launch_swift.sh: --sequence_parallel")
        check(a["recompute_granularity"] == e["recompute"], f"launch_swift.sh: --recompute_granularity {a['recompute_granularity']}")
        check(a["use_distributed_optimizer"] == ("true" if zero_of(e) >= 1 else "false"), "launch_swift.sh: --use_distributed_optimizer")
        check((a.get("optimizer_cpu_offload") == "true") == bool(e["offload"]), "launch_swift.sh: --optimizer_cpu_offload")
        if e["steps"]:
            check(int(a["train_iters"]) == e["steps"], "launch_swift.sh: --train_iters")
        check(set(files) == {"launch_swift.sh"}, f"megatron: files {sorted(files)}")
    else:
        check(int(a["per_device_train_batch_size"]) == e["mbs"] and int(a["gradient_accumulation_steps"]) == e["gas"], "launch_swift.sh: batch")
        if e["steps"]:
            check(int(a["max_steps"]) == e["steps"], "launch_swift.sh: --max_steps")
        kind = hf_kind(e, fw)
        check(a["gradient_checkpointing"] == ("true" if e["recompute"] != "none" and kind != "FSDP" else "false"), "launch_swift.sh: --gradient_checkpointing")
        if kind == "DEEPSPEED":
            check(a["deepspeed"] == "/cfg/ds_config.json", "launch_swift.sh: --deepspeed $CONFIG_DIR/ds_config.json")
            check_ds_config(files["ds_config.json"], e)
        if kind == "FSDP":
            check(a["fsdp"] == "/cfg/fsdp_config.json", "launch_swift.sh: --fsdp $CONFIG_DIR/fsdp_config.json")
            f = json.loads(files["fsdp_config.json"])
            # swift/arguments/sft_args.py _init_fsdp: {"fsdp": options, "fsdp_config": {...}}, fsdp_version read with its prefix.
            check(f["fsdp"].split()[0] == fsdp_strategy(e).lower() and f["fsdp_config"]["fsdp_version"] == 1, "fsdp_config.json")
            upstream.check_training_arguments({"fsdp": f["fsdp"], "fsdp_config": f["fsdp_config"]}, "fsdp_config.json")
        if e["packing"]:
            # SftArguments._check_padding_free: packing needs a FlashAttention implementation.
            check(a["attn_impl"] == "flash_attn", "launch_swift.sh: --attn_impl flash_attn with --packing")
    print(f"ok  ms-swift {path}: {program}, {fw}")


def check_torchtitan_files(files, e, name="torchtitan.toml"):
    t = tomllib.loads(files[name])
    upstream.check_torchtitan_config(t, name)
    tr, par = t["training"], t["parallelism"]
    # torchtitan train.py: accumulation = global_batch_size / (local_batch_size x dp); with pp the pipeline splits the local
    # batch into local / pipeline_parallel_microbatch_size micro-batches (distributed/pipeline_parallel.py).
    check(tr["global_batch_size"] == e["gbs"] and tr["seq_len"] == e["seq"], f"{name}: global batch / seq_len")
    dp = par["data_parallel_replicate_degree"] * par["data_parallel_shard_degree"]
    check(dp == e["dp"], f"{name}: replicate x shard {dp} != dp {e['dp']}")
    if e["pp"] > 1:
        check(tr["local_batch_size"] // par["pipeline_parallel_microbatch_size"] == e["gas"] and par["pipeline_parallel_microbatch_size"] == e["mbs"],
              f"{name}: pipeline micro-batches")
        check(tr["global_batch_size"] // (tr["local_batch_size"] * dp) == 1, f"{name}: no accumulation beside the pipeline")
        parts = par["module_fqns_per_model_part"]
        check(len(parts) == e["pp"] * e["vpp"], f"{name}: {len(parts)} model parts != pp x vpp")
        layers = [int(m.split(".")[1]) for part in parts for m in part if m.startswith("layers.")]
        check(layers == list(range(e["layers"])), f"{name}: the parts do not hold layers 0..{e['layers'] - 1} once each, in order")
        check(parts[0][0] == "tok_embeddings" and parts[-1][-2:] == ["norm", "output"], f"{name}: embedding first, norm + output last")
        want = "Interleaved1F1B" if e["vpp"] > 1 else "1F1B"
        check(par["pipeline_parallel_schedule"] == want, f"{name}: schedule {par['pipeline_parallel_schedule']} != {want}")
    else:
        check(tr["local_batch_size"] == e["mbs"] and tr["global_batch_size"] // (tr["local_batch_size"] * dp) == e["gas"], f"{name}: accumulation")
    for key, want in [("tensor_parallel_degree", e["tp"]), ("pipeline_parallel_degree", e["pp"]), ("context_parallel_degree", e["cp"])]:
        check(par[key] == want, f"{name}: {key} {par[key]} != {want}")
    if e["moe"]:
        check(par["expert_parallel_degree"] == e["ep"], f"{name}: expert_parallel_degree")
    if e["dp_replicate"] > 1:
        check(par["data_parallel_replicate_degree"] == e["dp_replicate"], f"{name}: HSDP replicas")
    if e["steps"]:
        check(tr["steps"] == e["steps"], f"{name}: steps {tr['steps']} != {e['steps']}")
    check(t["activation_checkpoint"]["mode"] == e["recompute"], f"{name}: activation_checkpoint.mode")
    return t


def torchrun_counts(text):
    m = re.search(r"torchrun --nnodes (\S+) --nproc-per-node (\S+)", text)
    check(m, "no torchrun --nnodes N --nproc-per-node G")
    return int(m.group(1)), int(m.group(2))


def check_torchtitan(trainsim, path, tmp):
    e = plan_numbers(trainsim, path)
    files = export(trainsim, path, "torchtitan", tmp)
    check(set(files) == {"torchtitan.toml", "launch_torchtitan.sh"}, f"files {sorted(files)}")
    check_prediction(trainsim, files, e, "fsdp2")
    check_torchtitan_files(files, e)
    sh = files["launch_torchtitan.sh"]
    bash_ok(sh, "launch_torchtitan.sh")
    check(torchrun_counts(sh) == (e["nodes"], e["gpus_per_node"]), "launch_torchtitan.sh: torchrun nodes / processes per node")
    check(re.search(r'^  -m torchtitan.train "\$\{TORCHTITAN_ARGS\[@\]\}"', sh, re.M), "launch_torchtitan.sh: -m torchtitan.train")
    check(flags(bash_array(sh, "TORCHTITAN_ARGS"))["--job.config_file"] == "/cfg/torchtitan.toml", "--job.config_file $CONFIG_DIR/torchtitan.toml")
    print(f"ok  torchtitan {path}")


# ---- Cases -------------------------------------------------------------------------------------------------

def case_hf_trainer(trainsim, tmp):
    for path in [f"{EXAMPLES}/llama3-8b-sft-8xh100.json",                  # ZeRO-3, implied fsdp2 -> transformers FSDP full shard
                 f"{EXAMPLES}/qwen3-30b-a3b-sft-16xa800-deepspeed.json",    # deepspeed's own, 2 nodes
                 f"{EXAMPLES}/llama2-7b-hsdp-128xa100.json",                # fsdp's own, HYBRID_SHARD over 16 nodes
                 f"{PLANS}/stack_llama8b_sft_zero2_16xh100.json",            # ZeRO-2 -> SHARD_GRAD_OP
                 f"{PLANS}/stack_llama8b_sft_zero1_8xh100.json",            # ZeRO-1 -> DeepSpeed
                 f"{PLANS}/stack_llama8b_lora_ddp_16xh100_transformers.json",  # DDP
                 f"{PLANS}/stack_llama8b_sft_paged_16xh100_transformers.json",  # PagedAdamW: optim paged_adamw_32bit
                 f"{EXAMPLES}/dpo-llama3-8b-8xh100.json"]:                  # DPO: warned, trl's job
        check_hf_trainer(trainsim, path, tmp)


def case_trl(trainsim, tmp):
    for path in [f"{EXAMPLES}/dpo-llama3-8b-8xh100.json",
                 f"{PLANS}/stack_llama8b_dpo_lora_8xh100_transformers.json",  # DPO + LoRA: use_peft, no reference copy
                 f"{EXAMPLES}/llama3-70b-lora-8xa100.json",
                 f"{EXAMPLES}/qwen2.5-7b-qlora-1x4090.json",
                 f"{EXAMPLES}/qwen3-30b-a3b-sft-16xa800-deepspeed.json",
                 f"{PLANS}/stack_llama8b_lora_ddp_16xh100_transformers.json"]:
        check_trl(trainsim, path, tmp)


def case_ms_swift(trainsim, tmp):
    # The project's ms-swift examples (Megatron-SWIFT and swift + DeepSpeed ZeRO-3), then FSDP and DDP plans.
    for path in [f"{EXAMPLES}/qwen3-30b-a3b-sft-16xa800-megatron.json",
                 f"{EXAMPLES}/qwen3-30b-a3b-dpo-8xa100-megatron.json",
                 f"{EXAMPLES}/qwen3-30b-a3b-sft-16xa800-deepspeed.json",
                 f"{EXAMPLES}/llama3-8b-sft-8xh100.json",
                 f"{PLANS}/stack_llama8b_lora_ddp_16xh100_transformers.json",
                 f"{PLANS}/stack_llama8b_dpo_lora_8xh100_transformers.json",
                 "tests/cli/llama405b_pp8_vpp4.json"]:
        check_ms_swift(trainsim, path, tmp)


def case_torchtitan(trainsim, tmp):
    for path in ["tests/cli/fsdp2_pp_traits.json",
                 f"{PLANS}/stack_llama8b_pretrain_pp4_vpp2_32xh100_fsdp2.json",
                 f"{EXAMPLES}/llama3-8b-sft-8xh100.json",
                 f"{EXAMPLES}/llama2-7b-hsdp-128xa100.json"]:
        check_torchtitan(trainsim, path, tmp)


def case_refusals(trainsim, tmp):
    """Pairs a target cannot run: exit 2, a message naming --to, the target and why, nothing written."""
    cases = [
        # The transformers preset runs no tensor parallelism (presets/frameworks/transformers.json tp_available).
        ("tests/cli/zero3_tp2.json", "hf-trainer", r'--to: got "hf-trainer"; expected a target that runs this .* layout \(hf-trainer runs transformers\).*tp'),
        ("tests/cli/zero3_tp2.json", "trl", r'--to: got "trl"; expected a target that runs this .* layout \(trl runs transformers\)'),
        (f"{EXAMPLES}/llama2-7b-hsdp-128xa100.json", "trl", r'--to: got "trl"; expected a target for pretraining .*this plan is pretrain'),
        (f"{EXAMPLES}/gpt3-175b-pretrain-1024xa100.json", "trl", r"this plan is pretrain"),
    ]
    for path, target, pattern in cases:
        out = os.path.join(tmp, f"never-{target}")
        proc = run([trainsim, "export", path, "--to", target, "-o", out], expect=None)
        check(proc.returncode == 2, f"{path} --to {target}: exit {proc.returncode}, expected 2\n{proc.stderr}")
        check(re.search(pattern, proc.stderr, re.S), f"{path} --to {target}: stderr {proc.stderr!r} does not match {pattern!r}")
        check(not os.path.exists(out), f"{path} --to {target}: wrote {out}")
        print(f"ok  refused {target} {path}: {proc.stderr.strip()[:160]}")


def stack_program(framework):
    """What a scheduler's script must start for a plan of this framework (the stacks of hf_trainer.cpp and torchtitan.cpp)."""
    if framework == "fsdp2":
        return "-m torchtitan.train", "torchtitan.toml"
    return '"${TRAIN_SCRIPT:-train.py}"', "training_args.json"


def check_stack_config(name, content, e):
    if name == "torchtitan.toml":
        check_torchtitan_files({name: content}, e, name)
    else:
        a = json.loads(content)
        check_training_arguments(a, e, e["own_framework"], name, fsdp_in_arguments=True)


def container_scripts(doc):
    """The bash scripts of every container in a manifest (pod templates anywhere under it)."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key == "containers":
                for c in value:
                    yield c["args"][0]
            else:
                yield from container_scripts(value)
    elif isinstance(doc, list):
        for value in doc:
            yield from container_scripts(value)


def case_schedulers(trainsim, tmp):
    for path in [f"{PLANS}/stack_llama8b_lora_ddp_16xh100_transformers.json",  # transformers: DDP
                 f"{EXAMPLES}/llama2-7b-hsdp-128xa100.json",                   # fsdp: HYBRID_SHARD
                 f"{EXAMPLES}/llama3-8b-sft-8xh100.json",                      # fsdp2 (implied by ZeRO-3): torchtitan
                 "tests/cli/fsdp2_pp_traits.json"]:                            # fsdp2 with tp and pp
        e = plan_numbers(trainsim, path)
        program, config = stack_program(e["own_framework"])
        # slurm: the config file beside train.sbatch, read from the submit folder.
        files = export(trainsim, path, "slurm", tmp)
        check(set(files) == {config, "train.sbatch"}, f"slurm {path}: files {sorted(files)}")
        sb = files["train.sbatch"]
        bash_ok(sb, "train.sbatch")
        check(torchrun_counts(sb) == (e["nodes"], e["gpus_per_node"]), "train.sbatch: torchrun counts")
        check(re.search(rf"^  {re.escape(program)} \"\$\{{\w+\[@\]\}}\"", sb, re.M), f"train.sbatch does not start {program}")
        check(f'"$CONFIG_DIR/{config}"' in sb and 'CONFIG_DIR="${CONFIG_DIR:-$SLURM_SUBMIT_DIR}"' in sb, f"train.sbatch: $CONFIG_DIR/{config}")
        check_stack_config(config, files[config], e)
        # volcano / kubeflow: the config file in a ConfigMap mounted at /etc/trainsim, the stack started in each pod.
        for target, manifest, kind in [("volcano", "volcano-job.yaml", "Job"), ("kubeflow", "pytorchjob.yaml", "PyTorchJob")]:
            files = export(trainsim, path, target, tmp)
            docs = [d for d in yaml.safe_load_all(files[manifest]) if d]
            maps = [d for d in docs if d["kind"] == "ConfigMap"]
            jobs = [d for d in docs if d["kind"] == kind]
            check(len(maps) == 1 and len(jobs) == 1, f"{manifest}: one ConfigMap and one {kind}")
            check_stack_config(config, maps[0]["data"][config], e)
            for script in container_scripts(jobs[0]):
                bash_ok(script, manifest)
                check(torchrun_counts(script) == (e["nodes"], e["gpus_per_node"]), f"{manifest}: torchrun counts")
                check(re.search(rf"^  {re.escape(program)} \"\$\{{\w+\[@\]\}}\"", script, re.M), f"{manifest}: does not start {program}")
                check('CONFIG_DIR="${CONFIG_DIR:-/etc/trainsim}"' in script and f'"$CONFIG_DIR/{config}"' in script,
                      f"{manifest}: does not read {config} from the ConfigMap mount")
            (upstream.check_volcano_job if target == "volcano" else upstream.check_pytorchjob)(jobs[0], manifest)
        print(f"ok  schedulers {path}: {e['own_framework']} -> {program}")


CASES = {"hf-trainer": case_hf_trainer, "trl": case_trl, "ms-swift": case_ms_swift, "torchtitan": case_torchtitan,
         "refusals": case_refusals, "schedulers": case_schedulers}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trainsim", required=True)
    ap.add_argument("--case", required=True, choices=sorted(CASES))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        try:
            CASES[args.case](os.path.abspath(args.trainsim), tmp)
        except (Failure, upstream.InterfaceError) as ex:
            print(f"FAIL {args.case}: {type(ex).__name__}: {ex}")
            return 1
    print(f"all {args.case} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
