# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SGLang 0.5.23's /metrics text for tests, made by prometheus_client as SGLang makes it, and a
loopback server that serves a changing series of it.

The metric names, types, label names and histogram buckets are the wheel's
(sglang/srt/observability/): scheduler gauges with labels model_name, engine_type, tp_rank,
pp_rank, moe_ep_rank (metrics_collector.py:1382); tokenizer counters and histograms with
model_name, engine_type (metrics_collector.py:1807) and is_streaming where the wheel adds it;
sglang:http_responses_total with endpoint, status_code, method (http_request_metrics.py:34).
"""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

MODEL = "/models/Qwen3.6-27B"
SCHED_LABELS = {"model_name": MODEL, "engine_type": "unified", "tp_rank": "0", "pp_rank": "0", "moe_ep_rank": "0"}
TOK_LABELS = {"model_name": MODEL, "engine_type": "unified"}

# metrics_collector.py:1966 (TTFT), :2014 (inter-token latency), :1988 (e2e latency)
TTFT_BUCKETS = [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400]
ITL_BUCKETS = [
    0.002,
    0.004,
    0.006,
    0.008,
    0.010,
    0.015,
    0.020,
    0.025,
    0.030,
    0.035,
    0.040,
    0.060,
    0.080,
    0.100,
    0.200,
    0.400,
    0.600,
    0.800,
    1.000,
    2.000,
    4.000,
    6.000,
    8.000,
]
E2E_BUCKETS = [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400]


class SglangMetrics:
    """The cumulative state of one server's metrics; ``serve()`` advances it like traffic does."""

    def __init__(self, accept_length=3.0, gen_throughput=120.0, running=4, queue=0, token_usage=0.2, verify=None):
        self.accept_length = accept_length
        # With ``verify`` (an accept length), sglang:spec_verify_calls_total counts generation tokens / it
        # per request served (metrics_collector.py:1865, inc at :2112); None leaves the counter out.
        self.verify = verify
        self.verify_calls = 0
        self.gen_throughput = gen_throughput
        self.running = running
        self.queue = queue
        self.token_usage = token_usage
        self.requests = 0
        self.aborted = 0
        self.gen_tokens = 0
        self.responses = {}  # status code (str) -> count on /v1/chat/completions
        self.ttft = []
        self.itl = []
        self.e2e = []

    def serve(self, requests, aborted=0, errors=0, ttft=0.3, tokens=200, itl=0.012):
        """``requests`` requests finish (``aborted`` of them aborted, ``errors`` answered 500)."""
        self.requests += requests
        self.aborted += aborted
        self.gen_tokens += requests * tokens
        if self.verify:
            self.verify_calls += requests * tokens / self.verify
        ok = requests - errors
        self.responses["200"] = self.responses.get("200", 0) + ok
        if errors:
            self.responses["500"] = self.responses.get("500", 0) + errors
        self.ttft += [ttft] * requests
        self.itl += [itl] * (requests * 4)
        self.e2e += [ttft + tokens * itl] * requests

    def restart(self):
        """The server process started again: its counters and histograms begin from nothing."""
        self.requests = self.aborted = self.gen_tokens = self.verify_calls = 0
        self.responses = {}
        self.ttft, self.itl, self.e2e = [], [], []

    def render(self):
        """The /metrics text, as prometheus_client's exposition writes it."""
        reg = CollectorRegistry()
        for name, value in (
            ("sglang:num_running_reqs", self.running),
            ("sglang:num_queue_reqs", self.queue),
            ("sglang:gen_throughput", self.gen_throughput),
            ("sglang:token_usage", self.token_usage),
            ("sglang:spec_accept_length", self.accept_length),
        ):
            Gauge(name, "doc", labelnames=list(SCHED_LABELS), registry=reg).labels(**SCHED_LABELS).set(value)
        streaming = dict(TOK_LABELS, is_streaming="false")
        reqs = Counter("sglang:num_requests_total", "doc", labelnames=list(streaming), registry=reg)
        reqs.labels(**streaming).inc(self.requests)
        gen = Counter("sglang:generation_tokens_total", "doc", labelnames=list(streaming), registry=reg)
        gen.labels(**streaming).inc(self.gen_tokens)
        if self.verify:
            verify = Counter("sglang:spec_verify_calls_total", "doc", labelnames=list(TOK_LABELS), registry=reg)
            verify.labels(**TOK_LABELS).inc(self.verify_calls)
        ab = Counter("sglang:num_aborted_requests_total", "doc", labelnames=list(TOK_LABELS), registry=reg)
        ab.labels(**TOK_LABELS).inc(self.aborted)
        resp = Counter(
            "sglang:http_responses_total", "doc", labelnames=["endpoint", "status_code", "method"], registry=reg
        )
        for code, count in sorted(self.responses.items()):
            resp.labels(endpoint="/v1/chat/completions", status_code=code, method="POST").inc(count)
        for name, buckets, labels, values in (
            ("sglang:time_to_first_token_seconds", TTFT_BUCKETS, streaming, self.ttft),
            ("sglang:inter_token_latency_seconds", ITL_BUCKETS, TOK_LABELS, self.itl),
            ("sglang:e2e_request_latency_seconds", E2E_BUCKETS, streaming, self.e2e),
        ):
            h = Histogram(name, "doc", labelnames=list(labels), buckets=buckets, registry=reg).labels(**labels)
            for v in values:
                h.observe(v)
        return generate_latest(reg).decode()


def huge_page(megabytes):
    """An SGLang page with tens of thousands of extra series of a family the bake reads (a label per
    endpoint, as a misbehaving client can make the HTTP middleware count)."""
    m = SglangMetrics()
    m.serve(5)
    rows, size, i = [m.render()], 0, 0
    while size < megabytes * 1e6:
        row = (
            f'sglang:http_responses_total{{endpoint="/v1/completions/{i:09d}/padding-padding-padding",'
            f'method="GET",status_code="404"}} 1.0\n'
        )
        rows.append(row)
        size += len(row)
        i += 1
    return "".join(rows)


class MetricsServer:
    """A loopback HTTP server whose GET /metrics calls ``step(n, state)`` before answering the
    n-th scrape (1-based), then serves ``state.render()``; ``body`` overrides the answer."""

    def __init__(self, state, step=None, port=0):
        self.state = state
        self.step = step
        self.scrapes = 0
        self.body = None
        self.status = 200
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path != "/metrics":
                    self.send_error(404)
                    return
                outer.scrapes += 1
                if outer.step:
                    outer.step(outer.scrapes, outer.state)
                body = (outer.body if outer.body is not None else outer.state.render()).encode()
                self.send_response(outer.status)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
