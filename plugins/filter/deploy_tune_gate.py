# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, annotations, division, print_function

DOCUMENTATION = r"""
name: deploy_tune_gate
short_description: A tune's gain gate - the candidate's gain weighted by the load mix, against the gate's margin
version_added: 0.4.0
author: ddtree.sglang developers (@ddtree)
description:
  - With C(ddtree_deploy_mode=tune) a candidate passes the gain gate when its gain weighted by the load mix
    (C(ddtree_deploy_load_mix); null - all of it at the production concurrency, the gate's highest level) is above
    0 and reaches the gate's margin weighted the same way; one level's loss does not fail it (a configuration that
    loses at 16 streams can still serve a mix that is mostly at one). The rule is the tune's (docs/deploy.md,
    "Tune"); every level keeps its own figures and verdict for the crossover.
  - A gate that did not measure every level (unmeasured), is off, or extends a level is returned as it is; so is
    every verdict when O(mode) is not C(tune).
  - The logic is C(plugins/module_utils/_deploy_tuning.py)'s (C(tune_gate)).
options:
  _input:
    description: The gate's verdict (P(ddtree.sglang.sglang_gate_verdict#filter)'s).
    type: dict
    required: true
  mode:
    description: C(ddtree_deploy_mode).
    type: str
    default: deploy
  load_mix:
    description: Concurrency level -> weight (C(ddtree_deploy_load_mix), or the Prometheus history's); null puts all
      weight on the highest level.
    type: dict
"""

EXAMPLES = r"""
- name: Judge a tune's candidate by the load mix
  ansible.builtin.set_fact:
    verdict: "{{ compared | ddtree.sglang.deploy_tune_gate(mode='tune', load_mix={1: 0.9, 16: 0.1}) }}"
"""

RETURN = r"""
_value:
  description: The verdict, in a tune with C(gate) and C(gate_msg) judged by the mix and C(tune) added.
  type: dict
  sample:
    gate: pass
    gate_msg: "tune gate met: +25.7 % over the load mix (1: 90 %, 16: 10 %); it must be
      above 0 and reach +10.0 % (per level: +32.0 % at concurrency 1 (better); -31.0 % at concurrency 16 (worse))"
    tune: {load_mix: {1: 0.9, 16: 0.1}, score: 0.257, needed: 0.1, level_gate: fail, level_msg: "gain gate not met"}
"""

from ansible.errors import AnsibleFilterError  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils import _deploy_tuning  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._values import null  # noqa: E402


def deploy_tune_gate(verdict, mode="deploy", load_mix=None):
    """The gate's verdict, judged by the tune's rule in a tune."""
    if mode != "tune":
        return verdict
    load_mix = null(load_mix)
    problems = _deploy_tuning.mix_errors(load_mix)
    if problems:
        raise AnsibleFilterError("deploy_tune_gate: " + " ".join(problems))
    return _deploy_tuning.tune_gate(verdict, load_mix)


class FilterModule:
    """ddtree_deploy's tune gate."""

    def filters(self):
        return {"deploy_tune_gate": deploy_tune_gate}
