# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The command line options of an installed SGLang release, read from its files without importing it.

Importing SGLang pulls in torch and CUDA; a preflight check on a host, a controller without GPUs and
the test simulator must not need either. So the release's ``sglang/srt/server_args.py`` (and, from the
release where the fields moved out of it, ``sglang/srt/arg_groups/fields/*.py``) are read with ``ast``
and the argparse options are derived the way the release derives them:

- the ``arg_groups`` layout (0.5.23: ``ServerArgs`` assembles its fields from the namespace classes
  listed in ``_INPUT_NAMESPACES``; ``arg_groups/arg_utils.py`` ``add_cli_args_from_dataclass`` turns
  every ``A[T, "help"]`` / ``A[T, Arg(...)]`` field into an option: ``--`` + field name with dashes,
  ``Arg(cli_name=, aliases=, no_cli=, choices=, action=, nargs=, type_parser=)``, ``bool`` ->
  ``store_true``, ``Literal`` -> choices, ``Optional`` unwrapped, ``List[X]`` -> ``nargs='+'``),
  followed by the explicit ``parser.add_argument`` calls of ``ServerArgs.add_cli_args``;
- the older layout: one ``ServerArgs`` dataclass whose ``add_cli_args`` is a list of
  ``parser.add_argument`` calls.

Choices are kept where the release spells them statically (a literal, a module constant, a class
attribute); choices computed at run time (plugins, environment) are left out (``null``), so such an
option accepts any value here. Custom ``type=`` callables are not run: the value is accepted as text
(``type: null``), and the option's choices are left out too, since argparse checks them against the
converted value.

The table is plain JSON data (see ``read_cli_options``); ``build_parser`` makes an argparse parser of
it that refuses what the release's parser refuses with argparse's own words, and ``check_argv`` lists
every problem of an argument vector. Standard library only, no relative imports: the test simulator
loads this file on its own.
"""

from __future__ import absolute_import, division, print_function

import argparse
import ast
import contextlib
import difflib
import glob
import os
import re
import shutil
import tempfile
import zipfile

_BUILTIN_TYPES = {"int": "int", "float": "float", "str": "str"}
_PY_TYPES = {"int": int, "float": float, "str": str}
# argparse's own actions by their registry name; anything else is a custom Action class.
_PLAIN_ACTIONS = ("store", "store_true", "store_false", "store_const", "append", "append_const", "count")
# The value-less actions among them.
_NO_VALUE_ACTIONS = ("store_true", "store_false", "store_const", "append_const", "count")
# argparse's test for a negative number (argparse._negative_number_matcher): such a word is a value.
_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


class SGLangSourceError(Exception):
    """The package directory is not an SGLang release this reader understands."""


class _Unresolved(Exception):
    """A value the release computes at run time: no static answer."""


# --------------------------------------------------------------------------- source reading


class _Package:
    """Parsed modules of one installed ``sglang`` package, loaded on demand."""

    def __init__(self, package_dir):
        self.package_dir = os.path.abspath(package_dir)
        self.root = os.path.dirname(self.package_dir)
        self._modules = {}

    def path_of(self, dotted):
        """The file of a dotted module name inside the package, or None."""
        parts = dotted.split(".")
        if parts[0] != os.path.basename(self.package_dir):
            return None
        base = os.path.join(self.root, *parts)
        for candidate in (base + ".py", os.path.join(base, "__init__.py")):
            if os.path.isfile(candidate):
                return candidate
        return None

    def module(self, dotted):
        if dotted not in self._modules:
            path = self.path_of(dotted)
            self._modules[dotted] = _Module(self, dotted, path) if path else None
        return self._modules[dotted]

    def rel(self, path):
        return os.path.relpath(path, self.root).replace(os.sep, "/")


class _Module:
    def __init__(self, package, dotted, path):
        self.package = package
        self.dotted = dotted
        self.path = path
        with open(path, "rb") as f:
            source = f.read()
        try:
            self.tree = ast.parse(source, filename=path)
        except SyntaxError as err:
            raise SGLangSourceError(f"cannot parse {path}: {err}") from None
        self.defs = {}
        # Class statements by name, also when the name is rebound later (0.5.23 replaces the
        # ServerArgs class with msgspec.defstruct(...) built from it).
        self.classes = {}
        self.imports = {}
        for node in self.tree.body:
            self._index(node)

    def _index(self, node):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            self.defs[node.name] = node
            if isinstance(node, ast.ClassDef):
                self.classes[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.defs[target.id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            self.defs[node.target.id] = node
        elif isinstance(node, ast.ImportFrom):
            source = self._absolute(node)
            for alias in node.names:
                self.imports[alias.asname or alias.name] = (source, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                # `import a.b` binds `a`; `import a.b as c` binds the module a.b.
                bound = alias.name if alias.asname else alias.name.split(".")[0]
                self.imports[alias.asname or bound] = (bound, None)
        elif isinstance(node, (ast.If, ast.Try)):
            # Module-level `try: from x import y` / `if TYPE_CHECKING:` still define names.
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    self._index(child)
                elif isinstance(child, ast.ExceptHandler):
                    for stmt in child.body:
                        self._index(stmt)

    def _absolute(self, node):
        if not node.level:
            return node.module or ""
        parts = self.dotted.split(".")
        is_package = os.path.basename(self.path) == "__init__.py"
        keep = len(parts) - node.level + (1 if is_package else 0)
        base = parts[:keep]
        return ".".join(base + ([node.module] if node.module else []))

    def where(self, node):
        return f"{self.package.rel(self.path)}:{node.lineno}"

    def lookup(self, name, depth=0):
        """(module, definition node) of a module-level name, following imports inside the package."""
        if depth > 8:
            raise _Unresolved(name)
        if name in self.defs:
            return self, self.defs[name]
        if name in self.imports:
            source, original = self.imports[name]
            if original is None:
                raise _Unresolved(name)
            target = self.package.module(source)
            if target is None:
                # `from pkg import submodule`
                sub = self.package.module(source + "." + original)
                if sub is not None:
                    return sub, None
                raise _Unresolved(name)
            return target.lookup(original, depth + 1)
        raise _Unresolved(name)


def _dict_items(node):
    """(key, value) nodes of a dict display (zip(strict=) is not in Python 3.9)."""
    return [(node.keys[i], node.values[i]) for i in range(len(node.keys))]


def _call_name(node):
    """The called name of a Call: 'f' for f(...), 'x.f' for x.f(...)."""
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        inner = func.value
        if isinstance(inner, ast.Name):
            return inner.id + "." + func.attr
        return "." + func.attr
    return ""


def _static_value(module, node, depth=0):
    """The value of an expression the release spells statically; _Unresolved otherwise."""
    if depth > 20:
        raise _Unresolved("too deep")
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        values = [_static_value(module, elt, depth + 1) for elt in node.elts]
        return values if not isinstance(node, ast.Tuple) else tuple(values)
    if isinstance(node, ast.Dict):
        return dict(
            (_static_value(module, k, depth + 1), _static_value(module, v, depth + 1))
            for k, v in _dict_items(node)
            if k is not None
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = _static_value(module, node.left, depth + 1)
        right = _static_value(module, node.right, depth + 1)
        if isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
            return list(left) + list(right)
        if isinstance(left, str) and isinstance(right, str):
            return left + right
        raise _Unresolved("sum")
    if isinstance(node, ast.Call) and _call_name(node) in ("list", "tuple", "sorted") and len(node.args) == 1:
        if node.keywords:
            raise _Unresolved("call with keywords")
        value = _static_value(module, node.args[0], depth + 1)
        if isinstance(value, dict):
            value = list(value)
        return sorted(value) if _call_name(node) == "sorted" else list(value)
    if isinstance(node, ast.Name):
        owner, definition = module.lookup(node.id)
        return _definition_value(owner, definition, depth)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        owner, definition = module.lookup(node.value.id)
        if isinstance(definition, ast.ClassDef):
            for stmt in definition.body:
                if isinstance(stmt, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == node.attr for t in stmt.targets
                ):
                    return _static_value(owner, stmt.value, depth + 1)
                if (
                    isinstance(stmt, ast.AnnAssign)
                    and isinstance(stmt.target, ast.Name)
                    and stmt.target.id == node.attr
                ):
                    if stmt.value is None:
                        raise _Unresolved(node.attr)
                    return _static_value(owner, stmt.value, depth + 1)
            raise _Unresolved(node.attr)
        if definition is None and owner is not None:
            # module.CONSTANT
            inner_owner, inner = owner.lookup(node.attr)
            return _definition_value(inner_owner, inner, depth)
    raise _Unresolved(ast.dump(node)[:60])


def _definition_value(owner, definition, depth):
    if isinstance(definition, ast.Assign) or (isinstance(definition, ast.AnnAssign) and definition.value is not None):
        # A list a module fills in later (list.append/extend/+= at import time, by plugins) is not static.
        name = definition.targets[0].id if isinstance(definition, ast.Assign) else definition.target.id
        if _mutated_at_module_level(owner, name):
            raise _Unresolved(name)
        return _static_value(owner, definition.value, depth + 1)
    raise _Unresolved("not a constant")


def _mutated_at_module_level(module, name):
    for node in module.tree.body:
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            return True
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            func = node.value.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == name:
                return True
    return False


def _string_expr(node):
    """Whether an expression is a string (help text), however it is spelled."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        return _string_expr(node.left)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return _string_expr(node.func.value)
    return False


# --------------------------------------------------------------------------- types


def _subscript_parts(node):
    """(origin name, [argument nodes]) of X[...] annotations."""
    if not isinstance(node, ast.Subscript):
        return None, []
    value = node.value
    if isinstance(value, ast.Name):
        origin = value.id
    elif isinstance(value, ast.Attribute):
        origin = value.attr
    else:
        return None, []
    inner = node.slice
    args = list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]
    return origin, args


def _is_none(node):
    return isinstance(node, ast.Constant) and node.value is None or (isinstance(node, ast.Name) and node.id == "None")


def _unwrap_optional(node):
    origin, args = _subscript_parts(node)
    if origin == "Optional" and len(args) == 1:
        return args[0]
    if origin == "Union":
        rest = [a for a in args if not _is_none(a)]
        if len(rest) == 1:
            return rest[0]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        if _is_none(node.right):
            return node.left
        if _is_none(node.left):
            return node.right
    return node


def _type_name(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _infer_type(node):
    """arg_utils._infer_type_func: int, float, str; anything else is parsed as str."""
    name = _type_name(node)
    return _BUILTIN_TYPES.get(name, "str")


# --------------------------------------------------------------------------- options


def _option(dest, flags, where, action="store", nargs=None, type_="str", choices=None):
    if choices is not None:
        choices = list(choices)
    return {
        "dest": dest,
        "flags": list(flags),
        "action": action,
        "nargs": nargs,
        "type": type_,
        "choices": choices,
        "where": where,
    }


def _keywords(call):
    return dict((kw.arg, kw.value) for kw in call.keywords if kw.arg)


def _try_static(module, node, default=None):
    if node is None:
        return default
    try:
        return _static_value(module, node)
    except _Unresolved:
        return default
    except (RecursionError, TypeError, ValueError):
        return default


def _choices_of(module, node):
    """Static choices, or None (no choices, or computed at run time)."""
    if node is None:
        return None
    value = _try_static(module, node)
    if (
        isinstance(value, (list, tuple, set, frozenset))
        and value
        and all(isinstance(v, (str, int, float)) for v in value)
    ):
        return list(value)
    return None


def _action_of(module, node, flags, nargs_node, has_nargs):
    """(action, nargs, extra flags) of an add_argument action= value."""
    if node is None:
        return "store", None, []
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value, None, []
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
    if name == "BooleanOptionalAction":
        # argparse.BooleanOptionalAction registers --no-X beside every --X.
        extra = ["--no-" + f[2:] for f in flags if f.startswith("--")]
        return "custom", 0, extra
    nargs = None
    if has_nargs:
        nargs = _try_static(module, nargs_node)
    else:
        nargs = _custom_action_nargs(module, node)
    return "custom", nargs, []


def _custom_action_nargs(module, node):
    """The nargs a custom Action class's __init__ defaults to (None: one value)."""
    try:
        if isinstance(node, ast.Name):
            owner, definition = module.lookup(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            owner, mod = module.lookup(node.value.id)
            owner, definition = owner.lookup(node.attr)
        else:
            return None
    except _Unresolved:
        return None
    if not isinstance(definition, ast.ClassDef):
        return None
    for stmt in definition.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == "__init__":
            args = stmt.args
            positional = args.posonlyargs + args.args if hasattr(args, "posonlyargs") else args.args
            defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
            named = [(positional[i], defaults[i]) for i in range(len(positional))]
            named += [(args.kwonlyargs[i], args.kw_defaults[i]) for i in range(len(args.kwonlyargs))]
            for arg, default in named:
                if arg.arg == "nargs" and default is not None:
                    return _try_static(owner, default)
    return None


def _explicit_option(module, call):
    """An option of a parser.add_argument(...) call."""
    flags = []
    for arg in call.args:
        value = _try_static(module, arg)
        if not isinstance(value, str):
            return None
        flags.append(value)
    flags = [f for f in flags if f.startswith("-")]
    if not flags:
        return None
    kw = _keywords(call)
    action, nargs, extra = _action_of(module, kw.get("action"), flags, kw.get("nargs"), "nargs" in kw)
    if action != "custom" and "nargs" in kw:
        nargs = _try_static(module, kw["nargs"])
    if "dest" in kw:
        dest = _try_static(module, kw["dest"])
    else:
        long_flags = [f for f in flags if f.startswith("--")]
        dest = (long_flags or flags)[0].lstrip("-").replace("-", "_")
    type_node = kw.get("type")
    if action in _NO_VALUE_ACTIONS or (action == "custom" and nargs == 0):
        type_ = None
    elif type_node is None:
        type_ = "str"
    else:
        type_ = _BUILTIN_TYPES.get(_type_name(type_node) if isinstance(type_node, ast.Name) else None)
    # argparse checks choices after type= converted the value: with a type of the release's own
    # the raw text cannot be checked against them here.
    custom_type = type_node is not None and type_ is None
    choices = None if custom_type else _choices_of(module, kw.get("choices"))
    return _option(dest, flags + extra, module.where(call), action, nargs, type_, choices)


def _field_option(module, stmt, name, package):
    """arg_utils.add_cli_args_from_dataclass for one annotated field, or None (no option)."""
    annotation = stmt.annotation
    origin, args = _subscript_parts(annotation)
    if origin not in ("A", "Annotated") or len(args) < 2:
        return None
    raw_type = args[0]
    meta = None
    for extra in args[1:]:
        if isinstance(extra, ast.Call) and _type_name(extra.func) == "Arg":
            meta = _keywords(extra)
            break
        if _string_expr(extra):
            meta = {}
            break
    if meta is None:
        return None
    if _try_static(module, meta.get("no_cli"), False) is True:
        return None
    cli_name = _try_static(module, meta.get("cli_name")) or "--" + name.replace("_", "-")
    aliases = _try_static(module, meta.get("aliases")) or []
    flags = [cli_name] + list(aliases)
    where = module.where(stmt)
    type_parser = meta.get("type_parser")
    custom_type = type_parser is not None and not _is_none(type_parser)

    def parser_type(fallback):
        if not custom_type:
            return fallback
        return _BUILTIN_TYPES.get(_type_name(type_parser)) if isinstance(type_parser, ast.Name) else None

    action_node = meta.get("action")
    if action_node is not None and not _is_none(action_node):
        action_kwargs = _try_static(module, meta.get("action_kwargs"), {}) or {}
        kwargs_node = meta.get("action_kwargs")
        nargs_node = None
        if isinstance(kwargs_node, ast.Dict):
            for key, value in _dict_items(kwargs_node):
                if isinstance(key, ast.Constant) and key.value == "nargs":
                    nargs_node = value
        action, nargs, extra = _action_of(module, action_node, flags, nargs_node, nargs_node is not None)
        type_ = None
        if not (action in _NO_VALUE_ACTIONS or (action == "custom" and nargs == 0)):
            type_ = "str"
            if isinstance(kwargs_node, ast.Dict):
                for key, value in _dict_items(kwargs_node):
                    if isinstance(key, ast.Constant) and key.value == "type":
                        type_ = _BUILTIN_TYPES.get(_type_name(value)) if isinstance(value, ast.Name) else None
        choices = _choices_of(module, meta.get("choices"))
        if choices is None and isinstance(action_kwargs, dict):
            raw = action_kwargs.get("choices")
            choices = list(raw) if isinstance(raw, (list, tuple)) else None
        return _option(name, flags + extra, where, action, nargs, type_, choices)

    inner = _unwrap_optional(raw_type)
    inner_origin, inner_args = _subscript_parts(inner)
    meta_choices_node = meta.get("choices")
    meta_choices = _choices_of(module, meta_choices_node)
    if inner_origin == "Literal":
        literal = [_try_static(module, a) for a in inner_args]
        value_type = _BUILTIN_TYPES.get(type(literal[0]).__name__, "str") if literal else "str"
        if meta_choices_node is not None and not _is_none(meta_choices_node):
            # Arg(choices=...) wins over the Literal; when it is computed at run time it is unknown here.
            choices = meta_choices
        else:
            choices = literal
        return _option(name, flags, where, "store", None, parser_type(value_type), None if custom_type else choices)
    if inner_origin in ("List", "list") and not custom_type:
        elem = inner_args[0] if inner_args else None
        nargs = _try_static(module, meta.get("nargs")) or "+"
        return _option(
            name, flags, where, "store", nargs, _infer_type(elem) if elem is not None else "str", meta_choices
        )
    if _type_name(inner) == "bool":
        return _option(name, flags, where, "store_true", None, None, None)
    nargs = _try_static(module, meta.get("nargs"))
    return _option(
        name, flags, where, "store", nargs, parser_type(_infer_type(inner)), None if custom_type else meta_choices
    )


def _class_fields(module, classdef, seen=None):
    """[(module, AnnAssign, name)] of a class and its in-package bases, bases first (dataclass/msgspec order)."""
    seen = seen if seen is not None else set()
    out = []
    for base in classdef.bases:
        if isinstance(base, ast.Name):
            try:
                owner, definition = module.lookup(base.id)
            except _Unresolved:
                continue
            if isinstance(definition, ast.ClassDef) and id(definition) not in seen:
                seen.add(id(definition))
                out.extend(_class_fields(owner, definition, seen))
    for stmt in classdef.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            origin, _args = _subscript_parts(stmt.annotation)
            if origin == "ClassVar":
                continue
            out = [entry for entry in out if entry[2] != stmt.target.id]
            out.append((module, stmt, stmt.target.id))
    return out


def _find_function(classdef, name):
    for stmt in classdef.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
            return stmt
    return None


def _calls(node):
    """Calls in a function body, in source order."""
    found = [n for n in ast.walk(node) if isinstance(n, ast.Call)]
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def _namespace_classes(module):
    """The namespace classes ServerArgs collects its input fields from (0.5.23: _INPUT_NAMESPACES)."""
    for stmt in module.tree.body:
        if (
            isinstance(stmt, ast.Assign)
            and isinstance(stmt.value, ast.Call)
            and _call_name(stmt.value) == "collect_input_fields"
        ):
            sources = stmt.value.args[0] if stmt.value.args else None
            if isinstance(sources, ast.Name):
                owner, definition = module.lookup(sources.id)
                sources = definition.value if isinstance(definition, ast.Assign) else None
            if not isinstance(sources, (ast.List, ast.Tuple)):
                raise SGLangSourceError(
                    f"{module.where(stmt)}: the namespace list given to collect_input_fields is not a literal list"
                )
            out = []
            for elt in sources.elts:
                if not isinstance(elt, ast.Name):
                    raise SGLangSourceError(f"{module.where(stmt)}: a namespace that is not a class name")
                owner, definition = module.lookup(elt.id)
                if not isinstance(definition, ast.ClassDef):
                    raise SGLangSourceError(f"{module.where(stmt)}: namespace {elt.id} is not a class")
                out.append((owner, definition))
            return out
    return None


def _positional_order(package):
    module = package.module("sglang.srt.arg_groups.field_order")
    if module is None:
        return []
    try:
        owner, definition = module.lookup("POSITIONAL_FIELD_ORDER")
        return list(_definition_value(owner, definition, 0))
    except _Unresolved:
        return []


def _parser_call(module):
    """The ArgumentParser(...) call the release parses the server's argv with (prepare_server_args)."""
    function = module.defs.get("prepare_server_args")
    scopes = [function] if function is not None else []
    scopes.append(module.tree)
    for scope in scopes:
        for call in _calls(scope):
            if _call_name(call) in ("argparse.ArgumentParser", "ArgumentParser"):
                return call
    return None


def _version(package):
    pattern = os.path.join(package.root, os.path.basename(package.package_dir) + "-*.dist-info", "METADATA")
    for metadata in sorted(glob.glob(pattern)):
        with open(metadata, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
                if not line.strip():
                    break
    version = package.module("sglang.version")
    if version is not None:
        try:
            owner, definition = version.lookup("__version__")
            value = _definition_value(owner, definition, 0)
            if isinstance(value, str):
                return value
        except _Unresolved:
            pass
    return None


def read_cli_options(package_dir):
    """The option table of the SGLang package installed at package_dir (the ``sglang`` directory).

    Returns ``{"sglang_version", "prog", "allow_abbrev", "parser_source", "options": [...]}``; each
    option is ``{"dest", "flags", "action", "nargs", "type", "choices", "where"}`` in the order the
    release registers them (which is the order argparse names candidates in its messages).
    Raises SGLangSourceError when the directory is not an SGLang release this reader understands.
    """
    package = _Package(package_dir)
    server_args = package.module("sglang.srt.server_args")
    if server_args is None:
        raise SGLangSourceError(
            f"{package.package_dir} is not an installed SGLang package: it has no srt/server_args.py"
        )
    classdef = server_args.classes.get("ServerArgs")
    if not isinstance(classdef, ast.ClassDef):
        raise SGLangSourceError(f"{package.rel(server_args.path)}: no ServerArgs class")
    add_cli_args = _find_function(classdef, "add_cli_args")
    if add_cli_args is None:
        raise SGLangSourceError(f"{package.rel(server_args.path)}: ServerArgs has no add_cli_args")

    fields = []
    namespaces = _namespace_classes(server_args)
    if namespaces is not None:
        # ServerArgs.__annotations__ = {**collected, **ServerArgs.__annotations__}: the namespace
        # fields in POSITIONAL_FIELD_ORDER, the unlisted ones after them, then ServerArgs' own.
        collected = []
        for owner, namespace in namespaces:
            collected.extend(_class_fields(owner, namespace))
        order = _positional_order(package)
        listed = set(order)
        by_name = dict((entry[2], entry) for entry in collected)
        ordered = [by_name[n] for n in order if n in by_name] + [e for e in collected if e[2] not in listed]
        own = _class_fields(server_args, classdef)
        own_names = set(e[2] for e in own)
        fields = [e for e in ordered if e[2] not in own_names] + own
    else:
        fields = _class_fields(server_args, classdef)

    options = []
    for call in _calls(add_cli_args):
        name = _call_name(call)
        if name.endswith("add_cli_args_from_dataclass"):
            wanted = None
            for kw in call.keywords:
                if kw.arg == "fields":
                    wanted = _try_static(server_args, kw.value)
            for owner, stmt, field_name in fields:
                if wanted is not None and field_name not in wanted:
                    continue
                option = _field_option(owner, stmt, field_name, package)
                if option is not None:
                    options.append(option)
        elif name.endswith(".add_argument"):
            option = _explicit_option(server_args, call)
            if option is not None:
                options.append(option)
    if not options:
        raise SGLangSourceError(f"{package.rel(server_args.path)}: ServerArgs.add_cli_args registers no options")

    call = _parser_call(server_args)
    prog, allow_abbrev, parser_source = None, True, None
    if call is not None:
        kw = _keywords(call)
        prog = _try_static(server_args, kw.get("prog"))
        allow_abbrev = _try_static(server_args, kw.get("allow_abbrev"), True)
        parser_source = server_args.where(call)
    return {
        "sglang_version": _version(package),
        "prog": prog,
        "allow_abbrev": bool(allow_abbrev),
        "parser_source": parser_source,
        "options": options,
    }


@contextlib.contextmanager
def unpacked_wheel(wheel):
    """The ``sglang`` package directory of an SGLang wheel file (not installed), unpacked to a temporary dir
    for the ``with`` block: its Python sources and metadata, all the static readers need."""
    tmp = tempfile.mkdtemp(prefix="sglang-flags-")
    try:
        with zipfile.ZipFile(wheel) as archive:
            # The Python sources and the metadata are all the reader needs (no compiled extensions).
            names = [
                n
                for n in archive.namelist()
                if (n.startswith("sglang/") and n.endswith(".py")) or re.match(r"^sglang-[^/]+\.dist-info/METADATA$", n)
            ]
            if "sglang/srt/server_args.py" not in names:
                raise SGLangSourceError(f"{wheel} is not an SGLang wheel: it has no sglang/srt/server_args.py")
            archive.extractall(tmp, members=names)
        yield os.path.join(tmp, "sglang")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def read_wheel_options(wheel):
    """read_cli_options of an SGLang wheel file (not installed): its sources unpacked to a temporary dir."""
    with unpacked_wheel(wheel) as package_dir:
        return read_cli_options(package_dir)


# --------------------------------------------------------------------------- parser


class _CustomAction(argparse.Action):
    """Stands in for a release's own Action class: takes its values, stores them."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values if self.nargs != 0 else True)


class _ParseError(Exception):
    def __init__(self, message):
        super(_ParseError, self).__init__(message)
        self.message = message


class _CollectingParser(argparse.ArgumentParser):
    """An ArgumentParser that raises its error message instead of exiting."""

    def error(self, message):
        raise _ParseError(message)


def _build(table, parser_class):
    parser = parser_class(prog=table.get("prog") or "sglang serve", allow_abbrev=table.get("allow_abbrev", True))
    taken = set(parser._option_string_actions)
    for option in table["options"]:
        flags = [f for f in option["flags"] if f not in taken]
        if not flags:
            continue
        taken.update(flags)
        action = option.get("action") or "store"
        kwargs = {"dest": option["dest"], "default": None}
        if action in ("store_true", "store_false", "count"):
            kwargs["action"] = action
        elif action in ("store_const", "append_const"):
            kwargs.update(action=action, const=True)
        else:
            nargs = option.get("nargs")
            if action == "custom":
                kwargs["action"] = _CustomAction
                kwargs["nargs"] = nargs
            else:
                kwargs["action"] = action if action in _PLAIN_ACTIONS else "store"
                if nargs is not None:
                    kwargs["nargs"] = nargs
            if nargs != 0:
                kind = _PY_TYPES.get(option.get("type"))
                if kind is not None:
                    kwargs["type"] = kind
                if option.get("choices") is not None:
                    kwargs["choices"] = option["choices"]
        parser.add_argument(*flags, **kwargs)
    return parser


def build_parser(table):
    """An argparse parser with every option of the table, as the release's parser is set up."""
    return _build(table, argparse.ArgumentParser)


def _split_options(argv):
    """argv as [(option word, [values])]; values before the first option are (None, [values])."""
    groups = []
    current = None
    rest_are_values = False
    for word in argv:
        word = str(word)
        if not rest_are_values and word == "--":
            rest_are_values = True
            continue
        if not rest_are_values and word.startswith("-") and word != "-" and not _NEGATIVE_NUMBER.match(word):
            current = (word, [])
            groups.append(current)
        else:
            if current is None:
                current = (None, [])
                groups.append(current)
            current[1].append(word)
    return groups


def all_flags(table):
    return [flag for option in table["options"] for flag in option["flags"]]


def closest_flag(table, flag):
    """The real flag nearest to a word (difflib), or None."""
    matches = difflib.get_close_matches(flag, all_flags(table), n=1, cutoff=0.6)
    return matches[0] if matches else None


def check_argv(table, argv):
    """Every problem the release's parser would have with argv (each option checked on its own).

    Returns a list of ``{"flag", "kind", "message", "closest"}``: ``kind`` is ``unknown``,
    ``ambiguous`` or ``value`` (invalid choice, invalid int/float, missing or extra values);
    ``message`` is argparse's text as the release prints it (``sglang serve: error: ...``);
    ``closest`` is the nearest real flag for an unknown or ambiguous one, and the nearest allowed
    choice for an invalid choice (None when nothing is close). An empty list: the release accepts argv.
    """
    parser = _build(table, _CollectingParser)
    prog = parser.prog
    exact = dict((flag, option) for option in table["options"] for flag in option["flags"])
    problems = []
    for word, values in _split_options(argv):
        flag = word.split("=", 1)[0] if word else None
        words = ([word] if word else []) + values
        message = None
        try:
            parser.parse_args(words)
        except _ParseError as err:
            message = err.message
        if message is None:
            continue
        kind = "value"
        closest = None
        if flag is None:
            kind = "unknown"
            flag = values[0] if values else ""
        elif message.startswith("ambiguous option"):
            kind = "ambiguous"
            # One of the flags it abbreviates (the nearest, the first registered on a tie).
            candidates = [f for f in all_flags(table) if f.startswith(flag)]
            near = difflib.get_close_matches(flag, candidates, n=1, cutoff=0)
            closest = near[0] if near else closest_flag(table, flag)
        elif message.startswith("unrecognized arguments") and flag not in exact and not _is_prefix(parser, flag):
            kind = "unknown"
            closest = closest_flag(table, flag)
        else:
            option = exact.get(flag) or _prefix_option(table, flag)
            choices = (option or {}).get("choices")
            bad = values[0] if values else (word.split("=", 1)[1] if "=" in word else None)
            if choices and bad is not None:
                near = difflib.get_close_matches(str(bad), [str(c) for c in choices], n=1, cutoff=0.6)
                closest = near[0] if near else None
        problems.append({"flag": flag, "kind": kind, "message": f"{prog}: error: {message}", "closest": closest})
    return problems


def _is_prefix(parser, flag):
    return bool(parser.allow_abbrev and [f for f in parser._option_string_actions if f.startswith(flag)])


def _prefix_option(table, flag):
    matches = [option for option in table["options"] if any(f.startswith(flag) for f in option["flags"])]
    return matches[0] if len(matches) == 1 else None
