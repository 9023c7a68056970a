# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One bounded readiness poll of an SGLang (or OpenAI-compatible) server.

API (used by the llm_probe module's ``wait_ready`` and by the sglang_wait module)::

    r = poll(base_url, path="/health", timeout=5.0, api_key=None, validate_certs=True,
             headers=None, client=None)
    r.phase         # "refused" | "starting" | "unhealthy" | "ready"   (r.state is the same)
    r.http_status   # int, or None when no HTTP answer came
    r.detail        # short text for a human: "200 ready", "503 starting", "connection refused ..."
    r.elapsed       # seconds the poll took
    r.error         # the HttpError kind of a transport failure (refused, reset, timeout, dns,
                    # tls, connect), else None

    r = wait(base_url, seconds, interval=1.0, **poll_kwargs)   # poll until ready or time is up

Phases, in the order a starting SGLang goes through them:

- ``refused``: nothing listens on the port (not started, crashed before binding, or SGLang
  still loading weights: it binds only after the model is loaded).
- ``starting``: HTTP 503, SGLang's answer while it warms up.
- ``unhealthy``: any other answer or failure (other statuses, a reset, a timeout, TLS).
- ``ready``: HTTP 2xx from ``path`` (``/health``; ``/health_generate`` also runs one token).

``poll`` never raises for a server problem. It needs requests: this module imports without it
(as ansible-test's import check wants), so callers check ``HAS_REQUESTS`` first and fail with
``missing_required_lib("requests")`` and ``REQUESTS_IMPORT_ERROR``; ``poll`` raises ImportError
otherwise. It makes exactly one request, bounded by ``timeout`` on the wall clock (a server that
trickles its answer a byte at a time is cut at ``timeout``, see ``_http``).
"""

from __future__ import absolute_import, division, print_function

import time
from collections import namedtuple

from ansible_collections.ddtree.sglang.plugins.module_utils import _http
from ansible_collections.ddtree.sglang.plugins.module_utils._http import (
    HttpClient,
    HttpError,
    error_text,
    http_status_error,
)

# For callers: check before polling, fail with missing_required_lib("requests") when False.
HAS_REQUESTS = _http.HAS_REQUESTS
REQUESTS_IMPORT_ERROR = _http.REQUESTS_IMPORT_ERROR


class Readiness(namedtuple("Readiness", ["phase", "http_status", "detail", "elapsed", "error"], defaults=(None,))):
    __slots__ = ()

    @property
    def state(self):
        """Alias of ``phase``."""
        return self.phase

    @property
    def ready(self):
        return self.phase == "ready"


def poll(base_url, path="/health", timeout=5.0, api_key=None, validate_certs=True, headers=None, client=None):
    """Ask ``path`` once; return a Readiness. ``client`` (an HttpClient) replaces the connection settings."""
    if not HAS_REQUESTS:
        raise ImportError("the requests Python library is required (python3-requests)")
    start = time.monotonic()
    own = client is None
    if own:
        client = HttpClient(base_url, timeout=timeout, api_key=api_key, validate_certs=validate_certs, headers=headers)
    try:
        try:
            resp = client.request("GET", path, timeout=timeout)
            body = resp.text
        except HttpError as exc:
            phase = "refused" if exc.kind == "refused" else "unhealthy"
            return Readiness(phase, None, exc.message, round(time.monotonic() - start, 3), exc.kind)
        status = resp.status_code
        if 200 <= status < 300:
            phase, detail = "ready", f"{status} ready"
        elif status == 503:
            phase, detail = "starting", "503 starting"
        elif 300 <= status < 400:
            phase = "unhealthy"
            detail = http_status_error("GET", client.url(path), status, body, resp.headers.get("location")).message
        else:
            phase, detail = "unhealthy", f"{status} from {path}"
            text = error_text(body)
            if text:
                detail += ": " + text
        return Readiness(phase, status, detail, round(time.monotonic() - start, 3))
    finally:
        if own:
            client.close()


def wait(base_url, seconds, interval=1.0, on_poll=None, **kwargs):
    """Poll until ready or ``seconds`` have passed; returns the last Readiness (its elapsed = total wait).

    Each poll's timeout is cut to the time left and bounds the poll on the wall clock, so the
    wait ends by ``seconds`` (plus at most 0.2 s for a last poll). ``on_poll(readiness)`` is
    called after every poll.
    """
    start = time.monotonic()
    timeout = kwargs.pop("timeout", 5.0)
    while True:
        left = seconds - (time.monotonic() - start)
        r = poll(base_url, timeout=max(0.2, min(timeout, left)), **kwargs)
        if on_poll:
            on_poll(r)
        left = seconds - (time.monotonic() - start)
        if r.ready or left <= 0:
            return r._replace(elapsed=round(time.monotonic() - start, 3))
        time.sleep(min(interval, left))
