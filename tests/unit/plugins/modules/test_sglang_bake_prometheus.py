# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sglang_bake reading its windows from a real Prometheus (Debian 12's 2.42) that scrapes a simulated SGLang
unit, beside the same bake reading the unit's own /metrics (issue 36, item 3), and through the ddtree_deploy role's
own module_defaults for it (its defaults and vars, through ansible-playbook)."""

import json
import threading
import time

import pytest
import requests
from ansible_collections.ddtree.sglang.plugins.module_utils import _metrics
from ansible_collections.ddtree.sglang.plugins.modules import sglang_bake
from module_harness import run_main
from playbook_harness import role_vars_play, run_playbook
from sglang_metrics_text import MetricsServer, SglangMetrics

GATE = {"spec_accept_length": 3.1}
# Prometheus scrapes every 0.5 s, so a 2 s window holds four scrapes of the unit (two at least are needed).
BAKE = {"duration": 6.0, "interval": 2.0, "gate": GATE}


def traffic(url, stop):
    """Production-like traffic: non-streamed completions back to back."""
    while not stop.is_set():
        try:
            requests.post(url + "/v1/completions", json={"prompt": "Hi", "max_tokens": 24}, timeout=5)
        except requests.RequestException:
            time.sleep(0.05)


@pytest.mark.wallclock  # a verdict reached in time: Prometheus must have scraped the unit in every window
@pytest.mark.parametrize("decays", [True, False], ids=["decaying unit", "steady unit"])
def test_a_bake_through_prometheus_reaches_the_direct_bakes_verdict(sglang_sim, prometheus, decays):
    ddtree = {"tok_s": 400, "accept_length": 3.1}
    if decays:
        ddtree["degrade"] = {"after_s": 0.3, "accept_length": 1.02}
    sim = sglang_sim(
        algorithm="DDTREE",
        mode=None,
        behaviour={"DDTREE": ddtree},
        args=["--enable-metrics", "--decode-log-interval", "1"],
    )
    target = f"127.0.0.1:{sim.port}"
    prom = prometheus(scrape=[prometheus.Job("sglang", [target], {"host": "sim129"})], interval=0.5)
    stop = threading.Event()
    clients = [threading.Thread(target=traffic, args=(sim.base_url, stop), daemon=True) for _client in range(2)]
    for client in clients:
        client.start()
    try:
        prom.wait_scraped(scrapes=2)
        direct_failed, direct = run_main(sglang_bake.main, dict(BAKE, url=sim.base_url))
        failed, through = run_main(
            sglang_bake.main,
            dict(BAKE, url=sim.base_url, prometheus_url=prom.url, prometheus_selector='job="sglang", host="sim129"'),
        )
    finally:
        stop.set()
    assert through["source"] == {"kind": "prometheus", "url": prom.url, "selector": 'job="sglang", host="sim129"'}
    assert direct["source"]["kind"] == "metrics"
    windows = [m["window"] for m in through["measurements"]]
    assert all(w and w["accept_length_source"] == "counters" and w["traffic"] for w in windows), [
        m.get("error") for m in through["measurements"]
    ]
    if decays:
        assert (failed, through["verdict"]) == (direct_failed, direct["verdict"]) == (True, "failed"), through["msg"]
        assert through["msg"].startswith(
            "bake: accept length over the window (sglang:generation_tokens_total / sglang:spec_verify_calls_total) 1"
        ), through["msg"]
        assert "60 % of 3.1 at the gate" in through["msg"]
        assert {f["name"] for f in through["failed_checks"]} == {f["name"] for f in direct["failed_checks"]}
    else:
        assert (failed, through["verdict"]) == (direct_failed, direct["verdict"]) == (False, "successful")
        assert [m["status"] for m in through["measurements"]] == ["pass"] * 3
        # Prometheus' figures are the unit's: the accept length over the window as the unit's counters give it.
        for w in windows:
            assert w["spec_accept_length"] == pytest.approx(direct["summary"]["spec_accept_length"], rel=0.1)


def test_the_queries_are_the_windows_of_the_unit_series():
    queries = _metrics.prometheus_queries('instance="ct129:30000"', 15)
    assert queries["sglang:spec_verify_calls_total"] == (
        'sum(increase(sglang:spec_verify_calls_total{instance="ct129:30000"}[15000ms]))'
    )
    assert queries["sglang:spec_accept_length"] == (
        'sum(last_over_time(sglang:spec_accept_length{instance="ct129:30000"}[15000ms]))'
    )
    assert queries["sglang:time_to_first_token_seconds"] == (
        'sum by (le) (increase(sglang:time_to_first_token_seconds_bucket{instance="ct129:30000"}[15000ms]))'
    )
    assert queries["sglang:http_responses_total"] == (
        'sum by (status_code) (increase(sglang:http_responses_total{instance="ct129:30000", method="POST"}[15000ms]))'
    )
    assert queries["resets"] == 'sum(resets(sglang:num_requests_total{instance="ct129:30000"}[15000ms]))'


def test_a_selector_that_matches_two_units_is_refused_naming_them(prometheus):
    with MetricsServer(SglangMetrics()) as one, MetricsServer(SglangMetrics()) as two:
        targets = [one.url.split("//", 1)[1], two.url.split("//", 1)[1]]
        prom = prometheus(scrape=[prometheus.Job("sglang", targets)], interval=0.5)
        prom.wait_scraped()
        failed, result = run_main(
            sglang_bake.main,
            dict(BAKE, url=one.url, prometheus_url=prom.url, prometheus_selector='job="sglang"'),
        )
    assert failed and result["msg"].startswith(
        f'prometheus: prometheus_selector job="sglang" matches 2 units in Prometheus at {prom.url} '
    )
    assert all(f'instance="{t}"' in result["msg"] for t in targets)
    assert "give matchers that select the one unit baked" in result["msg"]


def test_prometheus_url_without_a_selector_is_refused_before_anything():
    failed, result = run_main(
        sglang_bake.main, dict(BAKE, url="http://127.0.0.1:9", prometheus_url="http://127.0.0.1:9")
    )
    assert failed and "prometheus_selector" in result["msg"]


def test_prometheus_that_cannot_be_reached_is_named_before_anything():
    failed, result = run_main(
        sglang_bake.main,
        dict(
            BAKE,
            duration=1.0,
            interval=0.5,
            url="http://127.0.0.1:9",
            prometheus_url="http://127.0.0.1:9",
            prometheus_selector='instance="x"',
            prometheus_timeout=1,
            consecutive_error_limit=0,
        ),
    )
    # Refused before the bake measures anything: the check that the selector selects one unit is the first query.
    assert failed and "verdict" not in result
    assert result["msg"].startswith("prometheus: Prometheus at http://127.0.0.1:9: "), result["msg"]
    assert "connection refused" in result["msg"]


PLAY = role_vars_play(
    """\
  module_defaults:
    ddtree.sglang.sglang_bake: "{{ __ddtree_deploy_bake_defaults }}"
  tasks:
    - name: The baseline's read, as the role makes it
      ddtree.sglang.sglang_bake:
        state: baseline
      register: baseline
    - ansible.builtin.copy:
        content: "{{ baseline | to_json }}"
        dest: "{{ playbook_dir }}/baseline.json"
"""
)


# --- the role's wiring: ddtree_deploy hands ddtree_deploy_prometheus_url and its selector to the bake ---------


def test_the_role_reads_the_bakes_windows_from_its_prometheus(tmp_path, ansible_cli_env, sglang_sim, prometheus):
    sim = sglang_sim(
        algorithm="DDTREE",
        mode=None,
        behaviour={"DDTREE": {"tok_s": 400, "accept_length": 3.1}},
        args=["--enable-metrics", "--decode-log-interval", "1"],
    )
    # Prometheus names the target by the address it scrapes: the role's default selector matches it
    # (instance=~`(localhost|127\\.0\\.0\\.1):<sglang_port>`).
    prom = prometheus(scrape=[f"127.0.0.1:{sim.port}"], interval=0.5)
    stop = threading.Event()

    def traffic():
        while not stop.is_set():
            try:
                requests.post(sim.base_url + "/v1/completions", json={"prompt": "Hi", "max_tokens": 16}, timeout=5)
            except requests.RequestException:
                time.sleep(0.05)

    client = threading.Thread(target=traffic, daemon=True)
    client.start()
    variables = {
        "ansible_host": "127.0.0.1",
        "sglang_port": sim.port,
        "ddtree_deploy_bake_s": 2,
        "ddtree_deploy_bake_interval": 2,
        "ddtree_deploy_prometheus_url": prom.url,
        "ddtree_deploy_prometheus_timeout": 5,
    }
    try:
        prom.wait_scraped(scrapes=2)
        rc, out = run_playbook(tmp_path, ansible_cli_env, PLAY, variables, inventory="localhost,")
    finally:
        stop.set()
    assert rc == 0, out
    summary = json.loads((tmp_path / "baseline.json").read_text())["summary"]
    assert summary["source"] == "prometheus"
    assert summary["traffic"] and summary["requests"] > 0
    assert summary["accept_length_source"] == "counters" and summary["spec_accept_length"] > 2.5


SETTINGS_PLAY = role_vars_play(
    """\
  tasks:
    # As module_defaults hands them to a module: templated as task arguments, an omitted one left out.
    - ansible.builtin.set_fact:
        bake: "{{ __ddtree_deploy_bake_defaults }}"
        traffic: "{{ __ddtree_deploy_traffic_defaults }}"
    - ansible.builtin.copy:
        content: "{{ {'bake': bake, 'traffic': traffic} | to_json }}"
        dest: "{{ playbook_dir }}/settings.json"
"""
)


@pytest.mark.parametrize("url", [None, "https://prom.example:9090"])
def test_the_bake_and_the_traffic_read_get_the_same_prometheus_settings(tmp_path, ansible_cli_env, url):
    """One dict of Prometheus settings serves both modules' defaults (vars/main.yml); without a URL neither gets a
    URL or a selector (an omitted option: absent, or before ansible-core 2.19 omit's placeholder)."""
    variables = {
        "ddtree_deploy_prometheus_url": url,
        "ddtree_deploy_prometheus_bearer_token": "tok",
        "sglang_port": 30001,
    }
    rc, out = run_playbook(tmp_path, ansible_cli_env, SETTINGS_PLAY, variables, inventory="ct129,")
    assert rc == 0, out
    found = json.loads((tmp_path / "settings.json").read_text())

    def prometheus(options):
        return {
            k: v
            for k, v in options.items()
            if k.startswith("prometheus_") and not str(v).startswith("__omit_place_holder__")
        }

    assert prometheus(found["bake"]) == prometheus(found["traffic"])
    assert prometheus(found["bake"])["prometheus_bearer_token"] == "tok"
    if url is None:
        assert "prometheus_url" not in prometheus(found["bake"]) and "prometheus_selector" not in prometheus(
            found["bake"]
        )
    else:
        assert prometheus(found["bake"])["prometheus_url"] == url
        assert prometheus(found["bake"])["prometheus_selector"] == "instance=~`(ct129):30001`"
    assert found["bake"]["url"] and "mix_levels" not in found["bake"]
