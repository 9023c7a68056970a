# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Adaptive speculative decoding's rules, read from an installed SGLang without importing it.

``--speculative-adaptive`` (with ``--speculative-adaptive-config``) lets the server move
``speculative_num_steps`` with the running batch, in tiers. What the release allows is in its
source, not in its parser: the parser accepts the flag for any algorithm, and at start the
server turns it off again with a warning when ``adaptive_unsupported_reason()`` names a reason
(0.5.23: ``sglang/srt/arg_groups/speculative_hook.py:1372-1389``, ``_maybe_disable_adaptive``:
"speculative_adaptive disabled: {reason}. Falling back to static speculative params."). So an
adaptive DDTREE unit starts, serves, and is not adaptive. This module reads, from the release:

- ``DEFAULT_ADAPTIVE_CONFIG`` (0.5.23: ``sglang/srt/speculative/adaptive_spec_params.py:28-53``):
  the tiers, keyed by running batch size, each with its ``candidate_steps`` (0: speculation off);
- ``adaptive_unsupported_reason()`` (same file, ``:56-100``): each ``if`` and the reason it
  returns, with the module-level helpers its conditions call (``attn_dp_enabled_of``, ...) and
  the declared defaults of the ServerArgs fields they read;
- where the server logs the reason and turns adaptive off (the warning above);
- the start-up check that ``--speculative-num-steps`` is one of the tiers' candidate steps
  (``_init_adaptive_speculative_params``, 0.5.23 ``speculative_hook.py:1415-1421``, a ValueError).

``read_rules`` returns all of it as JSON data (sources as text, with file and line), so that the
``sglang_release_info`` module (on the host, from the installed release) and the test simulator
(from the table set-up writes, ``scripts/lib/sim_cli_table.py``) judge a unit with one function,
``check``. Conditions are evaluated in three values: what cannot be decided statically (an
out-of-tree platform's worker class, a method call) is reported as not checked, never guessed.
Values are the unit's options as given, else the fields' declared defaults; what resolution
derives from other fields is not followed, except the algorithm, which the caller resolves
(``NEXTN`` is ``EAGLE``). Standard library only, no package imports: the simulator loads this file
on its own.
"""

from __future__ import absolute_import, division, print_function

import ast
import glob
import json
import os

SOURCE = "srt/speculative/adaptive_spec_params.py"
DEFAULT_CONFIG = "DEFAULT_ADAPTIVE_CONFIG"
REASON_FUNCTION = "adaptive_unsupported_reason"
LOAD_FUNCTION = "_load_adaptive_config"
INIT_FUNCTION = "_init_adaptive_speculative_params"
HOOK_SOURCES = ("srt/arg_groups/*.py", "srt/server_args.py")
FIELD_SOURCES = ("srt/arg_groups/fields/*.py", "srt/server_args.py")
# arg_groups/overrides.py (0.5.23): views of the server args as resolution sees them; the args themselves here.
VIEWS = ("resolving_view", "resolved_view")
FIELD = "speculative_adaptive"
CONFIG_FIELD = "speculative_adaptive_config"
STEPS_FIELD = "speculative_num_steps"


class AdaptiveSourceError(Exception):
    """The release has no adaptive speculation this reader understands."""


class _Unknown:
    """A value the static reader cannot know."""

    def __repr__(self):
        return "<unknown>"


UNKNOWN = _Unknown()
ARGS = object()


def _parse(text, where):
    try:
        return ast.parse(text, filename=where)
    except SyntaxError as exc:
        raise AdaptiveSourceError(f"cannot parse {where}: {exc}") from None


def _read(path):
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def _rel(package_dir, path):
    return os.path.relpath(path, os.path.dirname(package_dir)).replace(os.sep, "/")


def _module_path(package_dir, dotted):
    parts = dotted.split(".")
    if parts[0] != "sglang":
        return None
    base = os.path.join(os.path.dirname(package_dir), *parts)
    for candidate in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(candidate):
            return candidate
    return None


def _function(tree, name):
    return next((s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == name), None)


def _imports(statements):
    found = {}
    for stmt in statements:
        for node in ast.walk(stmt):
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    found[alias.asname or alias.name] = node.module
    return found


def _segment(text, node):
    return ast.get_source_segment(text, node)


def _body(function):
    """A function's statements without its docstring and imports."""
    statements = [s for s in function.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
    if statements and isinstance(statements[0], ast.Expr) and isinstance(statements[0].value, ast.Constant):
        statements = statements[1:]
    return statements


def _helpers(package_dir, module_path, function, found, depth=0):
    """Module-level functions ``function`` calls by name that are one ``return``: name -> {source, where, params}."""
    if depth > 4:
        return
    tree = _parse(_read(module_path), module_path)
    imported = dict(_imports(tree.body), **_imports([function]))
    for node in ast.walk(function):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        name = node.func.id
        if name in found or name in VIEWS:
            continue
        path = _module_path(package_dir, imported[name]) if name in imported else module_path
        if path is None:
            continue
        text = _read(path)
        target = _function(_parse(text, path), name)
        body = _body(target) if target is not None else []
        if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
            continue
        found[name] = {
            "params": [a.arg for a in target.args.args],
            "expr": _segment(text, body[0].value),
            "where": f"{_rel(package_dir, path)}:{target.lineno}",
        }
        _helpers(package_dir, path, target, found, depth + 1)


def _field_defaults(package_dir, names):
    """The declared default of each ServerArgs field named, when it is a literal (else UNKNOWN's "unknown")."""
    defaults = {}
    for pattern in FIELD_SOURCES:
        for path in sorted(glob.glob(os.path.join(package_dir, pattern))):
            text = _read(path)
            if not any(name in text for name in names):
                continue
            for node in ast.walk(_parse(text, path)):
                if not isinstance(node, ast.ClassDef):
                    continue
                for stmt in node.body:
                    target = getattr(stmt, "target", None)
                    if not (isinstance(stmt, ast.AnnAssign) and isinstance(target, ast.Name)):
                        continue
                    if target.id in names and target.id not in defaults:
                        try:
                            defaults[target.id] = ast.literal_eval(stmt.value) if stmt.value is not None else "unknown"
                        except ValueError:
                            defaults[target.id] = "unknown"
    return defaults


def _args_fields(node_texts):
    """Attribute names read from the args (cfg.x, server_args.x, view(...).x) in expressions' source."""
    names = set()
    for text in node_texts:
        for node in ast.walk(ast.parse("(" + text + ")")):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                names.add(node.attr)
    return names


def _reason_rules(text, function):
    """The function's statements as data: assignments and ``if <test>: return <message>``, in order."""
    steps = []
    for stmt in _body(function):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            steps.append({"assign": stmt.targets[0].id, "expr": _segment(text, stmt.value), "line": stmt.lineno})
        elif isinstance(stmt, ast.If) and stmt.body and isinstance(stmt.body[-1], ast.Return):
            returned = stmt.body[-1].value
            steps.append(
                {
                    "test": _segment(text, stmt.test),
                    "reason": _segment(text, returned),
                    "line": stmt.lineno,
                    "end_line": stmt.end_lineno,
                }
            )
    return steps


def _find_calls(package_dir, callee):
    """(path, text, function node, call node) of functions in the arg hooks that call ``callee``."""
    for pattern in HOOK_SOURCES:
        for path in sorted(glob.glob(os.path.join(package_dir, pattern))):
            text = _read(path)
            if callee + "(" not in text:
                continue
            for function in _parse(text, path).body:
                if isinstance(function, ast.FunctionDef):
                    for node in ast.walk(function):
                        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == callee:
                            yield path, text, function, node


def _warning(package_dir):
    """Where the server logs the reason and turns adaptive off: {where, message} (the f-string's source)."""
    for path, text, function, _call in _find_calls(package_dir, REASON_FUNCTION):
        for node in ast.walk(function):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", None) == "warning"
                and node.args
                and isinstance(node.args[0], ast.JoinedStr)
            ):
                return {
                    "function": function.name,
                    "where": f"{_rel(package_dir, path)}:{node.lineno}",
                    "message": _segment(text, node.args[0]),
                }
    return None


def _steps_rule(package_dir):
    """``if cfg.speculative_num_steps not in candidate_steps: raise ValueError(...)`` of the start-up init."""
    for pattern in HOOK_SOURCES:
        for path in sorted(glob.glob(os.path.join(package_dir, pattern))):
            text = _read(path)
            if f"def {INIT_FUNCTION}(" not in text:
                continue
            function = _function(_parse(text, path), INIT_FUNCTION)
            for node in ast.walk(function):
                test = getattr(node, "test", None)
                if not (isinstance(node, ast.If) and isinstance(test, ast.Compare)):
                    continue
                if not (
                    isinstance(test.left, ast.Attribute)
                    and test.left.attr == STEPS_FIELD
                    and isinstance(test.ops[0], ast.NotIn)
                ):
                    continue
                raised = node.body[-1]
                if isinstance(raised, ast.Raise) and isinstance(raised.exc, ast.Call) and raised.exc.args:
                    return {
                        "where": f"{_rel(package_dir, path)}:{node.lineno}",
                        "error": getattr(raised.exc.func, "id", "ValueError"),
                        "message": _segment(text, raised.exc.args[0]),
                    }
    return None


def read_rules(package_dir):
    """The adaptive rules of the installed ``sglang`` package at ``package_dir``, as JSON data (see the module doc).

    Raises AdaptiveSourceError when the release has no ``adaptive_unsupported_reason`` (no adaptive speculation)."""
    path = os.path.join(package_dir, SOURCE)
    if not os.path.isfile(path):
        raise AdaptiveSourceError(f"{package_dir} has no {SOURCE}: this release has no adaptive speculative decoding")
    text = _read(path)
    tree = _parse(text, path)
    config, config_line = None, None
    for stmt in tree.body:
        target = (
            stmt.target
            if isinstance(stmt, ast.AnnAssign)
            else (stmt.targets[0] if isinstance(stmt, ast.Assign) else None)
        )
        if isinstance(target, ast.Name) and target.id == DEFAULT_CONFIG:
            config, config_line = ast.literal_eval(stmt.value), stmt.lineno
    function = _function(tree, REASON_FUNCTION)
    if function is None or config is None:
        raise AdaptiveSourceError(
            f"{_rel(package_dir, path)} defines no {REASON_FUNCTION if function is None else DEFAULT_CONFIG}"
        )
    helpers = {}
    _helpers(package_dir, path, function, helpers)
    steps = _reason_rules(text, function)
    fields = _args_fields([s.get("test") or s.get("expr") for s in steps] + [h["expr"] for h in helpers.values()])
    source = _rel(package_dir, path)
    return {
        "source": source,
        "default_config": config,
        "default_config_where": f"{source}:{config_line}",
        "reason_function": {
            "where": f"{source}:{function.lineno}",
            "params": [a.arg for a in function.args.args],
        },
        "reasons": [dict(s, where="{}:{}".format(source, s["line"])) for s in steps],
        "helpers": helpers,
        "defaults": _field_defaults(package_dir, fields),
        "disabled_warning": _warning(package_dir),
        "steps_rule": _steps_rule(package_dir),
        "load_config": _load_where(source, tree),
    }


def _load_where(source, tree):
    function = _function(tree, LOAD_FUNCTION)
    return f"{source}:{function.lineno}-{function.end_lineno}" if function is not None else None


# --------------------------------------------------------------------------- evaluation


class _Evaluator:
    """Evaluates the release's expressions over one unit's values, in three values (UNKNOWN)."""

    _OPS = {
        ast.Eq: lambda a, b: a == b,
        ast.NotEq: lambda a, b: a != b,
        ast.Lt: lambda a, b: a < b,
        ast.LtE: lambda a, b: a <= b,
        ast.Gt: lambda a, b: a > b,
        ast.GtE: lambda a, b: a >= b,
        ast.In: lambda a, b: a in b,
        ast.NotIn: lambda a, b: a not in b,
        ast.Is: lambda a, b: a is b,
        ast.IsNot: lambda a, b: a is not b,
    }

    def __init__(self, rules, values):
        self.rules = rules
        self.values = values

    def field(self, name):
        if name in self.values:
            return self.values[name]
        default = self.rules["defaults"].get(name, "unknown")
        return UNKNOWN if default == "unknown" else default

    def text(self, source, env):
        # Parenthesised: a source segment may be an implicit concatenation over several lines.
        return self.node(ast.parse("(" + source + ")", mode="eval").body, env)

    def node(self, node, env, depth=0):
        if depth > 30:
            return UNKNOWN
        method = getattr(self, "_" + type(node).__name__, None)
        return method(node, env, depth + 1) if method else UNKNOWN

    def _Constant(self, node, env, depth):
        return node.value

    def _Tuple(self, node, env, depth):
        items = [self.node(e, env, depth) for e in node.elts]
        return UNKNOWN if any(i is UNKNOWN for i in items) else tuple(items)

    _List = _Tuple

    def _Name(self, node, env, depth):
        return env.get(node.id, UNKNOWN)

    def _Attribute(self, node, env, depth):
        owner = self.node(node.value, env, depth)
        return self.field(node.attr) if owner is ARGS else UNKNOWN

    def _Call(self, node, env, depth):
        name = getattr(node.func, "id", None)
        args = [self.node(a, env, depth) for a in node.args]
        if name in VIEWS and len(args) == 1:
            return args[0]
        helper = self.rules["helpers"].get(name)
        if helper is None or node.keywords or len(args) != len(helper["params"]):
            return UNKNOWN
        return self.node(
            ast.parse("(" + helper["expr"] + ")", mode="eval").body,
            {name: args[i] for i, name in enumerate(helper["params"])},  # no zip(strict=): Python 3.9 hosts
            depth,
        )

    def _BoolOp(self, node, env, depth):
        parts = [self.node(v, env, depth) for v in node.values]
        if isinstance(node.op, ast.And):
            if any(p is not UNKNOWN and not p for p in parts):
                return False
            return UNKNOWN if any(p is UNKNOWN for p in parts) else True
        if any(p is not UNKNOWN and p for p in parts):
            return True
        return UNKNOWN if any(p is UNKNOWN for p in parts) else False

    def _UnaryOp(self, node, env, depth):
        value = self.node(node.operand, env, depth)
        if isinstance(node.op, ast.Not):
            return UNKNOWN if value is UNKNOWN else not value
        return UNKNOWN

    def _Compare(self, node, env, depth):
        left = self.node(node.left, env, depth)
        for i, op in enumerate(node.ops):
            right = self.node(node.comparators[i], env, depth)
            if left is UNKNOWN or right is UNKNOWN or type(op) not in self._OPS:
                return UNKNOWN
            try:
                if not self._OPS[type(op)](left, right):
                    return False
            except TypeError:
                return UNKNOWN
            left = right
        return True

    def _JoinedStr(self, node, env, depth):
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                out.append(str(part.value))
                continue
            value = self.node(part.value, env, depth)
            if value is UNKNOWN:
                out.append("{" + ast.unparse(part.value) + "}" if hasattr(ast, "unparse") else "{?}")
            else:
                out.append(repr(value) if part.conversion == ord("r") else str(value))
        return "".join(out)


def _env(rules):
    """The reason function's parameters bound to the args."""
    return {name: ARGS for name in rules["reason_function"]["params"][:1]}


def unsupported_reason(rules, values):
    """(reason, where, not_checked): what ``adaptive_unsupported_reason()`` would return for these values.

    ``reason`` is the release's text, or None; ``where`` its ``file:line``; ``not_checked`` the
    conditions before it that could not be decided statically (``file:line: condition``)."""
    evaluator = _Evaluator(rules, values)
    env = _env(rules)
    not_checked = []
    for step in rules["reasons"]:
        if "assign" in step:
            env[step["assign"]] = evaluator.text(step["expr"], env)
            continue
        truth = evaluator.text(step["test"], env)
        if truth is UNKNOWN:
            not_checked.append("{}: {}".format(step["where"], " ".join(step["test"].split())))
        elif truth:
            return evaluator.text(step["reason"], env), step["where"], not_checked
    return None, None, not_checked


def candidate_steps(config):
    """Every tier's candidate steps together (adaptive_spec_params.resolve_candidate_steps_from_config)."""
    steps = set()
    for key, entry in config.items():
        if str(key).isdigit():
            steps.update(entry.get("candidate_steps") or [])
    return sorted(steps)


def config_problems(config, rules):
    """Why ``_load_adaptive_config`` would refuse a config (its checks, in its words where it spells them)."""
    where = rules.get("load_config") or rules["source"]
    if not isinstance(config, dict):
        return [
            "the adaptive config must be a JSON object of tiers, e.g. {} ({})".format(
                json.dumps({"1": {"candidate_steps": [1, 3]}}), where
            )
        ]
    problems = []
    tiers = [k for k in config if str(k).isdigit()]
    for key in tiers:
        steps = (config[key] or {}).get("candidate_steps") if isinstance(config[key], dict) else None
        if (
            not isinstance(steps, list)
            or not steps
            or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in steps)
        ):
            problems.append(f"BS {key}: candidate_steps must be a list of non-negative ints, got {steps!r} ({where})")
    if not tiers:
        problems.append(
            "speculative_adaptive_config must contain at least one integer-string BS key, e.g. "
            f'{{"1": {{"candidate_steps": [1,3,7]}}}}. Got keys: {list(config)} ({where})'
        )
    return problems


def check(rules, values, config=None):
    """How the release would start a unit with these (resolved) values, when it asks for adaptive speculation.

    Returns {asked, adaptive, reason, where, warning, problems, not_checked, tiers}: ``asked`` whether the unit
    passes --speculative-adaptive; ``adaptive`` whether the server would run adaptive (False when a reason turns
    it off); ``reason`` and ``where`` the release's reason and its line; ``warning`` the line it would log;
    ``problems`` what would stop it at start (a num_steps outside the tiers' steps, a bad config file);
    ``tiers`` the tiers it would run ({batch size: candidate steps}). ``config``: the contents of the
    --speculative-adaptive-config file when given (None: the release's DEFAULT_ADAPTIVE_CONFIG)."""
    out = {
        "asked": bool(values.get(FIELD)),
        "adaptive": False,
        "reason": None,
        "where": None,
        "warning": None,
        "problems": [],
        "not_checked": [],
        "tiers": None,
    }
    if not out["asked"]:
        return out
    reason, where, not_checked = unsupported_reason(rules, values)
    out.update(reason=reason, where=where, not_checked=not_checked)
    if reason is not None:
        warning = rules.get("disabled_warning")
        if warning:
            out["warning"] = _Evaluator(rules, values).text(warning["message"], {"reason": reason})
        return out
    tiers = rules["default_config"] if config is None else config
    out["problems"] = config_problems(tiers, rules)
    if out["problems"]:
        return out
    out["adaptive"] = True
    out["tiers"] = {
        int(k): sorted(set(v["candidate_steps"]))
        for k, v in sorted(tiers.items(), key=lambda kv: int(kv[0]) if str(kv[0]).isdigit() else -1)
        if str(k).isdigit()
    }
    steps_rule = rules.get("steps_rule")
    steps = values.get(STEPS_FIELD)
    union = candidate_steps(tiers)
    if steps_rule and steps is not None and steps not in union:
        env = {"candidate_steps": union}
        message = _Evaluator(rules, values).text(steps_rule["message"], dict(env, cfg=ARGS, server_args=ARGS))
        out["problems"].append("{}: {} ({})".format(steps_rule["error"], message, steps_rule["where"]))
    return out
