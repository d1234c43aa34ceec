"""Reading launch files back as bash and the programs would: shared by the export tests."""
import os
import re
import subprocess


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


def bash_array(script, name, env=None):
    """The words bash puts in array `name`: the NAME=( ... ) block evaluated by bash itself, in the environment
    without LR, CONFIG_DIR, DATA_PATH and MODEL (so their defaults apply) plus `env`."""
    m = re.search(rf"^{name}=\(\n.*?^\)\n", script, re.S | re.M)
    check(m, f"no {name}=( ... ) block")
    environment = {k: v for k, v in os.environ.items() if k not in ("LR", "CONFIG_DIR", "DATA_PATH", "MODEL")}
    environment.update(env or {})
    proc = subprocess.run(["bash", "-c", m.group(0) + f'printf "%s\\n" "${{{name}[@]}}"'], capture_output=True, text=True, env=environment)
    check(proc.returncode == 0, f"bash could not evaluate {name}: {proc.stderr}")
    return proc.stdout.splitlines()


def flags(words):
    """--flag value [value ...] words -> {flag: value, [values] or True}."""
    out, i = {}, 0
    while i < len(words):
        check(words[i].startswith("--"), f"unexpected word {words[i]!r}")
        j = i + 1
        while j < len(words) and not words[j].startswith("--"):
            j += 1
        vals = words[i + 1:j]
        out[words[i]] = True if not vals else vals[0] if len(vals) == 1 else vals
        i = j
    return out
