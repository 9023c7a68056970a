# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ddtree_deploy's preflight refuses bad settings by name, through ansible-playbook.

These checks run on the controller before the role touches a host, so they are tested here
against localhost (check mode, a local connection) rather than in a molecule scenario.
"""

import socket
import sys
from pathlib import Path

import pytest
from playbook_harness import run_playbook

PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - ansible.builtin.include_role:
        name: ddtree.sglang.ddtree_deploy
        tasks_from: preflight
"""


MODELS = {"sglang_model_path": "/srv/models/Qwen3.6-27B", "sglang_draft_model_path": "/srv/models/Qwen3.6-27B-DFlash"}


def run_preflight(tmp_path, env, extra_vars, play=PLAY):
    return run_playbook(tmp_path, env, play, {**MODELS, **extra_vars}, playbook="preflight.yml", check=True)


# (variables, the check that refuses them, what its message says)
BAD_SETTINGS = {
    # A real boolean, as YAML's `true` in group_vars gives; a float variable would read it as 1 s.
    "wait_ready true": (
        {"ddtree_deploy_probe_wait_ready": True},
        "Check the gate's, the probe's and the bake's settings",
        "ddtree_deploy_probe_wait_ready (true) must be a number of seconds, not yes/no (`true` would be 1 s)",
    ),
    "timeout true": (
        {"ddtree_deploy_probe_timeout": True},
        "Check the gate's, the probe's and the bake's settings",
        "ddtree_deploy_probe_timeout (true) must be a number of seconds, not yes/no (`true` would be 1 s)",
    ),
    "gate repeats 0": (
        {"ddtree_deploy_gate_repeats": 0},
        "Check the gate's, the probe's and the bake's settings",
        "ddtree_deploy_gate_repeats (0) must be at least 1",
    ),
    "bake interval longer than the bake": (
        {"ddtree_deploy_bake_s": 10, "ddtree_deploy_bake_interval": 15},
        "Check the gate's, the probe's and the bake's settings",
        "ddtree_deploy_bake_interval (15) must not exceed ddtree_deploy_bake_s (10): the bake would take no",
    ),
    # Prometheus given the API's path, and two ways to authenticate: both named, the token never shown.
    "prometheus url and auth": (
        {
            "ddtree_deploy_prometheus_url": "http://prom:9090/api/v1",
            "ddtree_deploy_prometheus_bearer_token": "tok-sekret",
            "ddtree_deploy_prometheus_username": "reader",
        },
        "Check the gate's, the probe's and the bake's settings",
        'ddtree_deploy_prometheus_url ("http://prom:9090/api/v1") must be null, or Prometheus\' http(s) address',
    ),
    # A tune's load mix (issue 35): its shape, and a level the gate does not measure (no candidate could be scored).
    "load mix of a level": (
        {"ddtree_deploy_load_mix": {"1": 0.9, "sixteen": 0.1}},
        "Check the gate's, the probe's and the bake's settings",
        'ddtree_deploy_load_mix ({"1": 0.9, "sixteen": 0.1}) must be null or a mapping of concurrency levels',
    ),
    "load mix outside the gate's levels": (
        {"ddtree_deploy_load_mix": {"1": 0.2, "8": 0.8}, "ddtree_deploy_gate_concurrency": [1, 16]},
        "Check the gate's, the probe's and the bake's settings",
        "ddtree_deploy_load_mix has traffic at concurrency 8, which ddtree_deploy_gate_concurrency (1, 16) does not",
    ),
    # Issue 33: an SLO of 0 s, sampling above its range, an inconclusive policy the gate does not know.
    "slo, sampling and inconclusive": (
        {
            "ddtree_deploy_slo": {"ttft_s": 0},
            "ddtree_deploy_gate_sampling": {"temperature": 0.7, "top_p": 1.5},
            "ddtree_deploy_gate_inconclusive": "retry",
        },
        "Check the gate's, the probe's and the bake's settings",
        'ddtree_deploy_slo ({"ttft_s": 0}) must be null, or a mapping of ttft_s and/or itl_s, each a number of '
        "seconds above 0",
    ),
    # Two settings wrong at once: both named in the one message.
    "min gain mapping and warmup text": (
        {"ddtree_deploy_min_gain": {"sixteen": 0.1}, "ddtree_deploy_gate_warmup": "soon"},
        "Check the gate's, the probe's and the bake's settings",
        'ddtree_deploy_min_gain ({"sixteen": 0.1}) must be a fraction above -1',
    ),
}


@pytest.mark.parametrize("case", BAD_SETTINGS)
def test_bad_settings_are_refused_before_the_host_is_touched(tmp_path, ansible_cli_env, case):
    variables, check, message = BAD_SETTINGS[case]
    rc, out = run_preflight(tmp_path, ansible_cli_env, variables)
    assert rc == 2, out
    assert f"TASK [ddtree.sglang.ddtree_deploy : Preflight | {check}]" in out, out
    # ansible-core before 2.19 prints the failure as JSON, with its quotes escaped
    assert message in " ".join(out.replace('\\"', '"').split()), out
    # the first check on the host comes after these, and never ran
    assert "Check what the modules need on the host" not in out, out
    assert "sekret" not in out, out


def test_seconds_pass_the_check(tmp_path, ansible_cli_env):
    rc, out = run_preflight(
        tmp_path, ansible_cli_env, {"ddtree_deploy_probe_wait_ready": 120, "ddtree_deploy_probe_timeout": "30"}
    )
    assert (
        "TASK [ddtree.sglang.ddtree_deploy : Preflight | Check the gate's, the probe's and the bake's settings]" in out
    ), out
    assert "not yes/no" not in out, out


def test_a_trace_with_a_bad_line_is_refused_naming_the_file_and_the_line(tmp_path, ansible_cli_env):
    trace = tmp_path / "trace.jsonl"
    trace.write_text('{"prompt": "def fib(n):", "max_tokens": 64}\n{"prompt": "Hello"}\n')
    rc, out = run_preflight(tmp_path, ansible_cli_env, {"ddtree_deploy_gate_prompts_file": str(trace)})
    assert rc == 2, out
    assert "Preflight | Keep the inputs every candidate builds on, and read the gate's trace" in out, out
    assert f"{trace} line 2 has no max_tokens: each request says how many tokens it asks for" in out, out
    assert "Check what the modules need on the host" not in out, out


def test_a_good_trace_and_sampling_pass(tmp_path, ansible_cli_env):
    trace = tmp_path / "trace.jsonl"
    trace.write_text('{"prompt": "def fib(n):", "max_tokens": 64, "temperature": 0.2}\n')
    variables = {
        "ddtree_deploy_gate_prompts_file": str(trace),
        "ddtree_deploy_gate_sampling": {"temperature": 0.7, "top_p": 0.95},
        "ddtree_deploy_slo": {"ttft_s": 1.0, "itl_s": 0.05},
        "ddtree_deploy_gate_inconclusive": "extend",
    }
    rc, out = run_preflight(tmp_path, ansible_cli_env, variables)
    assert "read the gate's trace] *" in out and "must be" not in out, out


# The router (issue 34): its settings by rule, then the real router asked in check mode, before the host is touched.
ROUTER_PLAY = """
- hosts: localhost
  gather_facts: false
  # As main.yml's block gives them (the role's vars/main.yml), for preflight run alone.
  module_defaults:
    ddtree.sglang.sglang_router_worker: "{{ __ddtree_deploy_router_defaults }}"
  tasks:
    - ansible.builtin.include_role:
        name: ddtree.sglang.ddtree_deploy
        tasks_from: preflight
"""


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_router_url_that_is_no_url_is_refused_by_name(tmp_path, ansible_cli_env):
    rc, out = run_preflight(
        tmp_path,
        ansible_cli_env,
        {"ddtree_deploy_router_url": "router:30000", "ddtree_deploy_router_api_key": "k-sekret"},
    )
    assert rc == 2, out
    assert 'ddtree_deploy_router_url ("router:30000") must be null, or the router\'s http(s) address' in " ".join(
        out.replace('\\"', '"').split()
    ), out
    assert "Check what the modules need on the host" not in out and "sekret" not in out, out


@pytest.mark.live_server  # a real sglang-router, started here (the fixture marks the others)
def test_a_router_that_does_not_list_the_host_is_refused_before_the_host_is_touched(tmp_path, ansible_cli_env):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins"))
    from router_harness import RouterLauncher  # noqa: PLC0415 (the plugins tree's real-router harness)

    launcher = RouterLauncher(tmp_path, free_port)
    router = launcher.start([], api_key="rk-sekret")
    try:
        variables = {
            "ddtree_deploy_router_url": router.url,
            "ddtree_deploy_router_api_key": "rk-sekret",
            "sglang_host": "10.0.0.129",
        }
        rc, out = run_preflight(tmp_path, ansible_cli_env, variables, play=ROUTER_PLAY)
        out = " ".join(out.replace('\\"', '"').split())
    finally:
        launcher.stop_all()
    assert rc == 2, out
    assert "Preflight | Check the router lists this host's worker" in out, out
    # The worker URL is the documented default from sglang_host and sglang_port; the fix names the variable.
    assert f"the router at {router.url} does not list http://10.0.0.129:30000" in out, out
    assert "set ddtree_deploy_router_worker_url to the URL the router knows this host by" in out, out
    assert "Check what the modules need on the host" not in out and "sekret" not in out, out
