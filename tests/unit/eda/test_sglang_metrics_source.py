# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sglang_metrics event source: events from a loopback /metrics server that regresses."""

import asyncio
import runpy
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests" / "unit" / "plugins"))
from sglang_metrics_text import MetricsServer, SglangMetrics  # noqa: E402

pytestmark = pytest.mark.live_server  # every test serves /metrics (tests/unit/conftest.py)

# ansible-rulebook loads a source plugin with runpy.run_path; so does this test.
PLUGIN = runpy.run_path(str(REPO / "extensions" / "eda" / "plugins" / "event_source" / "sglang_metrics.py"))


def run_source(args):
    queue = asyncio.Queue()
    asyncio.run(PLUGIN["main"](queue, args))
    events = []
    while not queue.empty():
        events.append(queue.get_nowait())
    return events


def test_events_turn_to_regression_after_the_collapse_and_name_the_host():
    def step(n, state):
        state.serve(4, aborted=0)
        if n >= 4:
            state.accept_length = 1.02

    with MetricsServer(SglangMetrics(accept_length=3.0), step=step) as server:
        events = run_source(
            {"url": server.url, "host": "ct129", "interval": 0.2, "once": 5, "gate": {"spec_accept_length": "3.1"}}
        )
    assert [e["meta"]["hosts"] for e in events] == ["ct129"] * 5
    statuses = [e["sglang_metrics"]["status"] for e in events]
    regression = [e["sglang_metrics"]["regression"] for e in events]
    assert statuses == ["pass", "pass", "fail", "fail", "fail"]
    assert regression == [False, False, False, True, True]
    assert events[3]["sglang_metrics"]["message"] == (
        "bake: sglang:spec_accept_length 1.02 for 2 of 4 measurements (bound >= 1.86, 60 % of 3.1 at the gate)"
    )


def test_no_traffic_is_inconclusive_and_a_dead_server_an_error():
    with MetricsServer(SglangMetrics()) as server:
        events = run_source({"url": server.url, "interval": 0.1, "once": 2})
    assert [e["sglang_metrics"]["status"] for e in events] == ["inconclusive", "inconclusive"]
    assert events[0]["meta"]["hosts"] == "127.0.0.1"
    events = run_source({"url": "http://127.0.0.1:9", "interval": 0.1, "once": 1, "request_timeout": 1})
    assert events[0]["sglang_metrics"]["status"] == "error"
    assert "connection refused" in events[0]["sglang_metrics"]["error"]
