# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, annotations, division, print_function

DOCUMENTATION = r"""
name: deploy_probe_step
short_description: Add one API's probe to a ddtree_deploy probe run
version_added: 0.2.0
author: ddtree.sglang developers (@ddtree)
description:
  - The ddtree_deploy role probes a service API by API (C(probe_service.yml)) and keeps, per purpose
    (C(new), C(restored), C(promoted), C(running)), C(results) (each with C(item), the API), C(not_tried)
    (API - why), C(failed_api) (the first that failed) and C(msg) (each failed API with its message).
  - This filter adds one API - its M(ddtree.sglang.llm_probe) result, or, when that task was skipped because
    an API before it failed, a note that it was not tried. The logic is in
    C(plugins/module_utils/_deploy_record.py), where it is unit-tested.
options:
  _input:
    description: The probes so far, by purpose.
    type: dict
    required: true
  purpose:
    description: The run's purpose (C(new), C(restored), C(promoted), C(running)).
    type: str
    required: true
  api:
    description: The API probed (C(completions), C(chat)).
    type: str
    required: true
  result:
    description: The llm_probe task's registered result (skipped when it was not tried).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Keep the result
  ansible.builtin.set_fact:
    probes: "{{ probes | ddtree.sglang.deploy_probe_step('new', 'chat', probe_one) }}"
"""

RETURN = r"""
_value:
  description: The probes with the API added.
  type: dict
  sample: {new: {results: [{item: completions, failed: false}], not_tried: {}, failed_api: null, msg: null}}
"""

from ansible.errors import AnsibleFilterError  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._deploy_record import probe_step  # noqa: E402


def deploy_probe_step(probes, purpose, api, result):
    """The probes with one more API."""
    if not isinstance(probes, dict) or not isinstance(result, dict):
        raise AnsibleFilterError("deploy_probe_step: the probes and the result must be mappings")
    return probe_step(probes, purpose, api, result)


class FilterModule:
    """One API of a probe run."""

    def filters(self):
        return {"deploy_probe_step": deploy_probe_step}
