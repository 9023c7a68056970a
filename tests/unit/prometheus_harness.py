# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Real Prometheus and Alertmanager servers on loopback, for tests (Debian 12's `prometheus` 2.42
and `prometheus-alertmanager` 0.25, installed by scripts/lib/setup.sh; binaries run directly, no
systemd).

    server = PrometheusServer(tmp_path, scrape=[Job("sglang", ["127.0.0.1:30000"], {"host": "sim129"})])
    server.start()                      # listens on a free loopback port; server.url
    server.wait_scraped()               # every target scraped once, and up
    ...
    server.stop()

History: ``backfill(dir, openmetrics_text(...))`` runs ``promtool tsdb create-blocks-from
openmetrics`` into a storage directory that a ``PrometheusServer(storage=dir)`` then serves.

The pytest fixtures ``prometheus``, ``prometheus_backfill`` and ``alertmanager`` (tests/unit/conftest.py)
wrap these and stop what they started. tests/eda uses the classes directly.
"""

import json
import math
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import yaml
from hang_guard import hang_guard

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"
# Debian names the binary after its package (prometheus-alertmanager's /usr/bin/prometheus-alertmanager).
ALERTMANAGER = (
    shutil.which("prometheus-alertmanager") or shutil.which("alertmanager") or "/usr/bin/prometheus-alertmanager"
)
MISSING = "{} is not installed: apt-get install prometheus prometheus-alertmanager (scripts/lib/setup.sh does)"
# Starts per server: a free port picked here can be bound by an xdist peer before the server binds it.
PORT_ATTEMPTS = 3


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url, timeout=2.0):
    """(status, body) of a GET, without any proxy from the environment; (None, reason) when unreachable."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=timeout) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")
    except (urllib.error.URLError, OSError) as exc:
        return None, str(exc)


class Job:
    """One scrape job: its name, ``host:port`` targets, labels added to every target, and how to scrape."""

    def __init__(self, name, targets, labels=None, metrics_path="/metrics", scheme="http", interval=None):
        self.name = name
        self.targets = list(targets)
        self.labels = dict(labels or {})
        self.metrics_path = metrics_path
        self.scheme = scheme
        self.interval = interval

    def config(self):
        group = {"targets": self.targets}
        if self.labels:
            group["labels"] = self.labels
        job = {
            "job_name": self.name,
            "metrics_path": self.metrics_path,
            "scheme": self.scheme,
            "static_configs": [group],
        }
        if self.interval:
            job["scrape_interval"] = job["scrape_timeout"] = _duration(self.interval)
        return job


# The time of each target's latest scrape, for targets that are up. timestamp() of a plain selector is
# the sample's time; of an expression (up == 1) it would be the evaluation's.
UP_SINCE = "timestamp(up) and on (job, instance) (up == 1)"


def _duration(seconds):
    """Prometheus' duration syntax for a number of seconds (``1s``, ``500ms``)."""
    ms = int(round(float(seconds) * 1000))
    return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"


class _Process:
    """A server binary on a free loopback port: started, waited for until ready, stopped."""

    name = "server"
    binary = ""
    ready_line = ""
    ready_path = "/-/ready"

    def __init__(self, directory):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.proc = None
        self.port = None
        self.log_path = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def logs(self):
        return self.log_path.read_text(errors="replace") if self.log_path and self.log_path.exists() else ""

    def command(self):
        raise NotImplementedError

    def start(self, timeout=30.0):
        if not os.path.exists(self.binary):
            raise RuntimeError(MISSING.format(self.binary))
        for _attempt in range(PORT_ATTEMPTS):
            self.port = free_port()
            self.log_path = self.directory / f"{self.name}-{self.port}.log"
            with open(self.log_path, "wb") as log:
                self.proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT, cwd=self.directory)
            if self._wait_ready(timeout):
                return self
            if "address already in use" not in self.logs():
                break
        raise RuntimeError(f"{self.name} did not start on 127.0.0.1:{self.port}:\n{self.logs()[-4000:]}")

    def _wait_ready(self, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                return False
            # Its own log line first: a port that answers may be a peer's server that took our pick.
            if self.ready_line in self.logs() and _get(self.url + self.ready_path)[0] == 200:
                return True
            time.sleep(0.05)
        self.stop()
        return False

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=hang_guard(10))
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


class PrometheusServer(_Process):
    """Prometheus with a config of its own in ``directory``: scrape jobs, rule files, Alertmanagers.

    ``storage`` is its TSDB directory (default: a new one in ``directory``; give a backfilled one
    to serve its history). ``web_config`` (a dict) is its ``--web.config.file``: TLS and basic auth
    on its own HTTP API, as Prometheus serves them itself. ``interval`` is the global scrape and
    rule evaluation interval.
    """

    name = "prometheus"
    binary = PROMETHEUS
    ready_line = "Server is ready to receive web requests."

    def __init__(
        self,
        directory,
        scrape=(),
        rule_files=(),
        alertmanagers=(),
        interval=1.0,
        storage=None,
        web_config=None,
        extra_args=(),
        extra_config=None,
        ready_path="/-/ready",
    ):
        super().__init__(directory)
        self.extra_config = dict(extra_config or {})
        self.ready_path = ready_path
        self.scrape = list(scrape)
        self.rule_files = [str(p) for p in rule_files]
        self.alertmanagers = list(alertmanagers)
        self.interval = interval
        self.storage = Path(storage) if storage else self.directory / "data"
        self.web_config = web_config
        self.extra_args = list(extra_args)
        self.scheme = "https" if web_config and web_config.get("tls_server_config") else "http"

    @property
    def url(self):
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def config(self):
        every = _duration(self.interval)
        config = {
            "global": {"scrape_interval": every, "scrape_timeout": every, "evaluation_interval": every},
            "scrape_configs": [job.config() for job in self.scrape],
        }
        if self.rule_files:
            config["rule_files"] = self.rule_files
        if self.alertmanagers:
            hosts = [a.split("://", 1)[-1].rstrip("/") for a in self.alertmanagers]
            config["alerting"] = {"alertmanagers": [{"static_configs": [{"targets": hosts}]}]}
        config.update(self.extra_config)
        return config

    def command(self):
        config = self.directory / "prometheus.yml"
        config.write_text(yaml.safe_dump(self.config(), sort_keys=False))
        cmd = [
            PROMETHEUS,
            f"--config.file={config}",
            f"--storage.tsdb.path={self.storage}",
            f"--web.listen-address=127.0.0.1:{self.port}",
            # Backfilled weeks stay queryable whatever their age (the default keeps 15 d).
            "--storage.tsdb.retention.time=3650d",
            "--web.enable-lifecycle",
        ]
        if self.web_config:
            web = self.directory / "web.yml"
            web.write_text(yaml.safe_dump(self.web_config))
            cmd.append(f"--web.config.file={web}")
        return cmd + self.extra_args

    def _wait_ready(self, timeout):
        if self.web_config:
            # Its /-/ready needs the same TLS and auth as the API: the log line alone says it is up.
            end = time.monotonic() + timeout
            while time.monotonic() < end and self.proc.poll() is None:
                if self.ready_line in self.logs() and f"127.0.0.1:{self.port}" in self.logs():
                    return True
                time.sleep(0.05)
            return False
        return super()._wait_ready(timeout)

    def api(self, path):
        """The ``data`` of a GET on the API (plain HTTP servers only), for waits in the harness itself."""
        status, body = _get(self.url + "/api/v1/" + path.lstrip("/"))
        if status != 200:
            raise RuntimeError(f"GET {self.url}/api/v1/{path}: {status} {body[:300]}")
        return json.loads(body)["data"]

    def targets(self):
        return self.api("targets?state=active")["activeTargets"]

    def wait_scraped(self, timeout=20.0, scrapes=1):
        """Until every target was scraped ``scrapes`` times from now on, was up, and what it served is
        queryable; the targets then.

        Read from ``timestamp(up)``: a scrape's ``up`` sample is committed with the samples it
        scraped, so once it shows, so do they (the targets API's lastScrape is set before that).
        """
        wanted = sum(len(job.targets) for job in self.scrape)
        end = time.monotonic() + timeout
        seen = []
        for _scrape in range(scrapes):
            since = time.time()
            while True:
                seen = self.api("query?" + urllib.parse.urlencode({"query": UP_SINCE}))["result"]
                if len([r for r in seen if float(r["value"][1]) >= since]) >= wanted:
                    break
                if time.monotonic() > end:
                    raise AssertionError(
                        f"Prometheus did not scrape every target {scrapes} times within {timeout}s: "
                        f"{self.targets()}\n{self.logs()[-2000:]}"
                    )
                time.sleep(self.interval / 4)
        return self.targets()

    def wait_alert(self, name, state="firing", timeout=30.0):
        """Until the alert ``name`` is in ``state``; its entries from /api/v1/alerts then."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            alerts = [a for a in self.api("alerts")["alerts"] if a["labels"].get("alertname") == name]
            if any(a["state"] == state for a in alerts):
                return alerts
            time.sleep(0.2)
        raise AssertionError(f"alert {name} not {state} within {timeout}s: {self.api('alerts')}")


class AlertmanagerServer(_Process):
    """Alertmanager on loopback, sending every alert to ``webhook_url`` at once (no gossip cluster).

    ``group_by`` and the timings are a test's: the first notification of a group goes out after
    ``group_wait`` (default 0 s; Alertmanager's own default is 30 s).
    """

    name = "alertmanager"
    binary = ALERTMANAGER
    ready_line = "Listening on"

    def __init__(self, directory, webhook_url, group_by=("alertname", "host"), group_wait="0s", send_resolved=False):
        super().__init__(directory)
        self.webhook_url = webhook_url
        self.group_by = list(group_by)
        self.group_wait = group_wait
        self.send_resolved = send_resolved

    def config(self):
        return {
            "route": {
                "receiver": "eda",
                "group_by": self.group_by,
                "group_wait": self.group_wait,
                "group_interval": "1s",
                "repeat_interval": "1h",
            },
            "receivers": [
                {"name": "eda", "webhook_configs": [{"url": self.webhook_url, "send_resolved": self.send_resolved}]}
            ],
        }

    def command(self):
        config = self.directory / "alertmanager.yml"
        config.write_text(yaml.safe_dump(self.config(), sort_keys=False))
        storage = self.directory / f"alertmanager-data-{self.port}"
        return [
            ALERTMANAGER,
            f"--config.file={config}",
            f"--storage.path={storage}",
            f"--web.listen-address=127.0.0.1:{self.port}",
            # No gossip: one Alertmanager, and no port of its own to bind (or to collide on).
            "--cluster.listen-address=",
        ]


# ------------------------------------------------------------------------------------ history


def openmetrics_text(series):
    """OpenMetrics text for promtool's backfill from ``series``: ``[(name, labels, [(t, v), ...])]``.

    ``name`` is the sample name as Prometheus will store it (``sglang:num_running_reqs``,
    ``sglang:num_requests_total``); a name ending in ``_total`` is written as a counter family,
    any other as a gauge. ``labels`` must hold what a scrape would have added (``job``,
    ``instance``): a backfill adds none. Times are unix seconds.
    """
    families = {}
    for name, labels, samples in series:
        families.setdefault(name, []).append((labels, samples))
    out = []
    for name, members in families.items():
        counter = name.endswith("_total")
        family = name[: -len("_total")] if counter else name
        out.append(f"# TYPE {family} {'counter' if counter else 'gauge'}")
        for labels, samples in members:
            inner = ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels.items()))
            for t, v in samples:
                out.append(f"{name}{{{inner}}} {_number(v)} {float(t):.3f}")
    out.append("# EOF")
    return "\n".join(out) + "\n"


def _escape(value):
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(v):
    v = float(v)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return repr(v)


def backfill(storage, text, directory=None):
    """``promtool tsdb create-blocks-from openmetrics`` of ``text`` into ``storage``; its output.

    DESIGN.md: checked on these machines (promtool 2.42). The blocks are then served by a
    PrometheusServer whose ``storage`` is that directory.
    """
    if not os.path.exists(PROMTOOL):
        raise RuntimeError(MISSING.format(PROMTOOL))
    storage = Path(storage)
    storage.mkdir(parents=True, exist_ok=True)
    source = Path(directory or storage.parent) / f"backfill-{time.monotonic_ns()}.om"
    source.write_text(text)
    done = subprocess.run(
        [PROMTOOL, "tsdb", "create-blocks-from", "openmetrics", "--quiet", str(source), str(storage)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"promtool backfill failed ({done.returncode}): {done.stdout}{done.stderr}")
    return done.stdout + done.stderr
