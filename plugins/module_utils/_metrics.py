# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading SGLang's Prometheus ``/metrics`` and judging a bake window against a table of checks.

    sample = parse(text, at=time.monotonic())          # a Sample: the series the collection reads
    window = measure(before, after)                    # derived values over the window (dict)
    verdicts = judge(window, checks, baseline, gate)   # one verdict per check

The text is read with prometheus_client's parser, not with regexes (``HAS_PROMETHEUS`` is False
when it cannot be imported; modules then fail with ``missing_required_lib("prometheus-client")``,
as they do for requests in _http.py). A Sample keeps only the metrics in ``METRICS`` (each name
read in the SGLang 0.5.23 wheel, file:line beside it), summed over their label sets, since one
unit serves one model (model_name, engine_type, tp_rank ... labels; is_streaming splits requests).

Counters and histograms are cumulative: a window's figures are deltas between two samples.
A counter that went down means the server restarted; the window is then reported as a restart,
never as a negative rate. Gauges are taken from the later sample; SGLang's scheduler sets them
only every ``--decode-log-interval`` decode steps (srt/arg_groups/fields/observability.py:136,
default 40; srt/managers/scheduler_components/metrics_reporter.py:308), so they may lag a window.
"""

from __future__ import absolute_import, division, print_function

import collections
import math
import re
import time
import traceback

from ansible_collections.ddtree.sglang.plugins.module_utils._http import HttpError, http_status_error

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    HAS_PROMETHEUS = False
    PROMETHEUS_IMPORT_ERROR = traceback.format_exc()
else:
    HAS_PROMETHEUS = True
    PROMETHEUS_IMPORT_ERROR = None

# The metrics the collection reads, by exposition name, with their Prometheus type.
# File:line are in the SGLang 0.5.23 wheel (sglang/srt/observability/).
METRICS = {
    # Gauges, set by the scheduler at each decode log interval (metrics_collector.py:1674 for accept length).
    "sglang:spec_accept_length": "gauge",  # metrics_collector.py:512
    "sglang:gen_throughput": "gauge",  # metrics_collector.py:383
    "sglang:num_running_reqs": "gauge",  # metrics_collector.py:365
    "sglang:num_queue_reqs": "gauge",  # metrics_collector.py:371
    "sglang:token_usage": "gauge",  # metrics_collector.py:405
    # Counters (the tokenizer manager's; labels model_name, engine_type[, is_streaming]).
    "sglang:generation_tokens_total": "counter",  # metrics_collector.py:1861
    # Verify passes of the finished requests (speculation on), inc by each one's spec_verify_ct at :2111-2112.
    "sglang:spec_verify_calls_total": "counter",  # metrics_collector.py:1866
    "sglang:num_requests_total": "counter",  # metrics_collector.py:1941
    "sglang:num_aborted_requests_total": "counter",  # metrics_collector.py:1960, inc at :2186
    "sglang:http_responses_total": "counter",  # http_request_metrics.py:35, labels endpoint/status_code/method
    # Histograms (buckets: metrics_collector.py:1966 TTFT, :2014 inter-token, :1988 e2e).
    "sglang:time_to_first_token_seconds": "histogram",  # metrics_collector.py:2041
    "sglang:inter_token_latency_seconds": "histogram",  # metrics_collector.py:2051
    "sglang:e2e_request_latency_seconds": "histogram",  # metrics_collector.py:2068
}

# Derived values a check can name, each with the words a message uses for it.
VALUES = {
    "spec_accept_length": "accept length",
    "abort_ratio": "aborted requests per request (sglang:num_aborted_requests_total / sglang:num_requests_total)",
    "http_5xx_ratio": "5xx answers per answer (sglang:http_responses_total)",
    "gen_throughput_per_running_req": "generation tokens/s per running request "
    "(sglang:gen_throughput / sglang:num_running_reqs)",
    "ttft_p90": "TTFT p90 in seconds (sglang:time_to_first_token_seconds)",
    "itl_p90": "inter-token latency p90 in seconds (sglang:inter_token_latency_seconds)",
    "requests": "requests finished (sglang:num_requests_total)",
    "num_running_reqs": "sglang:num_running_reqs",
}

# Where a window's accept length comes from (its ``accept_length_source``), as a message names it.
ACCEPT_LENGTH_SOURCES = {
    "counters": "accept length over the window (sglang:generation_tokens_total / sglang:spec_verify_calls_total)",
    "gauge": "sglang:spec_accept_length",
}

# Why a figure has no data, where it is not plain (judge's detail of a skipped check).
NO_DATA = {
    "abort_ratio": "no sglang:num_aborted_requests_total on the page (SGLang writes it at its first abort): "
    "no data for abort_ratio",
    "spec_accept_length": "no accept length in the window (no verify pass counted, or speculative decoding off)",
}

COMPARISONS = {
    ">=": lambda v, b: v >= b,
    ">": lambda v, b: v > b,
    "<=": lambda v, b: v <= b,
    "<": lambda v, b: v < b,
}

# The default checks of a bake, as data: the module takes them unless told otherwise, the role
# passes its own table (roles/ddtree_deploy/vars/bake_checks.yml) through the module's checks
# option. A bound is ``value`` (absolute) or ``factor`` x the baseline's or the gate's figure of
# the same value (``relative_to``), plus ``offset``. A check whose reference is missing (no
# baseline, no gate figure) or whose value has no data in a window is not counted for that window.
DEFAULT_CHECKS = [
    {
        "name": "accept_length_vs_gate",
        "value": "spec_accept_length",
        "comparison": ">=",
        "relative_to": "gate",
        "factor": 0.6,
        "reason": "The gate measured this accept length on the same host; below 60 % of it the draft "
        "has stopped matching the target under real traffic (batching, long conversations), and "
        "speculative decoding costs more than it saves.",
    },
    {
        "name": "accept_length_floor",
        "value": "spec_accept_length",
        "comparison": ">=",
        "bound": 1.2,
        "reason": "An accept length near 1.0 means nearly every draft token is rejected: the draft "
        "model produces garbage (a collapse like the reported batch-of-two DSpark case), whatever "
        "the gate measured.",
    },
    {
        "name": "aborts",
        "value": "abort_ratio",
        "comparison": "<=",
        "bound": 0.02,
        "reason": "SGLang counts a request it aborts (client gone, timeout, out of memory); more than "
        "2 % of requests aborted in a window is not client noise.",
    },
    {
        "name": "http_5xx",
        "value": "http_5xx_ratio",
        "comparison": "<=",
        "bound": 0.01,
        "reason": "A 5xx answer is the server failing a request; 1 % leaves room for a single "
        "failure in a busy window.",
    },
    {
        "name": "throughput_vs_baseline",
        "value": "gen_throughput_per_running_req",
        "comparison": ">=",
        "relative_to": "baseline",
        "factor": 0.7,
        "similar_load": 2.0,
        "reason": "The point of DDTree is more tokens/s per request than NEXTN; 30 % below the NEXTN "
        "unit's figure on the same host is a regression. Compared only at similar load (running "
        "requests within a factor 2 of the baseline's), since per-request throughput falls as the "
        "batch grows.",
    },
    {
        "name": "ttft_vs_baseline",
        "value": "ttft_p90",
        "comparison": "<=",
        "relative_to": "baseline",
        "factor": 1.5,
        "offset": 0.2,
        "reason": "Tree drafting adds prefill work; a p90 time to first token 50 % (+0.2 s for "
        "bucket resolution) above NEXTN's means users wait visibly longer.",
    },
]

CHECK_KEYS = (
    "name",
    "value",
    "comparison",
    "bound",
    "relative_to",
    "factor",
    "offset",
    "similar_load",
    "failure_limit",
    "enabled",
    "reason",
)


class MetricsError(Exception):
    """A /metrics body that cannot be used; ``str()`` names the problem and the fix."""


class Sample:
    """The metrics of one scrape, summed over label sets, and when it was taken (monotonic seconds)."""

    def __init__(self, at, gauges, counters, histograms, status_counts, nonfinite=None):
        self.at = at
        self.nonfinite = dict(nonfinite or {})  # series name -> "NaN", "+Inf" or "-Inf" (one of its values)
        self.gauges = gauges  # name -> value
        self.counters = counters  # name -> value
        self.histograms = histograms  # name -> {"buckets": [(le, cumulative count)], "count", "sum"}
        self.status_counts = status_counts  # HTTP status code (str) -> sglang:http_responses_total of POSTs

    def to_dict(self):
        return {
            "at": self.at,
            "gauges": self.gauges,
            "counters": self.counters,
            "histograms": self.histograms,
            "status_counts": self.status_counts,
            "nonfinite": self.nonfinite,
        }

    @classmethod
    def from_dict(cls, data):
        hists = {
            name: {"buckets": [tuple(b) for b in h["buckets"]], "count": h["count"], "sum": h["sum"]}
            for name, h in (data.get("histograms") or {}).items()
        }
        return cls(
            data.get("at", 0.0),
            dict(data.get("gauges") or {}),
            dict(data.get("counters") or {}),
            hists,
            dict(data.get("status_counts") or {}),
            data.get("nonfinite"),
        )


def _family_name(name, kind):
    """The exposition name of a metric, from the family name the parser gives."""
    # The parser strips a counter's _total suffix from the family name (OpenMetrics style).
    if kind == "counter" and not name.endswith("_total"):
        return name + "_total"
    return name


# A sample line begins with a metric name, then its labels or its value (the text format 0.0.4).
_SAMPLE_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*(?=[{ \t])")
# The shape of any sample line: name, optional labels, a value, an optional timestamp. Lines of families the
# collection does not read are only held to it (and their value to being a number), not parsed.
_SAMPLE_SHAPE = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*(?:\{.*\})?[ \t]+(\S+)(?:[ \t]+-?[0-9]+)?[ \t]*$")
# Lines of one family handed to the parser at a time: the deadline is checked between two.
CHUNK_LINES = 1000


def _family_of(name):
    """The name in METRICS a sample or comment name belongs to, or None (others, and _created)."""
    if name.endswith("_created"):
        return None
    if name in METRICS:
        return name
    for suffix in ("_bucket", "_count", "_sum"):
        if name.endswith(suffix) and METRICS.get(name[: -len(suffix)]) == "histogram":
            return name[: -len(suffix)]
    return name + "_total" if METRICS.get(name + "_total") == "counter" else None


def _value_text(value):
    return "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")


class _Page:
    """One /metrics text read line by line within a deadline: its lines of METRICS' families in groups of
    one family (at most CHUNK_LINES), each with the family's HELP/TYPE lines, for prometheus_client's parser."""

    def __init__(self, text, at, deadline):
        self.lines = text.split("\n")
        self.size = len(text)
        self.at = at
        self.deadline = deadline

    def in_time(self, lineno):
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise MetricsError(
                f"reading and parsing the /metrics answer ({self.size / 1e6:.1f} MB, {len(self.lines)} lines) took "
                f"more than request_timeout ({self.deadline - self.at:g} s): stopped at line {lineno} after "
                f"{time.monotonic() - self.at:.1f} s. Raise request_timeout, or serve fewer series from the unit"
            )

    @staticmethod
    def bad_line(lineno, line, exc=None):
        why = f" ({type(exc).__name__}: {str(exc)[:160]})" if exc is not None else ""
        hint = (
            "the page is HTML: check that the url is the SGLang server, not a proxy's error page"
            if line.lstrip().startswith("<")
            else "fix what writes it, or point the url at the SGLang unit"
        )
        return MetricsError(
            f"the /metrics answer is not Prometheus text: line {lineno} is {line.strip()[:200]!r}{why}; {hint}"
        )

    def held_to_shape(self, lineno, line, stripped):
        """MetricsError unless a line of another family has a sample line's shape and a number for value."""
        shape = _SAMPLE_SHAPE.match(stripped)
        try:
            if shape is None:
                raise ValueError("not a sample line: a name, labels in braces, a value, a timestamp")
            float(shape.group(1))
        except ValueError as exc:
            raise self.bad_line(lineno, line, exc) from None

    def groups(self):
        """[(family, header text, [(line number, line)])] in page order; MetricsError for a line that is no
        Prometheus text at all, wherever it is."""
        groups, headers, current = [], {}, None
        for lineno, line in enumerate(self.lines, 1):
            if lineno % CHUNK_LINES == 0:
                self.in_time(lineno)
            stripped = line.strip()
            if not stripped:
                continue
            if stripped.startswith("#"):
                parts = stripped.split(None, 3)
                family = _family_of(parts[2]) if len(parts) >= 3 and parts[1] in ("HELP", "TYPE") else None
                if family:
                    headers.setdefault(family, {})[parts[1]] = stripped
                    current = None
                continue
            match = _SAMPLE_NAME.match(stripped)
            if match is None:
                raise self.bad_line(lineno, line)
            family = _family_of(match.group(0))
            if family is None:
                self.held_to_shape(lineno, line, stripped)
                continue
            if current is None or current[0] != family or len(current[2]) >= CHUNK_LINES:
                head = headers.get(family, {})
                current = (family, "".join(head[k] + "\n" for k in ("HELP", "TYPE") if k in head), [])
                groups.append(current)
            current[2].append((lineno, stripped))
        return groups

    def families(self):
        """The parser's families of every group, the deadline checked between two groups."""
        for _family, header, rows in self.groups():
            self.in_time(rows[0][0])
            try:
                yield from text_string_to_metric_families(header + "\n".join(line for _n, line in rows) + "\n")
            except Exception as exc:  # ValueError, and IndexError/KeyError on some malformed lines
                for lineno, line in rows:  # the first line the parser refuses on its own
                    try:
                        list(text_string_to_metric_families(header + line + "\n"))
                    except Exception as own:  # noqa: BLE001 - the line's own error is the one to quote
                        raise self.bad_line(lineno, line, own) from None
                raise self.bad_line(rows[0][0], rows[0][1], exc) from None


def _add_family(family, sample):
    """Sum one parsed family into ``sample`` (a Sample), noting non-finite values by series."""
    name = _family_name(family.name, family.type)
    kind = METRICS.get(name)
    if kind is None:
        return
    for s in family.samples:
        if s.name.endswith("_created") or (kind == "histogram" and s.name.endswith("_sum")):
            continue
        if not math.isfinite(s.value):
            sample.nonfinite.setdefault(name, _value_text(s.value))
        if kind == "histogram":
            hist = sample.histograms.setdefault(name, {"buckets": {}, "count": 0.0, "sum": 0.0})
            if s.name.endswith("_bucket"):
                le = float(s.labels["le"])
                hist["buckets"][le] = hist["buckets"].get(le, 0.0) + s.value
            elif s.name.endswith("_count"):
                hist["count"] += s.value
            continue
        values = sample.gauges if kind == "gauge" else sample.counters
        values[name] = values.get(name, 0.0) + s.value
        # Answers to the inference APIs only (POST /generate, /v1/completions, /v1/chat/completions):
        # the middleware counts every request (http_request_metrics.py:75-105), this scrape's GET
        # /metrics and a balancer's GET /health included, which are no traffic.
        if name == "sglang:http_responses_total" and s.labels.get("method", "POST") == "POST":
            code = s.labels.get("status_code", "")
            sample.status_counts[code] = sample.status_counts.get(code, 0.0) + s.value


def parse(text, at=0.0, content_type=None, deadline=None):
    """Parse Prometheus text into a Sample; MetricsError for a body that is not Prometheus text.

    Only the families in METRICS are handed to prometheus_client's parser, a family's lines at most
    CHUNK_LINES at a time; every other line must still look like a sample line (a metric name, then its
    labels or value). A line that is not Prometheus text is quoted as itself with its line number. With
    ``deadline`` (time.monotonic()), reading the lines and parsing them stop there, saying so.

    An empty body served as Prometheus text (content_type ``text/plain; version=0.0.4``) is a server
    that has counted nothing yet: SGLang's multiprocess registry writes a family only once it has a
    sample (srt/utils/common.py:2843-2853), so a unit that has served no request answers an empty
    /metrics. That is an empty Sample (no traffic), not an error."""
    if not HAS_PROMETHEUS:
        raise ImportError("prometheus_client is required")
    if (not text or not text.strip()) and "version=0.0.4" in (content_type or ""):
        return Sample(at, {}, {}, {}, {})
    if not text or not text.strip():
        raise MetricsError(
            "the /metrics answer is empty: start the server with --enable-metrics, or point the url at the SGLang unit"
        )
    sample = Sample(at, {}, {}, {}, {})
    for family in _Page(text, at, deadline).families():
        _add_family(family, sample)
    for hist in sample.histograms.values():
        hist["buckets"] = sorted(hist["buckets"].items())
    if not sample.gauges and not sample.counters and not sample.histograms:
        raise MetricsError(
            "the /metrics answer has none of SGLang's sglang:* metrics: the url answers Prometheus text "
            "but not SGLang's (another exporter?), or SGLang has served no request yet"
        )
    return sample


def scrape(client, path="/metrics", timeout=None):
    """GET ``path`` with an _http.HttpClient and parse it: a Sample, or HttpError/MetricsError.

    SGLang serves /metrics without the API key (srt/utils/auth.py:104); a proxy in front of it
    may want one, which the client sends when it has one.
    """
    at = time.monotonic()
    resp = client.request("GET", path, timeout=timeout)
    # Reading the body and parsing it share one bound: the request's timeout, from the start of the request.
    deadline = at + (timeout if timeout is not None else client.timeout)
    if resp.status_code == 404:
        raise HttpError(
            "http",
            f"GET {client.url(path)} answered 404: the server runs without --enable-metrics "
            # srt/entrypoints/http_server.py:314 mounts /metrics only with it.
            "(SGLang serves /metrics only with it); restart the unit with it",
            status=404,
            url=client.url(path),
        )
    if not 200 <= resp.status_code < 300:
        raise http_status_error("GET", client.url(path), resp.status_code, resp.text)
    return parse(resp.text, at=at, content_type=resp.headers.get("content-type"), deadline=deadline)


def histogram_quantile(q, buckets):
    """The q-quantile of cumulative ``[(le, count)]`` buckets, as Prometheus' histogram_quantile does.

    Linear interpolation inside the bucket the rank falls in; the lowest bucket starts at 0; a
    rank in the +Inf bucket answers the highest finite bound. None when there are no observations.
    """
    buckets = sorted(buckets)
    if not buckets or not math.isinf(buckets[-1][0]):
        return None
    total = buckets[-1][1]
    if total <= 0:
        return None
    rank = q * total
    prev_le, prev_count = 0.0, 0.0
    for le, count in buckets:
        if count >= rank:
            if math.isinf(le):
                return prev_le if len(buckets) > 1 else None
            if count == prev_count:
                return le
            return prev_le + (le - prev_le) * (rank - prev_count) / (count - prev_count)
        prev_le, prev_count = le, count
    return buckets[-2][0] if len(buckets) > 1 else None


def bucket_delta(before, after):
    """Buckets of the observations made between two cumulative histograms (same bucket bounds)."""
    old = dict(before["buckets"]) if before else {}
    return [(le, count - old.get(le, 0.0)) for le, count in after["buckets"]]


def _ratio(num, den):
    return None if not den else num / den


# The series each figure of a window reads (the accept length's depend on its source).
VALUE_SERIES = {
    "abort_ratio": ("sglang:num_requests_total", "sglang:num_aborted_requests_total"),
    "http_5xx_ratio": ("sglang:http_responses_total",),
    "gen_throughput_per_running_req": ("sglang:gen_throughput", "sglang:num_running_reqs"),
    "ttft_p90": ("sglang:time_to_first_token_seconds",),
    "itl_p90": ("sglang:inter_token_latency_seconds",),
    "requests": ("sglang:num_requests_total",),
    "aborted": ("sglang:num_aborted_requests_total",),
    "num_running_reqs": ("sglang:num_running_reqs",),
    "generation_tokens": ("sglang:generation_tokens_total",),
}
ACCEPT_LENGTH_SERIES = {
    "counters": ("sglang:generation_tokens_total", "sglang:spec_verify_calls_total"),
    "gauge": ("sglang:spec_accept_length",),
}


def _nonfinite(window, before, after):
    """Figures read from a series with a NaN or an infinite value become None, and ``nonfinite`` names the
    series ({figure: "sglang:... is +Inf"}): a check on them fails (judge) rather than compare a NaN."""
    bad = dict(before.nonfinite, **after.nonfinite)
    window["nonfinite"] = {}
    if not bad:
        return
    series = dict(VALUE_SERIES, spec_accept_length=ACCEPT_LENGTH_SERIES.get(window.get("accept_length_source"), ()))
    for key, names in series.items():
        hit = next((n for n in names if n in bad), None)
        if hit is not None:
            window["nonfinite"][key] = f"{hit} is {bad[hit]}"
            window[key] = None
    # A request counted as NaN or infinite is no evidence of quiet: the window is judged, and fails.
    window["traffic"] = window["traffic"] or bool(window["nonfinite"])


def _accept_length(after, deltas):
    """(source, accept length) of a window: ``counters`` where the unit counts verify passes, else ``gauge``.

    Over the window, generation tokens / verify passes is the accept length of everything the unit served in
    it, as the tokenizer manager computes a request's (completion_tokens / spec_verify_ct,
    srt/managers/tokenizer_manager.py:3167). The gauge sglang:spec_accept_length is only the last decode log
    interval's at scrape time (``mostrecent``), so it is read only where the counter is absent (a release
    without it). None when the window has no verify pass (no speculative request finished in it)."""
    if "sglang:spec_verify_calls_total" in after.counters:
        verify = deltas["sglang:spec_verify_calls_total"]
        tokens = deltas["sglang:generation_tokens_total"]
        return "counters", (round(tokens / verify, 4) if verify > 0 else None)
    accept = after.gauges.get("sglang:spec_accept_length")
    # The scheduler writes 0 when speculative decoding is off
    # (srt/managers/scheduler_components/metrics_reporter.py:968).
    return ("gauge", accept) if accept else (None, None)


def restart_window(seconds):
    """The window of a restart: it spans two processes, so it has no figures (RESTART_ERROR)."""
    window = {"seconds": seconds, "restarted": True, "traffic": False, "accept_length_source": None, "nonfinite": {}}
    window.update((key, None) for key in VALUES)
    return window


def measure(before, after):
    """Derived values over the window between two Samples (dict; None where there is no data).

    ``traffic`` is whether any request finished, aborted or was answered in the window: without
    it a window says nothing (Argo's "inconclusive"). ``restarted`` is set when a counter went down.
    """
    window = {"seconds": round(after.at - before.at, 3)}

    def delta(name):
        return after.counters.get(name, 0.0) - before.counters.get(name, 0.0)

    deltas = {name: delta(name) for name in METRICS if METRICS[name] == "counter"}
    window["restarted"] = any(d < 0 for d in deltas.values())
    if window["restarted"]:
        return restart_window(window["seconds"])
    requests = deltas["sglang:num_requests_total"]
    aborted = deltas["sglang:num_aborted_requests_total"]
    answers = sum(after.status_counts.values()) - sum(before.status_counts.values())
    window["traffic"] = requests > 0 or aborted > 0 or answers > 0
    window["requests"] = requests
    window["aborted"] = aborted
    # An aborted request is also counted in num_requests_total when its output is finished
    # (srt/managers/tokenizer_manager.py:3287, finish reason "abort"); an abort sent before that is not.
    # A page without sglang:num_aborted_requests_total says nothing about aborts: SGLang writes the family at
    # its first abort (metrics_collector.py:2186), and a page that is not SGLang's may never have it. No data,
    # not a ratio of 0: a measurement judged on nothing else is inconclusive.
    counted = "sglang:num_aborted_requests_total" in after.counters
    window["abort_ratio"] = _ratio(aborted, max(requests, aborted)) if counted else None
    fives = sum(
        after.status_counts.get(c, 0.0) - before.status_counts.get(c, 0.0)
        for c in after.status_counts
        if c.startswith("5")
    )
    window["http_5xx_ratio"] = _ratio(fives, answers)
    window["generation_tokens"] = deltas["sglang:generation_tokens_total"]
    window["accept_length_source"], window["spec_accept_length"] = _accept_length(after, deltas)
    running = after.gauges.get("sglang:num_running_reqs")
    window["num_running_reqs"] = running
    gen = after.gauges.get("sglang:gen_throughput")
    window["gen_throughput_per_running_req"] = gen / running if gen is not None and running else None
    for key, name in (
        ("ttft_p90", "sglang:time_to_first_token_seconds"),
        ("itl_p90", "sglang:inter_token_latency_seconds"),
    ):
        hist = after.histograms.get(name)
        window[key] = histogram_quantile(0.9, bucket_delta(before.histograms.get(name), hist)) if hist else None
    for key in ("ttft_p90", "itl_p90", "gen_throughput_per_running_req", "abort_ratio", "http_5xx_ratio"):
        if window[key] is not None:
            window[key] = round(window[key], 4)
    _nonfinite(window, before, after)
    return window


def merge_checks(changes, defaults=None):
    """The default checks with an operator's ``changes`` applied: a change with a known name edits
    that check (``enabled: false`` turns it off), a new name adds a check. Raises ValueError."""
    checks = [dict(c) for c in (DEFAULT_CHECKS if defaults is None else defaults)]
    by_name = {c["name"]: c for c in checks}
    for change in changes or []:
        if not isinstance(change, dict) or not change.get("name"):
            raise ValueError(f"each check must be a dictionary with a name, got {change!r}")
        unknown = sorted(set(change) - set(CHECK_KEYS))
        if unknown:
            raise ValueError(
                f"check {change['name']}: unknown key(s) {', '.join(unknown)}; a check takes {', '.join(CHECK_KEYS)}"
            )
        if change["name"] in by_name:
            by_name[change["name"]].update(change)
        else:
            check = dict(change)
            checks.append(check)
            by_name[check["name"]] = check
    for check in checks:
        validate_check(check)
    return [c for c in checks if c.get("enabled", True)]


def validate_check(check):
    name = check["name"]
    if check.get("value") not in VALUES:
        raise ValueError(f"check {name}: value must be one of {', '.join(VALUES)}, got {check.get('value')!r}")
    if check.get("comparison") not in COMPARISONS:
        raise ValueError(
            f"check {name}: comparison must be one of {', '.join(COMPARISONS)}, got {check.get('comparison')!r}"
        )
    relative = check.get("relative_to")
    if relative not in (None, "baseline", "gate"):
        raise ValueError(f"check {name}: relative_to must be baseline or gate, got {relative!r}")
    if relative is None and not isinstance(check.get("bound"), (int, float)):
        raise ValueError(f"check {name}: give bound (a number), or relative_to (baseline or gate) with a factor")
    if relative is not None and not isinstance(check.get("factor"), (int, float)):
        raise ValueError(f"check {name}: relative_to {relative} needs factor (a number, e.g. 0.6 for 60 %)")
    for key in ("offset", "similar_load"):
        if check.get(key) is not None and not isinstance(check[key], (int, float)):
            raise ValueError(f"check {name}: {key} must be a number, got {check[key]!r}")


def _num(x):
    return (f"{x:.3f}").rstrip("0").rstrip(".") if isinstance(x, float) else str(x)


def bound_of(check, baseline, gate):
    """(bound, words for it) of a check, or (None, why not) when its reference is missing."""
    relative = check.get("relative_to")
    if relative is None:
        return float(check["bound"]), f"{check['comparison']} {_num(float(check['bound']))}"
    figures = (baseline if relative == "baseline" else gate) or {}
    ref = figures.get(check["value"])
    if ref is None:
        return None, f"no {relative} figure for {check['value']}"
    factor = float(check["factor"])
    offset = float(check.get("offset") or 0.0)
    bound = factor * float(ref) + offset
    where = "at the gate" if relative == "gate" else "of the baseline (NEXTN)"
    words = f"{round(factor * 100)} % of {_num(float(ref))} {where}"
    if offset:
        words += f" + {_num(offset)}"
    return bound, f"{check['comparison']} {_num(round(bound, 4))}, {words}"


def judge(window, checks, baseline=None, gate=None):
    """One verdict per check for one window: {"name", "value", "bound", "result", "detail"}.

    ``result`` is ``pass``, ``fail`` or ``skip`` (no data in the window, no reference figure, or a
    load too different from the baseline's to compare).
    """
    verdicts = []
    for check in checks:
        value = window.get(check["value"])
        bound, words = bound_of(check, baseline, gate)
        verdict = {"name": check["name"], "value": value, "bound": bound, "bound_text": words}
        if check["value"] == "spec_accept_length":
            verdict["source"] = window.get("accept_length_source")
        broken = (window.get("nonfinite") or {}).get(check["value"])
        if broken:
            verdict.update(result="fail", detail=f"{broken}: a check needs a finite number", nonfinite=broken)
        elif bound is None:
            verdict.update(result="skip", detail=words)
        elif value is None:
            verdict.update(
                result="skip", detail=NO_DATA.get(check["value"], f"no data for {check['value']} in the window")
            )
        elif check.get("similar_load") and not _similar_load(window, baseline, check["similar_load"]):
            verdict.update(
                result="skip",
                detail=(
                    f"load not comparable: {_num(window.get('num_running_reqs'))} running requests vs "
                    f"{_num((baseline or {}).get('num_running_reqs'))} in the baseline"
                ),
            )
        else:
            ok = COMPARISONS[check["comparison"]](value, bound)
            verdict.update(result="pass" if ok else "fail", detail="")
        verdicts.append(verdict)
    return verdicts


def _similar_load(window, baseline, factor):
    mine = window.get("num_running_reqs")
    theirs = (baseline or {}).get("num_running_reqs")
    if not mine or not theirs:
        return False
    return max(mine, theirs) / min(mine, theirs) <= float(factor)


def failure_message(check, failed, counted, worst):
    """The cause line of a failed check, e.g. ``bake: sglang:spec_accept_length 1.02 for 3 of 4
    measurements (bound >= 1.86, 60 % of 3.1 at the gate)``."""
    if worst.get("nonfinite"):
        return (
            f"bake: {worst['nonfinite']} for {failed} of {counted} measurements (check {check['name']} needs a "
            "finite number: the unit or what serves its /metrics writes a broken value)"
        )
    series = VALUES[check["value"]]
    if check["value"] == "spec_accept_length":
        series = ACCEPT_LENGTH_SOURCES.get(worst.get("source"), ACCEPT_LENGTH_SOURCES["gauge"])
    return f"bake: {series} {_num(worst['value'])} for {failed} of {counted} measurements (bound {worst['bound_text']})"


# --- One analysis for the bake and the watch (Argo Rollouts' assessMetricStatus) -------------------------

# The one rule for a server restart, for every caller: a counter that went down means the window spans
# two processes, so nothing in it can be judged. The measurement is an error (as a scrape that failed),
# counted against consecutive_error_limit; the restarted process's sample opens the next window; the
# measurements before it keep counting (they judged the same unit).
RESTART_ERROR = "a counter went down: the server restarted between two scrapes (nothing in the window can be judged)"

PHASES = ("running", "successful", "failed", "inconclusive", "error")


def measurement(window, checks, baseline=None, gate=None, error=None):
    """One measurement {"status", "window", "checks", "error"} from a window (or a scrape's error).

    ``status`` is ``error`` (the scrape failed, or the server restarted), ``inconclusive`` (no traffic, or
    no check could be judged: every one was skipped), ``fail`` (a check failed) or ``pass``."""
    if window is None or error is not None:
        return {"status": "error", "window": window, "checks": [], "error": error or "no sample"}
    if window.get("restarted"):
        return {"status": "error", "window": window, "checks": [], "error": RESTART_ERROR}
    if not window.get("traffic"):
        return {"status": "inconclusive", "window": window, "checks": [], "error": None}
    verdicts = judge(window, checks, baseline, gate)
    if any(v["result"] == "fail" for v in verdicts):
        status = "fail"
    elif all(v["result"] == "skip" for v in verdicts):
        status = "inconclusive"  # a measurement that judged nothing proves nothing
    else:
        status = "pass"
    return {"status": status, "window": window, "checks": verdicts, "error": None}


def _check_counts(measurements, checks):
    """{check name: (failed, counted, latest failing verdict)} over the measurements."""
    counts = {c["name"]: [0, 0, None] for c in checks}
    for m in measurements:
        for v in m.get("checks") or []:
            if v["name"] not in counts or v["result"] == "skip":
                continue
            counts[v["name"]][1] += 1
            if v["result"] == "fail":
                counts[v["name"]][0] += 1
                counts[v["name"]][2] = v
    return counts


def assess(measurements, checks, limits, count=None, terminating=False):
    """The verdict of a series of measurements (Argo Rollouts' assessMetricStatus), for every caller.

    ``limits``: failure_limit (a check's own ``failure_limit`` first), inconclusive_limit,
    consecutive_error_limit; a limit is exceeded when the count is greater than it. In Argo's order:
    ``failed`` when a check failed in more measurements than its failure limit, ``inconclusive`` when
    more measurements were inconclusive than inconclusive_limit, ``error`` when the latest errors in a
    row are more than consecutive_error_limit. Otherwise ``running`` until ``count`` measurements (or
    ``terminating``), then ``successful``, unless no measurement judged a check: then ``error`` when
    every measurement was an error (the unit was never read), else ``inconclusive``.
    Returns {"phase", "successful", "failed", "inconclusive", "error", "consecutive_error",
    "failed_checks": [{"name", "failed", "counted", "message"}]}."""
    measurements = list(measurements)
    statuses = [m["status"] for m in measurements]
    verdict = {
        "successful": statuses.count("pass"),
        "failed": statuses.count("fail"),
        "inconclusive": statuses.count("inconclusive"),
        "error": statuses.count("error"),
        "consecutive_error": len(statuses) - len("".join("e" if s == "error" else "-" for s in statuses).rstrip("e")),
        "failed_checks": [],
    }
    counts = _check_counts(measurements, checks)
    for check in checks:
        failed, counted, worst = counts[check["name"]]
        if failed > check.get("failure_limit", limits["failure_limit"]):
            message = failure_message(check, failed, counted, worst)
            verdict["failed_checks"].append(
                {"name": check["name"], "failed": failed, "counted": counted, "message": message}
            )
    if verdict["failed_checks"]:
        phase = "failed"
    elif verdict["inconclusive"] > limits["inconclusive_limit"]:
        phase = "inconclusive"
    elif verdict["consecutive_error"] > limits["consecutive_error_limit"]:
        phase = "error"
    elif not terminating and (count is None or len(measurements) < count):
        phase = "running"
    elif verdict["successful"] + verdict["failed"] > 0:
        phase = "successful"
    else:
        phase = "error" if measurements and verdict["error"] == len(measurements) else "inconclusive"
    verdict["phase"] = phase
    return verdict


class Analysis:
    """The measurements of one unit and their verdict: the sglang_bake module and the sglang_metrics event
    source both feed it every scrape (a Sample, or the error's message) and read ``assess()``.

    ``keep`` keeps only the latest measurements (the event source's sliding window of ``count``);
    ``count`` is Argo's count: the verdict is ``running`` until that many measurements."""

    def __init__(self, checks, limits, baseline=None, gate=None, count=None, keep=None, windows=None):
        self.windows = windows or measure  # (before, after) -> window; PrometheusWindows.measure reads Prometheus
        self.checks = checks
        self.limits = {k: int(limits[k]) for k in ("failure_limit", "inconclusive_limit", "consecutive_error_limit")}
        self.baseline = baseline
        self.gate = gate
        self.count = count
        self.measurements = collections.deque(maxlen=keep) if keep else []
        self.first = self.prev = None  # the first and the latest sample of the current process
        self.taken = 0

    def observe(self, got, elapsed=None):
        """Add one scrape: the measurement it makes, or None for the first sample (it opens the first window)."""
        if isinstance(got, str):
            m = measurement(None, self.checks, error=got)
        elif self.prev is None:
            self.first = self.prev = got
            return None
        else:
            try:
                window = self.windows(self.prev, got)
            except MetricsError as exc:  # Prometheus could not answer for this window: the next one spans it too
                m = measurement(None, self.checks, error=str(exc))
            else:
                m = measurement(window, self.checks, self.baseline, self.gate)
                if window["restarted"]:
                    self.first = got  # the restarted process's counters start here
                self.prev = got
        self.taken += 1
        m = dict(index=self.taken, elapsed=elapsed, **m)
        self.measurements.append(m)
        return m

    def assess(self, terminating=False):
        return assess(self.measurements, self.checks, self.limits, count=self.count, terminating=terminating)

    def summary(self):
        """The figures from the first to the latest sample of the current process ({} before any sample)."""
        if self.first is None or self.first is self.prev:
            return {}
        try:
            return self.windows(self.first, self.prev)
        except MetricsError as exc:
            return {"error": str(exc)}


# --- The same windows read from Prometheus (issue 36, item 3) --------------------------------------------


class Moment:
    """A window's edge when Prometheus is the source: ``at`` on the bake's clock (monotonic), ``wall`` on
    Prometheus' (unix seconds), where the query is evaluated."""

    def __init__(self, at=None, wall=None):
        self.at = time.monotonic() if at is None else at
        self.wall = time.time() if wall is None else wall


def _range(seconds):
    return f"{max(1, int(round(seconds * 1000)))}ms"


def prometheus_queries(selector, seconds):
    """{series name: PromQL} of a window of ``seconds`` for the unit's series (``selector``, the inside of
    ``{...}``): per counter its increase, per gauge its latest value, per histogram its buckets' increase by
    ``le``, the POST answers' increase by status code, and the resets of the requests counter (a restart)."""
    w, sel = _range(seconds), selector
    queries = {}
    for name, kind in METRICS.items():
        if kind == "counter" and name != "sglang:http_responses_total":
            queries[name] = f"sum(increase({name}{{{sel}}}[{w}]))"
        elif kind == "gauge":
            queries[name] = f"sum(last_over_time({name}{{{sel}}}[{w}]))"
        elif kind == "histogram":
            queries[name] = f"sum by (le) (increase({name}_bucket{{{sel}}}[{w}]))"
    queries["sglang:http_responses_total"] = (
        f'sum by (status_code) (increase(sglang:http_responses_total{{{sel}, method="POST"}}[{w}]))'
    )
    # Every finished request counts in it (metrics_collector.py:2136): a restart that served a request resets it.
    queries["resets"] = f"sum(resets(sglang:num_requests_total{{{sel}}}[{w}]))"
    return queries


class PrometheusWindows:
    """Windows read from Prometheus instead of two scrapes of the unit, as Argo Rollouts' Prometheus
    provider does: every series a check reads becomes a PromQL query over the window, evaluated at its end,
    for the unit's series (``selector``). The answers make a Sample of the window's increases, which
    measure() turns into the same figures, checks and verdicts as a scrape's (one code path after the
    queries). ``client`` is a _prometheus.PrometheusClient; its errors become MetricsError (an error
    measurement). Prometheus needs two scrapes of the unit inside a window for an increase: give the bake an
    interval of at least twice the scrape interval."""

    def __init__(self, client, selector, deadline=None):
        self.client = client
        self.selector = selector
        self.deadline = deadline  # monotonic; no query waits past it

    def _query(self, query, wall):
        left = None if self.deadline is None else max(0.1, self.deadline - time.monotonic())
        try:
            return self.client.query(query, time=wall, timeout=left).series
        except Exception as exc:  # _prometheus.PrometheusError: its message names the query and the fix
            raise MetricsError(f"Prometheus at {self.client.url}: {exc}") from None

    def units(self):
        """The units (job, instance) whose sglang:* series the selector matches now; MetricsError when it matches
        more than one (a sum over two units would be judged as one)."""
        query = f'count by (job, instance) ({{__name__=~"sglang:.+", {self.selector}}})'
        units = sorted((s.labels.get("job", ""), s.labels.get("instance", "")) for s in self._query(query, time.time()))
        if len(units) > 1:
            named = ", ".join(f'{{job="{job}", instance="{instance}"}}' for job, instance in units[:4])
            raise MetricsError(
                f"prometheus_selector {self.selector} matches {len(units)} units in Prometheus at {self.client.url} "
                f"({named}{' ...' if len(units) > 4 else ''}): give matchers that select the one unit baked"
            )
        return units

    def sample(self, before, after):
        """The window's increases as a Sample (absent series stay absent), and the counters' resets."""
        sample, resets = Sample(after.at, {}, {}, {}, {}), 0.0
        for name, query in prometheus_queries(self.selector, after.at - before.at).items():
            series = self._query(query, after.wall)
            for s in series:
                value = s.value
                if value is not None and not math.isfinite(value) and name != "resets":
                    sample.nonfinite.setdefault(name, _value_text(value))
            if not series:
                continue
            if name == "resets":
                resets = sum(s.value or 0.0 for s in series)
            elif name == "sglang:http_responses_total":
                for s in series:
                    code = s.labels.get("status_code", "")
                    sample.status_counts[code] = sample.status_counts.get(code, 0.0) + s.value
                sample.counters[name] = sum(sample.status_counts.values())
            elif METRICS[name] == "histogram":
                buckets = sorted((float(s.labels["le"]), s.value) for s in series if "le" in s.labels)
                sample.histograms[name] = {"buckets": buckets, "count": buckets[-1][1] if buckets else 0.0, "sum": 0.0}
            else:
                values = sample.gauges if METRICS[name] == "gauge" else sample.counters
                values[name] = sum(s.value for s in series)
        return sample, resets

    def measure(self, before, after):
        """The window between two Moments, from Prometheus: measure()'s figures, or a restart window."""
        sample, resets = self.sample(before, after)
        if resets > 0:
            return restart_window(round(after.at - before.at, 3))
        return measure(Sample(before.at, {}, {}, {}, {}), sample)
