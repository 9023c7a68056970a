# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every way a probe can fail reads as what happened: transport kinds, redirects, wrong bodies.

Each server here is real (loopback sockets): a port nothing listens on, a reset, a redirect, a
proxy's HTML page, a non-chunked stream carrying a 5 MB event.
"""

import json
import time

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils import _probe
from ansible_collections.ddtree.sglang.plugins.module_utils._probe import Probe
from ansible_collections.ddtree.sglang.plugins.module_utils._sse import SSEParser


def _models(h):
    return h.Script(200, json.dumps({"object": "list", "data": [{"id": "m", "object": "model"}]}))


# --- transport_error, with and without model ---------------------------------------------------


@pytest.mark.parametrize("model", [None, "m"], ids=["model-lookup", "model-set"])
def test_refused_sets_transport_error_with_or_without_model(h, model):
    url = f"http://127.0.0.1:{h.free_port()}"
    r = Probe(url, model=model).run()
    assert r["failed"] and r["transport_error"] == "refused", r
    assert "connection refused at " + url in r["msg"]


@pytest.mark.parametrize("model", [None, "m"], ids=["model-lookup", "model-set"])
def test_reset_sets_transport_error_with_or_without_model(scripted_server, h, model):
    url, _seen = scripted_server({"/v1/models": h.Script(reset=True), "/v1/completions": h.Script(reset=True)})
    r = Probe(url, model=model).run()
    assert r["failed"] and r["transport_error"] == "reset", r
    assert "connection reset during " in r["msg"]


def test_unresolvable_host_is_dns():
    # .invalid never resolves (RFC 2606), with or without a network.
    r = Probe("http://no-such-host.invalid:30000").run()
    assert r["failed"] and r["transport_error"] == "dns", r
    assert "cannot resolve the host name of http://no-such-host.invalid:30000/v1/models" in r["msg"]


def test_tls_to_a_plain_http_port_is_tls(scripted_server, h):
    url, _seen = scripted_server({"/v1/models": _models(h)})
    r = Probe(url.replace("http://", "https://")).run()
    assert r["failed"] and r["transport_error"] == "tls", r
    assert r["msg"].startswith("cannot list models (to pick one; or set model): TLS error on GET https://")


# --- redirects ----------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [301, 302])
@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "not-streamed"])
def test_redirect_is_named_with_its_location(scripted_server, h, status, stream):
    target = "/gateway/v1/completions"  # on the same server: following it would be seen
    url, seen = scripted_server(
        {"/v1/completions": h.Script(status, b"", headers={"location": target, "content-type": "text/plain"})}
    )
    r = Probe(url, model="m", stream=stream).run()
    assert r["failed"] and r["http_status"] == status and r["transport_error"] is None
    assert r["msg"].startswith(
        f"HTTP {status} redirect from POST {url}/v1/completions to {target}: redirects are not followed"
    ), r["msg"]
    # Not the old "HTTP 405 from POST <original URL>" (a bare "405" can be in the port number).
    assert "HTTP 405" not in r["msg"]
    assert [(s["method"], s["path"]) for s in seen if "completions" in s["path"]] == [("POST", "/v1/completions")]


def test_redirect_of_the_model_lookup_is_named(scripted_server, h):
    url, _seen = scripted_server({"/v1/models": h.Script(308, b"", headers={"location": "/models/"})})
    r = Probe(url).run()
    assert f"HTTP 308 redirect from GET {url}/v1/models to /models/" in r["msg"], r["msg"]


# --- 200 answers that are not what was asked for -------------------------------------------------

PROXY_PAGE = b"<!DOCTYPE html><html><head><title>Sign in - Corp Proxy</title></head><body>Please log in</body></html>"


@pytest.mark.parametrize("chunked", [True, False])
def test_html_page_instead_of_an_event_stream_is_quoted(scripted_server, h, chunked):
    html = {"content-type": "text/html; charset=utf-8"}
    page = h.Script(200, headers=html, pieces=[(0, PROXY_PAGE)], chunked=chunked)
    url, _seen = scripted_server({"/v1/completions": page})
    r = Probe(url, model="m").run()
    assert r["failed"] and r["http_status"] == 200
    assert r["msg"].startswith(
        f"POST {url}/v1/completions answered 200 with content-type text/html; charset=utf-8, not an event stream"
    ), r["msg"]
    assert "<title>Sign in - Corp Proxy</title>" in r["msg"]
    assert "cut off by the server" not in r["msg"]
    assert r["degenerate"] is None  # nothing was generated to judge


def test_html_page_not_streamed_is_quoted(scripted_server, h):
    url, _seen = scripted_server({"/v1/completions": h.Script(200, PROXY_PAGE, headers={"content-type": "text/html"})})
    r = Probe(url, model="m", stream=False).run()
    assert r["failed"] and "content-type text/html, a body that is not JSON" in r["msg"]
    assert "Sign in - Corp Proxy" in r["msg"]


# --- linear SSE parsing, capped text --------------------------------------------------------------


@pytest.mark.wallclock
def test_sse_parser_is_linear_in_a_5mb_event_fed_in_small_pieces():
    event = b"data: " + json.dumps({"t": "x" * 5_000_000}).encode() + b"\n\n"
    parser = SSEParser()
    start = time.monotonic()
    got = []
    for i in range(0, len(event), 512):  # ~10,000 pieces: quadratic copying would move 25 GB
        got += parser.feed(event[i : i + 512])
    took = time.monotonic() - start
    assert len(got) == 1 and len(json.loads(got[0])["t"]) == 5_000_000
    assert took < 2.0, took


def _event(text, finish=None):
    return b"data: " + json.dumps({"choices": [{"index": 0, "text": text, "finish_reason": finish}]}).encode() + b"\n\n"


def test_a_5mb_event_in_a_non_chunked_stream_is_no_false_decode_too_slow(scripted_server, h):
    """Old reader: byte-wise reads and buf += made a 5 MB event take minutes, a false 'decode too slow'."""
    words = " ".join(f"w{i}" for i in range(700_000))  # ~5 MB of distinct words
    usage = b'data: {"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 8}}\n\n'
    body = _event("Hello") + _event(" " + words) + b"".join(_event(f" t{i}") for i in range(5))
    body += _event(".", "length") + usage + b"data: [DONE]\n\n"
    assert len(body) > 5_000_000
    stream = h.Script(200, headers={"content-type": "text/event-stream"}, pieces=[(0, body)], chunked=False)
    url, _seen = scripted_server({"/v1/completions": stream})
    # min 5 tok/s over 7 tokens after the first: the whole stream must be read within 1.4 s of the first.
    r = Probe(url, model="m").run()
    assert not r["failed"], r["msg"]
    assert r["completion_tokens"] == 8 and r["finish_reason"] == "length"
    assert r["text_truncated"] is True and len(r["text"]) == _probe.TEXT_LIMIT
    assert r["text"].startswith("Hello w0 w1 w2")


def test_short_text_is_not_truncated(scripted_server, h):
    body = _event("Paris", "stop") + b"data: [DONE]\n\n"
    stream = h.Script(200, headers={"content-type": "text/event-stream"}, pieces=[(0, body)], chunked=False)
    url, _seen = scripted_server({"/v1/completions": stream})
    r = Probe(url, model="m", min_tokens_per_second=0).run()
    assert r["text"] == "Paris" and r["text_truncated"] is False


# --- base_url ending in /v1 ----------------------------------------------------------------------


def test_base_url_ending_in_v1_gets_a_hint(scripted_server, h):
    url, _seen = scripted_server({"/v1/models": _models(h)})  # /v1/v1/completions: 404
    r = Probe(url + "/v1", model="m").run()
    assert r["failed"] and r["http_status"] == 404
    hint = f"base_url ends in /v1, so the probe asks {url}/v1/v1/completions: give the server's root instead"
    assert hint in r["msg"] and any(w.startswith(hint) for w in r["warnings"])


def test_root_base_url_gets_no_v1_hint(scripted_server, h):
    url, _seen = scripted_server({})
    r = Probe(url, model="m").run()
    assert r["failed"] and "/v1" not in " ".join(r["warnings"]) and "base_url ends in" not in r["msg"]
