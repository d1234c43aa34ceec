#!/usr/bin/env python3
"""Write the interface snapshots in this folder from upstream sources, without importing any upstream code.

Each snapshot, tests/export/upstream/<name>.json, holds facts only (flag / field / key names, their value kinds
and literal choices) read with Python's `ast` and `yaml` from one upstream commit, so that the export tests can
check trainsim's launch files against each target's own interface with no network and no upstream code in CI.

  extract_interfaces.py [--mirror DIR] [--tree REPO=DIR@COMMIT ...] [--only NAME ...] [--date YYYY-MM-DD]

--mirror DIR        folder of bare git snapshots named owner+name/repo (default /work/.mirror); each upstream is
                    read at its git dir's HEAD (or at the ref given in UPSTREAMS below, with the reason there).
--tree R=DIR@SHA    read repository R (e.g. huggingface/transformers) from a plain folder instead of git, and
                    record SHA as its commit: for an upstream whose git snapshot cannot be had, DIR holds the
                    files at SHA with their repository paths.
--only NAME         write only these snapshots (megatron, deepspeed, transformers, accelerate, trl, swift,
                    torchtitan, volcano, pytorchjob).
--date              the "extracted" date written in each file (default: today).

The snapshots here were written with
  extract_interfaces.py --date 2026-11-27 --tree huggingface/transformers=DIR@00349ae87eddc872ffa21a8a54f264375a0056a8
where DIR held src/transformers/training_args.py at that commit (transformers' git snapshot is too large to fetch).

Every file records {"repository", "commit", "files": [paths read], "extracted", ...}. Output is deterministic:
sorted keys, no help texts. A snapshot whose repository cannot be read is not written; its absence is the record.
"""
import argparse
import ast
import datetime
import json
import os
import subprocess
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))

# name -> (repository, ref, why that ref when it is not HEAD)
UPSTREAMS = {
    "megatron": ("NVIDIA/Megatron-LM", "HEAD", None),
    "megatron_deepspeed": ("deepspeedai/Megatron-DeepSpeed", "HEAD", None),
    "deepspeed": ("deepspeedai/DeepSpeed", "HEAD", None),
    "transformers": ("huggingface/transformers", "HEAD", None),
    "accelerate": ("huggingface/accelerate", "HEAD", None),
    "trl": ("huggingface/trl", "HEAD", None),
    "swift": ("modelscope/ms-swift", "HEAD", None),
    # HEAD replaced the TOML job config by Python config functions (commit 9810191b, "[BC Breaking] Config
    # System Refactor: TOML to Python Dataclass Registry"); v0.2.2 is the last release that reads TOML.
    "torchtitan": ("pytorch/torchtitan", "v0.2.2",
                   "HEAD no longer reads TOML job files; v0.2.2 is the last release that does"),
    "volcano": ("volcano-sh/volcano", "HEAD", None),
    # master removed the v1 operator (PyTorchJob) in 7858371b; release-1.9 is the last v1 line.
    "pytorchjob": ("kubeflow/training-operator", "release-1.9",
                   "master removed the kubeflow.org/v1 operator; release-1.9 is its last line"),
}


# ---- Reading a repository -----------------------------------------------------------------------

class Repo:
    """One upstream at one commit, read from a bare git dir or from a plain folder; remembers what was read."""

    def __init__(self, repository, git_dir=None, ref="HEAD", tree=None, commit=None):
        self.repository, self.git_dir, self.tree = repository, git_dir, tree
        if git_dir:
            self.commit = self._git("rev-parse", ref + "^{commit}").strip()
        else:
            self.commit = commit
        self.ref = ref
        self.read_paths = set()
        self._cache = {}

    def _git(self, *args):
        return subprocess.run(["git", "--git-dir", self.git_dir] + list(args), check=True, capture_output=True,
                              text=True).stdout

    def exists(self, path):
        if self.tree:
            return os.path.isfile(os.path.join(self.tree, path))
        return subprocess.run(["git", "--git-dir", self.git_dir, "cat-file", "-e", f"{self.commit}:{path}"],
                              capture_output=True).returncode == 0

    def read(self, path):
        if path not in self._cache:
            if self.tree:
                with open(os.path.join(self.tree, path), encoding="utf-8") as f:
                    self._cache[path] = f.read()
            else:
                self._cache[path] = self._git("show", f"{self.commit}:{path}")
            self.read_paths.add(path)
        return self._cache[path]

    def header(self):
        h = {"repository": self.repository, "commit": self.commit, "files": sorted(self.read_paths)}
        if self.tree:
            h["source"] = "files at this commit in a plain folder (--tree), not a git snapshot"
        if self.ref not in ("HEAD", None):
            h["ref"] = self.ref
        return h


# ---- Python sources: modules, names, classes --------------------------------------------------------

class Module:
    def __init__(self, py, name, path, tree, repo=None):
        self.py, self.name, self.path, self.tree, self.repo = py, name, path, tree, repo
        self.is_package = path.endswith("__init__.py")

    def top(self, name):
        """The module-level definition of `name` (the last one, as Python binds it): a ClassDef, FunctionDef or
        the value of an assignment."""
        found = None
        for node in self.tree.body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name == name:
                found = node
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name) and t.id == name:
                        found = node.value
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name \
                    and node.value is not None:
                found = node.value
        return found

    def absolute(self, node):
        """The absolute module name of an ImportFrom."""
        if not node.level:
            return node.module
        parts = self.name.split(".")
        base = parts if self.is_package else parts[:-1]
        base = base[:len(base) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))


# Package exports made lazily (transformers' _import_structure), for a tree that holds only the defining file.
LAZY_EXPORTS = {("transformers", "TrainingArguments"): "transformers.training_args"}


def module_imports(body):
    """ImportFrom statements run at module level, also inside `if TYPE_CHECKING:` / try blocks."""
    for node in body:
        if isinstance(node, ast.ImportFrom):
            yield node
        elif isinstance(node, (ast.If, ast.Try)):
            yield from module_imports(node.body)
            yield from module_imports(node.orelse)
            for h in getattr(node, "handlers", []):
                yield from module_imports(h.body)


class Python:
    """Python sources of several repositories, each owning top-level packages; resolves names across them."""

    def __init__(self):
        self.roots = []  # (package prefix, repo, folder in repo)
        self._modules = {}

    def add(self, package, repo, folder=""):
        self.roots.append((package, repo, folder))

    def module(self, name):
        if name in self._modules:
            return self._modules[name]
        mod = None
        for package, repo, folder in self.roots:
            if name == package or name.startswith(package + "."):
                rel = name.replace(".", "/")
                for path in (f"{rel}.py", f"{rel}/__init__.py"):
                    full = f"{folder}/{path}" if folder else path
                    if repo.exists(full):
                        mod = Module(self, name, full, ast.parse(repo.read(full)), repo)
                        break
        self._modules[name] = mod
        return mod

    def resolve(self, mod, name, depth=0):
        """(module, node) defining `name` as seen from `mod`, following imports; (None, None) if outside."""
        if mod is None or depth > 20:
            return None, None
        node = mod.top(name)
        if node is not None:
            return mod, node
        stars = []
        for sub in module_imports(mod.tree.body):
            if True:
                if isinstance(sub, ast.ImportFrom):
                    source = mod.absolute(sub)
                    for alias in sub.names:
                        if alias.name == "*":
                            stars.append(source)
                        elif (alias.asname or alias.name) == name:
                            target = self.module(source)
                            if target is None and (source, alias.name) in LAZY_EXPORTS:
                                target = self.module(LAZY_EXPORTS[(source, alias.name)])
                            if target is None:  # `from pkg import submodule`
                                sub_mod = self.module(f"{source}.{alias.name}")
                                return (sub_mod, sub_mod.tree) if sub_mod else (None, None)
                            return self.resolve(target, alias.name, depth + 1)
        for source in stars:
            m, n = self.resolve(self.module(source), name, depth + 1)
            if n is not None:
                return m, n
        return None, None

    def resolve_expr(self, mod, expr):
        """Resolve a Name or a dotted Attribute (module.Name) to (module, node)."""
        if isinstance(expr, ast.Name):
            return self.resolve(mod, expr.id)
        if isinstance(expr, ast.Attribute):
            m, n = self.resolve_expr(mod, expr.value)
            if isinstance(n, ast.Module):
                return self.resolve(m, expr.attr)
            if isinstance(n, ast.ClassDef):  # nested class
                for item in n.body:
                    if isinstance(item, ast.ClassDef) and item.name == expr.attr:
                        return m, item
        return None, None

    def constant(self, mod, expr, depth=0):
        """The literal value of an expression (strings, numbers, lists, names bound to literals), or raise."""
        if depth > 20:
            raise ValueError("too deep")
        if isinstance(expr, ast.Constant):
            return expr.value
        if isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
            return [self.constant(mod, e, depth + 1) for e in expr.elts]
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
            return -self.constant(mod, expr.operand, depth + 1)
        if isinstance(expr, (ast.Name, ast.Attribute)):
            m, n = self.resolve_expr(mod, expr)
            if n is not None and not isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.Module)):
                return self.constant(m, n, depth + 1)
        if isinstance(expr, ast.ListComp) and len(expr.generators) == 1:  # [m.name for m in SomeEnum]
            gen, elt = expr.generators[0], expr.elt
            m, cls = self.resolve_expr(mod, gen.iter)
            if isinstance(cls, ast.ClassDef) and isinstance(elt, ast.Attribute) and elt.attr in ("name", "value"):
                members = enum_members(self, m, cls) or []
                return [n if elt.attr == "name" else v for n, v in members]
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in ("int", "float") \
                and len(expr.args) == 1:
            return {"int": int, "float": float}[expr.func.id](self.constant(mod, expr.args[0], depth + 1))
        raise ValueError(f"not a literal: {ast.unparse(expr)}")


def enum_members(py, mod, cls, depth=0):
    """[(name, value)] of an Enum class, or None when `cls` is not an Enum (bases followed through the repos)."""
    def is_enum(m, c, d):
        for b in c.bases:
            text = ast.unparse(b)
            if text.split(".")[-1] in ("Enum", "IntEnum", "StrEnum", "EnumMeta", "Flag"):
                return True
            bm, bn = py.resolve_expr(m, b)
            if isinstance(bn, ast.ClassDef) and d < 10:
                if is_enum(bm, bn, d + 1):
                    return True
            elif bn is None and text.split(".")[-1].endswith("Enum"):
                return True  # an enum base outside the snapshot (e.g. transformers' ExplicitEnum)
        return False

    if not is_enum(mod, cls, 0):
        return None
    members = []
    for item in cls.body:
        if isinstance(item, ast.Assign) and len(item.targets) == 1 and isinstance(item.targets[0], ast.Name):
            name = item.targets[0].id
            if name.startswith("_"):
                continue
            try:
                members.append((name, py.constant(mod, item.value)))
            except ValueError:
                if isinstance(item.value, ast.Call) and ast.unparse(item.value.func).endswith("auto"):
                    members.append((name, name.lower()))
    return members


def class_fields(py, mod, cls):
    """Annotated class attributes of `cls` itself (dataclass / pydantic fields), in order, as
    {name: (annotation, default expr or None, {keyword: expr} of field(...)/Field(...), module)}."""
    out = {}
    for item in cls.body:
        if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
            continue
        name, ann = item.target.id, item.annotation
        if ast.unparse(ann).startswith(("ClassVar", "typing.ClassVar")) or name.startswith("_"):
            continue
        default, kw = item.value, {}
        if isinstance(default, ast.Call) and ast.unparse(default.func).split(".")[-1] in ("field", "Field"):
            kw = {k.arg: k.value for k in default.keywords if k.arg}
            default = default.args[0] if default.args else kw.get("default")
        out[name] = (ann, default, kw, mod)
    return out


def mro(py, mod, cls):
    """C3 linearisation of `cls` over the classes resolvable in the loaded repositories:
    [(module, ClassDef)], and the names of bases outside them."""
    outside = []

    def lin(m, c, d):
        if d > 30:
            return [(m, c)]
        seqs = []
        for b in c.bases:
            bm, bn = py.resolve_expr(m, b)
            if isinstance(bn, ast.ClassDef):
                seqs.append(lin(bm, bn, d + 1))
            elif ast.unparse(b) not in ("object", "Generic") and not ast.unparse(b).startswith("Generic["):
                outside.append(ast.unparse(b))
        seqs.append([x for x in [(py.resolve_expr(m, b)) for b in c.bases] if isinstance(x[1], ast.ClassDef)])
        result = [(m, c)]
        key = lambda x: (x[0].name, x[1].name)
        while True:
            seqs = [s for s in seqs if s]
            if not seqs:
                return result
            for s in seqs:
                head = s[0]
                if not any(key(head) in [key(x) for x in t[1:]] for t in seqs):
                    break
            else:
                raise ValueError(f"inconsistent MRO for {c.name}")
            result.append(head)
            seqs = [t[1:] if key(t[0]) == key(head) else t for t in seqs]

    order = lin(mod, cls, 0)
    return order, sorted(set(outside))


def all_fields(py, mod, cls):
    """Dataclass fields of `cls` with inherited ones, the way dataclasses collects them (reverse MRO)."""
    order, outside = mro(py, mod, cls)
    fields = {}
    for m, c in reversed(order):
        fields.update(class_fields(py, m, c))
    return fields, outside


# ---- Value kinds of an annotation ------------------------------------------------------------------

PRIMITIVE = {"int": "int", "float": "float", "str": "str", "bool": "bool", "dict": "dict", "Dict": "dict",
             "list": "list", "List": "list", "tuple": "list", "Tuple": "list", "set": "list", "Set": "list",
             "Sequence": "list", "Iterable": "list", "Mapping": "dict", "MutableMapping": "dict",
             "Path": "str", "PathLike": "str", "bytes": "str", "None": "null", "NoneType": "null",
             "Any": "any", "object": "any", "Callable": "any", "type": "any"}


def describe(py, mod, ann, models=None):
    """An annotation -> {"kinds": sorted list, "choices"?: [...], "enum"?: [(name, value)], "class"?: qualname,
    "items"?: element description}. `models` collects nested model classes by qualified name."""
    def walk(a):
        if a is None:
            return {"kinds": ["any"]}
        if isinstance(a, ast.Constant):
            if a.value is None:
                return {"kinds": ["null"]}
            if isinstance(a.value, str):  # a string annotation
                try:
                    return walk(ast.parse(a.value, mode="eval").body)
                except SyntaxError:
                    return {"kinds": ["any"]}
            return {"kinds": ["any"]}
        if isinstance(a, ast.BinOp) and isinstance(a.op, ast.BitOr):
            sub = {}
            for side in (a.left, a.right):
                d = walk(side)
                merge(sub, d)
            return sub
        if isinstance(a, ast.Subscript):
            head = ast.unparse(a.value).split(".")[-1]
            args = a.slice.elts if isinstance(a.slice, ast.Tuple) else [a.slice]
            if head in ("Optional",):
                d = walk(args[0])
                merge(d, {"kinds": ["null"]})
                return d
            if head == "Union":
                sub = {}
                for x in args:
                    merge(sub, walk(x))
                return sub
            if head == "Literal":
                vals = []
                for x in args:
                    vals.append(py.constant(mod, x))
                ks = sorted({kind_of(v) for v in vals})
                return {"kinds": ks, "choices": vals}
            if head == "Annotated":
                return walk(args[0])
            if head in ("ClassVar", "Final", "Required", "NotRequired"):
                return walk(args[0])
            base = PRIMITIVE.get(head, "any")
            d = {"kinds": [base]}
            if base == "list" and head not in ("Tuple", "tuple"):
                item = walk(args[0])
                if item.get("choices") or item.get("class"):
                    d["items"] = {k: v for k, v in item.items() if k in ("kinds", "choices", "class")}
                if item.get("unresolved"):
                    d["unresolved"] = item["unresolved"]
            return d
        text = ast.unparse(a)
        last = text.split(".")[-1]
        if last in PRIMITIVE:
            return {"kinds": [PRIMITIVE[last]]}
        m, node = py.resolve_expr(mod, a)
        if isinstance(node, ast.ClassDef):
            members = enum_members(py, m, node)
            if members is not None:
                vals = [v for _, v in members]
                vals = [v for i, v in enumerate(vals) if v not in vals[:i]]  # an alias member repeats a value
                return {"kinds": sorted({kind_of(v) for v in vals}) or ["str"], "choices": vals, "enum": members}
            qual = f"{m.name}.{node.name}"
            if models is not None:
                models[qual] = (m, node)
            return {"kinds": ["object"], "class": qual}
        if node is not None and not isinstance(node, ast.Module):  # a type alias
            return walk(node)
        return {"kinds": ["any"], "unresolved": text}

    def merge(into, d):
        into.setdefault("kinds", [])
        into["kinds"] = sorted(set(into["kinds"]) | set(d.get("kinds", [])))
        for k in ("choices", "enum", "class", "items", "unresolved"):
            if k in d:
                into[k] = d[k] if k not in into or k != "choices" else into[k] + d[k]

    d = walk(ann)
    d["kinds"] = sorted(set(d.get("kinds", ["any"])))
    return d


def kind_of(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "str"
    if isinstance(v, (list, tuple)):
        return "list"
    if isinstance(v, dict):
        return "dict"
    return "any"


def compact(d):
    """The facts a checker needs from describe(): kinds, choices, nested class, element facts."""
    out = {"kinds": d["kinds"]}
    if d.get("choices") is not None:
        out["choices"] = d["choices"]
    if d.get("class"):
        out["class"] = d["class"]
    if d.get("items"):
        out["items"] = d["items"]
    return out


# ---- Megatron-LM: argparse flags -------------------------------------------------------------------

def add_argument_flags(py, mod):
    """{flag: spec} of every parser.add_argument(...) call in a module."""
    flags = {}

    def put(names, spec):
        for n in names:
            flags[n] = spec

    def type_kind(expr):  # a custom parser (tuple_type, moe_freq_type...) takes a string
        return {"int": "int", "float": "float", "bool": "bool"}.get(ast.unparse(expr) if expr else "str", "str")

    for node in ast.walk(mod.tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"):
            continue
        names = [a.value for a in node.args if isinstance(a, ast.Constant) and str(a.value).startswith("-")]
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        action = ast.unparse(kw["action"]).strip("'\"") if "action" in kw else "store"
        if action.endswith("BooleanOptionalAction"):
            put(names, {"value": False})
            put(["--no-" + n[2:] for n in names if n.startswith("--")], {"value": False})
            continue
        if action in ("store_true", "store_false", "store_const", "count", "append_const", "help", "version"):
            put(names, {"value": False})
            continue
        spec = {"value": True, "kind": type_kind(kw.get("type"))}
        if "nargs" in kw:
            nargs = py.constant(mod, kw["nargs"])
            spec["nargs"] = nargs
            if nargs in ("?", "*"):
                spec["value"] = "optional"
        if "choices" in kw:
            try:
                spec["choices"] = py.constant(mod, kw["choices"])
            except ValueError:
                pass  # choices computed at run time: not checked
        put(names, spec)
    return flags


def megatron_deepspeed(repo, deepspeed_repo):
    """Megatron-DeepSpeed's megatron/arguments.py (the fork's own, older Megatron names) plus the flags that
    deepspeed.add_config_arguments adds to its parser (deepspeed/__init__.py: --deepspeed, --deepspeed_config)."""
    py = Python()
    py.add("megatron", repo)
    flags = add_argument_flags(py, py.module("megatron.arguments"))
    if deepspeed_repo is not None:
        dpy = Python()
        dpy.add("deepspeed", deepspeed_repo)
        flags.update(add_argument_flags(dpy, dpy.module("deepspeed")))
    return {"flags": dict(sorted(flags.items())), "deepspeed": deepspeed_repo.commit if deepspeed_repo else None}


def megatron(repo):
    """Every flag of megatron/training/arguments.py: its own add_argument calls, and the dataclass fields that
    its ArgumentGroupFactory(...) calls turn into flags (megatron/training/argument_utils.py's rules)."""
    py = Python()
    py.add("megatron", repo)
    mod = py.module("megatron.training.arguments")
    repo.read("megatron/training/argument_utils.py")  # the rules reproduced in factory_flags()
    flags = add_argument_flags(py, mod)

    def put(names, spec):
        for n in names:
            flags[n] = spec

    factories = 0
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "ArgumentGroupFactory":
            factories += 1
            kw = {k.arg: k.value for k in node.keywords if k.arg}
            exclude = set()
            if isinstance(kw.get("exclude"), ast.Name):  # a local variable of the enclosing function
                exclude = set(local_list(mod.tree, node, kw["exclude"].id, py, mod))
            elif "exclude" in kw:
                exclude = set(py.constant(mod, kw["exclude"]))
            cm, cls = py.resolve_expr(mod, node.args[0])
            if cls is None:
                cm, cls = resolve_local_import(py, mod, node, node.args[0].id)
            if not isinstance(cls, ast.ClassDef):
                raise SystemExit(f"megatron: cannot resolve {ast.unparse(node.args[0])}")
            for names, spec in factory_flags(py, cm, cls, exclude):
                put(names, spec)
    return {"flags": dict(sorted(flags.items())), "argument_group_factories": factories}


def local_list(tree, call, name, py, mod):
    """The literal list assigned to local variable `name` in the function that contains `call`."""
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef) and any(n is call for n in ast.walk(fn)):
            for st in ast.walk(fn):
                if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in st.targets):
                    return py.constant(mod, st.value)
    raise SystemExit(f"megatron: no local list {name}")


def resolve_local_import(py, mod, call, name):
    """A class imported inside the function that contains `call` (`from x import Name`)."""
    for fn in ast.walk(mod.tree):
        if isinstance(fn, ast.FunctionDef) and any(n is call for n in ast.walk(fn)):
            for st in ast.walk(fn):
                if isinstance(st, ast.ImportFrom) and any((a.asname or a.name) == name for a in st.names):
                    return py.resolve(py.module(mod.absolute(st)), name)
    return None, None


def factory_flags(py, mod, cls, exclude):
    """The flags ArgumentGroupFactory(cls, exclude).build_group() adds (megatron/training/argument_utils.py):
    --field-name; an Enum takes a member name; Optional[T] is T; list[T] takes nargs '+'; Literal gives
    choices; a bool is store_true when its default is False, else store_false named --no-X and --disable-X;
    metadata["argparse_meta"] overrides any of it (arg_names, type, nargs, choices, action)."""
    fields, _ = all_fields(py, mod, cls)
    for name, (ann, default, kw, fmod) in fields.items():
        if name in exclude:
            continue
        if "init" in kw and isinstance(kw["init"], ast.Constant) and kw["init"].value is False:
            continue
        meta = {}
        if "metadata" in kw and isinstance(kw["metadata"], ast.Dict):
            for k, v in zip(kw["metadata"].keys, kw["metadata"].values):
                if isinstance(k, ast.Constant) and k.value == "argparse_meta" and isinstance(v, ast.Dict):
                    meta = {mk.value: mv for mk, mv in zip(v.keys, v.values) if isinstance(mk, ast.Constant)}
        d = describe(py, fmod, ann)
        kinds = [k for k in d["kinds"] if k != "null"]
        names = ["--" + name.replace("_", "-")]
        if kinds == ["bool"]:
            spec = {"value": False}
            if not (isinstance(default, ast.Constant) and default.value is False):  # store_false
                names = ["--no-" + name.replace("_", "-"), "--disable-" + name.replace("_", "-")]
        elif d.get("enum"):
            spec = {"value": True, "kind": "str", "choices": [n for n, _ in d["enum"]]}
        elif d.get("choices") is not None:
            spec = {"value": True, "kind": kinds[0] if len(kinds) == 1 else "str", "choices": d["choices"]}
        elif kinds == ["list"]:
            item = d.get("items", {})
            spec = {"value": True, "kind": item.get("kinds", ["str"])[0] if item else list_item_kind(py, fmod, ann),
                    "nargs": "+"}
            if item.get("choices") is not None:
                spec["choices"] = item["choices"]
        elif len(kinds) == 1 and kinds[0] in ("int", "float", "str"):
            spec = {"value": True, "kind": kinds[0]}
        else:
            spec = {"value": True, "kind": "str"}  # inferred by metadata below, or not a CLI type
        if "arg_names" in meta:
            names = py.constant(fmod, meta["arg_names"])
        if "type" in meta:
            spec["kind"] = {"int": "int", "float": "float", "str": "str"}.get(ast.unparse(meta["type"]), "str")
            spec["value"] = True
        if "nargs" in meta:
            spec["nargs"] = py.constant(fmod, meta["nargs"])
            if spec["nargs"] in ("?", "*"):
                spec["value"] = "optional"
        if "choices" in meta:
            spec["choices"] = py.constant(fmod, meta["choices"])
        if "action" in meta:
            action = py.constant(fmod, meta["action"])
            if action in ("store_true", "store_false", "store_const"):
                spec = {"value": False}
        yield names, spec


def list_item_kind(py, mod, ann):
    """Element kind of list[T] / Optional[list[T]]."""
    for node in ast.walk(ann):
        if isinstance(node, ast.Subscript) and ast.unparse(node.value).split(".")[-1] in ("list", "List"):
            k = describe(py, mod, node.slice)["kinds"]
            k = [x for x in k if x != "null"]
            if len(k) == 1 and k[0] in ("int", "float", "str"):
                return k[0]
    return "str"


# ---- DeepSpeed: ds_config.json keys ------------------------------------------------------------------

class DictReads:
    """Which keys code reads from a config dict, found by following it through calls.

    The dict travels as a value marked TOP (the whole config) or ("SUB", key) (one of its sections). A read is
    d[K], d.get(K, default), `K in d` / `K in d.keys()`, or any call that passes d on (followed into the callee,
    e.g. get_scalar_param(d, K, default) is `d.get(K, default)`). K and defaults are resolved to literals."""

    TOP = ("TOP",)

    def __init__(self, py):
        self.py = py
        self.top = {}   # key -> set of kinds
        self.sub = {}   # section key -> {key: set of kinds}
        self.seen = set()

    def note(self, holder, key, kinds):
        if holder == self.TOP:
            self.top.setdefault(key, set()).update(kinds)
        elif holder and holder[0] == "SUB":
            self.sub.setdefault(holder[1], {}).setdefault(key, set()).update(kinds)

    def value(self, mod, env, expr):
        """What an expression is: TOP, ("SUB", key), ("CONST", value) or None."""
        text = ast.unparse(expr)
        if text in env:
            return env[text]
        if isinstance(expr, ast.Subscript):
            holder = self.value(mod, env, expr.value)
            key = self.key(mod, env, expr.slice)
            if holder == self.TOP and key is not None:
                self.note(holder, key, set())
                return ("SUB", key)
            if holder and holder[0] == "SUB" and key is not None:
                self.note(holder, key, set())
            return None
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "get":
            holder = self.value(mod, env, expr.func.value)
            if holder in (self.TOP,) or (holder and holder[0] == "SUB"):
                key = self.key(mod, env, expr.args[0]) if expr.args else None
                default = self.const(mod, env, expr.args[1]) if len(expr.args) > 1 else None
                if key is not None:
                    self.note(holder, key, {kind_of(default) if not isinstance(default, dict) else "object"}
                              if default is not None else set())
                    if holder == self.TOP:
                        return ("SUB", key)
            return None
        try:
            return ("CONST", self.py.constant(mod, expr))
        except (ValueError, TypeError, RecursionError):
            return None

    def key(self, mod, env, expr):
        v = self.value(mod, env, expr) if not isinstance(expr, ast.Constant) else ("CONST", expr.value)
        if v and v[0] == "CONST" and isinstance(v[1], str):
            return v[1]
        return None

    def const(self, mod, env, expr):
        v = self.value(mod, env, expr)
        return v[1] if v and v[0] == "CONST" else None

    def function(self, mod, fn, env, cls=None):
        sig = (mod.name, fn.name, tuple(sorted((k, str(v)) for k, v in env.items())))
        if sig in self.seen:
            return
        self.seen.add(sig)
        self.scan(mod, fn, env, cls)

    def scan(self, mod, root, env, cls):
        for node in ast.walk(root):
            if isinstance(node, (ast.DictComp, ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.For)) \
                    and node is not root:
                # `{k: d.get(k) for k in ("a", "b")}`: read each literal key in turn
                gens = node.generators if not isinstance(node, ast.For) else [node]
                if len(gens) == 1 and isinstance(gens[0].target, ast.Name):
                    try:
                        items = self.py.constant(mod, gens[0].iter)
                    except (ValueError, TypeError):
                        items = None
                    if isinstance(items, list):
                        for item in items:
                            inner = dict(env)
                            inner[gens[0].target.id] = ("CONST", item)
                            self.scan(mod, node, inner, cls)
                continue
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                v = self.value(mod, env, node.value)
                if v and v[0] in ("TOP", "SUB"):
                    env = dict(env)
                    env[ast.unparse(node.targets[0])] = v
            elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
                right = node.comparators[0]
                if isinstance(right, ast.Call) and isinstance(right.func, ast.Attribute) and right.func.attr == "keys":
                    right = right.func.value
                holder = self.value(mod, env, right)
                key = self.key(mod, env, node.left)
                if key is not None and holder:
                    self.note(holder, key, set())
            elif isinstance(node, ast.Subscript):
                self.value(mod, env, node)
            elif isinstance(node, ast.Call):
                self.call(mod, env, node, cls)

    def call(self, mod, env, call, cls):
        args = [self.value(mod, env, a) for a in call.args]
        kwargs = {k.arg: self.value(mod, env, k.value) for k in call.keywords if k.arg}
        if not any(a and a[0] in ("TOP", "SUB") for a in args + list(kwargs.values())):
            if isinstance(call.func, ast.Attribute) and call.func.attr == "get":
                self.value(mod, env, call)
            return
        target_mod, target, offset = None, None, 0
        if isinstance(call.func, ast.Attribute) and ast.unparse(call.func.value) == "self" and cls is not None:
            target_mod, target = mod, next((f for f in cls.body if isinstance(f, ast.FunctionDef)
                                            and f.name == call.func.attr), None)
            offset = 1
        else:
            target_mod, target = self.py.resolve_expr(mod, call.func)
            if isinstance(target, ast.ClassDef):
                cls_node = target
                target = next((f for f in target.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
                offset, cls = 1, cls_node
            elif isinstance(call.func, ast.Attribute) and call.func.attr == "get":
                self.value(mod, env, call)
                return
        if not isinstance(target, ast.FunctionDef):
            return
        params = [a.arg for a in target.args.args][offset:]
        defaults = target.args.defaults
        new_env = {}
        for p, d in zip(params[len(params) - len(defaults):], defaults):
            try:
                new_env[p] = ("CONST", self.py.constant(target_mod, d))
            except (ValueError, TypeError):
                pass
        for p, a in zip(params, args):
            if a is not None:
                new_env[p] = a
        for k, a in kwargs.items():
            if a is not None:
                new_env[k] = a
        self.function(target_mod, target, new_env, cls if offset else None)


def pydantic_model(py, mod, cls, models):
    """A pydantic (DeepSpeedConfigModel) class -> {"fields": {name: facts}, "extra": ...}; nested models
    are described into `models` by qualified name. Facts: kinds, choices, alias, deprecated, new_param."""
    qual = f"{mod.name}.{cls.name}"
    if qual in models:
        return qual
    models[qual] = None
    fields, _ = all_fields(py, mod, cls)
    out = {"fields": {}}
    for name, (ann, default, kw, fmod) in fields.items():
        nested = {}
        d = describe(py, fmod, ann, nested)
        facts = compact(d)
        if "alias" in kw:
            facts["alias"] = py.constant(fmod, kw["alias"])
        extra = kw.get("json_schema_extra")
        if isinstance(extra, ast.Dict):
            for k, v in zip(extra.keys, extra.values):
                if isinstance(k, ast.Constant) and k.value in ("deprecated", "new_param"):
                    try:
                        facts[k.value] = py.constant(fmod, v)
                    except ValueError:
                        pass
        if "deprecated" in kw:
            facts["deprecated"] = py.constant(fmod, kw["deprecated"])
        if not facts.get("deprecated"):
            facts.pop("deprecated", None)
            facts.pop("new_param", None)
        for nm, nc in nested.values():
            if enum_members(py, nm, nc) is None:
                pydantic_model(py, nm, nc, models)
        out["fields"][name] = facts
    # model_config = ConfigDict(extra=...) on the class or its bases (DeepSpeedConfigModel forbids extras)
    out["extra"] = "ignore"
    for m, c in reversed(mro(py, mod, cls)[0]):
        for item in c.body:
            if isinstance(item, ast.Assign) and any(ast.unparse(t) == "model_config" for t in item.targets) \
                    and isinstance(item.value, ast.Call):
                for k in item.value.keywords:
                    if k.arg == "extra":
                        out["extra"] = py.constant(m, k.value)
    models[qual] = out
    return qual


# Sections of ds_config.json that DeepSpeed reads into pydantic models: get_zero_config builds
# DeepSpeedZeroConfig, get_bfloat16_config / get_float16_config the precision ones ("bfloat16" is bf16's old name).
DS_MODELS = {
    "zero_optimization": ("deepspeed.runtime.zero.config", "DeepSpeedZeroConfig"),
    "bf16": ("deepspeed.runtime.precision_config", "DeepSpeedBF16Config"),
    "bfloat16": ("deepspeed.runtime.precision_config", "DeepSpeedBF16Config"),
    "fp16": ("deepspeed.runtime.precision_config", "DeepSpeedFP16Config"),
}
# Sections read key by key (get_scalar_param): unknown keys there are ignored by DeepSpeed, so a misspelling
# is silently lost; the checker refuses them.
DS_KEYED = ["activation_checkpointing", "optimizer"]


def deepspeed(repo):
    py = Python()
    py.add("deepspeed", repo)
    mod = py.module("deepspeed.runtime.config")
    cls = mod.top("DeepSpeedConfig")
    reads = DictReads(py)
    for fn in cls.body:
        if isinstance(fn, ast.FunctionDef) and fn.name in ("__init__", "_initialize_params"):
            env = {"param_dict": DictReads.TOP, "self._param_dict": DictReads.TOP}
            reads.function(mod, fn, env, cls)
    models = {}
    sections = {}
    for key, (mname, cname) in DS_MODELS.items():
        m = py.module(mname)
        sections[key] = {"model": pydantic_model(py, m, m.top(cname), models)}
    for key in DS_KEYED:
        sections[key] = {"keys": {k: sorted(v) or ["any"] for k, v in sorted(reads.sub.get(key, {}).items())}}
    top = {k: sorted(v) or ["any"] for k, v in sorted(reads.top.items())}
    for key in sections:
        if key in top:
            top[key] = ["object"]
    return {"top_level": top, "sections": sections, "models": dict(sorted(models.items()))}


# ---- Dataclass-based interfaces (HfArgumentParser, TrlParser, ms-swift, torchtitan) ---------------------

def dataclass_classes(py, roots, own, snapshot_of):
    """{"classes": {qualname: {"bases": [...], "fields": {name: facts}}}} for the classes in `roots`, their bases
    and the classes of their nested fields, as far as they belong to repository `own`. A class of another
    snapshotted repository is named "<snapshot>:<qualname>" (its fields live in that snapshot); a base that no
    loaded repository defines is named "external:<text>" (its fields are unknown). Fields are a class's own."""
    classes, unresolved = {}, set()
    todo = list(roots)
    while todo:
        mod, cls = todo.pop()
        qual = f"{mod.name}.{cls.name}"
        if qual in classes:
            continue
        bases = []
        for b in cls.bases:
            bm, bn = py.resolve_expr(mod, b)
            text = ast.unparse(b)
            if isinstance(bn, ast.ClassDef):
                if bm.repo is own:
                    bases.append(f"{bm.name}.{bn.name}")
                    todo.append((bm, bn))
                else:
                    bases.append(f"{snapshot_of[bm.repo]}:{bm.name}.{bn.name}")
            elif text not in ("object",) and not text.startswith("Generic"):
                bases.append(f"external:{text}")
        fields = {}
        for name, (ann, default, kw, fmod) in class_fields(py, mod, cls).items():
            if "init" in kw and isinstance(kw["init"], ast.Constant) and kw["init"].value is False:
                continue
            nested = {}
            d = describe(py, fmod, ann, nested)
            if d.get("unresolved"):
                unresolved.add(d["unresolved"])
            facts = compact(d)
            if [k for k in d["kinds"] if k != "null"] == ["bool"] and isinstance(default, ast.Constant) \
                    and default.value is True:
                facts["no_flag"] = True  # HfArgumentParser adds --no_<field> for a bool that defaults to True
            meta = kw.get("metadata")
            if isinstance(meta, ast.Dict):  # HfArgumentParser: metadata={"choices": [...]}
                for k, v in zip(meta.keys, meta.values):
                    if isinstance(k, ast.Constant) and k.value == "choices":
                        try:
                            facts["choices"] = py.constant(fmod, v)
                        except ValueError:
                            unresolved.add(ast.unparse(v))
            for nq, (nm, nc) in nested.items():
                if enum_members(py, nm, nc) is None:
                    if nm.repo is own:
                        todo.append((nm, nc))
                    else:
                        facts["class"] = f"{snapshot_of[nm.repo]}:{nq}"
            fields[name] = facts
        classes[qual] = {"bases": bases, "fields": fields}
    return {"classes": dict(sorted(classes.items())), "unresolved_types": sorted(unresolved)}


def resolve_class(py, module, name):
    mod = py.module(module)
    if mod is None:
        raise SystemExit(f"no module {module}")
    m, c = py.resolve(mod, name)
    if not isinstance(c, ast.ClassDef):
        raise SystemExit(f"no class {module}.{name}")
    return m, c


def transformers(repo):
    py = Python()
    py.add("transformers", repo, "src")
    roots = [resolve_class(py, "transformers.training_args", "TrainingArguments")]
    if repo.exists("src/transformers/training_args_seq2seq.py"):  # ms-swift's training arguments derive from it
        roots.append(resolve_class(py, "transformers.training_args_seq2seq", "Seq2SeqTrainingArguments"))
    snap = dataclass_classes(py, roots, repo, {})
    snap["entry"] = {c.name: f"{m.name}.{c.name}" for m, c in roots}
    return snap


def trl(repo, transformers_repo):
    """`trl dpo --config file.yaml`: TrlParser over (ScriptArguments, DPOConfig, ModelConfig,
    DatasetMixtureConfig) (trl/scripts/dpo.py make_parser); the YAML may also hold `env` (trl/scripts/utils.py)."""
    py = Python()
    py.add("trl", repo)
    if transformers_repo:
        py.add("transformers", transformers_repo, "src")
    dpo_script = py.module("trl.scripts.dpo")
    names = None
    for node in ast.walk(dpo_script.tree):
        if isinstance(node, ast.Assign) and any(ast.unparse(t) == "dataclass_types" for t in node.targets):
            names = [ast.unparse(e) for e in node.value.elts]
    if not names:
        raise SystemExit("trl: no dataclass_types in trl/scripts/dpo.py")
    roots = [resolve_class(py, "trl", n) for n in names]
    snap = dataclass_classes(py, roots, repo, {transformers_repo: "transformers"})
    snap["entry"] = {"trl dpo": {"classes": [f"{m.name}.{c.name}" for m, c in roots], "extra_keys": ["env"]}}
    return snap


SWIFT_COMMANDS = {  # command -> (pipeline module, class attribute args_class)
    "swift sft": "swift.pipelines.train.sft",
    "swift rlhf": "swift.pipelines.train.rlhf",
    "megatron sft": "swift.megatron.pipelines.train.sft",
    "megatron rlhf": "swift.megatron.pipelines.train.rlhf",
}


def swift(repo, transformers_repo):
    """The argument dataclass of each command, found as the `args_class` of its pipeline; parsed by
    HfArgumentParser (swift/utils/utils.py parse_args), so each field is a --field_name flag."""
    py = Python()
    py.add("swift", repo)
    if transformers_repo:
        py.add("transformers", transformers_repo, "src")
    roots, entry = [], {}
    for command, module in SWIFT_COMMANDS.items():
        mod = py.module(module)
        found = None
        for node in ast.walk(mod.tree):
            if isinstance(node, ast.Assign) and any(ast.unparse(t) == "args_class" for t in node.targets):
                found = py.resolve_expr(mod, node.value)
        if not found or not isinstance(found[1], ast.ClassDef):
            raise SystemExit(f"swift: no args_class in {module}")
        roots.append(found)
        entry[command] = f"{found[0].name}.{found[1].name}"
    snap = dataclass_classes(py, roots, repo, {transformers_repo: "transformers"})
    snap["entry"] = entry
    return snap


def torchtitan(repo):
    """TOML sections of JobConfig (torchtitan/config/job_config.py); ConfigManager._dict_to_dataclass refuses
    unknown keys (torchtitan/config/manager.py)."""
    py = Python()
    py.add("torchtitan", repo)
    repo.read("torchtitan/config/manager.py")
    root = resolve_class(py, "torchtitan.config.job_config", "JobConfig")
    snap = dataclass_classes(py, [root], repo, {})
    snap["entry"] = {"JobConfig": f"{root[0].name}.{root[1].name}"}
    return snap


# ---- Accelerate: the config YAML of `accelerate launch --config_file` ----------------------------------

# A dict section of the config file -> the `accelerate launch` options its keys set (commands/launch.py
# _validate_launch_command copies each key to args.<key>, adding the fsdp_/fp8_/dynamo_ prefix when missing;
# a key no option reads is silently ignored). Given as the argument group variable or a dest prefix.
ACCELERATE_SECTIONS = {
    "deepspeed_config": ("group", "deepspeed_args"),
    "fsdp_config": ("group", "fsdp_args"),
    "megatron_lm_config": ("group", "megatron_lm_args"),
    "fp8_config": ("group", "fp8_args"),
    "parallelism_config": ("group", "parallelism_config_args"),
    "mpirun_config": ("group", "mpirun_args"),
    "dynamo_config": ("prefix", "dynamo_"),
}
ACCELERATE_PREFIXED = {"fsdp_config": "fsdp_", "fp8_config": "fp8_", "dynamo_config": "dynamo_"}


def launch_options(py, mod):
    """{dest: {"group": variable, "kinds", "choices"?, "value"}} of every add_argument in commands/launch.py."""
    out = {}
    for node in ast.walk(mod.tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"):
            continue
        names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        longs = [n for n in names if n.startswith("--")]
        if "dest" in kw:
            dest = py.constant(mod, kw["dest"])
        elif longs:
            dest = longs[0][2:].replace("-", "_")
        elif names and not names[0].startswith("-"):
            continue  # a positional (the training script)
        else:
            continue
        action = kw["action"].value if isinstance(kw.get("action"), ast.Constant) else "store"
        facts = {"group": ast.unparse(node.func.value)}
        if action in ("store_true", "store_false"):
            facts["kinds"] = ["bool"]
        else:
            t = ast.unparse(kw["type"]) if "type" in kw else "str"
            facts["kinds"] = [{"int": "int", "float": "float"}.get(t, "str")]
        if "choices" in kw:
            try:
                facts["choices"] = py.constant(mod, kw["choices"])
            except ValueError:
                pass
        out[dest] = facts
    return out


def accelerate(repo):
    py = Python()
    py.add("accelerate", repo, "src")
    cfg_mod = py.module("accelerate.commands.config.config_args")
    cluster = resolve_class(py, "accelerate.commands.config.config_args", "ClusterConfig")
    fields, _ = all_fields(py, *cluster)
    top = {}
    for name, (ann, default, kw, fmod) in fields.items():
        top[name] = compact(describe(py, fmod, ann))
    # A local machine's distributed_type is a DistributedType (BaseConfig.__post_init__).
    dt = resolve_class(py, "accelerate.utils.dataclasses", "DistributedType")
    top["distributed_type"] = {"kinds": ["str"], "choices": [v for _, v in enum_members(py, *dt)]}
    # Keys process_config() converts to the current format before checking for unknown keys.
    legacy = set()
    for node in ast.walk(cfg_mod.top("BaseConfig")):
        if isinstance(node, ast.FunctionDef) and node.name == "process_config":
            for sub in ast.walk(node):
                if isinstance(sub, ast.Delete):
                    legacy.update(py.constant(cfg_mod, t.slice) for t in sub.targets if isinstance(t, ast.Subscript))
                if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "pop" \
                        and ast.unparse(sub.func.value) == "config_dict":
                    legacy.add(py.constant(cfg_mod, sub.args[0]))
    launch = py.module("accelerate.commands.launch")
    options = launch_options(py, launch)
    # launch decides mixed_precision: its --mixed_precision choices
    top["mixed_precision"] = {"kinds": ["null", "str"], "choices": options["mixed_precision"]["choices"]}
    sections = {}
    for section, (how, what) in ACCELERATE_SECTIONS.items():
        keys = {d: {k: v for k, v in f.items() if k != "group"} for d, f in options.items()
                if (f["group"] == what if how == "group" else d.startswith(what))}
        sections[section] = {"keys": dict(sorted(keys.items()))}
        if section in ACCELERATE_PREFIXED:
            sections[section]["prefix"] = ACCELERATE_PREFIXED[section]
    # What `accelerate config` writes (commands/config/cluster.py) should be readable by launch: say if not.
    cluster_py = py.module("accelerate.commands.config.cluster")
    for node in ast.walk(cluster_py.tree):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in sections \
                and isinstance(node.ctx, ast.Store):
            key = node.slice
            if isinstance(key, ast.Constant):  # prefix + "name" keys are built from launch's own names
                sec = sections[node.value.id]
                k = key.value
                if sec.get("prefix") and not k.startswith(sec["prefix"]):
                    k = sec["prefix"] + k
                if k not in sec["keys"]:
                    print(f"accelerate: cluster.py writes {node.value.id}[{key.value!r}], which launch does not read",
                          file=sys.stderr)
    return {"top_level": dict(sorted(top.items())), "legacy_keys": sorted(legacy), "sections": sections}


# ---- Kubernetes CRDs: Volcano Job, Kubeflow PyTorchJob ------------------------------------------------

def reduce_schema(node):
    """An openAPIV3Schema node -> {"type", "properties"?, "items"?, "values"?, "int_or_string"?, "any"?,
    "enum"?, "required"?}: property names and types only. "any": x-kubernetes-preserve-unknown-fields (any
    content kept); an object with neither properties nor additionalProperties has its unknown fields pruned."""
    out = {}
    if node.get("x-kubernetes-int-or-string"):
        out["int_or_string"] = True
    elif "type" in node:
        out["type"] = node["type"]
    elif "anyOf" in node:
        out["type"] = sorted({a.get("type") for a in node["anyOf"] if a.get("type")})
    if node.get("x-kubernetes-preserve-unknown-fields"):
        out["any"] = True
    if "properties" in node:
        out["properties"] = {k: reduce_schema(v) for k, v in sorted(node["properties"].items())}
    if isinstance(node.get("additionalProperties"), dict):
        out["values"] = reduce_schema(node["additionalProperties"])
    if "items" in node:
        out["items"] = reduce_schema(node["items"])
    if "enum" in node:
        out["enum"] = node["enum"]
    if node.get("required"):
        out["required"] = sorted(node["required"])
    return out


def crd(repo, path, group, kind):
    doc = yaml.safe_load(repo.read(path))
    assert doc["kind"] == "CustomResourceDefinition" and doc["spec"]["group"] == group, path
    assert doc["spec"]["names"]["kind"] == kind, path
    versions = {}
    for v in doc["spec"]["versions"]:
        schema = v["schema"]["openAPIV3Schema"]
        props = dict(schema["properties"])
        props.pop("status", None)  # written by the controller, not by a job file
        versions[v["name"]] = reduce_schema(dict(schema, properties=props))
    return {"apiVersion": {v: f"{group}/{v}" for v in versions}, "kind": kind, "versions": versions}


def volcano(repo):
    return crd(repo, "config/crd/volcano/bases/batch.volcano.sh_jobs.yaml", "batch.volcano.sh", "Job")


def pytorchjob(repo):
    return crd(repo, "manifests/base/crds/kubeflow.org_pytorchjobs.yaml", "kubeflow.org", "PyTorchJob")


def share_subtrees(tree, min_chars=300):
    """Move each subtree that occurs more than once (containers, probes, volume sources...) into "defs",
    named by the first property path where it occurs, and leave {"ref": name} in its places."""
    counts, first = {}, {}

    def scan(node, path):
        if isinstance(node, dict):
            key = json.dumps(node, sort_keys=True)
            counts[key] = counts.get(key, 0) + 1
            first.setdefault(key, path)
            for k, v in node.items():
                if k == "properties":
                    for name, sub in v.items():
                        scan(sub, f"{path}.{name}" if path else name)
                elif k in ("items", "values"):
                    scan(v, path + ("[]" if k == "items" else "{}"))

    scan(tree, "")
    shared = {k: first[k] for k, n in counts.items() if n > 1 and len(k) >= min_chars}
    defs = {}

    def rewrite(node):
        if isinstance(node, dict):
            key = json.dumps(node, sort_keys=True)
            if key in shared:
                name = shared[key]
                if name not in defs:
                    defs[name] = None
                    defs[name] = rewrite_children(node)
                return {"ref": name}
            return rewrite_children(node)
        return node

    def rewrite_children(node):
        out = {}
        for k, v in node.items():
            if k == "properties":
                out[k] = {name: rewrite(sub) for name, sub in v.items()}
            elif k in ("items", "values"):
                out[k] = rewrite(v)
            else:
                out[k] = v
        return out

    root = rewrite_children(tree)
    return root, dict(sorted(defs.items()))


# ---- Main ---------------------------------------------------------------------------------------------

def count(name, snap):
    """How many flags / fields / keys a snapshot holds (printed, and quoted in reports)."""
    if name in ("megatron", "megatron_deepspeed"):
        return f"{len(snap['flags'])} flags"
    if name == "deepspeed":
        n = sum(len(m["fields"]) for m in snap["models"].values())
        k = sum(len(s.get("keys", {})) for s in snap["sections"].values())
        return f"{len(snap['top_level'])} top-level keys, {n} model fields, {k} section keys"
    if name == "accelerate":
        return (f"{len(snap['top_level'])} top-level keys, "
                f"{sum(len(s['keys']) for s in snap['sections'].values())} section keys")
    if "classes" in snap:
        return f"{len(snap['classes'])} classes, {sum(len(c['fields']) for c in snap['classes'].values())} fields"
    n = 0

    def walk(node):
        nonlocal n
        for sub in node.get("properties", {}).values():
            n += 1
            walk(sub)
        for k in ("items", "values"):
            if k in node:
                walk(node[k])
    for v in snap["versions"].values():
        walk(v)
    for d in snap.get("defs", {}).values():
        walk(d)
    return f"{n} schema properties"


def dumps(value, indent=0):
    """JSON with sorted keys, one entry per line; a value whose compact form is short stays on its line, so
    the files stay small and a changed fact is a one-line diff."""
    flat = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(", ", ": "))
    if len(flat) + indent <= 110 or not isinstance(value, (dict, list)) or not value:
        return flat
    pad = " " * (indent + 1)
    if isinstance(value, dict):
        items = [f"{pad}{json.dumps(k, ensure_ascii=False)}: {dumps(v, indent + 1)}" for k, v in sorted(value.items())]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    return "[\n" + ",\n".join(pad + dumps(v, indent + 1) for v in value) + "\n" + " " * indent + "]"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirror", default="/work/.mirror")
    ap.add_argument("--tree", action="append", default=[], metavar="REPO=DIR@COMMIT")
    ap.add_argument("--only", action="append", choices=sorted(UPSTREAMS))
    ap.add_argument("--out", default=HERE)
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    args = ap.parse_args()

    trees = {}
    for t in args.tree:
        repo, rest = t.split("=", 1)
        folder, commit = rest.rsplit("@", 1)
        trees[repo] = (folder, commit)

    def open_repo(name):
        repository, ref, _ = UPSTREAMS[name]
        if repository in trees:
            folder, commit = trees[repository]
            return Repo(repository, tree=folder, commit=commit)
        git_dir = os.path.join(args.mirror, repository.replace("/", "+"), "repo")
        if not os.path.isdir(git_dir):
            return None
        return Repo(repository, git_dir=git_dir, ref=ref)

    repos = {name: open_repo(name) for name in UPSTREAMS}
    builders = {
        "megatron": lambda: megatron(repos["megatron"]),
        "megatron_deepspeed": lambda: megatron_deepspeed(repos["megatron_deepspeed"], repos["deepspeed"]),
        "deepspeed": lambda: deepspeed(repos["deepspeed"]),
        "transformers": lambda: transformers(repos["transformers"]),
        "accelerate": lambda: accelerate(repos["accelerate"]),
        "trl": lambda: trl(repos["trl"], repos["transformers"]),
        "swift": lambda: swift(repos["swift"], repos["transformers"]),
        "torchtitan": lambda: torchtitan(repos["torchtitan"]),
        "volcano": lambda: volcano(repos["volcano"]),
        "pytorchjob": lambda: pytorchjob(repos["pytorchjob"]),
    }
    status = 0
    for name in args.only or UPSTREAMS:
        repo = repos[name]
        if repo is None:
            print(f"{name}: {UPSTREAMS[name][0]} not found under {args.mirror} (nor given with --tree): not written",
                  file=sys.stderr)
            status = 1
            continue
        snap = builders[name]()
        if name in ("volcano", "pytorchjob"):
            defs = {}
            for v, tree in snap["versions"].items():
                snap["versions"][v], d = share_subtrees(tree)
                defs.update(d)
            snap["defs"] = defs
        doc = dict(repo.header(), extracted=args.date, **snap)
        if UPSTREAMS[name][2]:
            doc["ref_reason"] = UPSTREAMS[name][2]
        if name == "trl" or name == "swift":  # fields inherited from TrainingArguments live in transformers.json
            tf = repos["transformers"]
            doc["uses"] = {"transformers": tf.commit if tf else None}
        path = os.path.join(args.out, f"{name}.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(dumps(doc) + "\n")
        print(f"{name}: {repo.repository} {repo.commit[:12]}: {count(name, snap)} -> {os.path.relpath(path)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
