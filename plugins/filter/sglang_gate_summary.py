# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, annotations, division, print_function

DOCUMENTATION = r"""
name: sglang_gate_summary
short_description: Per-level rates, spreads and greedy answers of one side of the gain gate
version_added: 0.1.0
author: ddtree.sglang developers (@ddtree)
description:
  - Summarises one side of the ddtree_deploy role's gate (the baseline or the new service) - one
    M(ddtree.sglang.llm_bench) call - its sweep at the gate's concurrency levels, and its greedy answers
    (C(greedy_tokens)) for the output-equivalence check.
  - Each level's rate is the median of its C(repeats) measurements (the parts of its window), its spread
    (max - min over the median) the noise of that figure. Its per-request samples, TTFT p90 and per-request
    ITL p90 are kept for the goodput verdict (P(ddtree.sglang.sglang_gate_verdict#filter)).
  - The greedy answers are kept per prompt with their text, for P(ddtree.sglang.sglang_gate_verdict#filter).
  - The call's C(reasons) are the side's failures (read even when the call was registered with C(failed_when)
    false).
  - The logic is in C(plugins/module_utils/_gate.py).
options:
  _input:
    description: The llm_bench result of the side; null (or a skipped task's result) when neither the gain gate
      nor the equivalence check is on.
    type: dict
  not_measured:
    description: Why the side was not measured at all (no service running); the side's one failure.
    type: str
"""

EXAMPLES = r"""
- name: Summarise the baseline
  ansible.builtin.set_fact:
    baseline: "{{ side | ddtree.sglang.sglang_gate_summary }}"
"""

RETURN = r"""
_value:
  description: C(measured) (the sweep and every greedy answer came), C(failures), C(levels) (per level
    C(concurrency), C(tokens_per_second), C(rates), C(spread), C(ttft_s), C(ttft_p90_s), C(request_itl_p90_s),
    C(errors), C(samples)), C(median) and C(spread) (the first level's), C(ttft_s) (the first level's, else the
    median of the greedy answers'), C(greedy), C(token_sources).
  type: dict
  sample:
    measured: true
    levels: [{concurrency: 1, tokens_per_second: 38.0, spread: 0.0079}]
    median: 38.0
"""

from ansible.errors import AnsibleFilterError  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._gate import summarise  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._values import describe  # noqa: E402


def sglang_gate_summary(bench, not_measured=None):
    """One side of the gate: per-level rates, spreads and greedy texts."""
    if bench is not None and not isinstance(bench, dict):
        raise AnsibleFilterError(
            f"sglang_gate_summary: the input must be an llm_bench result (a mapping) or null, got {describe(bench)}."
        )
    for key in ("levels", "greedy", "reasons"):
        if bench is not None and not isinstance(bench.get(key) or [], (list, tuple)):
            raise AnsibleFilterError(
                f"sglang_gate_summary: the llm_bench result's {key} must be a list, got {describe(bench[key])}."
            )
    if bench is not None and bench.get("skipped") and "levels" not in bench:
        bench = None  # the call did not run (neither the gain gate nor the equivalence check is on)
    if not_measured is not None and not isinstance(not_measured, str):
        raise AnsibleFilterError(
            f"sglang_gate_summary: not_measured must be a reason (a string), got {describe(not_measured)}."
        )
    return summarise(bench, not_measured=not_measured)


class FilterModule:
    """Summary of one side of the gain gate."""

    def filters(self):
        return {"sglang_gate_summary": sglang_gate_summary}
