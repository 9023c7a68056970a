# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The deploy record: stages declared once, outcomes and downtime derived from events."""

import json
import re
from pathlib import Path

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils import _deploy_record as dr
from ansible_collections.ddtree.sglang.plugins.module_utils import _run_record as rr

ROLE = Path(__file__).resolve().parents[4] / "roles" / "ddtree_deploy"


def run(*events):
    """A record from (event, time[, result]) tuples."""
    record = dr.new_record("r1")
    for event in events:
        record = dr.append(record, event[0], result=event[2] if len(event) > 2 else None, at=event[1])
    return record


def test_every_stage_is_declared_with_what_a_failure_there_leaves_and_a_fix():
    assert dr.STAGE_NAMES[:2] == ("preflight", "snapshot")
    for stage in dr.STAGES:
        assert stage["touches"] in ("nothing", "host", "unit"), stage["name"]
        assert stage["outcome"], stage["name"]
        assert stage["fix"].strip() and stage["why"].strip(), stage["name"]
    # Once a stage touches the unit, every later one does: a rescue restores from there on.
    touches = [s["touches"] for s in dr.STAGES]
    assert touches == sorted(touches, key=["nothing", "host", "unit"].index)


def test_the_role_names_only_declared_events():
    named = set()
    for path in (ROLE / "tasks").glob("*.yml"):
        events = set(re.findall(r"ddtree\.sglang\.deploy_record:\s*(?:\{\s*)?event: (\w+)", path.read_text()))
        if path.stem in rr.KINDS:
            # rollback.yml and promote.yml keep records of their own kind (_run_record.KINDS).
            assert events and events <= set(rr.KINDS[path.stem]), f"{path.name}: {events - set(rr.KINDS[path.stem])}"
            continue
        named |= events
    assert named, "the role appends no event through the deploy_record filter"
    unknown = named - set(dr.STAGE_NAMES) - set(dr.MARKS)
    assert not unknown, f"the role names events the record does not declare: {unknown}"
    missing = set(dr.STAGE_NAMES) - named
    assert not missing, f"stages declared but never begun by the role's tasks: {missing}"


def test_an_unknown_event_is_an_error_not_a_failed_outcome():
    with pytest.raises(dr.DeployRecordError, match="unknown deploy event 'soak'.*declared in STAGES"):
        dr.append(dr.new_record("r"), "soak")


def test_a_failed_probe_rolled_back_and_verified():
    record = run(
        ("preflight", 100),
        ("snapshot", 101),
        ("install", 102),
        ("options", 103),
        ("baseline", 104),
        ("switch", 110),
        ("stopped", 111),
        ("ready", 131),
        ("probe", 131),
        ("failed", 133.5, {"cause": "completions: no first token within 4 s (max_ttft)"}),
        ("restart", 135),
        ("restored", 150),
        ("verified", 151, {"verified": True}),
    )
    s = dr.summary(record, profile="ddtree", journal="/r/ct129.journal.txt")
    assert s["outcome"] == "rolled_back"
    assert s["failure"]["step"] == "probe"
    assert "ddtree fails on every rung" in s["failure"]["fix"] and "/r/ct129.journal.txt" in s["failure"]["fix"]
    assert s["downtime_s"] == 39.0
    assert s["downtime"] == {"candidate_load_s": 20.0, "probing_s": 2.5, "restore_s": 1.5, "restored_load_s": 15.0}
    assert s["timings"]["failure_to_verified_s"] == 17.5
    assert s["timings"]["restart_to_verified_s"] == 16.0


def test_a_failure_before_the_switch_touched_nothing_and_had_no_downtime():
    record = run(("preflight", 1), ("snapshot", 2), ("install", 3), ("options", 4), ("failed", 5, {"cause": "x"}))
    s = dr.summary(record)
    assert (s["outcome"], s["touched"], s["downtime_s"]) == ("options_refused", "host", 0.0)
    assert s["failure"]["fix"].startswith("Correct the setting")


def test_a_cause_with_its_own_fix_keeps_it():
    record = run(("switch", 1), ("stopped", 2), ("failed", 3, {"cause": "Not enough memory", "fix": "lower it"}))
    assert dr.summary(record)["failure"]["fix"] == "lower it"


@pytest.mark.parametrize(
    "verdict, outcome",
    [
        ({"verified": False, "state": "active"}, "restored_unverified"),
        ({"verified": False, "state": "failed"}, "restore_failed"),
        (None, "restore_failed"),
    ],
)
def test_a_restore_that_did_not_prove_the_unit(verdict, outcome):
    events = [("switch", 1), ("stopped", 2), ("failed", 3, {"cause": "x"})]
    if verdict is not None:
        events.append(("verified", 9, verdict))
    s = dr.summary(run(*events))
    assert s["outcome"] == outcome
    assert s["downtime_s"] is None  # still down, or not known to serve
    # A switch that failed before its restart never stopped the old unit.
    assert dr.summary(run(("switch", 1), ("failed", 3, {"cause": "x"})))["downtime_s"] == 0.0


def test_deployed_and_unchanged():
    deployed = run(("switch", 1), ("stopped", 2), ("ready", 20), ("probe", 20), ("gate", 22), ("done", 30, {}))
    s = dr.summary(deployed)
    assert (s["outcome"], s["downtime_s"], s["downtime"]["candidate_load_s"]) == ("deployed", 18.0, 18.0)
    unchanged = run(("switch", 1), ("probe", 2), ("gate", 3), ("done", 4, {"restarted": False}))
    assert (dr.summary(unchanged)["outcome"], dr.summary(unchanged)["downtime_s"]) == ("unchanged", 0.0)


def test_check_mode():
    s = dr.summary(run(("preflight", 1), ("done", 2, {})), check_mode=True)
    assert (s["outcome"], s["downtime_s"]) == ("checked", 0.0)


def test_check_mode_ignores_the_restart_the_role_only_would_have_done():
    # The sglang role stamps sglang_restarted_at in check mode too; nothing stopped.
    s = dr.summary(run(("switch", 1), ("stopped", 2), ("ready", 3), ("done", 4, {})), check_mode=True)
    assert (s["outcome"], s["downtime_s"]) == ("checked", 0.0)


def test_a_check_that_fails_in_check_mode_is_check_failed_not_a_deploy_outcome():
    s = dr.summary(run(("preflight", 1), ("options", 2), ("failed", 3, {"cause": "refuses --x"})), check_mode=True)
    assert (s["outcome"], s["downtime_s"], s["failure"]["step"]) == ("check_failed", 0.0, "options")


def test_a_restart_stamp_older_than_the_stage_is_another_runs():
    record = run(("switch", 50))
    assert dr.append(record, "stopped", at=10, not_before_stage=True) == record
    assert dr.append(record, "stopped", at=None, not_before_stage=True) == record
    assert dr.append(record, "stopped", at=51, not_before_stage=True)["events"][-1]["event"] == "stopped"


def test_a_failed_algorithm_gets_the_next_steps():
    # DDTree failing on a class: keep NEXTN, let the candidate ladder or the tune try the variants (issue 38), or
    # report upstream with the journal.
    probe = " ".join(dr.stage("probe")["fix"].split())
    for words in ("NEXTN", "ddtree_deploy_candidate_list: ladder_ampere", "ddtree.sglang.tune", "#29907", "{journal}"):
        assert words in probe, words


def test_the_report_of_a_rollback_names_the_probe_and_the_restored_service():
    record = run(
        ("preflight", 100),
        ("snapshot", 101),
        ("switch", 110),
        ("stopped", 111),
        ("ready", 131),
        ("probe", 131),
        ("failed", 133.5, {"cause": "completions: no first token within 4 s (max_ttft)"}),
        ("restart", 135),
        ("restored", 150),
        ("verified", 151, {"verified": True}),
    )
    probes = {
        "new": {
            "results": [{"item": "completions", "failed": True, "msg": "no first token within 4 s (max_ttft)"}],
            "not_tried": {"chat": "not tried: completions failed first, the server is known broken"},
        },
        "restored": {"results": [{"item": "completions", "failed": False, "tokens_per_second": 50.2, "ttft_s": 0.05}]},
    }
    base = {"measured": True, "median": 50.1, "spread": 0.01, "ttft_s": 0.06, "levels": []}
    r = dr.report(
        record,
        {"host": "ct129", "profile": "ddtree", "promote": True, "journal": "/r/ct129.journal.txt"},
        probes=probes,
        baseline=base,
    )
    assert (r["outcome"], r["failed_step"], r["promoted"]) == ("rolled_back", "probe", None)
    assert r["new"]["completions"]["ok"] is False and r["new"]["chat"]["tried"] is False
    assert r["restored"] == {
        "verified": True,
        "tokens_per_second": 50.2,
        "ttft_s": 0.05,
        "restore_error": None,
        "systemd_state": None,
    }
    assert (r["baseline"]["tokens_per_second"], r["baseline"]["ttft_s"]) == (50.1, 0.06)
    assert r["downtime_s"] == 39.0 and r["equivalence"]["msg"] == "not run"
    assert "/r/ct129.journal.txt" in r["fix"]


def test_the_report_of_a_deploy():
    record = run(("switch", 1), ("stopped", 2), ("ready", 20), ("probe", 20), ("gate", 22), ("done", 30, {}))
    verdict = {"gain": 0.21, "gate": "pass", "gate_msg": "gain +21 %", "equivalence": {"ok": True, "msg": "same"}}
    r = dr.report(record, {"host": "ct200", "promote": True, "gate_prompts": ["a"]}, verdict=verdict)
    assert (r["outcome"], r["promoted"], r["gain"], r["gate"]["verdict"]) == ("deployed", True, 0.21, "pass")
    assert r["cause"] is None and r["fix"] is None and r["downtime_s"] == 18.0


# The rescue's two derived results (deploy_record's failed_result), from what Ansible hands a rescue.
def _at(stage_name):
    record = dr.new_record("r")
    for name in dr.STAGE_NAMES[: dr.STAGE_NAMES.index(stage_name) + 1]:
        record = dr.append(record, name)
    return record


def test_a_failure_names_each_failed_item_of_a_loop():
    failed = {
        "failed": True,
        "msg": "One or more items failed",
        "results": [
            {"item": "completions", "failed": False},
            {"item": "chat", "failed": True, "msg": "HTTP 400: DFLASH target_hidden feature dim mismatch"},
        ],
    }
    result = dr.failure(_at("probe"), failed)
    assert result == {
        "task": "",
        "cause": "chat: HTTP 400: DFLASH target_hidden feature dim mismatch",
        "fix": "",
        "said": "",
    }


def test_a_failure_without_a_message_is_unknown():
    assert dr.failure(_at("probe"), {})["cause"] == "unknown failure"
    assert dr.failure(_at("probe"), None)["cause"] == "unknown failure"


def test_at_the_switch_the_sglang_roles_journal_cause_is_the_account():
    sglang_failure = {
        "step": "wait for readiness",
        "cause": "out of GPU memory at start",
        "fix": "Add the nograph variant",
        "line": "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
    }
    failed = {"failed": True, "msg": "sglang-qwen.service stopped"}
    assert dr.failure(_at("switch"), failed, sglang_failure) == {
        "task": "wait for readiness",
        "cause": "out of GPU memory at start",
        "fix": "Add the nograph variant",
        "said": "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
    }
    # a stale sglang_failure of an earlier step is not this stage's cause
    assert dr.failure(_at("probe"), failed, sglang_failure)["cause"] == "sglang-qwen.service stopped"


ACTIVE = {"active_state": "active", "systemd_state": "active (running)"}


def test_a_restore_whose_means_of_verifying_failed_is_judged_by_systemd():
    # llm_probe could not run (no python3-requests): not a verdict on the server
    failed = {"failed": True, "msg": "Failed to import the required Python library (requests)"}
    verdict = dr.restore_failure(failed, "Rescue | Prove the restored service", True, False, ACTIVE)
    assert verdict == {
        "verified": False,
        "state": "active",
        "systemd_state": "active (running)",
        "error": "Rescue | Prove the restored service: Failed to import the required Python library (requests)",
    }
    outcome_record = dr.append(_at("probe"), "verified", result=verdict)
    assert dr.outcome(outcome_record) == "restored_unverified"


@pytest.mark.parametrize(
    ("failed", "started", "probed"),
    [
        ({"failed": True, "msg": "timed out", "state": "activating"}, True, False),  # sglang_wait's verdict
        ({"failed": True, "msg": "degenerate", "verdict": "degenerate"}, True, False),  # llm_probe's verdict
        ({"failed": True, "msg": "chat: HTTP 400"}, True, True),  # the restored service was probed and failed
        ({"failed": True, "msg": "checksum mismatch"}, False, False),  # the restore never put the unit back
    ],
)
def test_a_restore_that_failed_on_the_server_is_down(failed, started, probed):
    verdict = dr.restore_failure(failed, "t", started, probed, ACTIVE)
    assert verdict["state"] == "down" and verdict["verified"] is False, verdict
    assert dr.outcome(dr.append(_at("probe"), "verified", result=verdict)) == "restore_failed"


# --- the bake (issue 22) ----------------------------------------------------------------------------


def test_a_failed_bake_is_rolled_back_with_the_bakes_fix():
    record = run(
        ("switch", 1),
        ("stopped", 2),
        ("ready", 20),
        ("probe", 20),
        ("probed", 21),
        ("equivalence", 22),
        ("gate", 25),
        ("bake", 26),
        ("failed", 56, {"cause": "bake: sglang:spec_accept_length 1.02 for 2 of 3 measurements (bound >= 1.86)"}),
        ("restart", 57),
        ("restored", 70),
        ("verified", 71, {"verified": True}),
    )
    course = dr.summary(record, profile="ddtree", journal="/r/j.txt")
    assert (course["outcome"], course["failure"]["step"], course["touched"]) == ("rolled_back", "bake", "unit")
    assert "regressed under traffic during the bake" in course["failure"]["fix"]
    assert "ddtree_deploy_bake_checks" in course["failure"]["fix"]


def _bake_failure(failed_result):
    stages = (("switch", 1), ("stopped", 2), ("ready", 20), ("probe", 20), ("probed", 21), ("bake", 26))
    failed = dr.failure(run(*stages), failed_result)
    return dr.summary(run(*stages, ("failed", 56, failed)), profile="ddtree", journal="/r/j.txt")["failure"]


UNREADABLE = {
    "failed": True,
    "result": "fail",
    "failed_checks": [],
    "msg": "bake: cannot read the metrics of u",
    "measurements": [{"index": 1, "status": "error", "error": "connection refused"}],
}
RESTARTED = {
    "failed": True,
    "result": "fail",
    "failed_checks": [],
    "msg": "bake: the server at u restarted",
    "measurements": [{"index": 2, "status": "error", "error": "a counter went down: the server restarted"}],
}
INCONCLUSIVE = {
    "failed": True,
    "result": "inconclusive",
    "failed_checks": [],
    "msg": "bake inconclusive: 6 of 6",
    "measurements": [{"index": 1, "status": "inconclusive"}],
}


@pytest.mark.parametrize(
    "failed_result, says",
    [
        (UNREADABLE, "could not read the unit's /metrics, which is not a verdict on ddtree"),
        (RESTARTED, "restarted during the bake (its counters went down): read the saved journal (/r/j.txt)"),
        (INCONCLUSIVE, "saw no traffic it could judge, which is not a verdict on ddtree"),
    ],
)
def test_a_bake_that_judged_nothing_does_not_say_the_profile_regressed(failed_result, says):
    failure = _bake_failure(failed_result)
    assert failure["step"] == "bake" and failure["cause"] == failed_result["msg"]
    assert says in failure["fix"], failure["fix"]
    assert "regressed" not in failure["fix"] and "{" not in failure["fix"], failure["fix"]


def test_a_bake_whose_check_failed_says_the_profile_regressed():
    failed_result = {
        "failed": True,
        "result": "fail",
        "msg": "bake: sglang:spec_accept_length 1.0",
        "measurements": [],
        "failed_checks": [{"name": "accept_length_floor"}],
    }
    assert "regressed under traffic during the bake" in _bake_failure(failed_result)["fix"]


BAKE = {
    "failed": True,
    "result": "fail",
    "msg": "bake: sglang:spec_accept_length 1.02 for 2 of 3 measurements (bound >= 1.86, 60 % of 3.1 at the gate)"
    " (window 5 s, 3 measurements in 15 s)",
    "measurements": [
        {
            "index": 1,
            "elapsed": 5.0,
            "status": "pass",
            "window": {"spec_accept_length": 3.1, "requests": 4, "abort_ratio": 0.0, "ttft_p90": 0.2},
            "checks": [{"name": "accept_length_vs_gate", "result": "pass"}],
        },
        {
            "index": 2,
            "elapsed": 10.0,
            "status": "fail",
            "window": {"spec_accept_length": 1.02, "requests": 4, "abort_ratio": 0.25, "ttft_p90": 0.2},
            "checks": [{"name": "accept_length_vs_gate", "result": "fail"}, {"name": "aborts", "result": "fail"}],
        },
        {"index": 3, "elapsed": 15.0, "status": "error", "window": None, "checks": [], "error": "no answer"},
    ],
    "summary": {"seconds": 15.0, "requests": 8, "spec_accept_length": 1.02},
    "failed_checks": [{"name": "accept_length_vs_gate", "failed": 2, "counted": 3, "message": "bake: ..."}],
    "load": None,
}
RUN = {"host": "h", "bake_s": 30, "bake_interval": 5, "bake_inconclusive": "load"}


def test_the_report_carries_the_bakes_measurements_summary_and_failed_checks():
    r = dr.report(run(("switch", 1), ("bake", 2)), RUN, bake=BAKE, bake_baseline={"summary": {"requests": 9}})
    bake = r["bake"]
    assert (bake["seconds"], bake["interval"], bake["inconclusive_policy"], bake["result"]) == (30, 5, "load", "fail")
    assert bake["msg"].startswith("bake: sglang:spec_accept_length 1.02")
    assert [m["status"] for m in bake["measurements"]] == ["pass", "fail", "error"]
    assert bake["measurements"][1]["failed"] == ["accept_length_vs_gate", "aborts"]
    assert bake["measurements"][1]["spec_accept_length"] == 1.02 and bake["measurements"][2]["error"] == "no answer"
    assert bake["summary"]["requests"] == 8 and bake["failed_checks"][0]["name"] == "accept_length_vs_gate"
    assert bake["baseline"] == {"requests": 9} and bake["baseline_msg"] is None


def test_a_baseline_without_metrics_is_said_and_a_bake_off_is_off():
    no_metrics = {"failed": False, "msg": "baseline: cannot read the metrics of http://x: GET ... answered 404"}
    bake = dr.report(run(("switch", 1)), RUN, bake=None, bake_baseline=no_metrics)["bake"]
    assert bake["result"] == "not run" and bake["baseline"] is None
    assert "serves no metrics" in bake["baseline_msg"] and "answered 404" in bake["baseline_msg"]
    assert "checks relative to the baseline were skipped" in bake["baseline_msg"]
    off = dr.report(run(("switch", 1)), {"host": "h"}, bake={"skipped": True})["bake"]
    assert (off["result"], off["measurements"], off["baseline_msg"]) == ("off", [], None)


def test_probe_steps_keep_results_the_first_failure_and_what_was_not_tried():
    probes = {"new": {"results": [], "not_tried": {}, "failed_api": None}}
    probes = dr.probe_step(probes, "new", "completions", {"failed": True, "msg": "HTTP 400: mismatch"})
    probes = dr.probe_step(probes, "new", "chat", {"skipped": True, "skip_reason": "Conditional result was False"})
    new = probes["new"]
    assert [r["item"] for r in new["results"]] == ["completions"] and new["failed_api"] == "completions"
    assert new["not_tried"] == {"chat": "not tried: completions failed first, the server is known broken"}
    assert new["msg"] == "completions: HTTP 400: mismatch"
    ok = dr.probe_step({}, "restored", "completions", {"failed": False, "tokens_per_second": 50.0})["restored"]
    assert ok["failed_api"] is None and ok["msg"] is None and ok["results"][0]["tokens_per_second"] == 50.0


def test_a_stages_result_lives_in_its_event_and_the_course_reads_it():
    rec = run(("preflight", 1), ("baseline", 2), ("candidate", 3, {"index": 1, "of": 2}), ("switch", 4), ("gate", 5))
    rec = dr.set_result(rec, "gate", {"gate": "fail"})
    rec = dr.set_result(rec, "baseline", {"measured": True})
    assert rec["events"][-1] == {"event": "gate", "time": 5.0, "result": {"gate": "fail"}}
    # The next candidate's gate starts without the first one's verdict.
    rec = dr.append(dr.append(rec, "candidate", {"index": 2, "of": 2}, at=6), "switch", at=7)
    assert dr.results(rec) == {"preflight": None, "baseline": {"measured": True}, "switch": None}
    rec = dr.set_result(dr.append(rec, "gate", at=8), "gate", {"gate": "pass"})
    assert dr.summary(rec)["results"]["gate"] == {"gate": "pass"}
    with pytest.raises(dr.DeployRecordError, match="'bake' has not begun in this attempt"):
        dr.set_result(rec, "bake", {})
    with pytest.raises(dr.DeployRecordError, match="'stopped' is not a declared stage"):
        dr.set_result(rec, "stopped", {})


def test_the_record_is_written_whole_and_the_report_carries_its_events(tmp_path):
    rec = run(("preflight", 1), ("snapshot", 2))
    dr.write(rec, str(tmp_path / "h.record.json"), mode=0o640)
    assert json.loads((tmp_path / "h.record.json").read_text()) == rec
    assert (tmp_path / "h.record.json").stat().st_mode & 0o777 == 0o640
    assert dr.report(rec, {"host": "h"})["events"] == rec["events"]


@pytest.mark.parametrize("name", dr.STAGE_NAMES)
def test_a_failure_in_any_declared_stage_is_that_stages_with_its_outcome_and_fix(name):
    """A stage added to STAGES is reported with its own step, outcome and fix, with no other change."""
    events = []
    for at, stage in enumerate(dr.STAGE_NAMES[: dr.STAGE_NAMES.index(name) + 1]):
        events.append((stage, 10 * at))
        if stage == "switch":
            events += [("stopped", 10 * at + 1), ("ready", 10 * at + 2)]
    events.append(("failed", 500, {"cause": "it broke", "task": "", "fix": "", "said": ""}))
    if dr.stage(name)["touches"] == "unit":
        events += [("restart", 501), ("restored", 510), ("verified", 511, {"verified": True})]
    rec = run(*events)
    course = dr.summary(rec, profile="ddtree", journal="j.txt")
    fix = dr.stage(name)["fix"].replace("{journal}", "j.txt").replace("{profile}", "ddtree")
    assert (course["failure"]["step"], course["failure"]["fix"]) == (name, fix)
    assert course["outcome"] == dr.stage(name)["outcome"]
    report = dr.report(rec, {"host": "h", "profile": "ddtree", "journal": "j.txt"})
    assert (report["failed_step"], report["fix"], report["outcome"]) == (name, fix, dr.stage(name)["outcome"])
