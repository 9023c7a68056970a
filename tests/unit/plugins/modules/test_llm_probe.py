# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""llm_probe end to end: the module against each simulator mode, its documentation, and the
field report's failure judged in real time through the ansible CLI within 10 s."""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from ansible_collections.ddtree.sglang.plugins.module_utils import _probe, _probe_options
from ansible_collections.ddtree.sglang.plugins.modules import llm_probe
from hang_guard import hang_guard
from module_harness import run_main

REPO = Path(__file__).resolve().parents[4]
FAST_DEGENERATE = {"SGLANG_SIM_TTFT_S": "0.02", "SGLANG_SIM_TOK_S": "100"}


def run_module(args, check_mode=False):
    """Run main() with args; returns (failed, result)."""
    return run_main(llm_probe.main, args, check_mode=check_mode)


# --- documentation and argument spec -------------------------------------------------------


def _doc():
    return yaml.safe_load(llm_probe.DOCUMENTATION)


def test_documentation_matches_argument_spec():
    options = _doc()["options"]
    assert set(options) == set(llm_probe.ARGUMENT_SPEC)
    for name, spec in llm_probe.ARGUMENT_SPEC.items():
        doc = options[name]
        assert doc["type"] == spec["type"], name
        assert doc.get("default") == spec.get("default"), name
        assert doc.get("choices") == spec.get("choices"), name
        assert bool(doc.get("required")) == bool(spec.get("required")), name


def test_module_defaults_are_the_probe_defaults():
    for name, spec in llm_probe.ARGUMENT_SPEC.items():
        if name != "base_url":
            assert spec.get("default") == _probe.DEFAULTS[name], name
    # one copy: the probe and the module read the same dict
    assert _probe.DEFAULTS is _probe_options.DEFAULTS


def test_ddtree_deploy_leaves_the_thresholds_to_the_probe():
    # The role used to restate the thresholds (and had max_ttft 5.0 against the probe's 4.0).
    defaults = yaml.safe_load((REPO / "roles" / "ddtree_deploy" / "defaults" / "main.yml").read_text())
    for option in ("min_tokens_per_second", "max_ttft"):
        assert defaults[f"ddtree_deploy_probe_{option}"] is None, option


def test_documentation_has_examples_and_return_samples():
    assert _doc()["attributes"]["check_mode"]["support"] == "full"
    assert _doc()["attributes"]["diff_mode"]["support"] == "none"
    examples = yaml.safe_load(llm_probe.EXAMPLES)
    assert all("ddtree.sglang.llm_probe" in t or "ansible.builtin.debug" in t for t in examples)
    returns = yaml.safe_load(llm_probe.RETURN)
    for key in (
        "text",
        "completion_tokens",
        "finish_reason",
        "ttft_s",
        "total_s",
        "tokens_per_second",
        "e2e_tokens_per_second",
        "degenerate",
        "degenerate_reason",
        "http_status",
        "model",
        "api",
        "server",
        "spec",
        "verdict",
        "msg",
    ):
        assert "sample" in returns[key] and returns[key]["description"], key


@pytest.mark.parametrize("option", ["api_key", "headers"])
def test_options_carrying_secrets_are_no_log(option):
    assert llm_probe.ARGUMENT_SPEC[option]["no_log"] is True


# --- end to end against the simulator -------------------------------------------------------


def test_healthy_passes_and_changes_nothing(shared_sim):
    sim = shared_sim("healthy", "NEXTN")
    failed, r = run_module({"base_url": sim.base_url})
    assert not failed, r["msg"]
    assert r["changed"] is False and r["verdict"] == "pass"
    # a decode rate was measured; how fast is the machine's (the simulator beside the suite's other tests)
    assert r["completion_tokens"] == 8 and r["tokens_per_second"] > 0
    assert r["server"]["speculative_algorithm"] == "EAGLE"


def test_check_mode_runs_the_probe(shared_sim):
    sim = shared_sim("healthy", "NEXTN")
    failed, r = run_module({"base_url": sim.base_url}, check_mode=True)
    assert not failed and r["completion_tokens"] == 8 and r["changed"] is False


def test_degenerate_fails_with_the_cause(shared_sim):
    sim = shared_sim("degenerate", "DDTREE", env=FAST_DEGENERATE)
    failed, r = run_module({"base_url": sim.base_url})
    assert failed and r["msg"] == "output degenerate: 8 x '!'" and r["changed"] is False
    assert r["text"] == "!!!!!!!!" and r["degenerate"] is True


def test_degenerate_warn_is_a_module_warning(shared_sim, module_warnings):
    sim = shared_sim("degenerate", "DDTREE", env=FAST_DEGENERATE)
    failed, r = run_module({"base_url": sim.base_url, "degenerate": "warn"})
    assert not failed and module_warnings == ["output degenerate: 8 x '!'"]


@pytest.mark.parametrize(
    ("mode", "args", "pattern"),
    [
        (
            "chat_400",
            {"api": "chat"},
            r"^HTTP 400 from POST .*/v1/chat/completions .*DFLASH target_hidden feature dim mismatch",
        ),
        ("conn_reset", {}, r"^connection reset during POST .*/v1/completions"),
        ("hang", {"max_ttft": 0.3}, r"^no first token within 0\.3 s \(max_ttft\): no answer at all"),
    ],
)
def test_failure_modes_fail_with_the_cause(shared_sim, mode, args, pattern):
    sim = shared_sim(mode, "DDTREE")
    failed, r = run_module(dict(args, base_url=sim.base_url))
    assert failed and re.search(pattern, r["msg"]), r["msg"]
    assert r["verdict"] == "fail" and r["changed"] is False


@pytest.mark.parametrize("mode", ["oom_start", "crash_before_bind"])
def test_server_that_never_binds(sglang_sim, mode):
    sim = sglang_sim(mode, "DDTREE", wait=False)
    sim.proc.wait(timeout=hang_guard(10))
    assert sim.proc.returncode != 0
    # 2 s: a closed port refuses at once, but on a loaded machine the first connect may not even start
    # within a shorter wait (the verdict is then a timeout, which says nothing about the port).
    failed, r = run_module({"base_url": sim.base_url, "wait_ready": 2})
    assert failed and "connection refused" in r["msg"] and r["readiness"]["phase"] == "refused"


def test_api_key_reaches_the_server_and_not_the_result(sglang_sim):
    sim = sglang_sim(args=["--api-key", "k3y-s3cret"])
    failed, r = run_module({"base_url": sim.base_url, "api_key": "k3y-s3cret"})
    assert not failed, r["msg"]
    assert "k3y-s3cret" not in json.dumps(r)


def test_a_key_in_headers_reaches_the_server_and_not_the_result(sglang_sim):
    sim = sglang_sim(args=["--api-key", "k3y-h3ader"])
    failed, r = run_module({"base_url": sim.base_url, "headers": {"Authorization": "Bearer k3y-h3ader"}})
    assert not failed, r["msg"]
    assert "k3y-h3ader" not in json.dumps(r)


def test_bad_option_fails_cleanly():
    failed, r = run_module({"base_url": "localhost:30000"})
    assert failed and r["msg"].startswith("base_url must be an http:// or https:// URL")


@pytest.mark.parametrize("value", [True, False])
def test_wait_ready_refuses_a_boolean(value):
    # A float option would take `true` as 1 s: the verifiers once waited 1 s for a service
    # still starting, and failed on a loaded machine.
    failed, r = run_module({"base_url": "http://127.0.0.1:1", "wait_ready": value})
    assert failed
    assert r["msg"].startswith("wait_ready is a number of seconds, not yes/no"), r["msg"]
    assert "wait_ready: 60" in r["msg"]


def test_wait_ready_takes_seconds_as_a_number_or_a_string(shared_sim):
    sim = shared_sim("healthy", "NEXTN")
    for value in (5, 5.5, "5"):
        failed, r = run_module({"base_url": sim.base_url, "wait_ready": value})
        assert not failed, (value, r["msg"])
        assert r["readiness"]["phase"] == "ready", (value, r["readiness"])
    failed, r = run_module({"base_url": sim.base_url, "wait_ready": "soon"})
    assert failed and r["msg"] == 'wait_ready must be a number of seconds, e.g. 60; got a string ("soon")'


def test_internal_error_is_a_verdict_not_a_traceback(monkeypatch):
    def boom(self):
        raise KeyError("oops")

    monkeypatch.setattr(_probe.Probe, "run", boom)
    failed, r = run_module({"base_url": "http://127.0.0.1:1"})
    assert failed and r["msg"].startswith("llm_probe internal error (KeyError")


def test_missing_requests_names_the_library(monkeypatch):
    monkeypatch.setattr(llm_probe, "HAS_REQUESTS", False)
    failed, r = run_module({"base_url": "http://127.0.0.1:1"})
    assert failed and "requests" in r["msg"]


# --- the field report, in real time, through Ansible ------------------------------------------


@pytest.mark.wallclock
def test_field_report_failure_is_judged_at_max_ttft_through_ansible(sglang_sim):
    """Real timing: first token after 17.6 s, then '!' every 17.6 s; only base_url is set.

    The probe must give up at its own max_ttft deadline (4 s), not wait for the tokens. The
    issue's goal, a verdict within 10 s of starting Ansible, depends on how busy the machine
    is and is measured by benchmarks/probe_bench.py (docs/probe.md), not asserted here.
    """
    sim = sglang_sim("degenerate", "DDTREE")
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(REPO / ".cache" / "collections"), ANSIBLE_NOCOLOR="1")
    ansible = Path(sys.executable).parent / "ansible"
    start = time.monotonic()
    proc = subprocess.run(
        [str(ansible), "localhost", "-m", "ddtree.sglang.llm_probe", "-a", f"base_url={sim.base_url}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=hang_guard(60),
        check=False,
    )
    took = time.monotonic() - start
    assert proc.returncode == 2, proc.stdout + proc.stderr
    marker = "localhost | FAILED! => "
    assert marker in proc.stdout, proc.stdout + proc.stderr
    result = json.loads(proc.stdout[proc.stdout.index(marker) + len(marker) :])
    assert result["verdict"] == "fail" and result["changed"] is False
    assert result["msg"] == "no first token within 4 s (max_ttft)"
    # Judged at the deadline: well before the first '!' would have arrived at 17.6 s.
    assert result["total_s"] < 5, result
    assert took < 17.6, f"ansible waited {took:.1f} s, as long as the server's first token"
