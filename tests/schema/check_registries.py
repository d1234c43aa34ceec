#!/usr/bin/env python3
"""The scenario schema's enums name exactly what trainsim's registries hold: frameworks, Megatron's recompute modules,
pipeline schedules, checkpoint methods, storage tiers, failure presets, time distributions (those with a hazard for
failures, all of them for repairs) and job-failure presets (`trainsim presets --format json` lists the registries). A
plug-in registered in C++ but missing from the schema, or a schema name no registry knows, fails here.

  check_registries.py TRAINSIM SCHEMA
"""
import json
import subprocess
import sys


def at(schema, pointer):
    node = schema
    for part in pointer.strip("/").split("/"):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def distribution_enums(schema, pointer=""):
    """Every time-to-failure `distribution` enum (the failure sections'; the repair one takes every distribution)."""
    found = []
    if isinstance(schema, dict):
        for key, value in schema.items():
            here = pointer + "/" + key.replace("~", "~0").replace("/", "~1")
            if key == "distribution" and isinstance(value, dict) and "enum" in value and "/repair/" not in here:
                found.append(here + "/enum")
            found += distribution_enums(value, here)
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            found += distribution_enums(value, pointer + "/" + str(i))
    return found


def main(trainsim, schema_path):
    registries = json.loads(subprocess.run([trainsim, "presets", "--format", "json"], capture_output=True, text=True, check=True).stdout)
    with open(schema_path) as f:
        schema = json.load(f)
    tiers = set(registries["storage_tiers"])
    expected = {
        "/$defs/training/properties/framework/oneOf/0/enum": set(registries["frameworks"]),
        "/$defs/training/properties/framework/oneOf/1/properties/preset/enum": set(registries["frameworks"]),
        "/$defs/parallel/properties/schedule/enum": set(registries["schedules"]),
        "/$defs/checkpoint/properties/method/enum": set(registries["checkpoint_methods"]),
        "/$defs/checkpoint/properties/storage/anyOf/0/enum": tiers,
        "/$defs/checkpoint/properties/storage/anyOf/1/properties/tier/enum": tiers,
        "/$defs/checkpoint/properties/upload_to/enum": tiers,
        "/$defs/failures/oneOf/0/enum": set(registries["failure_presets"]),
        "/$defs/failures/oneOf/1/properties/preset/enum": set(registries["failure_presets"]),
        "/$defs/training/properties/recompute_modules/items/enum": set(registries["recompute_modules"]),
        "/$defs/recovery/properties/repair/properties/distribution/enum": set(registries["time_distributions"]),
        "/$defs/cluster/properties/job_failures/oneOf/0/enum": set(registries["job_failure_presets"]) | {"none"},
    }
    hazards = {name for name, d in registries["time_distributions"].items() if d["for_failures"]}
    for pointer in distribution_enums(schema):
        expected[pointer] = hazards
    failures = []
    for pointer, names in expected.items():
        listed = set(at(schema, pointer))
        if listed != names:
            failures.append(f"{pointer}: schema has {sorted(listed)}, the registry {sorted(names)} "
                            f"(missing {sorted(names - listed)}, unknown {sorted(listed - names)})")
    for f in failures:
        print("FAIL:", f)
    print(f"registries: {len(expected)} schema enums checked, {len(failures)} differ")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
