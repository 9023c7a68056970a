# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""HTTP client for an inference server, over requests.

One place decides how the collection talks HTTP: base URL joining, per-request timeouts,
``Authorization: Bearer`` for an API key, TLS verification, extra headers, and how a
transport failure or an error answer is turned into a short message that names the cause.

    client = HttpClient("http://127.0.0.1:30000", timeout=10, api_key=key)
    resp = client.request("GET", "/v1/models")        # a requests.Response (any status)
    data = client.get_json("/v1/models")              # parsed JSON, HttpError unless 2xx

``HttpError.kind`` is one of ``refused``, ``reset``, ``timeout``, ``dns``, ``tls``, ``connect``
(the transport kinds, ``TRANSPORT_KINDS``), ``http`` (a non-2xx answer: ``status`` and a cut
``body`` are set; a 3xx names its ``Location``), ``invalid`` (an answer that is not the JSON asked
for, or a bad URL). ``HAS_REQUESTS`` is False when requests cannot be imported; modules then fail
with ``missing_required_lib("requests")``.

``timeout`` is a wall-clock bound on the whole request: connecting, sending, the status line,
the headers and the body. requests' own timeout bounds each socket read only, so a server that
sends one byte a second would never trip it; here a watchdog timer shuts the request's socket
down when the time is up, whatever the server does byte by byte, and the HttpError names the
request, the time spent and what was still awaited. Redirects are not followed: they are
named, with their ``Location`` (a POST that follows a 301/302 turns into a GET and fails as a
confusing 405).
"""

from __future__ import absolute_import, division, print_function

import json
import re
import socket
import threading
import time
import traceback
import warnings

try:
    import requests
    from requests import exceptions as rexc
    from requests.adapters import HTTPAdapter
except ImportError:
    HAS_REQUESTS = False
    REQUESTS_IMPORT_ERROR = traceback.format_exc()
else:
    HAS_REQUESTS = True
    REQUESTS_IMPORT_ERROR = None

# How much of a server's error body a message quotes: enough for a Python exception line.
BODY_LIMIT = 300
USER_AGENT = "ddtree.sglang"
# Connecting to a live host takes milliseconds; 5 s leaves room for a loaded one.
CONNECT_TIMEOUT = 5.0
# Kinds of HttpError that mean no HTTP answer came (what llm_probe reports as transport_error).
TRANSPORT_KINDS = ("refused", "reset", "timeout", "dns", "tls", "connect")


class HttpError(Exception):
    """A request that did not get a usable answer; ``str()`` is a message for a human."""

    def __init__(self, kind, message, status=None, body=None, url=None):
        super(HttpError, self).__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.body = body
        self.url = url


def cut(text, limit=BODY_LIMIT):
    """Cut text to ``limit`` characters on one line, marking what was left out."""
    text = re.sub(r"\s+", " ", text or "").strip()
    if len(text) <= limit:
        return text
    suffix = f" ... ({len(text)} chars)"
    return text[: limit - len(suffix)].rstrip() + suffix


def _exception_line(text):
    """The last ``SomeError: ...`` line of a Python traceback, or None."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for line in reversed(lines):
        if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b.*:", line):
            return line
    return None


def error_text(body):
    """The readable part of an error body (JSON or not), cut to a readable length.

    Knows the shapes OpenAI-compatible servers use: ``{"message": ...}`` (SGLang, vLLM),
    ``{"error": "..."}`` (SGLang's 401), ``{"error": {"message": ...}}`` (OpenAI, llama.cpp),
    ``{"detail": ...}`` (FastAPI). A traceback is reduced to its exception line, which is
    where the cause is; anything else is quoted as it came.
    """
    if body is None:
        return ""
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    msg = body
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict):
            msg = err.get("message") or json.dumps(err)
        elif isinstance(err, str) and err:
            msg = err
        elif data.get("message"):
            msg = data["message"]
        elif data.get("detail"):
            msg = data["detail"] if isinstance(data["detail"], str) else json.dumps(data["detail"])
    if not isinstance(msg, str):
        msg = json.dumps(msg)
    if "Traceback" in msg:
        line = _exception_line(msg)
        if line:
            msg = f"{line} (from a server traceback)"
    return cut(msg)


DNS_MARKERS = (
    "name or service not known",
    "nodename nor servname",
    "temporary failure in name resolution",
    "failed to resolve",
    "no address associated with hostname",
    "getaddrinfo failed",
)


def describe_transport_error(exc, method, url, timeout=None):
    """Map a requests exception to (kind, message); the message names the likely cause."""
    text = str(exc)
    low = text.lower()
    where = f"{method} {url}"
    if any(marker in low for marker in DNS_MARKERS):
        return "dns", (
            f"cannot resolve the host name of {url}: {cut(text, 200)}. Check the name in base_url, "
            "or use the IP address"
        )
    if isinstance(exc, rexc.SSLError) or "certificate" in low or "ssl" in low:
        return "tls", (
            f"TLS error on {where}: {cut(text, 200)}. For a self-signed certificate set validate_certs=false, "
            "or install the CA on the controller."
        )
    if isinstance(exc, rexc.ReadTimeout) or "read timed out" in low:
        return (
            "timeout",
            f"{where} timed out: no answer within {_fmt(timeout)} s (read timeout): "
            "the server accepted the request but did not answer",
        )
    if isinstance(exc, rexc.ConnectTimeout):
        return "timeout", f"connecting to {url} timed out after {_fmt(timeout)} s (host down or filtered?)"
    if "connection refused" in low or "errno 111" in low:
        return "refused", (
            f"connection refused at {url}: nothing listens on that port (the server is not running, "
            "crashed before binding its port, or is still loading weights)"
        )
    if "reset by peer" in low or "errno 104" in low or "connection aborted" in low or "remotedisconnected" in low:
        return "reset", (
            f"connection reset during {where}: the server dropped the request (crashed or killed mid-request?)"
        )
    if isinstance(exc, rexc.ChunkedEncodingError):
        return "reset", f"the answer to {where} broke off mid-stream: {cut(text, 200)}"
    if isinstance(exc, rexc.InvalidURL) or isinstance(exc, rexc.MissingSchema) or isinstance(exc, rexc.InvalidSchema):
        return "invalid", f"invalid URL {url}: {cut(text, 200)}"
    if isinstance(exc, rexc.Timeout):
        return "timeout", f"{where} timed out after {_fmt(timeout)} s"
    return "connect", f"cannot reach {url}: {cut(text, 200)}"


def _fmt(seconds):
    if seconds is None:
        return "?"
    if isinstance(seconds, tuple):
        seconds = seconds[-1]
    return (f"{seconds:.1f}").rstrip("0").rstrip(".")


_current = threading.local()  # the Watchdog of the request this thread is making, if any


def _shutdown(sock):
    """Wake a read blocked on ``sock`` at once (close() alone would wait for the read to return)."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except (OSError, ValueError, AttributeError):
        pass


class Watchdog:
    """The wall-clock deadline of one request: when it passes, the request's sockets are shut down.

    The connection classes below hand every socket a request uses (a new one, or a kept-alive
    one at the moment its answer is awaited) to the watchdog of the current thread; a blocked
    read then returns at the deadline with an error that the client turns into a ``timeout``
    HttpError naming the request, the time spent and the phase it was in.
    """

    def __init__(self, what, seconds):
        self.what = what
        self.seconds = seconds
        self.start = time.monotonic()
        self.fired = False
        self.phase = "connecting"
        self.sent_at = None  # time.monotonic() when the request was written (set by the connection)
        self._socks = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(0.0, seconds), self.fire)
        self._timer.daemon = True
        self._timer.start()

    def add(self, sock):
        with self._lock:
            if sock is not None and sock not in self._socks:
                self._socks.append(sock)
            if self.fired:
                _shutdown(sock)

    def fire(self):
        """Shut the request down now (at the deadline, or when its reader no longer needs it)."""
        with self._lock:
            self.fired = True
            for sock in self._socks:
                _shutdown(sock)

    def cancel(self):
        self._timer.cancel()

    @property
    def over(self):
        """Fired, or cancelled: nothing left for ``abort()`` to stop."""
        return self.fired or self._timer.finished.is_set()

    def spent(self):
        return time.monotonic() - self.start

    def error(self, url):
        return HttpError(
            "timeout",
            f"{self.what} timed out: no complete answer within {_fmt(self.seconds)} s "
            f"({_fmt(round(self.spent(), 1))} s spent, {self.phase})",
            url=url,
        )


def _track(sock, phase=None):
    watchdog = getattr(_current, "watchdog", None)
    if watchdog is not None:
        if phase:
            watchdog.phase = phase
        watchdog.add(sock)


def _tracked_connection(base):
    """A subclass of urllib3's connection class ``base`` whose sockets the current watchdog can shut down."""

    class Tracked(base):
        def _new_conn(self):
            sock = super(Tracked, self)._new_conn()
            _track(sock)  # before a TLS handshake, which a trickling peer can stretch too
            return sock

        def getresponse(self, *args, **kwargs):
            watchdog = getattr(_current, "watchdog", None)
            if watchdog is not None:
                # urllib3 calls this once the request is written: the moment the server has it all,
                # after the client's own set-up (connection, headers, body), which timings exclude.
                watchdog.sent_at = time.monotonic()
            _track(self.sock, "waiting for the status line and headers")
            resp = super(Tracked, self).getresponse(*args, **kwargs)
            watchdog = getattr(_current, "watchdog", None)
            if watchdog is not None:
                watchdog.phase = "reading the body"
            return resp

    return Tracked


_TRACKED_POOLS = {}


def _tracked_pool(base):
    """urllib3's pool class ``base`` with tracked connections (made once; taken from requests' own
    pool manager, so the collection needs no urllib3 import of its own)."""
    if base not in _TRACKED_POOLS:
        _TRACKED_POOLS[base] = type(
            "Tracked" + base.__name__, (base,), {"ConnectionCls": _tracked_connection(base.ConnectionCls)}
        )
    return _TRACKED_POOLS[base]


if HAS_REQUESTS:

    class _TrackedAdapter(HTTPAdapter):
        def init_poolmanager(self, *args, **kwargs):
            super(_TrackedAdapter, self).init_poolmanager(*args, **kwargs)
            pools = self.poolmanager.pool_classes_by_scheme
            self.poolmanager.pool_classes_by_scheme = {scheme: _tracked_pool(cls) for scheme, cls in pools.items()}


class HttpClient:
    """Requests to one server: ``base_url`` + path, with auth, TLS and timeout settings."""

    def __init__(self, base_url, timeout=10.0, api_key=None, validate_certs=True, headers=None):
        if not HAS_REQUESTS:
            raise ImportError("requests is required")
        self.base_url = (base_url or "").rstrip("/")
        self.timeout = timeout
        self.validate_certs = validate_certs
        self.session = requests.Session()
        self.session.mount("http://", _TrackedAdapter())
        self.session.mount("https://", _TrackedAdapter())
        # A probe must not pick up a proxy from the controller's environment for a loopback server.
        self.session.trust_env = False
        self.session.headers["User-Agent"] = USER_AGENT
        if api_key:
            self.session.headers["Authorization"] = "Bearer " + api_key
        for k, v in (headers or {}).items():
            self.session.headers[str(k)] = str(v)
        self._watchdogs = []
        self._lock = threading.Lock()

    def url(self, path):
        return self.base_url + "/" + path.lstrip("/")

    def request(self, method, path, json_body=None, timeout=None, stream=False):
        """Send one request; returns the Response whatever its status, raises HttpError on transport failure.

        ``timeout`` (seconds, default the client's) bounds the whole request by the wall clock. With
        ``stream=True`` the bound goes on while the caller reads the body: ``resp.watchdog`` is the
        request's Watchdog (``fired`` tells a read error caused by the deadline), and ``abort()``
        stops the read at once.
        """
        url = self.url(path)
        seconds = float(self.timeout if timeout is None else timeout)
        if seconds <= 0:
            raise HttpError("timeout", f"no time left for {method} {url} (its deadline has passed)", url=url)
        watchdog = Watchdog(f"{method} {url}", seconds)
        with self._lock:
            # Only requests still running: a client that sends thousands (llm_bench) must not
            # scan its whole history on each one.
            self._watchdogs = [w for w in self._watchdogs if not w.over] + [watchdog]
        _current.watchdog = watchdog
        try:
            with warnings.catch_warnings():
                # validate_certs=false is the user's informed choice; urllib3 would warn on every request.
                warnings.simplefilter("ignore")
                resp = self.session.request(
                    method,
                    url,
                    json=json_body,
                    # Per socket operation; the watchdog bounds the sum.
                    timeout=(min(CONNECT_TIMEOUT, seconds), seconds),
                    stream=stream,
                    verify=self.validate_certs,
                    allow_redirects=False,
                )
        except rexc.RequestException as exc:
            watchdog.cancel()
            if watchdog.fired:
                raise watchdog.error(url) from None
            kind, msg = describe_transport_error(exc, method, url, seconds)
            raise HttpError(kind, msg, url=url) from exc
        finally:
            _current.watchdog = None
        if stream:
            resp.watchdog = watchdog
            return resp
        watchdog.cancel()
        if watchdog.fired:
            # A body without a length ends at the shutdown as if complete: it is not.
            raise watchdog.error(url)
        return resp

    def abort(self):
        """Stop every request of this client still in flight (a stream the caller no longer needs)."""
        with self._lock:
            watchdogs, self._watchdogs = self._watchdogs, []
        for watchdog in watchdogs:
            watchdog.cancel()
            watchdog.fire()

    def get_json(self, path, timeout=None, method="GET", json_body=None):
        """Request and parse JSON; HttpError(kind='http') for a non-2xx answer, 'invalid' for non-JSON."""
        resp = self.request(method, path, json_body=json_body, timeout=timeout)
        url = self.url(path)
        body = resp.text
        if not 200 <= resp.status_code < 300:
            raise http_status_error(method, url, resp.status_code, body, resp.headers.get("location"))
        try:
            return resp.json()
        except ValueError:
            ctype = resp.headers.get("content-type") or "no content-type"
            raise HttpError(
                "invalid",
                f"{method} {url} answered non-JSON ({resp.status_code}, {ctype}): {cut(body, 120)!r}",
                resp.status_code,
            ) from None

    def close(self):
        for watchdog in self._watchdogs:
            watchdog.cancel()
        self.session.close()


def body_pieces(resp):
    """The body of a streamed response as it arrives, in pieces of any size, linear in its length.

    ``read1`` returns what one read of the socket brings (up to 64 KiB), so an event is handed
    on as soon as it is in, and a 5 MB event costs a few hundred reads, not five million.
    urllib3 before 2.0 has no ``read1``: there, HTTP chunks as they come (chunked) or small reads.
    """
    read1 = getattr(resp.raw, "read1", None)
    if read1 is None:
        chunked = "chunked" in resp.headers.get("transfer-encoding", "").lower()
        yield from resp.iter_content(chunk_size=None if chunked else 1)
        return
    while True:
        chunk = read1(65536)
        if not chunk:
            return
        yield chunk


# Why a status usually happens, for the message (SGLang's meanings first).
STATUS_HINTS = {
    400: "the server rejected or failed the request",
    401: "unauthorized: set api_key to the server's --api-key",
    403: "forbidden",
    404: "not found: wrong path, or a model name the server does not serve",
    500: "the server failed internally",
    502: "a proxy in front of the server could not reach it",
    503: "the server is not ready (still loading) or unhealthy",
    504: "a proxy in front of the server timed out",
}


def http_status_error(method, url, status, body, location=None):
    """HttpError for a non-2xx answer: status, what it usually means, and the server's own words.

    A redirect (3xx) names where it points: the client does not follow it, since the URL it was
    given is not where the server answers (http vs https, a proxy's path, a trailing slash).
    """
    text = error_text(body)
    if 300 <= status < 400:
        msg = (
            f"HTTP {status} redirect from {method} {url} to {location or '(no Location header)'}: "
            "redirects are not followed (a POST would turn into a GET); set base_url to the address "
            "the server answers at"
        )
        return HttpError("http", msg, status=status, body=text, url=url)
    hint = STATUS_HINTS.get(status, "unexpected status")
    msg = f"HTTP {status} from {method} {url} ({hint})"
    if text:
        msg += f": {text}"
    return HttpError("http", msg, status=status, body=text, url=url)
