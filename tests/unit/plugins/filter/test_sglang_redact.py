# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sglang_redact: the secrets of SGLang's server_args line never reach a report."""

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.ddtree.sglang.plugins.filter.sglang_redact import FilterModule, sglang_redact

# entrypoints/engine.py:1185 (0.5.23) logs ServerArgs.resolved_dict() with these in clear
# (arg_groups/fields/serving.py:148 ssl_keyfile_password, :160 api_key, :164 admin_api_key).
LINE = (
    "2026-12-02T12:00:01+0000 ct129 python3[812]: [2026-12-02 12:00:01] server_args={'model_path': '/m', "
    "'ssl_keyfile_password': 'pw1', 'api_key': 'sk-live-9', 'admin_api_key': \"it's\", 'port': 30000}"
)


def test_the_filter_is_registered():
    assert FilterModule().filters()["sglang_redact"] is sglang_redact


def test_text_keeps_its_lines_and_loses_its_secrets():
    text = "first line\n" + LINE + "\nRuntimeError: Not enough memory. Please try to increase --mem-fraction-static."
    out = sglang_redact(text)
    assert out.split("\n")[0] == "first line" and out.split("\n")[2] == text.split("\n")[2]
    for secret in ("pw1", "sk-live-9", "it's"):
        assert secret not in out
    assert "'api_key': '<redacted>'" in out and "'port': 30000}" in out and "'model_path': '/m'" in out


def test_a_list_stays_a_list():
    assert sglang_redact([LINE, "x"])[1] == "x" and "sk-live-9" not in sglang_redact([LINE])[0]


@pytest.mark.parametrize("value", [None, ""])
def test_nothing_is_empty_text(value):
    assert sglang_redact(value) == ""


def test_other_types_are_refused():
    with pytest.raises(AnsibleFilterError, match="expected journal text or a list of lines, got dict"):
        sglang_redact({"a": 1})
