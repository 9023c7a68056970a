# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""stream_clients.py, the users of deploy_canary's fleet: every request written down, none retried."""

import json
import subprocess
import sys
import time
from pathlib import Path

from hang_guard import hang_guard

CLIENTS = Path(__file__).resolve().parents[3] / "tests" / "sglang_sim" / "stream_clients.py"
MODEL = "/models/Qwen3.6-27B"  # the simulators' (the fixture's --model-path)


def _records(out):
    return [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []


def _until(out, done, limit=60.0):
    """Wait until ``done(records)`` holds for what the clients wrote down (each line is written when its request
    ends), at most ``limit`` s: the test waits for requests, not for a time that a busy machine may not keep."""
    end = time.monotonic() + limit
    while not done(_records(out)) and time.monotonic() < end:
        time.sleep(0.05)


def run_clients(url, tmp_path, done, during=None, after=None):
    """Run the clients until ``done(records)``; then ``during()`` and on until ``after(records)``."""
    out, stop = tmp_path / "requests.jsonl", tmp_path / "stop"
    proc = subprocess.Popen([sys.executable, str(CLIENTS), url, MODEL, str(out), str(stop), "2", "8", "5"])
    try:
        _until(out, done)
        if during:
            during()
            _until(out, after)
    finally:
        stop.touch()
        proc.wait(timeout=hang_guard(30))
    return _records(out)


def test_every_request_through_the_router_is_written_down(sglang_sim, sglang_router, tmp_path):
    worker = sglang_sim()
    router = sglang_router([worker.base_url])

    records = run_clients(router.url, tmp_path, lambda recs: len(recs) >= 4)

    assert len(records) >= 4
    assert {r["client"] for r in records} == {0, 1}
    for r in records:
        assert r["status"] == 200 and r["done"] and r["error"] is None and r["chunks"] >= 2, r


def test_a_dead_worker_is_written_down_as_failed_requests(sglang_sim, tmp_path):
    worker = sglang_sim()

    records = run_clients(
        worker.base_url,
        tmp_path,
        lambda recs: any(r["done"] for r in recs),
        during=worker.stop,
        after=lambda recs: any(not r["done"] for r in recs),
    )

    assert any(r["done"] for r in records)
    failed = [r for r in records if not r["done"]]
    assert failed and all(r["error"] for r in failed), records
