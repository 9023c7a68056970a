# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wall-clock deadlines against a server that trickles every answer, byte by byte.

requests' timeout bounds each socket read; a server that sends one byte per read interval never
trips it. Each test gives a small budget, measures the wall clock, and checks the message names
the request that was awaited and the time spent. The bounds allow 1 s of slack for a loaded
2-core machine: the old code overran these budgets by the whole answer's length (tens of s).
"""

import json
import re
import time

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils import _readiness
from ansible_collections.ddtree.sglang.plugins.module_utils._http import HttpClient, HttpError
from ansible_collections.ddtree.sglang.plugins.module_utils._probe import Probe

SLACK = 1.0


def _timed(fn):
    start = time.monotonic()
    out = fn()
    return out, time.monotonic() - start


# --- the HTTP client ---------------------------------------------------------------------------


@pytest.mark.wallclock
@pytest.mark.parametrize(
    ("interval", "answer", "budget", "phase"),
    [
        # The status line itself trickles: a wedged proxy that has not answered yet.
        (0.05, None, 0.6, "waiting for the status line and headers"),
        # 40 bytes of headers in 0.4 s, then a 900-byte body that would take 9 s.
        (0.01, b"HTTP/1.1 200 X\r\nContent-Length: 900\r\n\r\n" + b"1" * 900, 1.5, "reading the body"),
    ],
    ids=["headers", "body"],
)
def test_get_json_ends_at_its_timeout_whatever_the_server_trickles(trickle_server, interval, answer, budget, phase):
    server = trickle_server({"/x": answer} if answer else None, interval=interval)
    url = server.base_url
    with pytest.raises(HttpError) as err:
        HttpClient(url).get_json("/x", timeout=budget)
    exc = err.value
    assert exc.kind == "timeout"
    assert exc.message.startswith(f"GET {url}/x timed out: no complete answer within {budget:g} s ("), exc.message
    assert exc.message.endswith(f" s spent, {phase})"), exc.message


@pytest.mark.wallclock
def test_whole_answer_trickled_is_cut_at_the_deadline_not_after_it(trickle_server):
    server = trickle_server(interval=0.05)  # a 60-byte answer takes 3 s
    start = time.monotonic()
    with pytest.raises(HttpError) as err:
        HttpClient(server.base_url).get_json("/v1/models", timeout=1.0)
    took = time.monotonic() - start
    assert 1.0 <= took <= 1.0 + SLACK, took
    spent = float(re.search(r"\((\d+(?:\.\d+)?) s spent", err.value.message).group(1))
    assert 0.9 <= spent <= 1.0 + SLACK


def test_answer_within_the_deadline_is_read_whole(trickle_server, h):
    server = trickle_server({"/ok": h.raw_response(200, b'{"a": 1}')}, interval=0.002)
    assert HttpClient(server.base_url).get_json("/ok", timeout=5) == {"a": 1}


@pytest.mark.wallclock
def test_readiness_poll_is_bounded_by_its_timeout(trickle_server):
    server = trickle_server(interval=1.0)
    r, took = _timed(lambda: _readiness.poll(server.base_url, timeout=1.5))
    assert took <= 1.5 + SLACK
    assert r.phase == "unhealthy" and r.error == "timeout" and r.http_status is None
    assert r.detail.startswith(f"GET {server.base_url}/health timed out: no complete answer within 1.5 s"), r.detail


@pytest.mark.wallclock
def test_readiness_wait_ends_by_its_seconds(trickle_server):
    server = trickle_server(interval=1.0)
    r, took = _timed(lambda: _readiness.wait(server.base_url, 2.0, interval=0.1, timeout=5.0))
    assert took <= 2.0 + SLACK and not r.ready and r.error == "timeout"


# --- the probe: one deadline over every request it makes ---------------------------------------


@pytest.mark.wallclock
@pytest.mark.parametrize(
    ("options", "request_line"),
    [
        ({}, "GET {url}/v1/models"),  # the model lookup
        ({"model": "m", "stream": False}, "POST {url}/v1/completions"),  # the completion, not streamed
        (
            # streamed, with the thresholds off so only the timeout can end it
            {"model": "m", "max_ttft": 0, "min_tokens_per_second": 0},
            "POST {url}/v1/completions",
        ),
    ],
    ids=["models", "not-streamed", "streamed"],
)
def test_probe_ends_at_its_timeout_naming_the_request(trickle_server, options, request_line):
    server = trickle_server(interval=1.0)
    r, took = _timed(lambda: Probe(server.base_url, timeout=2.0, **options).run())
    assert took <= 2.0 + SLACK, (took, r["msg"])
    assert r["failed"] and r["transport_error"] == "timeout", r
    assert r["msg"].startswith("probe timed out after 2 s (timeout)") or r["msg"].startswith("cannot list models")
    assert request_line.format(url=server.base_url) in r["msg"], r["msg"]
    assert re.search(r"\d+(\.\d+)? s spent", r["msg"]), r["msg"]


@pytest.mark.wallclock
def test_probe_wait_ready_ends_by_wait_ready_naming_health(trickle_server):
    server = trickle_server(interval=1.0)
    r, took = _timed(lambda: Probe(server.base_url, wait_ready=2.0, timeout=2.0).run())
    assert took <= 2.0 + SLACK, took
    assert r["failed"] and r["transport_error"] == "timeout"
    assert r["msg"].startswith("server not ready after waiting 2 s (wait_ready): GET "), r["msg"]
    assert "/health timed out" in r["msg"]


@pytest.mark.wallclock
def test_server_info_that_trickles_does_not_hold_the_verdict(trickle_server, h):
    """A healthy completion at once, then /server_info trickles: documented as at most 2 s, and it is."""
    words = ("Hello", " there", " my", " friend", "!")
    events = b"".join(
        b"data: "
        + json.dumps({"choices": [{"index": 0, "text": w, "finish_reason": "length" if w == "!" else None}]}).encode()
        + b"\n\n"
        for w in words
    )
    stream = h.raw_response(200, events + b"data: [DONE]\n\n", {"content-type": "text/event-stream"})
    server = trickle_server({"/v1/completions": (stream, 0)}, interval=1.0)
    r, took = _timed(lambda: Probe(server.base_url, model="m", max_tokens=5).run())
    assert not r["failed"], r["msg"]
    assert r["server"] is None and r["text"] == "Hello there my friend!"
    assert took <= 2.0 + SLACK, took
    assert any(line.startswith("GET /server_info ") for line in server.requests)


@pytest.mark.wallclock
def test_stream_body_that_trickles_after_the_first_token_ends_at_the_timeout(trickle_server, h):
    first = b'data: {"choices": [{"index": 0, "text": "Hi", "finish_reason": null}]}\n\n'
    # Headers and the first event in about 1.3 s, then an event that would take 5 s more.
    answer = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n" + first + b"data: " + b"x" * 500
    server = trickle_server({"/v1/completions": answer}, interval=0.01)
    r, took = _timed(lambda: Probe(server.base_url, model="m", timeout=2.5, max_ttft=0, min_tokens_per_second=0).run())
    assert took <= 2.5 + SLACK, took
    assert r["failed"] and r["text"] == "Hi"
    assert "probe timed out after 2.5 s (timeout) waiting on POST" in r["msg"], r["msg"]
    assert "the event stream" in r["msg"]
