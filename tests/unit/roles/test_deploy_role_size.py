# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ddtree_deploy stays a small state machine a newcomer can read (issue 23): its tasks hold at
most 900 lines of YAML and 15 set_fact, and logic that grows goes to Python (module_utils),
where it is unit-tested, not into Jinja in the tasks."""

from pathlib import Path

TASKS = Path(__file__).resolve().parents[3] / "roles" / "ddtree_deploy" / "tasks"


def test_the_deploy_tasks_stay_within_900_lines():
    lines = sum(len(path.read_text().splitlines()) for path in TASKS.glob("*.yml"))
    assert 0 < lines <= 900, f"roles/ddtree_deploy/tasks holds {lines} lines of YAML (budget 900)"


def test_the_deploy_tasks_set_at_most_15_facts():
    facts = sum(path.read_text().count("ansible.builtin.set_fact") for path in TASKS.glob("*.yml"))
    assert 0 < facts <= 15, f"roles/ddtree_deploy/tasks has {facts} set_fact tasks (budget 15)"
