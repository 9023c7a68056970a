# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""scripts/demo's progress callback: its lines and the demo's own share the terminal, or a file."""

import importlib.util
import os
from pathlib import Path

import jinja2
import yaml
from ansible_collections.ddtree.sglang.plugins.module_utils import _deploy_record as dr
from ansible_collections.ddtree.sglang.plugins.module_utils._deploy_record import STAGE_NAMES

CALLBACK = Path(__file__).resolve().parents[3] / "scripts" / "lib" / "callback_plugins" / "ddtree_progress.py"


def load():
    spec = importlib.util.spec_from_file_location("ddtree_progress", CALLBACK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Play:
    def get_name(self):
        return "Deploy DDTree"


def test_lines_of_the_callback_and_of_its_caller_do_not_overwrite_each_other(tmp_path, monkeypatch):
    # `scripts/demo 2>demo.txt`: stderr is a regular file opened without O_APPEND, and the demo hands
    # it to ansible-playbook as fd 3 (DDTREE_PROGRESS_FILE=/dev/fd/3) while it writes lines of its own.
    path = tmp_path / "demo.txt"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, b"[ddtree] deploying DDTree\n")
        monkeypatch.setenv("DDTREE_PROGRESS_FILE", f"/dev/fd/{fd}")
        callback = load().CallbackModule()
        callback.v2_playbook_on_play_start(Play())
        callback.v2_playbook_on_stats(None)
        os.write(fd, b"[ddtree] what each host serves now\n")
    finally:
        os.close(fd)
    lines = path.read_text().splitlines()
    assert len(lines) == 3, lines
    assert lines[0] == "[ddtree] deploying DDTree"
    assert lines[1].startswith("[ddtree] ") and lines[1].endswith(" play: Deploy DDTree"), lines
    assert lines[2] == "[ddtree] what each host serves now"


def test_a_path_is_appended_to(tmp_path, monkeypatch):
    path = tmp_path / "progress.txt"
    path.write_text("before\n")
    monkeypatch.setenv("DDTREE_PROGRESS_FILE", str(path))
    callback = load().CallbackModule()
    callback.v2_playbook_on_play_start(Play())
    callback.v2_playbook_on_stats(None)
    assert path.read_text().splitlines()[0] == "before"
    assert path.read_text().splitlines()[1].endswith(" play: Deploy DDTree")


# --- issue 38 items 7: one line per failure, no outcome before it happened --------------------------------------
# The events the callback saw for ct129-sim in the demo (reports/demo-20261207T155954Z/ansible.log, before the fix):
# the probe's ignored failure, the probe's failure, "Candidates | Fail when none passed" (it said restore_failed,
# the interim outcome of a touched unit before the restore ran), the restore, the host's failure message, the outcome.

ROLE = Path(__file__).resolve().parents[3] / "roles" / "ddtree_deploy"
CAUSE = "completions: no first token within 1 s (max_ttft)"
FINAL = (
    f"ROLLED BACK on ct129-sim: profile 'ddtree' failed at step 'probe': {CAUSE} (fix: Keep the restored NEXTN unit "
    "on this GPU class. Let the deploy try the variants ...). The previous NEXTN unit "
    "(/etc/systemd/system/sglang-qwen.service) was restored byte for byte and verified serving (39.1 tok/s, TTFT "
    "0.08 s), 12.7 s after the failure. Journal: reports/r1/ct129-sim.journal.txt"
)
OUTCOME = (
    f"ct129-sim: ROLLED BACK at probe: {CAUSE}; NEXTN unit restored and verified (39.1 tok/s) 12.7 s after the "
    "failure; downtime 16.95 s"
)


class Host:
    def __init__(self, name):
        self.name = name

    def get_name(self):
        return self.name


class Task:
    def __init__(self, name, action="ansible.builtin.fail", ignore_errors=False):
        self.name, self.action, self.ignore_errors = name, action, ignore_errors

    def get_name(self):
        return self.name


class Result:
    def __init__(self, task, result, host="ct129-sim"):
        self._host, self._task, self._result = Host(host), task, result


def record_event(event, result=None):
    task = Task(f"{event} | Begin", action="ddtree.sglang.deploy_record")
    return Result(task, {"stage": event if event in STAGE_NAMES else None, "event": {"event": event, "result": result}})


def candidates_end_msg(course):
    """What "Candidates | Fail when none passed" says, rendered from switch.yml as the role has it."""
    tasks = yaml.safe_load((ROLE / "tasks" / "switch.yml").read_text())
    task = next(t for t in tasks if t["name"] == "Candidates | Fail when none passed")
    return jinja2.Environment().from_string(task["ansible.builtin.fail"]["msg"]).render(__ddtree_deploy_course=course)


def interim_course(*candidates):
    """The course when the candidates are over and none passed: the rescue has not restored anything yet."""
    record = dr.new_record("r1")
    for t, stage in enumerate(("preflight", "snapshot", "install", "options", "baseline")):
        record = dr.append(record, stage, at=t)
    for i, (name, step, cause) in enumerate(candidates):
        t = 10 * (i + 1)
        record = dr.append(
            record,
            "candidate",
            result={
                "index": i + 1,
                "of": len(candidates),
                "name": name,
                "profile": "ddtree",
                "variants": [],
                "extra_args": {},
            },
            at=t,
        )
        for k, stage in enumerate(("switch", "probe")[: ("switch", "probe").index(step) + 1]):
            record = dr.append(record, stage, at=t + k)
        record = dr.append(record, "failed", result={"cause": cause, "figures": {}}, at=t + 5)
    return dr.summary(record, profile="ddtree", journal="reports/r1/ct129-sim.journal.txt")


def replay(tmp_path, monkeypatch, events):
    path = tmp_path / "progress.txt"
    monkeypatch.setenv("DDTREE_PROGRESS_FILE", str(path))
    callback = load().CallbackModule()
    for kind, result in events:
        if kind == "ok":
            callback.v2_runner_on_ok(result)
        else:
            callback.v2_runner_on_failed(result, ignore_errors=result._task.ignore_errors)
    callback.v2_playbook_on_stats(None)
    return [line.split(" ", 2)[2] for line in path.read_text().splitlines()]


def test_the_demos_probe_failure_shows_once_and_no_outcome_before_the_restore(tmp_path, monkeypatch):
    course = interim_course(("ddtree", "probe", CAUSE))
    assert course["outcome"] == "restore_failed"  # the interim outcome: nothing restored yet
    said = candidates_end_msg(course)
    assert said == CAUSE
    lines = replay(
        tmp_path,
        monkeypatch,
        [
            ("ok", record_event("probe")),
            (
                "failed",
                Result(
                    Task("Probe | Probe the service on completions", "ddtree.sglang.llm_probe", True),
                    {"msg": "no first token within 1 s (max_ttft)"},
                ),
            ),
            (
                "failed",
                Result(Task("Probe | Fail on the first API that failed (the others were not tried)"), {"msg": CAUSE}),
            ),
            ("failed", Result(Task("Candidates | Fail when none passed"), {"msg": said})),
            ("ok", record_event("verified", {"verified": True})),
            ("failed", Result(Task("Rescue | Fail the host with the cause"), {"msg": FINAL})),
            ("ok", Result(Task("Report | Say how it went", "ansible.builtin.debug"), {"msg": OUTCOME})),
        ],
    )
    assert lines == [
        "ct129-sim    probe",
        f"ct129-sim    FAILED: {CAUSE}",
        "ct129-sim    restored",
        f"ct129-sim    {OUTCOME}",
    ]
    assert not any("restore_failed" in line or "(ignored)" in line for line in lines)


def test_a_failure_in_other_words_is_said_too(tmp_path, monkeypatch):
    # The restore's own failure is news: it is said; the host's final message repeating it is not.
    down = "sglang-qwen.service did not come up after 5.1s: Not enough memory"
    lines = replay(
        tmp_path,
        monkeypatch,
        [
            ("failed", Result(Task("Probe | Fail on the first API that failed"), {"msg": CAUSE})),
            ("failed", Result(Task("Rescue | Fail when the restored service does not serve"), {"msg": down})),
            (
                "failed",
                Result(Task("Rescue | Fail the host with the cause"), {"msg": f"RESTORE FAILED: {CAUSE}; {down}"}),
            ),
            ("failed", Result(Task("Probe | Fail on the first API that failed"), {"msg": CAUSE}, host="ct200-sim")),
            ("failed", Result(Task("Some | Fail"), {"msg": "failed"})),
            ("failed", Result(Task("Other | Fail"), {"msg": "failed: x"})),
        ],
    )
    assert lines == [
        f"ct129-sim    FAILED: {CAUSE}",
        f"ct129-sim    FAILED: {down}",
        f"ct200-sim    FAILED: {CAUSE}",  # each host's own
        "ct129-sim    FAILED: failed",
        "ct129-sim    FAILED: failed: x",  # a short message inside another is no repetition
    ]


def test_a_ladder_that_failed_at_every_rung_ends_naming_each_cause_not_an_outcome():
    course = interim_course(("ddtree", "switch", "Not enough memory"), ("ddtree+nograph", "probe", CAUSE))
    assert candidates_end_msg(course) == (
        f"none of 2 candidates passed (ddtree at switch: Not enough memory; ddtree+nograph at probe: {CAUSE})"
    )
