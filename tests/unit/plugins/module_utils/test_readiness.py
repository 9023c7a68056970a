# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One readiness poll, and waiting: the phases a starting SGLang server goes through."""

import time

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils import _readiness


def test_refused_when_nothing_listens(h):
    r = _readiness.poll(f"http://127.0.0.1:{h.free_port()}", timeout=1)
    assert r.phase == "refused" and r.state == "refused"
    assert r.http_status is None and "connection refused" in r.detail
    assert not r.ready


@pytest.mark.wallclock
def test_starting_then_ready_as_the_simulator_loads(sglang_sim):
    sim = sglang_sim(env={"SGLANG_SIM_LOAD_SECONDS": "0.6"})
    first = _readiness.poll(sim.base_url, timeout=2)
    assert (first.phase, first.http_status, first.detail) == ("starting", 503, "503 starting")
    r = _readiness.wait(sim.base_url, 5, interval=0.1, timeout=2)
    assert r.phase == "ready" and r.http_status == 200 and r.ready
    assert 0.3 < r.elapsed < 3


def test_wait_sees_refused_then_starting_then_ready(sglang_sim):
    sim = sglang_sim(env={"SGLANG_SIM_BIND_DELAY_S": "0.4", "SGLANG_SIM_LOAD_SECONDS": "0.4"}, wait=False)
    seen = []
    r = _readiness.wait(sim.base_url, 8, interval=0.05, timeout=1, on_poll=lambda p: seen.append(p.phase))
    assert r.ready
    phases = [p for i, p in enumerate(seen) if i == 0 or seen[i - 1] != p]
    assert phases == ["refused", "starting", "ready"]


@pytest.mark.wallclock
def test_wait_gives_up_on_time_with_the_last_answer(h):
    start = time.monotonic()
    r = _readiness.wait(f"http://127.0.0.1:{h.free_port()}", 0.5, interval=0.1, timeout=1)
    assert r.phase == "refused"
    assert 0.5 <= time.monotonic() - start < 1.5
    assert r.elapsed >= 0.5


def test_unhealthy_on_other_status_quotes_the_body(scripted_server, h):
    url, _seen = scripted_server({"/health": h.Script(500, '{"object":"error","message":"scheduler died"}')})
    r = _readiness.poll(url, timeout=2)
    assert r.phase == "unhealthy" and r.http_status == 500
    assert "scheduler died" in r.detail


@pytest.mark.wallclock
def test_unhealthy_on_timeout(scripted_server, h):
    url, _seen = scripted_server({"/health": h.Script(200, delay=1.0)})
    r = _readiness.poll(url, timeout=0.2)
    assert r.phase == "unhealthy" and r.http_status is None
    assert "timeout" in r.detail or "timed out" in r.detail
    assert r.elapsed < 1


def test_api_key_is_sent_and_health_is_exempt(sglang_sim):
    sim = sglang_sim(args=["--api-key", "k"])
    assert _readiness.poll(sim.base_url).ready  # SGLang does not ask for the key on /health
    assert _readiness.poll(sim.base_url, path="/v1/models").phase == "unhealthy"
    assert _readiness.poll(sim.base_url, path="/v1/models", api_key="k").ready


def test_health_generate_path(sglang_sim):
    sim = sglang_sim()
    r = _readiness.poll(sim.base_url, path="/health_generate")
    assert r.ready and r.detail == "200 ready"
