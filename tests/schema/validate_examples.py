#!/usr/bin/env python3
"""Validate trainsim scenario files against scenarios/schema/scenario.schema.json.

Usage:
  validate_examples.py SCHEMA [FILE...] [--cases FILE...] [--section KIND FILE...] [--scenario FILE...]

Each FILE is checked according to the mode in force when it appears on the command line:
  (default)        auto: a file with a top-level "cases" list is a reference file (as --cases); a file that
                   another scenario on the command line names as a section ("hardware": "clusters/x.json"), or
                   that lies in a folder named clusters/hardware/models/training/parallel, is validated as that
                   section; anything else is a whole scenario.
  --scenario       whole scenario files.
  --cases          reference files ({"cases": [...]}): each case, without its "id", "source" and "measured"
                   keys, is validated as a scenario and must hold all four sections.
  --section KIND   files holding just one section (model, training, parallel or hardware).

Section values that are paths (a string ending in .json or holding a /) are resolved relative to the scenario
file and validated as that section; model.hf_config and calibration paths must exist.

Then a set of deliberately bad documents must be REJECTED (so the schema cannot silently accept everything)
and a set of good inline documents accepted. Prints "ok PATH" per file, or FAIL with the errors, and
"ok negative cases" / "ok positive cases"; exits 1 on any failure, 2 on bad usage.

Only the standard library and jsonschema (Debian python3-jsonschema >= 4.10) are used.
"""
import copy
import json
import os
import sys

import jsonschema

SECTIONS = ("model", "training", "parallel", "hardware")
CASE_DROP = ("id", "source", "measured")
DIR_SECTIONS = {
    "clusters": "hardware",
    "hardware": "hardware",
    "models": "model",
    "model": "model",
    "training": "training",
    "parallel": "parallel",
}


class Checker:
    def __init__(self, schema):
        jsonschema.Draft202012Validator.check_schema(schema)
        self.schema = schema
        self.validators = {"scenario": jsonschema.Draft202012Validator(schema)}
        for kind in SECTIONS:
            sub = {
                "$schema": schema.get("$schema", "https://json-schema.org/draft/2020-12/schema"),
                "$defs": schema["$defs"],
                "$ref": "#/$defs/" + kind,
            }
            self.validators[kind] = jsonschema.Draft202012Validator(sub)

    def errors(self, doc, kind="scenario"):
        """Readable error lines for `doc` validated as `kind` ("scenario" or a section name)."""
        out = []
        for err in sorted(self.validators[kind].iter_errors(doc), key=lambda e: list(map(str, e.absolute_path))):
            out.extend(describe(err))
        return out


def where(err):
    parts = []
    for p in err.absolute_path:
        parts.append("[%d]" % p if isinstance(p, int) else ("." + p if parts else p))
    return "".join(parts) or "(top level)"


def describe(err, hint=None):
    """Error lines; for oneOf/anyOf, descend into the alternative whose type matched the value."""
    if err.context:
        branches = {}
        for sub in err.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        plausible = [
            errs for errs in branches.values()
            if not any(e.validator == "type" and len(e.relative_path) == 0 for e in errs)
        ]
        if len(plausible) == 1:
            lines = []
            for sub in plausible[0]:
                lines.extend(describe(sub, err.schema.get("description") if isinstance(err.schema, dict) else None))
            return lines
        best = jsonschema.exceptions.best_match(err.context)
        if best is not None:
            return ["%s: %s (closest: %s)" % (where(err), err.message, best.message)]
    if err.validator == "pattern" and hint and len(err.relative_path) == 0:
        # Unit strings: say what is expected rather than print the regular expression.
        return ["%s: %r is not %s" % (where(err), err.instance, hint[0].lower() + hint[1:])]
    return ["%s: %s" % (where(err), err.message)]


def is_path(value):
    return isinstance(value, str) and (value.endswith(".json") or "/" in value)


def check_scenario(checker, doc, base_dir, label_prefix=""):
    """Errors of a whole scenario, including section files it names by path."""
    errs = [label_prefix + e for e in checker.errors(doc, "scenario")]
    if not isinstance(doc, dict):
        return errs
    for kind in SECTIONS:
        value = doc.get(kind)
        if is_path(value):
            path = os.path.normpath(os.path.join(base_dir, value))
            if not os.path.isfile(path):
                errs.append("%s%s: section file not found: %s" % (label_prefix, kind, path))
                continue
            try:
                with open(path, encoding="utf-8") as f:
                    section = json.load(f)
            except (OSError, ValueError) as e:
                errs.append("%s%s: cannot read %s: %s" % (label_prefix, kind, path, e))
                continue
            errs.extend("%s%s -> %s: %s" % (label_prefix, kind, value, e) for e in checker.errors(section, kind))
    model = doc.get("model")
    if isinstance(model, dict) and isinstance(model.get("hf_config"), str):
        path = os.path.normpath(os.path.join(base_dir, model["hf_config"]))
        if not os.path.isfile(path):
            errs.append("%smodel.hf_config: file not found: %s" % (label_prefix, path))
    if isinstance(doc.get("calibration"), str):
        path = os.path.normpath(os.path.join(base_dir, doc["calibration"]))
        if not os.path.isfile(path):
            errs.append("%scalibration: file not found: %s" % (label_prefix, path))
    return errs


def check_cases(checker, doc, base_dir):
    if not isinstance(doc, dict) or not isinstance(doc.get("cases"), list):
        return ['expected an object with a "cases" list']
    errs = []
    for i, case in enumerate(doc["cases"]):
        label = "case %s" % (case.get("id", "#%d" % i) if isinstance(case, dict) else "#%d" % i)
        if not isinstance(case, dict):
            errs.append("%s: not an object" % label)
            continue
        scenario = {k: v for k, v in case.items() if k not in CASE_DROP}
        missing = [s for s in SECTIONS if s not in scenario]
        if missing:
            errs.append("%s: missing section(s) %s" % (label, ", ".join(missing)))
        errs.extend(check_scenario(checker, scenario, base_dir, label + ": "))
    return errs


# ----------------------------------------------------------------------------------------------------
# Documents that must be rejected / accepted. Each: (label, kind, document).
GOOD_SCENARIO = {
    "model": "llama3-8b",
    "training": {"mode": "sft", "seq_len": 4096, "global_batch_size": 64},
    "parallel": {"tp": 1, "micro_batch_size": 1},
    "hardware": {"gpu": "h100-sxm-80gb", "gpus_per_node": 8, "num_nodes": 1},
}


def with_change(path, value, base=GOOD_SCENARIO):
    doc = copy.deepcopy(base)
    node = doc
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value
    return doc


NEGATIVE = [
    ("no model section", "scenario", {"training": {"seq_len": 4096}}),
    ("training.mode = finetune", "scenario", with_change(["training", "mode"], "finetune")),
    ("parallel.tp = 0", "scenario", with_change(["parallel", "tp"], 0)),
    ("unknown key parallel.tensor_parallel", "scenario", with_change(["parallel", "tensor_parallel"], 2)),
    ("unknown key training.zero", "scenario", with_change(["training", "zero"], 3)),
    ("unknown key hardware.gpus", "scenario", with_change(["hardware", "gpus"], 8)),
    ("unknown top-level key hardwre", "scenario", with_change(["hardwre"], "dgx")),
    ("parallel.pp = 1.5", "scenario", with_change(["parallel", "pp"], 1.5)),
    ("parallel.micro_batch_size = 0", "scenario", with_change(["parallel", "micro_batch_size"], 0)),
    ("parallel.dp = \"8\"", "scenario", with_change(["parallel", "dp"], "8")),
    ("parallel.schedule = zb-v", "scenario", with_change(["parallel", "schedule"], "zb-v")),
    ("parallel.rank_order = tp,dp", "scenario", with_change(["parallel", "rank_order"], "tp,dp")),
    ("training.zero_stage = 4", "scenario", with_change(["training", "zero_stage"], 4)),
    ("training.optimizer = lion", "scenario", with_change(["training", "optimizer"], "lion")),
    ("training.precision = int8", "scenario", with_change(["training", "precision"], "int8")),
    ("training.recompute = true", "scenario", with_change(["training", "recompute"], True)),
    ("training.train_tokens = 15Q", "scenario", with_change(["training", "train_tokens"], "15Q")),
    ("training.train_tokens = -1", "scenario", with_change(["training", "train_tokens"], -1)),
    ("training.global_batch_size = null", "scenario", with_change(["training", "global_batch_size"], None)),
    ("training.lora.rank = 0", "scenario", with_change(["training", "lora"], {"rank": 0})),
    ("training.lora.dropout (unknown)", "scenario", with_change(["training", "lora"], {"rank": 8, "dropout": 0.1})),
    ("model.hidden_act = swish", "scenario", with_change(["model"], {"preset": "llama3-8b", "hidden_act": "swish"})),
    ("model.num_hidden_layers = 0", "scenario", with_change(["model"], {"preset": "llama3-8b", "num_hidden_layers": 0})),
    ("model.position_embedding_type = absolute", "scenario",
     with_change(["model"], {"preset": "llama3-8b", "position_embedding_type": "absolute"})),
    ("model written out without hidden_size", "scenario",
     with_change(["model"], {"num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 32000})),
    ("model = 7", "scenario", with_change(["model"], 7)),
    ("hardware = empty string", "scenario", with_change(["hardware"], "")),
    ("hardware.gpu.memory = 80 gigs", "scenario", with_change(["hardware", "gpu"], {"name": "x", "memory": "80 gigs"})),
    ("hardware.gpu.memory = 80GiB/s", "scenario", with_change(["hardware", "gpu"], {"name": "x", "memory": "80GiB/s"})),
    ("hardware.gpu.memory_bandwidth = 3.35TB", "scenario",
     with_change(["hardware", "gpu"], {"name": "x", "memory_bandwidth": "3.35TB"})),
    ("hardware.gpu.peak_flops.int8 (unknown)", "scenario",
     with_change(["hardware", "gpu"], {"name": "x", "peak_flops": {"int8": "1979TFLOPS"}})),
    ("hardware.gpu.tdp = 700 V", "scenario", with_change(["hardware", "gpu"], {"name": "x", "tdp": "700 V"})),
    ("hardware.price_per_gpu_hour = 2.5 EUR", "scenario", with_change(["hardware", "price_per_gpu_hour"], "2.5 EUR")),
    ("hardware.num_nodes = 0", "scenario", with_change(["hardware", "num_nodes"], 0)),
    ("hardware.inter_node.nic_per_node (typo)", "scenario",
     with_change(["hardware", "inter_node"], {"fabric": "ib-ndr-400", "nic_per_node": 8})),
    ("hardware.inter_node.fabric.kind = nvlinks", "scenario",
     with_change(["hardware", "inter_node"], {"fabric": {"name": "x", "kind": "nvlinks"}})),
    ("hardware.intra_node.latency = 5 parsecs", "scenario",
     with_change(["hardware", "intra_node"], {"name": "x", "latency": "5 parsecs"})),
    ("training.adapters = ia3", "scenario", with_change(["training", "adapters"], "ia3")),
    ("training.offload_params = disk", "scenario", with_change(["training", "offload_params"], "disk")),
    ("training.optimizer = paged_lion", "scenario", with_change(["training", "optimizer"], "paged_lion")),
    ("data.format = parquet", "scenario", with_change(["data"], {"format": "parquet"})),
    ("data.workers_per_gpu = 1000", "scenario", with_change(["data"], {"workers_per_gpu": 1000})),
    ("data.storage = tape", "scenario", with_change(["data"], {"storage": "tape"})),
    ("data.worker (typo)", "scenario", with_change(["data"], {"worker": 2})),
    ("reliability.checkpoint.upload_to = tape", "scenario", with_change(["reliability"], {"checkpoint": {"upload_to": "tape"}})),
    ("reliability.checkpoint.contents = optimizer", "scenario", with_change(["reliability"], {"checkpoint": {"contents": "optimizer"}})),
    ("reliability.checkpoint.emergency = yes", "scenario", with_change(["reliability"], {"checkpoint": {"emergency": "yes"}})),
    ("hardware section file with unknown key", "hardware", {"gpu": "h100-sxm-80gb", "nodes": 16}),
    ("hardware section file that is a string", "hardware", "clusters/dgx.json"),
]

POSITIVE = [
    ("minimal scenario", "scenario", GOOD_SCENARIO),
    ("model only (all other sections default)", "scenario", {"model": "llama3-8b"}),
    ("null degrees and derived micro-batch", "scenario",
     with_change(["parallel"], {"tp": 8, "pp": None, "dp": None, "vpp": None, "micro_batch_size": None,
                                "gradient_accumulation_steps": None})),
    ("pasted Hugging Face config with extra keys", "scenario",
     with_change(["model"], {"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 32, "hidden_size": 4096,
                             "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
                             "hidden_act": "silu", "vocab_size": 128256, "rope_theta": 500000.0,
                             "rms_norm_eps": 1e-05, "torch_dtype": "bfloat16", "head_dim": None})),
    ("model preset with overrides and MoE aliases", "scenario",
     with_change(["model"], {"preset": "mixtral-8x7b", "num_local_experts": 16, "num_experts_per_tok": 2,
                             "hidden_dropout": "10%"})),
    ("model from hf_config path only", "scenario", with_change(["model"], {"hf_config": "hf/config.json"})),
    ("sections as paths", "scenario",
     {"model": "models/my.json", "training": "training/sft.json", "parallel": "layouts/tp8.json",
      "hardware": "clusters/dgx-h100-ib-ndr.json", "calibration": "calibration/h100.json"}),
    ("custom GPU and fabrics with unit strings", "scenario",
     with_change(["hardware"], {
         "gpu": {"name": "h200-sxm-141gb", "memory": "141GB", "memory_bandwidth": "4.8TB/s",
                 "peak_flops": {"fp32": "67TFLOPS", "tf32": "494.5TFLOPS", "fp16": "989.5 TFLOP/s",
                                "bf16": 989.5e12, "fp8": "1.979PFLOPS"},
                 "tdp": "0.7kW", "price_per_hour": "$3.5", "intra_node": "nvlink4-nvswitch", "gpus_per_node": 8,
                 "source": "datasheet"},
         "num_gpus": 64, "host_memory": "2TiB", "price_per_gpu_hour": "3.2 USD",
         "intra_node": {"name": "nvl", "kind": "nvlink", "bandwidth": "450GB/s", "latency": "3us", "nvls": True},
         "inter_node": {"fabric": {"name": "roce", "kind": "roce", "bandwidth": "400Gbps", "latency": 5e-6},
                        "nics_per_node": 8}})),
    ("training with all fields", "scenario",
     with_change(["training"], {"preset": "x", "mode": "qlora", "seq_len": 2048, "global_batch_size": 16,
                                "train_tokens": "1.5B", "dataset_samples": "100K", "epochs": 2.5,
                                "precision": "fp8", "grad_precision": "bf16", "optimizer": "adam8bit",
                                "zero_stage": 3, "distributed_optimizer": False, "recompute": "selective",
                                "flash_attention": True, "offload_optimizer": True, "packing": False,
                                "lora": {"rank": 64, "alpha": 16, "target_modules": ["q_proj", "v_proj"]}})),
    ("DPO over QLoRA adapters with ZeRO-Infinity offload", "scenario",
     with_change(["training"], {"mode": "dpo", "adapters": "qlora", "seq_len": 2048, "global_batch_size": 8, "zero_stage": 3,
                                "offload_params": "nvme", "offload_optimizer": True, "offload_optimizer_device": "nvme"})),
    ("a paged 8-bit optimizer", "scenario", with_change(["training", "optimizer"], "paged_adamw8bit")),
    ("a data section with a tier object", "scenario",
     with_change(["data"], {"storage": {"tier": "object-store", "per_node_bandwidth": "10MB/s", "concurrent_jobs": 4},
                            "format": "text", "bytes_per_token": 3.5, "bytes_per_sample": "1MB", "cpu_per_sample": "20ms",
                            "tokenize_rate": "2M", "workers_per_gpu": 0})),
    ("checkpoint policies", "scenario",
     with_change(["reliability"], {"checkpoint": {"storage": "local-nvme", "upload_to": "object-store", "contents": "weights",
                                                  "emergency": True, "method": "async"}})),
    ("hardware section file", "hardware",
     {"gpu": "h100-sxm-80gb", "gpus_per_node": 8, "num_nodes": 16, "intra_node": "nvlink4-nvswitch",
      "inter_node": {"fabric": "ib-ndr-400", "nics_per_node": 8}}),
]


def run_inline(checker):
    ok = True
    accepted = [label for label, kind, doc in NEGATIVE if not checker.errors(doc, kind)]
    if accepted:
        ok = False
        print("FAIL negative cases: the schema accepted %d bad document(s):" % len(accepted))
        for label in accepted:
            print("  accepted: " + label)
    else:
        print("ok negative cases (%d rejected)" % len(NEGATIVE))
    rejected = [(label, checker.errors(doc, kind)) for label, kind, doc in POSITIVE]
    rejected = [(label, errs) for label, errs in rejected if errs]
    if rejected:
        ok = False
        print("FAIL positive cases: the schema rejected %d good document(s):" % len(rejected))
        for label, errs in rejected:
            print("  rejected: " + label)
            for e in errs:
                print("    " + e)
    else:
        print("ok positive cases (%d accepted)" % len(POSITIVE))
    return ok


def parse_args(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if len(argv) >= 2 else 2)
    schema_path = argv[1]
    files = []
    mode = "auto"
    args = iter(argv[2:])
    for a in args:
        if a == "--cases":
            mode = "cases"
        elif a == "--scenario":
            mode = "scenario"
        elif a == "--section":
            kind = next(args, None)
            if kind not in SECTIONS:
                print("--section needs one of: " + ", ".join(SECTIONS), file=sys.stderr)
                sys.exit(2)
            mode = kind
        elif a.startswith("--"):
            print("unknown option " + a, file=sys.stderr)
            sys.exit(2)
        else:
            files.append((a, mode))
    return schema_path, files


def main(argv):
    schema_path, files = parse_args(argv)
    try:
        with open(schema_path, encoding="utf-8") as f:
            schema = json.load(f)
        checker = Checker(schema)
    except (OSError, ValueError, jsonschema.exceptions.SchemaError) as e:
        print("FAIL %s: not a usable schema: %s" % (schema_path, e))
        return 1

    docs = {}
    failed = False
    for path, _ in files:
        try:
            with open(path, encoding="utf-8") as f:
                docs[path] = json.load(f)
        except (OSError, ValueError) as e:
            docs[path] = e

    # Files that a scenario on the command line names as a section.
    referenced = {}
    for path, mode in files:
        doc = docs[path]
        if mode in ("auto", "scenario") and isinstance(doc, dict) and "cases" not in doc:
            for kind in SECTIONS:
                if is_path(doc.get(kind)):
                    target = os.path.realpath(os.path.join(os.path.dirname(path), doc[kind]))
                    referenced[target] = kind

    for path, mode in files:
        doc = docs[path]
        if isinstance(doc, Exception):
            print("FAIL %s\n  cannot read: %s" % (path, doc))
            failed = True
            continue
        base_dir = os.path.dirname(path)
        if mode == "auto":
            if isinstance(doc, dict) and isinstance(doc.get("cases"), list):
                mode = "cases"
            elif os.path.realpath(path) in referenced:
                mode = referenced[os.path.realpath(path)]
            elif os.path.basename(os.path.dirname(os.path.abspath(path))) in DIR_SECTIONS:
                mode = DIR_SECTIONS[os.path.basename(os.path.dirname(os.path.abspath(path)))]
            else:
                mode = "scenario"
        if mode == "cases":
            errs = check_cases(checker, doc, base_dir)
        elif mode == "scenario":
            errs = check_scenario(checker, doc, base_dir)
        else:
            errs = checker.errors(doc, mode)
        if errs:
            failed = True
            print("FAIL %s (%s)" % (path, mode if mode in ("cases", "scenario") else mode + " section"))
            for e in errs:
                print("  " + e)
        else:
            print("ok " + path)

    if not run_inline(checker):
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
