# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A tolerant reader of Server-Sent Events and OpenAI-style token streams.

Three layers, each usable alone:

- ``SSEParser`` turns bytes as they arrive into event ``data`` strings (``\\n``, ``\\r\\n`` or
  ``\\r`` line ends, multi-line ``data:``, ``:`` comments, other fields ignored, a last event
  without its blank line still delivered at the end).
- ``interpret(api, data)`` reads one event of an OpenAI ``/v1/completions`` or
  ``/v1/chat/completions`` stream, or of SGLang's native ``/generate`` stream, into a
  ``StreamEvent``: text, reasoning text, finish reason, usage, an error, or ``[DONE]``.
- ``StreamState`` adds events up with their arrival times: text, time of the first token,
  of the last, and the completion token count from the best source the server gave
  (``usage``, then ``/generate``'s ``meta_info``, else one token per non-empty chunk: a lower
  bound, since a speculative server may put several tokens in a chunk; ``CHUNKS`` names it so).

Real servers differ: SGLang sends a finish chunk and, with ``stream_options.include_usage``,
a usage chunk with ``choices: []``; vLLM sends a first chunk holding only the role; llama.cpp
may omit usage; any of them may send ``data: {"error": ...}`` in the middle of a stream.

How a stream ends: SGLang 0.5.23 yields the finish chunk, then the usage chunk with ``choices: []``
(``srt/entrypoints/openai/serving_completions.py:479-496``), then ``data: [DONE]`` (:504; the chat path
``serving_chat.py:2805``); vLLM's ``completion_stream_generator`` does the same (the final usage chunk, then
``yield "data: [DONE]\n\n"``, vllm-project/vllm ``vllm/entrypoints/openai/serving_completion.py``). Nothing
follows the usage chunk but ``[DONE]``, so a stream with a finish reason and then usage is complete
(``StreamState.complete``): a reader waits at most ``COMPLETE_GRACE_S`` more for ``[DONE]`` and the close, not
its timeout (a proxy that holds the connection open, a server that never sends ``[DONE]``).
"""

from __future__ import absolute_import, division, print_function

import json
import re

_LINE_END = re.compile(b"[\r\n]")


class SSEParser:
    """Incremental SSE parser: ``feed(bytes)`` returns the data of each event completed so far.

    Linear in the input however it is cut: the buffer is a bytearray appended to in place, each
    byte is scanned for a line end once, and consumed lines are dropped once per ``feed`` (a 5 MB
    event fed one byte at a time must not cost 5 MB of copying per byte).
    """

    def __init__(self):
        self._buf = bytearray()
        self._scanned = 0  # bytes of _buf already known to hold no line end
        self._data = []

    def feed(self, chunk):
        if not chunk:
            return []
        buf = self._buf
        buf += chunk
        events = []
        start = 0
        pos = self._scanned
        n = len(buf)
        while pos < n:
            m = _LINE_END.search(buf, pos)
            if m is None:
                pos = n
                break
            idx = m.start()
            end = idx + 1
            if buf[idx] == 0x0D:
                if end < n:
                    if buf[end] == 0x0A:
                        end += 1
                else:
                    pos = idx  # a lone \r at the end: wait to see whether \n follows
                    break
            ev = self._line(bytes(buf[start:idx]))
            if ev is not None:
                events.append(ev)
            start = pos = end
        if start:
            del buf[:start]
            pos -= start
        self._scanned = pos
        return events

    def close(self):
        """End of stream: deliver what is pending even without the final blank line."""
        events = []
        if self._buf:
            ev = self._line(bytes(self._buf).rstrip(b"\r"))
            self._buf = bytearray()
            self._scanned = 0
            if ev is not None:
                events.append(ev)
        if self._data:
            events.append("\n".join(self._data))
            self._data = []
        return events

    def _line(self, raw):
        line = raw.decode("utf-8", "replace")
        if line == "":
            if self._data:
                data = "\n".join(self._data)
                self._data = []
                return data
            return None
        if line.startswith(":"):
            return None  # a comment (keep-alive)
        field, _colon, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
        return None  # event:, id:, retry: carry nothing a probe needs


class StreamEvent:
    """One interpreted event. ``kind``: chunk, done, error or ignored."""

    __slots__ = ("kind", "text", "reasoning", "finish_reason", "usage", "tokens", "meta", "error", "model", "rid")

    def __init__(
        self,
        kind,
        text="",
        reasoning="",
        finish_reason=None,
        usage=None,
        tokens=None,
        meta=None,
        error=None,
        model=None,
        rid=None,
    ):
        self.rid = rid  # the chunk's "id"
        self.kind = kind
        self.text = text
        self.reasoning = reasoning
        self.finish_reason = finish_reason
        self.usage = usage
        self.tokens = tokens
        self.meta = meta
        self.error = error
        self.model = model

    def __repr__(self):
        return (
            f"StreamEvent({self.kind}, text={self.text!r}, finish={self.finish_reason!r}, "
            f"usage={self.usage!r}, error={self.error!r})"
        )


def _error_message(err):
    if isinstance(err, dict):
        return str(err.get("message") or json.dumps(err))
    return str(err)


def interpret(api, data):
    """Read one event's data string of a stream of ``api`` (completions, chat or generate)."""
    stripped = data.strip()
    if stripped == "[DONE]":
        return StreamEvent("done")
    if not stripped:
        return StreamEvent("ignored")
    try:
        obj = json.loads(stripped)
    except ValueError:
        return StreamEvent("ignored", error=f"non-JSON event: {stripped[:120]}")
    if not isinstance(obj, dict):
        return StreamEvent("ignored", error=f"unexpected event: {stripped[:120]}")
    if "error" in obj and obj["error"]:
        return StreamEvent("error", error=_error_message(obj["error"]))
    if obj.get("object") == "error":
        return StreamEvent("error", error=_error_message(obj))
    if api == "generate":
        meta = obj.get("meta_info") or {}
        fr = meta.get("finish_reason")
        if isinstance(fr, dict):
            fr = fr.get("type")
        tokens = meta.get("completion_tokens")
        return StreamEvent("chunk", text=obj.get("text") or "", finish_reason=fr, tokens=tokens, meta=meta)
    usage = obj.get("usage") if isinstance(obj.get("usage"), dict) else None
    text, reasoning, finish = "", "", None
    for choice in obj.get("choices") or []:
        if not isinstance(choice, dict) or choice.get("index", 0) != 0:
            continue
        if api == "chat":
            delta = choice.get("delta") or choice.get("message") or {}
            text = delta.get("content") or ""
            reasoning = delta.get("reasoning_content") or delta.get("reasoning") or ""
        else:
            text = choice.get("text") or ""
        finish = choice.get("finish_reason") or finish
    # The completion's id: SGLang's is its request id (the rid of its logs and per-request records).
    rid = obj.get("id") if isinstance(obj.get("id"), str) else None
    return StreamEvent(
        "chunk", text=text, reasoning=reasoning, finish_reason=finish, usage=usage, model=obj.get("model"), rid=rid
    )


# token_source when the server sent no count: one token per non-empty chunk. Each chunk holds at
# least one token, so the count (and a rate from it) can only be too low, never too high.
CHUNKS = "chunks (lower bound)"

# The most tokens a streamed content chunk is believed to carry on average. A chunk holds one decode step's
# tokens (a speculative step's accepted ones: at most its draft tokens, a handful to tens) times the stream
# interval (SGLang's --stream-interval, per request stream_interval; output_streamer.py:456 of 0.5.23). A
# server's count above this many per chunk is not a count of what it sent (issue 38: completion_tokens 5000
# in 8 chunks).
MAX_TOKENS_PER_CHUNK = 128

# Seconds a reader still waits, once a stream is complete (finish reason and usage), for the ``[DONE]`` and the
# end of the body that a server sends right after (reading them returns the connection to the pool, and a
# server sees its client stay to the end); past it the read stops and the answer counts as it is.
COMPLETE_GRACE_S = 0.25


def count_doubt(count, chunks, max_tokens=None, streamed=True, source="usage"):
    """Why a server's completion token ``count`` cannot be believed, or None: above the ``max_tokens`` asked
    for, or (streamed) above MAX_TOKENS_PER_CHUNK per content chunk received. The probe and the bench both
    ask this, and then count the chunks instead (a lower bound)."""
    if count is None:
        return None
    name = "usage.completion_tokens" if source == "usage" else "meta_info.completion_tokens"
    if max_tokens and count > max_tokens:
        return f"the server's {name} {count} is above the max_tokens {max_tokens} asked for"
    if streamed and chunks and count > MAX_TOKENS_PER_CHUNK * chunks:
        return (
            f"the server's {name} {count} is far above the {chunks} content chunk(s) it sent "
            f"(over {MAX_TOKENS_PER_CHUNK} tokens a chunk)"
        )
    return None


class StreamState:
    """What a stream said so far, with times (monotonic seconds) of the first and last token.

    ``max_tokens`` (the tokens asked for) bounds the server's count: one above it, or far above the chunks
    received (``count_doubt``), is not believed; ``doubt`` says why, and the count is the chunks'. ``streamed``
    False: the answer came whole (one chunk holds it all), so only max_tokens bounds it."""

    def __init__(self, api, max_tokens=None, streamed=True):
        self.api = api
        self.max_tokens = max_tokens
        self.streamed = streamed
        self.text = ""
        self.reasoning = ""
        self.events = 0  # data events, [DONE] included
        self.content_chunks = 0  # chunks that carried text or reasoning
        self.ignored = []
        self.usage = None
        self.meta = None
        self.meta_tokens = None
        self.first_chunk_tokens = None
        self.finish_reason = None
        self.error = None
        self.done = False
        self.model = None
        self.t_first = None
        self.t_last = None

    def add(self, event, t):
        """Fold one StreamEvent in, received at monotonic time ``t``; returns True when it brought tokens."""
        self.events += 1
        if event.kind == "done":
            self.done = True
            return False
        if event.kind == "error":
            self.error = event.error
            return False
        if event.kind == "ignored":
            if event.error:
                self.ignored.append(event.error)
            return False
        self.model = event.model or self.model
        if event.usage:
            self.usage = event.usage
        if event.finish_reason:
            self.finish_reason = event.finish_reason
        new = event.text
        if self.api == "generate":
            self.meta = event.meta
            if event.tokens is not None:
                self.meta_tokens = event.tokens
            # SGLang's /generate streams the text so far; with incremental output it streams pieces.
            if new.startswith(self.text):
                new = new[len(self.text) :]
                self.text = event.text
            else:
                self.text += new
        else:
            self.text += new
        self.reasoning += event.reasoning
        if new or event.reasoning:
            self.content_chunks += 1
            if self.t_first is None:
                self.t_first = t
                self.first_chunk_tokens = event.tokens if self.api == "generate" and event.tokens else 1
            self.t_last = t
            return True
        return False

    def _server_count(self):
        """(source, count) of the server's own completion token count, or (None, None)."""
        if self.usage and self.usage.get("completion_tokens") is not None:
            try:
                return "usage", int(self.usage["completion_tokens"])
            except (TypeError, ValueError):
                return None, None
        if self.meta_tokens is not None:
            return "meta_info", int(self.meta_tokens)
        return None, None

    @property
    def complete(self):
        """Whether the answer is all in: [DONE] came, or a finish reason and the server's count (usage, or
        /generate's meta_info) after which a server sends nothing but [DONE]."""
        return self.done or bool(self.finish_reason and self._server_count()[0] and not self.error)

    @property
    def doubt(self):
        """Why the server's count is not believed (then the chunks are counted), or None."""
        source, count = self._server_count()
        return count_doubt(count, self.content_chunks, self.max_tokens, self.streamed, source)

    @property
    def token_source(self):
        source, _count = self._server_count()
        if source is None or self.doubt:
            return CHUNKS
        return source

    @property
    def first_tokens(self):
        """Tokens in the first chunk, which the decode rate leaves out (they came with the TTFT).

        /generate says it (meta_info is cumulative). With a usage count but no per-chunk count,
        the chunks' average: a speculative server puts several tokens in each chunk, the first
        included, and counting it as one would inflate the decode rate. Else 1 (and when the server's count is
        not believed, its per-chunk count is not either)."""
        if self.doubt:
            return 1
        if self.first_chunk_tokens and self.first_chunk_tokens > 1:
            return self.first_chunk_tokens
        if self.token_source == "usage" and self.content_chunks:
            return max(1.0, self.completion_tokens / float(self.content_chunks))
        return 1

    @property
    def completion_tokens(self):
        if self.token_source == CHUNKS:
            return self.content_chunks
        return self._server_count()[1]
