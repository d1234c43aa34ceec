"""Check launch files against the targets' own interfaces, as recorded in upstream/*.json.

The snapshots are facts read from each upstream project at one commit by upstream/extract_interfaces.py (flag,
field and key names, value kinds, literal choices). Every checker raises InterfaceError naming the file, the
flag or key, and what upstream allows there (with the upstream path and commit), so a failing export test says
exactly which name trainsim wrote that the target would reject or silently ignore.

Kinds: int, float, str, bool, list, dict, null, any, object (a nested section described by a class).
"""
import difflib
import functools
import json
import os

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "upstream")

# Where each snapshot's facts come from, for the messages.
SOURCES = {
    "megatron": "megatron/training/arguments.py",
    "megatron_deepspeed": "megatron/arguments.py + deepspeed.add_config_arguments",
    "deepspeed": "deepspeed/runtime/config.py and its config models",
    "transformers": "src/transformers/training_args.py",
    "accelerate": "src/accelerate/commands/config/config_args.py + commands/launch.py",
    "trl": "trl/scripts/dpo.py parser classes",
    "swift": "swift/arguments, swift/megatron/arguments",
    "torchtitan": "torchtitan/config/job_config.py",
    "volcano": "config/crd/volcano/bases/batch.volcano.sh_jobs.yaml",
    "pytorchjob": "manifests/base/crds/kubeflow.org_pytorchjobs.yaml",
    "batch_job": "api/openapi-spec/v3/apis__batch__v1_openapi.json (Job, JobSpec)",
}


class InterfaceError(Exception):
    pass


@functools.lru_cache(maxsize=None)
def load(name):
    with open(os.path.join(HERE, f"{name}.json"), encoding="utf-8") as f:
        return json.load(f)


def origin(name):
    s = load(name)
    return f"{s['repository']} {SOURCES[name]} at {s['commit'][:12]}"


def fail(file, what, name, allowed):
    raise InterfaceError(f"{file}: {what}; {origin(name)} allows {allowed}")


def near(word, candidates):
    close = difflib.get_close_matches(word, list(candidates), n=3, cutoff=0.7)
    return f"no such name (closest: {', '.join(close)})" if close else "no such name"


# ---- Values ----------------------------------------------------------------------------------------

def kind_ok(value, kinds, strings_convert=False):
    """Whether a parsed value (JSON / YAML / TOML) is of one of `kinds`. With strings_convert, a string also
    passes where argparse would convert it (HfArgumentParser turns a string default into the field's type)."""
    if "any" in kinds:
        return True
    if value is None:
        return "null" in kinds
    if isinstance(value, bool):
        return "bool" in kinds
    if isinstance(value, int):
        return "int" in kinds or "float" in kinds
    if isinstance(value, float):
        return "float" in kinds
    if isinstance(value, str):
        return "str" in kinds or (strings_convert and word_ok(value, kinds))
    if isinstance(value, list):
        return "list" in kinds
    if isinstance(value, dict):
        return "dict" in kinds or "object" in kinds
    return False


def word_ok(word, kinds):
    """Whether a command-line word converts to one of `kinds` (argparse type=int / float / string_to_bool)."""
    if "any" in kinds or "str" in kinds or "list" in kinds or "dict" in kinds:
        return True
    for kind in kinds:
        try:
            if kind == "int":
                int(word)
                return True
            if kind == "float":
                float(word)
                return True
        except ValueError:
            pass
        if kind == "bool" and word.lower() in ("true", "false", "yes", "no", "y", "n", "1", "0"):
            return True
    return False


def in_choices(value, choices):
    return value in choices or str(value) in [str(c) for c in choices]


# ---- Megatron-LM ---------------------------------------------------------------------------------------

def check_megatron_args(words, file="Megatron-LM arguments", names_only=False, snapshot="megatron"):
    """Argument words of pretrain_gpt.py -> {flag: value, list of values or True}. Every --flag must exist in
    Megatron-LM (parse_args uses allow_abbrev=False: no prefixes); a flag that takes a value gets one of its
    kind and choices; a switch (store_true / store_false) gets none. names_only: check the flag names only
    (arguments meant for a script that may not be Megatron-LM's)."""
    flags = load(snapshot)["flags"]
    out, i = {}, 0
    while i < len(words):
        word = words[i]
        if not word.startswith("--"):
            fail(file, f"{word!r} is not a --flag and follows no flag that takes it", snapshot, "--flag [value]")
        flag, inline = (word.split("=", 1) + [None])[:2] if "=" in word else (word, None)
        spec = flags.get(flag)
        if spec is None:
            fail(file, f"{flag}: {near(flag, flags)}", snapshot, f"{len(flags)} flags")
        values = [inline] if inline is not None else []
        j = i + 1
        if inline is None:
            while j < len(words) and not words[j].startswith("--"):
                values.append(words[j])
                j += 1
        i = j
        if names_only:
            out[flag] = values[0] if len(values) == 1 else (values or True)
            continue
        if spec["value"] is False:
            if values:
                fail(file, f"{flag} {' '.join(values)}: {flag} is a switch", snapshot, "no value after it")
            out[flag] = True
            continue
        nargs = spec.get("nargs")
        count_ok = {None: len(values) == 1, "+": len(values) >= 1, "?": len(values) <= 1, "*": True}.get(
            nargs, len(values) == nargs)  # nargs=N
        if not count_ok:
            want = {None: "one value", "+": "one or more values", "?": "at most one value"}.get(nargs,
                                                                                              f"{nargs} values")
            fail(file, f"{flag} has {len(values)} value(s) {values}", snapshot, f"{flag} with {want}")
        for v in values:
            if not word_ok(v, [spec["kind"]]) and spec["kind"] != "bool":
                fail(file, f"{flag} {v}: not of kind {spec['kind']}", snapshot, f"{flag} <{spec['kind']}>")
            if "choices" in spec and not in_choices(v, spec["choices"]):
                fail(file, f"{flag} {v}: not a choice", snapshot, f"one of {spec['choices']}")
        out[flag] = values if nargs is not None else (values[0] if values else True)
    return out


# ---- DeepSpeed -------------------------------------------------------------------------------------------

def check_deepspeed_config(cfg, file="ds_config.json", allow_auto=False, allow_deprecated=False):
    """ds_config.json: every top-level key is one DeepSpeed reads (it ignores unknown ones, so a misspelling
    is silently lost; a top-level "comment" is ours and ignored like any unknown key); the pydantic sections
    (zero_optimization, bf16, fp16: extra keys forbidden) and the keyed sections (activation_checkpointing,
    optimizer) hold only their fields, of the right kinds and choices. allow_auto: accept "auto" where the
    Hugging Face integration fills it in; allow_deprecated: accept deprecated fields (DeepSpeed warns)."""
    snap = load("deepspeed")
    top = snap["top_level"]
    for key, value in cfg.items():
        if key == "comment":
            continue
        if key not in top:
            fail(file, f"top-level key {key!r}: {near(key, top)}", "deepspeed", f"{len(top)} top-level keys")
        if allow_auto and value == "auto":
            continue
        if not kind_ok(value, top[key]):
            fail(file, f"{key} = {value!r}: wrong kind", "deepspeed", f"{key} of kind {top[key]}")
        section = snap["sections"].get(key)
        if section and "model" in section:
            _check_model(value, section["model"], key, file, snap, allow_auto, allow_deprecated)
        elif section:
            for k, v in value.items():
                if k not in section["keys"]:
                    fail(file, f"{key}.{k}: {near(k, section['keys'])}", "deepspeed",
                         f"{key} keys {sorted(section['keys'])}")
                if not kind_ok(v, section["keys"][k]):
                    fail(file, f"{key}.{k} = {v!r}: wrong kind", "deepspeed", f"kind {section['keys'][k]}")


def _check_model(value, model, path, file, snap, allow_auto, allow_deprecated):
    if not isinstance(value, dict):
        fail(file, f"{path} = {value!r}: not an object", "deepspeed", "an object")
    m = snap["models"][model]
    by_name = dict(m["fields"])
    by_name.update({f["alias"]: f for f in m["fields"].values() if "alias" in f})
    for k, v in value.items():
        facts = by_name.get(k)
        if facts is None:
            if m["extra"] == "forbid":
                fail(file, f"{path}.{k}: {near(k, by_name)}", "deepspeed",
                     f"{path} fields {sorted(by_name)} (unknown ones are an error: extra='forbid')")
            continue
        if facts.get("deprecated") and not allow_deprecated:
            fail(file, f"{path}.{k} is deprecated", "deepspeed", f"its replacement {facts.get('new_param', '?')}")
        if allow_auto and v == "auto":
            continue
        if not kind_ok(v, facts["kinds"]):
            fail(file, f"{path}.{k} = {v!r}: wrong kind", "deepspeed", f"kind {facts['kinds']}")
        if "choices" in facts and v is not None and not in_choices(v, facts["choices"]):
            fail(file, f"{path}.{k} = {v!r}: not a choice", "deepspeed", f"one of {facts['choices']}")
        if "class" in facts and isinstance(v, dict):
            _check_model(v, facts["class"], f"{path}.{k}", file, snap, allow_auto, allow_deprecated)


# ---- Dataclass-backed configs (HfArgumentParser, TrlParser, ms-swift, torchtitan) -----------------------

@functools.lru_cache(maxsize=None)
def class_fields(snapshot, qual):
    """(fields, bases whose fields are not in any snapshot) of class `qual`, inherited fields included;
    a derived class's field wins over a base's (as dataclasses collects them)."""
    if ":" in qual:
        other, name = qual.split(":", 1)
        if other == "external" or name not in load(other)["classes"]:
            return {}, (name,)
        return class_fields(other, name)
    cls = load(snapshot)["classes"][qual]
    fields, unknown = {}, ()
    for base in reversed(cls["bases"]):
        f, u = class_fields(snapshot, base)
        fields.update(f)
        unknown += u
    fields.update(cls["fields"])
    return fields, unknown


def _check_fields(d, classes, snapshot, file, where, strings_convert, extra_keys=()):
    """Keys of `d` against the union of `classes`' fields; nested sections (class facts) recursively."""
    fields, unknown = {}, ()
    for qual in classes:
        f, u = class_fields(snapshot, qual)
        fields.update(f)
        unknown += u
    if not isinstance(d, dict):
        fail(file, f"{where or 'the file'} is not a mapping", snapshot, "a mapping of field names")
    for key, value in d.items():
        path = f"{where}.{key}" if where else key
        if key in extra_keys:
            continue
        facts = fields.get(key)
        if facts is None:
            note = f" (not checked against unsnapshotted bases {sorted(set(unknown))})" if unknown else ""
            fail(file, f"{path}: {near(key, fields)}{note}", snapshot,
                 f"the fields of {', '.join(c.split('.')[-1] for c in classes)}")
        _check_value(value, facts, snapshot, file, path, strings_convert)


def _check_value(value, facts, snapshot, file, path, strings_convert):
    if not kind_ok(value, facts["kinds"], strings_convert):
        fail(file, f"{path} = {value!r}: wrong kind", snapshot, f"kind {facts['kinds']}")
    if "choices" in facts and value is not None and not isinstance(value, (list, dict)) \
            and not in_choices(value, facts["choices"]):
        fail(file, f"{path} = {value!r}: not a choice", snapshot, f"one of {facts['choices']}")
    items = facts.get("items", {})
    if isinstance(value, list) and "choices" in items:
        for v in value:
            if not in_choices(v, items["choices"]):
                fail(file, f"{path} item {v!r}: not a choice", snapshot, f"one of {items['choices']}")
    if "class" in facts and isinstance(value, dict):
        snap, qual = (facts["class"].split(":", 1) if ":" in facts["class"] else (snapshot, facts["class"]))
        _check_fields(value, (qual,), snap, file, path, strings_convert)


def check_training_arguments(d, file="TrainingArguments"):
    """A dict given to transformers' TrainingArguments(**d): every key a field, values of its kinds (no
    conversion: the dataclass takes them as they are), enum / literal choices respected."""
    snap = load("transformers")
    _check_fields(d, (snap["entry"]["TrainingArguments"],), "transformers", file, "", strings_convert=False)


def check_trl_dpo_config(d, file="dpo config"):
    """The YAML of `trl dpo --config FILE`: keys of ScriptArguments, DPOConfig (with TrainingArguments),
    ModelConfig or DatasetMixtureConfig, or `env`; TrlParser sets them as argparse defaults, so a string value
    is converted to the field's type (e.g. learning_rate: 1e-5, which YAML reads as a string)."""
    entry = load("trl")["entry"]["trl dpo"]
    _check_fields(d, tuple(entry["classes"]), "trl", file, "", strings_convert=True,
                  extra_keys=tuple(entry["extra_keys"]))


def check_torchtitan_config(d, file="torchtitan TOML"):
    """A torchtitan job TOML (as read by tomllib): [section] tables of JobConfig, each key a field of that
    section; ConfigManager refuses unknown keys."""
    snap = load("torchtitan")
    _check_fields(d, (snap["entry"]["JobConfig"],), "torchtitan", file, "", strings_convert=False)


def check_swift_args(command, words, file=None):
    """`swift sft|rlhf` / `megatron sft|rlhf` argument words: each --field_name (or --field-name) a field of
    the command's argument class, parsed by HfArgumentParser: a list field takes one or more values, a bool
    field zero or one (true/false), --no_<field> turns off a bool that defaults to true, others one value."""
    snap = load("swift")
    if command not in snap["entry"]:
        raise InterfaceError(f"{command!r} is not one of {sorted(snap['entry'])}")
    file = file or command
    fields, unknown = class_fields("swift", snap["entry"][command])
    out, i = {}, 0
    while i < len(words):
        word = words[i]
        if not word.startswith("--"):
            fail(file, f"{word!r} follows no flag that takes it", "swift", "--field value")
        name = word[2:].split("=", 1)[0].replace("-", "_")
        values = [word.split("=", 1)[1]] if "=" in word else []
        j = i + 1
        if "=" not in word:
            while j < len(words) and not words[j].startswith("--"):
                values.append(words[j])
                j += 1
        i = j
        facts = fields.get(name)
        if facts is None and name.startswith("no_") and fields.get(name[3:], {}).get("no_flag"):
            out[name[3:]] = False
            continue
        if facts is None:
            note = f" (not checked against unsnapshotted bases {sorted(set(unknown))})" if unknown else ""
            fail(file, f"--{name}: {near(name, fields)}{note}", "swift",
                 f"the fields of {snap['entry'][command].split('.')[-1]}")
        kinds = [k for k in facts["kinds"] if k != "null"]
        if kinds == ["bool"]:
            if len(values) > 1 or values and not word_ok(values[0], ["bool"]):
                fail(file, f"--{name} {' '.join(values)}", "swift", "no value or one of true/false")
        elif "list" in kinds:
            if not values:
                fail(file, f"--{name} has no value", "swift", "one or more values")
        elif len(values) != 1:
            fail(file, f"--{name} has {len(values)} values {values}", "swift", "one value")
        for v in values:
            if not word_ok(v, kinds or ["any"]):
                fail(file, f"--{name} {v}: wrong kind", "swift", f"kind {facts['kinds']}")
            choices = facts.get("choices") or facts.get("items", {}).get("choices")
            if choices and not in_choices(v, choices):
                fail(file, f"--{name} {v}: not a choice", "swift", f"one of {choices}")
        out[name] = values if "list" in kinds else (values[0] if values else True)
    return out


# ---- Accelerate ---------------------------------------------------------------------------------------------

def check_accelerate_config(d, file="accelerate config"):
    """An `accelerate launch --config_file` YAML: top-level keys of ClusterConfig (unknown ones are an error
    in from_yaml_file), distributed_type and mixed_precision among their values, and each *_config section's
    keys among the `accelerate launch` options they set (an unknown key there is silently ignored)."""
    snap = load("accelerate")
    top = snap["top_level"]
    for key, value in d.items():
        if key in snap["legacy_keys"]:
            fail(file, f"{key} is an old key that accelerate converts", "accelerate", "its current form")
        if key not in top:
            fail(file, f"{key}: {near(key, top)}", "accelerate", f"ClusterConfig keys {sorted(top)}")
        _check_value(value, top[key], "accelerate", file, key, strings_convert=False)
        section = snap["sections"].get(key)
        if section and isinstance(value, dict):
            for k, v in value.items():
                name = k
                if section.get("prefix") and not k.startswith(section["prefix"]):
                    name = section["prefix"] + k
                facts = section["keys"].get(name)
                if facts is None:
                    fail(file, f"{key}.{k}: {near(name, section['keys'])}", "accelerate",
                         f"{key} keys {sorted(section['keys'])}")
                if "choices" in facts and not in_choices(v, facts["choices"]):
                    fail(file, f"{key}.{k} = {v!r}: not a choice", "accelerate", f"one of {facts['choices']}")


# ---- Kubernetes custom resources ------------------------------------------------------------------------

TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "integer": int, "number": (int, float)}


def _check_crd(doc, name, file):
    snap = load(name)
    versions = {api: v for v, api in snap["apiVersion"].items()}
    if doc.get("apiVersion") not in versions or doc.get("kind") != snap["kind"]:
        fail(file, f"apiVersion/kind {doc.get('apiVersion')}/{doc.get('kind')}", name,
             f"{sorted(versions)} / {snap['kind']}")
    _check_schema(doc, snap["versions"][versions[doc["apiVersion"]]], "", file, name, snap["defs"])


def _check_schema(value, node, path, file, name, defs):
    while "ref" in node:
        node = defs[node["ref"]]
    where = path or "the document"
    if node.get("int_or_string"):
        if not isinstance(value, (int, str)) or isinstance(value, bool):
            fail(file, f"{where} = {value!r}: wrong type", name, "an integer or a string")
    elif "type" in node:
        types = node["type"] if isinstance(node["type"], list) else [node["type"]]
        ok = any(isinstance(value, TYPES[t]) and not (t in ("integer", "number") and isinstance(value, bool))
                 for t in types)
        if not ok:
            fail(file, f"{where} = {value!r}: wrong type", name, f"type {node['type']}")
    if "enum" in node and value not in node["enum"]:
        fail(file, f"{where} = {value!r}: not a choice", name, f"one of {node['enum']}")
    if isinstance(value, dict):
        props = node.get("properties")
        for key in node.get("required", []):
            if key not in value:
                fail(file, f"{where}: {key} missing", name, f"required {node['required']}")
        for key, sub in value.items():
            child = f"{path}.{key}" if path else key
            if props and key in props:
                _check_schema(sub, props[key], child, file, name, defs)
            elif "values" in node:
                _check_schema(sub, node["values"], child, file, name, defs)
            elif props and not node.get("any"):
                # the API server prunes fields a structural schema does not name: silently lost
                fail(file, f"{child}: {near(key, props)}", name, f"{where} fields {sorted(props)}")
    elif isinstance(value, list) and "items" in node:
        for k, item in enumerate(value):
            _check_schema(item, node["items"], f"{path}[{k}]", file, name, defs)


def check_volcano_job(d, file="volcano-job.yaml"):
    """A Volcano batch.volcano.sh Job against its CRD schema (pod template included): every field named,
    of its type and enum values, required fields present."""
    _check_crd(d, "volcano", file)


def check_pytorchjob(d, file="pytorchjob.yaml"):
    """A Kubeflow kubeflow.org/v1 PyTorchJob against its CRD schema (pod templates included)."""
    _check_crd(d, "pytorchjob", file)


def check_batch_job(d, file="sweep-job.yaml"):
    """A Kubernetes batch/v1 Job against JobSpec's fields (batch_job.json) with its pod template checked as core/v1
    PodTemplateSpec (pytorchjob.json's, the same type)."""
    snap, pods = load("batch_job"), load("pytorchjob")
    if d.get("apiVersion") != snap["apiVersion"]["v1"] or d.get("kind") != snap["kind"]:
        fail(file, f"apiVersion/kind {d.get('apiVersion')}/{d.get('kind')}", "batch_job", f"{snap['apiVersion']['v1']} / {snap['kind']}")
    template = pods["versions"]["v1"]["properties"]["spec"]["properties"]["pytorchReplicaSpecs"]["values"]["properties"]["template"]
    schema = json.loads(json.dumps(snap["job"]))
    schema["properties"]["spec"]["properties"]["template"] = template
    _check_schema(d, schema, "", file, "batch_job", pods["defs"])
