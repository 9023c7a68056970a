# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fix texts a failed deploy shows (the stages' in _deploy_record.STAGES, the bake's, the journal causes', the
preflight rules' reasons) name only variables a user can set: each is an option of a role's argument_specs (or a
fact a role sets, as sglang_install_release_python), and each
named candidate list and playbook exists. A fix that names a variable gone or renamed, or a meaning it no longer has
(issue 33: "min_gain null turns the gate off", false since the default 'not worse' judgement), sends the user to do
something that does not work."""

import re
from functools import cache
from pathlib import Path

import pytest
import yaml
from ansible_collections.ddtree.sglang.plugins.module_utils import _deploy_record, _deploy_settings, _journal_causes

REPO = Path(__file__).resolve().parents[2]
# A variable of this collection's roles, as a fix text writes it (not part of a dotted name such as ddtree.sglang.tune).
VARIABLE = re.compile(r"(?<![\w.])(?:ddtree_deploy|sglang)_\w+")


@cache
def options():
    """Every option of every entry point of every role."""
    names = set()
    for spec in (REPO / "roles").glob("*/meta/argument_specs.yml"):
        for entry in (yaml.safe_load(spec.read_text())["argument_specs"] or {}).values():
            names |= set((entry or {}).get("options") or {})
    return names


@cache
def facts():
    """The facts a role sets for the user (set_fact in its tasks: sglang_install_release_python, ...)."""
    names = set()
    for path in (REPO / "roles").glob("*/tasks/*.yml"):
        for task in _tasks(yaml.safe_load(path.read_text()) or []):
            names |= set(task.get("ansible.builtin.set_fact") or task.get("set_fact") or {})
    return names


def _tasks(tasks):
    for task in tasks:
        yield task
        for key in ("block", "rescue", "always"):
            yield from _tasks(task.get(key) or [])


# Words of the same shape that are no variables: the roles' and modules' own names.
NOT_VARIABLES = {p.name for p in (REPO / "roles").iterdir()} | {p.stem for p in (REPO / "plugins/modules").glob("*.py")}


def fix_texts():
    for stage in _deploy_record.STAGES:
        yield f"STAGES {stage['name']} fix", stage["fix"]
        yield f"STAGES {stage['name']} why", stage["why"]
    for name, text in _deploy_record.BAKE_UNJUDGED_FIX.items():
        yield f"BAKE_UNJUDGED_FIX {name}", text
    for cause in _journal_causes.CAUSES:
        yield f"journal cause {cause.id} fix", cause.fix
    for setting, (_check, takes, why) in _deploy_settings.RULES.items():
        yield f"RULES {setting}", f"{takes}; {why}"


TEXTS = list(fix_texts())


@pytest.mark.parametrize(("where", "text"), TEXTS, ids=[t[0] for t in TEXTS])
def test_every_variable_a_fix_names_is_an_option_of_a_role(where, text):
    unknown = sorted(set(VARIABLE.findall(text)) - options() - facts() - NOT_VARIABLES)
    assert not unknown, f"{where} names {unknown}, which no role's argument_specs (or facts) has: {text}"


def test_the_fixes_name_candidate_lists_and_playbooks_that_exist():
    lists = yaml.safe_load((REPO / "roles/ddtree_deploy/vars/candidate_lists.yml").read_text())
    texts = " ".join(text for _where, text in TEXTS)
    named = set(re.findall(r"\bladder_\w+|\bdflash_same_scheduling\b", texts))
    assert named and named <= set(lists["__ddtree_deploy_candidate_lists"]), named
    playbooks = set(re.findall(r"\bddtree\.sglang\.(\w+)", texts)) & {"tune", "deploy_ddtree", "rollback", "promote"}
    assert playbooks, "the fixes name no playbook"
    for playbook in playbooks:
        assert (REPO / "playbooks" / f"{playbook}.yml").is_file(), playbook


def test_min_gain_null_is_not_said_to_turn_the_gate_off():
    # With ddtree_deploy_gate_not_worse true (the default), min_gain null judges "not worse"; off is both.
    defaults = yaml.safe_load((REPO / "roles/ddtree_deploy/defaults/main.yml").read_text())
    assert defaults["ddtree_deploy_min_gain"] is None and defaults["ddtree_deploy_gate_not_worse"] is True
    for where, text in TEXTS:
        assert "null turns the gate off" not in text, where
        if "turns the gate off" in text or "gate off" in text:
            assert "ddtree_deploy_gate_not_worse false" in text, (where, text)
    gate, baseline = _deploy_record.stage("gate"), _deploy_record.stage("baseline")
    assert "ddtree_deploy_gate_not_worse" in gate["fix"] and "ddtree_deploy_gate_not_worse" in baseline["fix"]


def test_the_probe_and_gate_fixes_name_the_candidate_ladder_and_the_tune():
    # issue 38 item 7: the collection's answer to a profile failing on a class is the ladder, or a tune.
    for name in ("probe", "gate"):
        fix = _deploy_record.stage(name)["fix"]
        assert "ddtree_deploy_candidate_list" in fix and "ddtree.sglang.tune" in fix, fix
        assert "ddtree_deploy_profile_variants [nograph] or [small]" not in fix
