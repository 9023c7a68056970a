# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The HTTP client: every failure becomes an HttpError with a kind and a message naming the cause."""

import ssl

import pytest
import requests
from ansible_collections.ddtree.sglang.plugins.module_utils._http import (
    HttpClient,
    HttpError,
    cut,
    describe_transport_error,
    error_text,
)

# A 400 whose message is a Python traceback: the simulator's chat_400 (sglang/srt/models/dflash.py:834-840).
TRACEBACK_BODY = (
    '{"object": "error", "message": "Traceback (most recent call last):\\n  File \\"/opt/sglang/venv/lib/python3.11/'
    'site-packages/sglang/srt/models/dflash.py\\", line 834, in project_target_hidden\\n    raise ValueError(\\n'
    "ValueError: DFLASH target_hidden feature dim mismatch. Expected shape [N, 25600] (num_context_features=5, "
    'hidden_size=5120), but got shape=(7, 5120).\\n", "type": "BadRequest", "param": null, "code": 400}'
)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            '{"object":"error","message":"prompt is too long","type":"BadRequest","param":null,"code":400}',
            "prompt is too long",
        ),
        ('{"error": "Unauthorized"}', "Unauthorized"),
        ('{"error": {"message": "model not found", "type": "invalid_request_error"}}', "model not found"),
        ('{"detail": "Not Found"}', "Not Found"),
        ("<html><body><h1>502 Bad Gateway</h1></body></html>", "<html><body><h1>502 Bad Gateway</h1></body></html>"),
        ("Internal Server Error", "Internal Server Error"),
        (
            TRACEBACK_BODY,
            "ValueError: DFLASH target_hidden feature dim mismatch. Expected shape [N, 25600] "
            "(num_context_features=5, hidden_size=5120), but got shape=(7, 5120).",
        ),
        ("", ""),
    ],
    ids=["sglang-400", "sglang-401", "openai-error", "fastapi-detail", "html", "plain", "traceback", "empty"],
)
def test_error_text_quotes_the_servers_words(body, expected):
    assert expected in error_text(body)


def test_error_text_cuts_long_bodies():
    text = error_text("x" * 5000)
    assert len(text) <= 300 and text.endswith("(5000 chars)")


def test_cut_joins_lines():
    assert cut("a\n  b\tc") == "a b c"


@pytest.mark.parametrize(
    ("status", "body", "words"),
    [
        (400, TRACEBACK_BODY, ["HTTP 400", "got shape=(7, 5120)"]),
        (401, '{"error": "Unauthorized"}', ["HTTP 401", "api_key", "Unauthorized"]),
        (404, '{"detail": "Not Found"}', ["HTTP 404", "not found"]),
        (500, "Internal Server Error", ["HTTP 500", "failed internally", "Internal Server Error"]),
        (503, "", ["HTTP 503", "not ready"]),
    ],
)
def test_http_status_errors(scripted_server, h, status, body, words):
    url, _seen = scripted_server({"/x": h.Script(status, body)})
    with pytest.raises(HttpError) as e:
        HttpClient(url).get_json("/x")
    assert e.value.kind == "http" and e.value.status == status
    for w in words:
        assert w in e.value.message


def test_non_json_200_is_invalid(scripted_server, h):
    url, _seen = scripted_server({"/x": h.Script(200, "hello")})
    with pytest.raises(HttpError) as e:
        HttpClient(url).get_json("/x")
    assert e.value.kind == "invalid" and "non-JSON" in e.value.message


def test_bearer_and_headers_are_sent(scripted_server, h):
    url, seen = scripted_server({"/x": h.Script(200, "{}")})
    HttpClient(url, api_key="s3cret", headers={"X-Probe": "1"}).get_json("/x")
    assert seen[0]["headers"]["Authorization"] == "Bearer s3cret"
    assert seen[0]["headers"]["X-Probe"] == "1"


def test_connection_refused(h):
    url = f"http://127.0.0.1:{h.free_port()}"
    with pytest.raises(HttpError) as e:
        HttpClient(url, timeout=2).get_json("/health")
    assert e.value.kind == "refused"
    assert "nothing listens" in e.value.message


def test_connection_reset(scripted_server, h):
    url, _seen = scripted_server({"/x": h.Script(reset=True)})
    with pytest.raises(HttpError) as e:
        HttpClient(url, timeout=2).get_json("/x")
    assert e.value.kind == "reset" and "connection reset" in e.value.message


def test_read_timeout(scripted_server, h):
    url, _seen = scripted_server({"/x": h.Script(200, pieces=[(1.0, b"{}")])})
    with pytest.raises(HttpError) as e:
        HttpClient(url).get_json("/x", timeout=0.2)
    assert e.value.kind == "timeout" and "0.2 s" in e.value.message and "timed out" in e.value.message


def test_a_read_timeout_says_timed_out_as_the_watchdog_does():
    # Which fires first on a silent server, the socket's read timeout or the request's watchdog, is the machine's
    # race (test_sglang_bake's silent server read either under load): both messages say "timed out".
    kind, message = describe_transport_error(
        requests.exceptions.ReadTimeout("Read timed out."), "GET", "http://h/x", 0.5
    )
    assert kind == "timeout" and message.startswith("GET http://h/x timed out: no answer within 0.5 s (read timeout)")


def _tls_context(cert):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(*cert)
    return ctx


def test_tls_self_signed_is_rejected_with_the_fix_named(scripted_server, h, self_signed_cert):
    url, _seen = scripted_server({"/x": h.Script(200, "{}")}, tls_context=_tls_context(self_signed_cert))
    with pytest.raises(HttpError) as e:
        HttpClient(url, timeout=3).get_json("/x")
    assert e.value.kind == "tls"
    assert "validate_certs=false" in e.value.message


def test_tls_self_signed_accepted_without_validation(scripted_server, h, self_signed_cert):
    url, _seen = scripted_server({"/x": h.Script(200, '{"ok": true}')}, tls_context=_tls_context(self_signed_cert))
    assert HttpClient(url, timeout=3, validate_certs=False).get_json("/x") == {"ok": True}


def test_invalid_url():
    with pytest.raises(HttpError) as e:
        HttpClient("127.0.0.1:30000").get_json("/x")
    assert e.value.kind == "invalid"
