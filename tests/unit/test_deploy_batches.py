"""The deploy play of playbooks/deploy_ddtree.yml (its keywords, vars and pre_tasks, the role swapped for a stand-in)
through ansible-playbook: under its default strategy (free) a host that fails runs its rescue while a peer of its batch
is still busy (no lockstep), and max_fail_percentage, which free ignores, still stops the later batches."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hang_guard import hang_guard

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
COLLECTIONS = REPO / ".cache" / "collections"
DEPLOY_PLAY = yaml.safe_load((REPO / "playbooks" / "deploy_ddtree.yml").read_text())[-1]


def _play(tmp_path, serial, wait_s):
    """The deploy play with the role replaced: host 'fails' fails at once and its rescue leaves a file; every other
    host waits (up to wait_s) for that file in its block, as a slow peer still deploying. Each host notes it ran."""
    flag = tmp_path / "rescued"
    ran = {
        "name": "Note the host ran",
        "ansible.builtin.copy": {"content": "ran\n", "dest": f"{tmp_path}/ran-{{{{ inventory_hostname }}}}"},
    }
    fail = {"name": "Fail", "ansible.builtin.fail": {"msg": "probe failed"}, "when": "inventory_hostname == 'fails'"}
    slow = {
        "name": "Be slow until the failed host is restored",
        "ansible.builtin.wait_for": {"path": str(flag), "timeout": wait_s},
    }
    rescue = [
        {"name": "Restore", "ansible.builtin.copy": {"content": "restored\n", "dest": str(flag)}},
        {"name": "Fail the host", "ansible.builtin.fail": {"msg": "rolled back"}},
    ]
    play = {key: value for key, value in DEPLOY_PLAY.items() if key not in ("roles", "become")}
    play.update(hosts="all", serial=serial, tasks=[{"name": "Deploy", "block": [ran, fail, slow], "rescue": rescue}])
    return [play]


def _failed_count(out, host):
    """The recap's failed= count of a host."""
    (count,) = re.findall(rf"^{host}\s+: ok=\d+\s+changed=\d+\s+unreachable=\d+\s+failed=(\d+)", out, re.M)
    return int(count)


def _run(tmp_path, hosts, extra=None, **play):
    playbook = tmp_path / "play.yml"
    playbook.write_text(yaml.safe_dump(_play(tmp_path, **play)))
    env = dict(
        os.environ,
        ANSIBLE_COLLECTIONS_PATH=str(COLLECTIONS),
        ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default",
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_FORKS="5",
    )
    proc = subprocess.run(
        [BIN / "ansible-playbook", "-i", ",".join(hosts) + ",", "-c", "local",
         "-e", json.dumps({"ansible_python_interpreter": sys.executable, **(extra or {})}), str(playbook)],
        capture_output=True, text=True, timeout=hang_guard(300), env=env, check=False, cwd=tmp_path,
    )  # fmt: skip
    ran = sorted(p.name[len("ran-") :] for p in tmp_path.glob("ran-*"))
    return proc, ran


def test_a_failed_host_is_rescued_while_its_batch_peer_is_busy(tmp_path):
    """One batch: the slow peer waits for the failed host's restore, which only a strategy without lockstep runs
    before the peer's block is done. The peer then ends fine; only the failed host fails."""
    proc, ran = _run(tmp_path, ["fails", "slow"], serial=0, wait_s=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out[-3000:]
    assert ran == ["fails", "slow"], out[-3000:]
    assert _failed_count(out, "slow") == 0 and _failed_count(out, "fails") == 1, out[-2000:]
    assert "Using max_fail_percentage with the free strategy is not supported" not in out


@pytest.mark.parametrize("max_fail, later_batch_runs", [(0, False), (60, True)])
def test_max_fail_percentage_is_judged_when_the_batch_has_ended(tmp_path, max_fail, later_batch_runs):
    """Batches [2, rest]: 'fails' fails in the first batch of two (50 %). Over max_fail_percentage 0 the later batch
    is not started; under 60 it is. The failed host's peer ends its own block either way (not marked failed)."""
    proc, ran = _run(
        tmp_path, ["fails", "slow", "later"], serial=[2, "100%"], wait_s=120,
        extra={"ddtree_deploy_max_fail_percentage": max_fail},
    )  # fmt: skip
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out[-3000:]
    assert ran == (["fails", "later", "slow"] if later_batch_runs else ["fails", "slow"]), out[-3000:]
    assert _failed_count(out, "slow") == 0, out[-2000:]
    if not later_batch_runs:
        out = " ".join(out.split())  # the error is wrapped to the terminal's width
        assert "1 of 2 host(s) of a batch before failed (fails), over max_fail_percentage 0" in out, out[-3000:]
        assert "this batch and the later ones are not deployed" in out


def test_the_whole_batch_failed_stops_the_run(tmp_path):
    """A canary batch of one that fails: ansible-core stops the play, the next batch never starts."""
    proc, ran = _run(tmp_path, ["fails", "later"], serial=[1, "100%"], wait_s=5)
    assert proc.returncode == 2, (proc.stdout + proc.stderr)[-3000:]
    assert ran == ["fails"]


def test_linear_keeps_the_failed_host_waiting_for_its_batch(tmp_path):
    """The same batch under linear: the failed host's rescue waits for the slow peer's block, so the peer's wait
    for the restore times out. This is the lockstep the deploy's default strategy avoids."""
    proc, _ran = _run(tmp_path, ["fails", "slow"], serial=0, wait_s=3, extra={"ddtree_deploy_strategy": "linear"})
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out[-3000:]
    assert "Timeout when waiting for file" in out, out[-3000:]


def test_the_batch_stop_filter_judges_each_batch_before_this_one_as_linear_counts():
    from ansible.errors import AnsibleFilterError
    from ansible_collections.ddtree.sglang.plugins.filter.deploy_batch_stop import deploy_batch_stop

    batches = [["a"], ["b", "c"], ["b", "c"], ["d", "e", "f", "g"]]
    # this batch (d..g) is not judged; the earlier ones all passed
    assert deploy_batch_stop(batches, ["a", "b", "c", "d", "e", "f", "g"], ["d", "e", "f", "g"], 0) == ""
    # one failed host of two is over 0 % and over 49 %, not over 50 % (more than the share, as linear counts)
    assert "1 of 2 host(s) of a batch before failed (c)" in deploy_batch_stop(
        batches, ["a", "b", "d", "e", "f", "g"], ["h"], 0
    )
    assert deploy_batch_stop(batches, ["a", "b", "d", "e", "f", "g"], ["h"], "49%")
    assert deploy_batch_stop(batches, ["a", "b", "d", "e", "f", "g"], ["h"], 50) == ""
    # nothing judged without a limit; a limit that is not a number is named
    assert deploy_batch_stop(batches, [], ["h"], None) == ""
    with pytest.raises(AnsibleFilterError, match="max_fail_percentage must be a number"):
        deploy_batch_stop(batches, [], ["h"], "some")


def test_a_failed_canary_leaves_the_other_hosts_untouched_with_the_run_id_play(tmp_path):
    """Both plays of deploy_ddtree.yml (the deploy role swapped for a stand-in that fails the canary): the run-id play
    runs once, so the host of the next batch shows nothing done in the recap (deploy_canary's check), and the
    failed canary batch stops the run before it."""
    plays = yaml.safe_load((REPO / "playbooks" / "deploy_ddtree.yml").read_text())
    deploy = _play(tmp_path, serial=[1, "100%"], wait_s=5)[0]
    playbook = tmp_path / "both.yml"
    playbook.write_text(yaml.safe_dump([*plays[:-1], {**deploy, "hosts": DEPLOY_PLAY["hosts"]}]))
    env = dict(
        os.environ, ANSIBLE_COLLECTIONS_PATH=str(COLLECTIONS), ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default",
        ANSIBLE_NOCOLOR="1", DDTREE_DEPLOY_RUN_ID="canary-run",
    )  # fmt: skip
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(yaml.safe_dump({"sglang_servers": {"hosts": {"fails": {}, "fleet1": {}}}}))
    proc = subprocess.run(
        [BIN / "ansible-playbook", "-i", str(inventory), "-c", "local",
         "-e", json.dumps({"ansible_python_interpreter": sys.executable, "ddtree_deploy_report_dir": str(tmp_path)}),
         str(playbook)],
        capture_output=True, text=True, timeout=hang_guard(300), env=env, check=False, cwd=tmp_path,
    )  # fmt: skip
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out[-3000:]
    assert not re.search(r"fleet1\s*:\s*ok=[1-9]", out), out[-3000:]
    assert not (tmp_path / "ran-fleet1").exists()
