# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, annotations, division, print_function

DOCUMENTATION = r"""
name: deploy_record_summary
short_description: Outcome, failure, timings and downtime of a ddtree_deploy run's record
version_added: 0.2.0
author: ddtree.sglang developers (@ddtree)
description:
  - Derives from the events of a M(ddtree.sglang.deploy_record) record what the host report says about the
    run's course, so that no task computes an outcome in Jinja.
  - The outcome of a failure is the failed stage's (its C(touches) and C(outcome) in the stage table of
    C(plugins/module_utils/_deploy_record.py)); after a switched unit it is C(rolled_back),
    C(restored_unverified) or C(restore_failed) by the restore's verdict.
options:
  _input:
    description: The record.
    type: dict
    required: true
  profile:
    description: The profile deployed, for the stage's fix text.
    type: str
    default: ''
  journal:
    description: Where the failed unit's journal was saved, for the stage's fix text.
    type: str
    default: ''
  check_mode:
    description:
      - Whether the run was in check mode (outcome C(checked), or C(check_failed) when a check failed; downtime 0).
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Report | Derive the outcome
  ansible.builtin.set_fact:
    __course: "{{ __record | ddtree.sglang.deploy_record_summary(profile='ddtree', check_mode=ansible_check_mode) }}"
"""

RETURN = r"""
_value:
  description: C(stage) (the last stage that began), C(touched) (nothing, host or unit), C(outcome), C(failure)
    (C(step), C(cause), C(fix), C(task), C(said); null without a failure), C(restore) (the restore's verdict),
    C(downtime_s), C(downtime) (C(candidate_load_s), C(probing_s), C(restore_s), C(restored_load_s)), C(timings).
  type: dict
  sample: {stage: probe, touched: unit, outcome: rolled_back, downtime_s: 21.3}
"""

from ansible.errors import AnsibleFilterError  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils import _deploy_record  # noqa: E402


def deploy_record_summary(record, profile="", journal="", check_mode=False):
    """Stage, outcome, failure (with its fix), restore verdict, downtime and timings of a record."""
    try:
        return _deploy_record.summary(record or {}, profile=profile, journal=journal, check_mode=bool(check_mode))
    except _deploy_record.DeployRecordError as exc:
        raise AnsibleFilterError(f"deploy_record_summary: {exc}") from None


class FilterModule:
    """The deploy record's summary."""

    def filters(self):
        return {"deploy_record_summary": deploy_record_summary}
