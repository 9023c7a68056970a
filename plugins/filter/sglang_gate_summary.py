# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, annotations, division, print_function

DOCUMENTATION = r"""
name: sglang_gate_summary
short_description: Median, spread and greedy answers of one side of the gain gate
version_added: 0.1.0
author: ddtree.sglang developers (@ddtree)
description:
  - Summarises the results of the ddtree_deploy role's gate prompt set run against one service (the
    baseline or the new one) with M(ddtree.sglang.llm_probe).
  - Each repeat of the whole set gives one set rate, the completion tokens of all its prompts (as the
    server counts them) over the wall time of their requests; the median and the spread
    (max - min over the median) of those rates are returned. A repeat with a failed run gives no rate.
  - The greedy (equivalence) runs are kept per prompt with their text, for M(ddtree.sglang.sglang_gate_compare).
  - The logic is in C(plugins/module_utils/_gate.py).
options:
  _input:
    description: The C(results) of the measurement loop (items C([prompt, repeat])); empty when the gate is off.
    type: list
    elements: dict
    required: true
  greedy:
    description: The C(results) of the equivalence loop (items are prompts); empty when equivalence is off.
    type: list
    elements: dict
    default: []
  equivalence_tokens:
    description: Tokens the greedy runs ask for; a first-repeat measurement run of a prompt with this
      C(max_tokens) is that prompt's greedy run (the role does not ask twice).
    type: int
    default: 0
"""

EXAMPLES = r"""
- name: Summarise the baseline
  ansible.builtin.set_fact:
    baseline: "{{ measure.results | ddtree.sglang.sglang_gate_summary(greedy=greedy.results) }}"
"""

RETURN = r"""
_value:
  description: C(measured) (every run answered), C(failures), C(rates), C(median), C(spread), C(prompts), C(greedy),
    C(token_sources).
  type: dict
  sample: {measured: true, failures: [], rates: [37.9, 38.2, 38.0], median: 38.0, spread: 0.0079}
"""

from ansible.errors import AnsibleFilterError  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._gate import summarise  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._values import describe  # noqa: E402


def sglang_gate_summary(results, greedy=None, equivalence_tokens=0):
    """One side of the gate: medians, spread and greedy texts."""
    for name, value in (("input", results), ("greedy", greedy)):
        if value is not None and not isinstance(value, (list, tuple)):
            raise AnsibleFilterError(
                f"sglang_gate_summary: {name} must be an llm_probe loop's results, got {describe(value)}."
            )
    return summarise(results or [], greedy or [], int(equivalence_tokens or 0))


class FilterModule:
    """Summary of one side of the gain gate."""

    def filters(self):
        return {"sglang_gate_summary": sglang_gate_summary}
