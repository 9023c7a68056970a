# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for ddtree.sglang.deploy_record: append one event to the host's deploy record.

Runs on the controller only (no connection, no module on the host): a stage that begins costs no
host round trip. The record and what it means are plugins/module_utils/_deploy_record.py's.
"""

from __future__ import absolute_import, division, print_function

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase
from ansible_collections.ddtree.sglang.plugins.module_utils import _deploy_record

FACT = "ddtree_deploy_record"
OPTIONS = {
    "event",
    "result",
    "at",
    "not_before_stage",
    "start",
    "failed_result",
    "sglang_failure",
    "restore",
    "figures",
}
RESTORE_OPTIONS = {"failed_task", "started", "probed", "unit"}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        args = dict(self._task.args)
        unknown = set(args) - OPTIONS
        if unknown:
            raise AnsibleActionFail(f"deploy_record: unknown options {', '.join(sorted(unknown))}")
        restore = args.get("restore") or {}
        if not isinstance(restore, dict) or set(restore) - RESTORE_OPTIONS:
            raise AnsibleActionFail(f"deploy_record: restore must be a mapping of {', '.join(sorted(RESTORE_OPTIONS))}")
        event = args.get("event")
        if not isinstance(event, str) or not event:
            raise AnsibleActionFail("deploy_record: event is required: a stage of the deploy or a mark")
        if args.get("result") is not None and not isinstance(args["result"], dict):
            raise AnsibleActionFail("deploy_record: result must be a mapping")
        start = args.get("start")
        record = _deploy_record.new_record(start) if start else (task_vars or {}).get(FACT)
        if not isinstance(record, dict):
            raise AnsibleActionFail(
                "deploy_record: no record to append to; the first event of a run gives start: <run id>"
            )
        result_of_event = args.get("result")
        try:
            # A failure and a failed restore: their results are derived from the failed task's result
            # in Python, where they are unit-tested, not in the rescue's Jinja.
            if "failed_result" in args and event == "failed":
                result_of_event = _deploy_record.failure(record, args["failed_result"], args.get("sglang_failure"))
            elif "failed_result" in args and event == "verified":
                result_of_event = _deploy_record.restore_failure(args["failed_result"], **restore)
            elif "failed_result" in args:
                raise _deploy_record.DeployRecordError("failed_result goes with the events failed and verified")
            # A candidate's figures (its gate's gains per level), with the mark that ends it: passed or failed.
            if args.get("figures") is not None:
                if not isinstance(args["figures"], dict):
                    raise _deploy_record.DeployRecordError("figures must be a mapping")
                result_of_event = dict(result_of_event or {}, figures=args["figures"])
            record = _deploy_record.append(
                record,
                event,
                result=result_of_event,
                at=args.get("at"),
                not_before_stage=bool(args.get("not_before_stage", False)),
            )
        except (_deploy_record.DeployRecordError, TypeError, ValueError) as exc:
            raise AnsibleActionFail(f"deploy_record: {exc}") from None
        # stage: the stage the run is in now (progress displays follow it).
        result.update(
            changed=False,
            ansible_facts={FACT: record},
            event=record["events"][-1],
            stage=_deploy_record.current_stage(record),
        )
        return result
