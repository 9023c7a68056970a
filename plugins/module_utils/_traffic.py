# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The levels a unit's own traffic has, from Prometheus (issue 33 item 4). Used by the sglang_traffic module.

    levels = TrafficLevels(client, selector, window="7d", cap=64).read()
    levels["levels"], levels["msg"]   # [1, 9, 22], "your traffic: p50 9, p90 22 running requests over 7 d"

``sglang:num_running_reqs`` is the scheduler's running batch (0.5.23: observability/metrics_collector.py,
the ``num_running_reqs`` gauge, published at each prefill, every --decode-log-interval decode passes and when
the batch goes idle). A unit with several data-parallel ranks has one series per rank, so the series the
selector matches are summed at each step (``STEP``) before the quantiles over the window are taken:
``quantile_over_time(q, sum(sglang:num_running_reqs{<selector>})[<window>:<step>])``. The selector must match
one unit (one job and instance): the sum of two hosts' batches is no host's load.
"""

from __future__ import absolute_import, division, print_function

import math
import re

from ansible_collections.ddtree.sglang.plugins.module_utils._prometheus import PrometheusError

METRIC = "sglang:num_running_reqs"
# One minute: SGLang publishes the gauge every 40 decode passes (seconds under load), Prometheus scrapes every
# 15-60 s; a finer step only repeats samples, and a week is 10,080 of them, well within Prometheus' 11,000
# points a query (the subquery's own limit does not apply, but the cost grows with the steps).
STEP = "1m"
QUANTILES = (0.5, 0.9)
_DURATION = re.compile(r"^(\d+)(ms|s|m|h|d|w|y)$")
_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}


class TrafficError(Exception):
    """Bad options, or Prometheus has no history of the unit: the message names the fix."""


def window_seconds(window):
    """A PromQL duration ("7d", "36h") as seconds, or TrafficError."""
    m = _DURATION.match(str(window or "").strip())
    if not m or int(m.group(1)) <= 0:
        raise TrafficError(
            f"window must be a Prometheus duration such as 7d, 36h or 90m; got {window!r} (one number and its unit)"
        )
    return int(m.group(1)) * _SECONDS[m.group(2)]


def _days(seconds):
    """7 d, 1.5 d, 36 h, 90 min: the span in the largest unit it fills (a minute of staleness aside)."""
    for unit, size in (("d", 86400), ("h", 3600)):
        if seconds >= size:
            n = seconds / size
            return f"{round(n):g} {unit}" if abs(n - round(n)) < 0.05 else f"{n:.1f} {unit}"
    return f"{round(seconds / 60):g} min"


# A minute with fewer running requests than this is idle: it carries no load, so no share of the mix.
IDLE_BELOW = 0.5


def _boundaries(levels):
    """Where one level's share of the load ends and the next one's begins: the geometric mean of two neighbours
    (concurrency is read on a log scale: 3 is as far from 1 as 9 is from 3)."""
    return [round(math.sqrt(levels[i] * levels[i + 1]), 4) for i in range(len(levels) - 1)]


class TrafficLevels:
    def __init__(self, client, selector, window="7d", cap=None):
        if not selector or not str(selector).strip():
            raise TrafficError(
                "prometheus_selector is empty: give the label matchers that select this unit's series, "
                'e.g. instance="ct129:30000"'
            )
        self.client = client
        self.selector = str(selector).strip()
        self.window = str(window).strip()
        self.window_s = window_seconds(self.window)
        if cap is not None and (isinstance(cap, bool) or int(cap) < 1):
            raise TrafficError(f"cap (the unit's max_running_requests) must be 1 or more; got {cap!r}")
        self.cap = None if cap is None else int(cap)
        self.queries = []
        self.warnings = []

    def _query(self, promql):
        self.queries.append(promql)
        res = self.client.query(promql)
        self.warnings.extend(res.warnings or [])
        return res

    def _units(self):
        """The (job, instance) pairs the selector matches over the window."""
        res = self._query(f"count by (job, instance) (last_over_time({METRIC}{{{self.selector}}}[{self.window}]))")
        return [(s.labels.get("job"), s.labels.get("instance")) for s in res.series]

    def mix(self, levels, minutes):
        """The load mix over ``levels`` (issue 35): the share of the window's busy minutes (IDLE_BELOW running
        requests or more) nearest each level, neighbours split at their geometric mean; None without a busy
        minute. With the words that say it."""
        summed = f"sum({METRIC}{{{self.selector}}})"
        at_most = []
        for bound in [IDLE_BELOW] + _boundaries(levels):
            value = self._query(f"sum_over_time(({summed} <= bool {bound:g})[{self.window}:{STEP}])").value()
            at_most.append(0 if value is None or math.isnan(value) else int(round(value)))
        busy = int(minutes or 0) - at_most[0]
        if busy <= 0:
            return None, "no busy minute in the window: no load mix from Prometheus"
        ends = at_most[1:] + [int(minutes)]  # the minutes at or below each level's upper boundary
        mix = {level: round((ends[i] - at_most[i]) / busy, 4) for i, level in enumerate(levels)}
        shares = ", ".join(f"{weight * 100:.0f} % nearest {level}" for level, weight in mix.items())
        return mix, f"your traffic's busy minutes: {shares}"

    def read(self, mix_levels=None):
        """{levels, quantiles, minutes, window, cap, mix, mix_msg, queries, warnings, msg}; TrafficError without
        history. ``mix_levels``: the levels the mix is over (the gate's), else the levels read."""
        units = self._units()
        if not units:
            raise TrafficError(
                f"Prometheus has no {METRIC} series matching {{{self.selector}}} over the last {self.window}: "
                "check that it scrapes the unit's /metrics (--enable-metrics) and set "
                "ddtree_deploy_prometheus_selector to the labels it gives the unit, or leave "
                "ddtree_deploy_prometheus_url unset for the default levels"
            )
        if len(units) > 1:
            named = ", ".join(f'job="{j}", instance="{i}"' for j, i in units[:5])
            raise TrafficError(
                f"{{{self.selector}}} matches {len(units)} units ({named}): the gate needs one unit's load; narrow "
                "ddtree_deploy_prometheus_selector to this host's"
            )
        summed = f"sum({METRIC}{{{self.selector}}})[{self.window}:{STEP}]"
        quantiles = {}
        for q in QUANTILES:
            value = self._query(f"quantile_over_time({q}, {summed})").value()
            quantiles[f"p{int(q * 100)}"] = None if value is None or math.isnan(value) else round(value, 2)
        minutes = self._query(f"count_over_time({summed})").value()
        levels = {1}
        for value in quantiles.values():
            if value is not None:
                n = max(1, int(round(value)))
                levels.add(min(n, self.cap) if self.cap else n)
        covered = int(minutes or 0) * 60
        over = (
            _days(self.window_s) if covered >= 0.95 * self.window_s else f"{_days(covered)} of the last {self.window}"
        )
        msg = f"your traffic: p50 {_n(quantiles['p50'])}, p90 {_n(quantiles['p90'])} running requests over {over}"
        if self.cap and any(v is not None and round(v) > self.cap for v in quantiles.values()):
            msg += f" (capped at the unit's max_running_requests, {self.cap})"
        mix, mix_msg = self.mix(sorted({int(v) for v in mix_levels or levels}), minutes)
        return {
            "mix": mix,
            "mix_msg": mix_msg,
            "levels": sorted(levels),
            "quantiles": quantiles,
            "minutes": int(minutes or 0),
            "window": self.window,
            "cap": self.cap,
            "unit": {"job": units[0][0], "instance": units[0][1]},
            "queries": list(self.queries),
            "warnings": list(self.warnings),
            "msg": msg,
        }


def _n(value):
    return "?" if value is None else str(max(1, int(round(value)))) if value >= 0.5 else f"{value:g}"


def read(client, selector, window="7d", cap=None, mix_levels=None):
    """TrafficLevels(...).read(), with Prometheus' own errors as TrafficError (the message its client gave)."""
    try:
        return TrafficLevels(client, selector, window, cap).read(mix_levels)
    except PrometheusError as exc:
        raise TrafficError(str(exc)) from None
