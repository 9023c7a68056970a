"""The collection's playbooks and roles behave under AWX: nothing waits for a keyboard, and a
rescue that handles a failure still ends the host failed, so the job, the workflow's failure
paths and notifications see it.  Static checks over every playbook and task file."""

from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
TASK_FILES = sorted(REPO.glob("roles/*/tasks/*.yml"))
PLAYBOOKS = sorted(REPO.glob("playbooks/*.yml"))
FAIL = {"ansible.builtin.fail", "fail"}
IMPORTS = {"ansible.builtin.import_tasks", "import_tasks", "ansible.builtin.include_tasks", "include_tasks"}


def _load(path):
    return yaml.safe_load(path.read_text()) or []


def _walk(tasks):
    """Every task, including those inside block/rescue/always, of a task list."""
    for task in tasks or []:
        yield task
        for key in ("block", "rescue", "always"):
            yield from _walk(task.get(key))


def _all_tasks():
    for path in TASK_FILES:
        for task in _walk(_load(path)):
            yield path, task
    for path in PLAYBOOKS:
        for play in _load(path):
            for key in ("pre_tasks", "tasks", "post_tasks", "handlers"):
                for task in _walk(play.get(key)):
                    yield path, task


def test_there_is_something_to_check():
    assert TASK_FILES and PLAYBOOKS


def test_no_play_prompts():
    for path in PLAYBOOKS:
        for play in _load(path):
            assert "vars_prompt" not in play, f"{path.name}: vars_prompt blocks an AWX job"


def test_no_task_waits_for_a_keyboard():
    for path, task in _all_tasks():
        for action in ("ansible.builtin.pause", "pause"):
            if action in task:
                args = task[action] or {}
                assert "seconds" in args or "minutes" in args, (
                    f"{path.relative_to(REPO)}: '{task.get('name')}' pauses for input, which an AWX job never gives"
                )


# Issue 21: ddtree_deploy's rescue.yml also handles one candidate's failure (candidate.yml, with
# __ddtree_deploy_between true), which is not the host's when a later candidate passes; outside a
# candidate its last fail is unconditional. That path is checked by the test of candidate.yml below.
OUTSIDE_A_CANDIDATE = "not __ddtree_deploy_between | default(false) or "


def _ends_failed(tasks, base):
    """True when the last task of a list is an unconditional fail (following imports)."""
    if not tasks:
        return False
    last = tasks[-1]
    when = last.get("when")
    if when is not None and not (isinstance(when, str) and when.startswith(OUTSIDE_A_CANDIDATE)):
        return False
    if FAIL & last.keys():
        return True
    for action in IMPORTS & last.keys():
        target = last[action]
        target = target.get("file") if isinstance(target, dict) else target
        return _ends_failed(_load(base / target), base)
    if "block" in last:
        return _ends_failed(last["block"], base)
    return False


def _blocks_with_rescue(tasks):
    """(task, the tasks after it in its list) for every task with a rescue, at any depth."""
    tasks = tasks or []
    for i, task in enumerate(tasks):
        if task.get("rescue"):
            yield task, tasks[i + 1 :]
        for key in ("block", "rescue", "always"):
            yield from _blocks_with_rescue(task.get(key))


def _rescues():
    for path in TASK_FILES:
        for task, after in _blocks_with_rescue(_load(path)):
            yield pytest.param(path, task, after, id=f"{path.relative_to(REPO)}:{task.get('name')}")


CANDIDATE = REPO / "roles" / "ddtree_deploy" / "tasks" / "candidate.yml"


@pytest.mark.parametrize(("path", "task", "after"), [p for p in _rescues() if p.values[0] != CANDIDATE])
def test_every_rescue_ends_with_a_failure(path, task, after):
    # A rescue may instead hand on to the tasks after its block, when those end with the
    # failure (rescue.yml: the restore's own rescue sets the message, the file's last task
    # fails the host once).
    assert _ends_failed(task["rescue"], path.parent) or _ends_failed(after, path.parent), (
        f"the rescue of '{task.get('name')}' in {path.relative_to(REPO)} must end with an unconditional "
        "ansible.builtin.fail, or be followed by tasks that do: a rescued host otherwise counts as a success in AWX"
    )


def test_the_rescue_check_can_fail(tmp_path):
    (tmp_path / "inner.yml").write_text("- name: Fail\n  ansible.builtin.fail:\n    msg: x\n  when: false\n")
    assert not _ends_failed([{"ansible.builtin.import_tasks": "inner.yml"}], tmp_path)
    assert not _ends_failed([{"ansible.builtin.debug": {"msg": "restored"}}], tmp_path)
    assert _ends_failed([{"ansible.builtin.fail": {"msg": "x"}}], tmp_path)
    handed_on = [{"block": [{"ansible.builtin.debug": {}}], "rescue": [{"ansible.builtin.set_fact": {"x": 1}}]}]
    assert [after for _task, after in _blocks_with_rescue(handed_on)] == [[]]
    assert not _ends_failed([], tmp_path)


def test_a_failed_candidate_is_the_hosts_failure_when_no_candidate_passes():
    """candidate.yml's rescue records the candidate's failure and goes on to the next candidate (issue 21);
    switch.yml fails the host, unconditionally on the course, when none passed: right after the loop (and
    the tune's switch back to its winner), before anything keeps the unit."""
    (block,) = _load(CANDIDATE)
    (rescue,) = block["rescue"]
    assert rescue["ansible.builtin.include_tasks"] == "rescue.yml"
    assert rescue["vars"] == {"__ddtree_deploy_between": True}
    switch = _load(CANDIDATE.parent / "switch.yml")
    loops = [i for i, t in enumerate(switch) if t.get("ansible.builtin.include_tasks") == "candidate.yml"]
    fails = [i for i, t in enumerate(switch) if FAIL & t.keys()]
    assert loops and fails and fails[0] == loops[-1] + 1, "the fail comes right after the candidates"
    assert switch[fails[0]]["when"] == (
        "__ddtree_deploy_course.serving is none or __ddtree_deploy_course.serving != __ddtree_deploy_course.winner"
    )
    keeps = [i for i, t in enumerate(switch) if "ddtree.sglang.systemd_unit_snapshot" in t]
    assert keeps and keeps[0] > fails[0]
