# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The records of the other playbooks that touch a unit (rollback.yml, promote.yml), kept as a deploy's is
(ddtree.sglang.deploy_record writes them at every event) and turned into their host reports here.

A rollback after an interrupted deploy names the run it undid and the last stage that run reached, read
from the record that run left in the report directory (_deploy_record writes it at every event).
"""

from __future__ import absolute_import, annotations, division, print_function

import json
import os
import time

from ansible_collections.ddtree.sglang.plugins.module_utils import _deploy_record

# Each kind's events, in the order they happen; each is stamped once (the last stamp wins).
KINDS = {
    "rollback": {
        # result: {undid: the interrupted deploy (interrupted()), or null when none was in progress}
        "rollback": "the rollback begins",
        # result: {changed, restarted}: what the restore did (nothing when the unit already was the snapshot)
        "restored": "the snapshot is back in place",
        # result: {verified, msg}: the restored service's probes
        "verified": "the restored service was probed",
        # result: {cause}: a step failed (the restore, the probes)
        "failed": "the rollback failed",
        # no snapshot: a deploy never reached the host
        "nothing": "nothing to roll back",
    },
    "promote": {
        # result: {candidate: the candidate mark (run_id, profile)}
        "promote": "the promotion begins",
        # result: {verified, msg}: the candidate's probes
        "verified": "the candidate was probed",
        "stored": "the candidate is the last-known-good",
        # result: {cause}
        "failed": "the promotion was refused",
        "nothing": "no candidate awaits promotion",
    },
}


def new_record(run_id, kind):
    if kind not in KINDS:
        raise _deploy_record.DeployRecordError(f"unknown record kind {kind!r}: deploy, {', '.join(KINDS)}")
    return {"run_id": run_id, "kind": kind, "events": []}


def append(record, event, result=None):
    """A copy of record with one more event of its kind."""
    events = KINDS.get(record.get("kind"))
    if events is None or event not in events:
        raise _deploy_record.DeployRecordError(
            f"unknown {record.get('kind')} event {event!r}: one of {', '.join(events or [])} "
            "(plugins/module_utils/_run_record.py)"
        )
    record = dict(record)
    record["events"] = list(record.get("events", [])) + [
        {"event": event, "time": round(time.time(), 3), "result": result}
    ]
    return record


def record_path(own_file, run_id):
    """Where the deploy ``run_id`` left its record (<report dir>/<run id>/<host>.record.json), from this run's own
    record file (<report dir>/<this run id>/<host>.<kind>.record.json)."""
    name = os.path.basename(own_file)
    for kind in KINDS:
        if name.endswith(f".{kind}.record.json"):
            name = name[: -len(f".{kind}.record.json")] + ".record.json"
    return os.path.join(os.path.dirname(os.path.dirname(own_file)), str(run_id), name)


def interrupted(mark, path):
    """The deploy a rollback undoes: its in-progress mark ({run_id, profile}) and what its record on disk
    says (the last stage it reached, its last event), or why there is no record to read."""
    if not isinstance(mark, dict) or not mark.get("run_id"):
        return None
    out = {"run_id": mark["run_id"], "profile": mark.get("profile"), "record": path}
    try:
        with open(path, encoding="utf-8") as handle:
            record = json.load(handle)
        events = record["events"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        reason = "no such file" if isinstance(exc, FileNotFoundError) else str(exc)
        return dict(out, record=None, last_stage=None, last_event=None, record_msg=f"{path}: {reason}")
    return dict(
        out,
        last_stage=_deploy_record.current_stage(record),
        last_event=events[-1]["event"] if events else None,
        events=len(events),
        record_msg=None,
    )


def outcome(record):
    """rollback: nothing_to_roll_back, restored (the snapshot put back and proved), already_restored (the unit
    already was the snapshot: nothing changed), restore_failed; promote: nothing_to_promote, promoted,
    promote_refused; either: not_finished (the run stopped before its end: its record says where)."""
    marks = {e["event"]: e.get("result") or {} for e in record.get("events", [])}
    kind = record.get("kind")
    if "nothing" in marks:
        return f"nothing_to_{'roll_back' if kind == 'rollback' else kind}"
    if kind == "promote":
        return "promote_refused" if "failed" in marks else "promoted" if "stored" in marks else "not_finished"
    if "failed" in marks or marks.get("verified", {}).get("verified") is False:
        return "restore_failed"
    if "verified" not in marks:
        return "not_finished"
    return "restored" if marks.get("restored", {}).get("changed") else "already_restored"


def report(record, run):
    """The host report of a rollback or a promotion: its outcome, what it undid or promoted, the cause of a
    failure, and every event. run: host, service, store."""
    marks = {e["event"]: e.get("result") or {} for e in record.get("events", [])}
    kind = record.get("kind")
    begun = marks.get(kind) or {}
    return {
        "host": run.get("host"),
        "kind": kind,
        "run_id": record.get("run_id"),
        "service": run.get("service"),
        "snapshot": run.get("store"),
        "outcome": outcome(record),
        # rollback: the interrupted deploy it undid (run id, the last stage it reached), or null.
        "undid": begun.get("undid") if kind == "rollback" else None,
        # promote: the candidate it made the last-known-good (run id, profile), or null.
        "candidate": begun.get("candidate") if kind == "promote" else None,
        "verified": (marks.get("verified") or {}).get("verified"),
        "cause": (marks.get("failed") or {}).get("cause") or (marks.get("verified") or {}).get("msg") or None,
        "events": list(record.get("events", [])),
    }
