# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SSE / OpenAI stream reader against what SGLang, vLLM and llama.cpp actually send."""

import json

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils._sse import CHUNKS, SSEParser, StreamState, interpret


def chunk(text, finish=None, usage=None, model="/models/Qwen3.6-27B"):
    return {
        "id": "cmpl-1",
        "object": "text_completion",
        "created": 1,
        "model": model,
        "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": finish}],
        "usage": usage,
    }


def chat_chunk(delta, finish=None):
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def run(api, raw_pieces):
    """Feed raw byte pieces through parser and state; return the StreamState."""
    parser = SSEParser()
    state = StreamState(api)
    t = 0.0
    for piece in raw_pieces:
        t += 1.0
        for data in parser.feed(piece):
            state.add(interpret(api, data), t)
    for data in parser.close():
        state.add(interpret(api, data), t + 1)
    return state


def events(*objs):
    return b"".join(b"data: " + (json.dumps(o) if not isinstance(o, str) else o).encode() + b"\n\n" for o in objs)


# --- the SSE layer -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"data: a\n\ndata: b\n\n", ["a", "b"]),
        (b"data: a\r\n\r\ndata: b\r\n\r\n", ["a", "b"]),
        (b"data: a\r\rdata: b\r\r", ["a", "b"]),
        (b": keep-alive\n\ndata: a\n\n", ["a"]),
        (b"event: message\nid: 7\nretry: 100\ndata: a\n\n", ["a"]),
        (b"data: line1\ndata: line2\n\n", ["line1\nline2"]),
        (b"data:nospace\n\n", ["nospace"]),
        (b"data: last without blank line", ["last without blank line"]),
        (b"\n\n\n", []),
    ],
    ids=["lf", "crlf", "cr", "comment", "other-fields", "multi-line", "no-space", "no-final-blank", "blank-only"],
)
def test_sse_parser_framing(raw, expected):
    p = SSEParser()
    assert p.feed(raw) + p.close() == expected


def test_sse_parser_byte_by_byte_and_split_utf8():
    raw = 'data: {"text": "caf\u00e9 \u4f60\u597d"}\r\n\r\n'.encode()
    p = SSEParser()
    out = []
    for i in range(len(raw)):
        out += p.feed(raw[i : i + 1])
    out += p.close()
    assert [json.loads(x)["text"] for x in out] == ["caf\u00e9 \u4f60\u597d"]


def test_sse_parser_crlf_split_between_pieces_gives_one_event():
    p = SSEParser()
    assert p.feed(b"data: a\r") == []
    assert p.feed(b"\n\r\n") == ["a"]


# --- OpenAI streams --------------------------------------------------------------------------


def test_sglang_completions_stream_with_usage_chunk():
    # SGLang: content chunks (a speculative burst may carry several tokens), a finish chunk,
    # then with include_usage a chunk with choices [] and the usage, then [DONE].
    usage = {"prompt_tokens": 1, "completion_tokens": 8, "total_tokens": 9}
    raw = events(
        chunk("The"),
        chunk(" capital of"),
        chunk(" France is"),
        chunk(" Paris. It lies"),
        chunk("", "length"),
        {"id": "x", "object": "text_completion", "choices": [], "usage": usage},
        "[DONE]",
    )
    s = run("completions", [raw])
    assert s.text == "The capital of France is Paris. It lies"
    assert s.completion_tokens == 8 and s.token_source == "usage"
    assert s.content_chunks == 4
    assert s.finish_reason == "length" and s.done
    assert s.model == "/models/Qwen3.6-27B"


def test_stream_without_usage_counts_non_empty_chunks():
    raw = events(chunk("Hello"), chunk(""), chunk(" there"), chunk("!", "stop"), "[DONE]")
    s = run("completions", [raw])
    assert s.completion_tokens == 3 and s.token_source == "chunks (lower bound)"


def test_empty_chunks_do_not_set_first_token_time():
    # vLLM's first chat chunk carries only the role; it is not a token
    raw = [
        events(chat_chunk({"role": "assistant", "content": ""})),
        events(chat_chunk({"content": "Hi"})),
        events(chat_chunk({}, "stop"), "[DONE]"),
    ]
    s = run("chat", raw)
    assert s.t_first == 2.0 and s.text == "Hi"


def test_reasoning_content_counts_as_output():
    raw = events(chat_chunk({"reasoning_content": "Okay, the user"}), chat_chunk({"content": " Hello"}), "[DONE]")
    s = run("chat", [raw])
    assert s.reasoning == "Okay, the user" and s.text == " Hello" and s.content_chunks == 2


def test_llama_cpp_style_stream_without_done():
    # llama.cpp may end with a finish chunk and no [DONE]
    raw = events(chunk("Hel"), chunk("lo", "stop"))
    s = run("completions", [raw])
    assert s.text == "Hello" and s.finish_reason == "stop" and not s.done


def test_error_mid_stream_is_kept():
    err = {"error": {"message": "CUDA error: an illegal memory access was encountered", "code": 500}}
    raw = events(chunk("Hel"), err)
    s = run("completions", [raw])
    assert s.error == "CUDA error: an illegal memory access was encountered"
    assert s.text == "Hel"


def test_sglang_object_error_event():
    raw = events({"object": "error", "message": "The server is not ready", "code": 503})
    s = run("completions", [raw])
    assert s.error == "The server is not ready"


def test_non_json_event_is_ignored_and_recorded():
    raw = events(chunk("Hi"), "oops not json", "[DONE]")
    s = run("completions", [raw])
    assert s.text == "Hi" and s.ignored and "oops" in s.ignored[0]


def test_other_choice_indexes_are_ignored():
    obj = chunk("A")
    obj["choices"].append({"index": 1, "text": "B", "finish_reason": None})
    s = run("completions", [events(obj)])
    assert s.text == "A"


# --- SGLang's /generate stream ---------------------------------------------------------------


def gen_chunk(text, n, finish=None, **meta):
    m = {"prompt_tokens": 1, "completion_tokens": n, "finish_reason": finish}
    m.update(meta)
    return {"text": text, "meta_info": m}


def test_generate_stream_cumulative_text_and_meta_tokens():
    raw = [
        events(gen_chunk("The", 1)),
        events(gen_chunk("The capital of", 3)),
        events(
            gen_chunk("The capital of", 3, {"type": "length", "length": 3}, spec_verify_ct=1, spec_accept_length=3.0)
        ),
        events("[DONE]"),
    ]
    s = run("generate", raw)
    assert s.text == "The capital of"
    assert s.completion_tokens == 3 and s.token_source == "meta_info"
    assert s.first_chunk_tokens == 1
    assert s.finish_reason == "length"
    assert s.meta["spec_accept_length"] == 3.0
    assert (s.t_first, s.t_last) == (1.0, 2.0)


def test_generate_incremental_output_is_appended():
    raw = events(gen_chunk("The", 1), gen_chunk(" capital", 2), "[DONE]")
    s = run("generate", [raw])
    assert s.text == "The capital"


# --- a server's count checked against what was asked and seen (issue #38, item 2) ---------------------------


def _counted(usage, chunks, max_tokens=None, streamed=True):
    state = StreamState("completions", max_tokens=max_tokens, streamed=streamed)
    for i in range(chunks):
        state.add(interpret("completions", json.dumps(chunk(f" w{i}", "length" if i == chunks - 1 else None))), i)
    state.add(interpret("completions", json.dumps(dict(chunk(""), choices=[], usage={"completion_tokens": usage}))), 9)
    return state


def test_usage_above_max_tokens_is_not_believed_and_the_chunks_are_counted():
    state = _counted(5000, 8, max_tokens=16)
    assert state.doubt == "the server's usage.completion_tokens 5000 is above the max_tokens 16 asked for"
    assert state.token_source == CHUNKS and state.completion_tokens == 8 and state.first_tokens == 1


def test_usage_far_above_the_chunks_is_not_believed_without_max_tokens():
    state = _counted(5000, 8)
    assert state.doubt == (
        "the server's usage.completion_tokens 5000 is far above the 8 content chunk(s) it sent "
        "(over 128 tokens a chunk)"
    )
    assert state.token_source == CHUNKS and state.completion_tokens == 8


@pytest.mark.parametrize(
    ("usage", "chunks", "max_tokens", "streamed"),
    [
        (12, 4, 12, True),  # a speculative server: 3 tokens a chunk
        (16, 16, 16, True),  # max_tokens reached exactly
        (1024, 8, 1024, True),  # 128 a chunk: a long stream interval still believed
        (500, 1, 512, False),  # a whole answer in one piece: only max_tokens bounds it
    ],
)
def test_a_plausible_usage_is_believed(usage, chunks, max_tokens, streamed):
    state = _counted(usage, chunks, max_tokens=max_tokens, streamed=streamed)
    assert state.doubt is None and state.token_source == "usage" and state.completion_tokens == usage


def test_generate_meta_info_above_max_tokens_is_not_believed():
    state = StreamState("generate", max_tokens=4)
    state.add(interpret("generate", json.dumps({"text": "a b", "meta_info": {"completion_tokens": 900}})), 1.0)
    assert state.doubt == "the server's meta_info.completion_tokens 900 is above the max_tokens 4 asked for"
    assert state.token_source == CHUNKS and state.completion_tokens == 1


# --- a stream is complete at its finish reason and usage (issue #38, item 3) ------------------------------------


def test_a_finish_reason_and_then_usage_is_complete_without_done():
    state = StreamState("completions")
    state.add(interpret("completions", json.dumps(chunk("Hi"))), 1.0)
    assert not state.complete
    state.add(interpret("completions", json.dumps(chunk(" there", "length"))), 2.0)
    assert not state.complete  # a usage chunk may follow (SGLang, vLLM: serving_completions.py:479-496)
    state.add(interpret("completions", json.dumps(dict(chunk(""), choices=[], usage={"completion_tokens": 2}))), 3.0)
    assert state.complete and not state.done and state.completion_tokens == 2


def test_usage_without_a_finish_reason_or_after_an_error_is_not_complete():
    state = StreamState("completions")
    state.add(interpret("completions", json.dumps(chunk("Hi", usage={"completion_tokens": 1}))), 1.0)
    assert not state.complete  # continuous usage on every chunk: the answer goes on
    state.add(interpret("completions", json.dumps({"error": {"message": "boom"}})), 2.0)
    state.add(interpret("completions", json.dumps(chunk("", "stop", usage={"completion_tokens": 1}))), 3.0)
    assert not state.complete


def test_generate_is_complete_at_its_finish_reason_with_meta_info():
    state = StreamState("generate")
    meta = {"completion_tokens": 2, "finish_reason": {"type": "length"}}
    state.add(interpret("generate", json.dumps({"text": "a b", "meta_info": meta})), 1.0)
    assert state.complete
