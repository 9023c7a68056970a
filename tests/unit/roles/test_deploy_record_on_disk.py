# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The record is written down as the deploy goes (issue 37, item 2): ddtree.sglang.deploy_record writes the
whole record to its file at every event, atomically, so a controller killed with SIGKILL leaves the course of
the run behind; a stage's result is attached to the stage's event (result_of) and read back from the course.

Run through ansible-playbook on localhost, with the role's own wiring (module_defaults with the file)."""

import json
import os
import signal
import subprocess
import time

import pytest
from hang_guard import hang_guard
from playbook_harness import playbook_argv, run_playbook

PLAY = """
- hosts: all
  gather_facts: false
  module_defaults:
    ddtree.sglang.deploy_record: {file: "{{ out }}/ct129.record.json", file_mode: "0640"}
  tasks:
    - ddtree.sglang.deploy_record: {event: preflight, start: run-1}
    - ddtree.sglang.deploy_record: {event: switch}
    - ddtree.sglang.deploy_record: {event: stopped}
    - ddtree.sglang.deploy_record: {event: gate}
    - ddtree.sglang.deploy_record:
        result_of: gate
        result: {gate: pass, gains: [{concurrency: 1, gain: 0.19}]}
    - name: The course carries the gate's result
      ansible.builtin.assert:
        that:
          - (ddtree_deploy_record | ddtree.sglang.deploy_record_summary).results.gate.gate == 'pass'
          - (ddtree_deploy_record | ddtree.sglang.deploy_record_summary).results.switch is none
    - name: Wait to be killed
      ansible.builtin.wait_for:
        timeout: "{{ hold | default(0) }}"
"""


def playbook(tmp_path, env, extra, play=PLAY):
    """The deploy's play started in the background (a controller to kill): (Popen, its record's path)."""
    (tmp_path / "play.yml").write_text(play)
    argv = playbook_argv(extra=dict(extra, out=str(tmp_path)), inventory="ct129,")
    deploy = subprocess.Popen(
        argv, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    return deploy, tmp_path / "ct129.record.json"


def run(tmp_path, env, play=PLAY):
    return run_playbook(tmp_path, env, play, {"out": str(tmp_path)}, inventory="ct129,")


def test_every_event_is_on_disk_with_the_stages_result(tmp_path, ansible_cli_env):
    rc, out = run(tmp_path, ansible_cli_env)
    assert rc == 0, out
    path = tmp_path / "ct129.record.json"
    record = json.loads(path.read_text())
    assert record["run_id"] == "run-1"
    assert [e["event"] for e in record["events"]] == ["preflight", "switch", "stopped", "gate"]
    assert record["events"][-1]["result"] == {"gate": "pass", "gains": [{"concurrency": 1, "gain": 0.19}]}
    assert oct(path.stat().st_mode & 0o777) == "0o640"
    # Nothing half written is left beside it (the temporary files are renamed into place).
    assert sorted(p.name for p in tmp_path.iterdir() if "record" in p.name) == ["ct129.record.json"]


def test_a_controller_killed_with_sigkill_leaves_the_record(tmp_path, ansible_cli_env):
    deploy, path = playbook(tmp_path, ansible_cli_env, {"hold": 120})
    deadline = time.monotonic() + 90
    try:
        while time.monotonic() < deadline:
            if path.exists() and json.loads(path.read_text())["events"][-1].get("result"):
                break
            assert deploy.poll() is None, "the playbook ended before it could be killed"
            time.sleep(0.2)
        else:
            pytest.fail("the record never reached the gate's result")
    finally:
        os.killpg(deploy.pid, signal.SIGKILL)
        deploy.wait(timeout=hang_guard(30))
    assert deploy.returncode == -signal.SIGKILL
    record = json.loads(path.read_text())
    assert [e["event"] for e in record["events"]] == ["preflight", "switch", "stopped", "gate"]


@pytest.mark.parametrize(
    "task, says",
    [
        ("{result_of: bake, result: {}}", "the stage 'bake' has not begun in this attempt"),
        ("{result_of: soak, result: {}}", "'soak' is not a declared stage"),
        ("{result_of: gate, event: gate}", "either event"),
    ],
)
def test_a_result_of_a_stage_not_begun_or_not_declared_fails_clearly(tmp_path, ansible_cli_env, task, says):
    play = PLAY.split("    - ddtree.sglang.deploy_record:\n        result_of", maxsplit=1)[0]
    play += f"    - ddtree.sglang.deploy_record: {task}\n"
    rc, out = run(tmp_path, ansible_cli_env, play)
    assert rc == 2
    assert says in out


ROLLBACK_PLAY = """
- hosts: all
  gather_facts: false
  module_defaults:
    ddtree.sglang.deploy_record:
      file: "{{ out }}/rb/ct129.rollback.record.json"
      kind: rollback
      run: {host: ct129, service: sglang-qwen, store: /var/lib/ddtree-sglang/last-known-good/sglang-qwen}
  tasks:
    - ddtree.sglang.deploy_record: {event: rollback, start: rb, undid: {run_id: dep, profile: ddtree}}
    - ddtree.sglang.deploy_record: {event: restored, result: {changed: true, restarted: true}}
    - ddtree.sglang.deploy_record: {event: verified, result: {verified: true, msg: null}}
"""


def test_a_rollback_writes_its_record_and_report_naming_the_run_the_killed_deploy_left(tmp_path, ansible_cli_env):
    """The run the rollback undoes is read from the record it left beside the rollback's report directory."""
    deploy, killed = playbook(tmp_path, ansible_cli_env, {"hold": 120})
    try:
        deadline = time.monotonic() + 90
        while not (killed.exists() and json.loads(killed.read_text())["events"][-1]["event"] == "gate"):
            assert time.monotonic() < deadline and deploy.poll() is None, "the deploy never reached its gate"
            time.sleep(0.2)
    finally:
        os.killpg(deploy.pid, signal.SIGKILL)
        deploy.wait(timeout=hang_guard(30))
    (tmp_path / "dep").mkdir()
    killed.rename(tmp_path / "dep" / "ct129.record.json")
    rc, out = run(tmp_path, ansible_cli_env, ROLLBACK_PLAY)
    assert rc == 0, out
    report = json.loads((tmp_path / "rb" / "ct129.rollback.json").read_text())
    assert (report["kind"], report["outcome"], report["run_id"]) == ("rollback", "restored", "rb")
    assert report["undid"]["run_id"] == "dep" and report["undid"]["last_stage"] == "gate"
    assert report["undid"]["record"] == str(tmp_path / "dep" / "ct129.record.json")
    record = json.loads((tmp_path / "rb" / "ct129.rollback.record.json").read_text())
    assert [e["event"] for e in record["events"]] == ["rollback", "restored", "verified"]
