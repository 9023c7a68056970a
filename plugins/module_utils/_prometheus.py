# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A client of Prometheus' HTTP API (``/api/v1``), over the collection's HTTP client (_http.py).

    prom = PrometheusClient("https://prom.example.com", bearer_token=token, ca_path="/etc/ssl/ca.pem")
    res = prom.query('sum(rate(sglang:num_requests_total{instance="ct129:30000"}[5m]))')
    res.value()                        # the one value of a one-series answer (None when empty)
    res = prom.query_range("sglang:num_running_reqs", start, end, step=60)
    for s in res.series:               # Series(labels={...}, samples=[(t, v), ...])
        ...
    res.warnings                       # what Prometheus warned about (partial data, ...), as it said it

Connection settings are those Prometheus' own clients take (its ``http_config``, Grafana's data
source, prometheus-api-client): a bearer token (``Authorization: Bearer``) or basic auth (not
both), extra headers (a tenant header, a proxy's key), TLS verification on or off and a CA bundle,
and a timeout that bounds each request on the wall clock (_http.py's watchdog). The timeout is
also sent as the query's ``timeout`` parameter, so that Prometheus stops evaluating when the
client stops waiting.

Every failure is a ``PrometheusError`` whose message says what failed, where, and what to change:
``kind`` is one of _http's transport kinds (``refused``, ``timeout``, ``tls`` ...), ``http`` (an
answer that is not the API's: a proxy's 401, a wrong path's 404), ``api`` (Prometheus answered
``"status": "error"``: ``error_type`` and ``error`` are its own words, e.g. ``bad_data`` and
``1:9: parse error: ...``), ``invalid`` (not the API's JSON, or bad settings). Values are floats,
``NaN`` and ``±Inf`` included, as the API writes them.
"""

from __future__ import absolute_import, division, print_function

import base64
import math
import os
from urllib.parse import urlencode, urlsplit

from ansible_collections.ddtree.sglang.plugins.module_utils._http import (
    HAS_REQUESTS,
    REQUESTS_IMPORT_ERROR,
    HttpClient,
    HttpError,
    cut,
)

__all__ = [
    "HAS_REQUESTS",
    "REQUESTS_IMPORT_ERROR",
    "argument_spec",
    "client_from_params",
    "PrometheusClient",
    "PrometheusError",
    "QueryResult",
    "Series",
    "label_selector",
]

API = "/api/v1"
# What a status means when the answer is not the API's own JSON (a proxy in front of Prometheus,
# or a URL that points somewhere else).
STATUS_HINTS = {
    401: "unauthorized: give a bearer token, or basic auth user and password, that the server accepts",
    403: "forbidden: the credentials are accepted but may not read this Prometheus",
    404: "not found: the URL is not a Prometheus server's (give the address its web UI answers at, "
    "with the path prefix of --web.route-prefix or of a proxy, without /api/v1)",
}
# Prometheus' HTTP API answers errors with these types (web/api/v1/api.go, errorType).
ERROR_HINTS = {
    "bad_data": "the query or its parameters are invalid",
    "execution": "the query failed while it was evaluated",
    "timeout": "the query ran out of time: widen the timeout or narrow the query",
    "canceled": "the query was canceled",
    "internal": "Prometheus failed internally",
    "unavailable": "Prometheus is not ready (still starting, or replaying its write-ahead log)",
    "not_found": "not found",
}


class PrometheusError(Exception):
    """A query that got no usable answer; ``str()`` is a message for a human."""

    def __init__(self, kind, message, status=None, error_type=None, error=None, warnings=None):
        super(PrometheusError, self).__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.error_type = error_type
        self.error = error
        self.warnings = warnings or []


class Series:
    """One series of an answer: its labels (``__name__`` included when Prometheus kept it) and its
    samples, ``[(unix seconds, float), ...]`` in time order (one sample for an instant vector)."""

    def __init__(self, labels, samples):
        self.labels = labels
        self.samples = samples

    @property
    def value(self):
        """The latest sample's value (an instant vector's only one)."""
        return self.samples[-1][1] if self.samples else None

    def to_dict(self):
        return {"labels": dict(self.labels), "samples": [[t, _json_float(v)] for t, v in self.samples]}

    def __repr__(self):
        return f"Series({self.labels!r}, {len(self.samples)} samples)"


class QueryResult:
    """An answer: ``result_type`` (``vector``, ``matrix``, ``scalar``, ``string``), ``series``
    (a scalar is one series without labels), and Prometheus' ``warnings`` and ``infos``."""

    def __init__(self, query, result_type, series, warnings=None, infos=None):
        self.query = query
        self.result_type = result_type
        self.series = series
        self.warnings = list(warnings or [])
        self.infos = list(infos or [])

    def value(self):
        """The value of an answer with at most one series (None for an empty answer).

        A query meant to give one figure (a ``sum``, a ``histogram_quantile`` over one unit) that
        gives several matched more than one unit: that is an error naming the label sets, never a
        silent pick.
        """
        if not self.series:
            return None
        if len(self.series) > 1:
            shown = ", ".join(format_labels(s.labels) for s in self.series[:4])
            more = " ..." if len(self.series) > 4 else ""
            raise PrometheusError(
                "invalid",
                f"{self.query} gave {len(self.series)} series where one was expected ({shown}{more}): "
                "narrow its label selector to one unit",
            )
        return self.series[0].value

    def to_dict(self):
        return {
            "query": self.query,
            "result_type": self.result_type,
            "series": [s.to_dict() for s in self.series],
            "warnings": self.warnings,
            "infos": self.infos,
        }


def _json_float(v):
    """NaN and ±Inf as the API writes them: JSON has no such numbers."""
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return "NaN" if math.isnan(v) else ("+Inf" if v > 0 else "-Inf")
    return v


def format_labels(labels):
    """``{a="1", b="2"}``, as Prometheus prints a label set (``__name__`` in front)."""
    name = labels.get("__name__", "")
    rest = ", ".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels.items()) if k != "__name__")
    return f"{name}{{{rest}}}"


def _escape(value):
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def label_selector(labels):
    """The inside of a PromQL selector that matches ``labels`` exactly: ``a="1", b="2"``.

    A value is quoted and escaped as PromQL's string syntax wants, so a host name or a path in a
    label cannot break the query. ``labels`` is a dict, or a string that is already a selector's
    inside (an operator's override, used as given).
    """
    if isinstance(labels, str):
        return labels.strip().strip("{}").strip()
    return ", ".join(f'{k}="{_escape(v)}"' for k, v in sorted((labels or {}).items()))


def _float(value, where):
    try:
        return float(value)  # "NaN", "+Inf" and "-Inf" included
    except (TypeError, ValueError):
        raise PrometheusError("invalid", f"{where}: {value!r} is not a sample value") from None


def _sample(pair, where):
    if not isinstance(pair, (list, tuple)) or len(pair) != 2:
        raise PrometheusError("invalid", f"{where}: {pair!r} is not a [time, value] pair")
    return (_float(pair[0], where), _float(pair[1], where))


class PrometheusClient:
    """Queries to one Prometheus server (or anything that serves its HTTP API: Thanos, Mimir ...).

    ``url`` is the server's address with its path prefix, if any (``https://host/prometheus``);
    ``headers`` are sent with every request; ``validate_certs`` false turns TLS verification off,
    ``ca_path`` is a CA bundle (PEM) to verify the server's certificate with; ``timeout`` bounds each
    request on the wall clock. ``bearer_token`` and ``username``/``password`` are never shown in a
    message.
    """

    def __init__(
        self,
        url,
        timeout=10.0,
        bearer_token=None,
        username=None,
        password=None,
        headers=None,
        validate_certs=True,
        ca_path=None,
    ):
        self.url = (url or "").rstrip("/")
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise PrometheusError(
                "invalid", f"{url!r} is not a Prometheus URL: give http(s)://host:port, with its path prefix if any"
            )
        if parts.path.rstrip("/").endswith(API):
            raise PrometheusError("invalid", f"give the Prometheus URL without {API} (got {self.url})")
        if parts.username or parts.password:
            raise PrometheusError(
                "invalid", "the Prometheus URL carries credentials: give them as username and password instead"
            )
        if bearer_token and (username or password):
            raise PrometheusError("invalid", "give either a bearer token or basic auth (username, password), not both")
        if password and not username:
            raise PrometheusError("invalid", "a basic auth password was given without a username")
        if ca_path and not os.path.isfile(ca_path):
            raise PrometheusError(
                "invalid", f"the CA bundle {ca_path} does not exist on this machine (the one that sends the queries)"
            )
        self.timeout = float(timeout)
        auth = {}
        if bearer_token:
            auth["Authorization"] = "Bearer " + bearer_token
        elif username:
            pair = f"{username}:{password or ''}".encode()
            auth["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
        # Two Authorization headers cannot both be sent: one given among the headers (any case) and a
        # token or basic auth contradict each other, and which one wins would be a silent choice.
        given = dict((str(k), str(v)) for k, v in (headers or {}).items())
        if auth and any(k.lower() == "authorization" for k in given):
            raise PrometheusError(
                "invalid", "an Authorization header was given besides a bearer token or basic auth: give one of them"
            )
        given.update(auth)
        # requests takes verify=<CA bundle path> for a CA of one's own, False for no verification.
        verify = (ca_path or True) if validate_certs else False
        self.http = HttpClient(self.url, timeout=self.timeout, validate_certs=verify, headers=given)

    # ---------------------------------------------------------------------------------- API calls

    def query(self, query, time=None, timeout=None):
        """An instant query (``/api/v1/query``) at ``time`` (unix seconds; default: the server's now).

        ``timeout`` (seconds) bounds this call instead of the client's timeout (a caller's deadline)."""
        params = {"query": query}
        if time is not None:
            params["time"] = _fmt_time(time)
        return self._result(query, self._get("/query", params, timeout=timeout))

    def query_range(self, query, start, end, step, timeout=None):
        """A range query (``/api/v1/query_range``) from ``start`` to ``end`` (unix seconds) every ``step`` s."""
        if float(step) <= 0:
            raise PrometheusError("invalid", f"a range query's step must be positive (got {step})")
        params = {"query": query, "start": _fmt_time(start), "end": _fmt_time(end), "step": _fmt_time(step)}
        return self._result(query, self._get("/query_range", params, timeout=timeout))

    def series(self, match, start=None, end=None):
        """The label sets of the series that ``match`` (a selector) selects (``/api/v1/series``)."""
        params = {"match[]": match}
        if start is not None:
            params["start"] = _fmt_time(start)
        if end is not None:
            params["end"] = _fmt_time(end)
        data, _warnings, _infos = self._get("/series", params, query=match)
        if not isinstance(data, list):
            raise PrometheusError("invalid", f"{self.url}{API}/series answered {data!r}, not a list of label sets")
        return data

    def targets(self, state="active"):
        """The scrape targets Prometheus knows (``/api/v1/targets``): ``[{labels, health, lastError, scrapeUrl}]``.

        What a message shows when a unit's series are not found: the targets it does scrape.
        """
        data, _warnings, _infos = self._get("/targets", {"state": state}, query="targets")
        return (data or {}).get("activeTargets" if state == "active" else "droppedTargets") or []

    def close(self):
        self.http.close()

    # ---------------------------------------------------------------------------------- plumbing

    def _get(self, endpoint, params, query=None, timeout=None):
        """(data, warnings, infos) of one API call; PrometheusError for anything but a success."""
        query = params.get("query", query)
        seconds = self.timeout if timeout is None else max(0.0, float(timeout))
        if endpoint in ("/query", "/query_range"):
            # Prometheus stops evaluating at its own timeout; ours bounds the whole request.
            # Its duration syntax takes whole units (no "2.5s"): milliseconds.
            params = dict(params, timeout=f"{max(1, int(seconds * 1000))}ms")
        path = API + endpoint + "?" + urlencode(params)
        url = self.url + API + endpoint
        try:
            resp = self.http.request("GET", path, timeout=seconds)
        except HttpError as exc:
            raise PrometheusError(exc.kind, f"Prometheus {self.url}: {exc.message}") from None
        body = resp.text
        try:
            doc = resp.json()
        except ValueError:
            doc = None
        if not isinstance(doc, dict) or doc.get("status") not in ("success", "error"):
            raise self._not_api(url, resp.status_code, body, resp.headers.get("content-type"))
        warnings = [str(w) for w in doc.get("warnings") or []]
        infos = [str(i) for i in doc.get("infos") or []]
        if doc["status"] == "error":
            error_type = str(doc.get("errorType") or "unknown")
            error = str(doc.get("error") or "(no error text)")
            hint = ERROR_HINTS.get(error_type, "an error")
            raise PrometheusError(
                "api",
                f"Prometheus {self.url} rejected {_what(endpoint, query)}: {error_type} ({hint}): {error}",
                status=resp.status_code,
                error_type=error_type,
                error=error,
                warnings=warnings,
            )
        return doc.get("data"), warnings, infos

    def _not_api(self, url, status, body, content_type):
        """The error for an answer that is not the API's JSON."""
        if 300 <= status < 400:
            return PrometheusError(
                "http",
                f"HTTP {status} redirect from {url}: give the Prometheus URL it redirects to "
                "(redirects are not followed)",
                status=status,
            )
        if status >= 400:
            hint = STATUS_HINTS.get(status) or ("a proxy or server error" if status >= 500 else "unexpected status")
            return PrometheusError(
                "http",
                f"HTTP {status} from {url} ({hint}): {cut(body, 200) or '(empty body)'}",
                status=status,
            )
        return PrometheusError(
            "invalid",
            f"{url} answered {status} {content_type or 'without a content-type'} that is not Prometheus' API "
            f"({cut(body, 120) or 'an empty body'}): is the URL a Prometheus server's?",
            status=status,
        )

    def _result(self, query, answer):
        data, warnings, infos = answer
        if not isinstance(data, dict) or "resultType" not in data:
            raise PrometheusError(
                "invalid",
                f"Prometheus {self.url} answered {cut(str(data), 120)!r} for {query}, not a query result",
            )
        kind = data["resultType"]
        raw = data.get("result")
        where = f"Prometheus {self.url}, {query}"
        if kind in ("scalar", "string"):
            if kind == "string":
                series = [Series({}, [(_float(raw[0], where), raw[1])])]
            else:
                series = [Series({}, [_sample(raw, where)])]
        elif kind == "vector":
            series = [Series(r.get("metric") or {}, [_sample(r.get("value"), where)]) for r in raw or []]
        elif kind == "matrix":
            series = [
                Series(r.get("metric") or {}, [_sample(p, where) for p in r.get("values") or []]) for r in raw or []
            ]
        else:
            raise PrometheusError("invalid", f"{where}: unknown result type {kind!r}")
        return QueryResult(query, kind, series, warnings, infos)


def _what(endpoint, query):
    if endpoint in ("/query", "/query_range"):
        return f"the query {query}"
    return f"{endpoint.lstrip('/')} {query or ''}"


def _fmt_time(t):
    """Unix seconds as the API takes them (``1700000000.5``); a float's repr keeps millisecond precision."""
    return repr(float(t)) if not float(t).is_integer() else str(int(float(t)))


def argument_spec():
    """The options of a module that reads Prometheus (their documentation: the ddtree.sglang.prometheus
    doc fragment, plugins/doc_fragments/prometheus.py)."""
    return dict(
        prometheus_url=dict(type="str"),
        prometheus_bearer_token=dict(type="str", no_log=True),
        prometheus_username=dict(type="str"),
        prometheus_password=dict(type="str", no_log=True),
        prometheus_headers=dict(type="dict", default={}, no_log=True),
        prometheus_validate_certs=dict(type="bool", default=True),
        prometheus_ca_path=dict(type="path"),
        prometheus_timeout=dict(type="float", default=10.0),
        prometheus_selector=dict(type="str"),
    )


def client_from_params(params):
    """A PrometheusClient from a module's ``prometheus_*`` options; None without ``prometheus_url``.

    PrometheusError (kind ``invalid``) for settings that cannot work, before any request.
    """
    if not params.get("prometheus_url"):
        return None
    return PrometheusClient(
        params["prometheus_url"],
        timeout=params.get("prometheus_timeout") or 10.0,
        bearer_token=params.get("prometheus_bearer_token") or None,
        username=params.get("prometheus_username") or None,
        password=params.get("prometheus_password") or None,
        headers=params.get("prometheus_headers") or None,
        validate_certs=params.get("prometheus_validate_certs", True),
        ca_path=params.get("prometheus_ca_path") or None,
    )
