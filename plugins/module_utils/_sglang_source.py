# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read an installed SGLang package without importing it.

A release venv on a build host has no GPU stack (torch, flashinfer, ...), so importing
``sglang.srt.speculative.spec_info`` would fail there. What an operator needs to know
before starting a unit is in the source text anyway: which members
``SpeculativeAlgorithm`` has, which names are accepted as aliases (``NEXTN`` is EAGLE),
for which members ``is_dflash()`` is true, and how DDTREE is wired (sgl-project/sglang
PR #29907: its member, the worker ``create_worker()`` selects for it, the
``--speculative-ddtree-budget`` field, what its server-args hook enforces). Predicates and
the worker selection are followed statically rather than trusted by name: the field
report's ``is_dflash()`` patch made DDTREE a member that ``create_worker()`` hands to the
linear DFlash worker.

Used by the ``sglang_release_info`` module (the ``sglang_install`` role's verification).
"""

from __future__ import absolute_import, division, print_function

import ast
import glob
import json
import os
import re

# Where SpeculativeAlgorithm lives, relative to the ``sglang`` package directory, newest
# layout first; a scan of srt/speculative is the fallback for a layout not listed here.
SPEC_INFO_CANDIDATES = ("srt/speculative/spec_info.py",)
# Files that may define aliases (``_RESERVED_ALIASES = frozenset({"NEXTN"})`` in 0.5.x).
ALIAS_SOURCES = ("srt/speculative/spec_registry.py", "srt/speculative/spec_info.py")
# Older releases rewrote NEXTN to EAGLE in ServerArgs instead, #29907's base in a hook.
SERVER_ARGS_SOURCE = "srt/server_args.py"
NAME_REWRITE_SOURCES = (SERVER_ARGS_SOURCE, "srt/arg_groups/speculative_hook.py")
ENUM_CLASS = "SpeculativeAlgorithm"
DFLASH_METHOD = "is_dflash"
_NAME_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")

# --- DDTree wiring (sgl-project/sglang PR #29907) ---------------------------------------------
# What #29907 adds to SGLang, read from its branch (spec_info.py, server_args.py and
# arg_groups/speculative_hook.py of the PR's head; docs/install.md quotes the lines):
# - ``DDTREE = auto()`` in SpeculativeAlgorithm and ``is_ddtree()``;
# - in ``SpeculativeAlgorithm.create_worker``: ``if self.is_ddtree(): from
#   sglang.srt.speculative.ddtree_worker import DDTreeWorker; return DDTreeWorker``;
# - the ServerArgs field ``speculative_ddtree_budget`` (``--speculative-ddtree-budget``);
# - ``_handle_ddtree(server_args)``: refuses ``page_size != 1`` ("DDTREE currently supports only
#   page_size == 1.") and sets ``disable_overlap_schedule = True`` itself.
DDTREE = "DDTREE"
DDTREE_WORKER = "DDTreeWorker"
DDTREE_BUDGET_FIELD = "speculative_ddtree_budget"
DDTREE_HOOK = "_handle_ddtree"
CREATE_WORKER_METHOD = "create_worker"
# Where ServerArgs fields live: one dataclass in older trees (and #29907's base), field
# groups under arg_groups/fields/ from 0.5.2x on.
SERVER_ARGS_FIELD_SOURCES = ("srt/server_args.py", "srt/arg_groups/fields/*.py")
# Where the per-algorithm server-args hooks live.
HOOK_SOURCES = ("srt/arg_groups/speculative_hook.py", "srt/arg_groups/*.py", "srt/server_args.py")


class SglangSourceError(Exception):
    """The path holds no readable SGLang package, or its source has an unknown layout."""


def find_package_dir(path):
    """Return the ``sglang`` package directory for a venv, a site-packages dir or the package.

    A release directory is a venv, so ``<path>/lib/python3*/site-packages/sglang`` is the
    usual hit; a site-packages directory or the package directory itself work too.
    """
    path = os.path.abspath(path)
    if not os.path.isdir(path):
        raise SglangSourceError(f"{path} does not exist or is not a directory")
    candidates = [
        path,
        os.path.join(path, "sglang"),
    ] + sorted(glob.glob(os.path.join(path, "lib", "python3*", "site-packages", "sglang")))
    for candidate in candidates:
        if os.path.basename(candidate) == "sglang" and os.path.isfile(os.path.join(candidate, "__init__.py")):
            return candidate
    raise SglangSourceError(
        f"no sglang package under {path} (looked for sglang/__init__.py in the directory, in it as "
        "site-packages, and in lib/python3*/site-packages of a venv)"
    )


def read_distribution(package_dir):
    """Version and PEP 610 origin (direct_url.json) of the installed distribution.

    Returns a dict with ``version`` (None when no dist-info is found, e.g. a source tree)
    and ``direct_url`` (the parsed direct_url.json, or None for an index install).
    """
    site_packages = os.path.dirname(package_dir)
    info = {"version": None, "direct_url": None, "dist_info": None}
    for dist_info in sorted(glob.glob(os.path.join(site_packages, "*.dist-info"))):
        name = os.path.basename(dist_info)[: -len(".dist-info")].rsplit("-", 1)[0]
        if name.lower().replace("-", "_") != "sglang":
            continue
        info["dist_info"] = dist_info
        metadata = os.path.join(dist_info, "METADATA")
        if os.path.isfile(metadata):
            with open(metadata, encoding="utf-8", errors="replace") as handle:
                for line in handle:
                    if not line.strip():
                        break  # end of the headers
                    if line.startswith("Version:"):
                        info["version"] = line.split(":", 1)[1].strip()
        direct_url = os.path.join(dist_info, "direct_url.json")
        if os.path.isfile(direct_url):
            with open(direct_url, encoding="utf-8") as handle:
                try:
                    info["direct_url"] = json.load(handle)
                except ValueError:
                    info["direct_url"] = None
        break
    return info


def find_spec_info(package_dir):
    """Path of the file that defines ``class SpeculativeAlgorithm``."""
    for relative in SPEC_INFO_CANDIDATES:
        candidate = os.path.join(package_dir, relative)
        if os.path.isfile(candidate):
            return candidate
    marker = f"class {ENUM_CLASS}("
    for candidate in sorted(glob.glob(os.path.join(package_dir, "srt", "speculative", "*.py"))):
        with open(candidate, encoding="utf-8", errors="replace") as handle:
            if marker in handle.read():
                return candidate
    raise SglangSourceError(f"no file under {package_dir}/srt/speculative defines class {ENUM_CLASS}")


def _parse(text, filename):
    try:
        return ast.parse(text, filename=filename)
    except SyntaxError as exc:
        # A patch that applied with fuzz can still leave broken code: name the line.
        raise SglangSourceError(f"{filename} does not parse: {exc.msg} (line {exc.lineno})") from None


def _find_class(tree, name):
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    return None


def _enum_members(class_node):
    members = []
    for stmt in class_node.body:
        targets = []
        if isinstance(stmt, ast.Assign):
            targets = stmt.targets
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            targets = [stmt.target]
        for target in targets:
            if isinstance(target, ast.Name) and _NAME_RE.match(target.id):
                members.append(target.id)
    return members


class _MemberSetEvaluator:
    """Evaluate a predicate method of the enum to the set of members it is true for.

    Understands what SGLang writes in these one-liners: ``self == A``, ``self is A``,
    ``self in (A, B)`` (tuple, list, set, frozenset), ``or``/``and`` of those, ``not``,
    ``True``/``False`` and calls of other ``self.is_*()`` methods. Anything else makes the
    result unknown (None) instead of a guess.
    """

    def __init__(self, class_node, members):
        self.members = set(members)
        self.methods = {
            stmt.name: stmt for stmt in class_node.body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        self._stack = []

    def method(self, name):
        node = self.methods.get(name)
        if node is None or name in self._stack:
            return None
        body = [stmt for stmt in node.body if not _is_docstring(stmt)]
        if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
            return None
        self._stack.append(name)
        try:
            return self.expr(body[0].value)
        finally:
            self._stack.pop()

    def _member(self, node):
        # SpeculativeAlgorithm.X, cls.X, type(self).X
        if isinstance(node, ast.Attribute) and node.attr in self.members:
            return node.attr
        return None

    def _is_self(self, node):
        return isinstance(node, ast.Name) and node.id == "self"

    def expr(self, node):
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            return set(self.members) if node.value else set()
        if isinstance(node, ast.BoolOp):
            parts = [self.expr(value) for value in node.values]
            if any(part is None for part in parts):
                return None
            result = parts[0]
            for part in parts[1:]:
                result = result | part if isinstance(node.op, ast.Or) else result & part
            return result
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = self.expr(node.operand)
            return None if inner is None else self.members - inner
        if isinstance(node, ast.Call) and not node.args and not node.keywords:
            func = node.func
            if isinstance(func, ast.Attribute) and self._is_self(func.value):
                return self.method(func.attr)
            return None
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            return self._compare(node.left, node.ops[0], node.comparators[0])
        return None

    def _compare(self, left, op, right):
        if not self._is_self(left):
            if self._is_self(right) and isinstance(op, (ast.Eq, ast.Is, ast.NotEq, ast.IsNot)):
                left, right = right, left
            else:
                return None
        if isinstance(op, (ast.Eq, ast.Is, ast.NotEq, ast.IsNot)):
            member = self._member(right)
            if member is None:
                return None
            found = {member}
            return found if isinstance(op, (ast.Eq, ast.Is)) else self.members - found
        if isinstance(op, (ast.In, ast.NotIn)):
            elements = None
            if isinstance(right, (ast.Tuple, ast.List, ast.Set)):
                elements = right.elts
            elif (
                isinstance(right, ast.Call)
                and isinstance(right.func, ast.Name)
                and right.func.id in ("frozenset", "set", "tuple")
                and len(right.args) == 1
                and isinstance(right.args[0], (ast.Tuple, ast.List, ast.Set))
            ):
                elements = right.args[0].elts
            if elements is None:
                return None
            found = set()
            for element in elements:
                member = self._member(element)
                if member is None:
                    return None
                found.add(member)
            return found if isinstance(op, ast.In) else self.members - found
        return None


def _is_docstring(stmt):
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _string_constants(node):
    return [
        child.value
        for child in ast.walk(node)
        if isinstance(child, ast.Constant) and isinstance(child.value, str) and _NAME_RE.match(child.value)
    ]


def _from_string_aliases(class_node, members):
    """Aliases a ``from_string`` accepts: dict literal keys and ``if x in ALIASES: return cls.Y``."""
    aliases = {}
    alias_sets = {}
    method = next(
        (stmt for stmt in class_node.body if isinstance(stmt, ast.FunctionDef) and stmt.name == "from_string"), None
    )
    if method is None:
        return aliases, alias_sets
    for node in ast.walk(method):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=False):
                if isinstance(key, ast.Constant) and isinstance(key.value, str) and isinstance(value, ast.Attribute):
                    if key.value not in members and value.attr in members:
                        aliases[key.value] = value.attr
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1:
            comparator = node.test.comparators[0]
            if isinstance(node.test.ops[0], ast.In) and isinstance(comparator, ast.Name):
                returned = [stmt.value for stmt in node.body if isinstance(stmt, ast.Return)]
                if returned and isinstance(returned[0], ast.Attribute) and returned[0].attr in members:
                    alias_sets[comparator.id] = returned[0].attr
    return aliases, alias_sets


def _module_alias_constants(tree):
    """Module-level ``*ALIAS*`` constants: name -> the upper-case strings they hold."""
    found = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            value = stmt.value
            for target in targets:
                if isinstance(target, ast.Name) and "ALIAS" in target.id.upper() and value is not None:
                    found[target.id] = _string_constants(value)
    return found


def _algorithm_names_tested(test):
    """The names an ``if`` tests ``speculative_algorithm`` (attribute or variable) to be equal to."""
    compares = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
    names = []
    for compare in compares:
        if not (isinstance(compare, ast.Compare) and len(compare.ops) == 1 and isinstance(compare.ops[0], ast.Eq)):
            return []
        left, right = compare.left, compare.comparators[0]
        subject = left.attr if isinstance(left, ast.Attribute) else getattr(left, "id", None)
        if subject != "speculative_algorithm" or not (isinstance(right, ast.Constant) and isinstance(right.value, str)):
            return []
        names.append(right.value.upper())
    return names


def _server_args_aliases(tree):
    """Rewrites of the algorithm name before the enum sees it.

    Older ServerArgs: ``if self.speculative_algorithm == "NEXTN": self.speculative_algorithm =
    "EAGLE"``. The base of SGLang PR 29907 (arg_groups/speculative_hook.py,
    ``_resolve_speculative_algorithm_alias``): ``if speculative_algorithm == "NEXTN" or
    speculative_algorithm == "EAGLE": ... return "EAGLE"`` (the branch's last statement).
    """
    aliases = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        names = _algorithm_names_tested(node.test)
        targets = [
            stmt.value.value
            for stmt in node.body
            if isinstance(stmt, ast.Assign)
            and isinstance(stmt.targets[0], ast.Attribute)
            and stmt.targets[0].attr == "speculative_algorithm"
            and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str)
        ]
        last = node.body[-1] if node.body else None
        if isinstance(last, ast.Return) and isinstance(last.value, ast.Constant) and isinstance(last.value.value, str):
            targets.append(last.value.value)
        for name in names:
            for target in targets:
                if name != target.upper():
                    aliases[name] = target.upper()
    return aliases


def analyze_spec_info(text, filename="spec_info.py", extra_sources=None):
    """Members, aliases and is_dflash() coverage of ``SpeculativeAlgorithm`` in ``text``.

    ``extra_sources`` maps file names to their text; module-level alias constants and
    ServerArgs rewrites found there count as aliases. Returns a dict with ``algorithms``
    (members in source order), ``aliases`` (alias -> member, or None when the target is not
    known), ``is_dflash`` (sorted members, or None when the method is absent or too clever to
    evaluate statically).
    """
    tree = _parse(text, filename)
    class_node = _find_class(tree, ENUM_CLASS)
    if class_node is None:
        raise SglangSourceError(f"{filename} does not define class {ENUM_CLASS}")
    members = _enum_members(class_node)
    if not members:
        raise SglangSourceError(
            f"{filename} defines {ENUM_CLASS} without enum members (a registry-based layout this static reader does "
            "not know); use the runtime import check on a host with the full stack"
        )
    aliases, alias_sets = _from_string_aliases(class_node, members)
    trees = [(filename, tree)]
    for name, source in sorted((extra_sources or {}).items()):
        trees.append((name, _parse(source, name)))
    for name, source_tree in trees:
        for constant, names in _module_alias_constants(source_tree).items():
            for alias in names:
                if alias not in members:
                    aliases.setdefault(alias, alias_sets.get(constant))
        if any(name.endswith(os.path.basename(source)) for source in NAME_REWRITE_SOURCES):
            for alias, target in _server_args_aliases(source_tree).items():
                if alias not in members:
                    aliases.setdefault(alias, target if target in members else None)
    evaluator = _MemberSetEvaluator(class_node, members)
    dflash = evaluator.method(DFLASH_METHOD)
    return {
        "algorithms": members,
        "aliases": aliases,
        "is_dflash": None if dflash is None else [m for m in members if m in dflash],
    }


def read_package(package_dir):
    """Analyze an installed package: the spec_info file plus the files that may hold aliases."""
    spec_info = find_spec_info(package_dir)
    with open(spec_info, encoding="utf-8") as handle:
        text = handle.read()
    extra = {}
    for relative in ALIAS_SOURCES + NAME_REWRITE_SOURCES:
        candidate = os.path.join(package_dir, relative)
        if os.path.isfile(candidate) and os.path.abspath(candidate) != os.path.abspath(spec_info):
            with open(candidate, encoding="utf-8", errors="replace") as handle:
                extra[relative] = handle.read()
    result = analyze_spec_info(text, filename=spec_info, extra_sources=extra)
    result["spec_info_path"] = spec_info
    return result


def check_requirements(analysis, required):
    """Problems that keep a release from serving the ``required`` algorithm names.

    A name is available when it is a member or a known alias. How DDTREE is wired (its worker,
    its flag) is ``check_ddtree_wiring``'s part. Returns human-readable problems, empty when
    all is well.
    """
    problems = []
    members = analysis["algorithms"]
    aliases = analysis["aliases"]
    for name in required:
        upper = name.upper()
        if upper not in members and upper not in aliases:
            known = ", ".join(members)
            fix = (
                "install a build that adds it: SGLang PR #29907's branch as a git source, or the release plus "
                "#29907's diff in sglang_install_patches (docs/install.md)"
                if upper == DDTREE
                else "install a build that adds it, e.g. with a patch in sglang_install_patches"
            )
            problems.append(f"SpeculativeAlgorithm has no {upper} (it has {known}): {fix}")
    return problems


def _truth(evaluator, node, member):
    """Whether ``node`` (a condition inside an enum method) holds for ``member``: True, False or None.

    Unlike ``_MemberSetEvaluator.expr`` this copes with conditions that mix the algorithm with
    server arguments (``self.is_eagle() and cfg.enable_multi_layer_eagle``): an ``and`` with one
    false part is false, an ``or`` with one true part is true, whatever the rest says.
    """
    if isinstance(node, ast.BoolOp):
        parts = [_truth(evaluator, value, member) for value in node.values]
        if isinstance(node.op, ast.And):
            if False in parts:
                return False
            return True if all(part is True for part in parts) else None
        if True in parts:
            return True
        return False if all(part is False for part in parts) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _truth(evaluator, node.operand, member)
        return None if inner is None else not inner
    members = evaluator.expr(node)
    return None if members is None else member in members


def _mentions_self(node):
    return any(isinstance(child, ast.Name) and child.id == "self" for child in ast.walk(node))


def _imports(statements):
    """Names imported by ``from X import Y [as Z]`` anywhere in ``statements``: name -> module."""
    found = {}
    for stmt in statements:
        for node in ast.walk(stmt):
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    found[alias.asname or alias.name] = node.module
    return found


def selected_worker(tree, class_node, members, member=DDTREE):
    """The worker class ``create_worker()`` returns for ``member``, followed statically.

    Walks the method's statements in order as Python would for that member: an ``if`` whose
    condition holds for it is entered, one that does not is skipped (its ``elif``/``else``
    taken), and the first ``return <Name>`` gives the worker. Conditions that do not look at
    the algorithm (an out-of-tree platform's override) are taken as false. Returns a dict with
    ``class`` and ``module`` (None when the name was not imported), or ``unknown`` with the
    line that could not be decided, or None when the method is absent or returns nothing.
    """
    method = next(
        (stmt for stmt in class_node.body if isinstance(stmt, ast.FunctionDef) and stmt.name == CREATE_WORKER_METHOD),
        None,
    )
    if method is None:
        return None
    evaluator = _MemberSetEvaluator(class_node, members)
    module_imports = _imports(tree.body)

    def walk(statements, imported):
        for stmt in statements:
            if isinstance(stmt, ast.If):
                truth = _truth(evaluator, stmt.test, member) if _mentions_self(stmt.test) else False
                if truth is None:
                    return {"unknown": stmt.lineno}
                branch = stmt.body if truth else stmt.orelse
                found = walk(branch, {**imported, **_imports(branch)})
                if found is not None:
                    return found
            elif isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Name):
                name = stmt.value.id
                return {"class": name, "module": imported.get(name, module_imports.get(name)), "line": stmt.lineno}
            elif isinstance(stmt, ast.Raise):
                return None
        return None

    return walk(method.body, _imports([]))


def _module_file(package_dir, module):
    """The file of a ``sglang.x.y`` module inside the package directory, or None."""
    parts = module.split(".")
    if not parts or parts[0] != "sglang":
        return None
    base = os.path.join(os.path.dirname(package_dir), *parts)
    for candidate in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(candidate):
            return candidate
    return None


def _read(path):
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def _source_files(package_dir, patterns):
    seen = []
    for pattern in patterns:
        for path in sorted(glob.glob(os.path.join(package_dir, pattern))):
            if os.path.isfile(path) and path not in seen:
                seen.append(path)
    return seen


def find_class_field(package_dir, field, patterns=SERVER_ARGS_FIELD_SOURCES):
    """``file:line`` of an annotated class attribute named ``field`` (a ServerArgs field), or None."""
    for path in _source_files(package_dir, patterns):
        text = _read(path)
        if field not in text:
            continue
        for node in ast.walk(_parse(text, path)):
            if isinstance(node, ast.ClassDef):
                for stmt in node.body:
                    target = getattr(stmt, "target", None) if isinstance(stmt, ast.AnnAssign) else None
                    if isinstance(target, ast.Name) and target.id == field:
                        return f"{path}:{stmt.lineno}"
    return None


def _hook_constraints(function):
    """What a ``_handle_ddtree`` enforces: a page size it refuses to differ from, overlap it turns off."""
    constraints = {}
    for node in ast.walk(function):
        # if <x>.page_size != N: raise ...
        if isinstance(node, ast.If) and any(isinstance(stmt, ast.Raise) for stmt in node.body):
            for compare in ast.walk(node.test):
                if (
                    isinstance(compare, ast.Compare)
                    and isinstance(compare.left, ast.Attribute)
                    and compare.left.attr == "page_size"
                    and len(compare.ops) == 1
                    and isinstance(compare.ops[0], ast.NotEq)
                    and isinstance(compare.comparators[0], ast.Constant)
                ):
                    constraints["page_size"] = compare.comparators[0].value
        # <x>.disable_overlap_schedule = True (the PR) or declare_resolution(..., disable_overlap_schedule=True)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.value.value is True:
            if any(isinstance(t, ast.Attribute) and t.attr == "disable_overlap_schedule" for t in node.targets):
                constraints["disable_overlap_schedule"] = True
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if (
                    keyword.arg == "disable_overlap_schedule"
                    and isinstance(keyword.value, ast.Constant)
                    and keyword.value.value is True
                ):
                    constraints["disable_overlap_schedule"] = True
    return constraints


def find_hook(package_dir, name=DDTREE_HOOK, patterns=HOOK_SOURCES):
    """``(file:line, constraints)`` of the module-level function ``name``, or ``(None, {})``."""
    for path in _source_files(package_dir, patterns):
        text = _read(path)
        if f"def {name}(" not in text:
            continue
        for stmt in _parse(text, path).body:
            if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
                return f"{path}:{stmt.lineno}", _hook_constraints(stmt)
    return None, {}


def read_ddtree_wiring(package_dir, spec_info_path):
    """How an installed SGLang wires DDTREE, against what #29907 defines (see the constants above).

    Returns ``registered`` (DDTREE is a member), ``worker`` (what ``create_worker()`` gives
    DDTREE: class, module, the module's file, whether it defines the class), ``budget_field``
    (``file:line`` of ``speculative_ddtree_budget`` or None), ``hook`` (``file:line`` of
    ``_handle_ddtree`` or None) and ``constraints`` (what that hook enforces: ``page_size``,
    ``disable_overlap_schedule``).
    """
    tree = _parse(_read(spec_info_path), spec_info_path)
    class_node = _find_class(tree, ENUM_CLASS)
    members = _enum_members(class_node) if class_node is not None else []
    worker = selected_worker(tree, class_node, members) if DDTREE in members else None
    if worker and worker.get("module"):
        worker["file"] = _module_file(package_dir, worker["module"])
        worker["defined"] = bool(worker["file"]) and any(
            isinstance(node, ast.ClassDef) and node.name == worker["class"]
            for node in ast.walk(_parse(_read(worker["file"]), worker["file"]))
        )
    elif worker and "class" in worker:
        worker.update(file=None, defined=False)
    hook, constraints = find_hook(package_dir)
    return {
        "registered": DDTREE in members,
        "worker": worker,
        "budget_field": find_class_field(package_dir, DDTREE_BUDGET_FIELD),
        "hook": hook,
        "constraints": constraints,
    }


def check_ddtree_wiring(wiring):
    """Problems that keep an installed SGLang from serving DDTREE as #29907 does; empty when wired."""
    problems = []
    if not wiring["registered"]:
        return problems  # check_requirements names the missing member
    worker = wiring["worker"]
    fix = (
        "install #29907 (sglang_install_source: git, sglang_install_git_ref: refs/pull/29907/head) or apply "
        "its diff as a patch (docs/install.md)"
    )
    if worker is None:
        problems.append(f"SpeculativeAlgorithm.create_worker() selects no worker for DDTREE: {fix}")
    elif "unknown" in worker:
        problems.append(
            f"which worker SpeculativeAlgorithm.create_worker() selects for DDTREE cannot be read statically "
            f"(line {worker['unknown']}): enable the runtime import check on a host with the full stack"
        )
    elif worker["class"] != DDTREE_WORKER:
        problems.append(
            f"SpeculativeAlgorithm.create_worker() gives DDTREE the {worker['class']} worker, not {DDTREE_WORKER}: "
            "DDTREE would run as another algorithm (an is_dflash() patch that covers DDTREE routes it to the "
            f"linear DFlash worker); drop that patch and {fix}"
        )
    elif not worker["defined"]:
        problems.append(
            f"create_worker() imports {DDTREE_WORKER} from {worker['module']}, which "
            f"{'does not define it' if worker['file'] else 'is not in the installed package'}: the server would "
            f"fail at start with an ImportError; {fix}"
        )
    if wiring["budget_field"] is None:
        problems.append(
            f"ServerArgs has no field {DDTREE_BUDGET_FIELD}, so --speculative-ddtree-budget is an unknown flag: {fix}"
        )
    return problems


# Runs in the release's own python: the import needs the full stack (torch, ...).
IMPORT_CHECK_SCRIPT = """
import json
import sys

import sglang
from sglang.srt.speculative.spec_info import SpeculativeAlgorithm as S

accepted = {}
for name in sys.argv[1:]:
    try:
        accepted[name] = S.from_string(name).name
    except Exception:
        accepted[name] = None
ddtree_worker = None
if accepted.get("DDTREE"):
    # The worker #29907 selects for DDTREE must import with the full stack, not only exist.
    try:
        from sglang.srt.speculative.ddtree_worker import DDTreeWorker

        ddtree_worker = DDTreeWorker.__name__
    except Exception as exc:
        ddtree_worker = "%s: %s" % (type(exc).__name__, exc)
print(json.dumps({
    "version": getattr(sglang, "__version__", None),
    "algorithms": [m.name for m in S],
    "is_dflash": [m.name for m in S if m.is_dflash()],
    "accepted": accepted,
    "ddtree_worker": ddtree_worker,
}))
"""


def parse_import_check(stdout):
    """The JSON line the import check prints last (imports may log to stdout before it)."""
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                break
    raise SglangSourceError("the import check printed no result: %s" % (stdout.strip()[-500:] or "(nothing)"))
