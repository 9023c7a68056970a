# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The deploy record: the stages of a ddtree_deploy run, declared once and in order, and the
outcome, failure, timings and downtime derived from the events a run appends.

Tasks append events ({stage or mark, time, result}) with the deploy_record filter and never
compute an outcome in Jinja: everything a report says is derived here, where it is unit-tested.
Adding a stage means one entry in STAGES, plus its tasks.
"""

from __future__ import absolute_import, annotations, division, print_function

import json
import time
from urllib.parse import urlsplit, urlunsplit

from ansible_collections.ddtree.sglang.plugins.module_utils import _deploy_candidates as _candidates
from ansible_collections.ddtree.sglang.plugins.module_utils import _files


class DeployRecordError(ValueError):
    """An event the record does not know (a stage missing from STAGES is a bug, not a failure)."""


# touches: what a failure at this stage leaves behind.
#   nothing: no file of this run on the host (no journal to save, nothing to restore);
#   host:    this run's in-progress mark and a side-by-side release may exist, the unit is untouched;
#   unit:    the unit was switched: the snapshot is restored and proved.
# outcome: the host's outcome when the run fails here and nothing had to be restored.
# fix/why: what to do next, for a failure here whose cause brings no fix of its own (a journal
#   cause of the sglang role carries its own). {journal} becomes the saved journal's path,
#   {profile} the profile that failed.
STAGES = (
    {
        "name": "preflight",
        "touches": "nothing",
        "outcome": "preflight_failed",
        "fix": "Correct what the message names (inventory, model paths, host packages), then run the deploy "
        "again; the service was not touched.",
        "why": "Preflight checks only inputs and host needs, before the snapshot and before any change.",
    },
    {
        "name": "snapshot",
        "touches": "nothing",
        "outcome": "snapshot_failed",
        "fix": "Check that the service's unit file and its state can be read as the deploy user (systemctl cat, "
        "systemctl show), then run the deploy again; the service was not touched.",
        "why": "Without a complete snapshot nothing can be restored, so the deploy stops before the switch.",
    },
    {
        "name": "install",
        "touches": "host",
        "outcome": "install_failed",
        "fix": "Check the release source the message names (docs/install.md: the #29907 source, a wheelhouse "
        "for air-gapped hosts); the service was not touched.",
        "why": "The release is installed side by side before the switch; a failed install changes nothing that serves.",
    },
    {
        "name": "options",
        "touches": "host",
        "outcome": "options_refused",
        "fix": "Correct the setting the message names: an option the release refuses (sglang_extra_args, the "
        "profile variants; the release's own flags decide which options exist) or a unit the host's systemd "
        "would refuse (sglang_unit_hardening). The service was not touched.",
        "why": "The new unit's options are checked against the installed release's flags, and its sandbox "
        "against the host's systemd, before the unit is rendered (the sglang role's preflight).",
    },
    {
        "name": "drain",
        "touches": "host",
        "outcome": "drain_failed",
        "fix": "The unit was not touched, and the worker was put back in the router. Correct what the cause names: "
        "requests still running at ddtree_deploy_router_drain_timeout (raise it to the longest request the service "
        "answers, or deploy when its clients are quieter), or a router that stopped answering "
        "(ddtree_deploy_router_url). Then deploy again.",
        "why": "With a router in front (ddtree_deploy_router_url), a unit is stopped only once the router sends it "
        "nothing and the requests it had have ended: a stop under traffic cuts the users' streams, and the router "
        "would send new ones to a server that is down.",
    },
    {
        "name": "baseline",
        "touches": "host",
        "outcome": "baseline_failed",
        "fix": "Make the running service answer the gate's prompts (playbooks/probe.yml shows what it says); when "
        "its requests outlast the gate's window (the cause says how long one takes), raise "
        "ddtree_deploy_gate_duration. Or deploy without a measured baseline: ddtree_deploy_gate_without_baseline "
        "true (no gain gate, no not-worse judgement, no output equivalence), or nothing that compares with it: "
        "ddtree_deploy_min_gain null, ddtree_deploy_gate_not_worse false and ddtree_deploy_equivalence_tokens 0. "
        "The service was not touched.",
        "why": "The gain gate (ddtree_deploy_min_gain), the default not-worse judgement "
        "(ddtree_deploy_gate_not_worse) and the output equivalence compare the new service with the baseline, "
        "measured right before the switch; without it they would keep any candidate, so the deploy stops before "
        "anything changes.",
    },
    {
        "name": "switch",
        "touches": "unit",
        "outcome": "rolled_back",
        "fix": "The unit did not start and its journal names no known cause: read the saved journal "
        "({journal}) for the server's last lines; keep the restored unit meanwhile.",
        "why": "Known journal causes carry their own fix; this is the one for a cause not in that table.",
    },
    {
        "name": "probe",
        "touches": "unit",
        "outcome": "rolled_back",
        "fix": "Keep the restored NEXTN unit on this GPU class. Let the deploy try the variants that change what "
        "such faults depend on (CUDA graphs, memory): a candidate ladder tries them in order and keeps the first "
        "that passes (ddtree_deploy_candidate_list: ladder_ampere, the field report's attempts on ct129; "
        "ladder_blackwell; or your own ddtree_deploy_candidates), and the tune (playbook ddtree.sglang.tune) tries "
        "them all and keeps the best for your load (ddtree_deploy_load_mix). If {profile} fails on every rung, "
        "report it upstream (sgl-project/sglang #29907) with the saved journal ({journal}) and this report.",
        "why": "The server started but its answers fail the probe (no first token in time, degenerate output, "
        "too slow): a fault of the algorithm on this class, as DDTree on 2x RTX A6000 in the field report; "
        "NEXTN serves there, and the variants change what such faults depend on (CUDA graphs, memory).",
    },
    {
        "name": "equivalence",
        "touches": "unit",
        "outcome": "rolled_back",
        "fix": "Keep the restored unit: {profile} answers the same greedy prompts differently from the unit it "
        "replaced. Compare the two texts in this report; if they part at a near tie (docs/probe.md), lower "
        "ddtree_deploy_equivalence_tokens; otherwise report it upstream (sgl-project/sglang #29907) with this "
        "report and the saved journal ({journal}).",
        "why": "Speculative decoding is lossless: at temperature 0 the candidate must produce the tokens the "
        "target model alone produces. Fast but different output is a wrong build, whatever its speed.",
    },
    {
        "name": "gate",
        "touches": "unit",
        "outcome": "rolled_back",
        "fix": "Keep the restored unit: {profile} serves here but does not gain what the gate requires: "
        "ddtree_deploy_min_gain, or with it null the default judgement (ddtree_deploy_gate_not_worse: not worse "
        "than the baseline's goodput). Try the candidate ladder (ddtree_deploy_candidate_list, or "
        "ddtree_deploy_candidates) or the tune (playbook ddtree.sglang.tune), which keeps the configuration that "
        "serves your load (ddtree_deploy_load_mix) best. If the cause is a derived SLO, give yours "
        "(ddtree_deploy_slo); if it is inconclusive, ddtree_deploy_gate_inconclusive extend measures again; lower "
        "ddtree_deploy_min_gain if the measured gain is worth the switch. ddtree_deploy_min_gain null with "
        "ddtree_deploy_gate_not_worse false turns the gate off (measured, not judged).",
        "why": "A slower or equal profile is not worth the change; the gate keeps the better unit.",
    },
    {
        "name": "bake",
        "touches": "unit",
        "outcome": "rolled_back",
        "fix": "Keep the restored unit: {profile} passed the probe and the gate but regressed under traffic during "
        "the bake (the cause names the metric, its value, its bound and the window). Compare the bake's "
        "measurements in this report with the baseline's; try the candidate ladder (ddtree_deploy_candidate_list), "
        "or report it upstream "
        "(sgl-project/sglang #29907) with this report and the saved journal ({journal}). A check that does not "
        "fit this host is changed or turned off with ddtree_deploy_bake_checks.",
        "why": "Probes and the gate last seconds; regressions that show only under production traffic (accept "
        "length collapsing, aborts, first tokens growing) are seen in the unit's own /metrics while it serves, "
        "and the NEXTN unit is put back as for any failure after the switch (docs/bake.md).",
    },
    {
        "name": "commit",
        "touches": "unit",
        "outcome": "rolled_back",
        "fix": "Keep the restored unit: {profile} passed every check, but it could not be stored as the "
        "last-known-good (or as the candidate awaiting promotion). The cause names what failed: free space or "
        "permissions of ddtree_deploy_store_dir on the host, or the unit changed after it was proved. Fix that, "
        "then deploy again; nothing about {profile} itself failed.",
        "why": "Only a unit stored byte for byte can be rolled back to later: a proved unit that cannot be kept "
        "is not left serving, and the snapshot taken before the switch is put back.",
    },
)
STAGE_NAMES = tuple(stage["name"] for stage in STAGES)
_BY_NAME = {stage["name"]: stage for stage in STAGES}

# Moments that are not stages, each stamped once per run (the last stamp wins):
MARKS = {
    # the old unit stopped for the new one (the sglang role's restart, sglang_restarted_at)
    "stopped": "the old unit stopped",
    # the candidate answered its readiness check
    "ready": "the candidate is ready",
    # the candidate passed its probe: the gate measures from here
    "probed": "the candidate passed its probe",
    # a stage failed; result: {cause, fix, task, said}
    "failed": "a stage failed",
    # the restore restarted the last-known-good unit (its restart_started_at)
    "restart": "the restore restarted the unit",
    # the restored unit is ready again
    "restored": "the restored unit is ready",
    # the restore finished; result: {verified: true|false, state, error}
    "verified": "the restore finished",
    # every stage passed; result: {restarted: true|false}
    "done": "every stage passed",
    # a candidate of ddtree_deploy_candidates begins (issue 21); the events up to the next one are its
    # attempt. result: {index, of, name, profile, variants, extra_args, final}
    "candidate": "a candidate begins",
    # the candidate passed every step (probe, equivalence, gate, bake); result: {figures}
    "passed": "the candidate passed every step",
}


def _now():
    return time.time()


def new_record(run_id):
    return {"run_id": run_id, "events": []}


def append(record, event, result=None, at=None, not_before_stage=False):
    """A copy of record with one more event: a stage of STAGES beginning, or one of MARKS.

    at: the event's time (seconds since the epoch) when it happened elsewhere, e.g. the sglang role's
    restart stamp; not_before_stage: ignore such a time that is older than the current stage (a stamp
    left by an earlier run of the same play), leaving the record as it was."""
    if event not in _BY_NAME and event not in MARKS:
        raise DeployRecordError(
            f"unknown deploy event {event!r}: a stage must be declared in STAGES "
            f"({', '.join(STAGE_NAMES)}) or be one of the marks {', '.join(MARKS)} "
            "(plugins/module_utils/_deploy_record.py)"
        )
    record = dict(record or new_record(None))
    stamp = _now() if at in (None, "") else float(at)
    stages = [e for e in record.get("events", []) if e["event"] in _BY_NAME]
    if not_before_stage and (at in (None, "") or (stages and stamp < stages[-1]["time"])):
        return record
    # One failure per attempt: a candidate's own rescue recorded it, the run's rescue (every candidate
    # failed) must not replace its cause with the summary it fails the host with.
    if event == "failed" and any(e["event"] == "failed" for e in _current_events(record)):
        return record
    record["events"] = list(record.get("events", [])) + [{"event": event, "time": round(stamp, 3), "result": result}]
    return record


def set_result(record, name, result):
    """A copy of record whose stage ``name`` carries ``result``: the stage's own figures (the gate's verdict,
    the bake's measurements), on its latest event in the current attempt (or before the first candidate)."""
    if name not in _BY_NAME:
        raise DeployRecordError(f"result_of: {name!r} is not a declared stage ({', '.join(STAGE_NAMES)})")
    if result is not None and not isinstance(result, dict):
        raise DeployRecordError("result_of: the result must be a mapping")
    record = dict(record)
    events = list(record.get("events", []))
    starts = [i for i, e in enumerate(events) if e["event"] == "candidate"]
    # The current attempt's events, then those before the first candidate (install, options, baseline).
    order = list(reversed(range(starts[-1] if starts else 0, len(events)))) + list(
        reversed(range(starts[0] if starts else 0))
    )
    for index in order:
        if events[index]["event"] == name:
            events[index] = dict(events[index], result=result)
            record["events"] = events
            return record
    raise DeployRecordError(
        f"result_of: the stage {name!r} has not begun in this attempt; begin it first ({{event: {name}}})"
    )


def results(record):
    """Each stage's result ({stage: result or None}) of the stages the current attempt reached, and of those
    before the first candidate (install, options, baseline)."""
    events = list(record.get("events", []))
    first = next((i for i, e in enumerate(events) if e["event"] == "candidate"), len(events))
    current = _current_events(record) if first < len(events) else []
    return {e["event"]: e.get("result") for e in events[:first] + current if e["event"] in _BY_NAME}


def write(record, path, mode=0o600, gid=None):
    """The record as JSON at ``path``, atomically (a temporary file renamed into place): a controller killed
    at any moment leaves the record as of its last event, never half written."""
    data = json.dumps(record, indent=1, sort_keys=True, default=str).encode() + b"\n"
    _files.atomic_write(path, data, mode, uid=None if gid is None else -1, gid=gid)


def _marks(record):
    return _marks_of(record.get("events", []))


def _marks_of(events):
    marks = {}
    for event in events:
        if event["event"] in MARKS:
            marks[event["event"]] = event
    return marks


def _current_events(record):
    """The events of the current attempt (since the last candidate mark), or of the whole record."""
    events = list(record.get("events", []))
    starts = [i for i, e in enumerate(events) if e["event"] == "candidate"]
    return events[starts[-1] :] if starts else events


def attempts(record):
    """The candidates tried, in order: [{candidate (the mark's result), events}]."""
    out = []
    for event in record.get("events", []):
        if event["event"] == "candidate":
            out.append({"candidate": dict(event.get("result") or {}), "events": [event]})
        elif out:
            out[-1]["events"].append(event)
    return out


def current_stage(record):
    """The last stage that began (None before the first)."""
    stages = [e["event"] for e in record.get("events", []) if e["event"] in _BY_NAME]
    return stages[-1] if stages else None


def stage(name):
    """The declared stage (touches, outcome, fix, why)."""
    if name not in _BY_NAME:
        raise DeployRecordError(f"unknown deploy stage {name!r}; declared: {', '.join(STAGE_NAMES)}")
    return _BY_NAME[name]


_TOUCHES = ("nothing", "host", "unit")


def touched(record):
    """What a failure now leaves behind: nothing, host or unit; the most of any stage begun (a later
    candidate failing before its switch still leaves the unit an earlier candidate switched)."""
    names = [e["event"] for e in record.get("events", []) if e["event"] in _BY_NAME]
    return max((stage(n)["touches"] for n in names), key=_TOUCHES.index, default="nothing")


# A bake that failed without a failed check did not judge the unit (sglang_bake's result, no
# failed_checks): the bake stage's fix ("regressed under traffic") would be wrong. The fix by what
# stopped it; the unit is restored all the same, as nothing proved it under traffic.
BAKE_UNJUDGED_FIX = {
    "inconclusive": "The bake saw no traffic it could judge, which is not a verdict on {profile}: bake while the unit "
    "serves production traffic, or with ddtree_deploy_bake_inconclusive load (synthetic traffic); if it saw none even "
    "under load, check that the unit answers completions and that its /metrics counts them (docs/bake.md).",
    "restarted": "The unit restarted during the bake (its counters went down): read the saved journal ({journal}) "
    "for why it stopped. A crash under traffic is a regression of {profile} to report upstream (sgl-project/sglang "
    "#29907) with this report and the journal.",
    "unreadable": "The bake could not read the unit's /metrics, which is not a verdict on {profile}: check that the "
    "unit still runs (the saved journal: {journal}) and serves /metrics at ddtree_deploy_base_url, then deploy again.",
}


def bake_unjudged(failed_result):
    """Why a failed sglang_bake result judged nothing (a key of BAKE_UNJUDGED_FIX), or None when a
    check failed (a regression: the bake stage's own fix)."""
    if not isinstance(failed_result, dict) or "measurements" not in failed_result or failed_result.get("failed_checks"):
        return None
    if failed_result.get("result") == "inconclusive":
        return "inconclusive"
    errors = [m.get("error") or "" for m in failed_result.get("measurements") or [] if isinstance(m, dict)]
    return "restarted" if any("restarted" in e for e in errors) else "unreadable"


def _failed_items(failed_result):
    """The failed results in a task's result: a loop's failed items, else the task itself."""
    failed_result = failed_result if isinstance(failed_result, dict) else {}
    items = failed_result.get("results")
    if isinstance(items, list):
        return [r for r in items if isinstance(r, dict) and r.get("failed")]
    return [failed_result] if failed_result.get("failed") else []


def failure(record, failed_result, sglang_failure=None):
    """The "failed" mark's result {task, cause, fix, said} from the failed task's result
    (ansible_failed_result). A loop names each failed item: "chat: HTTP 400 ...; ...". At the switch,
    the sglang role's {step, cause, fix, line} (sglang_failure: the journal's cause of a unit that
    would not start) is the better account: which of its tasks failed, the cause with its own fix,
    and the server's line behind it."""
    failed_result = failed_result if isinstance(failed_result, dict) else {}
    items = [r for r in failed_result.get("results") or [] if isinstance(r, dict) and r.get("failed")]
    if items:
        msg = "; ".join(f"{r.get('item')}: {r.get('msg')}" for r in items)
    else:
        msg = failed_result.get("msg") or "unknown failure"
    role = sglang_failure if isinstance(sglang_failure, dict) and current_stage(record) == "switch" else {}
    unjudged = bake_unjudged(failed_result) if current_stage(record) == "bake" else None
    return {
        "task": role.get("step") or "",
        "cause": role.get("cause") or msg,
        "fix": role.get("fix") or (BAKE_UNJUDGED_FIX[unjudged] if unjudged else ""),
        "said": role.get("line") or "",
    }


def restore_failure(failed_result, failed_task="", started=False, probed=False, unit=None):
    """The "verified" mark's result {verified: false, state, systemd_state, error} of a restore that
    failed. A restore is judged by what it is: when the restored unit was started and what failed
    is the means to verify it (a module that could not run: no python3-requests, a crash), not a
    verdict on the server (sglang_wait's state, llm_probe's verdict, a probe of the restored unit),
    systemd's view decides (unit: systemd_unit_snapshot's read): active is "restored, not
    verified", anything else is down."""
    failed = _failed_items(failed_result)
    verdicts = [r for r in failed if "state" in r or "verdict" in r]
    unverified = bool(started) and bool(failed) and not verdicts and not probed
    unit = unit if isinstance(unit, dict) else {}
    if failed:
        said = "; ".join(str(r.get("msg", "")) for r in failed)
    else:
        said = (failed_result or {}).get("msg") or "unknown"
    return {
        "verified": False,
        "state": unit.get("active_state") or "unknown" if unverified else "down",
        "systemd_state": unit.get("systemd_state"),
        "error": f"{failed_task or ''}: {said}",
    }


def _span(marks, start, end):
    if start in marks and end in marks:
        return round(marks[end]["time"] - marks[start]["time"], 2)
    return None


# Outcomes of a check-mode run (--check): nothing on the host changed, whatever the stage. Its own
# outcomes, not a stage's: "preflight_failed" or "rolled_back" would say a deploy ran.
CHECK_OUTCOMES = {
    "checked": "every check that can run without changing the host passed; nothing was changed",
    "check_failed": "a check failed; nothing was changed",
}


def outcome(record, check_mode=False):
    """The host's outcome: deployed, unchanged, <stage>_failed..., rolled_back, restore_failed,
    restored_unverified; in check mode checked or check_failed."""
    marks = _marks(record)
    if check_mode:
        return "check_failed" if "failed" in marks else "checked"
    events = record.get("events", [])
    done = [i for i, e in enumerate(events) if e["event"] == "done"]
    # Done, and no failure after it (an earlier candidate's failure is not the host's).
    if done and not any(e["event"] == "failed" for e in events[done[-1] :]):
        return "deployed" if (marks["done"]["result"] or {}).get("restarted", True) else "unchanged"
    name = current_stage(record)
    if name is None:
        raise DeployRecordError("a deploy record without any stage has no outcome")
    declared = stage(name)
    if touched(record) != "unit":
        return declared["outcome"]
    if declared["touches"] != "unit":
        declared = stage("switch")
    verdict = (marks.get("verified") or {}).get("result") or {}
    if verdict.get("verified"):
        return declared["outcome"]
    if verdict.get("state") == "active":
        return "restored_unverified"
    return "restore_failed"


def downtime(record, check_mode=False):
    """Seconds from the old unit stopped to a service answering again, and its parts. Two of them are
    model loads (the candidate's and the restored unit's); probing and restore are the role's share."""
    marks = _marks(record)
    parts = {"candidate_load_s": None, "probing_s": None, "restore_s": None, "restored_load_s": None}
    if check_mode:
        # Nothing was stopped: the sglang role stamps a restart it only would have done (its
        # set_fact runs in check mode too), so that stamp says nothing here.
        return 0.0, parts
    if len(attempts(record)) > 1:
        return _downtime_of_attempts(attempts(record))
    if "stopped" not in marks:
        # The old unit was never stopped: a failure before the switch or before the restart, or an
        # unchanged unit. It served throughout.
        return 0.0, parts
    # The candidate's load ends when it is ready, or when it failed before being ready.
    parts["candidate_load_s"] = _span(marks, "stopped", "ready" if "ready" in marks else "failed")
    if "restart" in marks:
        probed = "probed" if "probed" in marks else "failed"
        parts["probing_s"] = _span(marks, "ready", probed)
        parts["restore_s"] = _span(marks, probed, "restart")
        parts["restored_load_s"] = _span(marks, "restart", "restored")
        return _span(marks, "stopped", "restored"), parts
    if "done" in marks and "ready" in marks:
        return _span(marks, "stopped", "ready"), parts
    return None, parts


def _downtime_of_attempts(tried):
    """Downtime over several candidates: the service is down from a stop until a candidate that passed is
    ready or the last-known-good is restored. The parts add up to it: each candidate's load and probing,
    each restore and restored load, and switching_s, the time from a failed candidate to the next one's
    stop when nothing was restored in between (its journal, the next candidate's options check)."""
    names = ("candidate_load_s", "probing_s", "restore_s", "restored_load_s", "switching_s")
    parts = dict.fromkeys(names, 0.0)
    total = 0.0
    down_since = None
    gap_from = None
    for attempt in tried:
        marks = _marks_of(attempt["events"])
        # Where this attempt's counted time ends before a restore or the next candidate: its probe
        # passed (the gate or bake failed it later), or it failed.
        end = marks.get("probed") or marks.get("failed")
        if "stopped" in marks:
            if down_since is None:
                down_since = marks["stopped"]["time"]
            elif gap_from is not None:
                parts["switching_s"] += marks["stopped"]["time"] - gap_from
            loaded = marks.get("ready") or marks.get("failed")
            if loaded:
                parts["candidate_load_s"] += loaded["time"] - marks["stopped"]["time"]
            if "ready" in marks and "passed" not in marks and end:
                parts["probing_s"] += end["time"] - marks["ready"]["time"]
        elif down_since is None:
            continue
        elif gap_from is not None and end:
            # Failed before its switch (its options), down all along.
            parts["switching_s"] += end["time"] - gap_from
        if "restart" in marks and end:
            parts["restore_s"] += marks["restart"]["time"] - end["time"]
            if "restored" in marks:
                parts["restored_load_s"] += marks["restored"]["time"] - marks["restart"]["time"]
        if "passed" in marks and "ready" in marks:
            total += marks["ready"]["time"] - down_since
            down_since = gap_from = None
        elif "restored" in marks:
            total += marks["restored"]["time"] - down_since
            down_since = gap_from = None
        elif end:
            gap_from = end["time"]
    parts = {name: round(value, 2) for name, value in parts.items()}
    return (round(total, 2) if down_since is None else None), parts


def _failure_of(result, step, journal, profile):
    """A failed mark's result as the report shows it: with its step, on one line, with a fix."""
    if result is None:
        return None
    failure = dict(result)
    failure.pop("figures", None)
    failure["step"] = step
    # One line: a module's message may hold a parser's or a traceback's line breaks, and the
    # cause is quoted inside the host line, the failure message and a Markdown table cell.
    if failure.get("cause"):
        failure["cause"] = " ".join(str(failure["cause"]).split())
    # Any fix may name the journal and the profile: a stage's, the sglang role's, an unjudged bake's.
    fix = failure.get("fix") or stage(step)["fix"]
    failure["fix"] = fix.replace("{journal}", journal).replace("{profile}", profile)
    return failure


def candidate_journal(journal, candidate):
    """Where a candidate's rescue saves its journal: beside the host's (<host>.journal.txt) as
    <host>.<index>-<name>.journal.txt; the host's own when there is one candidate."""
    if not journal or (candidate.get("of") or 1) <= 1:
        return journal
    stem = journal[: -len(".journal.txt")] if journal.endswith(".journal.txt") else journal
    name = "".join(ch if ch.isalnum() or ch in "+-_" else "_" for ch in str(candidate.get("name") or ""))
    return f"{stem}.{candidate.get('index')}-{name}.journal.txt"


def _attempt_summary(attempt, journal, step_before, ends_at):
    """One candidate tried: what it was, how it ended (passed, failed, not finished), where and why it
    failed with the fix, its figures (gain per level of the gate, from the passed or failed mark), its
    time and its share of the downtime."""
    candidate = attempt["candidate"]
    events = attempt["events"]
    marks = _marks_of(events)
    stages = [e["event"] for e in events if e["event"] in _BY_NAME]
    step = stages[-1] if stages else step_before
    failed = (marks.get("failed") or {}).get("result")
    reached = {e["event"] for e in events if e["event"] in _BY_NAME}
    failure = (
        _failure_of(
            failed, step, candidate_journal(journal, candidate), candidate.get("name") or candidate.get("profile") or ""
        )
        or {}
    )
    figures = ((marks.get("passed") or {}).get("result") or failed or {}).get("figures") or {}
    # Figures of the steps it reached only (the facts behind them may still be an earlier candidate's).
    gains = [g for g in figures.get("gains") or [] if isinstance(g, dict)] if "equivalence" in reached else []
    level = _candidates.production_level(gains)
    total, parts = _downtime_of_attempts([attempt])
    probe = figures.get("probe") if isinstance(figures.get("probe"), dict) and "probe" in reached else {}
    return {
        "index": candidate.get("index"),
        "of": candidate.get("of"),
        "name": candidate.get("name"),
        "profile": candidate.get("profile"),
        "variants": list(candidate.get("variants") or []),
        "extra_args": dict(candidate.get("extra_args") or {}),
        "final": bool(candidate.get("final")),
        "result": "passed" if "passed" in marks else "failed" if failed is not None else "not finished",
        "failed_step": failure.get("step"),
        "failed_task": failure.get("task") or None,
        "cause": failure.get("cause"),
        "fix": failure.get("fix"),
        "server_said": failure.get("said") or None,
        "gains": gains,
        "production_level": level,
        "gain_at_production": _candidates.gain_at(gains, level),
        "gate": figures.get("gate") if "equivalence" in reached else "not run",
        "equivalence_ok": figures.get("equivalence_ok") if "equivalence" in reached else None,
        # Its first probe after the switch: the API, the decode rate and the first token.
        "probe": {k: probe.get(k) for k in ("item", "tokens_per_second", "ttft_s", "failed") if k in probe},
        "journal": candidate_journal(journal, candidate) if failed is not None else None,
        # The restore before the next candidate (ddtree_deploy_restore_between_candidates), or the run's.
        "restore": (marks.get("verified") or {}).get("result"),
        "downtime_s": total,
        "downtime": parts,
        "timings": {"total_s": round(ends_at - events[0]["time"], 2)},
    }


def summary(record, profile="", journal="", check_mode=False):
    """Everything the report says about the run's course: stage, outcome, failure, downtime, timings, and
    with candidates (issue 21) every candidate tried, the winner, the one serving and the one kept."""
    marks = _marks(record)
    name = current_stage(record)
    the_outcome = outcome(record, check_mode)
    # The host's failure is the last candidate's (an earlier one's is not the host's), none once deployed.
    failure = (_marks_of(_current_events(record)).get("failed") or {}).get("result")
    tried = attempts(record)
    # The fix names the profile that failed: the last candidate's.
    profile = (tried[-1]["candidate"].get("profile") if tried else None) or profile
    host_journal = journal
    journal = candidate_journal(journal, tried[-1]["candidate"]) if tried else journal
    failure = None if the_outcome in ("deployed", "unchanged") else _failure_of(failure, name, journal, profile)
    total, parts = downtime(record, check_mode)
    verified = (marks.get("verified") or {}).get("result") or {}
    events = record.get("events", [])
    step_before = None
    summaries = []
    for i, attempt in enumerate(tried):
        ends_at = tried[i + 1]["events"][0]["time"] if i + 1 < len(tried) else _now()
        summaries.append(_attempt_summary(attempt, host_journal, step_before, ends_at))
        step_before = summaries[-1]["failed_step"] or step_before
    mode = (tried[0]["candidate"].get("mode") if tried else None) or "deploy"
    # A tune's load mix (ddtree_deploy_load_mix or Prometheus', in the candidate event): it chooses the winner.
    mix = (tried[0]["candidate"].get("load_mix") if tried else None) or None
    contenders = [a for a in summaries if not a["final"]]
    if mode == "tune":
        winner = _candidates.winner(contenders, mix=mix)
    else:
        winner = next((a["index"] for a in contenders if a["result"] == "passed"), None)
    serving = summaries[-1]["index"] if summaries and summaries[-1]["result"] == "passed" else None
    kept = winner if the_outcome in ("deployed", "unchanged") else None
    return {
        "stage": name,
        # Each stage's own result (deploy_record result_of), the current attempt's.
        "results": results(record),
        "touched": touched(record),
        "outcome": the_outcome,
        "outcome_text": _candidates.outcome_text(the_outcome, summaries, kept, mode, mix),
        "won": _candidates.won(summaries, kept, mode, mix),
        "tried_text": _candidates.tried_text(summaries) if kept is None else None,
        "mode": mode,
        "failure": failure,
        # Where the journal of the host's failure is saved (the last candidate's).
        "journal": journal,
        "restore": verified or None,
        "downtime_s": total,
        "downtime": parts,
        "candidates": summaries,
        "winner": winner,
        "serving": serving,
        "kept": kept,
        "timings": {
            "failure_to_verified_s": _span(marks, "failed", "verified"),
            "restart_to_verified_s": _span(marks, "restart", "verified"),
            "total_s": round(_now() - events[0]["time"], 2) if events else None,
        },
    }


def probe_step(probes, purpose, api, result):
    """probes with one more API of probe_service.yml's run for ``purpose`` (new, restored, promoted, running):
    its llm_probe result (failed or not), or, when that task was skipped because an API before it failed
    (stop at failure), a note that it was not tried. ``msg`` is every failed API's "api: message"."""
    probes = dict(probes or {})
    side = dict(probes.get(purpose) or {"results": [], "not_tried": {}, "failed_api": None})
    result = result if isinstance(result, dict) else {}
    if result.get("skipped"):
        side["not_tried"] = dict(
            side.get("not_tried") or {},
            **{api: f"not tried: {side.get('failed_api')} failed first, the server is known broken"},
        )
    else:
        side["results"] = list(side.get("results") or []) + [dict(result, item=api)]
        if side.get("failed_api") is None and result.get("failed"):
            side["failed_api"] = api
    side["msg"] = "; ".join(f"{r['item']}: {r.get('msg')}" for r in side["results"] if r.get("failed")) or None
    probes[purpose] = side
    return probes


def _probe_line(result):
    """One API's probe, as the report shows it."""
    failed = bool(result.get("failed", False))
    return {
        "ok": not failed,
        "msg": result.get("msg") if failed else None,
        "tokens_per_second": result.get("tokens_per_second"),
        "ttft_s": result.get("ttft_s"),
        "accept_length": (result.get("spec") or {}).get("accept_length"),
        "degenerate": result.get("degenerate"),
        "text": (result.get("text") or "")[:120],
        "tried": True,
    }


def _not_tried(reason):
    return {
        "ok": False,
        "tried": False,
        "msg": reason,
        "tokens_per_second": None,
        "ttft_s": None,
        "accept_length": None,
        "degenerate": None,
        "text": "",
    }


def bake_report(run, bake=None, bake_baseline=None):
    """The bake's part of the host report: its settings, the NEXTN baseline's metrics (or why there are
    none), every measurement, the figures over the bake and the checks that failed it.

    bake: sglang_bake's result (state bake), or None when the bake did not run; bake_baseline: its result
    with state baseline on the unit before the switch (failed: that unit serves no /metrics)."""
    seconds = run.get("bake_s") or 0
    out = {
        "seconds": seconds,
        "interval": run.get("bake_interval"),
        "inconclusive_policy": run.get("bake_inconclusive"),
        "result": "off" if not seconds else "not run",
        "msg": None,
        "baseline": None,
        "baseline_msg": None,
        "measurements": [],
        "summary": None,
        "failed_checks": [],
        "load": None,
        "verdict": None,
        "source": None,
    }
    base = bake_baseline if isinstance(bake_baseline, dict) else {}
    if base and not base.get("skipped") and not base.get("summary"):
        out["baseline_msg"] = (
            f"the unit before the switch serves no metrics ({base.get('msg')}): the checks relative to the "
            "baseline were skipped"
        )
    elif base.get("summary"):
        out["baseline"] = base["summary"]
    bake = bake if isinstance(bake, dict) else {}
    if not bake or bake.get("skipped"):
        return out
    out["result"] = bake.get("result") or ("fail" if bake.get("failed") else "not run")
    out["msg"] = bake.get("msg") or None
    out["measurements"] = [
        {
            "index": m.get("index"),
            "elapsed": m.get("elapsed"),
            "status": m.get("status"),
            "spec_accept_length": (m.get("window") or {}).get("spec_accept_length"),
            "requests": (m.get("window") or {}).get("requests"),
            "abort_ratio": (m.get("window") or {}).get("abort_ratio"),
            "ttft_p90": (m.get("window") or {}).get("ttft_p90"),
            "failed": [c.get("name") for c in m.get("checks") or [] if c.get("result") == "fail"],
            "error": m.get("error"),
        }
        for m in bake.get("measurements") or []
    ]
    out["summary"] = bake.get("summary") or None
    out["failed_checks"] = bake.get("failed_checks") or []
    out["load"] = bake.get("load")
    # The analysis' verdict (successful, failed, inconclusive, error) and where the windows were read: the unit's
    # own /metrics or Prometheus (issue 36), its URL without credentials.
    out["verdict"] = bake.get("verdict")
    source = bake.get("source") if isinstance(bake.get("source"), dict) else None
    out["source"] = dict(source, url=_public_url(source.get("url"))) if source else None
    return out


def _public_url(url):
    """A URL as a report may show it: no user, password, query or fragment (a token may travel in any)."""
    if not isinstance(url, str) or not url:
        return url
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _stages_part(results):
    """What the gate's and the router's stages handed the record (their event's result): the gate's levels and
    where they came from (levels_msg, e.g. "your traffic: ..."); the drain's course in the router (how long the
    worker was out, the requests drained, the times it was put back, the last error), or None without a router."""
    gate = results.get("gate") if isinstance(results.get("gate"), dict) else {}
    drain = results.get("drain") if isinstance(results.get("drain"), dict) else None
    router = {k: drain.get(k) for k in ("out", "out_s", "drained", "returned", "error")} if drain else None
    return gate.get("levels_msg"), router


def _reached(record, probes, gate_new, verdict, bake):
    """The facts behind probes, gate and bake, kept only for the steps the last candidate reached (the facts
    may still be an earlier candidate's)."""
    tried = attempts(record)
    if tried:
        reached = {e["event"] for e in tried[-1]["events"] if e["event"] in _BY_NAME}
        probes = probes if "probe" in reached else dict(probes or {}, new=None)
        if "equivalence" not in reached:
            gate_new, verdict = None, None
        bake = bake if "bake" in reached else None
    return probes or {}, gate_new, verdict or {}, bake


def _course_part(record, run, course):
    """Who and what: the host, the run, the candidate shown (the one kept, else the last tried), the outcome
    with its failure (step, task, cause, fix, the server's line)."""
    tried = course["candidates"]
    shown = next((a for a in tried if a["index"] == course["kept"]), tried[-1] if tried else None)
    failure = course["failure"] or {}
    return {
        "host": run.get("host"),
        "run_id": record.get("run_id"),
        "service": run.get("service"),
        "profile": shown["profile"] if shown else run.get("profile"),
        "profile_variants": (shown["variants"] if shown else run.get("profile_variants")) or [],
        "check_mode": bool(run.get("check_mode")),
        "outcome": course["outcome"],
        # Issue 21: which candidate won and of how many ("deployed ddtree+nograph, 2nd of 3").
        "outcome_text": course["outcome_text"],
        "won": course["won"],
        "mode": course["mode"],
        "candidate": shown["name"] if shown else run.get("profile"),
        "kept": course["kept"],
        "release": run.get("release"),
        "gpu_class": run.get("gpu_class"),
        "gpu_count": run.get("gpu_count"),
        "failed_step": failure.get("step") or None,
        "failed_task": failure.get("task") or None,
        "cause": failure.get("cause") or None,
        "fix": failure.get("fix") or None,
        "server_said": failure.get("said") or None,
        # Whether the deployed unit is the host's last-known-good; null when nothing was deployed.
        "promoted": bool(run.get("promote")) if course["outcome"] in ("deployed", "unchanged") else None,
        "previous_algorithm": run.get("previous_algorithm"),
    }


def _gate_part(run, base, gate_new, verdict):
    """Both sides of the gate, its verdict, and the equivalence check with both texts of every prompt that
    differed. base: the gate's sweep of the service before the switch (tokens_per_second and ttft_s at its
    first level, one stream by default; every level is in gate.baseline.levels)."""
    return {
        "baseline": {
            "measured": bool(base.get("measured", False)),
            "failed": "measured" in base and not base["measured"],
            "msg": "; ".join(base.get("failures") or []) or None,
            "tokens_per_second": base.get("median"),
            "spread": base.get("spread"),
            "ttft_s": base.get("ttft_s"),
            "accept_length": None,
        },
        # The gain at the first level, and at every level of the gate's sweep:
        # {concurrency, before, new, gain, required, ok, noise, within_noise}.
        "gain": verdict.get("gain"),
        "gains": verdict.get("gains") or [],
        "min_gain": run.get("min_gain"),
        "gate": {
            "prompts": list(run.get("gate_prompts") or []) if base else [],
            "concurrency": list(run.get("gate_concurrency") or []) if base else [],
            "repeats": run.get("gate_repeats"),
            "baseline": base or None,
            "new": gate_new,
            "verdict": verdict.get("gate", "not run"),
            "msg": verdict.get("gate_msg") or None,
            "noise": verdict.get("noise"),
            "within_noise": verdict.get("within_noise"),
            "without_baseline": bool(run.get("gate_without_baseline")) and not base.get("measured", False),
        },
        "equivalence": verdict.get("equivalence")
        or {"tokens": run.get("equivalence_tokens"), "ok": None, "mismatches": [], "msg": "not run"},
    }


def _probes_part(course, probes):
    """The new service's probe, API by API (and those not tried), and the restored service's."""
    new = probes.get("new") or {}
    lines = {r["item"]: _probe_line(r) for r in new.get("results", []) if not r.get("skipped")}
    lines.update({api: _not_tried(reason) for api, reason in (new.get("not_tried") or {}).items()})
    restored = [r for r in (probes.get("restored") or {}).get("results", []) if not r.get("skipped")]
    restore = course["restore"] or {}
    return {
        "new": lines,
        "restored": {
            "verified": bool(restored) and not any(r.get("failed") for r in restored),
            "tokens_per_second": restored[0].get("tokens_per_second") if restored else None,
            "ttft_s": restored[0].get("ttft_s") if restored else None,
            "restore_error": restore.get("error"),
            # systemd's view of the restored unit when its verification could not run.
            "systemd_state": restore.get("systemd_state") if course["outcome"] != "rolled_back" else None,
        },
    }


def report(record, run, probes=None, baseline=None, gate_new=None, verdict=None, bake=None, bake_baseline=None):
    """The host report's data (host_report.json): the run's settings (run), the course from the record,
    the probes (probes[new], probes[restored]: probe_service.yml's), both sides of the gate and its verdict.

    run: host, run_id, service, profile, profile_variants, check_mode, gpu_class, gpu_count, promote,
    previous_algorithm, min_gain, gate_prompts (ids), gate_concurrency, gate_repeats, equivalence_tokens,
    gate_without_baseline,
    snapshot (the store, or None), journal (its path, or None when no journal was saved)."""
    course = summary(
        record, profile=run.get("profile", ""), journal=run.get("journal") or "", check_mode=run.get("check_mode")
    )
    probes, gate_new, verdict, bake = _reached(record, probes, gate_new, verdict, bake)
    out = _course_part(record, run, course)
    out.update(_gate_part(run, baseline or {}, gate_new, verdict))
    out.update(_probes_part(course, probes))
    out["gate"]["levels_msg"], router = _stages_part(course["results"])
    out.update(
        {
            # The drain stage's course in the router (docs/deploy.md, "Fleet behind a router"); null without one.
            "router": router,
            # Seconds from the old unit stopped to a service answering again, and its parts.
            "downtime_s": course["downtime_s"],
            "downtime": course["downtime"],
            # The bake after the gate (docs/bake.md): settings, the baseline's metrics, every measurement.
            "bake": bake_report(run, bake, bake_baseline),
            # Every candidate tried, in order: its outcome, failing step, cause, fix, figures and timings.
            "candidates": course["candidates"],
            "production_concurrency": max(run.get("gate_concurrency") or [0]) or None,
            "timings": course["timings"],
            "snapshot": run.get("snapshot"),
            "journal": run.get("journal_saved"),
            # Each stage's own result (deploy_record result_of) and the run's course as it happened: every event
            # of the record, each with its time and result.
            "results": course["results"],
            "events": list(record.get("events", [])),
        }
    )
    return out
