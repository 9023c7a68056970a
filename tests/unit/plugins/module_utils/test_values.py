# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""_values: a value's kind and value as a user writes them, for error messages."""

import datetime

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils._values import describe, is_omit, type_name


class _OmitType:  # ansible-core 2.19's omit, by the name it carries
    pass


class _AnsibleLazyTemplateList(list):
    pass


class _AnsibleTaggedInt(int):
    pass


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "null"),
        (True, "true/false (true)"),
        (42, "a number (42)"),
        (_AnsibleTaggedInt(42), "a number (42)"),
        (1.5, "a number (1.5)"),
        ("x", 'a string ("x")'),
        ([1, None], "a list ([1, null])"),
        (_AnsibleLazyTemplateList([1, 2]), "a list ([1, 2])"),
        ((1,), "a list ([1])"),
        ({"a": [True]}, 'a mapping ({"a": [true]})'),
        (_OmitType(), "omit"),
        ("__omit_place_holder__0123abcd", "omit"),
        (b"ab", "bytes (b'ab')"),
        (datetime.date(2026, 12, 4), 'a date ("2026-12-04")'),
        (object(), "a value of an unsupported kind"),
    ],
)
def test_describe_names_kinds_as_yaml_writes_them(value, expected):
    assert describe(value).startswith(expected)


def test_long_values_are_cut():
    assert describe("x" * 500, limit=20) == 'a string ("xxxxxxxxxxxxxxxx...)'


def test_omit_and_kind_alone():
    assert is_omit(_OmitType()) and not is_omit("omit")
    assert type_name(_AnsibleLazyTemplateList()) == "a list"
