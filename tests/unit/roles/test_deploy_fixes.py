# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every step a deploy can fail at has a fix (what to do next) and a why (vars/fixes.yml)."""

import re
from pathlib import Path

import yaml

ROLE = Path(__file__).resolve().parents[3] / "roles" / "ddtree_deploy"
# Stages that are outcomes, not steps a failure is named after.
NOT_FAILURES = {"done", "rolled_back"}


def _fixes():
    return yaml.safe_load((ROLE / "vars" / "fixes.yml").read_text())["__ddtree_deploy_fixes"]


def _stages():
    stages = set()
    for path in (ROLE / "tasks").glob("*.yml"):
        stages |= set(re.findall(r"__ddtree_deploy_stage: (\w+)\s*$", path.read_text(), re.M))
    return stages - NOT_FAILURES


def test_the_stages_are_found():
    # Guards the scan below: the role's own first and last steps must be among them.
    assert {"preflight", "snapshot", "switch", "probe", "gate"} <= _stages()


def test_every_failure_step_has_a_fix_and_why():
    fixes = _fixes()
    for stage in _stages():
        assert stage in fixes, f"vars/fixes.yml has no fix for a failure at step {stage!r}"
        assert fixes[stage]["fix"].strip() and fixes[stage]["why"].strip(), stage
    assert set(fixes) <= _stages(), f"fixes for steps the role never names: {set(fixes) - _stages()}"


def test_a_failed_algorithm_gets_the_next_steps():
    # DDTree failing on a class: keep NEXTN, try the variants, or report upstream with the journal.
    probe = " ".join(_fixes()["probe"]["fix"].split())
    for words in ("NEXTN", "nograph", "small", "#29907", "{journal}"):
        assert words in probe, words
