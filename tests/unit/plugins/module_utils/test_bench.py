# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The load benchmark: percentiles, window accounting, errors, the deadline, a server without
usage, and real closed-loop runs against the simulator checked against its configured rate."""

import json
import random
import re
import statistics
import time

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils import _bench, _gate
from ansible_collections.ddtree.sglang.plugins.module_utils._bench import (
    Bench,
    BenchError,
    Record,
    in_window,
    level_figures,
    percentile,
)

# --- percentiles ---------------------------------------------------------------------------


def test_percentile_is_linear_between_ranks():
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([1, 2, 3, 4], 90) == pytest.approx(3.7)
    assert percentile([5], 99) == 5
    assert percentile([], 50) is None


def test_percentile_agrees_with_the_standard_librarys_inclusive_quantiles():
    # statistics.quantiles(method="inclusive") is the same definition as numpy's default (linear),
    # which bench_serving reports: an independent implementation to check against.
    rng = random.Random(7)
    for n in (2, 3, 10, 101, 1000):
        data = [rng.expovariate(20.0) for _draw in range(n)]
        cuts = statistics.quantiles(data, n=100, method="inclusive")
        for q in (50, 90, 99):
            assert percentile(data, q) == pytest.approx(cuts[q - 1], rel=1e-12), (n, q)


# --- window accounting -----------------------------------------------------------------------


def _rec(worker, start, end, tokens, times=None, error=None, window=(1.0, 3.0)):
    r = Record(worker, start, in_window(start, *window))
    r.end = end
    r.tokens = tokens
    r.token_source = "usage"
    r.times = times if times is not None else [start + 0.1, end]
    r.error = error
    return r


def test_in_window_counts_by_start():
    assert not in_window(0.99, 1.0, 3.0)  # started in the warmup
    assert in_window(1.0, 1.0, 3.0)
    assert in_window(2.99, 1.0, 3.0)  # runs past the window end: still counted
    assert not in_window(3.0, 1.0, 3.0)  # started after the window: load only


def test_each_worker_is_measured_over_its_counted_requests_and_the_rates_add_up():
    records = [
        # worker 0: one request from the warmup, two counted (the second ends past the window), one after
        _rec(0, 0.5, 1.5, 10),
        _rec(0, 1.5, 2.5, 10),
        _rec(0, 2.5, 3.5, 10),
        _rec(0, 3.5, 4.5, 10),
        # worker 1: a warmup request ending at 1.2, then 8 tokens, an error, 8 tokens
        _rec(1, 0.0, 1.2, 8),
        _rec(1, 1.2, 2.0, 8),
        _rec(1, 2.0, 2.2, 0, times=[], error="HTTP 500 from POST x (the server failed internally)"),
        _rec(1, 2.2, 3.2, 8),
    ]
    f = level_figures(records, 2)
    # worker 0: 20 tokens over 1.5..3.5 = 10 tok/s; worker 1: 16 tokens over 1.2..3.2 (the error's
    # time included) = 8 tok/s. Counting tokens over the bare 2 s window would give neither.
    assert f["output_tokens_per_second"] == pytest.approx(18.0)
    assert f["requests_per_second"] == pytest.approx(2.0)
    assert f["completed"] == 4 and f["output_tokens"] == 36
    error = "HTTP 500 from POST x (the server failed internally)"
    assert f["errors"] == {"count": 1, "messages": [error], "kinds": {"error": {"count": 1, "first": error}}}
    assert f["error_share"] == pytest.approx(1 / 5)  # 1 of the 5 counted requests
    assert f["token_count_source"] == "usage"
    assert f["ttft_s"]["p50"] == pytest.approx(0.1)
    assert f["streams_measured"] == 2


def test_cut_requests_are_neither_completed_nor_errors_and_do_not_stretch_the_span():
    done = _rec(0, 1.0, 2.0, 10)
    cut = _rec(0, 2.0, 9.0, 0, times=[])
    cut.cut = True
    f = level_figures([done, cut], 1)
    assert f["output_tokens_per_second"] == pytest.approx(10.0)
    assert f["completed"] == 1 and f["cut"] == 1 and f["errors"]["count"] == 0


def test_errors_keep_the_first_distinct_messages():
    records = [_rec(0, 1.0 + i * 0.01, 1.0 + i * 0.01 + 0.005, 0, times=[], error=f"e{i % 7}") for i in range(50)]
    f = level_figures(records, 1)
    assert f["errors"]["count"] == 50
    assert f["errors"]["messages"] == ["e0", "e1", "e2", "e3", "e4"]
    assert f["completed"] == 0 and f["output_tokens_per_second"] is None


def test_itl_and_decode_rate_come_from_chunk_times():
    r = _rec(0, 1.0, 1.5, 5, times=[1.1, 1.2, 1.3, 1.4, 1.5])
    f = level_figures([r], 1)
    assert f["itl_s"]["p50"] == pytest.approx(0.1)
    assert f["decode_tokens_per_second"]["p50"] == pytest.approx(10.0)  # 4 tokens after the first in 0.4 s


# --- options ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (
            {"concurrency": "many"},
            "concurrency takes whole numbers of streams: one (16), a list ([1, 16]), or the list as text ('[1,16]' "
            "or '1,16' on the command line); got 'many'",
        ),
        ({"concurrency": "[1,x]"}, "got 'x' in '[1,x]'"),
        ({"concurrency": "[1,0]"}, "between 1 and 512 streams; got 0"),
        ({"concurrency": [1, True]}, "got true"),
        ({"concurrency": []}, "got an empty list"),
        ({"concurrency": 0}, "between 1 and 512 streams; got 0"),
        ({"concurrency": [1, 2.5]}, "got 2.5"),
        ({"duration": 0}, "duration must be a positive number of seconds"),
        ({"warmup": True}, "warmup is a number of seconds, not yes/no"),
        ({"prompts": [{"prompt": "a", "messages": []}]}, "prompts[0] needs exactly one of prompt"),
        ({"prompts": [{"messages": [{"role": "user", "content": "x"}]}]}, "only api: chat sends"),
        ({"prompts": [{"prompt": "a", "max_token": 3}]}, "prompts[0] has unknown key(s) max_token"),
        ({"api": "generate"}, "api must be one of completions, chat"),
        ({"greedy_tokens": -1}, "greedy_tokens must be 0 (no greedy answers) or a whole number of tokens; got -1"),
        ({"greedy_tokens": True}, "greedy_tokens must be 0 (no greedy answers) or a whole number of tokens; got True"),
        ({"concurrency": [], "greedy_tokens": 0}, "an empty list is for greedy answers alone: set greedy_tokens"),
        ({"top_p": 0}, "top_p must be above 0 and at most 1; got 0"),
        ({"temperature": "hot"}, "temperature must be a number; got 'hot'"),
        ({"prompts": [{"prompt": "a", "temperature": -1}]}, "prompts[0].temperature must be 0 or more; got -1"),
        ({"prompts": [{"prompt": "a", "top_p": 1.5}]}, "prompts[0].top_p must be above 0 and at most 1; got 1.5"),
    ],
)
def test_bad_options_are_named(options, words):
    with pytest.raises(BenchError) as err:
        Bench("http://127.0.0.1:1", **options)
    assert words in str(err.value)


def test_concurrency_takes_an_int_or_a_list_and_the_deadline_is_derived():
    b = Bench("http://127.0.0.1:1", concurrency="4", duration=8, warmup=2, timeout=20)
    assert b.levels == [4] and b.o["deadline"] == 1 * (2 + 8 + 20) + 5
    b = Bench("http://127.0.0.1:1", concurrency=[1, 4, 16], duration=8, warmup=2, timeout=20, deadline=50)
    assert b.levels == [1, 4, 16] and b.o["deadline"] == 50
    # greedy answers: one request per prompt, each bounded by the timeout
    prompts = [{"id": "a", "prompt": "x"}, {"prompt": "y"}]
    b = Bench("http://127.0.0.1:1", concurrency=[1], duration=8, warmup=2, timeout=20, greedy_tokens=8, prompts=prompts)
    assert b.o["deadline"] == (2 + 8 + 20) + 2 * 20 + 5 and b.prompt_ids == ["a", 1]
    b = Bench("http://127.0.0.1:1", concurrency=[], timeout=20, greedy_tokens=8, prompts=prompts)
    assert b.levels == [] and b.o["deadline"] == 2 * 20 + 5
    # a trace loads the levels, a fixed set is answered greedy: the deadline counts the set's requests
    trace = [{"prompt": f"line {i}", "max_tokens": 64} for i in range(100)]
    b = Bench(
        "http://127.0.0.1:1",
        concurrency=[1],
        duration=8,
        warmup=2,
        timeout=20,
        greedy_tokens=8,
        prompts=trace,
        greedy_prompts=prompts,
    )
    assert b.o["deadline"] == (2 + 8 + 20) + 2 * 20 + 5 and b.prompt_ids == ["a", 1] and len(b.prompts) == 100
    with pytest.raises(BenchError, match=r"greedy_prompts\[0\] needs exactly one of prompt"):
        Bench("http://127.0.0.1:1", greedy_tokens=8, greedy_prompts=[{"id": "x"}])


# --- against real servers on loopback -----------------------------------------------------------

# The simulator without speculation paces each stream on its own: the first token after ttft_s,
# then one token every 1/tok_s (tests/sglang_sim/README.md, "Timing"), each request independent of
# the others. A closed-loop stream of max_tokens-token requests therefore delivers
# max_tokens / (ttft_s + (max_tokens - 1) / tok_s) tok/s, and N streams N times that.
TOK_S, TTFT_S, MAX_TOKENS = 100.0, 0.05, 32  # every passage has 61+ words: each request gets 32 tokens
SIM_ENV = {"SGLANG_SIM_TOK_S": str(TOK_S), "SGLANG_SIM_TTFT_S": str(TTFT_S), "SGLANG_SIM_ACCEPT_LENGTH": "1"}


def expected_rate(n):
    return n * MAX_TOKENS / (TTFT_S + (MAX_TOKENS - 1) / TOK_S)


@pytest.mark.wallclock
@pytest.mark.parametrize("n", [1, 4])
def test_aggregate_rate_matches_the_simulators_configured_rate(shared_sim, n):
    sim = shared_sim("healthy", None, env=SIM_ENV)
    r = Bench(sim.base_url, concurrency=n, duration=2.5, warmup=0.4, max_tokens=MAX_TOKENS).run()
    assert not r["failed"], r["msg"]
    level = r["levels"][0]
    # 5 %: the accuracy target. What the client adds per request (a loopback connection, the
    # JSON, a thread switch) is a few ms against 0.36 s: measured 0.3-0.6 % (docs/bench.md).
    assert level["output_tokens_per_second"] == pytest.approx(expected_rate(n), rel=0.05), level
    assert level["token_count_source"] == "usage" and level["errors"]["count"] == 0
    assert level["output_tokens"] == level["completed"] * MAX_TOKENS
    assert level["completed"] >= n * 6  # 2.5 s / 0.36 s per request, per stream
    assert level["decode_tokens_per_second"]["p50"] == pytest.approx(TOK_S, rel=0.05)
    assert TTFT_S <= level["ttft_s"]["p50"] < TTFT_S + 0.04
    assert level["itl_s"]["p50"] == pytest.approx(1 / TOK_S, rel=0.1)


def test_chat_api_and_a_prompt_set_with_its_own_max_tokens(shared_sim):
    sim = shared_sim("healthy", None, env=SIM_ENV)
    prompts = [{"messages": [{"role": "user", "content": "Tell me about bread."}], "max_tokens": 8}]
    r = Bench(sim.base_url, api="chat", concurrency=[2], duration=1.0, warmup=0.2, prompts=prompts).run()
    assert not r["failed"], r["msg"]
    assert r["levels"][0]["output_tokens"] == 8 * r["levels"][0]["completed"] > 0
    assert r["url"].endswith("/v1/chat/completions") and r["model"] == "/models/Qwen3.6-27B"


def test_a_level_where_every_request_fails_fails_with_the_servers_words(shared_sim):
    sim = shared_sim("chat_400", None)
    r = Bench(sim.base_url, concurrency=[2], duration=0.5, warmup=0.0, max_tokens=4).run()
    assert r["failed"]
    level = r["levels"][0]
    assert level["completed"] == 0 and level["errors"]["count"] >= 2
    assert len(level["errors"]["messages"]) == 1 and "HTTP 400" in level["errors"]["messages"][0]
    assert "DFLASH target_hidden feature dim mismatch" in level["errors"]["messages"][0]
    assert r["msg"].startswith("no request completed at concurrency 2 (")


@pytest.mark.wallclock
def test_the_deadline_cuts_a_server_that_never_answers(sglang_sim):
    sim = sglang_sim("hang", None)
    t0 = time.monotonic()
    r = Bench(sim.base_url, concurrency=[2, 4], duration=1.0, warmup=0.0, deadline=1.5).run()
    took = time.monotonic() - t0
    assert took < 1.5 + 1.0, took  # the deadline, plus joining threads whose sockets were shut down
    assert r["failed"] and r["deadline_reached"]
    first, second = r["levels"]
    assert first["cut_by_deadline"] and first["cut"] == 2 and first["errors"]["count"] == 0
    assert second["skipped"] and second["concurrency"] == 4
    assert "deadline 1.5 s passed: in-flight requests were cut; not run: concurrency 4" in r["msg"]


def _c(text, finish=None):
    return {"object": "text_completion", "model": "m", "choices": [{"index": 0, "text": text, "finish_reason": finish}]}


def test_a_server_without_usage_is_counted_by_chunks_as_a_lower_bound(scripted_server, h):
    events = [(0.01, _c("Hi")), (0.01, _c(" there")), (0.01, _c(" friend", "length")), "[DONE]"]
    url, seen = scripted_server(
        {
            "/v1/models": h.Script(200, json.dumps({"object": "list", "data": [{"id": "m"}]})),
            "/v1/completions": h.Script(200, headers={"content-type": "text/event-stream"}, pieces=h.sse(*events)),
        }
    )
    r = Bench(url, concurrency=1, duration=0.5, warmup=0.0, max_tokens=3).run()
    assert not r["failed"], r["msg"]
    level = r["levels"][0]
    assert level["output_tokens"] == 3 * level["completed"] > 0
    assert level["token_count_source"].startswith(f"chunks for {level['completed']} of {level['completed']} request(s)")
    assert "lower bound" in level["token_count_source"]
    sent = json.loads(seen[-1]["body"])
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True} and sent["model"] == "m"


def test_a_prompts_own_sampling_wins_over_the_calls(scripted_server, h):
    events = [_c("Hi"), _c(" there", "length"), "[DONE]"]
    url, seen = scripted_server(
        {
            "/v1/models": h.Script(200, json.dumps({"data": [{"id": "m"}]})),
            "/v1/completions": h.Script(200, headers={"content-type": "text/event-stream"}, pieces=h.sse(*events)),
        }
    )
    prompts = [{"prompt": "trace line", "temperature": 0.7, "top_p": 0.9}, {"prompt": "built-in"}]
    r = Bench(url, concurrency=1, duration=0.3, warmup=0.0, prompts=prompts, temperature=0.2, top_p=0.95).run()
    assert not r["failed"], r["msg"]
    sent = {b["prompt"]: (b["temperature"], b["top_p"]) for b in (json.loads(x["body"]) for x in seen[1:])}
    assert sent == {"trace line": (0.7, 0.9), "built-in": (0.2, 0.95)}
    assert (r["temperature"], r["top_p"]) == (0.2, 0.95)


def test_a_stream_whose_one_request_outlasts_the_window_fails_the_level(scripted_server, h):
    # The second request the server sees takes 1.5 s, from the warmup past the end of a 0.5 s window:
    # its stream starts nothing inside the window, and an aggregate without its share would read low.
    seen_count = []
    events = [_c("Hi"), _c(" there", "length"), "[DONE]"]

    def answer(_body):
        seen_count.append(1)
        delay = 1.5 if len(seen_count) == 2 else 0.0
        return h.Script(200, headers={"content-type": "text/event-stream"}, pieces=h.sse(*events), delay=delay)

    url, _seen = scripted_server(
        {"/v1/models": h.Script(200, json.dumps({"data": [{"id": "m"}]})), "/v1/completions": answer}
    )
    r = Bench(url, concurrency=2, duration=0.5, warmup=0.1, max_tokens=2).run()
    level = r["levels"][0]
    assert level["completed"] > 0 and level["streams_measured"] == 1
    assert r["failed"]
    # its request sent no chunk before the window ended: no pace, so no estimate of its length
    assert "request_estimate_s" not in level
    assert r["msg"] == (
        "at concurrency 2, 1 stream(s) started no request inside the 0.5 s window (one request outlasted it): "
        "raise duration (ddtree_deploy_gate_duration in ddtree_deploy) to several requests' length, or lower "
        "max_tokens"
    )


def test_repeats_split_the_window_into_measurements_of_their_own():
    recs = []
    # one stream, requests of 1 s each, 10 tokens, across a 6 s window starting at 0
    for k in range(6):
        r = _bench.Record(0, float(k))
        r.end = k + 1.0
        r.tokens = 10
        r.times = [k + 0.1, k + 1.0]
        recs.append(r)
    assert _bench.repeat_rates(recs, 1, 0.0, 6.0, 3) == [10.0, 10.0, 10.0]
    assert _bench.repeat_rates(recs, 1, 0.0, 6.0, 1) == []
    # a slower second half shows in the parts, not in one figure
    recs[4].end = recs[5].start = 5.5
    recs[5].end = 8.0
    assert _bench.repeat_rates(recs, 1, 0.0, 6.0, 3)[-1] < 10.0


def test_a_prompt_carries_its_own_api_and_labels_are_not_sent():
    prompts = _bench._prompts(
        [{"id": "c", "why": "x", "api": "chat", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}],
        "completions",
    )
    assert prompts == [{"api": "chat", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}]
    with pytest.raises(_bench.BenchError, match="api must be one of"):
        _bench._prompts([{"prompt": "x", "api": "generate"}], "completions")
    with pytest.raises(_bench.BenchError, match="only api: chat"):
        _bench._prompts([{"messages": [], "api": "completions"}], "chat")


# --- greedy answers (the gate's output-equivalence check) ----------------------------------------

GATE_LIKE = [
    {"id": "plain", "why": "labels are not sent", "api": "completions", "prompt": "The capital of France is"},
    {"id": "chat", "api": "chat", "messages": [{"role": "user", "content": "Name a bread."}], "max_tokens": 64},
]


def test_greedy_answers_come_after_the_levels_one_per_prompt_by_id(shared_sim):
    sim = shared_sim("healthy", None, env=SIM_ENV)
    r = Bench(sim.base_url, concurrency=[1], duration=0.5, warmup=0.0, prompts=GATE_LIKE, greedy_tokens=6).run()
    assert not r["failed"] and r["reasons"] == [], r["msg"]
    assert r["levels"][0]["completed"] > 0 and r["greedy_tokens"] == 6
    assert [(g["id"], g["api"], g["verdict"]) for g in r["greedy"]] == [
        ("plain", "completions", "pass"),
        ("chat", "chat", "pass"),
    ]
    for g in r["greedy"]:
        # greedy_tokens, not the prompt's own max_tokens (64 for the chat prompt): the compared length
        assert (g["completion_tokens"], g["finish_reason"], g["token_count_source"]) == (6, "length", "usage"), g
        assert g["text"]
    assert r["msg"].endswith("; greedy answers to 2 prompt(s), up to 6 tokens each")
    # greedy: the same prompt gives the same text, whether levels ran before or not
    alone = Bench(sim.base_url, concurrency=[], prompts=GATE_LIKE, greedy_tokens=6).run()
    assert alone["levels"] == [] and not alone["failed"], alone["msg"]
    assert [g["text"] for g in alone["greedy"]] == [g["text"] for g in r["greedy"]]


def test_a_greedy_answer_that_fails_fails_the_call_naming_the_prompt(shared_sim):
    sim = shared_sim("chat_400", None)
    r = Bench(sim.base_url, concurrency=[], prompts=GATE_LIKE[1:], greedy_tokens=4).run()
    assert r["failed"] and r["greedy"][0]["verdict"] == "fail"
    assert len(r["reasons"]) == 1 and r["reasons"][0].startswith("chat (greedy): ")
    assert "HTTP 400" in r["reasons"][0] and r["msg"] == r["reasons"][0]


def test_greedy_answers_the_deadline_leaves_no_time_for_are_named(sglang_sim):
    sim = sglang_sim("hang", None)
    r = Bench(sim.base_url, concurrency=[], prompts=GATE_LIKE, greedy_tokens=4, model="m", deadline=0.5).run()
    assert r["failed"] and r["deadline_reached"]
    assert r["greedy"][0]["verdict"] == "fail" and r["greedy"][1]["verdict"] == "skipped"
    assert r["reasons"][0] == "deadline 0.5 s passed: in-flight requests were cut; greedy answers not asked: chat"


# --- a trace of production requests (ddtree_deploy_gate_prompts_file) -------------------------------------


def test_a_jsonl_trace_becomes_prompts_named_by_line_with_their_own_sampling():
    text = (
        '{"prompt": "def fib(n):", "max_tokens": 64, "temperature": 0.2}\n'
        "\n"
        '{"messages": [{"role": "user", "content": "Plan a trip"}], "max_tokens": 128, "top_p": 0.9}\n'
    )
    assert _bench.trace_prompts(text) == [
        {"id": "line 1", "api": "completions", "prompt": "def fib(n):", "max_tokens": 64, "temperature": 0.2},
        {
            "id": "line 3",
            "api": "chat",
            "messages": [{"role": "user", "content": "Plan a trip"}],
            "max_tokens": 128,
            "top_p": 0.9,
        },
    ]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"prompt": "x"}', "trace.jsonl line 1 has no max_tokens: each request says how many tokens it asks for"),
        ('{"prompt": "x", "max_tokens": 8}\nnot json', "trace.jsonl line 2 is not JSON ("),
        ('["x"]', "trace.jsonl line 1 must be a JSON object with prompt or messages"),
        ('{"prompt": "x", "max_tokens": 8, "top_p": 2}', "trace.jsonl line 1: the request.top_p must be above 0"),
        ('{"prompt": "x", "max_tokens": 8, "n": 2}', "trace.jsonl line 1: the request has unknown key(s) n"),
        ("\n\n", "trace.jsonl holds no request"),
    ],
)
def test_a_bad_trace_line_is_named_with_the_fix(text, words):
    with pytest.raises(BenchError) as err:
        _bench.trace_prompts(text, "trace.jsonl")
    assert words in str(err.value)


def test_the_trace_filter_names_the_file_in_its_errors():
    from ansible.errors import AnsibleFilterError
    from ansible_collections.ddtree.sglang.plugins.filter.sglang_gate_prompts import sglang_gate_prompts

    assert sglang_gate_prompts('{"prompt": "x", "max_tokens": 4}\n', "trace.jsonl")[0]["id"] == "line 1"
    with pytest.raises(AnsibleFilterError, match="sglang_gate_prompts: trace.jsonl line 1 has no max_tokens"):
        sglang_gate_prompts('{"prompt": "x"}', "trace.jsonl")
    with pytest.raises(AnsibleFilterError, match="the input must be the file's text, got a list"):
        sglang_gate_prompts(["x"])


# --- a server that refuses or breaks the load (issue #38, item 1) -----------------------------------------------

REFUSING_PROMPTS = [{"prompt": f"p{i}"} for i in range(8)]


def _refusing_server(scripted_server, h, answers):
    """A real HTTP server answering each prompt ``p<i>`` as ``answers(i)`` says: a Script; counts the POSTs."""
    events = [_c("Hi"), _c(" there", "length"), "[DONE]"]
    posts = []

    def answer(body):
        posts.append(1)
        i = int(json.loads(body)["prompt"][1:])
        return answers(i) or h.Script(200, headers={"content-type": "text/event-stream"}, pieces=h.sse(*events))

    url, _seen = scripted_server(
        {"/v1/models": h.Script(200, json.dumps({"data": [{"id": "m"}]})), "/v1/completions": answer}
    )
    return url, posts


def test_a_level_where_most_streams_are_refused_fails_naming_the_statuses_and_the_pause_is_honoured(scripted_server, h):
    # 6 of 8 prompts answered 429 or 503 with Retry-After: 1, as the server did.
    def answers(i):
        if i >= 2:
            status = 429 if i < 5 else 503
            body = json.dumps({"object": "error", "message": "Too many requests", "code": status})
            return h.Script(status, body, headers={"content-type": "application/json", "retry-after": "1"})
        return None

    url, posts = _refusing_server(scripted_server, h, answers)
    r = Bench(url, concurrency=8, duration=1.5, warmup=0.0, max_tokens=2, prompts=REFUSING_PROMPTS).run()
    level = r["levels"][0]
    assert r["failed"] and level["completed"] > 0
    kinds = level["errors"]["kinds"]
    assert (
        set(kinds) == {"HTTP 429", "HTTP 503"} and sum(k["count"] for k in kinds.values()) == level["errors"]["count"]
    )
    assert "429" in kinds["HTTP 429"]["first"] and "503" in kinds["HTTP 503"]["first"]
    assert level["error_share"] > 0.5
    assert f"at concurrency 8, {round(100 * level['error_share'])} % of the counted requests failed" in r["msg"]
    assert "HTTP 429 x " in r["msg"] and "HTTP 503 x " in r["msg"] and "above max_error_share 5 %" in r["msg"]
    assert "lower concurrency to what it admits" in r["msg"] and "first HTTP 429: " in r["msg"]
    # Each refused stream waits its second before the next request: a few dozen requests, not the issue's
    # 600-700 a second (a busier machine only sends fewer).
    assert len(posts) < 100, len(posts)
    assert level["backoff"]["waits"] >= 8
    # The gate reads the level as a failed measurement, with the statuses in its failure.
    side = _gate.summarise(dict(r, failed=False))
    assert side["measured"] is False and any("HTTP 429 x" in f for f in side["failures"])


def test_a_level_within_max_error_share_passes_with_its_errors_counted(scripted_server, h):
    url, _posts = _refusing_server(
        scripted_server, h, lambda i: h.Script(429, "{}", headers={"retry-after": "1"}) if i >= 2 else None
    )
    r = Bench(url, concurrency=2, duration=0.5, warmup=0.0, prompts=REFUSING_PROMPTS, max_error_share=1.0).run()
    assert not r["failed"], r["msg"]
    assert r["levels"][0]["errors"]["kinds"]["HTTP 429"]["count"] >= 1


def test_refusals_without_retry_after_back_off_doubling(scripted_server, h):
    url, posts = _refusing_server(scripted_server, h, lambda _i: h.Script(503, "overloaded"))
    r = Bench(url, concurrency=1, duration=1.0, warmup=0.0, prompts=REFUSING_PROMPTS).run()
    assert r["failed"] and r["msg"].startswith("no request completed at concurrency 1 (")
    assert "HTTP 503" in r["msg"]
    # waits of 0.25, 0.5, 1 s: at most 3 requests start in the 1 s window
    assert 1 <= len(posts) <= 3, len(posts)


def test_the_pause_is_retry_after_or_a_doubling_backoff():
    rec = Record(0, 0.0)
    assert _bench._pause(rec, 0.0) == 0.0  # not refused
    rec.retry_after = 2.0
    assert _bench._pause(rec, 0.0) == 2.0
    rec.retry_after = -1.0  # refused without Retry-After
    waits = [0.0]
    for _refusal in range(7):
        waits.append(_bench._pause(rec, waits[-1]))
    assert waits[1:] == [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert _bench.retry_after("1") == 1.0 and _bench.retry_after(" 120 ") == 120.0
    assert _bench.retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412480.0) == pytest.approx(10.0)
    assert _bench.retry_after("soon") is None and _bench.retry_after(None) is None


def test_a_server_that_resets_most_streams_mid_answer_fails_the_level(scripted_server, h):
    def answers(i):
        if i % 3:  # 2 of each 3 prompts: two chunks, then the connection is reset
            pieces = h.sse(_c("Hi"), _c(" the"))
            return h.Script(200, headers={"content-type": "text/event-stream"}, pieces=pieces, reset_after=True)
        return None

    url, _posts = _refusing_server(scripted_server, h, answers)
    r = Bench(url, concurrency=6, duration=0.5, warmup=0.0, max_tokens=2, prompts=REFUSING_PROMPTS[:6]).run()
    level = r["levels"][0]
    assert r["failed"] and level["completed"] > 0 and level["error_share"] > 0.5
    assert set(level["errors"]["kinds"]) <= {"reset", "cut off"}, level["errors"]["kinds"]
    assert "of the counted requests failed" in r["msg"] and "the server failed these requests" in r["msg"]


@pytest.mark.parametrize(
    ("value", "words"),
    [(1.5, "from 0 to 1 (0.05 is 5 %); got 1.5"), ("ten", "got 'ten'"), (True, "not yes/no")],
)
def test_max_error_share_is_a_fraction(value, words):
    with pytest.raises(BenchError) as e:
        Bench("http://127.0.0.1:9", max_error_share=value)
    assert "max_error_share" in str(e.value) and words in str(e.value)


def test_a_token_count_above_max_tokens_is_not_believed_and_the_level_says_why(scripted_server, h):
    events = [_c(f" w{i}", "length" if i == 7 else None) for i in range(8)]
    events += [
        {"object": "text_completion", "model": "m", "choices": [], "usage": {"completion_tokens": 5000}},
        "[DONE]",
    ]
    url, _seen = scripted_server(
        {
            "/v1/models": h.Script(200, json.dumps({"data": [{"id": "m"}]})),
            "/v1/completions": h.Script(200, headers={"content-type": "text/event-stream"}, pieces=h.sse(*events)),
        }
    )
    r = Bench(url, concurrency=1, duration=0.5, warmup=0.0, max_tokens=16).run()
    level = r["levels"][0]
    assert level["completed"] > 0 and level["output_tokens"] == 8 * level["completed"]
    assert level["token_count_doubts"] == {
        "count": level["completed"],
        "first": "the server's usage.completion_tokens 5000 is above the max_tokens 16 asked for",
    }
    assert "lower bound" in level["token_count_source"]
    assert "token count of " in r["msg"] and "not believed, chunks counted" in r["msg"]


def test_a_stream_complete_at_its_usage_ends_there_without_done_or_the_close(scripted_server, h):
    # finish reason, then usage; then the connection is held 30 s without [DONE] (a proxy, a server's bug)
    events = [
        _c("Hi"),
        _c(" there", "length"),
        {"object": "text_completion", "choices": [], "usage": {"completion_tokens": 2}},
    ]
    url, _seen = scripted_server(
        {
            "/v1/models": h.Script(200, json.dumps({"data": [{"id": "m"}]})),
            "/v1/completions": h.Script(
                200, headers={"content-type": "text/event-stream"}, pieces=h.sse(*events) + [(30.0, b"")]
            ),
        }
    )
    r = Bench(url, concurrency=1, duration=0.5, warmup=0.0, max_tokens=2, timeout=20).run()
    level = r["levels"][0]
    # before: the first request waited out its 20 s timeout and failed
    assert not r["failed"], r["msg"]
    assert level["completed"] >= 1 and level["errors"]["count"] == 0 and level["token_count_source"] == "usage"
    assert level["output_tokens"] == 2 * level["completed"]


# --- the ad-hoc form and a cut level (issue #38) ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "levels"),
    [("[1,16]", [1, 16]), ("1,16", [1, 16]), (" [ 1, 16 ] ", [1, 16]), ("16", [16]), ([1, "16"], [1, 16])],
)
def test_concurrency_written_as_text_is_the_list_it_says(given, levels):
    assert Bench("http://127.0.0.1:9", concurrency=given).levels == levels


def test_the_empty_list_as_text_is_for_greedy_answers_alone():
    assert Bench("http://127.0.0.1:9", concurrency="[]", greedy_tokens=4).levels == []
    with pytest.raises(BenchError, match="got an empty list"):
        Bench("http://127.0.0.1:9", concurrency="[]")


def test_a_level_cut_by_the_deadline_carries_no_rate(scripted_server, h):
    # Each answer takes 0.3 s; the deadline cuts the level's streams mid-request.
    events = [_c("Hi"), (0.3, _c(" there", "length")), "[DONE]"]
    url, _seen = scripted_server(
        {
            "/v1/models": h.Script(200, json.dumps({"data": [{"id": "m"}]})),
            "/v1/completions": h.Script(200, headers={"content-type": "text/event-stream"}, pieces=h.sse(*events)),
        }
    )
    r = Bench(url, concurrency=2, duration=5.0, warmup=0.0, max_tokens=2, repeats=2, deadline=1.0).run()
    level = r["levels"][0]
    assert r["failed"] and level["cut_by_deadline"] and level["cut"] >= 1
    for key in ("output_tokens_per_second", "requests_per_second", "goodput_tokens_per_second"):
        assert level[key] is None, (key, level[key])
    assert level["rates"] == [] and level["completed"] >= 1  # what completed is still counted


def test_requests_longer_than_the_window_fail_saying_so_and_what_to_lengthen(scripted_server, h):
    # issue #38: 8 s requests in a 6 s window read "no request completed ... first: none ended in time"
    events = [_c("Hi"), _c(" there", "length"), "[DONE]"]
    url, _seen = scripted_server(
        {
            "/v1/models": h.Script(200, json.dumps({"data": [{"id": "m"}]})),
            "/v1/completions": h.Script(
                200, headers={"content-type": "text/event-stream"}, pieces=h.sse(*events), delay=1.5
            ),
        }
    )
    r = Bench(url, concurrency=2, duration=0.3, warmup=0.1, max_tokens=2).run()
    level = r["levels"][0]
    assert r["failed"] and level["completed"] == 0 and level["outlasted_window_s"] >= 0.3
    # its requests sent no chunk before the window ended: no pace, so no estimate of how long one takes
    assert r["msg"].startswith(
        "no request completed at concurrency 2 (0 error(s); first: none ended in time): a request takes longer than "
        "the 0.3 s window (no request started inside it; each stream's was still running when it ended, after "
    )
    assert r["msg"].endswith(
        "s): raise duration (ddtree_deploy_gate_duration in ddtree_deploy) to several requests' length, or lower "
        "max_tokens"
    )


# --- issue 38 item 5: long answers against the gate's window, on the simulator ---------------------------------
# The case scaled down 8 times: 256-token answers at 32 tok/s per stream at 16 streams (8 s, a 6 s window)
# become 40-token answers at 40 tok/s per stream at 4 streams (0.05 + 39 / 40 = 1.03 s, the simulator's request
# time, tests/sglang_sim/README.md "Batching") in a 0.5 s window; at one stream 400 tok/s (0.15 s) completes. Chunks
# carry 3 tokens on average (accept length 3, as a speculative server sends them).
LONG_ENV = {"SGLANG_SIM_RATES": '{"1": 400, "4": 40}', "SGLANG_SIM_TTFT_S": "0.05", "SGLANG_SIM_ACCEPT_LENGTH": "3"}
LONG = {"duration": 0.5, "warmup": 0.3, "max_tokens": 40}
OUTLASTED = re.compile(
    r"^no request completed at concurrency 4 \(0 error\(s\); first: none ended in time\): a request takes "
    r"(?P<bound>about|up to about) (?P<takes>[\d.]+) s, longer than the 0\.5 s window \(no request started inside "
    r"it; each stream's was still running when it ended, after (?P<ran>[\d.]+) s\): raise duration "
    r"\(ddtree_deploy_gate_duration in ddtree_deploy\) to several requests' length, or lower max_tokens$"
)


def test_requests_longer_than_the_window_say_how_long_one_takes_and_what_to_raise(shared_sim):
    sim = shared_sim("healthy", None, env=LONG_ENV)
    r = Bench(sim.base_url, concurrency=[1, 4], **LONG).run()
    one, four = r["levels"]
    assert one["completed"] > 0 and four["completed"] == 0 and r["failed"]
    said = OUTLASTED.match(r["msg"])
    assert said, r["msg"]
    estimate = four["request_estimate_s"]
    # The tokens a chunk carries were learned from level 1's completed requests (the server's usage count).
    assert said["bound"] == "about" and estimate["known"] and estimate["tokens_per_chunk"] > 1.5, estimate
    assert float(said["takes"]) == pytest.approx(estimate["seconds"], abs=0.01)
    # It had run the window and more (a lower bound), and takes longer than that at its pace.
    assert estimate["seconds"] >= four["outlasted_window_s"] == pytest.approx(float(said["ran"]), abs=0.01)
    assert four["outlasted_window_s"] >= LONG["duration"]
    # The gate's baseline: the deploy stops before the switch saying so (the "cannot be measured").
    running = {"exists": True, "active": True}
    side = _gate.baseline(_gate.summarise(r), unit=running, service="sglang-qwen", not_worse=True)
    assert side["stop"].startswith(
        "the baseline cannot be measured: no request completed at concurrency 4 (0 error(s); first: none ended in "
        f"time): a request takes about {said['takes']} s, longer than the 0.5 s window"
    ), side["stop"]
    assert "raise duration (ddtree_deploy_gate_duration in ddtree_deploy)" in side["stop"]


def test_without_a_completed_request_a_chunk_is_one_token_and_the_estimate_an_upper_bound(shared_sim):
    sim = shared_sim("healthy", None, env=LONG_ENV)
    r = Bench(sim.base_url, concurrency=4, **LONG).run()
    said = OUTLASTED.match(r["msg"])
    assert said and said["bound"] == "up to about", r["msg"]
    estimate = r["levels"][0]["request_estimate_s"]
    assert not estimate["known"] and estimate["tokens_per_chunk"] == 1.0
    assert estimate["seconds"] >= r["levels"][0]["outlasted_window_s"]


@pytest.mark.wallclock
def test_the_estimate_of_a_long_request_is_its_length_on_the_simulator(shared_sim):
    sim = shared_sim("healthy", None, env=LONG_ENV)
    r = Bench(sim.base_url, concurrency=[1, 4], **LONG).run()
    # 0.05 s to the first token, then 39 tokens at 40 tok/s: 1.03 s
    assert r["levels"][1]["request_estimate_s"]["seconds"] == pytest.approx(0.05 + 39 / 40, rel=0.2), r["levels"][1]
