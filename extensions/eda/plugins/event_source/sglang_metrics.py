# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Event source plugin: poll an SGLang unit's /metrics and emit one judged measurement per interval.

It measures and assesses with the same code, checks table and limits as the ddtree.sglang.sglang_bake
module (plugins/module_utils/_metrics.py's Analysis and assess, Argo Rollouts' assessMetricStatus), over
the last ``count`` measurements: the same measurements give the same verdict in both
(tests/unit/eda/test_one_analysis.py).
"""

import asyncio
import logging
import os
import sys

DOCUMENTATION = r"""
---
short_description: Poll an SGLang unit's Prometheus /metrics and emit judged measurements.
description:
  - An ansible-rulebook event source plugin. Every O(interval) seconds it scrapes O(url)/metrics, derives
    the interval's figures (accept length, aborted requests and 5xx answers per request, generation
    throughput per running request, TTFT p90) and evaluates the bake checks of the collection on them.
  - Each measurement is one event, C(event.sglang_metrics), with C(status) (C(pass), C(fail) when a check
    failed, C(inconclusive) without traffic or when no check had data, C(error) when the scrape failed or
    the server restarted), the window's figures, one verdict per check, and C(verdict), the assessment of
    the last O(count) measurements by the sglang_bake module's own analysis (Argo Rollouts'
    assessMetricStatus; see docs/bake.md) - C(running) until O(count) measurements, then C(successful),
    C(failed) (a check failed in more than its failure limit), C(inconclusive) (more than
    O(inconclusive_limit) inconclusive measurements, or none judged) or C(error) (more than
    O(consecutive_error_limit) errors in a row). C(analysis) holds the counts.
  - C(regression) is true when C(verdict) is C(failed); C(check) and C(message) then name the check, the
    metric, its value and its bound.
  - A server restart (a counter went down) is one C(error) measurement, as in the bake; the restarted
    process's sample opens the next window.
  - C(event.meta.hosts) is O(host), so a C(run_playbook) action limits the play to that host.
options:
  url:
    description: Base URL of the SGLang server, e.g. C(http://ct129:30000).
    type: str
    required: true
  host:
    description: The inventory name of the server's host (the rollback's limit). Default the URL's host.
    type: str
  interval:
    description: Seconds between two scrapes.
    type: float
    default: 15
  count:
    description: How many recent measurements the regression judgement looks at.
    type: int
    default: 4
  failure_limit:
    description: Failed measurements of one check, among the last O(count), tolerated before C(regression).
    type: int
    default: 1
  inconclusive_limit:
    description: Inconclusive measurements, among the last O(count), tolerated before C(verdict=inconclusive).
    type: int
    default: 2
  consecutive_error_limit:
    description: Errors in a row tolerated before C(verdict=error).
    type: int
    default: 2
  checks:
    description: Changes to the default checks, as the sglang_bake module's C(checks) option takes them.
    type: list
    elements: dict
  baseline:
    description: Figures of the NEXTN unit (sglang_bake C(state=baseline)'s C(summary)).
    type: dict
  gate:
    description: Figures measured at the gain gate, e.g. C(spec_accept_length=3.1).
    type: dict
  api_key:
    description: Sent as a Bearer token (SGLang's /metrics needs none; a proxy may).
    type: str
  request_timeout:
    description: Wall-clock bound of one scrape, reading and parsing the page included, in seconds.
    type: float
    default: 5
  once:
    description: Stop after this many measurements (tests); 0 polls for ever.
    type: int
    default: 0
"""

EXAMPLES = r"""
- ddtree.sglang.sglang_metrics:
    url: http://ct129:30000
    host: ct129
    interval: 15
    gate:
      spec_accept_length: 3.1
"""


def _import_metrics():
    """_metrics and HttpClient from this collection, wherever ansible-rulebook found it.

    ansible-rulebook runs a source plugin with runpy, without the collection's ansible_collections
    root on sys.path; the root is seven directories above this file
    (<root>/ansible_collections/ddtree/sglang/extensions/eda/plugins/event_source/).
    """
    try:
        from ansible_collections.ddtree.sglang.plugins.module_utils import _http, _metrics
    except ImportError:
        here = os.path.dirname(os.path.abspath(__file__))
        root = os.path.abspath(os.path.join(here, *[os.pardir] * 7))
        if root not in sys.path:
            sys.path.insert(0, root)
        from ansible_collections.ddtree.sglang.plugins.module_utils import _http, _metrics
    return _http, _metrics


class Watcher:
    """One unit's analysis: _metrics.Analysis over the last ``count`` measurements (the bake's, too)."""

    def __init__(self, args, _http, _metrics):
        self._http = _http
        self._metrics = _metrics
        self.url = args["url"].rstrip("/")
        self.host = args.get("host") or self.url.split("://", 1)[-1].split("/", 1)[0].rsplit(":", 1)[0]
        self.timeout = float(args.get("request_timeout", 5))
        self.client = _http.HttpClient(self.url, timeout=self.timeout, api_key=args.get("api_key"))
        count = int(args.get("count", 4))
        limits = {
            "failure_limit": args.get("failure_limit", 1),
            "inconclusive_limit": args.get("inconclusive_limit", 2),
            "consecutive_error_limit": args.get("consecutive_error_limit", 2),
        }
        self.analysis = _metrics.Analysis(
            _metrics.merge_checks(args.get("checks") or []),
            limits,
            baseline=args.get("baseline"),
            gate=args.get("gate"),
            count=count,
            keep=count,
        )

    def scrape(self):
        try:
            return self._metrics.scrape(self.client, timeout=self.timeout)
        except (self._http.HttpError, self._metrics.MetricsError) as exc:
            return str(exc)

    def measure(self, got):
        """The event of one scrape (``got`` is a Sample or an error message); status ``started`` for the
        first sample, which opens the first window."""
        m = self.analysis.observe(got)
        event = {"url": self.url, "host": self.host, "regression": False}
        if m is None:
            event.update(status="started", window=None, checks=[])
            return event
        event.update({k: m[k] for k in ("status", "window", "checks")})
        if m["error"]:
            event["error"] = m["error"]
        verdict = self.analysis.assess()
        event["verdict"] = verdict["phase"]
        event["analysis"] = {
            k: verdict[k] for k in ("successful", "failed", "inconclusive", "error", "consecutive_error")
        }
        if verdict["phase"] == "failed":
            event.update(
                regression=True,
                check=verdict["failed_checks"][0]["name"],
                message=verdict["failed_checks"][0]["message"],
            )
        return event


async def main(queue, args):
    """Poll /metrics every ``interval`` seconds and put one event per measurement on ``queue``."""
    _http, _metrics = _import_metrics()
    if not _metrics.HAS_PROMETHEUS:
        raise ImportError(
            "sglang_metrics needs prometheus-client in the decision environment (pip install prometheus-client)"
        )
    watcher = Watcher(args, _http, _metrics)
    interval = float(args.get("interval", 15))
    once = int(args.get("once", 0))
    sent = 0
    loop = asyncio.get_running_loop()
    while True:
        started = loop.time()
        got = await asyncio.to_thread(watcher.scrape)
        event = watcher.measure(got)
        if event["status"] != "started":
            await queue.put({"sglang_metrics": event, "meta": {"hosts": watcher.host}})
            sent += 1
            if event["regression"]:
                logging.getLogger(__name__).warning("%s: %s", watcher.host, event["message"])
            if once and sent >= once:
                return
        await asyncio.sleep(max(0.0, interval - (loop.time() - started)))


if __name__ == "__main__":

    class MockQueue:
        async def put(self, event):
            print(event)  # noqa: T201

    asyncio.run(main(MockQueue(), {"url": sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:30000"}))
