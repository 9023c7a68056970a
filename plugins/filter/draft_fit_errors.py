# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, annotations, division, print_function

DOCUMENTATION = r"""
name: draft_fit_errors
short_description: Why a DFlash draft model does not fit its target model, from their config.json
version_added: 0.3.0
author: ddtree.sglang developers (@ddtree)
description:
  - Compares what the two configs can tell before a server starts - C(dflash_config.target_layer_ids)
    within the target's C(num_hidden_layers), and equal C(hidden_size). The field report's chat HTTP 400
    came from hidden states of the wrong width reaching the draft (5120 vs 25600).
  - Multimodal and hybrid checkpoints (Qwen3.x) nest the language model under C(text_config); the target's
    is read there when present. A value a config does not give is not compared.
options:
  _input:
    description: The target model's config.json, parsed.
    type: dict
    required: true
  draft:
    description: The draft model's config.json, parsed.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Compare the draft with the target
  vars:
    problems: "{{ target_config | ddtree.sglang.draft_fit_errors(draft_config) }}"
  ansible.builtin.assert:
    that: problems | length == 0
    fail_msg: "The draft does not fit the target: {{ problems | join('; ') }}"
"""

RETURN = r"""
_value:
  description: One message per mismatch (empty when the draft fits, as far as the configs tell).
  type: list
  elements: str
  sample: ["hidden_size 4096 (draft) != 5120 (target)"]
"""

from ansible_collections.ddtree.sglang.plugins.module_utils._deploy_settings import draft_fit_errors  # noqa: E402


class FilterModule:
    """A draft model's fit to its target."""

    def filters(self):
        return {"draft_fit_errors": draft_fit_errors}
