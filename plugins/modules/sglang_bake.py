#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

DOCUMENTATION = r"""
---
module: sglang_bake
short_description: Watch an SGLang unit's own metrics under real traffic and judge it against a table of checks
version_added: 0.2.0
description:
  - With O(state=bake), scrapes the server's Prometheus C(/metrics) every O(interval) seconds for O(duration)
    seconds, derives figures for each interval (accept length, aborted requests and 5xx answers per request,
    generation throughput per running request, TTFT p90 from the histogram's buckets) and evaluates a table
    of checks on each measurement. A check fails the bake when it failed in more than its failure limit of
    measurements; the bake stops at that point, without waiting out O(duration).
  - The measurements are assessed by the same analysis as the C(ddtree.sglang.sglang_metrics) event source's
    (plugins/module_utils/_metrics.py C(Analysis), Argo Rollouts' assessMetricStatus), RV(verdict); the
    bake stops at the first verdict that is not C(running). See docs/bake.md, "One analysis".
  - A measurement with no traffic (no request finished, aborted or answered in the interval), or in which no
    check had data, is C(inconclusive), not a pass. When more than O(inconclusive_limit) are, or no
    measurement judged a check by the end, the bake's result is C(inconclusive) and O(inconclusive) decides
    what follows.
  - A server restart (a counter went down) is an C(error) measurement, like a failed scrape.
  - With O(state=baseline), scrapes at the start and the end of O(duration) and returns the figures of that
    one window (RV(summary)), to pass as O(baseline) to the bake of the next unit. The deploy takes it from
    the NEXTN unit before the switch, so the checks compare with NEXTN on the same host.
  - The fields mirror Argo Rollouts' AnalysisTemplate metric fields, C(interval), C(count) (here
    O(duration) / O(interval)), C(failureLimit) (O(failure_limit)), C(inconclusiveLimit)
    (O(inconclusive_limit)) and C(consecutiveErrorLimit) (O(consecutive_error_limit)), with Argo's
    semantics (a limit is exceeded when the count is greater than it). See docs/bake.md.
  - The metrics are parsed with prometheus_client's text parser; each name the module reads is in the
    pinned SGLang wheel (file and line in plugins/module_utils/_metrics.py).
  - With O(prometheus_url), the windows are read from that Prometheus instead of scraping the unit, as Argo
    Rollouts' Prometheus provider does. Every series a check reads becomes a PromQL query over the window, for
    the unit's series (O(prometheus_selector), required then). Counters and histogram buckets are
    C(increase()) over it, gauges C(last_over_time()), a restart is C(resets()). The figures, checks, verdicts
    and report are the same as a scrape's; RV(source) says which was read. Prometheus needs two scrapes of the
    unit in a window, so O(interval) should be at least twice its scrape interval. See docs/bake.md.
author:
  - ddtree.sglang developers (@ddtree)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ddtree.sglang.prometheus
attributes:
  check_mode:
    support: full
    details: The module only reads the server's /metrics.
  diff_mode:
    support: none
  platform:
    platforms: posix
requirements:
  - prometheus-client (Debian and Ubuntu C(python3-prometheus-client), RHEL C(python3-prometheus_client))
  - requests
options:
  state:
    description:
      - V(bake) watches and judges; V(baseline) measures one window and returns its figures.
    type: str
    choices: [bake, baseline]
    default: bake
  url:
    description:
      - Base URL of the server as seen from the managed host.
    type: str
    default: http://127.0.0.1:30000
  metrics_path:
    description:
      - Path of the Prometheus endpoint (SGLang's is C(/metrics), served with C(--enable-metrics)).
    type: str
    default: /metrics
  api_key:
    description:
      - Sent as an C(Authorization) Bearer header when set. SGLang serves C(/metrics) without its API key;
        a proxy in front of it may want one.
    type: str
  duration:
    description:
      - Seconds to watch (Argo's C(count) x C(interval)). With O(state=baseline), the window measured.
    type: float
    default: 90
  interval:
    description:
      - Seconds between two measurements (Argo's C(interval)). SGLang's scheduler gauges change only every
        C(--decode-log-interval) decode steps (40 by default), so an interval of a few seconds at least.
    type: float
    default: 15
  failure_limit:
    description:
      - Failed measurements a check may have before it fails the bake (Argo's C(failureLimit); 0 fails on the
        first). A check may set its own C(failure_limit).
    type: int
    default: 1
  inconclusive_limit:
    description:
      - Measurements without traffic tolerated before the bake is C(inconclusive) (Argo's C(inconclusiveLimit)).
        Whatever this is, a bake in which no measurement had traffic is C(inconclusive).
    type: int
    default: 2
  consecutive_error_limit:
    description:
      - Scrapes in a row that may fail (no answer, an error status, a body that is not Prometheus text) before
        the bake fails (Argo's C(consecutiveErrorLimit)).
    type: int
    default: 2
  inconclusive:
    description:
      - What an C(inconclusive) bake does. V(fail) fails the task (a deploy then rolls back); V(pass) returns
        with RV(result=inconclusive) and a warning.
      - V(load) drives synthetic load when a measurement sees no traffic. From that measurement on, to the end
        of the bake, O(load_concurrency) closed-loop streams send streamed completions to the server, with
        M(ddtree.sglang.llm_bench)'s code (C(plugins/module_utils/_bench.py)). The next windows are judged
        under that load. A bake that is still inconclusive then fails. RV(load) says when the load started.
    type: str
    choices: [fail, pass, load]
    default: fail
  load_concurrency:
    description:
      - Streams of the synthetic load of O(inconclusive=load). Low on purpose. It gives the checks traffic to
        measure, not a load test; the baseline-relative throughput check compares only at similar load.
    type: int
    default: 1
  load_max_tokens:
    description:
      - Tokens each request of the synthetic load asks for (O(inconclusive=load)).
    type: int
    default: 64
  checks:
    description:
      - Changes to the default checks (plugins/module_utils/_metrics.py C(DEFAULT_CHECKS)), as a list of
        dictionaries. An item with the name of a default check changes the keys it gives (C(enabled=false)
        turns it off); an item with a new name adds a check.
      - Keys of a check are C(name), C(value) (one of C(spec_accept_length), C(abort_ratio), C(http_5xx_ratio),
        C(gen_throughput_per_running_req), C(ttft_p90), C(itl_p90), C(requests), C(num_running_reqs)),
        C(comparison) (C(>=), C(>), C(<=), C(<)), and either C(bound) (a number) or C(relative_to)
        (C(baseline) or C(gate)) with C(factor) (and an optional C(offset)); the bound is then factor x the
        reference's figure of the same value + offset. Optional C(similar_load) (compare only while the
        running requests are within this factor of the baseline's), C(failure_limit), C(enabled), C(reason).
    type: list
    elements: dict
    default: []
  replace_checks:
    description:
      - Use O(checks) as the whole table instead of changes to the default checks.
    type: bool
    default: false
  baseline:
    description:
      - Figures of the unit before the switch, as RV(summary) of O(state=baseline) returns them. Checks
        relative to the baseline are skipped without it.
    type: dict
  gate:
    description:
      - Figures measured at the gain gate, by value name, for example C(spec_accept_length=3.1). Checks relative
        to the gate are skipped without the figure they need.
    type: dict
  request_timeout:
    description:
      - Wall-clock bound of one scrape, reading and parsing the page included, in seconds. The whole module
        ends within O(duration) + this.
    type: float
    default: 5
  validate_certs:
    description:
      - Verify the TLS certificate of an https URL.
    type: bool
    default: true
notes:
  - Scheduler gauges (C(sglang:spec_accept_length), C(sglang:gen_throughput), C(sglang:num_running_reqs)) are
    set every C(--decode-log-interval) decode steps; counters and histograms count finished requests.
seealso:
  - module: ddtree.sglang.llm_probe
  - name: Argo Rollouts analysis
    description: The AnalysisTemplate fields this module mirrors.
    link: https://argo-rollouts.readthedocs.io/en/stable/features/analysis/
"""

EXAMPLES = r"""
- name: Measure the NEXTN unit before the switch
  ddtree.sglang.sglang_bake:
    state: baseline
    url: http://127.0.0.1:30000
    duration: 30
  register: bake_baseline

- name: Bake the DDTree unit under real traffic
  ddtree.sglang.sglang_bake:
    url: http://127.0.0.1:30000
    duration: 90
    interval: 15
    failure_limit: 1
    inconclusive: fail
    baseline: "{{ bake_baseline.summary }}"
    gate:
      spec_accept_length: "{{ gate_accept_length }}"
    checks:
      - name: ttft_vs_baseline
        enabled: false
      - name: queue
        value: num_running_reqs
        comparison: "<="
        bound: 64
        reason: more than 64 running requests on this host means the scheduler is behind
  register: bake
"""

RETURN = r"""
result:
  description: C(pass), C(fail) or C(inconclusive) (with O(inconclusive=pass); otherwise the task fails).
  returned: when O(state=bake)
  type: str
  sample: fail
measurements:
  description: Every measurement, for the report, in order.
  returned: when O(state=bake)
  type: list
  elements: dict
  contains:
    index:
      description: 1-based number of the measurement.
      type: int
    elapsed:
      description: Seconds since the bake began, at the end of the window.
      type: float
    status:
      description: C(pass), C(fail) (a check failed), C(inconclusive) (no traffic, or no check had data),
        C(error) (the scrape failed, or the server restarted).
      type: str
    window:
      description: The figures of the window (see RV(summary)), or null after an error.
      type: dict
    checks:
      description: One verdict per check, C(name), C(value), C(bound), C(bound_text), C(result) (C(pass),
        C(fail), C(skip)) and C(detail).
      type: list
      elements: dict
    error:
      description: Why the scrape failed.
      type: str
  sample:
    - index: 3
      elapsed: 45.0
      status: fail
      window: {seconds: 15.0, traffic: true, requests: 12, spec_accept_length: 1.02}
      checks: [{name: accept_length_vs_gate, value: 1.02, bound: 1.86, result: fail,
                bound_text: ">= 1.86, 60 % of 3.1 at the gate", detail: ""}]
verdict:
  description: The analysis' verdict, C(successful), C(failed), C(inconclusive) or C(error) (docs/bake.md,
    "One analysis"); the event source's events carry the same.
  returned: when O(state=bake)
  type: str
  sample: failed
analysis:
  description: The counts the verdict was reached on.
  returned: when O(state=bake)
  type: dict
  sample: {successful: 1, failed: 2, inconclusive: 0, error: 0, consecutive_error: 0}
failed_checks:
  description: The checks that failed the bake, with the cause line of each.
  returned: when O(state=bake)
  type: list
  elements: dict
  sample:
    - name: accept_length_vs_gate
      failed: 3
      counted: 4
      message: >-
        bake: sglang:spec_accept_length 1.02 for 3 of 4 measurements (bound >= 1.86, 60 % of 3.1 at the gate)
summary:
  description:
    - Figures over the whole watched window (first to last good scrape). With O(state=baseline), pass it as
      O(baseline). Keys are the check values (C(spec_accept_length), C(abort_ratio), C(http_5xx_ratio),
      C(gen_throughput_per_running_req), C(ttft_p90), C(itl_p90), C(requests), C(num_running_reqs)) and
      C(seconds), C(traffic), C(restarted), C(aborted), C(generation_tokens); a figure without data is null.
  returned: always
  type: dict
  sample: {seconds: 30.0, traffic: true, requests: 40, spec_accept_length: 2.4, ttft_p90: 0.35}
load:
  description:
    - The synthetic load of O(inconclusive=load), or null when none was driven. C(started_s) is the second
      of the bake it began, C(after_measurement) the measurement without traffic that started it,
      C(concurrency) and C(max_tokens) its settings, C(url) where it sent its requests.
  returned: when O(state=bake)
  type: dict
  sample: {started_s: 15.0, after_measurement: 1, concurrency: 1, max_tokens: 64, url: http://127.0.0.1:30000/v1/completions}
source:
  description: Where the windows were read. C(kind=metrics) with C(url), the unit's own /metrics; or
    C(kind=prometheus) with C(url) and C(selector), the Prometheus server and the unit's series in it.
  returned: when O(state=bake)
  type: dict
  sample: {kind: prometheus, url: "https://prom.example.com", selector: 'instance="ct129:30000"'}
checks:
  description: The checks table the bake used (defaults with O(checks) applied), reasons included.
  returned: when O(state=bake)
  type: list
  elements: dict
elapsed:
  description: Seconds the module took.
  returned: always
  type: float
"""

import threading  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402

from ansible.module_utils.basic import AnsibleModule, missing_required_lib  # noqa: E402

try:
    from ansible_collections.ddtree.sglang.plugins.module_utils import _bench, _metrics, _prometheus
    from ansible_collections.ddtree.sglang.plugins.module_utils._http import HAS_REQUESTS, HttpClient, HttpError
except ImportError:  # requests or prometheus_client may be missing on the managed host
    _metrics = None
    IMPORT_ERROR = traceback.format_exc()
else:
    IMPORT_ERROR = None


def client_url(p):
    return p["url"].rstrip("/") + "/" + p["metrics_path"].lstrip("/")


class LoadDriver:
    """Closed-loop synthetic load in the background (inconclusive=load): llm_bench's Bench at one level for
    the rest of the bake plus one interval, so its last requests end after the bake's last scrape and no
    request it cuts short is counted in a window. The module does not wait for it: its threads are daemons
    and end with the module."""

    def __init__(self, url, seconds, concurrency, max_tokens, timeout, api_key=None, validate_certs=True):
        self.bench = _bench.Bench(
            url,
            concurrency=[concurrency],
            duration=seconds,
            warmup=0,
            max_tokens=max_tokens,
            timeout=timeout,
            api_key=api_key,
            validate_certs=validate_certs,
        )
        self.result = None
        self.thread = threading.Thread(target=self._run, name="sglang_bake-load", daemon=True)

    def _run(self):
        try:
            self.result = self.bench.run()
        except Exception as exc:  # noqa: BLE001 - reported, never raised in a daemon thread
            self.result = {"failed": True, "msg": f"synthetic load stopped: {exc}"}

    def start(self):
        self.thread.start()
        return self

    def error(self):
        """Why the load ended early (it failed), or None while it runs or after it ran well."""
        result = self.result or {}
        return result.get("msg") if result.get("failed") else None


class SglangBake:
    """One bake (or one baseline window) of one server, bounded by duration + request_timeout."""

    def __init__(self, module):
        self.module = module
        self.params = p = module.params
        self.client = HttpClient(
            p["url"], timeout=p["request_timeout"], api_key=p["api_key"], validate_certs=p["validate_certs"]
        )
        self.start = time.monotonic()
        self.deadline = self.start + p["duration"] + p["request_timeout"]
        self.load = None
        self.load_info = None
        # Where the windows come from: two scrapes of the unit, or Prometheus' series of it (prometheus_url).
        self.prometheus = None
        if p["prometheus_url"]:
            try:
                client = _prometheus.client_from_params(p)
            except _prometheus.PrometheusError as exc:
                module.fail_json(msg=f"prometheus: {exc}")
            self.prometheus = _metrics.PrometheusWindows(client, p["prometheus_selector"], deadline=self.deadline)
        self.windows = self.prometheus.measure if self.prometheus else _metrics.measure
        self.source = (
            {"kind": "prometheus", "url": p["prometheus_url"], "selector": p["prometheus_selector"]}
            if self.prometheus
            else {"kind": "metrics", "url": client_url(p)}
        )

    def start_load(self, entry):
        """Drive closed-loop load from now to the end of the bake (and one interval more)."""
        p = self.params
        seconds = max(p["interval"], self.start + p["duration"] - time.monotonic()) + p["interval"]
        self.load = LoadDriver(
            p["url"],
            seconds,
            p["load_concurrency"],
            p["load_max_tokens"],
            timeout=max(p["request_timeout"], 30.0),
            api_key=p["api_key"],
            validate_certs=p["validate_certs"],
        ).start()
        self.load_info = {
            "started_s": round(self.elapsed(), 1),
            "after_measurement": entry["index"],
            "concurrency": p["load_concurrency"],
            "max_tokens": p["load_max_tokens"],
            "url": self.load.bench.base_url + _bench.PATHS["completions"],
        }

    def elapsed(self):
        return round(time.monotonic() - self.start, 3)

    def scrape(self):
        """A Sample, or the error's message (str). Never waits past the deadline. With Prometheus, the
        moment a window ends (the queries are made when the window is measured)."""
        if self.prometheus:
            return _metrics.Moment()
        left = self.deadline - time.monotonic()
        try:
            return _metrics.scrape(
                self.client, self.params["metrics_path"], timeout=min(self.params["request_timeout"], left)
            )
        except (HttpError, _metrics.MetricsError) as exc:
            return str(exc)

    def sleep_until(self, when):
        time.sleep(max(0.0, min(when, self.deadline) - time.monotonic()))

    def fail(self, msg, **result):
        result["elapsed"] = self.elapsed()
        self.module.fail_json(msg=msg, **result)

    def baseline(self):
        first = self.scrape()
        if isinstance(first, str):
            self.fail(f"baseline: cannot read the metrics of {self.params['url']}: {first}")
        self.sleep_until(self.start + self.params["duration"])
        last = self.scrape()
        if isinstance(last, str):
            self.fail(f"baseline: cannot read the metrics of {self.params['url']}: {last}")
        try:
            summary = self.windows(first, last)
        except _metrics.MetricsError as exc:
            self.fail(f"baseline: cannot read the metrics of {self.params['url']}: {exc}")
        summary["source"] = self.source["kind"]
        if not summary["traffic"]:
            self.module.warn(
                f"baseline: no request finished in {summary['seconds']} s; checks relative to the baseline "
                "will be skipped (measure the baseline while the unit serves traffic)"
            )
        return {"changed": False, "summary": summary, "elapsed": self.elapsed()}

    def bake(self, checks):
        """Measure every interval and assess the measurements after each (_metrics.Analysis, the event
        source's too); stop at the first verdict past a limit, as Argo's analysis does."""
        p = self.params
        self.analysis = analysis = _metrics.Analysis(
            checks, p, baseline=p["baseline"], gate=p["gate"], windows=self.windows
        )
        verdict = None
        # A first good sample starts the first window; a scrape that fails before it is an error measurement.
        while analysis.first is None and verdict is None:
            m = analysis.observe(self.scrape(), self.elapsed())
            if m is None:
                break
            verdict = self.verdict_after(m)
            if verdict is None and time.monotonic() + p["interval"] > self.deadline:
                verdict = analysis.assess(terminating=True)
            if verdict is None:
                self.sleep_until(time.monotonic() + p["interval"])
        # Windows follow the first good sample (late when the first scrapes failed); the last one
        # ends by start + duration (half an interval of slack for the time a scrape takes).
        first_at = analysis.first.at if verdict is None else None
        index = 0
        while (
            verdict is None and first_at + (index + 1) * p["interval"] <= self.start + p["duration"] + p["interval"] / 2
        ):
            index += 1
            self.sleep_until(first_at + index * p["interval"])
            verdict = self.verdict_after(analysis.observe(self.scrape(), self.elapsed()))
        return self.conclude(checks, verdict or analysis.assess(terminating=True))

    def verdict_after(self, m):
        """The analysis' verdict once past a limit (None while it runs); starts the synthetic load of
        inconclusive=load at the first measurement without traffic."""
        window = m["window"] or {}
        if m["status"] == "inconclusive" and not window.get("traffic"):
            if self.params["inconclusive"] == "load" and self.load is None:
                self.start_load(m)
        verdict = self.analysis.assess()
        return None if verdict["phase"] == "running" else verdict

    def conclude(self, checks, verdict):
        """The module's result from the analysis' verdict: it returns on success, fails the task otherwise."""
        p = self.params
        measurements = list(self.analysis.measurements)
        result = {
            "changed": False,
            "checks": checks,
            "measurements": measurements,
            "load": self.load_info,
            "source": self.source,
            "summary": self.analysis.summary(),
            "verdict": verdict["phase"],
            "analysis": {k: verdict[k] for k in ("successful", "failed", "inconclusive", "error", "consecutive_error")},
            "failed_checks": verdict["failed_checks"],
            "result": {"successful": "pass", "inconclusive": "inconclusive"}.get(verdict["phase"], "fail"),
        }
        took = f"(window {p['interval']:g} s, {len(measurements)} measurements in {self.elapsed():.0f} s)"
        if verdict["phase"] == "failed":
            self.fail("; ".join(f["message"] for f in verdict["failed_checks"]) + " " + took, **result)
        if verdict["phase"] == "error":
            last = next((m["error"] for m in reversed(measurements) if m["status"] == "error"), "")
            self.fail(
                f"bake: cannot read the metrics of {p['url']} ({verdict['consecutive_error']} scrapes failed in a "
                f"row, consecutive_error_limit {p['consecutive_error_limit']}): {last}",
                **result,
            )
        if verdict["phase"] == "inconclusive":
            self.inconclusive(verdict, result)
        result["elapsed"] = self.elapsed()
        return result

    def inconclusive(self, verdict, result):
        """Fail the task (inconclusive=fail or load) or warn (inconclusive=pass) for an inconclusive bake."""
        p = self.params
        why = (
            f"bake inconclusive: {verdict['inconclusive']} of {len(result['measurements'])} measurements of "
            f"{p['interval']:g} s saw no traffic (no request finished, aborted or answered) or no data for any "
            f"check (inconclusive_limit {p['inconclusive_limit']})"
        )
        if p["inconclusive"] == "load":
            load_error = self.load.error() if self.load is not None else None
            under = ""
            if self.load is not None:
                under = f", under synthetic load from {self.load_info['started_s']:g} s"
                under += f" ({load_error})" if load_error else ""
            self.fail(
                why + under + "; inconclusive=load. The server took no measurable traffic even under load: check "
                "that it answers completions and that its /metrics counts them",
                **result,
            )
        if p["inconclusive"] == "fail":
            self.fail(
                why + "; inconclusive=fail. Bake while the unit serves traffic, or set inconclusive=pass", **result
            )
        self.module.warn(why + "; inconclusive=pass lets the deploy go on")

    def run(self):
        p = self.params
        if self.prometheus:
            try:
                self.prometheus.units()  # one unit, before anything is measured
            except _metrics.MetricsError as exc:
                self.module.fail_json(msg=f"prometheus: {exc}")
        if p["state"] == "baseline":
            return self.baseline()
        try:
            checks = _metrics.merge_checks(p["checks"], defaults=[] if p["replace_checks"] else None)
        except ValueError as exc:
            self.module.fail_json(msg=f"checks: {exc}")
        # Gate figures often come through Jinja as strings ("3.1"): a number in a string is fine.
        for key, value in (p["gate"] or {}).items():
            try:
                p["gate"][key] = None if value is None else float(value)
            except (TypeError, ValueError):
                self.module.fail_json(msg=f"gate: {key} must be a number (the figure the gate measured), got {value!r}")
        return self.bake(checks)


# The options of a module that reads Prometheus (_prometheus.argument_spec(), the ddtree.sglang.prometheus doc
# fragment). Each query is bounded by prometheus_timeout and by the bake's own deadline.
PROMETHEUS_OPTIONS = _prometheus.argument_spec() if _metrics is not None else {}


def main():
    module = AnsibleModule(
        argument_spec=dict(
            state=dict(type="str", default="bake", choices=["bake", "baseline"]),
            url=dict(type="str", default="http://127.0.0.1:30000"),
            metrics_path=dict(type="str", default="/metrics"),
            api_key=dict(type="str", no_log=True),
            duration=dict(type="float", default=90),
            interval=dict(type="float", default=15),
            failure_limit=dict(type="int", default=1),
            inconclusive_limit=dict(type="int", default=2),
            consecutive_error_limit=dict(type="int", default=2),
            inconclusive=dict(type="str", default="fail", choices=["fail", "pass", "load"]),
            load_concurrency=dict(type="int", default=1),
            load_max_tokens=dict(type="int", default=64, no_log=False),
            checks=dict(type="list", elements="dict", default=[]),
            replace_checks=dict(type="bool", default=False),
            baseline=dict(type="dict"),
            gate=dict(type="dict"),
            request_timeout=dict(type="float", default=5),
            validate_certs=dict(type="bool", default=True),
            **PROMETHEUS_OPTIONS,
        ),
        supports_check_mode=True,
        required_by={"prometheus_url": "prometheus_selector"},
    )
    if _metrics is None or not HAS_REQUESTS:
        module.fail_json(msg=missing_required_lib("requests"), exception=IMPORT_ERROR)
    if not _metrics.HAS_PROMETHEUS:
        module.fail_json(
            msg=missing_required_lib("prometheus-client (Debian/Ubuntu: python3-prometheus-client)"),
            exception=_metrics.PROMETHEUS_IMPORT_ERROR,
        )
    for option in ("duration", "interval", "request_timeout"):
        if module.params[option] <= 0:
            module.fail_json(msg=f"{option} must be a positive number of seconds, got {module.params[option]}")
    if module.params["state"] == "bake" and module.params["interval"] > module.params["duration"]:
        module.fail_json(
            msg=f"interval ({module.params['interval']:g} s) must not exceed duration "
            f"({module.params['duration']:g} s): the bake would take no measurement"
        )
    for option in ("load_concurrency", "load_max_tokens"):
        if module.params[option] < 1:
            module.fail_json(msg=f"{option} must be 1 or more, got {module.params[option]}")
    for option in ("failure_limit", "inconclusive_limit", "consecutive_error_limit"):
        if module.params[option] < 0:
            module.fail_json(msg=f"{option} must be 0 or more, got {module.params[option]}")
    module.exit_json(**SglangBake(module).run())


if __name__ == "__main__":
    main()
