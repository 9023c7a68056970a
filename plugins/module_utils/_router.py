# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A worker of an SGLang router (PyPI ``sglang-router``, sgl-model-gateway), taken out and put back.

    router = Router("http://router:30000", api_key=key)
    gone = drain(router, "http://10.0.0.5:30000", InFlight(metrics_client))   # out, requests ended
    back = put_back(router, "http://10.0.0.5:30000", api_key=worker_key)      # in, listed healthy

What the router does, measured against sglang-router 0.3.2 (its wheel's own README, "Worker Management
APIs", and tests/unit/plugins/module_utils/test_router.py against the real binary):

- ``GET /workers`` lists ``{"workers": [{id, url, model_id, priority, cost, worker_type, is_healthy,
  load, connection_mode, ...}], "total", "stats"}``. A worker whose addition is still queued is not
  listed; ``GET /workers/{id}`` shows it with ``job_status`` (``pending``, ``processing``, ``failed``
  and its message).
- ``POST /workers`` with ``{"url", "api_key", ...}`` answers 202 and queues the addition: the router
  checks the worker's ``/health`` (retrying with a growing delay, up to its
  ``--worker-startup-timeout-secs``, 1800 by default) and reads its model, then lists it healthy, about
  2 s after the worker first answers 200. The id is new at every addition. A worker added this way
  does not inherit the router's ``--api-key``: without its own ``api_key`` the router lists it healthy
  (``/health`` needs no key) while every request it routes there answers 401.
- ``DELETE /workers/{id}`` answers 202; the worker leaves the list within a fraction of a second, new
  requests go to the others, and streams already running on it go on to their end (measured: four
  18 s streams, two on the removed worker, all ended with ``[DONE]``). Once removed, the router shows
  nothing of it, its ``load`` included.
- ``load`` counts the requests the router has in flight on a worker only under the policies that
  track it (``cache_aware``, the default, and ``power_of_two``); ``round_robin`` and ``random`` keep it
  at 0 (measured: 0 with two streams running on each worker).
- With ``--api-key`` every route, ``/workers`` included, answers 401 without ``Authorization: Bearer``.

So in-flight requests are watched on the worker itself, which every client reaches: SGLang's
``sglang:num_running_reqs`` and ``sglang:num_queue_reqs`` on its ``/metrics`` (``--enable-metrics``;
srt/observability/metrics_collector.py:364-375 in the 0.5.23 wheel). An idle scheduler publishes the
running gauge at once when it went stale (scheduler_components/metrics_reporter.py:1476-1516), so
the gauge reaches 0 when the last request ends, not a decode-log interval later. A worker without
``/metrics`` cannot be watched: the router's ``load`` read right before the removal is then the count,
and the drain waits a fixed time (``unwatched``) for it.
"""

from __future__ import absolute_import, division, print_function

import time

from ansible_collections.ddtree.sglang.plugins.module_utils import _metrics
from ansible_collections.ddtree.sglang.plugins.module_utils._http import HttpClient, HttpError

SOURCES = ("auto", "metrics", "router")
# How long a removal the router accepted may take to leave its list (measured: well under a second).
REMOVAL_SETTLE_S = 10.0
# The in-flight count must read 0 this many times in a row: a request the router sent just before the
# removal may not have reached the scheduler at the first read.
QUIET_READS = 2


class RouterError(Exception):
    """A router or worker state the caller must act on; ``str()`` names the problem and the fix.

    ``details``: what was done before it failed (a drain that removed the worker says when), for the caller's
    result."""

    def __init__(self, message, details=None):
        super(RouterError, self).__init__(message)
        self.details = details or {}


def same_url(a, b):
    """Whether two worker URLs name the same worker (the router lists them as they were given)."""
    return (a or "").rstrip("/").lower() == (b or "").rstrip("/").lower()


def _brief(entry):
    """A worker entry as a message quotes it."""
    return f"{entry.get('url')} ({'healthy' if entry.get('is_healthy') else 'unhealthy'}, load {entry.get('load')})"


class Router:
    """The management API of one sglang-router: list, add and remove workers."""

    def __init__(self, url, api_key=None, headers=None, validate_certs=True, timeout=10.0):
        self.url = (url or "").rstrip("/")
        self.client = HttpClient(
            self.url, timeout=timeout, api_key=api_key, validate_certs=validate_certs, headers=headers
        )

    def _call(self, method, path, body=None, ok=(200, 202)):
        try:
            resp = self.client.request(method, path, json_body=body)
        except HttpError as exc:
            raise RouterError(
                f"cannot reach the router at {self.url}: {exc}. Check ddtree_deploy_router_url (the router's HTTP "
                "port, as this machine reaches it) and that sglang-router runs there"
            ) from None
        if resp.status_code in (401, 403):
            raise RouterError(
                f"the router at {self.url} refused {method} {path} (HTTP {resp.status_code}): it runs with --api-key "
                "or control-plane keys; set ddtree_deploy_router_api_key to that key (sent as Authorization: Bearer; "
                "a control-plane key needs the admin role)"
            )
        if resp.status_code == 404 and path == "/workers":
            raise RouterError(
                f"{self.url} has no /workers API (GET /workers answered 404): it is not an sglang-router, or one "
                "older than the worker management API this module uses (tested with sglang-router 0.3.2). Point "
                "ddtree_deploy_router_url at the router's HTTP port"
            )
        if resp.status_code not in ok:
            raise RouterError(
                f"the router at {self.url} answered {method} {path} with HTTP {resp.status_code}: {resp.text[:300]}"
            )
        try:
            return resp.status_code, resp.json()
        except ValueError:
            raise RouterError(
                f"the router at {self.url} answered {method} {path} with something other than JSON: {resp.text[:200]!r}"
            ) from None

    def workers(self):
        """Every worker the router lists (additions still queued are not listed)."""
        data = self._call("GET", "/workers")[1]
        if not isinstance(data, dict) or not isinstance(data.get("workers"), list):
            raise RouterError(f"GET {self.url}/workers did not answer a worker list: {str(data)[:200]}")
        return data["workers"]

    def find(self, worker_url, workers=None):
        """The router's entry for ``worker_url``, or None."""
        return next(
            (w for w in (self.workers() if workers is None else workers) if same_url(w.get("url"), worker_url)), None
        )

    def remove(self, entry):
        self._call("DELETE", f"/workers/{entry['id']}")

    def add(self, worker_url, api_key=None, config=None):
        """Queue the addition; the router's answer (``worker_id`` of the queued job among it)."""
        body = dict(config or {})
        body["url"] = worker_url
        if api_key:
            body["api_key"] = api_key
        return self._call("POST", "/workers", body)[1]

    def job(self, worker_id):
        """``GET /workers/{id}``: the worker or its queued job (``job_status``), None once unknown."""
        status, data = self._call("GET", f"/workers/{worker_id}", ok=(200, 404))
        return data if status == 200 else None

    def close(self):
        self.client.close()


class InFlight:
    """The requests a worker has running or queued, from its own /metrics."""

    def __init__(self, client):
        self.client = client

    def count(self):
        """Running + queued requests; HttpError (404: no --enable-metrics) or MetricsError when unreadable."""
        sample = _metrics.scrape(self.client)
        gauges = sample.gauges
        # A server that has run nothing since it started has no samples of either gauge: nothing in flight.
        return int(round(gauges.get("sglang:num_running_reqs", 0.0) + gauges.get("sglang:num_queue_reqs", 0.0)))


def _first_count(inflight, source):
    """(source used, count or None, why the metrics were not used): the server's gauges when it can tell."""
    if source == "router" or inflight is None:
        return "router", None, "drain_source is router" if source == "router" else "no metrics url"
    try:
        return "metrics", inflight.count(), None
    except HttpError as exc:
        if exc.kind == "refused":
            # Nothing listens: nothing can be running there.
            return "metrics", 0, None
        why = str(exc)
    except _metrics.MetricsError as exc:
        why = str(exc)
    if source == "metrics":
        raise RouterError(
            f"cannot count the worker's in-flight requests on its /metrics: {why}. Serve /metrics on the unit "
            "(sglang_enable_metrics: true renders --enable-metrics), or set ddtree_deploy_router_drain_source "
            "to auto or router"
        )
    return "router", None, why


def drain(router, worker_url, inflight=None, source="auto", timeout=300.0, unwatched=30.0, min_others=1,
          interval=1.0, check_mode=False, require_listed=True):  # fmt: skip
    """Take ``worker_url`` out of the router and wait, bounded, until its in-flight requests have ended.

    Returns ``{changed, worker, removed_at, drain: {source, watched, in_flight_at_removal, drained,
    still_running, seconds, note}, others_healthy}``; RouterError when the router cannot be used, does not list the
    worker (``require_listed``: a URL the router does not know it by), when the removal would leave fewer than
    ``min_others`` healthy workers, or when requests still run at ``timeout``.
    """
    listed = router.workers()
    entry = router.find(worker_url, listed)
    if entry is None and require_listed:
        raise RouterError(
            f"the router at {router.url} does not list {worker_url} (it lists "
            f"{', '.join(_brief(w) for w in listed) or 'no worker'}): set ddtree_deploy_router_worker_url to the URL "
            f"the router knows this host by (GET {router.url}/workers shows them). Nothing was changed"
        )
    others = [w for w in listed if not same_url(w.get("url"), worker_url) and w.get("is_healthy")]
    if entry is not None and len(others) < min_others:
        raise RouterError(
            f"refusing to take {worker_url} out of the router at {router.url}: it would leave {len(others)} healthy "
            f"worker(s) (the router lists {', '.join(_brief(w) for w in listed) or 'nothing else'}), fewer than "
            f"{min_others} (ddtree_deploy_router_min_healthy_others), and every client request would fail until it "
            "is back. Deploy this host once another worker is healthy, or accept the outage with "
            "ddtree_deploy_router_min_healthy_others: 0"
        )
    used, count, why = _first_count(inflight, source)
    result = {
        "changed": entry is not None,
        "worker": entry,
        "others_healthy": len(others),
        "removed_at": None,
        "drain": {"source": used, "watched": used == "metrics", "in_flight_at_removal": None, "drained": 0,
                  "still_running": 0, "seconds": 0.0, "note": why},
    }  # fmt: skip
    if check_mode:
        return result
    start = time.monotonic()
    if entry is not None:
        router.remove(entry)
        result["removed_at"] = time.time()
    info = result["drain"]
    try:
        if entry is None:
            # Out already (a second drain before a restore, a rollback after an interrupted deploy): the router
            # sends it nothing, and what still runs there is the deploy's own (a probe the restore ends).
            info.update(in_flight_at_removal=0, drained=0, note="not in the router: nothing to drain")
        elif used == "metrics":
            _wait_unlisted(router, worker_url)
            # Just removed: a request the router sent right before may not be counted yet, so 0 is read twice.
            info.update(_watch(inflight, worker_url, timeout, interval, QUIET_READS))
        else:
            _wait_unlisted(router, worker_url)
            # Nothing to watch: the router's count at the removal, then a fixed wait for it to end.
            load = int(entry.get("load") or 0)
            info.update(in_flight_at_removal=load, drained=load)
            if unwatched > 0:
                time.sleep(unwatched)
    except RouterError as exc:
        info.update(exc.details.get("drain", {}), seconds=round(time.monotonic() - start, 3))
        exc.details = dict(result, changed=entry is not None)
        raise
    info["seconds"] = round(time.monotonic() - start, 3)
    return result


def _wait_unlisted(router, worker_url):
    """Until the router no longer lists the worker (its removal is a queued job)."""
    end = time.monotonic() + REMOVAL_SETTLE_S
    while True:
        entry = router.find(worker_url)
        if entry is None:
            return
        if time.monotonic() >= end:
            raise RouterError(
                f"the router at {router.url} accepted the removal of {worker_url} but still lists it after "
                f"{REMOVAL_SETTLE_S:.0f} s ({_brief(entry)}): it may still send it requests. Remove it by hand "
                f"(curl -X DELETE {router.url}/workers/{entry.get('id')}) and deploy again"
            )
        time.sleep(0.2)


def _watch(inflight, worker_url, timeout, interval, quiet_reads):
    """Read the worker's in-flight count until it is 0 ``quiet_reads`` times in a row, or ``timeout``."""
    end = time.monotonic() + timeout
    first, quiet, count = None, 0, 0
    while True:
        try:
            count = inflight.count()
        except HttpError as exc:
            if exc.kind != "refused":
                raise RouterError(f"the in-flight count of {worker_url} became unreadable: {exc}") from None
            count = 0  # the server stopped: nothing runs there any more
        if first is None:
            first = count
        quiet = quiet + 1 if count == 0 else 0
        if quiet >= quiet_reads:
            return {"in_flight_at_removal": first, "drained": first, "still_running": 0}
        if time.monotonic() >= end:
            raise RouterError(
                f"{count} request(s) still running on {worker_url} {timeout:g} s after it left the router "
                f"({first} when it left); nothing was stopped. Raise ddtree_deploy_router_drain_timeout to the "
                "longest request the service answers, or deploy when its clients are quieter",
                {"drain": {"in_flight_at_removal": first, "drained": max(0, first - count), "still_running": count}},
            )
        time.sleep(interval)


def put_back(router, worker_url, api_key=None, config=None, timeout=120.0, interval=1.0, check_mode=False):
    """Add ``worker_url`` to the router (unless listed) and wait until the router lists it healthy.

    Returns ``{changed, worker, returned_at, healthy_at, seconds}``; RouterError, naming what the router
    said and how to put it back by hand, when it is not listed healthy within ``timeout``.
    """
    start = time.monotonic()
    entry = router.find(worker_url)
    result = {"changed": False, "worker": entry, "returned_at": None, "healthy_at": None, "seconds": 0.0}
    if entry is not None and entry.get("is_healthy"):
        result["healthy_at"] = time.time()
        return result
    if check_mode:
        result["changed"] = entry is None
        return result
    job_id = None
    if entry is None:
        answer = router.add(worker_url, api_key=api_key, config=config)
        job_id = answer.get("worker_id")
        result.update(changed=True, returned_at=time.time())
    end = time.monotonic() + timeout
    said = None
    while True:
        entry = router.find(worker_url)
        if entry is not None and entry.get("is_healthy"):
            result.update(worker=entry, healthy_at=time.time(), seconds=round(time.monotonic() - start, 3))
            return result
        if job_id and entry is None:
            job = router.job(job_id) or {}
            status = job.get("job_status") or {}
            said = status.get("message") or status.get("status") or said
            if status.get("status") == "failed":
                raise RouterError(_not_back(router, worker_url, f"the router's job failed: {said}", api_key))
        if time.monotonic() >= end:
            state = _brief(entry) if entry is not None else "not listed" + (f"; its job: {said}" if said else "")
            raise RouterError(
                _not_back(router, worker_url, f"not listed healthy after {timeout:g} s ({state})", api_key)
            )
        time.sleep(interval)


def _not_back(router, worker_url, what, api_key):
    key = ', "api_key": "<the worker\'s --api-key>"' if api_key else ""
    return (
        f"WORKER NOT BACK IN THE ROUTER: {worker_url} is not serving traffic through {router.url}: {what}. The "
        f"unit itself may serve, but the router sends it nothing. Check that the router reaches it (from the "
        f"router's machine: curl {worker_url.rstrip('/')}/health), then put it back: curl -X POST "
        f"{router.url}/workers -H 'Content-Type: application/json' -d '{{\"url\": \"{worker_url}\"{key}}}' "
        "(with -H 'Authorization: Bearer <router key>' when the router has one), and check GET /workers lists it "
        "healthy"
    )


# The options of ddtree.sglang.sglang_router_worker (its module's argument_spec and its action plugin's).
ARGUMENT_SPEC = dict(
    router_url=dict(type="str", required=True),
    router_api_key=dict(type="str", no_log=True),
    router_headers=dict(type="dict", default={}),
    validate_certs=dict(type="bool", default=True),
    url=dict(type="str", required=True),
    state=dict(type="str", required=True, choices=["drained", "present"]),
    worker_api_key=dict(type="str", no_log=True),
    config=dict(type="dict", default={}),
    metrics_url=dict(type="str"),
    drain_source=dict(type="str", default="auto", choices=list(SOURCES)),
    drain_timeout=dict(type="float", default=300),
    drain_unwatched=dict(type="float", default=30),
    require_listed=dict(type="bool", default=True),
    min_healthy_others=dict(type="int", default=1),
    timeout=dict(type="float", default=120),
    interval=dict(type="float", default=1),
    request_timeout=dict(type="float", default=10),
    course=dict(type="dict"),
)


def option_problem(params):
    """What is wrong with validated options that their types cannot say, or None."""
    for option in ("drain_timeout", "timeout", "interval", "request_timeout"):
        if params[option] <= 0:
            return f"{option} must be a positive number of seconds, got {params[option]}"
    if params["drain_unwatched"] < 0 or params["min_healthy_others"] < 0:
        return "drain_unwatched and min_healthy_others must not be negative"
    for option in ("router_url", "url"):
        if not params[option].startswith(("http://", "https://")):
            return f"{option} must be an http:// or https:// URL, got {params[option]!r}"
    return None


def run(params, check_mode=False):
    """One call of sglang_router_worker with validated ``params``: its result (``seconds`` included);
    RouterError (``details``: what was done before) when it cannot do what it was asked."""
    start = time.monotonic()
    router = Router(
        params["router_url"], api_key=params["router_api_key"], headers=params["router_headers"],
        validate_certs=params["validate_certs"], timeout=params["request_timeout"],
    )  # fmt: skip
    try:
        if params["state"] == "drained":
            inflight = None
            if params["drain_source"] != "router":
                inflight = InFlight(HttpClient(
                    params["metrics_url"] or params["url"], timeout=params["request_timeout"],
                    api_key=params["worker_api_key"], validate_certs=params["validate_certs"],
                ))  # fmt: skip
            result = drain(
                router, params["url"], inflight=inflight, source=params["drain_source"],
                timeout=params["drain_timeout"], unwatched=params["drain_unwatched"],
                min_others=params["min_healthy_others"],
                interval=params["interval"], check_mode=check_mode, require_listed=params["require_listed"],
            )  # fmt: skip
        else:
            result = put_back(
                router, params["url"], api_key=params["worker_api_key"], config=params["config"],
                timeout=params["timeout"], interval=params["interval"], check_mode=check_mode,
            )  # fmt: skip
    except RouterError as exc:
        exc.details = dict(exc.details, seconds=round(time.monotonic() - start, 3))
        raise
    finally:
        router.close()
    result["seconds"] = round(time.monotonic() - start, 3)
    return result


# ---------------------------------------------------------------------------------------------- a deploy's course
# Where a deploy's worker is and what its calls did: {out, removed_at, out_s, drained, returned, calls, error, worker}.
# The action plugin returns it as the fact sglang_router_course and takes it back as the option ``course`` (the
# ddtree_deploy role's module_defaults), so a deploy's calls add up without a set_fact. A worker is out from the
# moment the router accepted its removal until the router lists it healthy again.


def new_course():
    return {"out": False, "removed_at": None, "out_s": 0.0, "drained": 0, "returned": 0, "calls": [], "error": None,
            "worker": None}  # fmt: skip


def step_of(params, check_mode):
    """What a call does to a deploy's course: check (a drain in check mode), drain or return."""
    if params["state"] == "present":
        return "return"
    return "check" if check_mode else "drain"


def course(state, step, result, now=None):
    """The course after one sglang_router_worker call of ``step`` (check, drain or return) with its ``result``
    (a failed call's too: a drain that removed the worker before it failed leaves it out)."""
    state = dict(state or new_course())
    result = result or {}
    now = time.time() if now is None else now
    failed = bool(result.get("failed"))
    drain = result.get("drain") or {}
    call = {"step": step, "failed": failed, "changed": bool(result.get("changed")), "seconds": result.get("seconds")}
    if step == "drain":
        # The router's entry as it was before the first removal: its priority and cost go back with it.
        state["worker"] = state.get("worker") or result.get("worker")
        if result.get("removed_at") and not state["out"]:
            state.update(out=True, removed_at=result["removed_at"])
        state["drained"] = int(state["drained"]) + int(drain.get("drained") or 0)
        call.update(drained=drain.get("drained"), still_running=drain.get("still_running"),
                    source=drain.get("source"), drain_s=drain.get("seconds"))  # fmt: skip
    elif step == "return" and not failed:
        if state["out"]:
            back = result.get("healthy_at") or now
            state["out_s"] = round(float(state["out_s"]) + max(0.0, back - float(state["removed_at"] or back)), 3)
            state["returned"] = int(state["returned"]) + 1
        state.update(out=False, removed_at=None)
    state["error"] = result.get("msg") if failed else None
    state["calls"] = list(state["calls"]) + [call]
    return state


def course_report(state, now=None):
    """What a host report says of the router: ``{out_s, drained, still_out, returned, calls, error}``; None without
    a router. ``out_s`` counts a worker still out up to ``now``."""
    if not state:
        return None
    now = time.time() if now is None else now
    out_s = float(state.get("out_s") or 0.0)
    if state.get("out") and state.get("removed_at"):
        out_s += max(0.0, now - float(state["removed_at"]))
    return {
        "out_s": round(out_s, 2),
        "drained": int(state.get("drained") or 0),
        "still_out": bool(state.get("out")),
        "returned": int(state.get("returned") or 0),
        "calls": len(state.get("calls") or []),
        "error": state.get("error"),
    }
