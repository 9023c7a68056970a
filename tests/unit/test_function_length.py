# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""No function or method of the collection's plugins is over 80 lines (issue 37, item 6).

A definition counts from its ``def`` line to its last line, docstring, comments and blank lines
included: what a reader has to hold at once. The plugins are plugins/ and extensions/eda/plugins/.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGIN_DIRS = (ROOT / "plugins", ROOT / "extensions" / "eda" / "plugins")
LIMIT = 80

# Definitions over the limit that their owner is splitting this session (issue 37): "path:qualified
# name" -> owner. An entry is removed when its split lands; the test fails on an entry that is no
# longer over the limit, so the list cannot outlive the work. The lead requires it empty.
PENDING = {}


def definitions(path):
    """(qualified name, lines) of every function and method in ``path``, nested ones included."""
    found = []

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    found.append((name, child.end_lineno - child.lineno + 1))
                walk(child, name + ".")
            else:
                walk(child, prefix)

    walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)), "")
    return found


def long_definitions():
    """{"path:name": lines} of every definition over the limit."""
    long = {}
    for directory in PLUGIN_DIRS:
        for path in sorted(directory.rglob("*.py")):
            for name, lines in definitions(path):
                if lines > LIMIT:
                    long[f"{path.relative_to(ROOT).as_posix()}:{name}"] = lines
    return long


def test_no_plugin_function_is_over_80_lines():
    long = long_definitions()
    new = {key: lines for key, lines in long.items() if key not in PENDING}
    named = "; ".join(f"{key} ({lines} lines)" for key, lines in sorted(new.items()))
    assert not new, f"over {LIMIT} lines (split them into functions that each do one thing): {named}"


def test_the_pending_list_names_only_definitions_still_over_the_limit():
    long = long_definitions()
    done = {key: owner for key, owner in PENDING.items() if key not in long}
    named = "; ".join(f"{key} ({owner})" for key, owner in sorted(done.items()))
    assert not done, f"no longer over the limit (or gone), remove from PENDING here: {named}"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f():\n" + "    x = 1\n" * 79, [("f", 80)]),
        ("class A:\n    def m(self):\n" + "        pass\n" * 80, [("A.m", 81)]),
        ("def outer():\n    def inner():\n        pass\n    return inner\n", [("outer", 4), ("outer.inner", 2)]),
        ("async def a():\n    pass\n", [("a", 2)]),
    ],
)
def test_definitions_are_counted_def_line_to_last_line(tmp_path, source, expected):
    path = tmp_path / "sample.py"
    path.write_text(source)
    assert definitions(path) == expected
