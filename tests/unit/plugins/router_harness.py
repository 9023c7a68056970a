# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The real sglang-router (PyPI, pinned in requirements-dev.txt) on loopback, for the router tests.

``RouterLauncher(directory).start(worker_urls, policy=..., api_key=...)`` starts
``sglang-router launch`` on a free port (and a free port for its Prometheus exporter: two routers
on the default 29000 would make the second panic, "Address already in use") and hands it over once
``GET /workers`` answers. ``stream(url, ...)`` is a client: one streamed completion, what it got.
"""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import requests
from hang_guard import hang_guard

# The venv's own (requirements-dev.txt), else the one on PATH: the ansible-core matrix's venvs run these tests
# with scripts/test's PATH, which has .venv/bin.
ROUTER_BIN = Path(sys.executable).parent / "sglang-router"
if not ROUTER_BIN.exists() and shutil.which("sglang-router"):
    ROUTER_BIN = Path(shutil.which("sglang-router"))
MODEL = "/models/Qwen3.6-27B"
# Starts per router: free_port's pick can be taken by an xdist peer before the router binds it.
PORT_ATTEMPTS = 3


class RouterServer:
    def __init__(self, proc, port, log_path, api_key=None):
        self.proc = proc
        self.port = port
        self.log_path = log_path
        self.url = f"http://127.0.0.1:{port}"
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    def logs(self):
        return self.log_path.read_text(errors="replace")

    def workers(self):
        resp = requests.get(self.url + "/workers", headers=self.headers, timeout=5)
        resp.raise_for_status()
        return resp.json()["workers"]

    def listed(self, worker_url):
        return next((w for w in self.workers() if w["url"] == worker_url), None)

    def add(self, worker_url, **config):
        resp = requests.post(self.url + "/workers", json=dict(config, url=worker_url), headers=self.headers, timeout=5)
        resp.raise_for_status()

    def wait_listed(self, worker_url, healthy=True, timeout=30.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            entry = self.listed(worker_url)
            if entry is not None and entry["is_healthy"] == healthy:
                return entry
            time.sleep(0.2)
        raise AssertionError(
            f"router did not list {worker_url} (healthy={healthy}) within {timeout}s: {self.workers()}"
        )

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=hang_guard(5))
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class RouterLauncher:
    def __init__(self, directory, free_port):
        self.directory = directory
        self.free_port = free_port
        self.started = []

    def start(self, worker_urls=(), policy="round_robin", api_key=None, args=()):
        assert ROUTER_BIN.exists(), f"{ROUTER_BIN} is missing: pip install -r requirements-dev.txt (sglang-router)"
        for _attempt in range(PORT_ATTEMPTS):
            port, metrics_port = self.free_port(), self.free_port()
            log_path = self.directory / f"router-{port}.log"
            cmd = [str(ROUTER_BIN), "launch", "--host", "127.0.0.1", "--port", str(port),
                   "--prometheus-host", "127.0.0.1", "--prometheus-port", str(metrics_port),
                   "--policy", policy, "--log-level", "warn"]  # fmt: skip
            if worker_urls:
                cmd += ["--worker-urls", *worker_urls]
            if api_key:
                cmd += ["--api-key", api_key]
            cmd += list(args)
            env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
            with open(log_path, "wb") as log:
                proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
            router = RouterServer(proc, port, log_path, api_key)
            self.started.append(router)
            if self._wait_up(router, worker_urls):
                return router
        raise AssertionError(f"sglang-router did not start in {PORT_ATTEMPTS} attempts:\n{router.logs()}")

    @staticmethod
    def _wait_up(router, worker_urls, timeout=30.0):
        """The router answers GET /workers and lists its start-up workers healthy; False when it exited."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if router.proc.poll() is not None:
                return False
            try:
                listed = router.workers()
            except requests.RequestException:
                listed = None
            if listed is not None and sum(1 for w in listed if w["is_healthy"]) >= len(worker_urls):
                return True
            time.sleep(0.1)
        raise AssertionError(f"sglang-router not up within {timeout}s:\n{router.logs()}")

    def stop_all(self):
        for router in self.started:
            router.stop()


def stream(base_url, max_tokens=32, headers=None, timeout=60):
    """One streamed completion through ``base_url``: {ok, done, chunks, seconds, status, error}."""
    body = {"model": MODEL, "prompt": "Explain speculative decoding.", "max_tokens": max_tokens, "stream": True}
    start = time.monotonic()
    out = {"ok": False, "done": False, "chunks": 0, "status": None, "error": None}
    try:
        with requests.post(base_url + "/v1/completions", json=body, headers=headers, stream=True, timeout=timeout) as r:
            out["status"] = r.status_code
            for line in r.iter_lines():
                if line.startswith(b"data:"):
                    out["chunks"] += 1
                    if line.strip() == b"data: [DONE]":
                        out["done"] = True
    except requests.RequestException as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
    out["seconds"] = round(time.monotonic() - start, 3)
    out["ok"] = out["status"] == 200 and out["done"] and out["error"] is None
    return out


def requests_served(sim):
    """The simulator's count of finished requests (sglang:num_requests_total on its /metrics)."""
    total = 0.0
    for line in requests.get(sim.base_url + "/metrics", timeout=5).text.splitlines():
        if line.startswith("sglang:num_requests_total"):
            total += float(line.rsplit(" ", 1)[1])
    return total


def to_json(obj):
    return json.dumps(obj, indent=1, default=str)
