# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Closed-loop load on an OpenAI-compatible server, measured. Used by the llm_bench module.

    result = Bench("http://127.0.0.1:30000", concurrency=[1, 16], duration=8).run()
    result["levels"][1]["output_tokens_per_second"], result["failed"], result["msg"]

Each level runs N worker threads. Each sends its next streamed request as soon as the last one
ends (a closed loop, as SGLang's ``bench_serving --max-concurrency N`` and guidellm's
``concurrent`` profile do), for ``warmup`` seconds and then ``duration`` seconds.

Window accounting (docs/bench.md): a request is counted when it STARTS inside the window
[warmup end, warmup end + duration). Counted requests run to their end even past the window (as
bench_serving waits for every request it sent), and meanwhile the other workers keep the load
at N with requests that are not counted; when the last counted request has ended, those are
cut. Per worker, the counted requests follow each other without a gap, so the worker's rate is
its counted output tokens over the time from the start of its first counted request to the end
of its last one; the aggregate rate is the sum over the workers. This neither loses the time a
worker spent finishing a warmup request at the window start (counting tokens over the bare
window would) nor the request still running at the window end.

Output tokens are the server's own ``usage.completion_tokens`` (asked for with
``stream_options.include_usage``); TTFT and inter-token latency are measured per content chunk
as it is read. Requests go through ``_http.HttpClient`` (one per worker: a requests Session is
not shared between threads) and the stream through ``_sse``, the same code as llm_probe.
"""

from __future__ import absolute_import, division, print_function

import json
import math
import threading
import time
from email.utils import parsedate_to_datetime

from ansible_collections.ddtree.sglang.plugins.module_utils._goodput import as_number, check_slo, stream_rate
from ansible_collections.ddtree.sglang.plugins.module_utils._goodput import figures as goodput_figures
from ansible_collections.ddtree.sglang.plugins.module_utils._http import (
    HttpClient,
    HttpError,
    body_pieces,
    cut,
    describe_transport_error,
    http_status_error,
)
from ansible_collections.ddtree.sglang.plugins.module_utils._probe import Probe
from ansible_collections.ddtree.sglang.plugins.module_utils._sse import (
    COMPLETE_GRACE_S,
    SSEParser,
    StreamState,
    interpret,
)

PATHS = {"completions": "/v1/completions", "chat": "/v1/chat/completions"}

# A small, varied prompt set: short prompts, so the figures are decode-bound as in a chat server's
# steady state; several of them, so a server's prefix cache does not turn every request into one.
DEFAULT_PROMPTS = [
    {"prompt": "Explain in a few sentences how a hash table handles collisions."},
    {"prompt": "Write a short story about a lighthouse keeper who finds a message in a bottle."},
    {"prompt": "List the steps to make bread at home, from flour to a baked loaf."},
    {"prompt": "Describe the water cycle to a ten-year-old."},
    {"prompt": "What are the trade-offs between TCP and UDP for a multiplayer game?"},
    {"prompt": "Summarize the causes of the French Revolution."},
    {"prompt": "Give advice to someone starting to run for the first time."},
    {"prompt": "Compare speculative decoding with plain autoregressive decoding."},
]

# Why each default is what it is (docs/bench.md, "Choosing levels and durations"):
# - duration 10 s, warmup 2 s: at 40-100 tok/s a 128-token request takes 1.5-3 s, so each worker
#   completes several requests in the window; the warmup fills the batch and the server's caches.
# - max_tokens 128: long enough that decode dominates (the figure a speculative decoder changes),
#   short enough to keep a level cheap.
# - timeout 30 s: the bound of one request; it also bounds how long a level's last counted
#   request may run past the window.
DEFAULTS = {
    "api": "completions",
    "model": None,
    "concurrency": [1],
    "duration": 10.0,
    "warmup": 2.0,
    "prompts": None,
    "max_tokens": 128,
    "temperature": 0.0,
    "top_p": None,
    "slo": None,
    "timeout": 30.0,
    "deadline": None,
    "api_key": None,
    "validate_certs": True,
    "headers": None,
    "repeats": 1,
    "greedy_tokens": 0,
    "greedy_prompts": None,
    "max_error_share": 0.05,
}
# The default deadline's margin beyond every level's warmup, window and last request: model
# discovery and thread start-up take well under a second; 5 s is room for a loaded controller.
DEADLINE_MARGIN = 5.0
MAX_CONCURRENCY = 512  # one thread per stream: beyond this, use a tool built on an event loop
ERROR_MESSAGES = 5  # distinct error messages kept per level
MODELS_TIMEOUT = 10.0
# How long a worker thread may take to notice it was stopped (its socket was shut down already).
JOIN_TIMEOUT = 5.0
# A server that refuses (429 Too Many Requests, 503 Service Unavailable) asks for a pause: its stream waits
# Retry-After seconds before its next request, else BACKOFF_FIRST_S doubling to BACKOFF_MAX_S while refusals
# follow each other (RFC 9110 10.2.3; what an OpenAI client does). Resending at once would measure nothing but
# the refusals, and add to the load the server is shedding.
THROTTLE_STATUSES = (429, 503)
# A level's aggregate rates, none when the deadline cut it (its streams' spans end at the cut, not with them).
CUT_RATES = (
    "output_tokens_per_second",
    "requests_per_second",
    "goodput_requests_per_second",
    "goodput_tokens_per_second",
)
BACKOFF_FIRST_S = 0.25
BACKOFF_MAX_S = 8.0


# What each greedy answer keeps of the probe's result (llm_probe's RETURN says what each is).
GREEDY_KEYS = (
    "verdict",
    "msg",
    "text",
    "reasoning_text",
    "text_truncated",
    "completion_tokens",
    "finish_reason",
    "token_count_source",
    "ttft_s",
    "tokens_per_second",
)


class BenchError(Exception):
    """Bad options (a user error, reported before any request)."""


def percentile(values, q):
    """The q-th percentile (0-100) with linear interpolation between ranks (numpy's default,
    which bench_serving uses), or None for no values."""
    if not values:
        return None
    data = sorted(values)
    pos = (len(data) - 1) * q / 100.0
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(data) - 1)
    return data[lo] + (data[hi] - data[lo]) * (pos - lo)


def _r(x, nd=4):
    return None if x is None else round(x, nd)


def distribution(values, qs=(50, 90, 99)):
    """{"p50": ..., "p90": ..., "p99": ...} of ``values`` (None each when there are none)."""
    return {f"p{q}": _r(percentile(values, q)) for q in qs}


def in_window(start, window_start, window_end):
    """Whether a request that started at ``start`` is counted: it started inside the window."""
    return window_start <= start < window_end


class Record:
    """One request as a worker saw it."""

    __slots__ = (
        "worker",
        "start",
        "end",
        "counted",
        "tokens",
        "token_source",
        "times",
        "first_tokens",
        "error",
        "cut",
        "rid",
        "prompt",
        "error_kind",
        "retry_after",
        "doubt",
        "asked",
    )

    def __init__(self, worker, start, counted=True):
        self.worker = worker
        self.start = start
        self.end = None
        self.counted = counted
        self.tokens = 0
        self.token_source = None
        self.times = []  # arrival time of each content chunk
        self.first_tokens = 1  # tokens the first content chunk carried
        self.error = None
        self.cut = False  # stopped by the deadline: neither completed nor an error
        self.rid = None  # the completion's id, as the server names the request in its logs
        self.prompt = None  # its index in the prompt set
        self.error_kind = None  # "HTTP 429", "reset", "timeout", "error event", ... (errors are grouped by it)
        self.retry_after = None  # a refusal (429/503): the seconds its Retry-After asked for, or -1 without one
        self.doubt = None  # why the server's token count was not believed (_sse.count_doubt), if it was not
        self.asked = None  # the max_tokens it asked for

    @property
    def completed(self):
        return self.error is None and not self.cut and self.end is not None


def sample(rec, window_start):
    """One counted request as a goodput sample (module_utils/_goodput.py): its stream, its start and end from
    the window start, its tokens, first token and mean time per output token after the first."""
    s = {
        "stream": rec.worker,
        "prompt": rec.prompt,
        "start_s": round(rec.start - window_start, 4),
        "end_s": round(rec.end - window_start, 4),
        "tokens": rec.tokens if rec.completed else 0,
        "ttft_s": _r(rec.times[0] - rec.start) if rec.completed and rec.times else None,
        "itl_s": None,
    }
    if rec.completed and len(rec.times) > 1 and rec.tokens > 1:
        # SGLang's request TPOT, (finished - first token) / (completion tokens - 1) (metrics_collector.py:2056-2063)
        s["itl_s"] = round((rec.times[-1] - rec.times[0]) / (rec.tokens - 1), 6)
    if rec.error is not None:
        s["error"] = True
    if rec.rid:
        s["id"] = rec.rid
    return s


def _token_source(done):
    sources = {r.token_source for r in done}
    if not done:
        return None
    if sources == {"usage"}:
        return "usage"
    without = sum(1 for r in done if r.token_source != "usage")
    return (
        f"chunks for {without} of {len(done)} request(s) that sent no usage: one token per content chunk, "
        "a lower bound (a chunk may carry several tokens)"
    )


def level_figures(records, concurrency, window_start=0.0, slo=None):
    """The figures of one level from its counted records (see the module docstring), with its goodput under
    ``slo`` and its per-request ``samples``."""
    counted = [r for r in records if r.counted]
    done = [r for r in counted if r.completed]
    errors = [r for r in counted if r.error is not None]
    # A cut request's tokens are unknown: its stream's span ends with the request before it.
    samples = [sample(r, window_start) for r in counted if not r.cut]
    ttfts = [r.times[0] - r.start for r in done if r.times]
    itls = []
    decode = []
    for r in done:
        itls.extend(r.times[j] - r.times[j - 1] for j in range(1, len(r.times)))
        if len(r.times) > 1 and r.tokens > r.first_tokens:
            decode.append((r.tokens - r.first_tokens) / (r.times[-1] - r.times[0]))
    messages = []
    kinds = {}
    for r in errors:
        if r.error not in messages and len(messages) < ERROR_MESSAGES:
            messages.append(r.error)
        kind = kinds.setdefault(r.error_kind or "error", {"count": 0, "first": r.error})
        kind["count"] += 1
    judged = len(done) + len(errors)
    doubts = [r.doubt for r in done if r.doubt]
    figures = {
        "concurrency": concurrency,
        "output_tokens_per_second": _r(stream_rate(samples, lambda s: s["tokens"]), 2) if done else None,
        "requests_per_second": _r(stream_rate(samples, lambda s: 0 if s.get("error") else 1), 3) if done else None,
        "completed": len(done),
        "output_tokens": sum(r.tokens for r in done),
        "errors": {"count": len(errors), "messages": messages, "kinds": kinds},
        # The share of the counted requests that ended (cut ones aside) that failed.
        "error_share": _r(len(errors) / float(judged)) if judged else None,
        "cut": sum(1 for r in counted if r.cut),
        "streams_measured": len({s["stream"] for s in samples}),
        "ttft_s": distribution(ttfts),
        "itl_s": distribution(itls),
        "request_itl_s": distribution([s["itl_s"] for s in samples if s["itl_s"] is not None]),
        "decode_tokens_per_second": {"p50": _r(percentile(decode, 50), 2)},
        "token_count_source": _token_source(done),
        # Requests whose server count was not believed (above max_tokens, or far above their chunks): counted by
        # their chunks instead; the first says why.
        "token_count_doubts": {"count": len(doubts), "first": doubts[0] if doubts else None},
        "slo": dict(slo or {}),
    }
    figures.update(goodput_figures(samples, slo or {}))
    figures["samples"] = samples
    return figures


def repeat_rates(records, concurrency, window_start, duration, repeats):
    """The aggregate rate of each of ``repeats`` equal parts of the window, each part's counted requests (by
    their start) taken as a measurement of its own: the spread of a level without running it again."""
    if repeats <= 1:
        return []
    part = duration / repeats
    rates = []
    for k in range(repeats):
        lo, hi = window_start + k * part, window_start + (k + 1) * part
        mine = [r for r in records if r.counted and lo <= r.start < hi]
        rates.append(level_figures(mine, concurrency)["output_tokens_per_second"])
    return rates


# What to do when requests outlast a level's window (the role's variable named: the gate is this module's main user).
RAISE_DURATION = (
    "raise duration (ddtree_deploy_gate_duration in ddtree_deploy) to several requests' length, or lower max_tokens"
)


class Bench:
    def __init__(self, base_url, clock=time.monotonic, **options):
        unknown = set(options) - set(DEFAULTS)
        if unknown:
            raise BenchError("unknown option(s): {}".format(", ".join(sorted(unknown))))
        o = dict(DEFAULTS)
        o.update((k, v) for k, v in options.items() if v is not None)
        self.o = o
        self.base_url = (base_url or "").rstrip("/")
        self.clock = clock
        # Tokens and content chunks of the requests completed so far with the server's own count: how many tokens a
        # chunk carries on this server (a speculative one sends several), for a cut request's estimate.
        self._chunk_tokens = [0, 0]
        self._validate()

    # ------------------------------------------------------------------ options
    def _validate(self):
        o = self.o
        if not self.base_url.startswith(("http://", "https://")) or len(self.base_url.split("/")) < 3:
            raise BenchError(
                f"base_url must be an http:// or https:// URL with a host, e.g. http://127.0.0.1:30000; "
                f"got {self.base_url!r}"
            )
        if o["api"] not in PATHS:
            raise BenchError("api must be one of {}; got {!r}".format(", ".join(PATHS), o["api"]))
        if isinstance(o["greedy_tokens"], bool) or not isinstance(o["greedy_tokens"], int) or o["greedy_tokens"] < 0:
            raise BenchError(
                f"greedy_tokens must be 0 (no greedy answers) or a whole number of tokens; got {o['greedy_tokens']!r}"
            )
        self.levels = _levels(o["concurrency"], greedy_only=o["greedy_tokens"] > 0)
        for k in ("duration", "timeout"):
            o[k] = _seconds(k, o[k])
            if o[k] <= 0:
                raise BenchError(f"{k} must be a positive number of seconds; got {o[k]:g}")
        o["warmup"] = _seconds("warmup", o["warmup"])
        if o["warmup"] < 0:
            raise BenchError(f"warmup must be 0 (none) or a positive number of seconds; got {o['warmup']:g}")
        if isinstance(o["repeats"], bool) or not isinstance(o["repeats"], int) or o["repeats"] < 1:
            raise BenchError(f"repeats must be a whole number of at least 1; got {o['repeats']!r}")
        if isinstance(o["max_tokens"], bool) or not isinstance(o["max_tokens"], int) or o["max_tokens"] < 1:
            raise BenchError(f"max_tokens must be a whole number of at least 1; got {o['max_tokens']!r}")
        try:
            o["slo"] = check_slo(o["slo"])
        except ValueError as exc:
            raise BenchError(str(exc)) from None
        o["max_error_share"] = _share(o["max_error_share"])
        o["temperature"] = _sampling("temperature", o["temperature"], 0.0, None)
        if o["top_p"] is not None:
            o["top_p"] = _sampling("top_p", o["top_p"], 0.0, 1.0, low_open=True)
        prompts = o["prompts"] if o["prompts"] is not None else DEFAULT_PROMPTS
        self.prompts = _prompts(prompts, o["api"])
        # The greedy answers: greedy_prompts (a trace loads the levels, a fixed set is compared), else the prompts.
        greedy = o["greedy_prompts"] if o["greedy_prompts"] is not None else prompts
        self.greedy_prompts = _prompts(greedy, o["api"], "greedy_prompts") if o["greedy_tokens"] else []
        # They are named by the prompt's id (the gate compares them prompt by prompt), else its index.
        self.prompt_ids = [item.get("id", i) for i, item in enumerate(greedy)]
        derived = len(self.levels) * (o["warmup"] + o["duration"] + o["timeout"]) + DEADLINE_MARGIN
        if o["greedy_tokens"]:
            derived += len(self.greedy_prompts) * o["timeout"]
        if o["deadline"] is None:
            o["deadline"] = derived
        o["deadline"] = _seconds("deadline", o["deadline"])
        if o["deadline"] <= 0:
            raise BenchError(f"deadline must be a positive number of seconds; got {o['deadline']:g}")

    def _client(self):
        o = self.o
        return HttpClient(
            self.base_url,
            timeout=o["timeout"],
            api_key=o["api_key"],
            validate_certs=o["validate_certs"],
            headers=o["headers"],
        )

    # ------------------------------------------------------------------ run
    def run(self):
        cpu0 = time.process_time()
        self.t0 = self.clock()
        self.deadline = self.t0 + self.o["deadline"]
        res = self._header()
        reasons = self._pick_model(res)
        if not reasons:
            self._measure(res)
        reasons.extend(self._level_failures(res))
        reasons.extend(f"{g['id']} (greedy): {g['msg']}" for g in res["greedy"] if g["verdict"] == "fail")
        if res["deadline_reached"]:
            reasons.insert(0, self._deadline_reason(res))
        res["elapsed_s"] = _r(self.clock() - self.t0, 3)
        res["client_cpu_s"] = _r(time.process_time() - cpu0, 3)
        # The reasons, one per entry, survive a caller's failed_when: false (the deploy role reads them).
        res["reasons"] = reasons
        res["failed"] = bool(reasons)
        res["msg"] = "; ".join(reasons) if reasons else self._summary(res)
        return res

    def _header(self):
        o = self.o
        return {
            "url": self.base_url + PATHS[o["api"]],
            "api": o["api"],
            "model": o["model"],
            "concurrency": list(self.levels),
            "duration": o["duration"],
            "warmup": o["warmup"],
            "max_tokens": o["max_tokens"],
            "repeats": o["repeats"],
            "temperature": o["temperature"],
            "top_p": o["top_p"],
            "slo": dict(o["slo"]),
            "timeout": o["timeout"],
            "deadline": _r(o["deadline"], 3),
            "prompts": len(self.prompts),
            "levels": [],
            "greedy_tokens": o["greedy_tokens"],
            "greedy": [],
            "deadline_reached": False,
        }

    def _pick_model(self, res):
        """The model to send (the option, else the first /v1/models lists); the reasons it cannot be had."""
        if self.o["model"]:
            self.model = self.o["model"]
            return []
        client = self._client()
        try:
            res["model"] = self.model = _first_model(client, min(MODELS_TIMEOUT, self._left()))
        except HttpError as exc:
            return [f"cannot list models (to pick one; or set model): {exc.message}"]
        finally:
            client.close()
        return []

    def _measure(self, res):
        for n in self.levels:
            if self._left() <= 0:
                res["deadline_reached"] = True
                res["levels"].append(dict(level_figures([], n, slo=self.o["slo"]), skipped=True))
                continue
            level, reached = self._level(n)
            res["levels"].append(level)
            res["deadline_reached"] = res["deadline_reached"] or reached
        if self.o["greedy_tokens"]:
            res["greedy"] = self._greedy()
            res["deadline_reached"] = res["deadline_reached"] or any(g.get("skipped") for g in res["greedy"])

    def _level_failures(self, res):
        reasons = []
        for level in res["levels"]:
            if level.get("skipped"):
                continue
            if level["completed"] == 0:
                first = level["errors"]["messages"][0] if level["errors"]["messages"] else "none ended in time"
                reasons.append(
                    f"no request completed at concurrency {level['concurrency']} "
                    f"({level['errors']['count']} error(s); first: {first})" + self._outlasted(level)
                )
            elif (level["error_share"] or 0) > self.o["max_error_share"]:
                reasons.append(self._error_share_reason(level))
            elif level["streams_measured"] < level["concurrency"] and not level.get("cut_by_deadline"):
                # A stream busy with one request from before the window to after it has no counted
                # request: the aggregate would miss its share and read low.
                missing = level["concurrency"] - level["streams_measured"]
                reasons.append(
                    f"at concurrency {level['concurrency']}, {missing} stream(s) started no request inside the "
                    f"{_num(self.o['duration'])} s window (one request outlasted it{self._takes(level, ', ')}): "
                    f"{RAISE_DURATION}"
                )
        return reasons

    def _outlasted(self, level):
        """Why no request could be counted when every stream's request outlasted the window: how long one takes, how
        long they had run, what to raise (issue 38: 8 s requests in a 6 s window read only "none ended in time")."""
        running = level.get("outlasted_window_s")
        if level["errors"]["count"] or not running:
            return ""
        takes = self._takes(level)
        takes = f"{takes}, longer than the" if takes else "a request takes longer than the"
        return (
            f": {takes} {_num(self.o['duration'])} s window (no request started inside it; each stream's was still "
            f"running when it ended, after {_num(running)} s): {RAISE_DURATION}"
        )

    @staticmethod
    def _takes(level, lead=""):
        """ "a request takes about 8 s" from the level's estimate (_request_estimate), or "" without one."""
        estimate = level.get("request_estimate_s")
        if not estimate:
            return ""
        bound = "about" if estimate["known"] else "up to about"
        return f"{lead}a request takes {bound} {_num(estimate['seconds'])} s"

    def _error_share_reason(self, level):
        """Why a level with too many failed requests fails: the share, each kind's count and first words, the fix."""
        errors = level["errors"]
        kinds = sorted(errors["kinds"].items(), key=lambda kv: -kv[1]["count"])
        counts = ", ".join(f"{kind} x {info['count']}" for kind, info in kinds)
        firsts = "; ".join(f"first {kind}: {cut(info['first'], 200)}" for kind, info in kinds)
        refused = [kind for kind, _info in kinds if kind in ("HTTP 429", "HTTP 503")]
        fix = (
            "the server refused the load (it sheds requests): lower concurrency to what it admits, or raise its "
            "capacity"
            if refused
            else "the server failed these requests: see the first of each kind"
        )
        return (
            f"at concurrency {level['concurrency']}, {100 * level['error_share']:.0f} % of the counted requests "
            f"failed ({errors['count']} of {errors['count'] + level['completed']}: {counts}), above "
            f"max_error_share {_num(100 * self.o['max_error_share'])} %, so its figures are not a measurement: "
            f"{fix}; {firsts}"
        )

    def _deadline_reason(self, res):
        skipped = [str(x["concurrency"]) for x in res["levels"] if x.get("skipped")]
        not_asked = [str(g["id"]) for g in res["greedy"] if g.get("skipped")]
        return "deadline {} s passed: in-flight requests were cut{}{}".format(
            _num(self.o["deadline"]),
            "; not run: concurrency " + ", ".join(skipped) if skipped else "",
            "; greedy answers not asked: " + ", ".join(not_asked) if not_asked else "",
        )

    def _summary(self, res):
        parts = []
        for x in res["levels"]:
            text = "concurrency {}: {} tok/s, {} req/s, TTFT p50 {} s".format(
                x["concurrency"],
                _num(x["output_tokens_per_second"]),
                _num(x["requests_per_second"]),
                _num(x["ttft_s"]["p50"]),
            )
            if self.o["slo"]:
                text += ", goodput {} tok/s ({} % of requests met the SLO)".format(
                    _num(x["goodput_tokens_per_second"]), _num(100 * (x["slo_attainment"] or 0))
                )
            doubts = x.get("token_count_doubts") or {}
            if doubts.get("count"):
                text += (
                    f" (token count of {doubts['count']} request(s) not believed, chunks counted: {doubts['first']})"
                )
            parts.append(text)
        if res["greedy"]:
            parts.append(
                f"greedy answers to {len(res['greedy'])} prompt(s), up to {self.o['greedy_tokens']} tokens each"
            )
        return "; ".join(parts)

    def _greedy(self):
        """Each prompt once, greedy, one at a time, for its first greedy_tokens tokens, after the levels (so
        the server is warm and idle). The same probe as llm_probe, measured but not judged on speed: what
        counts is the text, which the ddtree_deploy gate compares with the other side's."""
        o = self.o
        answers = []
        for i, item in enumerate(self.greedy_prompts):
            pid = self.prompt_ids[i]
            api = item.get("api", o["api"])
            left = self._left()
            if left <= 0:
                answers.append({"id": pid, "api": api, "verdict": "skipped", "skipped": True, "msg": "not asked"})
                continue
            # Options _validate accepted already: a ProbeError here would be a bug (llm_bench reports it as one).
            r = Probe(
                self.base_url,
                clock=self.clock,
                api=api,
                model=self.model,
                prompt=item.get("prompt"),
                messages=item.get("messages"),
                max_tokens=o["greedy_tokens"],
                temperature=0.0,
                timeout=min(o["timeout"], left),
                min_tokens_per_second=0,
                max_ttft=0,
                api_key=o["api_key"],
                validate_certs=o["validate_certs"],
                headers=o["headers"],
            ).run()
            answer = {k: r.get(k) for k in GREEDY_KEYS if k in r}
            answer.update(id=pid, api=api)
            answers.append(answer)
        return answers

    def _left(self):
        return self.deadline - self.clock()

    def _payload(self, item):
        o = self.o
        body = {
            "model": self.model,
            "max_tokens": item.get("max_tokens") or o["max_tokens"],
            # A prompt's own sampling (a trace's line) wins over the call's (the production settings).
            "temperature": item.get("temperature", o["temperature"]),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if item.get("api", o["api"]) == "chat":
            body["messages"] = item.get("messages") or [{"role": "user", "content": item["prompt"]}]
        else:
            body["prompt"] = item["prompt"]
        top_p = item.get("top_p", o["top_p"])
        if top_p is not None:
            body["top_p"] = top_p
        return body

    def _level(self, n):
        """Run one level; returns (figures, whether the deadline cut it)."""
        clock = self.clock
        cpu0 = time.process_time()
        t0 = clock()
        window_start = t0 + self.o["warmup"]
        window_end = window_start + self.o["duration"]
        cond = threading.Condition()
        state = {"pending": 0, "stop": False, "backoff_s": 0.0, "backoffs": 0}
        records = []
        clients = [self._client() for _worker in range(n)]

        def worker(i):
            client = clients[i]
            k = i  # each worker walks the prompt set from its own offset
            pause = 0.0  # the wait a refusal asked for, before this stream's next request
            while True:
                if pause > 0:
                    self._back_off(cond, state, pause)
                with cond:
                    start = clock()
                    if state["stop"] or (start >= window_end and state["pending"] == 0):
                        return
                    counted = in_window(start, window_start, window_end)
                    if counted:
                        state["pending"] += 1
                rec = Record(i, start, counted)
                rec.prompt = k % len(self.prompts)
                rec.asked = self.prompts[rec.prompt].get("max_tokens") or self.o["max_tokens"]
                self._request(client, self.prompts[rec.prompt], rec, state)
                k += 1
                pause = _pause(rec, pause)
                with cond:
                    records.append(rec)
                    if counted:
                        state["pending"] -= 1
                        cond.notify_all()

        threads = [threading.Thread(target=worker, args=(i,), name=f"llm_bench-{n}-{i}") for i in range(n)]
        for t in threads:
            t.daemon = True  # a thread stuck past its join timeout must not keep the module alive
            t.start()
        reached = False
        with cond:
            while True:
                now = clock()
                if now >= self.deadline:
                    reached = True
                    break
                if now >= window_end and state["pending"] == 0:
                    break
                cond.wait(min(self.deadline, max(window_end, now + 0.05)) - now)
            state["stop"] = True
            cond.notify_all()  # streams waiting out a refusal end now
        # Cut what is still in flight: requests begun after the window (not counted), or, at the
        # deadline, counted ones too (recorded as cut).
        for client in clients:
            client.abort()
        join_end = clock() + JOIN_TIMEOUT
        for t in threads:
            t.join(max(0.0, join_end - clock()))
        for client in clients:
            client.close()
        with cond:
            records = list(records)
        figures = level_figures(records, n, window_start, self.o["slo"])
        figures["rates"] = repeat_rates(records, n, window_start, self.o["duration"], self.o["repeats"])
        figures["window_s"] = _r(self.o["duration"], 3)
        figures["backoff"] = {"waits": state["backoffs"], "seconds": _r(state["backoff_s"], 3)}
        if not reached:
            figures.update(self._outlasting(records, window_start))
        figures["elapsed_s"] = _r(clock() - t0, 3)
        figures["client_cpu_s"] = _r(time.process_time() - cpu0, 3)
        if reached:
            # Its streams were cut mid-request: a rate over what they finished was never measured (issue 38 read
            # 110 tok/s from 2 of 4 streams of a level near 230). The per-request figures stand.
            figures["cut_by_deadline"] = True
            figures.update(dict.fromkeys(CUT_RATES), rates=[])
        return figures, reached

    def _outlasting(self, records, window_start):
        """Requests from the warmup still running at the window's end, cut: how long they had run when none was
        counted (``outlasted_window_s``, a lower bound), and how long one takes at its pace (``request_estimate_s``;
        issue 38: 8 s requests in a 6 s window read only "none ended in time")."""
        self._learn_chunk_tokens(records)
        running = [r for r in records if not r.counted and r.cut and r.start < window_start]
        out = {}
        if running and not any(r.counted for r in records):
            out["outlasted_window_s"] = _r(min(r.end - r.start for r in running), 3)
        estimate = self._request_estimate(running)
        if estimate is not None:
            out["request_estimate_s"] = estimate
        return out

    def _learn_chunk_tokens(self, records):
        for r in records:
            if r.completed and r.times and r.token_source in ("usage", "meta_info") and not r.doubt:
                self._chunk_tokens[0] += r.tokens
                self._chunk_tokens[1] += len(r.times)

    def _request_estimate(self, running):
        """How long a request of this level takes, from requests cut while still running: the time to its last
        chunk, plus the tokens it had left of its max_tokens at the pace its chunks came (the median over the cut
        requests). ``{seconds, tokens_per_chunk, known}``; ``known`` False when no request of the run completed
        with the server's own count, so a chunk is taken as one token and the estimate is an upper bound (a
        speculative server sends several). None when no cut request had two chunks."""
        tokens, chunks = self._chunk_tokens
        per_chunk = tokens / float(chunks) if chunks else 1.0
        each = []
        for r in running:
            if len(r.times) < 2 or not r.asked or r.times[-1] <= r.times[0]:
                continue
            pace = (len(r.times) - 1) / (r.times[-1] - r.times[0])  # chunks a second after the first
            left = max(0.0, r.asked / per_chunk - len(r.times))
            each.append(max(r.end - r.start, r.times[-1] - r.start + left / pace))
        if not each:
            return None
        return {"seconds": _r(percentile(each, 50), 2), "tokens_per_chunk": _r(per_chunk, 2), "known": bool(chunks)}

    def _back_off(self, cond, state, seconds):
        """Wait ``seconds`` (a refusal's Retry-After or backoff) before a stream's next request, or until the level
        stops or the deadline comes."""
        clock = self.clock
        start = clock()
        end = min(start + seconds, self.deadline)
        with cond:
            while not state["stop"] and clock() < end:
                cond.wait(end - clock())
            state["backoffs"] += 1
            state["backoff_s"] += clock() - start

    def _request(self, client, item, rec, state):
        """Send one streamed request and read it into ``rec``; never raises for what a server does."""
        o = self.o
        clock = self.clock
        api = item.get("api", o["api"])
        path = PATHS[api]
        url = client.url(path)
        resp = grace = None
        stream = StreamState(api, max_tokens=item.get("max_tokens") or o["max_tokens"])
        try:
            timeout = min(o["timeout"], self.deadline - clock())
            resp = client.request("POST", path, json_body=self._payload(item), timeout=timeout, stream=True)
            if resp.status_code != 200:
                _refused(rec, resp, url)
                return
            ctype = resp.headers.get("content-type", "").lower()
            if "event-stream" not in ctype:
                rec.error_kind = "not an event stream"
                rec.error = (
                    f"POST {url} answered 200 with content-type {ctype or '(none)'}, not an event stream: "
                    "the server must support stream: true"
                )
                return
            parser = SSEParser()
            t_done = None
            try:
                # Read to the body's end (the chunked terminator follows [DONE] at once), as bench_serving's
                # aiohttp does: the connection then goes back to the pool instead of a new one per request.
                # Once the answer is complete (finish reason and usage, _sse.StreamState.complete) the rest is
                # awaited COMPLETE_GRACE_S, not the timeout: a server may never send [DONE] or close.
                for piece in body_pieces(resp):
                    t = clock()
                    for data in parser.feed(piece):
                        ev = interpret(api, data)
                        rec.rid = rec.rid or ev.rid
                        if stream.add(ev, t):
                            rec.times.append(t)
                    if t_done is None and stream.complete:
                        t_done = t
                        if not stream.done:
                            grace = threading.Timer(COMPLETE_GRACE_S, resp.watchdog.fire)
                            grace.daemon = True
                            grace.start()
                    if stream.error:
                        break
            except Exception:
                if t_done is None:
                    raise
                # The answer was complete: a body that never ends after [DONE] costs its connection only.
            if resp.watchdog.fired and t_done is None:
                raise resp.watchdog.error(url)
            rec.end = t_done or clock()
            if stream.error:
                rec.error_kind = "error event"
                rec.error = f"error in the stream after {stream.completion_tokens} token(s): {cut(stream.error, 300)}"
            elif not stream.done and not stream.finish_reason:
                rec.error_kind = "cut off"
                rec.error = (
                    f"the stream ended without a finish reason or [DONE] after {stream.completion_tokens} token(s)"
                )
            rec.tokens = stream.completion_tokens
            rec.token_source = stream.token_source
            rec.doubt = stream.doubt
        except HttpError as exc:
            self._failed(rec, state, exc.message, exc.kind)
        except Exception as exc:  # requests' and urllib3's mid-stream errors, or the level's abort
            if resp is not None and resp.watchdog.fired and not state["stop"]:
                self._failed(rec, state, resp.watchdog.error(url).message, "timeout")
            else:
                kind, message = describe_transport_error(exc, "POST", url, o["timeout"])
                self._failed(rec, state, message, kind)
        finally:
            if rec.end is None:
                rec.end = clock()
            if grace is not None:
                grace.cancel()
            if resp is not None:
                # The connection goes back to the pool: its watchdog must not fire on the next request.
                resp.watchdog.cancel()
                resp.close()

    def _failed(self, rec, state, message, kind):
        if state["stop"] or self.clock() >= self.deadline:
            rec.cut = True  # stopped by the level's end or the deadline, not the server's doing
        else:
            rec.error, rec.error_kind = message, kind


def _refused(rec, resp, url):
    """A non-200 answer as the record's error, its kind "HTTP <status>"; a 429 or 503 keeps its Retry-After."""
    rec.error = http_status_error("POST", url, resp.status_code, resp.text, resp.headers.get("location")).message
    rec.error_kind = f"HTTP {resp.status_code}"
    if resp.status_code in THROTTLE_STATUSES:
        wait = retry_after(resp.headers.get("retry-after"))
        rec.retry_after = -1.0 if wait is None else wait


def _pause(rec, last):
    """The wait before a stream's next request after ``rec``: its Retry-After, else a backoff doubling from
    BACKOFF_FIRST_S while refusals follow each other; 0 after a request that was not refused."""
    if rec.retry_after is None:
        return 0.0
    if rec.retry_after >= 0:
        return rec.retry_after
    return min(BACKOFF_MAX_S, max(BACKOFF_FIRST_S, 2 * last))


def trace_prompts(text, where="the prompts file"):
    """A JSONL trace (one request a line: ``prompt`` or ``messages``, ``max_tokens``, optionally ``temperature`` and
    ``top_p``) as llm_bench prompts, each named ``line N`` and sent to the API its form needs (messages: chat).
    Blank lines are skipped; a bad line raises BenchError naming ``where``, its number and the fix."""
    out = []
    for number, line in enumerate((text or "").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise BenchError(f"{where} line {number} is not JSON ({exc}): each line is one request object") from None
        if not isinstance(item, dict):
            raise BenchError(f"{where} line {number} must be a JSON object with prompt or messages, got {line[:80]!r}")
        if "max_tokens" not in item:
            raise BenchError(f"{where} line {number} has no max_tokens: each request says how many tokens it asks for")
        entry = dict(item, id=f"line {number}", api="chat" if "messages" in item else "completions")
        try:
            _prompts([entry], entry["api"])
        except BenchError as exc:
            raise BenchError(f"{where} line {number}: {str(exc).replace('prompts[0]', 'the request')}") from None
        out.append(entry)
    if not out:
        raise BenchError(f"{where} holds no request: one JSON object a line, with prompt or messages and max_tokens")
    return out


def _first_model(client, timeout):
    data = client.get_json("/v1/models", timeout=timeout)
    models = data.get("data") if isinstance(data, dict) else None
    if not models:
        raise HttpError("invalid", f"GET {client.url('/v1/models')} lists no models")
    first = models[0]
    return first.get("id") if isinstance(first, dict) else str(first)


def _num(x):
    if x is None:
        return "?"
    if abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:.3g}"


def _seconds(name, value):
    try:
        return as_number(name, value, "a number of seconds", "10")
    except ValueError as exc:
        raise BenchError(str(exc)) from None


def _share(value):
    """max_error_share as a fraction from 0 to 1, or a BenchError naming the fix."""
    try:
        value = as_number("max_error_share", value, "a fraction of the requests from 0 to 1", "0.05")
    except ValueError as exc:
        raise BenchError(str(exc)) from None
    if not 0.0 <= value <= 1.0:
        raise BenchError(
            f"max_error_share is a fraction of a level's requests from 0 to 1 (0.05 is 5 %); got {value:g}"
        )
    return value


def retry_after(value, now=None):
    """Seconds a Retry-After header asks to wait (delta-seconds or an HTTP date, RFC 9110 10.2.3), or None."""
    value = (value or "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _sampling(name, value, low, high, low_open=False):
    """A sampling setting as a float within its range (temperature >= 0; 0 < top_p <= 1), or a BenchError."""
    try:
        value = as_number(name, value)
    except ValueError as exc:
        raise BenchError(str(exc)) from None
    if value < low or (low_open and value == low) or (high is not None and value > high):
        bound = f"above {low:g} and at most {high:g}" if high is not None else f"{low:g} or more"
        raise BenchError(f"{name} must be {bound}; got {value:g}")
    return value


def _level_items(value):
    """The items of concurrency as given: a list, or text as the ad-hoc form writes one (``concurrency=[1,16]``,
    ``concurrency=1,16``: what Ansible's list options accept), or one number."""
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("[") and text.endswith("]"):
            text = text[1:-1].strip()
        return [part.strip() for part in text.split(",")] if text else []
    return [value]


def _levels(value, greedy_only=False):
    """Concurrency levels as a list of whole numbers: an int, a list of them, or such a list as text (the ad-hoc
    form); [] only for greedy answers alone."""
    items = _level_items(value)
    if not items and not greedy_only:
        raise BenchError(
            "concurrency must be a whole number or a list of them, e.g. [1, 16]; got an empty list "
            "(an empty list is for greedy answers alone: set greedy_tokens)"
        )
    levels = []
    for item in items:
        if isinstance(item, bool):
            raise BenchError(f"concurrency takes whole numbers of streams, e.g. [1, 16]; got {str(item).lower()}")
        try:
            n = int(item)
            if isinstance(item, float) and item != n:
                raise ValueError
        except (TypeError, ValueError):
            raise BenchError(
                f"concurrency takes whole numbers of streams: one (16), a list ([1, 16]), or the list as text "
                f"('[1,16]' or '1,16' on the command line); got {item!r}"
                + (f" in {value!r}" if isinstance(value, str) and value.strip() != str(item) else "")
            ) from None
        if not 1 <= n <= MAX_CONCURRENCY:
            raise BenchError(f"concurrency must be between 1 and {MAX_CONCURRENCY} streams; got {n}")
        levels.append(n)
    return levels


def _prompts(items, api, name="prompts"):
    if not isinstance(items, list) or not items:
        raise BenchError(f"{name} must be a non-empty list of {{prompt: ...}} or {{messages: [...]}} entries")
    out = []
    for i, item in enumerate(items):
        where = f"{name}[{i}]"
        if not isinstance(item, dict):
            raise BenchError(f"{where} must be a mapping with prompt or messages; got {item!r}")
        # id and why label a prompt (ddtree_deploy's gate prompt set): not sent.
        unknown = set(item) - {"prompt", "messages", "max_tokens", "api", "id", "why", "temperature", "top_p"}
        if unknown:
            raise BenchError(
                "{} has unknown key(s) {}: use prompt or messages, and max_tokens, api, temperature, top_p".format(
                    where, ", ".join(sorted(unknown))
                )
            )
        item_api = item.get("api", api)
        if item_api not in PATHS:
            raise BenchError("{}.api must be one of {}; got {!r}".format(where, ", ".join(PATHS), item_api))
        if ("prompt" in item) == ("messages" in item):
            raise BenchError(f"{where} needs exactly one of prompt (a string) or messages (a list)")
        if "prompt" in item and not isinstance(item["prompt"], str):
            raise BenchError(f"{where}.prompt must be a string")
        if "messages" in item:
            if item_api != "chat":
                raise BenchError(f"{where} has messages, which only api: chat sends; set api: chat or use prompt")
            if not isinstance(item["messages"], list) or not all(isinstance(m, dict) for m in item["messages"]):
                raise BenchError(f"{where}.messages must be a list of mappings with role and content")
        item = {k: v for k, v in item.items() if k not in ("id", "why")}
        mt = item.get("max_tokens")
        if isinstance(mt, str) and mt.strip().isdigit():
            mt = item["max_tokens"] = int(mt)  # a templated value arrives as a string
        if mt is not None and (isinstance(mt, bool) or not isinstance(mt, int) or mt < 1):
            raise BenchError(f"{where}.max_tokens must be a whole number of at least 1; got {mt!r}")
        if "temperature" in item:
            item["temperature"] = _sampling(f"{where}.temperature", item["temperature"], 0.0, None)
        if "top_p" in item:
            item["top_p"] = _sampling(f"{where}.top_p", item["top_p"], 0.0, 1.0, low_open=True)
        out.append(item)
    return out
