# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, annotations, division, print_function

DOCUMENTATION = r"""
name: sglang_gate_compare
short_description: The gain gate on goodput and the output-equivalence verdict, new service against the baseline
version_added: 0.1.0
author: ddtree.sglang developers (@ddtree)
description:
  - Judges every level two P(ddtree.sglang.sglang_gate_summary#filter) results both measured on goodput, the
    output tokens per second of the requests that met the SLO, from their per-request samples. The gain has
    an interval (a stratified bootstrap over the requests, widened by each side's drift), and the level is
    V(better), V(worse) or V(inconclusive) against its required gain. Tok/s stays in the verdict as the second
    figure. See C(docs/deploy.md), "The gate".
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
      - Required goodput gain (a fraction above -1) at every level, or a mapping level -> gain (a level it does not
        name is not gated); C(null) with O(judge_default) requires no gain (not worse), else turns the gate off.
      - Anything else (text that is no number, yes/no) fails naming O(min_gain) and what it takes.
    type: raw
  judge_default:
    description: With O(min_gain) null, judge every level "not worse than the baseline" (a required gain of 0).
    type: bool
    default: false
  slo:
    description:
      - The SLO, C(ttft_s) and C(itl_s) in seconds (either may be left out); null derives one per level from the
        baseline's latencies there (twice its p90; the first token at least 0.25 s over it).
    type: dict
  inconclusive:
    description:
      - What a level whose interval holds its required gain does. V(fail), V(pass), or V(extend) (the verdict's
        C(gate) is then V(extend) and C(extend) lists the levels to measure once more, longer, given back as
        O(extended)). Null fails where a gain above 0 is required and passes where none is.
    type: str
    choices: [fail, pass, extend]
  extended:
    description: The candidate measured once more at the levels the verdict's C(extend) named (a summary); a level
      still inconclusive after it fails.
    type: dict
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
  description:
    - C(gains), per level C(concurrency), C(before) and C(new) (tok/s), C(tokens_per_second_gain), C(goodput_before),
      C(goodput_new), C(gain) (goodput's), C(interval) ([low, high]), C(attainment_before), C(attainment_new),
      C(slo), C(slo_source) (given, derived), C(required), C(verdict) (better, worse, inconclusive, measured),
      C(ok), C(extended), C(noise) (half the interval), C(within_noise) (inconclusive).
    - C(gain), C(noise), C(within_noise) (the first level's), C(gate) (C(off), C(pass), C(fail), C(extend),
      C(unmeasured)), C(gate_msg), C(extend) (levels to measure again), C(equivalence) (C(tokens), C(ok),
      C(checked), C(mismatches), C(msg)).
  type: dict
  sample: {gain: 0.21, noise: 0.02, within_noise: false, gate: pass, equivalence: {ok: true, tokens: 32}}
"""

from ansible.errors import AnsibleFilterError  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._gate import check_min_gain, compare  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._goodput import check_slo  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._values import describe  # noqa: E402


def sglang_gate_compare(
    candidate,
    baseline=None,
    min_gain=None,
    equivalence_tokens=0,
    names=None,
    judge_default=False,
    slo=None,
    inconclusive=None,
    extended=None,
):
    """Gate verdict and equivalence of the new service against the baseline."""
    for name, value in (("input", candidate), ("baseline", baseline), ("extended", extended)):
        if value is not None and not isinstance(value, dict):
            raise AnsibleFilterError(
                f"sglang_gate_compare: {name} must be a sglang_gate_summary result, got {describe(value)}."
            )
    if inconclusive not in (None, "fail", "pass", "extend"):
        raise AnsibleFilterError(
            f"sglang_gate_compare: inconclusive must be fail, pass or extend (or null), got {inconclusive!r}."
        )
    try:
        slo = check_slo(slo) or None
        min_gain = check_min_gain(min_gain)
    except ValueError as exc:
        raise AnsibleFilterError(f"sglang_gate_compare: {exc}") from None
    return compare(
        candidate or {},
        baseline or {},
        min_gain,
        int(equivalence_tokens or 0),
        tuple(names or ("before", "new")),
        slo=slo,
        inconclusive=inconclusive,
        judge_default=bool(judge_default),
        extended=extended or None,
    )


class FilterModule:
    """The gain gate and output equivalence."""

    def filters(self):
        return {"sglang_gate_compare": sglang_gate_compare}
