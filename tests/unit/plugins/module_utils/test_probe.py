# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The probe against each simulator mode and against other servers' stream shapes.

Timings are scaled (fast TTFT and token rates) where a test checks the verdict's logic, not the
clock; the real-time field-report check lives in tests/unit/plugins/modules/test_llm_probe.py.
"""

import json
import re
import ssl
import time

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils import _probe, _sse
from ansible_collections.ddtree.sglang.plugins.module_utils._probe import Probe, ProbeError

FAST_DEGENERATE = {"SGLANG_SIM_TTFT_S": "0.02", "SGLANG_SIM_TOK_S": "100"}


def probe(base_url, **kw):
    return Probe(base_url, **kw).run()


# --- healthy -------------------------------------------------------------------------------


@pytest.mark.wallclock
def test_healthy_nextn_passes_with_measurements(shared_sim):
    sim = shared_sim("healthy", "NEXTN")
    r = probe(sim.base_url)
    assert r["failed"] is False and r["verdict"] == "pass", r["msg"]
    assert r["msg"].startswith("ok: 8 token(s)")
    assert r["model"] == "/models/Qwen3.6-27B"  # first id of /v1/models
    assert r["completion_tokens"] == 8 and r["token_count_source"] == "usage"
    assert r["finish_reason"] == "length" and r["http_status"] == 200
    assert r["text"].strip() and r["degenerate"] is False
    assert 0.05 <= r["ttft_s"] < 1.0  # simulator: 0.08 s
    assert 30 <= r["tokens_per_second"] <= 46  # simulator: 40 tok/s after the first token
    assert r["e2e_tokens_per_second"] < r["tokens_per_second"]  # the prefill is in e2e only
    assert r["server"]["speculative_algorithm"] == "EAGLE"  # NEXTN reports itself as EAGLE
    assert r["server"]["version"] and r["server"]["source"] == "/server_info"
    assert r["spec"]["accept_length"] > 1


@pytest.mark.wallclock
def test_decode_rate_tracks_the_true_rate(shared_sim):
    sim = shared_sim("healthy", None, env={"SGLANG_SIM_TOK_S": "40"})
    r = probe(sim.base_url, max_tokens=32)
    assert r["completion_tokens"] == 32
    assert r["tokens_per_second"] == pytest.approx(40, rel=0.1)


def test_generate_reports_spec_from_meta_info(shared_sim):
    sim = shared_sim("healthy", "DFLASH", env={"SGLANG_SIM_ACCEPT_LENGTH": "3.0"})
    r = probe(sim.base_url, api="generate", max_tokens=16)
    assert not r["failed"], r["msg"]
    assert r["spec"]["source"] == "meta_info"
    # SGLang: accept length = completion tokens / verify passes; 15 decode tokens in bursts of 3 -> 16 / 5
    assert r["spec"]["accept_length"] == pytest.approx(16 / 5, rel=0.01)
    assert r["spec"]["verify_ct"] == 5
    assert r["token_count_source"] == "meta_info" and r["completion_tokens"] == 16
    assert r["server"]["speculative_algorithm"] == "DFLASH"
    assert r["model"] == "/models/Qwen3.6-27B"  # taken from the server's info


def test_chat_passes(shared_sim):
    sim = shared_sim("healthy", "NEXTN")
    r = probe(sim.base_url, api="chat", messages=[{"role": "user", "content": "Hello"}])
    assert not r["failed"], r["msg"]
    assert r["url"].endswith("/v1/chat/completions") and r["completion_tokens"] == 8


@pytest.mark.parametrize(
    ("api", "path"), [("completions", "/v1/completions"), ("chat", "/v1/chat/completions"), ("generate", "/generate")]
)
def test_the_probe_asks_each_api_for_its_greedy_answer(scripted_server, h, api, path):
    # The gate's equivalence check compares the two units' answers, so the probe asks for the greedy one
    # (temperature 0) where each API reads it: the OpenAI body, or /generate's sampling_params.
    url, seen = scripted_server({"/v1/models": _models(h), path: h.Script(500, '{"error": "scripted"}')})
    probe(url, api=api)
    body = json.loads(next(request for request in seen if request["path"] == path)["body"])
    assert (body["sampling_params"] if api == "generate" else body)["temperature"] == 0


@pytest.mark.parametrize("api", ["completions", "chat", "generate"])
def test_not_streamed_measures_end_to_end_only(shared_sim, api):
    sim = shared_sim()
    r = probe(sim.base_url, api=api, stream=False)
    assert not r["failed"], r["msg"]
    assert r["ttft_s"] is None and r["tokens_per_second"] is None
    # the rate is the count over the measured time (the time itself is the machine's, not bounded here)
    assert r["completion_tokens"] == 8 and r["e2e_tokens_per_second"] == pytest.approx(8 / r["total_s"], rel=0.02)
    assert r["text"].strip()


# --- the field report's failures -------------------------------------------------------------


def test_degenerate_output_fails_naming_it(shared_sim):
    sim = shared_sim("degenerate", "DDTREE", env=FAST_DEGENERATE)
    r = probe(sim.base_url)
    assert r["failed"] and r["text"] == "!!!!!!!!"
    assert r["degenerate"] is True and r["degenerate_reason"] == "8 x '!'"
    assert r["msg"] == "output degenerate: 8 x '!'"
    assert r["server"]["speculative_algorithm"] == "DDTREE"


def test_degenerate_warn_passes_with_a_warning(shared_sim):
    sim = shared_sim("degenerate", "DDTREE", env=FAST_DEGENERATE)
    r = probe(sim.base_url, degenerate="warn")
    assert not r["failed"] and r["warnings"] == ["output degenerate: 8 x '!'"]
    r = probe(sim.base_url, degenerate="ignore")
    assert not r["failed"] and r["warnings"] == [] and r["degenerate"] is True


@pytest.mark.wallclock
def test_no_first_token_is_judged_at_max_ttft(sglang_sim):
    # the field report's timing, scaled by 0.1: first token after 1.76 s
    sim = sglang_sim("degenerate", "DDTREE", env={"SGLANG_SIM_TIME_SCALE": "0.1"})
    start = time.monotonic()
    r = probe(sim.base_url, max_ttft=0.4)
    took = time.monotonic() - start
    assert r["failed"] and r["msg"] == "no first token within 0.4 s (max_ttft)"
    assert r["ttft_s"] is None and r["completion_tokens"] == 0 and r["degenerate"] is None
    assert took < 1.5


@pytest.mark.wallclock
def test_slow_decode_is_judged_before_the_stream_ends(sglang_sim):
    # scaled field report: one '!' every 0.176 s (5.7 tok/s); 8 tokens would take 1.4 s in all
    sim = sglang_sim("degenerate", "DDTREE", env={"SGLANG_SIM_TIME_SCALE": "0.01"})
    start = time.monotonic()
    r = probe(sim.base_url, min_tokens_per_second=20)
    took = time.monotonic() - start
    assert r["failed"] and r["msg"].startswith("decode too slow:")
    assert "below min_tokens_per_second 20" in r["msg"]
    assert r["completion_tokens"] < 8 and r["tokens_per_second"] < 20
    assert took < 1.2  # judged 7/20 = 0.35 s after the first token, not after 1.4 s


def test_chat_400_quotes_the_cause(shared_sim):
    sim = shared_sim("chat_400", "DDTREE")
    r = probe(sim.base_url, api="chat")
    assert r["failed"] and r["http_status"] == 400
    assert r["msg"].startswith("HTTP 400 from POST http://127.0.0.1:")
    # sglang/srt/models/dflash.py:834-840 (0.5.23), as the simulator's chat_400 mode raises it
    assert "ValueError: DFLASH target_hidden feature dim mismatch. Expected shape [N, 25600]" in r["msg"]
    quoted = r["msg"].split("(the server rejected or failed the request): ", 1)[1]
    assert "Traceback" not in r["msg"] and len(quoted) <= 300  # the exception line, cut to _http.BODY_LIMIT
    assert r["server"]["speculative_algorithm"] == "DDTREE"


def test_connection_reset(shared_sim):
    sim = shared_sim("conn_reset", "DDTREE")
    r = probe(sim.base_url)
    assert r["failed"] and r["transport_error"] == "reset"
    assert "connection reset during POST" in r["msg"]


@pytest.mark.wallclock
def test_hang_is_judged_at_max_ttft(shared_sim):
    sim = shared_sim("hang", "DDTREE")
    start = time.monotonic()
    r = probe(sim.base_url, max_ttft=0.3)
    assert r["failed"] and r["http_status"] is None
    assert r["msg"] == "no first token within 0.3 s (max_ttft): no answer at all, not even response headers"
    assert time.monotonic() - start < 1.5


def test_hang_without_thresholds_ends_at_the_timeout(shared_sim):
    sim = shared_sim("hang", "DDTREE")
    r = probe(sim.base_url, max_ttft=0, min_tokens_per_second=0, timeout=0.5)
    assert r["failed"] and r["transport_error"] == "timeout", r  # no HTTP answer came at all
    assert re.match(
        r"^probe timed out after 0\.5 s \(timeout\) waiting on POST http://127\.0\.0\.1:\d+/v1/completions "
        r"\(0\.[45]\d* s spent on it, the status line and headers\) with 0 token\(s\)$",
        r["msg"],
    ), r["msg"]


@pytest.mark.parametrize("mode", ["oom_start", "crash_before_bind"])
def test_server_that_died_before_binding(sglang_sim, mode):
    sim = sglang_sim(mode, "DDTREE", wait=False)
    sim.proc.wait(timeout=10)
    r = probe(sim.base_url, wait_ready=0.5)
    assert r["failed"] and r["readiness"]["phase"] == "refused"
    assert r["msg"].startswith("server not ready after waiting 0.5 s (wait_ready): connection refused")
    r = probe(sim.base_url)
    assert r["failed"] and r["msg"].startswith("cannot list models")
    assert "connection refused" in r["msg"]


# waited_s is the simulator's bind and load delay as the machine ran them
@pytest.mark.wallclock
def test_wait_ready_waits_through_loading(sglang_sim):
    sim = sglang_sim(env={"SGLANG_SIM_BIND_DELAY_S": "0.3", "SGLANG_SIM_LOAD_SECONDS": "0.3"}, wait=False)
    r = probe(sim.base_url, wait_ready=10)
    assert not r["failed"], r["msg"]
    assert r["readiness"]["phase"] == "ready" and r["readiness"]["waited_s"] >= 0.3


def test_api_key(sglang_sim):
    sim = sglang_sim(args=["--api-key", "s3cret"])
    r = probe(sim.base_url)
    assert r["failed"] and "HTTP 401" in r["msg"] and "api_key" in r["msg"]
    ok = probe(sim.base_url, api_key="s3cret")
    assert not ok["failed"]
    # /server_info answers api_key in clear (SGLang 0.5.23 utils/common.py:3584-3591): the
    # result keeps only the fields it names, so the key is nowhere in it.
    assert ok["server"]["source"] in ("/server_info", "/get_server_info")
    assert "s3cret" not in json.dumps(ok)


# --- thresholds --------------------------------------------------------------------------------


def test_expect_and_finish_reason(shared_sim):
    sim = shared_sim(env={"SGLANG_SIM_TEXT": "Paris is the capital."})
    assert not probe(sim.base_url, expect="(?i)paris", expect_finish_reason="length", max_tokens=3)["failed"]
    r = probe(sim.base_url, expect="London", expect_finish_reason="stop", max_tokens=3)
    assert r["reasons"] == [
        "finish_reason 'length', expected 'stop'",
        "text 'Paris is the' does not match expect 'London'",
    ]


def test_min_completion_tokens(shared_sim):
    sim = shared_sim(env={"SGLANG_SIM_TEXT": "Hi there."})
    r = probe(sim.base_url, min_completion_tokens=4)
    assert r["failed"] and r["finish_reason"] == "stop"
    assert r["reasons"] == ["2 completion token(s) < min_completion_tokens 4"]


def test_end_to_end_rate_judged_when_not_streamed(shared_sim):
    sim = shared_sim(env={"SGLANG_SIM_TOK_S": "10"})
    r = probe(sim.base_url, stream=False, min_tokens_per_second=20)
    assert r["failed"] and r["msg"].startswith("end-to-end ") and r["msg"].endswith("tok/s < 20")


@pytest.mark.wallclock
def test_not_streamed_gives_up_when_it_can_no_longer_pass(sglang_sim):
    sim = sglang_sim("degenerate", "DDTREE", env={"SGLANG_SIM_TIME_SCALE": "0.1"})
    start = time.monotonic()
    r = probe(sim.base_url, stream=False, max_ttft=0.2, min_tokens_per_second=35)
    assert r["failed"] and r["msg"].startswith("no answer within 0.4 s (not streamed)")
    assert time.monotonic() - start < 1.5


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"base_url": "127.0.0.1:30000"}, "base_url must be an http:// or https:// URL"),
        ({"max_tokens": 0}, "max_tokens must be at least 1"),
        ({"min_completion_tokens": 9}, "cannot exceed max_tokens (8)"),
        ({"messages": [{"role": "user", "content": "x"}]}, "messages is only used with api=chat"),
        ({"expect": "(unclosed"}, "expect is not a valid regular expression"),
        ({"timeout": 0}, "timeout must be a positive number"),
        ({"wait_ready": -1}, "wait_ready must be 0"),
        ({"bogus": 1}, "unknown probe option(s): bogus"),
    ],
)
def test_bad_options_are_refused_before_any_request(options, words):
    base = options.pop("base_url", "http://127.0.0.1:1")
    with pytest.raises(ProbeError) as e:
        Probe(base, **options)
    assert words in str(e.value)


# --- other servers' streams --------------------------------------------------------------------


def _c(text, finish=None):
    return {"object": "text_completion", "model": "m", "choices": [{"index": 0, "text": text, "finish_reason": finish}]}


def _models(h):
    return h.Script(200, json.dumps({"object": "list", "data": [{"id": "m", "object": "model"}]}))


def _stream(h, *events):
    return h.Script(200, headers={"content-type": "text/event-stream"}, pieces=h.sse(*events))


def test_vllm_like_stream_without_usage_counts_chunks(scripted_server, h):
    events = [(0.02, _c("Hi")), (0.01, _c(" there")), (0.01, _c(",")), (0.01, _c(" friend", "length")), "[DONE]"]
    url, seen = scripted_server({"/v1/models": _models(h), "/v1/completions": _stream(h, *events)})
    r = probe(url, max_tokens=4)
    assert not r["failed"], r["msg"]
    assert r["completion_tokens"] == 4 and r["token_count_source"] == "chunks (lower bound)"
    assert r["text"] == "Hi there, friend" and r["server"] is None
    assert r["msg"].startswith("ok: at least 4 token(s) (counted chunks: the server sent no usage)")
    sent = json.loads(seen[1]["body"])
    assert sent["stream_options"] == {"include_usage": True} and sent["model"] == "m"


def _three_token_chunks(usage):
    """A speculative server at 30 tok/s: 4 chunks of 3 tokens, one every 0.1 s, usage or none."""
    words = ["one two three", " four five six", " seven eight nine", " ten eleven twelve"]
    events = [(0.02 if i == 0 else 0.1, _c(w, "length" if i == 3 else None)) for i, w in enumerate(words)]
    if usage:
        events.append({"object": "text_completion", "model": "m", "choices": [], "usage": {"completion_tokens": 12}})
    return events + ["[DONE]"]


# The rate comes from when the chunks arrived: beside a busy machine a late first chunk reads faster.
@pytest.mark.wallclock
def test_several_tokens_per_chunk_without_usage_is_a_lower_bound_that_cannot_fail(scripted_server, h):
    # issue #24: counting chunks reads 10 tok/s of a 30 tok/s server; min 20 must not fail on it
    url, _seen = scripted_server({"/v1/models": _models(h), "/v1/completions": _stream(h, *_three_token_chunks(False))})
    r = probe(url, max_tokens=12, min_tokens_per_second=20, min_completion_tokens=10)
    assert r["failed"] is False, r["msg"]
    assert r["token_count_source"] == "chunks (lower bound)" and r["completion_tokens"] == 4
    assert 7 < r["tokens_per_second"] < 11  # 3 chunks after the first in about 0.3 s
    rate_warning = [w for w in r["warnings"] if "min_tokens_per_second 20" in w]
    assert rate_warning and "a lower bound cannot fail it" in rate_warning[0]
    assert any("below min_completion_tokens 10" in w for w in r["warnings"])


def test_several_tokens_per_chunk_with_usage_is_measured(scripted_server, h):
    # What the probe controls: the count (usage, not chunks) and that a decode rate is measured. When the
    # chunks arrived is the machine's: a busy one bunches them (issue #38 read 11.3 for 9), so the rate's
    # arithmetic is checked below on times given to it, not on this server's.
    url, _seen = scripted_server({"/v1/models": _models(h), "/v1/completions": _stream(h, *_three_token_chunks(True))})
    r = probe(url, max_tokens=12)
    assert r["failed"] is False, r["msg"]
    assert r["token_count_source"] == "usage" and r["completion_tokens"] == 12
    assert r["tokens_per_second"] is not None and r["tokens_per_second"] > 0
    assert r["warnings"] == []


def test_the_decode_rate_leaves_out_the_first_chunks_share_of_the_usage():
    # 12 tokens in 4 chunks 0.1 s apart: 9 tokens after the first chunk's 3, over 0.3 s: 30 tok/s, not 11 / 0.3.
    p = _probe.Probe("http://127.0.0.1:9", max_tokens=12, min_tokens_per_second=20)
    p.result = {"model": None, "warnings": [], "reasons": [], "ttft_s": None, "tokens_per_second": None}
    state = _sse.StreamState("completions")
    for i, item in enumerate(_three_token_chunks(True)[:-1]):  # the 4 chunks, then usage; [DONE] left out
        ev = item[1] if isinstance(item, tuple) else item
        state.add(_sse.interpret("completions", json.dumps(ev)), 1.0 + 0.1 * i)
    p._take_state(state, t_req=0.9, t_end=1.35)
    assert state.completion_tokens - state.first_tokens == 9
    assert p.result["tokens_per_second"] == pytest.approx(30.0) and p.result["ttft_s"] == pytest.approx(0.1)
    assert p.result["e2e_tokens_per_second"] == pytest.approx(12 / 0.45, abs=0.001)


def test_usage_below_the_minimum_still_fails(scripted_server, h):
    events = _three_token_chunks(True)
    events[-2]["usage"]["completion_tokens"] = 4  # a true count: 3 tokens after the first in 0.3 s
    url, _seen = scripted_server({"/v1/models": _models(h), "/v1/completions": _stream(h, *events)})
    r = probe(url, max_tokens=12, min_tokens_per_second=20)
    assert r["failed"] is True and r["token_count_source"] == "usage"
    assert "decode" in r["msg"] and "tok/s < 20" in r["msg"]


def test_error_mid_stream(scripted_server, h):
    err = {"error": {"message": "CUDA error: an illegal memory access was encountered", "code": 500}}
    url, _seen = scripted_server({"/v1/models": _models(h), "/v1/completions": _stream(h, _c("Hel"), _c("lo"), err)})
    r = probe(url)
    assert r["failed"]
    assert r["msg"] == "error in the stream after 2 token(s): CUDA error: an illegal memory access was encountered"


def test_stream_cut_without_finish(scripted_server, h):
    url, _seen = scripted_server({"/v1/models": _models(h), "/v1/completions": _stream(h, _c("Hello"), _c(" wor"))})
    r = probe(url)
    assert r["failed"] and "ended without a finish reason or [DONE] after 2 token(s)" in r["msg"]


def test_stream_with_empty_chunks_and_done(scripted_server, h):
    events = [_c(""), _c("Hello"), _c(""), (0.02, _c(" world")), _c("", "stop"), "[DONE]"]
    url, _seen = scripted_server({"/v1/models": _models(h), "/v1/completions": _stream(h, *events)})
    r = probe(url)
    assert not r["failed"] and r["completion_tokens"] == 2 and r["finish_reason"] == "stop"


def test_non_json_error_body(scripted_server, h):
    url, _seen = scripted_server({"/v1/models": _models(h), "/v1/completions": h.Script(500, "Internal Server Error")})
    r = probe(url)
    assert r["failed"] and r["http_status"] == 500
    assert r["msg"].endswith("(the server failed internally): Internal Server Error")


def test_unknown_model_404(scripted_server, h):
    body = '{"object":"error","message":"The model `x` does not exist.","type":"NotFoundError","code":404}'
    url, _seen = scripted_server({"/v1/completions": h.Script(404, body)})
    r = probe(url, model="x")
    assert r["failed"] and "HTTP 404" in r["msg"] and "The model `x` does not exist." in r["msg"]


def test_503_while_loading(scripted_server, h):
    url, _seen = scripted_server({"/v1/models": _models(h), "/v1/completions": h.Script(503, "")})
    r = probe(url)
    assert r["failed"] and "HTTP 503" in r["msg"] and "not ready" in r["msg"]


def test_no_models_listed(scripted_server, h):
    url, _seen = scripted_server({"/v1/models": h.Script(200, '{"object": "list", "data": []}')})
    r = probe(url)
    assert r["failed"] and r["msg"].endswith("/v1/models lists no models")


def test_unreadable_events_become_a_warning(scripted_server, h):
    events = [_c("Hello"), "not json", (0.02, _c(" world", "stop")), "[DONE]"]
    url, _seen = scripted_server({"/v1/models": _models(h), "/v1/completions": _stream(h, *events)})
    r = probe(url)
    assert not r["failed"] and r["warnings"] == [
        "ignored 1 unreadable stream event(s), first: non-JSON event: not json"
    ]


@pytest.mark.wallclock
def test_stream_not_chunked_is_read_as_it_comes(scripted_server, h):
    # a server that streams without chunked encoding (connection close): bytes are read as they come
    pieces = h.sse((0.05, _c("Hello")), (0.1, _c(" big")), (0.1, _c(" world", "length")), "[DONE]")
    script = h.Script(200, headers={"content-type": "text/event-stream", "connection": "close"}, pieces=pieces)
    script.chunked = False
    url, _seen = scripted_server({"/v1/models": _models(h), "/v1/completions": script})
    r = probe(url, max_tokens=3)
    assert not r["failed"], r["msg"]
    assert r["ttft_s"] < 0.15 and 0.18 < r["total_s"]


def test_server_ignoring_stream_is_read_as_one_answer(scripted_server, h):
    body = json.dumps(
        {
            "object": "text_completion",
            "model": "m",
            "usage": {"completion_tokens": 3},
            "choices": [{"index": 0, "text": "Hello big world", "finish_reason": "length"}],
        }
    )
    url, _seen = scripted_server({"/v1/models": _models(h), "/v1/completions": h.Script(200, body, delay=0.05)})
    r = probe(url, max_tokens=3)
    assert not r["failed"], r["msg"]
    assert r["text"] == "Hello big world" and r["completion_tokens"] == 3 and r["tokens_per_second"] is None
    assert r["e2e_tokens_per_second"] == pytest.approx(3 / r["total_s"], rel=0.02)
    assert r["warnings"] and r["warnings"][0].startswith("the server ignored stream: true")


def test_not_json_200_not_streamed(scripted_server, h):
    url, _seen = scripted_server({"/v1/models": _models(h), "/v1/completions": h.Script(200, "<html>oops</html>")})
    r = probe(url, stream=False)
    assert r["failed"] and r["msg"].endswith(
        "answered 200 with content-type application/json, a body that is not JSON "
        "(a proxy or another service on that port?): '<html>oops</html>'"
    )


def test_tls_self_signed(scripted_server, h, self_signed_cert):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(*self_signed_cert)
    events = [_c("Hello"), (0.02, _c(" world", "length")), "[DONE]"]
    url, _seen = scripted_server({"/v1/models": _models(h), "/v1/completions": _stream(h, *events)}, tls_context=ctx)
    r = probe(url)
    assert r["failed"] and r["msg"].startswith("cannot list models") and "validate_certs=false" in r["msg"]
    r = probe(url, validate_certs=False, max_tokens=2)
    assert not r["failed"], r["msg"]
    assert r["text"] == "Hello world"


@pytest.mark.wallclock
def test_late_end_of_stream_after_all_tokens_is_not_a_slow_decode(scripted_server, h):
    # all 3 tokens within 0.1 s (20+ tok/s), the finish chunk and [DONE] only 0.5 s later
    events = [_c("Hello"), (0.05, _c(" big")), (0.05, _c(" world")), (0.5, _c("", "length")), "[DONE]"]
    url, _seen = scripted_server({"/v1/models": _models(h), "/v1/completions": _stream(h, *events)})
    r = probe(url, max_tokens=3, min_tokens_per_second=10)
    assert not r["failed"], r["msg"]
    assert r["tokens_per_second"] > 10 and r["total_s"] > 0.5


@pytest.mark.wallclock
def test_ttft_counts_from_the_request_written_not_from_the_client_set_up(scripted_server, h, monkeypatch):
    # A loaded host stretches the client's own set-up (worker thread, requests, urllib3) before
    # the request is written; TTFT is the server's time to the first token and must not hold it.
    from ansible_collections.ddtree.sglang.plugins.module_utils import _http

    real_request = _http.HttpClient.request

    def slow_set_up(self, method, path, **kw):
        if method == "POST":
            time.sleep(0.3)
        return real_request(self, method, path, **kw)

    monkeypatch.setattr(_http.HttpClient, "request", slow_set_up)
    events = [(0.1, _c("Hi")), (0.01, _c(" there", "length")), "[DONE]"]
    url, _seen = scripted_server({"/v1/models": _models(h), "/v1/completions": _stream(h, *events)})
    p = Probe(url, max_tokens=2)
    r = p.run()
    assert not r["failed"], r["msg"]
    assert 0.09 <= r["ttft_s"] < 0.25, r["ttft_s"]  # not 0.4
    assert p.request_setup_s >= 0.3
    assert r["total_s"] >= 0.4  # the end-to-end time still holds everything


def _lying_usage(h):
    """8 chunks of one word, then usage completion_tokens 5000 (issue #38's server)."""
    events = [(0.01, _c(f" w{i}", "length" if i == 7 else None)) for i in range(8)]
    events.append({"object": "text_completion", "model": "m", "choices": [], "usage": {"completion_tokens": 5000}})
    return _stream(h, *events, "[DONE]")


def test_usage_above_max_tokens_is_flagged_and_the_chunks_are_counted(scripted_server, h):
    url, _seen = scripted_server({"/v1/models": _models(h), "/v1/completions": _lying_usage(h)})
    r = probe(url, max_tokens=16)
    assert r["token_count_doubt"] == "the server's usage.completion_tokens 5000 is above the max_tokens 16 asked for"
    assert r["token_count_source"] == "chunks (lower bound)" and r["completion_tokens"] == 8
    assert any(
        w.startswith(r["token_count_doubt"] + ": not believed; counted the 8 content chunk(s)") for w in r["warnings"]
    )
    assert "5000" not in r["msg"] and r["msg"].startswith("ok: at least 8 token(s)")


def _complete_then_held_open(h):
    """A finish chunk and usage, then neither [DONE] nor the close: the connection held for 30 s."""
    events = [
        (0.01, _c("Hello")),
        (0.01, _c(" world", "length")),
        {"object": "text_completion", "model": "m", "choices": [], "usage": {"completion_tokens": 2}},
    ]
    return h.Script(200, headers={"content-type": "text/event-stream"}, pieces=h.sse(*events) + [(30.0, b"")])


def test_a_stream_with_a_finish_reason_and_usage_is_complete_without_done_or_the_close(scripted_server, h):
    url, _seen = scripted_server({"/v1/models": _models(h), "/v1/completions": _complete_then_held_open(h)})
    r = probe(url, max_tokens=2, timeout=20)  # before: "probe timed out after 20 s (timeout)"
    assert not r["failed"], r["msg"]
    assert r["completion_tokens"] == 2 and r["token_count_source"] == "usage" and r["finish_reason"] == "length"
    assert r["text"] == "Hello world" and r["transport_error"] is None
