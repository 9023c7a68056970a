# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One analysis (issue 36, item 1): the sglang_bake module and the sglang_metrics event source are fed
the same measurements, scraped from the same loopback /metrics server, and reach the same verdict.

Each sequence says what the server does before each scrape after the first (which opens the first window):
``pass`` serves 5 requests at accept length 3.0; ``fail`` serves 5 at 1.02; ``idle`` serves none (no traffic:
inconclusive); ``nodata`` serves 5 with speculative decoding off (no check has data: inconclusive); ``error``
answers 503; ``restart`` starts the process again (its counters from 0) and serves 2. The server has served 10
requests before the first scrape. The checks are the accept-length ones (the abort and 5xx ratios are judged
whenever requests finished; the baseline-relative ones have no baseline here), so that ``nodata`` leaves every
check without data. Limits are the defaults of both (failure 1, inconclusive 2, consecutive errors 2) and the
count is the sequence's length. The verdict is the bake's (it stops at the first verdict, as Argo's analysis
does) and the first verdict the source's events give that is not ``running``.
"""

import asyncio
import runpy
from pathlib import Path

import pytest
from ansible_collections.ddtree.sglang.plugins.modules import sglang_bake
from module_harness import run_main
from sglang_metrics_text import MetricsServer, SglangMetrics

pytestmark = pytest.mark.live_server  # every test serves /metrics (tests/unit/conftest.py)

REPO = Path(__file__).resolve().parents[4]
SOURCE = runpy.run_path(str(REPO / "extensions" / "eda" / "plugins" / "event_source" / "sglang_metrics.py"))
GATE = {"spec_accept_length": 3.1}
CHECKS = [{"name": "aborts", "enabled": False}, {"name": "http_5xx", "enabled": False}]

SEQUENCES = [
    (["pass", "pass", "pass", "pass"], "successful", dict(successful=4, failed=0, inconclusive=0, error=0)),
    (["pass", "fail", "fail", "pass"], "failed", dict(successful=1, failed=2, inconclusive=0, error=0)),
    (["pass", "fail", "pass", "pass"], "successful", dict(successful=3, failed=1, inconclusive=0, error=0)),
    (["idle", "idle", "idle", "pass"], "inconclusive", dict(successful=0, failed=0, inconclusive=3, error=0)),
    (["pass", "idle", "nodata", "pass"], "successful", dict(successful=2, failed=0, inconclusive=2, error=0)),
    (["pass", "nodata", "nodata", "nodata"], "inconclusive", dict(successful=1, failed=0, inconclusive=3, error=0)),
    (["idle", "nodata"], "inconclusive", dict(successful=0, failed=0, inconclusive=2, error=0)),
    (["pass", "error", "error", "error"], "error", dict(successful=1, failed=0, inconclusive=0, error=3)),
    (["pass", "error", "error", "pass"], "successful", dict(successful=2, failed=0, inconclusive=0, error=2)),
    (["pass", "restart", "pass", "pass"], "successful", dict(successful=3, failed=0, inconclusive=0, error=1)),
    (["pass", "restart", "error", "error"], "error", dict(successful=1, failed=0, inconclusive=0, error=3)),
    (["fail", "restart", "fail", "pass"], "failed", dict(successful=0, failed=2, inconclusive=0, error=1)),
    (["restart", "idle", "fail", "idle"], "successful", dict(successful=0, failed=1, inconclusive=2, error=1)),
]


def server_for(sequence):
    """A /metrics server that plays ``sequence`` from its second scrape on."""
    holder = {}

    def step(n, state):
        server = holder["server"]
        server.status = 200
        state.accept_length = 3.0
        kind = sequence[n - 2] if 2 <= n <= len(sequence) + 1 else "idle"
        if kind == "error":
            server.status = 503
        elif kind == "restart":
            state.restart()
            state.serve(2)
        elif kind in ("pass", "fail", "nodata"):
            state.accept_length = {"pass": 3.0, "fail": 1.02, "nodata": 0.0}[kind]
            state.serve(5)

    state = SglangMetrics(accept_length=3.0)
    state.serve(10)
    server = MetricsServer(state, step=step)
    holder["server"] = server
    return server


def bake_verdict(sequence):
    interval = 0.3
    with server_for(sequence) as server:
        failed, result = run_main(
            sglang_bake.main,
            {
                "url": server.url,
                "duration": interval * len(sequence),
                "interval": interval,
                "request_timeout": 2,
                "gate": GATE,
                "checks": CHECKS,
            },
        )
    return result["verdict"], result["analysis"], [m["status"] for m in result["measurements"]]


def source_verdict(sequence):
    with server_for(sequence) as server:
        queue = asyncio.Queue()
        args = {"url": server.url, "interval": 0.2, "count": len(sequence), "once": len(sequence), "gate": GATE}
        args["checks"] = CHECKS
        asyncio.run(SOURCE["main"](queue, args))
    events = [queue.get_nowait()["sglang_metrics"] for _event in range(queue.qsize())]
    statuses = [e["status"] for e in events]
    for i, event in enumerate(events):
        if event["verdict"] != "running":
            return event["verdict"], event["analysis"], statuses[: i + 1]
    return "running", events[-1]["analysis"], statuses


@pytest.mark.parametrize(("sequence", "verdict", "counts"), SEQUENCES, ids=["-".join(s[0]) for s in SEQUENCES])
def test_the_bake_and_the_watch_give_the_same_verdict(sequence, verdict, counts):
    bake = bake_verdict(sequence)
    watch = source_verdict(sequence)
    assert bake[0] == watch[0] == verdict, (bake, watch)
    assert {k: bake[1][k] for k in counts} == {k: watch[1][k] for k in counts} == counts, (bake, watch)
    assert bake[2] == watch[2]
