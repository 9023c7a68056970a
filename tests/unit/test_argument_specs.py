# Copyright (c) 2026 ddtree.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every role's defaults/main.yml and meta/argument_specs.yml say the same thing.

For each role under roles/ (found at collection time, so roles added later are covered):
every key in defaults/main.yml is an option of the ``main`` entry point with the same
default, and every option documented with a default has that key in defaults/main.yml.
A default that drifts from its documentation is what users read and what the role does
disagreeing, so this runs in the unit tests rather than waiting for a reviewer.
"""

from pathlib import Path

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
ROLES_DIR = REPO_ROOT / "roles"

# The Python type each argument spec ``type`` accepts for a literal default.
SPEC_TYPES = {
    "str": (str,),
    "path": (str,),
    "int": (int,),
    "float": (float, int),
    "bool": (bool,),
    "list": (list,),
    "dict": (dict,),
}


def discover_roles(roles_dir: Path) -> list[Path]:
    """Every directory under roles/ that is a role (it has tasks/)."""
    if not roles_dir.is_dir():
        return []
    return sorted(p for p in roles_dir.iterdir() if (p / "tasks").is_dir())


def load_yaml(path: Path):
    with path.open(encoding="utf-8") as stream:
        return yaml.safe_load(stream)


def matches_type(value, accepted: tuple) -> bool:
    # bool is an int to Python, not to an argument spec.
    if isinstance(value, bool):
        return bool in accepted
    return isinstance(value, accepted)


def is_template(value) -> bool:
    return isinstance(value, str) and ("{{" in value or "{%" in value)


def spec_problems(defaults: dict, specs: dict) -> list[str]:
    """What differs between a role's defaults and its ``main`` entry point's options."""
    options = ((specs or {}).get("argument_specs") or {}).get("main", {}).get("options") or {}
    defaults = defaults or {}
    problems = []
    for name, value in defaults.items():
        if name not in options:
            problems.append(f"{name}: in defaults/main.yml but not documented in meta/argument_specs.yml")
            continue
        option = options[name] or {}
        if "default" not in option:
            problems.append(f"{name}: documented without a default; defaults/main.yml has {value!r}")
        elif option["default"] != value or type(option["default"]) is not type(value):
            problems.append(
                f"{name}: documented default {option['default']!r} differs from defaults/main.yml {value!r}"
            )
        spec_type = option.get("type", "str")
        accepted = SPEC_TYPES.get(spec_type)
        literal = value is not None and not is_template(value)
        if literal and accepted and not matches_type(value, accepted):
            problems.append(f"{name}: default {value!r} is not of the documented type {spec_type}")
    for name, option in options.items():
        if "default" in (option or {}) and name not in defaults:
            problems.append(f"{name}: documented with default {option['default']!r} but missing from defaults/main.yml")
    return problems


ROLES = discover_roles(ROLES_DIR)


@pytest.mark.parametrize("role", ROLES, ids=[r.name for r in ROLES])
def test_defaults_match_argument_specs(role: Path):
    specs_file = role / "meta" / "argument_specs.yml"
    assert specs_file.is_file(), f"{role.name}: no meta/argument_specs.yml (every role documents its variables)"
    defaults_file = role / "defaults" / "main.yml"
    defaults = load_yaml(defaults_file) if defaults_file.is_file() else {}
    problems = spec_problems(defaults, load_yaml(specs_file))
    assert not problems, f"roles/{role.name}:\n  " + "\n  ".join(problems)


# The checker itself, on made-up roles: each drift must be found.
SPECS = {
    "argument_specs": {
        "main": {
            "options": {
                "r_port": {"type": "int", "default": 30000},
                "r_name": {"type": "str", "default": "sglang-qwen"},
                "r_url": {"type": "str", "default": "http://{{ r_host }}"},
                "r_required": {"type": "str", "required": True},
            }
        }
    }
}
DEFAULTS = {"r_port": 30000, "r_name": "sglang-qwen", "r_url": "http://{{ r_host }}"}


def test_checker_accepts_matching_role():
    assert spec_problems(DEFAULTS, SPECS) == []


@pytest.mark.parametrize(
    ("defaults", "expected"),
    [
        pytest.param({**DEFAULTS, "r_extra": 1}, "r_extra: in defaults/main.yml but not documented", id="undocumented"),
        pytest.param({**DEFAULTS, "r_port": 30001}, "r_port: documented default 30000 differs", id="other-value"),
        pytest.param({**DEFAULTS, "r_port": "30000"}, "r_port: documented default 30000 differs", id="other-type"),
        pytest.param(
            {k: v for k, v in DEFAULTS.items() if k != "r_name"}, "r_name: documented with default", id="missing"
        ),
        pytest.param({**DEFAULTS, "r_required": "x"}, "r_required: documented without a default", id="no-doc-default"),
    ],
)
def test_checker_finds_drift(defaults, expected):
    problems = spec_problems(defaults, SPECS)
    assert any(p.startswith(expected) for p in problems), problems


def test_checker_finds_default_of_wrong_type():
    specs = {"argument_specs": {"main": {"options": {"r_flag": {"type": "bool", "default": "yes"}}}}}
    assert spec_problems({"r_flag": "yes"}, specs) == ["r_flag: default 'yes' is not of the documented type bool"]


def test_checker_treats_bool_as_not_int():
    specs = {"argument_specs": {"main": {"options": {"r_count": {"type": "int", "default": True}}}}}
    assert spec_problems({"r_count": True}, specs) == ["r_count: default True is not of the documented type int"]


def test_discovery_finds_every_role(tmp_path):
    for name in ("b_role", "a_role"):
        (tmp_path / name / "tasks").mkdir(parents=True)
    (tmp_path / "not_a_role").mkdir()
    assert [p.name for p in discover_roles(tmp_path)] == ["a_role", "b_role"]
