# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read an installed SGLang package without importing it.

A release venv on a build host has no GPU stack (torch, flashinfer, ...), so importing
``sglang.srt.speculative.spec_info`` would fail there. What an operator needs to know
before starting a unit is in the source text anyway: which members
``SpeculativeAlgorithm`` has, which names are accepted as aliases (``NEXTN`` is EAGLE),
and for which members ``is_dflash()`` is true. The field report's DDTree build crashed
with a 5120 vs 25600 hidden-size mismatch because ``is_dflash()`` did not cover DDTREE,
so that method is evaluated statically here rather than trusted by name.

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
# Older releases rewrote NEXTN to EAGLE in ServerArgs instead.
SERVER_ARGS_SOURCE = "srt/server_args.py"
ENUM_CLASS = "SpeculativeAlgorithm"
DFLASH_METHOD = "is_dflash"
# Algorithms whose draft model reads the target's captured hidden layers (DFlash family):
# when one of them is required, is_dflash() must be true for it.
DFLASH_CAPTURE_ALGORITHMS = ("DDTREE",)
_NAME_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")


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


def _server_args_aliases(tree):
    """``if self.speculative_algorithm == "X": self.speculative_algorithm = "Y"`` (older ServerArgs)."""
    aliases = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1):
            continue
        left, right = node.test.left, node.test.comparators[0]
        if not (
            isinstance(node.test.ops[0], ast.Eq)
            and isinstance(left, ast.Attribute)
            and left.attr == "speculative_algorithm"
            and isinstance(right, ast.Constant)
            and isinstance(right.value, str)
        ):
            continue
        for stmt in node.body:
            if (
                isinstance(stmt, ast.Assign)
                and isinstance(stmt.targets[0], ast.Attribute)
                and stmt.targets[0].attr == "speculative_algorithm"
                and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)
            ):
                aliases[right.value.upper()] = stmt.value.value.upper()
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
        if os.path.basename(name) == os.path.basename(SERVER_ARGS_SOURCE):
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
    for relative in ALIAS_SOURCES + (SERVER_ARGS_SOURCE,):
        candidate = os.path.join(package_dir, relative)
        if os.path.isfile(candidate) and os.path.abspath(candidate) != os.path.abspath(spec_info):
            with open(candidate, encoding="utf-8", errors="replace") as handle:
                extra[relative] = handle.read()
    result = analyze_spec_info(text, filename=spec_info, extra_sources=extra)
    result["spec_info_path"] = spec_info
    return result


def check_requirements(analysis, required):
    """Problems that keep a release from serving the ``required`` algorithm names.

    A name is available when it is a member or a known alias. A required DFlash-family
    algorithm (DDTREE) must also make ``is_dflash()`` true, or the target captures the wrong
    hidden states. Returns a list of human-readable problems, empty when all is well.
    """
    problems = []
    members = analysis["algorithms"]
    aliases = analysis["aliases"]
    for name in required:
        upper = name.upper()
        if upper not in members and upper not in aliases:
            known = ", ".join(members)
            problems.append(
                f"SpeculativeAlgorithm has no {upper} (it has {known}): install a build that adds it, "
                "e.g. with a patch in sglang_install_patches"
            )
            continue
        if upper in DFLASH_CAPTURE_ALGORITHMS:
            covered = analysis["is_dflash"]
            if covered is None:
                problems.append(
                    f"is_dflash() could not be read statically, so it is unknown whether {upper} captures the "
                    "target's hidden layers as DFLASH does: enable the runtime import check on a host "
                    "with the full stack"
                )
            elif upper not in covered:
                true_for = ", ".join(covered) or "nothing"
                problems.append(
                    f"is_dflash() is false for {upper} (true for {true_for} only): the DFlash draft would get "
                    "the wrong hidden-state size (5120 vs 25600 in the field report); apply a patch that "
                    f"makes is_dflash() cover {upper}"
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
print(json.dumps({
    "version": getattr(sglang, "__version__", None),
    "algorithms": [m.name for m in S],
    "is_dflash": [m.name for m in S if m.is_dflash()],
    "accepted": accepted,
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
