# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every plugin's DOCUMENTATION, EXAMPLES and RETURN is YAML, found here in a second rather than by ansible-test
sanity's validate-modules at the end of the README's test command (a ': ' inside a plain description line makes
it a mapping, and validate-modules then reports "No DOCUMENTATION provided" and every option undocumented)."""

import ast
from pathlib import Path

import pytest
import yaml

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
BLOCKS = ("DOCUMENTATION", "EXAMPLES", "RETURN")
FILES = sorted(p for p in PLUGINS.rglob("*.py") if p.parent.name != "module_utils" and p.name != "__init__.py")


def _blocks(path):
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and getattr(node.targets[0], "id", None) in BLOCKS:
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                yield node.targets[0].id, node.value.value


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(PLUGINS)) for p in FILES])
def test_documentation_blocks_are_yaml(path):
    for name, text in _blocks(path):
        try:
            yaml.safe_load(text)
        except yaml.YAMLError as exc:
            pytest.fail(f"{path.relative_to(PLUGINS)}: {name} is not YAML: {exc}")


def test_every_module_has_its_documentation():
    modules = sorted((PLUGINS / "modules").glob("*.py"))
    assert modules
    for path in modules:
        assert {name for name, _text in _blocks(path)} >= {"DOCUMENTATION", "RETURN"}, path.name
