"""sglang_wait: ready when /health says so; fail fast, naming the cause, as soon as the unit dies."""

import json
import time

import pytest
from ansible.module_utils import basic
from ansible_collections.ddtree.sglang.plugins.module_utils._readiness import Readiness
from ansible_collections.ddtree.sglang.plugins.modules import sglang_wait
from module_harness import run_main


def show(
    active="active",
    sub="running",
    result="success",
    status=0,
    restarts=0,
    invocation="inv1",
    exit_mono=0,
    load="loaded",
):
    """`systemctl show -p ...` output for one unit state."""
    return "\n".join(
        [
            f"LoadState={load}",
            f"ActiveState={active}",
            f"SubState={sub}",
            f"Result={result}",
            f"ExecMainStatus={status:d}",
            "ExecMainCode=1",
            f"NRestarts={restarts:d}",
            f"InvocationID={invocation}",
            "MainPID=812",
            "ActiveEnterTimestamp=Wed 2026-12-02 12:00:01 UTC",
            "ExecMainStartTimestamp=Wed 2026-12-02 12:00:01 UTC",
            "ExecMainExitTimestamp=",
            f"ExecMainExitTimestampMonotonic={exit_mono:d}",
        ]
    )


OOM_JOURNAL = [
    "2026-12-02T12:00:01+0000 ct129 systemd[1]: Started sglang-qwen.service.",
    "2026-12-02T12:00:06+0000 ct129 python3[812]: RuntimeError: Not enough memory. Please try to increase "
    "--mem-fraction-static.",
    "2026-12-02T12:00:06+0000 ct129 systemd[1]: sglang-qwen.service: Main process exited, code=killed, status=9/KILL",
]


class Host:
    """A scripted host: unit states in order (the last repeats), journal lines, readiness answers."""

    def __init__(self, states, phases=("ready",), journal=None):
        self.states = list(states)
        self.phases = list(phases)
        self.journal = journal or []
        self.commands = []

    def run_command(self, cmd, *args, **kwargs):
        self.commands.append(cmd)
        if cmd[1] == "show":
            out = self.states.pop(0) if len(self.states) > 1 else self.states[0]
            return 0, out, ""
        if "journalctl" in cmd[0]:
            return 0, "\n".join(self.journal) + "\n", ""
        raise AssertionError(f"unexpected command {cmd!r}")

    def poll(self, url, api_key=None, timeout=5):
        phase = self.phases.pop(0) if len(self.phases) > 1 else self.phases[0]
        status = {"ready": 200, "starting": 503}.get(phase)
        return Readiness(phase, status, {"refused": "connection refused"}.get(phase, f"{status} {phase}"), 0.01)


@pytest.fixture
def run(monkeypatch):
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, required=False: "/usr/bin/" + name)
    monkeypatch.setattr(sglang_wait, "JOURNAL_SETTLE_DELAY", 0)

    def _run(host, **args):
        monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, cmd, **kw: host.run_command(cmd))
        monkeypatch.setattr(sglang_wait._readiness, "poll", host.poll)
        params = {"name": "sglang-qwen", "interval": 0.01, "window": 2}
        params.update(args)
        return run_main(sglang_wait.main, params)

    return _run


def test_ready_after_loading_and_starting(run):
    host = Host([show()], phases=["refused", "starting", "starting", "ready"])
    failed, res = run(host)
    assert not failed
    assert res["state"] == "ready"
    assert res["http"] == "200 ready"
    assert res["changed"] is False
    assert res["invocation_id"] == "inv1"
    assert res["unit"]["active_state"] == "active"
    assert not any("journalctl" in c[0] for c in host.commands)


@pytest.mark.wallclock
def test_window_ends_while_loading_without_failing(run):
    host = Host([show()], phases=["refused"])
    start = time.monotonic()
    failed, res = run(host, window=0.2)
    assert time.monotonic() - start < 2
    assert not failed
    assert res["state"] == "loading"
    assert res["http"] == "connection refused"


def test_crash_waiting_for_auto_restart_names_the_cause(run):
    crashed = show(active="activating", sub="auto-restart", result="signal", status=9, exit_mono=1)
    host = Host([show(), crashed], phases=["refused"], journal=OOM_JOURNAL)
    failed, res = run(host)
    assert failed
    assert res["state"] == "failed"
    assert res["cause"]["id"] == "mem_fraction_too_low"
    assert "mem_fraction_static" in res["cause"]["fix"]
    assert res["cause"]["journal_tail"] == OOM_JOURNAL
    assert "systemd is about to restart it" in res["msg"]
    assert "Not enough memory" in res["cause"]["line"]
    assert res["seconds_since_exit"] > 0
    # the journal read is the dead invocation's: the server's lines and systemd's lines about it
    journal_cmd = [c for c in host.commands if "journalctl" in c[0]][0]
    assert "_SYSTEMD_INVOCATION_ID=inv1" in journal_cmd
    assert "INVOCATION_ID=inv1" in journal_cmd


@pytest.mark.wallclock
def test_failed_unit_fails_on_the_first_poll_without_asking_http(run):
    host = Host(
        [show(active="failed", sub="failed", result="exit-code", status=1)],
        journal=["ModuleNotFoundError: No module named 'sglang'"],
    )
    failed, res = run(host, window=60)
    assert failed
    assert res["cause"]["id"] == "import_error"
    assert res["http"].startswith("not asked")
    assert res["elapsed"] < 5


def test_restart_by_systemd_between_polls_is_a_death(run):
    # Polled while running, then systemd restarted it (new invocation, NRestarts up): the watched
    # invocation died; its journal, not the new one's, holds the cause.
    host = Host(
        [show(invocation="inv1", restarts=2), show(invocation="inv2", restarts=3)],
        phases=["refused"],
        journal=["OSError: [Errno 98] Address already in use"],
    )
    failed, res = run(host)
    assert failed
    assert res["cause"]["id"] == "address_in_use"
    assert res["restarts_baseline"] == 2
    journal_cmd = [c for c in host.commands if "journalctl" in c[0]][0]
    assert "_SYSTEMD_INVOCATION_ID=inv1" in journal_cmd


def test_restarts_above_the_given_baseline_are_a_death(run):
    host = Host(
        [show(invocation="inv7", restarts=1)],
        phases=["refused"],
        journal=["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB."],
    )
    failed, res = run(host, restarts_baseline=0)
    assert failed
    assert res["cause"]["id"] == "cuda_oom"


def test_missing_unit_is_named(run):
    host = Host([show(load="not-found", active="inactive", sub="dead", invocation="")])
    failed, res = run(host)
    assert failed
    assert res["cause"]["id"] == "unit_not_found"
    assert "sglang-qwen.service" in res["cause"]["cause"]


def test_unknown_cause_quotes_the_journal_after_settling(run):
    host = Host([show(active="failed", sub="failed", result="signal", status=11)], journal=["Segmentation fault"])
    failed, res = run(host)
    assert failed
    assert res["cause"]["id"] == "unknown"
    assert "Segmentation fault" in res["cause"]["cause"]
    reads = [c for c in host.commands if "journalctl" in c[0]]
    assert len(reads) == sglang_wait.JOURNAL_SETTLE_READS


def test_collect_journal_returns_the_tail_when_not_ready(run):
    host = Host([show()], phases=["starting"], journal=["warming up"])
    failed, res = run(host, window=0.05, collect_journal=True)
    assert not failed
    assert res["state"] == "starting"
    assert res["journal_tail"] == ["warming up"]


# SGLang 0.5.23's start line (entrypoints/engine.py:1185) carries the key in clear.
KEYED_START = (
    "2026-12-03T09:00:01+0000 ct129 python3[812]: [2026-12-03 09:00:01] server_args={'model_path': '/m', "
    "'port': 30000, 'api_key': 'sk-wait-123', 'admin_api_key': None, 'mem_fraction_static': 0.7}"
)


def test_a_failed_units_journal_comes_back_without_the_key(run):
    journal = [KEYED_START, "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."]
    host = Host([show(active="failed", sub="failed", result="exit-code", status=1)], journal=journal)
    failed, res = run(host)
    assert failed
    assert res["cause"]["id"] == "mem_fraction_too_low"
    assert "sk-wait-123" not in json.dumps(res)
    assert "'api_key': '<redacted>', 'admin_api_key': None" in res["cause"]["journal_tail"][0]


def test_the_collected_journal_hides_the_given_key_in_any_line(run):
    # a line whose format no pattern knows: the exact value of the api_key option is hidden
    host = Host([show()], phases=["starting"], journal=["client sent key sk-wait-123 twice", "warming up"])
    failed, res = run(host, window=0.05, collect_journal=True, api_key="sk-wait-123")
    assert not failed
    assert res["journal_tail"] == ["client sent key <redacted> twice", "warming up"]


@pytest.mark.parametrize("option", ["window", "interval", "timeout", "request_timeout"])
def test_non_positive_durations_are_rejected(run, option):
    failed, res = run(Host([show()]), **{option: 0})
    assert failed
    assert option in res["msg"]


def test_missing_requests_fails_as_a_missing_library_without_touching_the_host(run, monkeypatch):
    # A minimal host: _readiness imports, requests does not. The module must say so up front
    # (no verdict on the server: the rescue tells "not verified" from "down" by that).
    monkeypatch.setattr(sglang_wait._readiness, "HAS_REQUESTS", False)
    monkeypatch.setattr(
        sglang_wait._readiness, "REQUESTS_IMPORT_ERROR", "ModuleNotFoundError: No module named 'requests'"
    )
    host = Host([show()])
    failed, res = run(host)
    assert failed
    assert "Failed to import the required Python library (requests)" in res["msg"]
    assert "state" not in res
    assert host.commands == []


def test_parse_show_types_values():
    unit = sglang_wait.parse_show(show(restarts=4, status=9, exit_mono=2500000))
    assert unit["n_restarts"] == 4
    assert unit["exec_main_status"] == 9
    assert unit["exec_main_exit_monotonic"] == 2.5
    assert json.dumps(unit)  # plain data, serialisable as a module result
    assert sglang_wait.parse_show(show())["exec_main_exit_monotonic"] is None


# --------------------------------------------------------------------------- action plugin
# The action plugin loops the module in windows, prints one progress line per window and
# stops at the first failed window; these tests run it over scripted module results.

from unittest.mock import MagicMock  # noqa: E402

from ansible_collections.ddtree.sglang.plugins.action import sglang_wait as wait_action  # noqa: E402


def make_action(results, **args):
    task = MagicMock()
    task.args = {"name": "sglang-qwen.service", "timeout": 60, "window": 10, **args}
    task.async_val = 0
    action = wait_action.ActionModule(
        task=task, connection=MagicMock(), play_context=MagicMock(), loader=None, templar=None, shared_loader_obj=None
    )
    calls = []

    def execute_module(module_name, module_args, task_vars):
        calls.append(dict(module_args))
        return dict(results.pop(0))

    action._execute_module = execute_module
    return action, calls


@pytest.fixture
def shown(monkeypatch):
    lines = []
    monkeypatch.setattr(wait_action.display, "display", lambda msg, **kw: lines.append(msg))
    return lines


def window(state, http="", **extra):
    res = {"state": state, "http": http, "invocation_id": "inv1", "restarts_baseline": 0, "unit": {}}
    res.update(extra)
    return res


def test_action_prints_progress_each_window_until_ready(shown):
    action, calls = make_action(
        [window("loading", "connection refused"), window("starting", "503 starting"), window("ready", "200 ready")]
    )
    res = action.run(task_vars={"inventory_hostname": "ct129"})
    assert not res.get("failed")
    assert res["state"] == "ready"
    assert res["changed"] is False
    assert len(shown) == 3
    assert "ct129" in shown[0] and "port not bound" in shown[0]
    assert "503 starting" in shown[1]
    assert shown[2].endswith("ready")
    # after the first window the watched invocation and restart baseline are pinned
    assert "invocation_id" not in calls[0]
    assert calls[1]["invocation_id"] == "inv1" and calls[1]["restarts_baseline"] == 0


def test_action_fails_at_the_first_failed_window_with_cause_and_fix(shown):
    cause = {
        "id": "cuda_oom",
        "cause": "CUDA ran out of GPU memory.",
        "fix": "Lower mem_fraction_static.",
        "line": "2026-12-02T12:00:03+0000 ct129 python3[812]: torch.OutOfMemoryError: CUDA out of memory.",
        "journal_tail": ["torch.OutOfMemoryError: CUDA out of memory."],
    }
    action, calls = make_action(
        [
            window("loading"),
            window("failed", failed=True, msg="module text", exception="trace", cause=cause, seconds_since_exit=0.4),
        ]
    )
    res = action.run(task_vars={})
    assert res["failed"] is True
    assert len(calls) == 2
    # the server's own line first, then the cause and the fix
    assert (
        "The server said: 2026-12-02T12:00:03+0000 ct129 python3[812]: torch.OutOfMemoryError: CUDA out of "
        in (res["msg"])
    )
    assert "memory. Cause: CUDA ran out of GPU memory." in res["msg"]
    assert "Fix: Lower mem_fraction_static." in res["msg"]
    assert "0.4s after the process exited" in res["msg"]
    assert "exception" not in res
    assert res["cause"]["id"] == "cuda_oom"
    assert any("torch.OutOfMemoryError" in line for line in shown)


def test_action_times_out_with_the_journal_when_the_server_never_answers(shown, monkeypatch):
    clock = iter(range(0, 1000, 5))
    monkeypatch.setattr(wait_action.time, "monotonic", lambda: next(clock))
    results = [window("loading", "connection refused", journal_tail=["Load weight begin."]) for _attempt in range(5)]
    action, calls = make_action(results, timeout=20, window=5)
    res = action.run(task_vars={})
    assert res["failed"] is True
    assert res["cause"]["id"] == "timeout"
    assert "within 20s" in res["cause"]["cause"]
    assert "loading" in res["cause"]["cause"]
    assert res["cause"]["journal_tail"] == ["Load weight begin."]
    assert "sglang_ready_timeout" in res["cause"]["fix"]
    # the journal is asked for on the last window only
    assert [c["collect_journal"] for c in calls] == [False] * (len(calls) - 1) + [True]


def test_action_passes_module_errors_through(shown):
    action = make_action([{"failed": True, "msg": "Failed to find required executable systemctl"}])[0]
    res = action.run(task_vars={})
    assert res["failed"] is True
    assert res["msg"] == "Failed to find required executable systemctl"
