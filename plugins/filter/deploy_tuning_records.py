# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, annotations, division, print_function

DOCUMENTATION = r"""
name: deploy_tuning_records
short_description: One tuning record per GPU class from the host reports of a ddtree_deploy tune run
version_added: 0.4.0
author: ddtree.sglang developers (@ddtree)
description:
  - From the host reports of a run with C(ddtree_deploy_mode=tune), one record per GPU class, in the form
    C(group_vars/<class>.yml) takes as is - C(ddtree_deploy_tuning) (the crossover, per gate level every candidate's
    gain, verdict and the level's winner; the load mix and what each candidate would have given it; the winner;
    every candidate with its figures per host) and, when a candidate serves the mix better than the fallback,
    C(ddtree_deploy_candidates) (that one alone).
  - The winner is the best gain weighted by the load mix among the candidates that passed every step, above 0 (the
    fallback's) and the gate's margin; else the fallback's name (docs/deploy.md, "Tune").
  - With several hosts of one class, a candidate counts only if it passed on every one of them, by its mean gains.
  - Also the crossover as a Markdown table (C(markdown)) and as an SVG chart (C(chart), written to C(chart_dest)).
  - The logic is C(plugins/module_utils/_deploy_tuning.py)'s (C(tuning_records)).
options:
  _input:
    description: The host reports (C(ddtree.sglang.deploy_report)'s), any mode; those not of a tune are left out.
    type: list
    elements: dict
    required: true
  fallback:
    description: The fallback profile's name (C(ddtree_deploy_fallback_profile)), the baseline's configuration.
    type: str
    default: nextn
  load_mix:
    description: Concurrency level -> weight (C(ddtree_deploy_load_mix)); null puts all weight on the production level.
    type: dict
  mix_source:
    description: Where the mix comes from, as the record says it; default from O(load_mix).
    type: str
"""

EXAMPLES = r"""
- name: Write each class's tuning record
  ansible.builtin.copy:
    content: "{{ item.record | to_nice_yaml }}"
    dest: "reports/tuning/{{ item.gpu_class }}.yml"
    mode: "0600"
  loop: "{{ reports | ddtree.sglang.deploy_tuning_records(load_mix={1: 0.2, 16: 0.8}) }}"
"""

RETURN = r"""
_value:
  description: One entry per GPU class, C(gpu_class), C(dest) and C(record); C(markdown), C(chart) and C(chart_dest).
  type: list
  elements: dict
  sample:
    - gpu_class: ampere_48g
      dest: tuning-ampere_48g.yml
      chart_dest: tuning-ampere_48g.svg
      record:
        ddtree_deploy_candidates: [{name: ddtree, profile: ddtree, variants: [], extra_args: {}}]
        ddtree_deploy_tuning:
          gpu_class: ampere_48g
          release: 0.5.23
          load_mix: {1: 0.9, 16: 0.1}
          winner: ddtree
          crossover:
            - concurrency: 1
              winner: ddtree
              gains: {ddtree: 0.32, dflash: 0.16}
              verdicts: {ddtree: better, dflash: better}
            - concurrency: 16
              winner: nextn
              gains: {ddtree: -0.31, dflash: -0.06}
              verdicts: {ddtree: worse, dflash: worse}
          mix_gains: {ddtree: 0.257, dflash: 0.138, nextn: 0.0}
          candidates: []
"""

from ansible.errors import AnsibleFilterError  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils import _deploy_tuning  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._values import null  # noqa: E402


def deploy_tuning_records(reports, fallback="nextn", load_mix=None, mix_source=None):
    """One tuning record per GPU class."""
    if not isinstance(reports, list):
        raise AnsibleFilterError("deploy_tuning_records: the input must be a list of host reports")
    load_mix, mix_source = null(load_mix), null(mix_source)
    problems = _deploy_tuning.mix_errors(load_mix)
    if problems:
        raise AnsibleFilterError("deploy_tuning_records: " + " ".join(problems))
    return _deploy_tuning.tuning_records(reports, fallback=fallback, load_mix=load_mix, mix_source=mix_source)


class FilterModule:
    """ddtree_deploy's tuning records."""

    def filters(self):
        return {"deploy_tuning_records": deploy_tuning_records}
