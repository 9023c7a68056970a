# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for ddtree.sglang.deploy_record: append one event to the host's deploy record.

Runs on the controller only (no connection, no module on the host): a stage that begins costs no
host round trip. The record and what it means are plugins/module_utils/_deploy_record.py's.
"""

from __future__ import absolute_import, division, print_function

import grp
import os

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase
from ansible_collections.ddtree.sglang.plugins.module_utils import _deploy_record, _run_record

FACT = "ddtree_deploy_record"
OPTIONS = {
    "event",
    "result_of",
    "file",
    "file_mode",
    "file_group",
    "kind",
    "undid",
    "run",
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
        result_of = args.get("result_of")
        if result_of is not None and event is not None:
            raise AnsibleActionFail(
                "deploy_record: give either event (a stage begins, a mark) or result_of (a stage's result)"
            )
        if result_of is None and (not isinstance(event, str) or not event):
            raise AnsibleActionFail("deploy_record: event is required: a stage of the deploy or a mark")
        if args.get("result") is not None and not isinstance(args["result"], dict):
            raise AnsibleActionFail("deploy_record: result must be a mapping")
        start = args.get("start")
        record = self._start(start, args.get("kind") or "deploy") if start else (task_vars or {}).get(FACT)
        if not isinstance(record, dict):
            raise AnsibleActionFail(
                "deploy_record: no record to append to; the first event of a run gives start: <run id>"
            )
        try:
            if record.get("kind", "deploy") != "deploy":
                record = _run_record.append(record, event, self._run_result(args))
                appended = record["events"][-1]
            elif result_of is not None:
                record = _deploy_record.set_result(record, str(result_of), args.get("result"))
                appended = next(e for e in reversed(record["events"]) if e["event"] == result_of)
            else:
                record = self._append(record, event, args)
                appended = record["events"][-1]
        except (_deploy_record.DeployRecordError, TypeError, ValueError) as exc:
            raise AnsibleActionFail(f"deploy_record: {exc}") from None
        self._write(record, args)
        # stage: the stage the run is in now (progress displays follow it).
        result.update(
            changed=False,
            ansible_facts={FACT: record},
            event=appended,
            stage=_deploy_record.current_stage(record),
        )
        return result

    @staticmethod
    def _append(record, event, args):
        result_of_event = args.get("result")
        # A failure and a failed restore: their results are derived from the failed task's result
        # in Python, where they are unit-tested, not in the rescue's Jinja.
        if "failed_result" in args and event == "failed":
            result_of_event = _deploy_record.failure(record, args["failed_result"], args.get("sglang_failure"))
        elif "failed_result" in args and event == "verified":
            result_of_event = _deploy_record.restore_failure(args["failed_result"], **(args.get("restore") or {}))
        elif "failed_result" in args:
            raise _deploy_record.DeployRecordError("failed_result goes with the events failed and verified")
        # A candidate's figures (its gate's gains per level), with the mark that ends it: passed or failed.
        if args.get("figures") is not None:
            if not isinstance(args["figures"], dict):
                raise _deploy_record.DeployRecordError("figures must be a mapping")
            result_of_event = dict(result_of_event or {}, figures=args["figures"])
        return _deploy_record.append(
            record,
            event,
            result=result_of_event,
            at=args.get("at"),
            not_before_stage=bool(args.get("not_before_stage", False)),
        )

    @staticmethod
    def _start(run_id, kind):
        try:
            return _deploy_record.new_record(run_id) if kind == "deploy" else _run_record.new_record(run_id, kind)
        except _deploy_record.DeployRecordError as exc:
            raise AnsibleActionFail(f"deploy_record: {exc}") from None

    @staticmethod
    def _run_result(args):
        """A rollback's or a promotion's event: its result; with undid (the store's in-progress mark), the
        interrupted deploy, read from the record that run left beside this run's (_run_record.interrupted)."""
        if "undid" not in args:
            return args.get("result")
        mark = args["undid"] if isinstance(args["undid"], dict) else None
        path = _run_record.record_path(str(args["file"]), mark["run_id"]) if args.get("file") and mark else None
        return dict(args.get("result") or {}, undid=_run_record.interrupted(mark, path))

    @staticmethod
    def _write(record, args):
        """The record on the controller at every event (file: the report directory's <host>.record.json),
        so a controller killed mid-deploy leaves the course of the run behind."""
        path = args.get("file")
        if not path:
            return
        try:
            mode = args.get("file_mode") or "0600"
            mode = mode if isinstance(mode, int) else int(str(mode), 8)
            gid = grp.getgrnam(args["file_group"]).gr_gid if args.get("file_group") else None
            directory = os.path.dirname(str(path))
            if not os.path.isdir(directory):
                # The report directory, as the report files' modes allow (0600 -> 0700, 0640 -> 0750).
                os.makedirs(directory, mode=mode | (mode & 0o444) >> 2, exist_ok=True)
                if gid is not None:
                    os.chown(directory, -1, gid)
            _deploy_record.write(record, str(path), mode=mode, gid=gid)
            if record.get("kind", "deploy") != "deploy":
                # A rollback's or a promotion's report beside its record (<host>.<kind>.json), at every event.
                report = _run_record.report(record, args.get("run") or {})
                _deploy_record.write(report, str(path)[: -len(".record.json")] + ".json", mode=mode, gid=gid)
        except (OSError, KeyError, ValueError) as exc:
            raise AnsibleActionFail(f"deploy_record: cannot write the record to {path}: {exc}") from None
