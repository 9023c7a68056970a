# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""_metrics: parsing SGLang's /metrics with prometheus_client, windows, quantiles, checks."""

import time
from pathlib import Path

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils import _metrics
from ansible_collections.ddtree.sglang.plugins.module_utils._http import HttpClient, HttpError
from sglang_metrics_text import MODEL, MetricsServer, SglangMetrics, huge_page

FAST_LIMITS = {"failure_limit": 1, "inconclusive_limit": 2, "consecutive_error_limit": 2}
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "sglang-0.5.23-metrics.txt"


def test_recorded_fixture_parses_to_the_figures_it_holds():
    sample = _metrics.parse(FIXTURE.read_text(), at=10.0)
    assert sample.gauges["sglang:spec_accept_length"] == 3.1
    assert sample.gauges["sglang:num_running_reqs"] == 3.0
    assert sample.counters["sglang:num_requests_total"] == 12.0
    assert sample.counters["sglang:num_aborted_requests_total"] == 1.0
    assert sample.counters["sglang:generation_tokens_total"] == 2400.0
    assert sample.counters["sglang:spec_verify_calls_total"] == 800.0
    assert sample.status_counts == {"200": 11.0, "500": 1.0}
    ttft = sample.histograms["sglang:time_to_first_token_seconds"]
    assert ttft["count"] == 12.0
    assert dict(ttft["buckets"])[0.4] == 10.0 and dict(ttft["buckets"])[float("inf")] == 12.0
    # _created samples are not counted into the counter
    assert "sglang:num_requests_created" not in sample.counters


def test_every_name_read_is_in_the_pinned_wheel_table():
    text = FIXTURE.read_text()
    for name in _metrics.METRICS:
        assert name in text, name


@pytest.mark.parametrize(
    "q, buckets, expected",
    [
        # 10 observations in (0.2, 0.4], 2 in (1, 2]: rank 10.8 falls in (1, 2] at 0.4 of its way
        (0.9, [(0.2, 0), (0.4, 10), (1.0, 10), (2.0, 12), (float("inf"), 12)], 1.4),
        (0.5, [(0.2, 0), (0.4, 10), (1.0, 10), (2.0, 12), (float("inf"), 12)], 0.2 + 0.2 * 6 / 10),
        # first bucket interpolates from 0
        (0.5, [(1.0, 4), (float("inf"), 4)], 0.5),
        # rank in +Inf: the highest finite bound, as Prometheus answers
        (0.9, [(1.0, 1), (float("inf"), 10)], 1.0),
        (0.9, [(1.0, 0), (float("inf"), 0)], None),
    ],
)
def test_histogram_quantile_as_prometheus(q, buckets, expected):
    got = _metrics.histogram_quantile(q, buckets)
    assert got == (pytest.approx(expected) if expected is not None else None)


def test_window_figures_from_two_samples():
    m = SglangMetrics(accept_length=2.5, gen_throughput=100.0, running=4)
    m.serve(20, ttft=0.3)
    before = _metrics.parse(m.render(), at=0.0)
    m.serve(9, ttft=0.3)
    m.serve(1, ttft=1.5, aborted=1, errors=1)
    after = _metrics.parse(m.render(), at=15.0)
    w = _metrics.measure(before, after)
    assert w["seconds"] == 15.0 and w["traffic"] and not w["restarted"]
    assert w["requests"] == 10 and w["abort_ratio"] == 0.1 and w["http_5xx_ratio"] == 0.1
    assert w["gen_throughput_per_running_req"] == 25.0
    # only the window's 10 observations count: 9 at 0.3, 1 at 1.5 -> p90 at the top of (0.2, 0.4]
    assert w["ttft_p90"] == pytest.approx(0.4)
    assert w["spec_accept_length"] == 2.5


def test_no_traffic_and_restart():
    m = SglangMetrics()
    m.serve(5)
    a = _metrics.parse(m.render(), at=0.0)
    b = _metrics.parse(m.render(), at=5.0)
    assert _metrics.measure(a, b)["traffic"] is False
    fresh = _metrics.parse(SglangMetrics().render(), at=10.0)
    w = _metrics.measure(b, fresh)
    assert w["restarted"] and w["traffic"] is False


@pytest.mark.parametrize(
    "body, words",
    [
        ("<html><body>502 Bad Gateway</body></html>", "not Prometheus text"),
        ("", "empty"),
        ("# HELP up doc\n# TYPE up gauge\nup 1\n", "none of SGLang's"),
        ('sglang:num_requests_total{a="1" 3\n', "not Prometheus text"),
    ],
)
def test_malformed_body_is_named(body, words):
    with pytest.raises(_metrics.MetricsError, match=words):
        _metrics.parse(body)


def test_an_empty_prometheus_body_is_a_server_that_counted_nothing_yet():
    # SGLang 0.5.23 before its first request: 200, text format 0.0.4, no family written yet.
    empty = _metrics.parse("", at=1.0, content_type="text/plain; version=0.0.4; charset=utf-8")
    later = _metrics.parse(SglangMetrics().render(), at=2.0)
    assert _metrics.measure(empty, empty)["traffic"] is False
    assert _metrics.measure(empty, later)["restarted"] is False
    with pytest.raises(_metrics.MetricsError, match="empty"):
        _metrics.parse("", content_type="text/html")


def test_scrapes_and_health_checks_are_no_traffic():
    # SGLang's middleware counts every request, GET /metrics (the bake's own scrape) included.
    text = (
        "# HELP sglang:http_responses_total doc\n# TYPE sglang:http_responses_total counter\n"
        'sglang:http_responses_total{endpoint="/metrics",method="GET",status_code="200"} %d\n'
        'sglang:http_responses_total{endpoint="/health",method="GET",status_code="503"} %d\n'
    )
    a = _metrics.parse(text % (1, 1), at=1.0)
    b = _metrics.parse(text % (5, 4), at=2.0)
    window = _metrics.measure(a, b)
    assert window["traffic"] is False and window["http_5xx_ratio"] is None


def test_checks_merge_change_disable_add_and_reject():
    checks = _metrics.merge_checks(
        [
            {"name": "aborts", "bound": 0.05},
            {"name": "ttft_vs_baseline", "enabled": False},
            {"name": "queue", "value": "num_running_reqs", "comparison": "<=", "bound": 64},
        ]
    )
    names = [c["name"] for c in checks]
    assert "ttft_vs_baseline" not in names and names[-1] == "queue"
    assert next(c for c in checks if c["name"] == "aborts")["bound"] == 0.05
    with pytest.raises(ValueError, match="value must be one of"):
        _metrics.merge_checks([{"name": "x", "value": "nope", "comparison": ">=", "bound": 1}])
    with pytest.raises(ValueError, match="unknown key"):
        _metrics.merge_checks([{"name": "aborts", "treshold": 1}])
    with pytest.raises(ValueError, match="needs factor"):
        _metrics.merge_checks([{"name": "y", "value": "ttft_p90", "comparison": "<=", "relative_to": "baseline"}])


def test_judge_relative_bounds_and_message():
    checks = _metrics.merge_checks([])
    window = {
        "spec_accept_length": 1.02,
        "abort_ratio": 0.0,
        "http_5xx_ratio": 0.0,
        "gen_throughput_per_running_req": 30.0,
        "num_running_reqs": 4,
        "ttft_p90": 0.6,
    }
    verdicts = {v["name"]: v for v in _metrics.judge(window, checks, baseline=None, gate={"spec_accept_length": 3.1})}
    gate = verdicts["accept_length_vs_gate"]
    assert gate["result"] == "fail" and gate["bound"] == pytest.approx(1.86)
    assert verdicts["accept_length_floor"]["result"] == "fail"
    assert verdicts["throughput_vs_baseline"]["result"] == "skip"  # no baseline given
    msg = _metrics.failure_message(checks[0], 3, 4, gate)
    assert msg == (
        "bake: sglang:spec_accept_length 1.02 for 3 of 4 measurements (bound >= 1.86, 60 % of 3.1 at the gate)"
    )
    base = {"gen_throughput_per_running_req": 50.0, "num_running_reqs": 16, "ttft_p90": 0.2}
    verdicts = {v["name"]: v for v in _metrics.judge(window, checks, baseline=base)}
    assert verdicts["throughput_vs_baseline"]["result"] == "skip"  # 4 vs 16 running: not similar load
    assert verdicts["ttft_vs_baseline"]["result"] == "fail"  # 0.6 > 1.5 * 0.2 + 0.2
    base["num_running_reqs"] = 5
    verdicts = {v["name"]: v for v in _metrics.judge(window, checks, baseline=base)}
    assert verdicts["throughput_vs_baseline"]["result"] == "fail"  # 30 < 0.7 * 50


@pytest.mark.live_server
def test_scrape_over_http_and_404_names_the_flag():
    with MetricsServer(SglangMetrics()) as server:
        client = HttpClient(server.url, timeout=5)
        sample = _metrics.scrape(client)
        assert "sglang:num_requests_total" in sample.counters
        with pytest.raises(HttpError, match="--enable-metrics"):
            _metrics.scrape(client, "/nothing")


def test_accept_length_is_the_windows_from_the_counters_and_the_gauge_only_without_them():
    # The verify counter says 1.5 tokens per pass over the window; the gauge (the last log interval's) 3.1.
    m = SglangMetrics(accept_length=3.1, verify=1.5)
    m.serve(10, tokens=300)
    before = _metrics.parse(m.render(), at=0.0)
    m.serve(4, tokens=150)
    w = _metrics.measure(before, _metrics.parse(m.render(), at=15.0))
    assert (w["accept_length_source"], w["spec_accept_length"]) == ("counters", 1.5)
    # No verify pass in the window (nothing finished): no accept length, not the gauge's.
    again = _metrics.parse(m.render(), at=30.0)
    w = _metrics.measure(_metrics.parse(m.render(), at=15.0), again)
    assert (w["accept_length_source"], w["spec_accept_length"]) == ("counters", None)
    # A release without the counter: the gauge, and the window says so.
    g = SglangMetrics(accept_length=3.1)
    g.serve(2)
    before = _metrics.parse(g.render(), at=0.0)
    g.serve(2)
    w = _metrics.measure(before, _metrics.parse(g.render(), at=15.0))
    assert (w["accept_length_source"], w["spec_accept_length"]) == ("gauge", 3.1)
    # The message names where the figure came from.
    check = next(c for c in _metrics.DEFAULT_CHECKS if c["name"] == "accept_length_floor")
    worst = _metrics.judge({"spec_accept_length": 1.0, "accept_length_source": "counters"}, [check])[0]
    assert worst["result"] == "fail" and worst["source"] == "counters"
    assert _metrics.failure_message(check, 2, 3, worst) == (
        "bake: accept length over the window (sglang:generation_tokens_total / sglang:spec_verify_calls_total) "
        "1 for 2 of 3 measurements (bound >= 1.2)"
    )


# --- pages that fool a bake (issue 36, item 5) ------------------------------------------------------------

COUNTERS_ONLY = (
    "# HELP sglang:num_requests_total doc\n# TYPE sglang:num_requests_total counter\n"
    'sglang:num_requests_total{{model_name="m"}} {n}\n'
    "# HELP sglang:generation_tokens_total doc\n# TYPE sglang:generation_tokens_total counter\n"
    'sglang:generation_tokens_total{{model_name="m"}} {tokens}\n'
)


def test_a_page_no_check_can_judge_is_inconclusive_not_a_pass():
    before = _metrics.parse(COUNTERS_ONLY.format(n=10, tokens=2000), at=0.0)
    after = _metrics.parse(COUNTERS_ONLY.format(n=20, tokens=4000), at=15.0)
    window = _metrics.measure(before, after)
    assert window["traffic"] and window["requests"] == 10
    m = _metrics.measurement(window, _metrics.DEFAULT_CHECKS, gate={"spec_accept_length": 3.1})
    assert m["status"] == "inconclusive"
    assert {v["result"] for v in m["checks"]} == {"skip"}
    aborts = next(v for v in m["checks"] if v["name"] == "aborts")
    assert aborts["detail"].startswith("no sglang:num_aborted_requests_total on the page")


@pytest.mark.parametrize(
    ("series", "text", "figure", "checks_failing"),
    [
        ("sglang:spec_accept_length", "+Inf", "spec_accept_length", {"accept_length_vs_gate", "accept_length_floor"}),
        ("sglang:spec_accept_length", "NaN", "spec_accept_length", {"accept_length_vs_gate", "accept_length_floor"}),
        ("sglang:gen_throughput", "+Inf", "gen_throughput_per_running_req", {"throughput_vs_baseline"}),
        ("sglang:num_running_reqs", "-Inf", "gen_throughput_per_running_req", {"throughput_vs_baseline"}),
    ],
)
def test_nan_and_infinite_values_fail_the_checks_that_read_them_naming_the_series(series, text, figure, checks_failing):
    m = SglangMetrics(accept_length=3.0)
    m.serve(5)
    before = _metrics.parse(m.render(), at=0.0)
    m.serve(5)
    page = "\n".join(
        f"{line.rsplit(' ', 1)[0]} {text}" if line.startswith(series + "{") else line
        for line in m.render().splitlines()
    )
    after = _metrics.parse(page + "\n", at=15.0)
    assert after.nonfinite == {series: text}
    window = _metrics.measure(before, after)
    assert window[figure] is None and window["nonfinite"][figure] == f"{series} is {text}"
    baseline = {"gen_throughput_per_running_req": 30.0, "num_running_reqs": 4}
    result = _metrics.measurement(window, _metrics.DEFAULT_CHECKS, baseline=baseline, gate={"spec_accept_length": 3.1})
    assert result["status"] == "fail"
    failing = {v["name"]: v for v in result["checks"] if v["result"] == "fail"}
    assert set(failing) == checks_failing
    check = next(c for c in _metrics.DEFAULT_CHECKS if c["name"] == sorted(checks_failing)[0])
    assert _metrics.failure_message(check, 1, 1, failing[check["name"]]) == (
        f"bake: {series} is {text} for 1 of 1 measurements (check {check['name']} needs a finite number: the unit "
        "or what serves its /metrics writes a broken value)"
    )


def test_infinite_verify_counter_fails_the_accept_length_from_the_counters():
    m = SglangMetrics(accept_length=3.0, verify=3.0)
    m.serve(5)
    before = _metrics.parse(m.render(), at=0.0)
    m.serve(5)
    page = m.render().replace(
        f'sglang:spec_verify_calls_total{{engine_type="unified",model_name="{MODEL}"}} {m.verify_calls}',
        f'sglang:spec_verify_calls_total{{engine_type="unified",model_name="{MODEL}"}} +Inf',
    )
    window = _metrics.measure(before, _metrics.parse(page, at=15.0))
    assert window["accept_length_source"] == "counters"
    assert window["nonfinite"] == {"spec_accept_length": "sglang:spec_verify_calls_total is +Inf"}


def test_a_malformed_line_is_quoted_as_itself_with_its_line_number():
    m = SglangMetrics()
    m.serve(5)
    lines = m.render().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("sglang:num_requests_total{"))
    lines.insert(at + 1, 'sglang:num_requests_total{model_name="m",is_streaming="true" 3')
    with pytest.raises(_metrics.MetricsError) as err:
        _metrics.parse("\n".join(lines) + "\n")
    msg = str(err.value)
    assert msg.startswith(
        f"the /metrics answer is not Prometheus text: line {at + 2} is "
        '\'sglang:num_requests_total{model_name="m",is_streaming="true" 3\''
    )
    assert "proxy" not in msg and lines[0] not in msg
    # A line that is no sample at all, in a family the collection does not read, is named the same way.
    lines[at + 1] = "this is not a metric line at all!"
    with pytest.raises(_metrics.MetricsError, match=rf"line {at + 2} is 'this is not a metric line at all!'"):
        _metrics.parse("\n".join(lines) + "\n")


def test_parsing_stops_at_the_deadline_saying_so():
    page = huge_page(15)
    start = time.monotonic()
    with pytest.raises(_metrics.MetricsError) as err:
        _metrics.parse(page, at=start, deadline=start)  # already over: the first check stops it
    msg = str(err.value)
    assert msg.startswith(f"reading and parsing the /metrics answer ({len(page) / 1e6:.1f} MB, ")
    assert "took more than request_timeout (0 s): stopped at line " in msg
    assert "Raise request_timeout, or serve fewer series from the unit" in msg


@pytest.mark.live_server
@pytest.mark.wallclock
def test_a_15_mb_page_ends_within_request_timeout():
    page = huge_page(15)
    with MetricsServer(SglangMetrics()) as server:
        server.body = page
        client = HttpClient(server.url, timeout=2.0)
        start = time.monotonic()
        with pytest.raises(_metrics.MetricsError, match=r"took more than request_timeout \(2 s\)"):
            _metrics.scrape(client, timeout=2.0)
        spent = time.monotonic() - start
    # The deadline is checked every CHUNK_LINES lines: one chunk's parse past it at most.
    assert spent < 2.0 + 0.5, spent


def test_a_window_its_source_cannot_give_is_an_error_measurement_and_the_next_window_spans_it():
    # Prometheus' windows (PrometheusWindows.measure) raise MetricsError when a query fails.
    calls = []

    def windows(before, after):
        calls.append((before.at, after.at))
        if len(calls) == 1:
            raise _metrics.MetricsError("Prometheus at http://prom:9090: timed out")
        return _metrics.measure(before, after)

    m = SglangMetrics()
    analysis = _metrics.Analysis(_metrics.DEFAULT_CHECKS, FAST_LIMITS, windows=windows)
    analysis.observe(_metrics.parse(m.render(), at=0.0))
    m.serve(5)
    first = analysis.observe(_metrics.parse(m.render(), at=1.0))
    assert (first["status"], first["error"]) == ("error", "Prometheus at http://prom:9090: timed out")
    m.serve(5)
    second = analysis.observe(_metrics.parse(m.render(), at=2.0))
    assert second["status"] == "pass" and second["window"]["requests"] == 10
    assert calls == [(0.0, 1.0), (0.0, 2.0)]
    verdict = analysis.assess(terminating=True)
    assert (verdict["phase"], verdict["error"], verdict["successful"]) == ("successful", 1, 1)
