# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, annotations, division, print_function

DOCUMENTATION = r"""
name: deploy_baseline
short_description: The gate's baseline as ddtree_deploy keeps it, and whether a check that needs it stops the deploy
version_added: 0.2.0
author: ddtree.sglang developers (@ddtree)
description:
  - Takes the baseline side of the gate (P(ddtree.sglang.sglang_gate_summary#filter)'s summary), or null when it
    was not measured, and returns it with C(stop) - the fail-closed message when the gain gate, or the output
    equivalence of a running unit, needs a baseline that could not be measured (null otherwise, and always
    with O(without_baseline)). A side not measured says why (no unit, not running, no check needs it).
  - The logic is in C(plugins/module_utils/_gate.py), where it is unit-tested.
options:
  _input:
    description: The measured side's summary, or null when it was not measured.
    type: dict
  unit:
    description: The snapshot's view of the unit before the switch (C(exists), C(active), C(systemd_state)).
    type: dict
  service:
    description: The service's name, for the messages.
    type: str
  min_gain:
    description: C(ddtree_deploy_min_gain) (null - no gain gate).
    type: raw
  equivalence_tokens:
    description: C(ddtree_deploy_equivalence_tokens) (0 - no equivalence check).
    type: int
  without_baseline:
    description: C(ddtree_deploy_gate_without_baseline) - never stop for a missing baseline.
    type: bool
  not_worse:
    description: The default judgement is on (C(ddtree_deploy_gate_not_worse) with O(min_gain) null); it needs the
      running unit's figures as the gain gate does.
    type: bool
"""

EXAMPLES = r"""
- name: Keep the baseline
  ansible.builtin.set_fact:
    baseline: "{{ summary | ddtree.sglang.deploy_baseline(unit=unit_before, service='sglang-qwen', min_gain=0.1) }}"
"""

RETURN = r"""
_value:
  description: The side (C(measured), C(failures), C(levels), ...) and C(stop), the fail-closed message or null.
  type: dict
  sample: {measured: false, failures: ["HTTP 400 ..."], stop: "the baseline cannot be measured: HTTP 400 ..."}
"""

from ansible.errors import AnsibleFilterError  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._gate import baseline  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._values import describe, null  # noqa: E402


def deploy_baseline(
    measured, unit=None, service="", min_gain=None, equivalence_tokens=0, without_baseline=False, not_worse=False
):
    """The baseline side with its fail-closed verdict."""
    min_gain = null(min_gain)
    for name, value in (("the input", measured), ("unit", unit)):
        if value is not None and not isinstance(value, dict):
            raise AnsibleFilterError(f"deploy_baseline: {name} must be a mapping or null, got {describe(value)}.")
    return baseline(
        measured,
        unit=unit,
        service=service,
        min_gain=min_gain,
        equivalence_tokens=equivalence_tokens,
        without_baseline=bool(without_baseline),
        not_worse=bool(not_worse) and min_gain is None,
    )


class FilterModule:
    """The deploy's baseline side."""

    def filters(self):
        return {"deploy_baseline": deploy_baseline}
