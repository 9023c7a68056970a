# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, annotations, division, print_function

DOCUMENTATION = r"""
name: sglang_gate_compare
short_description: The gain gate and the output-equivalence verdict, new service against the baseline
version_added: 0.1.0
author: ddtree.sglang developers (@ddtree)
description:
  - Compares the median set rates of two M(ddtree.sglang.sglang_gate_summary) results and says when the
    spread of the measurement (baseline plus new) is larger than the gain.
  - Compares the greedy answers prompt by prompt; any difference, or a prompt without an answer on
    either side, fails the equivalence check with both texts.
  - The logic is in C(plugins/module_utils/_gate.py).
options:
  _input:
    description: The new service's summary.
    type: dict
    required: true
  baseline:
    description: The baseline's summary.
    type: dict
    required: true
  min_gain:
    description:
      - Required gain (a fraction) at every level, or a mapping level -> gain (a level it does not name is not
        gated); C(null) turns the gate off.
    type: raw
  equivalence_tokens:
    description: Tokens the greedy runs asked for; C(0) turns the equivalence check off.
    type: int
    default: 0
  names:
    description: What the message calls the two services, before and new (e.g. C([NEXTN, DDTREE])).
    type: list
    elements: str
    default: [before, new]
"""

EXAMPLES = r"""
- name: Gate
  ansible.builtin.set_fact:
    verdict: "{{ new | ddtree.sglang.sglang_gate_compare(baseline=before, min_gain=0.1, equivalence_tokens=32) }}"
"""

RETURN = r"""
_value:
  description: C(gains) (per level C(concurrency), C(before), C(new), C(gain), C(required), C(ok), C(noise),
    C(within_noise)), C(gain), C(noise) and C(within_noise) (the first level's), C(gate) (C(off), C(pass), C(fail),
    C(unmeasured)), C(gate_msg), C(equivalence) (C(tokens), C(ok), C(checked), C(mismatches), C(msg)).
  type: dict
  sample: {gain: 0.21, noise: 0.02, within_noise: false, gate: pass, equivalence: {ok: true, tokens: 32}}
"""

from ansible.errors import AnsibleFilterError  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._gate import compare  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._values import describe  # noqa: E402


def sglang_gate_compare(candidate, baseline=None, min_gain=None, equivalence_tokens=0, names=None):
    """Gate verdict and equivalence of the new service against the baseline."""
    for name, value in (("input", candidate), ("baseline", baseline)):
        if value is not None and not isinstance(value, dict):
            raise AnsibleFilterError(
                f"sglang_gate_compare: {name} must be a sglang_gate_summary result, got {describe(value)}."
            )
    return compare(
        candidate or {}, baseline or {}, min_gain, int(equivalence_tokens or 0), tuple(names or ("before", "new"))
    )


class FilterModule:
    """The gain gate and output equivalence."""

    def filters(self):
        return {"sglang_gate_compare": sglang_gate_compare}
