#!/usr/bin/env python3
"""The scenario schema's enums name exactly what trainsim's registries hold: frameworks, pipeline schedules,
checkpoint methods, storage tiers and failure presets (`trainsim presets --format json` lists the registries). A
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
    }
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
