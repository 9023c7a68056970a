# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, annotations, division, print_function

DOCUMENTATION = r"""
name: deploy_settings_errors
short_description: What is wrong with ddtree_deploy's gate and probe settings, one message per setting
version_added: 0.3.0
author: ddtree.sglang developers (@ddtree)
description:
  - The checks argument_specs cannot make, for the ddtree_deploy role's preflight - ranges, true/false
    where seconds are meant (a float option reads YAML's C(true) as 1), numbers written as text (C(-e
    key=value)), the level mapping of C(ddtree_deploy_min_gain), and each entry of C(ddtree_deploy_gate_prompts).
  - The rules, each with what the value must be and why, are one table in
    C(plugins/module_utils/_deploy_settings.py).
options:
  _input:
    description:
      - Variable name -> value, for any of C(ddtree_deploy_gate_repeats), C(ddtree_deploy_equivalence_tokens),
        C(ddtree_deploy_min_gain), C(ddtree_deploy_gate_concurrency), C(ddtree_deploy_gate_duration),
        C(ddtree_deploy_gate_warmup), C(ddtree_deploy_probe_wait_ready), C(ddtree_deploy_probe_timeout) and
        C(ddtree_deploy_gate_prompts).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Refuse bad settings before the host changes
  vars:
    problems: "{{ {'ddtree_deploy_gate_repeats': ddtree_deploy_gate_repeats} | ddtree.sglang.deploy_settings_errors }}"
  ansible.builtin.assert:
    that: problems | length == 0
    fail_msg: "{{ problems | join(' ') }}"
"""

RETURN = r"""
_value:
  description: One message per setting that breaks its rule (empty when all are good).
  type: list
  elements: str
  sample:
    - "ddtree_deploy_gate_repeats (0) must be at least 1: each level's window is split into this many
      measurements; 3 is the fewest with a median."
"""

from collections.abc import Mapping  # noqa: E402

from ansible.errors import AnsibleFilterError  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._deploy_settings import (  # noqa: E402
    PROMPT_SET,
    RULES,
    errors,
)
from ansible_collections.ddtree.sglang.plugins.module_utils._values import describe  # noqa: E402


def deploy_settings_errors(settings):
    """One message per setting that breaks its rule."""
    if not isinstance(settings, Mapping):
        raise AnsibleFilterError(
            f"deploy_settings_errors: the input must be a mapping of settings, got {describe(settings)}."
        )
    unknown = sorted(str(name) for name in settings if name not in RULES and name != PROMPT_SET)
    if unknown:
        raise AnsibleFilterError(
            f"deploy_settings_errors: no rule for {', '.join(unknown)}; the rules are for "
            f"{', '.join(sorted(RULES) + [PROMPT_SET])}."
        )
    return errors(dict(settings))


class FilterModule:
    """ddtree_deploy's settings, checked."""

    def filters(self):
        return {"deploy_settings_errors": deploy_settings_errors}
