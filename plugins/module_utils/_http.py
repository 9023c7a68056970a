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

``HttpError.kind`` is one of ``refused``, ``reset``, ``timeout``, ``tls``, ``connect``,
``http`` (a non-2xx answer: ``status`` and a cut ``body`` are set), ``invalid`` (an answer
that is not the JSON asked for). ``HAS_REQUESTS`` is False when requests cannot be
imported; modules then fail with ``missing_required_lib("requests")``.
"""

from __future__ import absolute_import, division, print_function

import json
import re
import traceback
import warnings

try:
    import requests
    from requests import exceptions as rexc
except ImportError:
    HAS_REQUESTS = False
    REQUESTS_IMPORT_ERROR = traceback.format_exc()
else:
    HAS_REQUESTS = True
    REQUESTS_IMPORT_ERROR = None

# How much of a server's error body a message quotes: enough for a Python exception line.
BODY_LIMIT = 300
USER_AGENT = "ddtree.sglang"


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


def describe_transport_error(exc, method, url, timeout=None):
    """Map a requests exception to (kind, message); the message names the likely cause."""
    text = str(exc)
    low = text.lower()
    where = f"{method} {url}"
    if isinstance(exc, rexc.SSLError) or "certificate" in low or "ssl" in low:
        return "tls", (
            f"TLS error on {where}: {cut(text, 200)}. For a self-signed certificate set validate_certs=false, "
            "or install the CA on the controller."
        )
    if isinstance(exc, rexc.ReadTimeout) or "read timed out" in low:
        return (
            "timeout",
            f"no answer to {where} within {_fmt(timeout)} s (read timeout): "
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


class HttpClient:
    """Requests to one server: ``base_url`` + path, with auth, TLS and timeout settings."""

    def __init__(self, base_url, timeout=10.0, api_key=None, validate_certs=True, headers=None):
        if not HAS_REQUESTS:
            raise ImportError("requests is required")
        self.base_url = (base_url or "").rstrip("/")
        self.timeout = timeout
        self.validate_certs = validate_certs
        self.session = requests.Session()
        # A probe must not pick up a proxy from the controller's environment for a loopback server.
        self.session.trust_env = False
        self.session.headers["User-Agent"] = USER_AGENT
        if api_key:
            self.session.headers["Authorization"] = "Bearer " + api_key
        for k, v in (headers or {}).items():
            self.session.headers[str(k)] = str(v)

    def url(self, path):
        return self.base_url + "/" + path.lstrip("/")

    def request(self, method, path, json_body=None, timeout=None, stream=False):
        """Send one request; returns the Response whatever its status, raises HttpError on transport failure."""
        url = self.url(path)
        timeout = self.timeout if timeout is None else timeout
        try:
            with warnings.catch_warnings():
                # validate_certs=false is the user's informed choice; urllib3 would warn on every request.
                warnings.simplefilter("ignore")
                return self.session.request(
                    method, url, json=json_body, timeout=timeout, stream=stream, verify=self.validate_certs
                )
        except rexc.RequestException as exc:
            kind, msg = describe_transport_error(exc, method, url, timeout)
            raise HttpError(kind, msg, url=url) from exc

    def get_json(self, path, timeout=None, method="GET", json_body=None):
        """Request and parse JSON; HttpError(kind='http') for a non-2xx answer, 'invalid' for non-JSON."""
        resp = self.request(method, path, json_body=json_body, timeout=timeout)
        url = self.url(path)
        try:
            body = resp.text
        except rexc.RequestException as exc:
            kind, msg = describe_transport_error(exc, method, url, timeout)
            raise HttpError(kind, msg, url=url) from exc
        if not 200 <= resp.status_code < 300:
            raise http_status_error(method, url, resp.status_code, body)
        try:
            return resp.json()
        except ValueError:
            raise HttpError(
                "invalid", f"{method} {url} answered non-JSON: {cut(body, 120)}", resp.status_code
            ) from None

    def close(self):
        self.session.close()


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


def http_status_error(method, url, status, body):
    """HttpError for a non-2xx answer: status, what it usually means, and the server's own words."""
    text = error_text(body)
    hint = STATUS_HINTS.get(status, "unexpected status")
    msg = f"HTTP {status} from {method} {url} ({hint})"
    if text:
        msg += f": {text}"
    return HttpError("http", msg, status=status, body=text, url=url)
