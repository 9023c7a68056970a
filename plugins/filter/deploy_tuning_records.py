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
    C(group_vars/<class>.yml) takes as is - C(ddtree_deploy_candidates) (the winner alone) and
    C(ddtree_deploy_tuning) (class, release, every candidate with its figures per host, the winner).
  - With several hosts of one class, a candidate wins only if it passed on every one of them, by its mean gain at
    the production concurrency (the gate's highest level). No candidate passing - no C(ddtree_deploy_candidates),
    winner null (NEXTN stays).
  - The logic is C(plugins/module_utils/_deploy_candidates.py)'s (C(tuning_records)).
options:
  _input:
    description: The host reports (C(ddtree.sglang.deploy_report)'s), any mode; those not of a tune are left out.
    type: list
    elements: dict
    required: true
"""

EXAMPLES = r"""
- name: Write each class's tuning record
  ansible.builtin.copy:
    content: "{{ item.record | to_nice_yaml }}"
    dest: "reports/tuning/{{ item.gpu_class }}.yml"
    mode: "0600"
  loop: "{{ reports | ddtree.sglang.deploy_tuning_records }}"
"""

RETURN = r"""
_value:
  description: One entry per GPU class, C(gpu_class) and C(record).
  type: list
  elements: dict
  sample:
    - gpu_class: blackwell_rtx_96g
      record:
        ddtree_deploy_candidates: [{name: ddtree, profile: ddtree, variants: [], extra_args: {}}]
        ddtree_deploy_tuning: {gpu_class: blackwell_rtx_96g, release: 0.5.23, winner: ddtree, candidates: []}
"""

from ansible.errors import AnsibleFilterError  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils import _deploy_candidates  # noqa: E402


def deploy_tuning_records(reports):
    """One tuning record per GPU class."""
    if not isinstance(reports, list):
        raise AnsibleFilterError("deploy_tuning_records: the input must be a list of host reports")
    return _deploy_candidates.tuning_records(reports)


class FilterModule:
    """ddtree_deploy's tuning records."""

    def filters(self):
        return {"deploy_tuning_records": deploy_tuning_records}
