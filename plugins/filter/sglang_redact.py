# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, annotations, division, print_function

DOCUMENTATION = r"""
name: sglang_redact
short_description: Text with the secrets SGLang and HTTP clients write in clear redacted
version_added: 0.1.0
author: ddtree.sglang developers (@ddtree)
description:
  - SGLang 0.5.23 logs its arguments at start as C(server_args={...}) with C(api_key), C(admin_api_key) and
    C(ssl_keyfile_password) in clear (C(sglang/srt/entrypoints/engine.py) line 1185). Journals also carry
    C(--api-key) options and C(Authorization) headers.
  - Replaces those values, and every exact value given in O(secrets), with C(<redacted>), so journal text can be
    saved in a report or shown to an operator. Other text is left as it is.
  - The same redaction the M(ddtree.sglang.sglang_wait) module applies to the journal lines it returns
    (C(plugins/module_utils/_redact.py)).
options:
  _input:
    description: Text (one string, lines separated by newlines) or a list of lines.
    type: raw
    required: true
  secrets:
    description: Exact values to hide wherever they appear (e.g. the API key the role set).
    type: list
    elements: str
    default: []
"""

EXAMPLES = r"""
- name: Save the journal without the API key
  ansible.builtin.copy:
    dest: /tmp/journal.txt
    content: "{{ journal.stdout | ddtree.sglang.sglang_redact(secrets=[sglang_api_key]) }}"
    mode: "0600"
  # "... server_args={'api_key': 'sk-1', 'port': 30000}" => "... server_args={'api_key': '<redacted>', 'port': 30000}"
"""

RETURN = r"""
_value:
  description: The input, redacted; a string for a string, a list for a list.
  type: raw
  sample: "[2026-12-03 09:00:00] server_args={'api_key': '<redacted>', 'port': 30000}"
"""

from ansible.errors import AnsibleFilterError  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._redact import redact, redact_lines  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._values import describe  # noqa: E402


def sglang_redact(text, secrets=None):
    """Text or a list of lines with the secrets it holds replaced by <redacted>."""
    if secrets is None:
        secrets = []
    if isinstance(secrets, str) or not isinstance(secrets, (list, tuple)):
        raise AnsibleFilterError(f"sglang_redact: secrets must be a list of strings, got {describe(secrets)}.")
    secrets = [str(s) for s in secrets if s is not None and str(s) != ""]
    if text is None:
        return ""
    if isinstance(text, str):
        return redact(text, secrets)
    if isinstance(text, (list, tuple)):
        return redact_lines([str(line) for line in text], secrets)
    raise AnsibleFilterError(f"sglang_redact: expected text or a list of lines, got {describe(text)}.")


class FilterModule:
    """Redaction of journal text."""

    def filters(self):
        return {"sglang_redact": sglang_redact}
