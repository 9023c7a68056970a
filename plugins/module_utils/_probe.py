# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The LLM probe: one small completion, timed, read and judged. Used by the llm_probe module.

    result = Probe(base_url="http://127.0.0.1:30000").run()
    result["failed"], result["msg"], result["tokens_per_second"], ...

``run()`` never raises for anything a server does: every outcome is a result dict with
``failed`` and a ``msg`` naming the cause and the numbers. The request is streamed by default
and read on a worker thread, so the main thread can judge on deadlines while tokens are still
due: no first token by ``max_ttft`` fails at that moment, and once the first token is in, a
stream that can no longer reach ``min_tokens_per_second`` even if every remaining token
arrived at once fails at that moment too. The field report's server (first token after
17.6 s, then one '!' every 17.6 s) is judged at ``max_ttft``, not after 141 s.

Decode rate (``tokens_per_second``) counts the tokens after the first over the time from the
first token to the last, so a slow prefill and a slow decoder are told apart; the token count
comes from ``usage`` (asked for with ``stream_options.include_usage``), else from
``/generate``'s ``meta_info``, else one per non-empty chunk. A chunk count is a lower bound (a
speculative server may send 3 tokens a chunk), so a rate or count from it can pass a threshold
but never fail one: below the threshold it is a warning. The in-flight decode deadline stays sound
without a count: a stream whose true rate meets the minimum ends before it, however it chunks.
"""

from __future__ import absolute_import, division, print_function

import json
import queue
import re
import threading
import time

from ansible_collections.ddtree.sglang.plugins.module_utils import _degeneracy, _readiness
from ansible_collections.ddtree.sglang.plugins.module_utils._http import (
    TRANSPORT_KINDS,
    HttpClient,
    HttpError,
    body_pieces,
    cut,
    describe_transport_error,
    http_status_error,
)
from ansible_collections.ddtree.sglang.plugins.module_utils._probe_options import DEFAULTS
from ansible_collections.ddtree.sglang.plugins.module_utils._sse import (
    CHUNKS,
    COMPLETE_GRACE_S,
    SSEParser,
    StreamState,
    interpret,
)
from ansible_collections.ddtree.sglang.plugins.module_utils._values import describe

PATHS = {"completions": "/v1/completions", "chat": "/v1/chat/completions", "generate": "/generate"}

SERVER_INFO_PATHS = ("/server_info", "/get_server_info")  # newer SGLang first; older have only the second
SERVER_INFO_KEYS = (
    "version",
    "speculative_algorithm",
    "speculative_draft_model_path",
    "speculative_num_steps",
    "speculative_eagle_topk",
    "speculative_num_draft_tokens",
    "speculative_dflash_block_size",
    "speculative_ddtree_budget",
    "model_path",
    "served_model_name",
    "attention_backend",
    "mem_fraction_static",
    "disable_cuda_graph",
    "cuda_graph_max_bs",
    "tp_size",
    "context_length",
    "max_running_requests",
)
MODELS_TIMEOUT = 10.0
INFO_TIMEOUT = 2.0
# The returned text is for a human to read and for expect; the full text is still judged.
# 4000 characters is some 1000 tokens, far more than a probe asks for by default (8).
TEXT_LIMIT = 4000
# How much of a body that is not an event stream the probe reads to quote it.
QUOTE_BYTES = 2048
V1_HINT = (
    "base_url ends in /v1, so the probe asks {url}: give the server's root instead "
    "(for example http://127.0.0.1:30000); the probe adds /v1/... itself"
)


def _r(x, nd=3):
    return None if x is None else round(x, nd)


def _num(x):
    """A rate or a time for a message: 0.0568 -> '0.0568', 5.0 -> '5', 40.123 -> '40.1', 141.2 -> '141'."""
    if x is None:
        return "?"
    if abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:.3g}"


class ProbeError(Exception):
    """Bad probe options (a user error, reported before any request)."""


class Probe:
    def __init__(self, base_url, clock=time.monotonic, **options):
        unknown = set(options) - set(DEFAULTS)
        if unknown:
            raise ProbeError("unknown probe option(s): {}".format(", ".join(sorted(unknown))))
        o = dict(DEFAULTS)
        o.update((k, v) for k, v in options.items() if v is not None or k in ("model", "expect"))
        self.o = o
        self.base_url = (base_url or "").rstrip("/")
        self.clock = clock
        self._validate()
        self.client = HttpClient(
            self.base_url,
            timeout=o["timeout"],
            api_key=o["api_key"],
            validate_certs=o["validate_certs"],
            headers=o["headers"],
        )

    # ------------------------------------------------------------------ options
    def _validate(self):
        o = self.o
        if not re.match(r"^https?://[^/\s]+", self.base_url):
            raise ProbeError(
                "base_url must be an http:// or https:// URL with a host, e.g. http://127.0.0.1:30000; "
                f"got {self.base_url!r}"
            )
        if o["api"] not in PATHS:
            raise ProbeError("api must be one of {}; got {!r}".format(", ".join(PATHS), o["api"]))
        if o["max_tokens"] < 1:
            raise ProbeError("max_tokens must be at least 1; got {}".format(o["max_tokens"]))
        if o["timeout"] <= 0:
            raise ProbeError("timeout must be a positive number of seconds; got {}".format(o["timeout"]))
        # YAML reads `wait_ready: true` (wait until ready?) as a boolean, which a float option
        # would take as 1 s: a number of seconds is required, and anything else is refused.
        if isinstance(o["wait_ready"], bool):
            raise ProbeError(
                "wait_ready is a number of seconds, not yes/no: `{}` would wait {} s. "
                "Give the seconds to wait for the server, e.g. wait_ready: 60".format(
                    str(o["wait_ready"]).lower(), int(o["wait_ready"])
                )
            )
        try:
            o["wait_ready"] = float(o["wait_ready"])
        except (TypeError, ValueError):
            raise ProbeError(
                "wait_ready must be a number of seconds, e.g. 60; got {}".format(describe(o["wait_ready"]))
            ) from None
        if o["wait_ready"] < 0:
            raise ProbeError(
                "wait_ready must be 0 (no wait) or a positive number of seconds; got {}".format(o["wait_ready"])
            )
        for k in ("min_tokens_per_second", "max_ttft"):
            if o[k] is not None and o[k] < 0:
                raise ProbeError(f"{k} must be 0 (off) or positive; got {o[k]}")
        if o["min_completion_tokens"] is not None and o["min_completion_tokens"] > o["max_tokens"]:
            raise ProbeError(
                f"min_completion_tokens ({o['min_completion_tokens']}) cannot exceed max_tokens ({o['max_tokens']}): "
                "raise max_tokens or lower the minimum"
            )
        if o["messages"] and o["api"] != "chat":
            raise ProbeError("messages is only used with api=chat; set api: chat or use prompt")
        if o["degenerate"] not in ("fail", "warn", "ignore"):
            raise ProbeError("degenerate must be fail, warn or ignore; got {!r}".format(o["degenerate"]))
        self.expect_re = None
        if o["expect"]:
            try:
                self.expect_re = re.compile(o["expect"])
            except re.error as exc:
                raise ProbeError(
                    "expect is not a valid regular expression ({}): {!r}".format(exc, o["expect"])
                ) from None

    # ------------------------------------------------------------------ run
    def run(self):
        o = self.o
        self.t0 = self.clock()
        self.result = {
            "api": o["api"],
            "url": self.base_url + PATHS[o["api"]],
            "model": o["model"],
            "stream": o["stream"],
            "text": "",
            "text_truncated": False,
            "completion_tokens": 0,
            "prompt_tokens": None,
            "token_count_source": None,
            "token_count_doubt": None,
            "finish_reason": None,
            "ttft_s": None,
            "total_s": None,
            "tokens_per_second": None,
            "e2e_tokens_per_second": None,
            "degenerate": None,
            "degenerate_reason": None,
            "http_status": None,
            "server": None,
            "spec": None,
            "readiness": None,
            "transport_error": None,
            "reasons": [],
            "warnings": [],
        }
        self.cut_by_verdict = False
        self.request_setup_s = None  # client set-up before the request was written (benchmarks read it)
        self.full_text = ""  # text and reasoning as received; result["text"] is capped
        try:
            self._run()
        finally:
            self.client.close()
        res = self.result
        if re.search(r"/v1$", self.base_url):
            hint = V1_HINT.format(url=res["url"])
            res["warnings"].append(hint)
            if res["reasons"]:
                res["reasons"].append(hint)
        res["failed"] = bool(res["reasons"])
        res["verdict"] = "fail" if res["failed"] else "pass"
        res["elapsed_s"] = _r(self.clock() - self.t0)
        if res["failed"]:
            res["msg"] = "; ".join(res["reasons"])
        else:
            res["msg"] = self._summary()
        return res

    def _fail(self, reason):
        self.result["reasons"].append(reason)

    def _run(self):
        o = self.o
        if o["wait_ready"] > 0:
            r = _readiness.wait(
                self.base_url,
                o["wait_ready"],
                interval=min(1.0, max(0.1, o["wait_ready"] / 20.0)),
                timeout=min(5.0, o["wait_ready"]),
                path=o["ready_path"],
                client=self.client,
            )
            self.result["readiness"] = {
                "phase": r.phase,
                "http_status": r.http_status,
                "detail": r.detail,
                "waited_s": r.elapsed,
            }
            if not r.ready:
                self._fail(
                    "server not ready after waiting {} s (wait_ready): {}".format(_num(o["wait_ready"]), r.detail)
                )
                self.result["transport_error"] = r.error
                self.result["http_status"] = r.http_status
                return
        self.deadline = self.clock() + o["timeout"]
        if not o["model"] and o["api"] != "generate":
            try:
                self.result["model"] = self._first_model()
            except HttpError as exc:
                self._fail(f"cannot list models (to pick one; or set model): {exc.message}")
                self.result["http_status"] = exc.status
                if exc.kind in TRANSPORT_KINDS:
                    self.result["transport_error"] = exc.kind
                return
        transport_failed = self._request()
        self._judge()
        if not transport_failed:
            self._server_info()

    def _left(self):
        return self.deadline - self.clock()

    def _first_model(self):
        data = self.client.get_json("/v1/models", timeout=min(MODELS_TIMEOUT, self._left()))
        models = data.get("data") if isinstance(data, dict) else None
        if not models:
            raise HttpError("invalid", f"GET {self.base_url}/v1/models lists no models")
        first = models[0]
        return first.get("id") if isinstance(first, dict) else str(first)

    def _payload(self):
        o = self.o
        if o["api"] == "generate":
            return {
                "text": o["prompt"],
                "sampling_params": {"max_new_tokens": o["max_tokens"], "temperature": o["temperature"]},
                "stream": o["stream"],
            }
        body = {"model": self.result["model"], "max_tokens": o["max_tokens"], "temperature": o["temperature"]}
        if o["api"] == "chat":
            body["messages"] = o["messages"] or [{"role": "user", "content": o["prompt"]}]
        else:
            body["prompt"] = o["prompt"]
        if o["stream"]:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    # ------------------------------------------------------------------ request
    def _request(self):
        """Send the completion; returns True when no HTTP answer came (transport failure)."""
        if self.o["stream"]:
            return self._request_stream()
        return self._request_plain()

    def _request_plain(self):
        o = self.o
        path = PATHS[o["api"]]
        limit = self._left()
        judged = False
        # Without a stream the answer comes at the end: by max_ttft + (max_tokens - 1) / min rate it
        # either came or cannot pass any more.
        if o["max_ttft"] and o["min_tokens_per_second"]:
            bound = o["max_ttft"] + (o["max_tokens"] - 1) / float(o["min_tokens_per_second"])
            if bound < limit:
                limit, judged = bound, True
        t_req = self.clock()
        try:
            resp = self.client.request("POST", path, json_body=self._payload(), timeout=limit)
            body = resp.text
        except HttpError as exc:
            return self._transport_failure(exc, judged, limit)
        t_end = self.clock()
        self.result["http_status"] = resp.status_code
        self.result["total_s"] = _r(t_end - t_req)
        if resp.status_code != 200:
            self._fail(
                http_status_error(
                    "POST", self.client.url(path), resp.status_code, body, resp.headers.get("location")
                ).message
            )
            return False
        event = self._whole_answer(body, self.client.url(path), resp.headers.get("content-type"))
        if event is None:
            return False
        state = StreamState(o["api"], max_tokens=o["max_tokens"], streamed=False)
        state.add(event, t_end)
        self._take_state(state, t_req, t_end)
        return False

    def _transport_failure(self, exc, judged, limit):
        o = self.o
        if exc.kind == "timeout" and judged:
            self._fail(
                "no answer within {} s (not streamed): a first token by max_ttft {} s and {} more at "
                "min_tokens_per_second {} would have been done by then".format(
                    _num(limit), _num(o["max_ttft"]), o["max_tokens"] - 1, _num(o["min_tokens_per_second"])
                )
            )
        elif exc.kind == "timeout":
            self._fail("probe timed out after {} s (timeout): {}".format(_num(o["timeout"]), exc.message))
        else:
            self._fail(exc.message)
        if exc.kind in TRANSPORT_KINDS:
            self.result["transport_error"] = exc.kind
        return exc.kind in TRANSPORT_KINDS

    def _request_stream(self):
        """Stream the completion: a worker thread reads it into a queue, this thread keeps the deadlines (the
        budget, max_ttft, the least decode rate) and judges. Returns True when no HTTP answer came."""
        o = self.o
        path = PATHS[o["api"]]
        url = self.client.url(path)
        q = queue.Queue()
        holder = {}
        budget = max(0.1, self._left())
        payload = self._payload()
        clock = self.clock
        state = StreamState(o["api"], max_tokens=o["max_tokens"])
        run = {"t_req": clock(), "t_sent": None, "outcome": None, "t_end": None, "ret": None, "url": url}
        run["t_complete"] = None  # when a finish reason and usage were in: then [DONE] is awaited COMPLETE_GRACE_S
        thread = threading.Thread(
            target=self._stream_worker, args=(path, url, payload, budget, q, holder), name="llm_probe-stream"
        )
        thread.daemon = True
        thread.start()
        ttft_deadline = run["t_req"] + o["max_ttft"] if o["max_ttft"] else None
        try:
            while run["outcome"] is None:
                now = clock()
                limit, why = self._stream_limit(state, ttft_deadline)
                if run["t_complete"] is not None and run["t_complete"] + COMPLETE_GRACE_S < limit:
                    limit, why = run["t_complete"] + COMPLETE_GRACE_S, "complete"
                if limit - now <= 0:
                    # complete: the answer was all in, without [DONE] or the close that should follow it
                    run["outcome"], run["t_end"] = why, run["t_complete"] if why == "complete" else now
                    break
                try:
                    kind, value, t = q.get(timeout=limit - now)
                except queue.Empty:
                    continue
                if self._stream_item(kind, value, t, state, run):
                    return run["ret"]
        finally:
            if run["outcome"] not in ("done", "eof"):
                # Stop the worker's read now: it may be blocked on a server that trickles.
                self.client.abort()
        self._take_state(state, run["t_req"], run["t_end"], run["t_sent"])
        self._stream_verdict(run["outcome"], state, run["t_req"], run["t_end"], url)
        return False

    def _stream_worker(self, path, url, payload, budget, q, holder):
        """Send the request and put what comes on ``q`` as (kind, value, time); never raises."""
        clock = self.clock
        try:
            # The main thread keeps the deadlines and aborts the read when one passes; the request's
            # own wall-clock bound only backs them up, so it runs a little longer than the budget
            # and never decides a verdict itself.
            resp = self.client.request("POST", path, json_body=payload, timeout=budget + 1, stream=True)
            holder["resp"] = resp
            q.put(("response", resp.status_code, clock()))
            if resp.watchdog.sent_at is not None and clock is time.monotonic:
                q.put(("sent", None, resp.watchdog.sent_at))
            if resp.status_code != 200:
                q.put(("status", (resp.text, resp.headers.get("location")), clock()))
                return
            ctype = resp.headers.get("content-type", "").lower()
            if "json" in ctype and "event-stream" not in ctype:
                # A server that ignored "stream": the whole answer as one JSON body.
                q.put(("whole", (resp.text, ctype), clock()))
                return
            if ctype and "event-stream" not in ctype:
                # A proxy's page, a login form: not what was asked for; quote its start.
                q.put(("not_sse", (ctype, _read_some(resp, QUOTE_BYTES)), clock()))
                return
            parser = SSEParser()
            for chunk in body_pieces(resp):
                t = clock()
                for data in parser.feed(chunk):
                    q.put(("data", data, t))
            if resp.watchdog.fired:  # a body without a length "ends" when the deadline shuts it
                raise resp.watchdog.error(url)
            for data in parser.close():
                q.put(("data", data, clock()))
            q.put(("eof", None, clock()))
        except HttpError as exc:
            q.put(("error", exc, clock()))
        except Exception as exc:  # requests' and urllib3's mid-stream errors, or the probe's abort
            resp = holder.get("resp")
            if resp is not None and resp.watchdog.fired:
                q.put(("error", resp.watchdog.error(url), clock()))
                return
            kind, msg = describe_transport_error(exc, "POST", url, budget)
            q.put(("error", HttpError(kind, msg), clock()))
        finally:
            # A finished stream's connection goes back to the pool: its watchdog must not fire
            # later on the next request that reuses the socket.
            if holder.get("resp") is not None:
                holder["resp"].watchdog.cancel()

    def _stream_limit(self, state, ttft_deadline):
        """(the time the next event must come by, which bound that is: budget, ttft or decode)."""
        o = self.o
        limit, why = self.deadline, "budget"
        if state.t_first is None:
            if ttft_deadline is not None and ttft_deadline < limit:
                limit, why = ttft_deadline, "ttft"
        elif (
            o["min_tokens_per_second"]
            and state.completion_tokens < o["max_tokens"]
            and not state.finish_reason  # all tokens are in; a late usage chunk or [DONE] is no decode
        ):
            # The latest time the last token can come and still reach the minimum decode rate
            # (once all tokens are in, only the end of the stream is awaited, within the budget).
            remaining = o["max_tokens"] - (state.first_chunk_tokens or 1)
            decode_deadline = state.t_first + remaining / float(o["min_tokens_per_second"])
            if decode_deadline < limit:
                limit, why = decode_deadline, "decode"
        return limit, why

    def _stream_item(self, kind, value, t, state, run):
        """One item of the worker's queue. Sets run's outcome when the stream ended; True when the request is
        over before any verdict on its stream (run["ret"]: whether no HTTP answer came)."""
        url = run["url"]
        if kind == "sent":
            # TTFT counts from the moment the request was written, not from before the
            # worker thread, requests and urllib3 set it up: on a loaded host (load 14 on
            # 2 cores) that set-up alone is milliseconds to tens of milliseconds.
            self.request_setup_s = t - run["t_req"]
            run["t_sent"] = t
        elif kind == "response":
            self.result["http_status"] = value
        elif kind == "status":
            body, location = value
            self._fail(http_status_error("POST", url, self.result["http_status"], body, location).message)
            run["ret"] = False
            return True
        elif kind == "not_sse":
            ctype, head = value
            self._fail(
                f"POST {url} answered 200 with content-type {ctype}, not an event stream "
                f"(a proxy or another service on that port?): {cut(head, 200)!r}"
            )
            self.cut_by_verdict = True
            run["ret"] = False
            return True
        elif kind == "error":
            self.result["transport_error"] = value.kind
            if state.t_first is not None or self.result["http_status"]:
                self._take_state(state, run["t_req"], t, run["t_sent"])
                self._fail(f"stream broke off after {state.completion_tokens} token(s): {value.message}")
                run["ret"] = False
            else:
                self._fail(value.message)
                run["ret"] = value.kind in TRANSPORT_KINDS
            return True
        elif kind == "data":
            ev = interpret(self.o["api"], value)
            state.add(ev, t)
            if ev.kind in ("error", "done"):
                run["outcome"], run["t_end"] = ev.kind, t
            elif run["t_complete"] is None and state.complete:
                run["t_complete"] = t
        elif kind == "eof":
            run["outcome"], run["t_end"] = "eof", t
        elif kind == "whole":
            ev = self._whole_answer(value[0], url, value[1])
            if ev is None:
                run["ret"] = False
                return True
            state.streamed = False  # one chunk holds the whole answer
            state.add(ev, t)
            run["outcome"], run["t_end"] = "done", t
            self.result["warnings"].append(
                "the server ignored stream: true and sent the answer in one piece: "
                "ttft_s is the time to the whole answer and only the end-to-end rate is measured"
            )
        return False

    def _stream_verdict(self, outcome, state, t_req, t_end, url):
        """Fail the probe for how its stream ended: a bound that passed, an error event, no proper end."""
        o = self.o
        res = self.result
        self.cut_by_verdict = self.cut_by_verdict or outcome in ("ttft", "decode", "budget")
        if outcome == "ttft":
            res["ttft_s"] = None
            self._fail(
                "no first token within {} s (max_ttft){}".format(
                    _num(o["max_ttft"]),
                    "" if res["http_status"] else ": no answer at all, not even response headers",
                )
            )
        elif outcome == "decode":
            after = state.completion_tokens - state.first_tokens
            span = t_end - state.t_first
            res["tokens_per_second"] = _r(after / span if span > 0 else 0.0)
            self._fail(
                f"decode too slow: {_num(after)} token(s) in {_num(span)} s after the first, below "
                f"min_tokens_per_second {_num(o['min_tokens_per_second'])} whatever follows "
                f"(first token after {_num(res['ttft_s'])} s)"
            )
        elif outcome == "budget":
            waiting = "the status line and headers" if not res["http_status"] else "the event stream"
            if not res["http_status"]:
                res["transport_error"] = "timeout"  # no HTTP answer came at all
            self._fail(
                f"probe timed out after {_num(o['timeout'])} s (timeout) waiting on POST {url} "
                f"({_num(t_end - t_req)} s spent on it, {waiting}) with {state.completion_tokens} token(s)"
            )
        elif outcome == "error":
            self._fail(f"error in the stream after {state.completion_tokens} token(s): {cut(state.error, 300)}")
        elif outcome == "eof" and not state.done and not state.finish_reason:
            self._fail(
                f"the stream ended without a finish reason or [DONE] after {state.completion_tokens} token(s): "
                "cut off by the server?"
            )
        if state.ignored:
            res["warnings"].append(
                f"ignored {len(state.ignored)} unreadable stream event(s), first: {state.ignored[0]}"
            )

    def _whole_answer(self, body, url, ctype=None):
        """A non-streamed JSON answer as one StreamEvent, or None (failure recorded) when it is not JSON."""
        try:
            data = json.loads(body)
        except ValueError:
            self._fail(
                f"POST {url} answered 200 with content-type {ctype or '(none)'}, a body that is not JSON "
                f"(a proxy or another service on that port?): {cut(body, 200)!r}"
            )
            self.cut_by_verdict = True  # nothing was read: thresholds would only repeat this
            return None
        if self.o["api"] == "generate":
            obj = data[0] if isinstance(data, list) and data else data
            return interpret("generate", json.dumps(obj))
        return interpret(self.o["api"], json.dumps(_as_chunk(data)))

    # ------------------------------------------------------------------ measure and judge
    def _take_state(self, state, t_req, t_end, t_sent=None):
        res = self.result
        o = self.o
        res["text"], res["text_truncated"] = _capped(state.text)
        self.full_text = state.text + state.reasoning
        if state.reasoning:
            res["reasoning_text"], cut_reasoning = _capped(state.reasoning)
            res["text_truncated"] = res["text_truncated"] or cut_reasoning
        res["completion_tokens"] = state.completion_tokens
        res["token_count_source"] = (
            state.token_source if (state.content_chunks or state.usage or state.meta_tokens) else None
        )
        res["finish_reason"] = state.finish_reason
        if state.doubt and res["token_count_doubt"] is None:
            res["token_count_doubt"] = state.doubt
            res["warnings"].append(
                f"{state.doubt}: not believed; counted the {state.content_chunks} content chunk(s) instead (a lower "
                "bound)"
            )
        if state.usage and state.usage.get("prompt_tokens") is not None:
            res["prompt_tokens"] = state.usage.get("prompt_tokens")
        if state.meta:
            if state.meta.get("prompt_tokens") is not None:
                res["prompt_tokens"] = state.meta.get("prompt_tokens")
            spec = _spec_from_meta(state.meta)
            if spec:
                res["spec"] = spec
        if state.model and not res["model"]:
            res["model"] = state.model
        if t_end is not None:
            res["total_s"] = _r(t_end - t_req)
        if o["stream"] and state.t_first is not None:
            res["ttft_s"] = _r(state.t_first - (t_req if t_sent is None else t_sent))
            after = state.completion_tokens - state.first_tokens
            span = (state.t_last or state.t_first) - state.t_first
            if after > 0 and span > 0:
                res["tokens_per_second"] = _r(after / span)
        if t_end is not None and t_end > t_req and state.completion_tokens:
            res["e2e_tokens_per_second"] = _r(state.completion_tokens / (t_end - t_req))

    def _judge(self):
        """Thresholds over a finished (or cut) completion; failures already recorded stay first."""
        o = self.o
        res = self.result
        answered = res["http_status"] == 200
        if not answered:
            return
        text = self.full_text
        if res["completion_tokens"] or res["finish_reason"] or not res["reasons"]:
            deg, why = _degeneracy.check(text)
            res["degenerate"], res["degenerate_reason"] = deg, why
            if deg and o["degenerate"] == "fail":
                res["reasons"].insert(0, f"output degenerate: {why}")
            elif deg and o["degenerate"] == "warn":
                res["warnings"].append(f"output degenerate: {why}")
        if self.cut_by_verdict:
            return  # cut by a verdict, or unreadable: partial numbers would only repeat it
        min_tps = o["min_tokens_per_second"]
        if min_tps:
            rate, label = res["tokens_per_second"], "decode"
            if rate is None and res["completion_tokens"] > 1:
                # Not streamed, or everything in one chunk: only the end-to-end rate is measurable.
                rate, label = res["e2e_tokens_per_second"], "end-to-end"
            if rate is not None and rate < min_tps:
                if res["token_count_source"] == CHUNKS:
                    res["warnings"].append(
                        f"{label} at least {_num(rate)} tok/s, counting one token per chunk (the server sent no "
                        f"usage): below min_tokens_per_second {_num(min_tps)}, but a lower bound cannot fail it"
                    )
                else:
                    res["reasons"].append(f"{label} {_num(rate)} tok/s < {_num(min_tps)}")
        if o["max_ttft"] and res["ttft_s"] is not None and res["ttft_s"] > o["max_ttft"]:
            res["reasons"].append(
                "first token after {} s > max_ttft {} s".format(_num(res["ttft_s"]), _num(o["max_ttft"]))
            )
        mct = o["min_completion_tokens"]
        if mct and res["completion_tokens"] < mct:
            if res["token_count_source"] == CHUNKS:
                res["warnings"].append(
                    f"at least {res['completion_tokens']} completion token(s), counting one per chunk (the server "
                    f"sent no usage): below min_completion_tokens {mct}, but a lower bound cannot fail it"
                )
            else:
                res["reasons"].append(f"{res['completion_tokens']} completion token(s) < min_completion_tokens {mct}")
        efr = o["expect_finish_reason"]
        if efr and res["finish_reason"] != efr:
            res["reasons"].append("finish_reason {!r}, expected {!r}".format(res["finish_reason"], efr))
        if self.expect_re is not None and not self.expect_re.search(text):
            res["reasons"].append("text {!r} does not match expect {!r}".format(cut(text, 80), o["expect"]))

    def _summary(self):
        r = self.result
        parts = [f"{r['completion_tokens']} token(s)"]
        if r["token_count_source"] == CHUNKS:
            parts = [f"at least {r['completion_tokens']} token(s) (counted chunks: the server sent no usage)"]
        if r["ttft_s"] is not None:
            parts.append("first after {} s".format(_num(r["ttft_s"])))
        if r["tokens_per_second"] is not None:
            parts.append("decode {} tok/s".format(_num(r["tokens_per_second"])))
        if r["e2e_tokens_per_second"] is not None:
            parts.append("end-to-end {} tok/s".format(_num(r["e2e_tokens_per_second"])))
        parts.append("finish {}".format(r["finish_reason"]))
        if r["spec"] and r["spec"].get("accept_length") is not None:
            parts.append("accept length {}".format(_num(r["spec"]["accept_length"])))
        return "ok: " + ", ".join(parts)

    # ------------------------------------------------------------------ server facts
    def _server_info(self):
        """Version and speculative settings from /server_info or /get_server_info; best effort, bounded."""
        info = None
        for path in SERVER_INFO_PATHS:
            left = self._left()
            if left <= 0.2:
                return
            try:
                data = self.client.get_json(path, timeout=min(INFO_TIMEOUT, left))
            except HttpError as exc:
                if exc.kind == "http" and exc.status in (404, 405):
                    continue
                return
            if isinstance(data, dict):
                info = data
                info["_path"] = path
            break
        if not info:
            return
        server = dict((k, info.get(k)) for k in SERVER_INFO_KEYS if k in info)
        server["source"] = info["_path"]
        self.result["server"] = server
        if not self.result["model"]:
            self.result["model"] = info.get("served_model_name") or info.get("model_path")
        if self.result["spec"] is None:
            states = info.get("internal_states")
            st = states[0] if isinstance(states, list) and states and isinstance(states[0], dict) else {}
            if st.get("avg_spec_accept_length") is not None:
                self.result["spec"] = {
                    "accept_length": st.get("avg_spec_accept_length"),
                    "accept_rate": None,
                    "verify_ct": None,
                    "source": info["_path"],
                }


def _read_some(resp, limit):
    """Up to ``limit`` bytes of a body, as text, for a quote."""
    got = b""
    for chunk in body_pieces(resp):
        got += chunk
        if len(got) >= limit:
            break
    return got[:limit].decode("utf-8", "replace")


def _capped(text):
    """(text cut to TEXT_LIMIT characters, whether it was cut)."""
    if len(text) <= TEXT_LIMIT:
        return text, False
    return text[:TEXT_LIMIT], True


def _spec_from_meta(meta):
    if meta.get("spec_verify_ct") is None and meta.get("spec_accept_length") is None:
        return None
    ct = meta.get("spec_verify_ct")
    length = meta.get("spec_accept_length")
    if length is None and ct:
        length = meta.get("completion_tokens", 0) / float(ct)
    return {
        "accept_length": length,
        "accept_rate": meta.get("spec_accept_rate"),
        "verify_ct": ct,
        "source": "meta_info",
    }


def _as_chunk(data):
    """A non-streamed OpenAI answer as one stream chunk (message -> delta), for one reading path."""
    if not isinstance(data, dict):
        return data
    out = dict(data)
    choices = []
    for c in data.get("choices") or []:
        c = dict(c)
        if "message" in c and "delta" not in c:
            c["delta"] = c.pop("message") or {}
        choices.append(c)
    out["choices"] = choices
    return out
