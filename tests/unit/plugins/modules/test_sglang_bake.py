# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sglang_bake against a loopback server that serves SGLang-shaped /metrics changing per scrape."""

import re
import socket
import threading
import time

import pytest
import requests
from ansible_collections.ddtree.sglang.plugins.modules import sglang_bake
from module_harness import run_main
from sglang_metrics_text import MetricsServer, SglangMetrics, huge_page

# Short windows keep the tests quick; the module's logic does not depend on the length.
FAST = {"duration": 1.2, "interval": 0.3, "request_timeout": 2}


def bake(url, **args):
    return run_main(sglang_bake.main, dict(FAST, url=url, **args))


def traffic(n, state):
    state.serve(5)


@pytest.mark.live_server
def test_healthy_window_passes_with_every_measurement():
    with MetricsServer(SglangMetrics(accept_length=3.0), step=traffic) as server:
        failed, result = bake(server.url, gate={"spec_accept_length": 3.1})
    assert not failed, result["msg"]
    assert result["result"] == "pass"
    assert [m["status"] for m in result["measurements"]] == ["pass"] * 4
    assert result["summary"]["requests"] == 20


@pytest.mark.live_server
def test_accept_length_collapse_after_n_measurements_fails_with_the_cause():
    def collapse(n, state):
        state.serve(5)
        if n >= 3:  # the window ending at the 3rd scrape is the 2nd measurement
            state.accept_length = 1.02

    with MetricsServer(SglangMetrics(accept_length=3.0), step=collapse) as server:
        failed, result = bake(server.url, duration=1.5, gate={"spec_accept_length": 3.1}, failure_limit=2)
    assert failed
    assert result["result"] == "fail"
    assert (
        "bake: sglang:spec_accept_length 1.02 for 3 of 4 measurements (bound >= 1.86, 60 % of 3.1 at the gate)"
        in result["msg"]
    )
    assert [m["status"] for m in result["measurements"]] == ["pass", "fail", "fail", "fail"]
    names = [f["name"] for f in result["failed_checks"]]
    assert names == ["accept_length_vs_gate", "accept_length_floor"]


@pytest.mark.live_server
def test_counters_at_one_token_per_verify_pass_fail_the_bake_whatever_the_gauge_says():
    # Every window: 5 requests of 200 tokens in 200 verify passes (accept length 1.0 over the window), while
    # the gauge, the last decode log interval's figure at scrape time, reads 3.1.
    with MetricsServer(SglangMetrics(accept_length=3.1, verify=1.0), step=traffic) as server:
        failed, result = bake(server.url, gate={"spec_accept_length": 3.1})
    assert failed and result["result"] == "fail" and result["verdict"] == "failed"
    assert result["msg"].startswith(
        "bake: accept length over the window (sglang:generation_tokens_total / sglang:spec_verify_calls_total) "
        "1 for 2 of 2 measurements (bound >= 1.86, 60 % of 3.1 at the gate)"
    )
    window = result["measurements"][0]["window"]
    assert (window["accept_length_source"], window["spec_accept_length"]) == ("counters", 1.0)


@pytest.mark.live_server
@pytest.mark.wallclock
def test_failure_stops_the_bake_early():
    def collapse(n, state):
        state.serve(5)
        state.accept_length = 1.0

    with MetricsServer(SglangMetrics(), step=collapse) as server:
        start = time.monotonic()
        failed, result = bake(server.url, duration=3, failure_limit=0)
    assert failed and len(result["measurements"]) == 1
    assert time.monotonic() - start < 1.5
    assert "accept_length_floor" in [f["name"] for f in result["failed_checks"]]


@pytest.mark.live_server
def test_aborts_rising_fail():
    def aborts(n, state):
        state.serve(10, aborted=3 if n >= 2 else 0)

    with MetricsServer(SglangMetrics(), step=aborts) as server:
        failed, result = bake(server.url, failure_limit=1)
    assert failed
    assert "aborted requests per request" in result["msg"] and "0.3 for 2 of 2 measurements" in result["msg"]
    assert "(bound <= 0.02)" in result["msg"]


@pytest.mark.live_server
@pytest.mark.parametrize("policy", ["fail", "pass"])
def test_no_traffic_is_inconclusive_and_the_policy_decides(policy, module_warnings):
    with MetricsServer(SglangMetrics()) as server:
        failed, result = bake(server.url, inconclusive=policy)
    assert result["result"] == "inconclusive" and result["verdict"] == "inconclusive"
    # past inconclusive_limit (2) at the third measurement, the bake stops there, as Argo's analysis does
    assert [m["status"] for m in result["measurements"]] == ["inconclusive"] * 3
    assert result["analysis"]["inconclusive"] == 3
    if policy == "fail":
        assert failed and "3 of 3 measurements" in result["msg"] and "no traffic" in result["msg"]
    else:
        assert not failed and "inconclusive=pass" in module_warnings[0]


@pytest.mark.live_server
def test_malformed_body_is_a_clear_error():
    with MetricsServer(SglangMetrics()) as server:
        server.body = "<html><body><h1>502 Bad Gateway</h1></body></html>\n"
        failed, result = bake(server.url)
    assert failed
    assert "not Prometheus text" in result["msg"] and "502 Bad Gateway" in result["msg"]


@pytest.mark.wallclock
def test_dead_server_does_not_hang():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.monotonic()
    failed, result = bake(f"http://127.0.0.1:{port}", consecutive_error_limit=1)
    assert failed and "connection refused" in result["msg"]
    assert time.monotonic() - start < FAST["duration"] + FAST["request_timeout"]


@pytest.mark.live_server
@pytest.mark.wallclock
def test_silent_server_is_cut_at_the_deadline():
    with socket.socket() as s:  # accepts connections, never answers
        s.bind(("127.0.0.1", 0))
        s.listen(16)
        start = time.monotonic()
        failed, result = bake(f"http://127.0.0.1:{s.getsockname()[1]}", request_timeout=0.5, consecutive_error_limit=0)
    assert failed and "timed out" in result["msg"]
    assert time.monotonic() - start < 1.5


@pytest.mark.live_server
def test_baseline_mode_returns_the_window_and_the_bake_compares_with_it():
    with MetricsServer(SglangMetrics(gen_throughput=200.0, running=4), step=traffic) as server:
        failed, base = run_main(sglang_bake.main, {"url": server.url, "state": "baseline", "duration": 0.3})
    assert not failed and base["summary"]["gen_throughput_per_running_req"] == 50.0

    def slow(n, state):
        state.serve(5)
        state.gen_throughput = 80.0  # 20 per running request, below 70 % of 50

    with MetricsServer(SglangMetrics(running=4), step=slow) as server:
        failed, result = bake(server.url, baseline=base["summary"])
    assert failed and "(sglang:gen_throughput / sglang:num_running_reqs) 20 for 2 of 2" in result["msg"]
    assert "70 % of 50 of the baseline (NEXTN)" in result["msg"]


@pytest.mark.live_server
def test_api_key_is_not_in_the_result():
    with MetricsServer(SglangMetrics(), step=traffic) as server:
        failed, result = bake(server.url, api_key="sk-secret-123")
    assert "sk-secret-123" not in repr(result)


def test_bad_check_is_named():
    failed, result = bake("http://127.0.0.1:9", checks=[{"name": "x", "value": "accept", "comparison": ">="}])
    assert failed and result["msg"].startswith("checks: check x: value must be one of")


@pytest.mark.live_server
@pytest.mark.wallclock
def test_a_failed_first_scrape_is_an_error_measurement_and_the_bake_goes_on():
    holder = {}

    def flaky(n, state):
        holder["server"].status = 503 if n == 1 else 200
        state.serve(5)

    with MetricsServer(SglangMetrics(), step=flaky) as server:
        holder["server"] = server
        failed, result = bake(server.url)
    assert not failed, result["msg"]
    statuses = [m["status"] for m in result["measurements"]]
    assert statuses[0] == "error" and "HTTP 503" in result["measurements"][0]["error"]
    # the windows after it still fit in the duration: 1.2 s from the start, 0.3 s apart
    assert statuses[1:] == ["pass"] * 3
    assert result["elapsed"] < FAST["duration"] + FAST["request_timeout"]


def test_gate_figure_that_is_not_a_number_is_named():
    failed, result = bake("http://127.0.0.1:9", gate={"spec_accept_length": "n/a"})
    assert (
        failed
        and result["msg"] == "gate: spec_accept_length must be a number (the figure the gate measured), got 'n/a'"
    )


# --- inconclusive=load: synthetic load when there is no traffic ------------------------------------------


@pytest.mark.wallclock
def test_no_traffic_with_load_drives_load_and_judges_the_unit_under_it(sglang_sim):
    # The simulator serves /metrics as SGLang 0.5.23 does; nobody sends it a request but the bake's load.
    sim = sglang_sim(
        algorithm="DDTREE",
        mode=None,
        behaviour={"DDTREE": {"tok_s": 200, "accept_length": 3.0}},
        args=["--enable-metrics", "--decode-log-interval", "1"],
    )
    failed, result = run_main(
        sglang_bake.main,
        {
            "url": sim.base_url,
            "duration": 3.0,
            "interval": 0.75,
            "inconclusive": "load",
            "load_max_tokens": 16,
            "gate": {"spec_accept_length": 3.0},
        },
    )
    assert not failed, result["msg"]
    statuses = [m["status"] for m in result["measurements"]]
    # The first window had no traffic and started the load; the windows after it were judged.
    assert statuses[0] == "inconclusive", result["measurements"][0].get("error")
    assert "pass" in statuses[1:] and "fail" not in statuses
    assert result["result"] == "pass"
    assert result["load"]["after_measurement"] == 1 and result["load"]["concurrency"] == 1
    assert result["load"]["url"] == sim.base_url + "/v1/completions"
    assert result["summary"]["requests"] > 0
    assert result["elapsed"] < 3.0 + 5  # the load does not hold the module past duration + request_timeout


def test_load_judges_a_collapsed_unit_as_failed(sglang_sim):
    sim = sglang_sim(
        algorithm="DDTREE",
        mode=None,
        behaviour={"DDTREE": {"tok_s": 200, "accept_length": 1.0}},
        args=["--enable-metrics", "--decode-log-interval", "1"],
    )
    failed, result = run_main(
        sglang_bake.main,
        {
            "url": sim.base_url,
            "duration": 3.0,
            "interval": 0.75,
            "failure_limit": 0,
            "inconclusive": "load",
            "load_max_tokens": 16,
            "gate": {"spec_accept_length": 3.1},
        },
    )
    assert failed and result["result"] == "fail"
    # The simulator counts its verify passes: the accept length is the window's, from the counters.
    words = "bake: accept length over the window (sglang:generation_tokens_total / sglang:spec_verify_calls_total) 1"
    assert words in result["msg"], result["msg"]
    assert "60 % of 3.1 at the gate" in result["msg"]
    assert result["load"]["after_measurement"] == 1


@pytest.mark.live_server
def test_load_that_cannot_reach_completions_still_fails_inconclusive():
    # /metrics answers but there is no completions endpoint: the load gets no traffic in.
    with MetricsServer(SglangMetrics()) as server:
        failed, result = bake(server.url, inconclusive="load")
    assert failed and result["result"] == "inconclusive"
    assert "inconclusive=load" in result["msg"] and "synthetic load from" in result["msg"]
    assert result["load"]["after_measurement"] == 1


@pytest.mark.parametrize("option", ["load_concurrency", "load_max_tokens"])
def test_load_settings_below_one_are_refused(option):
    failed, result = bake("http://127.0.0.1:9", inconclusive="load", **{option: 0})
    assert failed and result["msg"] == f"{option} must be 1 or more, got 0"


def test_a_collapse_with_aborts_under_traffic_fails_naming_accept_length_and_5xx(sglang_sim):
    # The simulator degrades 0.5 s after it is ready, as SGLang retracting requests under memory pressure:
    # accept length 1.02 and a third of the requests aborted, which a non-streamed client sees as HTTP 503.
    sim = sglang_sim(
        algorithm="DDTREE",
        mode=None,
        behaviour={
            "DDTREE": {
                "tok_s": 400,
                "accept_length": 3.1,
                "degrade": {"after_s": 0.5, "accept_length": 1.02, "abort_rate": 0.34},
            }
        },
        args=["--enable-metrics", "--decode-log-interval", "1"],
    )
    stop = threading.Event()

    def client():  # production-like traffic: non-streamed completions back to back
        while not stop.is_set():
            try:
                requests.post(sim.base_url + "/v1/completions", json={"prompt": "Hi", "max_tokens": 12}, timeout=5)
            except requests.RequestException:
                time.sleep(0.05)

    threads = [threading.Thread(target=client, daemon=True) for _client in range(2)]
    for t in threads:
        t.start()
    # The bake judges the collapsed unit: its windows begin once the degrade has (after_s 0.5). A window
    # that straddles it holds healthy requests too, and the accept length over a window is theirs as well.
    time.sleep(0.7)
    try:
        failed, result = run_main(
            sglang_bake.main,
            {
                "url": sim.base_url,
                "duration": 4.0,
                "interval": 1.0,
                "failure_limit": 1,
                "gate": {"spec_accept_length": 3.1},
            },
        )
    finally:
        stop.set()
    assert failed and result["result"] == "fail"
    names = [f["name"] for f in result["failed_checks"]]
    assert "accept_length_vs_gate" in names, result["failed_checks"]
    # The aborted requests are 5xx answers in the windows (the bake stops at the first check past its
    # limit, so http_5xx need not have reached its own limit by then on a loaded machine).
    fives = [c for m in result["measurements"] for c in m["checks"] if c["name"] == "http_5xx"]
    assert any(c["result"] == "fail" and c["value"] > 0.01 for c in fives), result["measurements"]
    # The value is the window's accept length over 12-token requests (tokens / verify passes): 1.1 or so.
    assert re.search(
        r"bake: accept length over the window \(sglang:generation_tokens_total / sglang:spec_verify_calls_total\) "
        r"1(\.\d+)? for \d of \d measurements "
        r"\(bound >= 1\.86, 60 % of 3\.1 at the gate\)",
        result["msg"],
    ), result["msg"]
    assert result["msg"].endswith(" s)") and "(window 1 s," in result["msg"]


# --- pages that fool a bake (issue 36, item 5) ------------------------------------------------------------


@pytest.mark.live_server
def test_a_page_of_counters_no_check_can_use_is_inconclusive_not_a_pass():
    page = (
        "# TYPE sglang:num_requests_total counter\nsglang:num_requests_total {n}\n"
        "# TYPE sglang:generation_tokens_total counter\nsglang:generation_tokens_total {tokens}\n"
    )

    def counters_only(n, state):
        holder["server"].body = page.format(n=10 * n, tokens=2000 * n)

    holder = {}
    with MetricsServer(SglangMetrics()) as server:
        holder["server"] = server
        server.step = counters_only
        failed, result = bake(server.url, gate={"spec_accept_length": 3.1})
    assert failed and result["result"] == "inconclusive" and result["verdict"] == "inconclusive"
    assert [m["status"] for m in result["measurements"]] == ["inconclusive"] * 3
    assert all(v["result"] == "skip" for m in result["measurements"] for v in m["checks"])


@pytest.mark.live_server
def test_an_infinite_accept_length_fails_the_bake_naming_the_series():
    def infinite(n, state):
        state.serve(5)
        state.accept_length = float("inf")

    with MetricsServer(SglangMetrics(), step=infinite) as server:
        failed, result = bake(server.url, gate={"spec_accept_length": 3.1})
    assert failed and result["verdict"] == "failed"
    assert result["msg"].startswith(
        "bake: sglang:spec_accept_length is +Inf for 2 of 2 measurements (check accept_length_vs_gate needs a "
        "finite number"
    )


@pytest.mark.live_server
@pytest.mark.wallclock
def test_a_15_mb_page_ends_the_scrape_within_request_timeout():
    with MetricsServer(SglangMetrics()) as server:
        server.body = huge_page(15)
        start = time.monotonic()
        failed, result = bake(server.url, duration=3, interval=1, request_timeout=2, consecutive_error_limit=0)
        spent = time.monotonic() - start
    assert failed and result["verdict"] == "error"
    assert "took more than request_timeout (2 s): stopped at line" in result["msg"], result["msg"]
    assert spent < 2 + 0.5, spent  # one scrape, read and parsed within request_timeout
