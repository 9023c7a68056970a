"""The AWX playbooks parse and pass ansible-lint's production profile.

The project skeleton's wrappers import the collection's playbooks by FQCN, so both checks run
with this checkout on the collections path (tests/unit/conftest.py links it as
.cache/collections/ansible_collections/ddtree/sglang), as AWX would have it after installing
collections/requirements.yml.  awx.awx comes from the `ansible` package in the virtualenv.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hang_guard import hang_guard

REPO = Path(__file__).resolve().parents[3]
AWX_DIR = REPO / "extensions" / "awx"
BIN = Path(sys.executable).parent
PLAYBOOKS = [AWX_DIR / "configure.yml", *sorted((AWX_DIR / "project").glob("*.yml"))]
ENV = dict(
    os.environ,
    ANSIBLE_COLLECTIONS_PATH=str(REPO / ".cache" / "collections"),
    ANSIBLE_NOCOLOR="1",
    NO_COLOR="1",
)


def test_there_is_a_wrapper_for_each_collection_playbook():
    wrapped = {p.name for p in PLAYBOOKS if p.parent.name == "project"}
    assert wrapped == {p.name for p in (REPO / "playbooks").glob("*.yml")}


@pytest.mark.parametrize("playbook", PLAYBOOKS, ids=lambda p: str(p.relative_to(AWX_DIR)))
def test_syntax_check(playbook):
    inventory = ["-i", str(AWX_DIR / "project" / "inventories" / "production" / "hosts.yml")]
    proc = subprocess.run(
        [BIN / "ansible-playbook", "--syntax-check", *inventory, str(playbook)],
        cwd=playbook.parent, env=ENV, capture_output=True, text=True, timeout=hang_guard(120), check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ansible_lint_production_profile():
    proc = subprocess.run(
        [BIN / "ansible-lint", "--profile", "production", str(AWX_DIR.relative_to(REPO))],
        cwd=REPO, env=ENV, capture_output=True, text=True, timeout=hang_guard(300), check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
