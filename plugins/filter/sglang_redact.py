# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, annotations, division, print_function

DOCUMENTATION = r"""
name: sglang_redact
short_description: An SGLang journal with the secrets SGLang logs in clear redacted
version_added: 0.1.0
author: ddtree.sglang developers (@ddtree)
description:
  - SGLang logs its arguments at start as C(server_args={...}) with C(api_key), C(admin_api_key) and
    C(ssl_keyfile_password) in clear (0.5.23, C(sglang/srt/entrypoints/engine.py) line 1185).
  - Replaces their values with C('<redacted>') in every line, so a journal can be saved in a report or
    shown to an operator. Other text is left as it is.
  - The same redaction the journal cause table applies (C(plugins/module_utils/_journal_causes.py)).
options:
  _input:
    description: Journal text (one string, lines separated by newlines) or a list of lines.
    type: raw
    required: true
"""

EXAMPLES = r"""
- name: Save the journal without the API key
  ansible.builtin.copy:
    dest: /tmp/journal.txt
    content: "{{ journal.stdout | ddtree.sglang.sglang_redact }}"
    mode: "0600"
  # "... server_args={'api_key': 'sk-1', 'port': 30000}" => "... server_args={'api_key': '<redacted>', 'port': 30000}"
"""

RETURN = r"""
_value:
  description: The input, redacted; a string for a string, a list for a list.
  type: raw
  sample: "[2026-12-02 12:00:01] server_args={'api_key': '<redacted>', 'port': 30000}"
"""

from ansible.errors import AnsibleFilterError  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._journal_causes import redact  # noqa: E402


def sglang_redact(journal):
    if journal is None:
        return ""
    if isinstance(journal, str):
        return "\n".join(redact(line) for line in journal.split("\n"))
    if isinstance(journal, (list, tuple)):
        return [redact(str(line)) for line in journal]
    raise AnsibleFilterError(f"sglang_redact: expected journal text or a list of lines, got {type(journal).__name__}.")


class FilterModule:
    """Redaction of SGLang's journal."""

    def filters(self):
        return {"sglang_redact": sglang_redact}
