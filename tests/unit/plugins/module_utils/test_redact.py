# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's one redaction, on the line formats SGLang 0.5.23 and HTTP clients really write."""

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils._redact import REDACTED, redact, redact_lines

KEY = "sk-Live_4f9c2a.b+/="
ADMIN = "adm-77c1"
PASSWORD = "pw with space's"

# A journal line (journalctl --output=short-iso) holding SGLang's start line: logging format
# "[%(asctime)s] %(message)s" (server_args.py:703-708) and the message of entrypoints/engine.py:1185,
# a dict repr of ServerArgs.resolved_dict() in field order (fields from arg_groups/fields/*.py).
SERVER_ARGS_LINE = (
    "2026-12-03T09:00:01+0000 ct129 python3[812]: [2026-12-03 09:00:01] server_args={"
    "'model_path': '/srv/models/Qwen3.6-27B', 'tokenizer_path': '/srv/models/Qwen3.6-27B', "
    "'host': '127.0.0.1', 'port': 30000, 'ssl_keyfile': '/etc/ssl/private/sglang.key', "
    "'ssl_keyfile_password': " + repr(PASSWORD) + ", 'api_key': " + repr(KEY) + ", "
    "'admin_api_key': " + repr(ADMIN) + ", 'served_model_name': None, 'mem_fraction_static': 0.85, "
    "'max_total_tokens': None, 'bucket_time_to_first_token': [0.1, 0.2, 0.4], "
    "'speculative_algorithm': 'NEXTN', 'speculative_num_draft_tokens': 4, "
    "'watermark_key': '<redacted>', 'watermark_key_b': None}"
)


def test_server_args_line_keeps_everything_but_the_secrets():
    out = redact(SERVER_ARGS_LINE)
    for secret in (KEY, ADMIN, PASSWORD, "sk-Live"):
        assert secret not in out
    assert "'api_key': '<redacted>'" in out
    assert "'admin_api_key': '<redacted>'" in out
    # repr() quotes a value holding ' with ": the quotes stay as they were
    assert "'ssl_keyfile_password': \"<redacted>\"" in out
    # what an operator needs from the line stays
    for kept in (
        "[2026-12-03 09:00:01] server_args={'model_path': '/srv/models/Qwen3.6-27B'",
        "'ssl_keyfile': '/etc/ssl/private/sglang.key'",
        "'served_model_name': None",
        "'mem_fraction_static': 0.85",
        "'bucket_time_to_first_token': [0.1, 0.2, 0.4]",
        "'speculative_algorithm': 'NEXTN'",
        "'watermark_key': '<redacted>', 'watermark_key_b': None}",
    ):
        assert kept in out


def test_a_key_that_is_not_set_stays_visible():
    line = "[2026-12-03 09:00:01] server_args={'port': 30000, 'api_key': None, 'admin_api_key': None}"
    assert redact(line) == line


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # ServerArgs.__repr__ (server_args.py:307-314), in a traceback or an error message
        (
            f"ValueError: bad args ServerArgs(model_path='/m', api_key='{KEY}', port=30000)",
            "ValueError: bad args ServerArgs(model_path='/m', api_key='<redacted>', port=30000)",
        ),
        # JSON: /server_info (utils/common.py:3584-3591) or a saved report
        (f'{{"api_key": "{KEY}", "port": 30000}}', '{"api_key": "<redacted>", "port": 30000}'),
        # an environment assignment (the EnvironmentFile the role writes on systemd < 250)
        (f"DDTREE_SGLANG_API_KEY='{KEY}'", "DDTREE_SGLANG_API_KEY='<redacted>'"),
        (f"OPENAI_API_KEY={KEY} python3 bench.py", "OPENAI_API_KEY=<redacted> python3 bench.py"),
        # command lines: launch_command keeps --api-key in clear (server_args.py:717, watermarking/core.py:110-134)
        (
            f"python -m sglang.launch_server --model-path /m --api-key {KEY} --port 30000",
            "python -m sglang.launch_server --model-path /m --api-key <redacted> --port 30000",
        ),
        (f"--api-key={KEY} --admin-api-key={ADMIN}", "--api-key=<redacted> --admin-api-key=<redacted>"),
        (f"['--model-path', '/m', '--api-key', '{KEY}']", "['--model-path', '/m', '--api-key', '<redacted>']"),
        ("--ssl-keyfile-password 'hunter 2' --port 1", "--ssl-keyfile-password '<redacted>' --port 1"),
        # HTTP
        (f"Authorization: Bearer {KEY}", "Authorization: Bearer <redacted>"),
        (
            f"{{'Authorization': 'Bearer {KEY}', 'Accept': '*/*'}}",
            "{'Authorization': 'Bearer <redacted>', 'Accept': '*/*'}",
        ),
        (f'curl -H "authorization: bearer {KEY}" http://x', 'curl -H "authorization: bearer <redacted>" http://x'),
        (f"proxy: forwarded Bearer {KEY} upstream", "proxy: forwarded Bearer <redacted> upstream"),
    ],
)
def test_formats(line, expected):
    assert redact(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        # SGLang lines with no secret in them come out unchanged
        "[2026-12-03 09:00:02] Load weight begin. avail mem=46.82 GB",
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
        '[2026-12-03 09:00:09] INFO:     127.0.0.1:41234 - "POST /v1/completions HTTP/1.1" 401 Unauthorized',
        "    4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)",
        "'ssl_keyfile': '/etc/ssl/private/key.pem', 'max_new_tokens': 64, 'sort_key': 3",
        "",
    ],
)
def test_lines_without_secrets_are_left_alone(line):
    assert redact(line) == line


def test_exact_secrets_are_hidden_in_any_text():
    text = f"the server said: invalid key {KEY}!\nagain:{KEY}"
    assert redact(text, secrets=[KEY]) == f"the server said: invalid key {REDACTED}!\nagain:{REDACTED}"


def test_the_longest_secret_is_hidden_whole():
    assert redact("abcdef", secrets=["abc", "abcdef"]) == REDACTED


def test_redaction_is_idempotent():
    once = redact(SERVER_ARGS_LINE + f" Authorization: Bearer {KEY}", secrets=[KEY])
    assert redact(once, secrets=[KEY]) == once


def test_empty_and_missing_secrets_change_nothing():
    assert redact("a b c", secrets=["", None]) == "a b c"
    assert redact(None) is None


def test_lines():
    assert redact_lines([SERVER_ARGS_LINE, "ok"]) == [redact(SERVER_ARGS_LINE), "ok"]
