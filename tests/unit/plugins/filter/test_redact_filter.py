# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sglang_redact filter: module_utils/_redact.py for the roles (text or lines, exact secrets)."""

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.ddtree.sglang.plugins.filter.sglang_redact import FilterModule, sglang_redact

# journalctl --output=short-iso of a unit whose SGLang 0.5.23 logged its start line (engine.py:1185)
JOURNAL = (
    "2026-12-03T09:00:01+0000 ct129 python3[812]: [2026-12-03 09:00:01] server_args={'model_path': '/m', "
    "'api_key': 'k-123456', 'admin_api_key': None}\n"
    "2026-12-03T09:00:02+0000 ct129 python3[812]: RuntimeError: Not enough memory. "
    "Please try to increase --mem-fraction-static."
)


def test_the_filter_is_registered():
    assert FilterModule().filters()["sglang_redact"] is sglang_redact


def test_journal_text():
    out = sglang_redact(JOURNAL)
    assert "k-123456" not in out
    assert out.splitlines()[0].endswith("'api_key': '<redacted>', 'admin_api_key': None}")
    assert out.splitlines()[1] == JOURNAL.splitlines()[1]


def test_lines_and_exact_secrets():
    assert sglang_redact(["key is k-123456", "ok"], secrets=["k-123456", "", None]) == ["key is <redacted>", "ok"]


def test_nothing_is_empty_text():
    assert sglang_redact(None) == ""


@pytest.mark.parametrize(("text", "secrets"), [({"a": 1}, []), ("x", "k-123456")])
def test_bad_input_is_named(text, secrets):
    with pytest.raises(AnsibleFilterError, match="sglang_redact"):
        sglang_redact(text, secrets=secrets)


def test_every_secret_field_of_the_line_and_empty_text():
    # arg_groups/fields/serving.py (0.5.23): :148 ssl_keyfile_password, :160 api_key, :164 admin_api_key,
    # all three in clear in the server_args line; repr() picks double quotes for a value holding a quote.
    line = (
        "server_args={'ssl_keyfile_password': 'pw1', 'api_key': 'sk-live-9', 'admin_api_key': \"it's\", 'port': 30000}"
    )
    out = sglang_redact(line)
    for secret in ("pw1", "sk-live-9", "it's"):
        assert secret not in out
    assert out.endswith("'port': 30000}")
    assert sglang_redact("") == ""
