#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

DOCUMENTATION = r"""
module: deploy_record
short_description: Append an event to the record of a ddtree_deploy run
version_added: 0.2.0
author: ddtree.sglang developers (@ddtree)
description:
  - The record of one deploy of one host (the fact C(ddtree_deploy_record)) is a list of events, each a
    stage of the deploy beginning or a mark, with its time and result.
  - 'The stages are declared once, in order, in C(plugins/module_utils/_deploy_record.py): C(preflight),
    C(snapshot), C(install), C(options), C(baseline), C(switch), C(probe), C(equivalence), C(gate). The marks:
    C(stopped), C(ready), C(probed), C(failed), C(restart), C(restored), C(verified), C(done).'
  - An event that is neither fails the task, so a stage missing from the table is found by the tests
    instead of turning into an unknown outcome.
  - The filter P(ddtree.sglang.deploy_record_summary#filter) derives outcome, failure, timings and downtime.
  - Runs on the controller (an action plugin); nothing on the host is read or changed.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
attributes:
  action:
    support: full
  async:
    support: none
  bypass_host_loop:
    support: none
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    platforms: all
options:
  event:
    description: The stage that begins, or the mark.
    type: str
    required: true
  result:
    description: What the event carries (a failure's cause and fix, the restore's verdict, ...).
    type: dict
  at:
    description: When the event happened, in seconds since the epoch, if not now (e.g. the sglang role's restart).
    type: float
  not_before_stage:
    description: Leave the record as it is when O(at) is missing or older than the current stage's beginning.
    type: bool
    default: false
  start:
    description: Start a new record for this run id instead of appending to C(ddtree_deploy_record).
    type: str
"""

EXAMPLES = r"""
- name: Snapshot | Begin
  ddtree.sglang.deploy_record:
    event: snapshot
"""

RETURN = r"""
ansible_facts:
  description: C(ddtree_deploy_record), the record with the event appended.
  returned: always
  type: dict
  sample:
    ddtree_deploy_record: {run_id: 20261204T180000Z, events: [{event: preflight, time: 1764871200.1, result: null}]}
stage:
  description: The stage the run is in after the event (the last stage that began).
  returned: always
  type: str
  sample: snapshot
event:
  description: The event appended.
  returned: always
  type: dict
  sample: {event: snapshot, time: 1764871201.2, result: null}
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402


def main():
    module = AnsibleModule(
        argument_spec=dict(
            event=dict(type="str", required=True),
            result=dict(type="dict"),
            at=dict(type="float"),
            not_before_stage=dict(type="bool", default=False),
            start=dict(type="str"),
        ),
        supports_check_mode=True,
    )
    module.fail_json(msg="ddtree.sglang.deploy_record runs on the controller through its action plugin")


if __name__ == "__main__":
    main()
