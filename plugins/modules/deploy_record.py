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
  - 'The stages are declared once, in order, in C(plugins/module_utils/_deploy_record.py) (C(STAGES); the table
    "The deploy as declared stages" in docs/architecture.md lists them). The marks: C(stopped), C(ready),
    C(probed), C(failed), C(restart), C(restored), C(verified), C(done), C(candidate) (a candidate of
    C(ddtree_deploy_candidates) begins) and C(passed) (it passed every step).'
  - A stage's own result (its figures, its verdict) is attached to the stage's event with O(result_of) and
    O(result); the filter P(ddtree.sglang.deploy_record_summary#filter) returns it under C(results.<stage>).
  - With O(file), every call writes the whole record there as JSON, atomically (a temporary file renamed into
    place), so a controller killed mid-deploy leaves the record as of its last event.
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
    description: The stage that begins, or the mark. Required unless O(result_of) is given.
    type: str
  result_of:
    description:
      - A declared stage that has begun in the current attempt; O(result) becomes that stage's result (a second
        call replaces it). Mutually exclusive with O(event).
    type: str
  result:
    description: What the event carries (a failure's cause and fix, the restore's verdict, a stage's figures, ...).
    type: dict
  file:
    description:
      - Where the record is written after the event, on the controller (the role sets the report directory's
        C(<host>.record.json) through C(module_defaults)). Empty or omitted, nothing is written.
    type: path
  file_mode:
    description: The written record's permission bits.
    type: raw
    default: "0600"
  file_group:
    description: The written record's group (the report directory's, C(ddtree_deploy_report_group)).
    type: str
  kind:
    description:
      - With O(start), the kind of record - C(deploy), or C(rollback) and C(promote) for the playbooks of those names,
        whose events are C(plugins/module_utils/_run_record.py)'s (C(KINDS)). Their report, C(<host>.<kind>.json),
        is written beside the record (O(file)) at every event.
    type: str
    choices: [deploy, rollback, promote]
    default: deploy
  undid:
    description:
      - With a rollback's first event, the store's C(in_progress) mark (run id, profile) of the deploy it undoes, or
        null. The event's result then names that run and the last stage its record (beside this run's, in the
        report directory) reached.
    type: dict
  run:
    description: What a rollback's or a promotion's report says of the host - C(host), C(service), C(store).
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
  failed_result:
    description:
      - The failed task's result (C(ansible_failed_result) in a rescue), which replaces O(result).
      - With O(event=failed), the result becomes the failure's C(task), C(cause), C(fix) and C(said), the cause
        naming each failed loop item.
      - With O(event=verified), the result becomes the failed restore's verdict (C(verified), C(state),
        C(systemd_state), C(error)).
      - Both are derived in C(plugins/module_utils/_deploy_record.py), functions C(failure) and C(restore_failure).
    type: dict
  sglang_failure:
    description:
      - With O(event=failed) at the C(switch) stage, the sglang role's C(sglang_failure) (its C(step), C(cause), C(fix)
        and C(line), the journal's cause of a unit that would not start), which then names the cause, its fix and the
        server's line.
    type: dict
  restore:
    description: With O(event=verified) and O(failed_result), what is known of the failed restore.
    type: dict
    suboptions:
      failed_task:
        description: The name of the task that failed (C(ansible_failed_task.name)).
        type: str
      started:
        description: Whether the restore got as far as putting the unit back in its state.
        type: bool
      probed:
        description: Whether the restored service was probed (a failed probe is a verdict on the server).
        type: bool
      unit:
        description:
          - The unit as M(ddtree.sglang.systemd_unit_snapshot) reads it after the restore (active_state, systemd_state).
        type: dict
"""

EXAMPLES = r"""
- name: Snapshot | Begin
  ddtree.sglang.deploy_record:
    event: snapshot

- name: Gate | The gate's verdict, as the gate stage's result
  ddtree.sglang.deploy_record:
    result_of: gate
    result: "{{ verdict }}"

- name: Rescue | Record the failure and its cause
  ddtree.sglang.deploy_record:
    event: failed
    failed_result: "{{ ansible_failed_result | default({}) }}"
    sglang_failure: "{{ sglang_failure | default(none) }}"
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
            event=dict(type="str"),
            result_of=dict(type="str"),
            result=dict(type="dict"),
            file=dict(type="path"),
            file_mode=dict(type="raw", default="0600"),
            file_group=dict(type="str"),
            kind=dict(type="str", choices=["deploy", "rollback", "promote"], default="deploy"),
            undid=dict(type="dict"),
            run=dict(type="dict"),
            at=dict(type="float"),
            not_before_stage=dict(type="bool", default=False),
            start=dict(type="str"),
            failed_result=dict(type="dict"),
            sglang_failure=dict(type="dict"),
            restore=dict(
                type="dict",
                options=dict(
                    failed_task=dict(type="str"),
                    started=dict(type="bool"),
                    probed=dict(type="bool"),
                    unit=dict(type="dict"),
                ),
            ),
        ),
        mutually_exclusive=[("event", "result_of")],
        required_one_of=[("event", "result_of")],
        supports_check_mode=True,
    )
    module.fail_json(msg="ddtree.sglang.deploy_record runs on the controller through its action plugin")


if __name__ == "__main__":
    main()
