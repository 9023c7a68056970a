# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, annotations, division, print_function

DOCUMENTATION = r"""
name: sglang_gate_prompts
short_description: A JSONL trace of production requests as the gate's load
version_added: 0.1.0
author: ddtree.sglang developers (@ddtree)
description:
  - Reads a trace, one request a line, each a JSON object with C(prompt) (a string) or C(messages) (a chat list),
    C(max_tokens), and optionally C(temperature) and C(top_p), into M(ddtree.sglang.llm_bench) prompts named
    C(line N) (C(messages) go to the chat API, C(prompt) to completions). Blank lines are skipped.
  - A bad line fails naming the file, the line and the fix. The logic is in C(plugins/module_utils/_bench.py).
options:
  _input:
    description: The file's text (for example C(lookup('ansible.builtin.file', path))).
    type: str
    required: true
  path:
    description: What the messages call the file.
    type: str
    default: the prompts file
"""

EXAMPLES = r"""
- name: Load the gate with production traffic
  ansible.builtin.set_fact:
    trace: "{{ lookup('ansible.builtin.file', 'trace.jsonl') | ddtree.sglang.sglang_gate_prompts('trace.jsonl') }}"
"""

RETURN = r"""
_value:
  description: One entry per request, C(id) (C(line N)), C(api), C(prompt) or C(messages), C(max_tokens), and the
    line's C(temperature) and C(top_p) when it has them.
  type: list
  elements: dict
  sample: [{id: line 1, api: completions, prompt: "def fib(n):", max_tokens: 128, temperature: 0.2}]
"""

from ansible.errors import AnsibleFilterError  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._bench import BenchError, trace_prompts  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._values import describe  # noqa: E402


def sglang_gate_prompts(text, path="the prompts file"):
    """A JSONL trace as llm_bench prompts."""
    if not isinstance(text, str):
        raise AnsibleFilterError(f"sglang_gate_prompts: the input must be the file's text, got {describe(text)}.")
    try:
        return trace_prompts(text, str(path))
    except BenchError as exc:
        raise AnsibleFilterError(f"sglang_gate_prompts: {exc}") from None


class FilterModule:
    """A trace of requests as the gate's load."""

    def filters(self):
        return {"sglang_gate_prompts": sglang_gate_prompts}
