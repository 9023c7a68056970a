# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, annotations, division, print_function

DOCUMENTATION = r"""
name: sglang_gate_verdict
short_description: The gate's verdict in one step from both sides' llm_bench results
version_added: 0.2.0
author: ddtree.sglang developers (@ddtree)
description:
  - Takes the new service's M(ddtree.sglang.llm_bench) result and the baseline's (as registered, with
    C(failed_when) false) and returns the verdict in one step - both sides summarised as
    P(ddtree.sglang.sglang_gate_summary#filter) does, then judged - with both sides' summaries.
  - Every level measured on both sides is judged on goodput (the output tokens per second of the requests that met
    the SLO), with an interval, V(better), V(worse) or V(inconclusive) against its required gain; the greedy
    answers are compared prompt by prompt. See C(docs/deploy.md), "The gate".
  - The ddtree_deploy role hands its result to the report. The logic is in C(plugins/module_utils/_gate.py).
options:
  _input:
    description: The new service's llm_bench result.
    type: dict
    required: true
  baseline:
    description: The baseline's llm_bench result, measured the same way right before the switch.
    type: dict
    required: true
  extended:
    description: The new service measured once more, longer, at the levels a verdict with O(inconclusive) V(extend)
      named (its C(extend)); a level still inconclusive then fails.
    type: dict
  min_gain:
    description: Required goodput gain (a fraction above -1) at every level, or a mapping level -> gain; null with
      O(not_worse) requires no gain (not worse), else the gate is off (measured, not judged). Anything else (text
      that is no number, yes/no) fails naming O(min_gain) and what it takes.
    type: raw
  not_worse:
    description: With O(min_gain) null, judge every level "not worse than the baseline" (a required gain of 0).
    type: bool
    default: false
  slo:
    description: The SLO, C(ttft_s) and C(itl_s) in seconds (either may be left out); null derives one per level
      from the baseline's latencies there (twice its p90; the first token at least 0.25 s over it).
    type: dict
  inconclusive:
    description: What a level whose interval holds its required gain does - V(fail), V(pass) or V(extend); null
      fails where a gain above 0 is required and passes where none is.
    type: str
    choices: [fail, pass, extend]
  equivalence_tokens:
    description: Tokens the greedy runs asked for; C(0) turns the equivalence check off.
    type: int
    default: 0
  names:
    description: What the message calls the two services, before and new (e.g. C([NEXTN, DDTREE])).
    type: list
    elements: str
    default: [before, new]
  traffic:
    description: The M(ddtree.sglang.sglang_traffic) result the levels came from, if any (for C(levels_msg)).
    type: dict
  levels_given:
    description: The operator's levels (C(ddtree_deploy_gate_concurrency)), if any (for C(levels_msg)).
    type: list
    elements: int
  mode:
    description: C(ddtree_deploy_mode); in V(tune) the gain gate is the tune's rule over O(load_mix)
      (P(ddtree.sglang.deploy_tune_gate#filter)), each level's verdict kept.
    type: str
    default: deploy
  load_mix:
    description:
      - The tune's load mix (C(ddtree_deploy_load_mix)), a mapping level -> weight, or null.
      - Without O(levels_given) and levels in O(traffic), the levels are the mix's (C(levels_msg) says so).
    type: dict
"""

EXAMPLES = r"""
- name: Judge the new service against the baseline
  ansible.builtin.set_fact:
    verdict: "{{ new_bench | ddtree.sglang.sglang_gate_verdict(baseline=before_bench, not_worse=true) }}"
"""

RETURN = r"""
_value:
  description:
    - C(gains), per level C(concurrency), C(before) and C(new) (tok/s), C(tokens_per_second_gain),
      C(goodput_before), C(goodput_new), C(gain) (goodput's), C(interval) ([low, high]), C(attainment_before),
      C(attainment_new), C(slo), C(slo_source) (given, derived), C(required), C(verdict) (better, worse,
      inconclusive, measured), C(ok), C(extended), C(noise) (half the interval), C(within_noise) (inconclusive).
    - C(gain), C(noise), C(within_noise) (the first level's), C(gate) (C(off), C(pass), C(fail), C(extend),
      C(unmeasured)), C(gate_msg), C(extend) (levels to measure again), C(equivalence) (C(tokens), C(ok),
      C(checked), C(mismatches), C(msg)).
    - C(baseline) and C(new) (both sides' summaries), C(levels_msg) (where the levels came from, e.g. "your
      traffic - p50 9, p90 22 running requests over 7 d - levels 1, 9, 22").
  type: dict
  sample: {gate: pass, gain: 0.21, gate_msg: "gain gate met: goodput +21.0 % at concurrency 1 (better, ...)"}
"""

from ansible.errors import AnsibleFilterError  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils import _deploy_tuning  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._gate import check_min_gain, verdict  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._goodput import check_slo  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._values import describe, null  # noqa: E402


def _bench(name, value):
    """An llm_bench result, or None for one that did not run (a skipped task's result)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise AnsibleFilterError(f"sglang_gate_verdict: {name} must be an llm_bench result, got {describe(value)}.")
    for key in ("levels", "greedy", "reasons"):
        if not isinstance(value.get(key) or [], (list, tuple)):
            raise AnsibleFilterError(f"sglang_gate_verdict: {name}'s {key} must be a list, got {describe(value[key])}.")
    return None if value.get("skipped") and "levels" not in value else value


def sglang_gate_verdict(
    candidate,
    baseline=None,
    extended=None,
    min_gain=None,
    not_worse=False,
    slo=None,
    inconclusive=None,
    equivalence_tokens=0,
    names=None,
    traffic=None,
    levels_given=None,
    mode="deploy",
    load_mix=None,
):
    """The gate's verdict from both sides' llm_bench results."""
    sides = [_bench(n, v) for n, v in (("the input", candidate), ("baseline", baseline), ("extended", extended))]
    min_gain, slo, inconclusive, load_mix = (null(x) for x in (min_gain, slo, inconclusive, load_mix))
    if inconclusive not in (None, "fail", "pass", "extend"):
        raise AnsibleFilterError(
            f"sglang_gate_verdict: inconclusive must be fail, pass or extend (or null), got {inconclusive!r}."
        )
    try:
        slo = check_slo(slo, "ddtree_deploy_slo") or None
        min_gain = check_min_gain(min_gain)
    except ValueError as exc:
        raise AnsibleFilterError(f"sglang_gate_verdict: {exc}") from None
    out = verdict(
        sides[0],
        sides[1],
        extended=sides[2],
        traffic=traffic if isinstance(traffic, dict) and not traffic.get("skipped") else None,
        levels_given=levels_given or None,
        mix=load_mix,
        min_gain=min_gain,
        judge_default=bool(not_worse),
        slo=slo,
        inconclusive=inconclusive,
        equivalence_tokens=int(equivalence_tokens or 0),
        names=tuple(names or ("before", "new")),
    )
    if mode != "tune":
        return out
    problems = _deploy_tuning.mix_errors(load_mix)
    if problems:
        raise AnsibleFilterError("sglang_gate_verdict: " + " ".join(problems))
    return _deploy_tuning.tune_gate(out, load_mix)


class FilterModule:
    """The gate's verdict in one step."""

    def filters(self):
        return {"sglang_gate_verdict": sglang_gate_verdict}
