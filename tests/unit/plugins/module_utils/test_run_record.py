# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The records of rollback.yml and promote.yml: their events, outcomes and reports, and the interrupted deploy
a rollback names from the record that run left on disk."""

import json

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils import _deploy_record as dr
from ansible_collections.ddtree.sglang.plugins.module_utils import _run_record as rr


def rollback(*events):
    rec = rr.new_record("rb-1", "rollback")
    for event in events:
        rec = rr.append(rec, event[0], event[1] if len(event) > 1 else None)
    return rec


def killed_deploy(tmp_path):
    """The record a deploy killed while its new unit loaded leaves (deploy_record writes it at every event)."""
    rec = dr.new_record("dep-1")
    for at, event in enumerate(("preflight", "snapshot", "install", "options", "baseline", "candidate", "switch")):
        rec = dr.append(rec, event, at=at)
    path = tmp_path / "dep-1" / "ct129.record.json"
    path.parent.mkdir()
    dr.write(rec, str(path))
    return path


def test_a_rollback_names_the_interrupted_run_and_the_last_stage_its_record_reached(tmp_path):
    path = killed_deploy(tmp_path)
    own = tmp_path / "rb-1" / "ct129.rollback.record.json"
    # The deploy's record, not a rollback's of the same name: the one the rollback reads.
    assert rr.record_path(str(own), "dep-1") == str(path)
    undid = rr.interrupted({"run_id": "dep-1", "profile": "ddtree"}, str(path))
    assert undid == {
        "run_id": "dep-1",
        "profile": "ddtree",
        "record": str(path),
        "last_stage": "switch",
        "last_event": "switch",
        "events": 7,
        "record_msg": None,
    }
    rec = rollback(("rollback", {"undid": undid}), ("restored", {"changed": True}), ("verified", {"verified": True}))
    report = rr.report(rec, {"host": "ct129", "service": "sglang-qwen"})
    assert (report["outcome"], report["undid"]["run_id"], report["undid"]["last_stage"]) == (
        "restored",
        "dep-1",
        "switch",
    )
    assert report["kind"] == "rollback" and [e["event"] for e in report["events"]] == [
        "rollback",
        "restored",
        "verified",
    ]


def test_an_interrupted_run_without_a_record_says_where_it_looked(tmp_path):
    undid = rr.interrupted({"run_id": "dep-2", "profile": "ddtree"}, str(tmp_path / "dep-2" / "ct129.record.json"))
    assert undid["record"] is None and undid["last_stage"] is None
    assert undid["record_msg"].endswith("dep-2/ct129.record.json: no such file")
    assert rr.interrupted(None, "x") is None


@pytest.mark.parametrize(
    "events, outcome",
    [
        ((("nothing",),), "nothing_to_roll_back"),
        (
            (("rollback", {"undid": None}), ("restored", {"changed": False}), ("verified", {"verified": True})),
            "already_restored",
        ),
        (
            (
                ("rollback", {}),
                ("restored", {"changed": True}),
                ("verified", {"verified": False, "msg": "chat: HTTP 500"}),
            ),
            "restore_failed",
        ),
        ((("rollback", {}), ("failed", {"cause": "manifest.json: checksum differs"})), "restore_failed"),
        ((("rollback", {}), ("restored", {"changed": True})), "not_finished"),
    ],
)
def test_a_rollbacks_outcome(events, outcome):
    assert rr.outcome(rollback(*events)) == outcome


def test_a_promotions_outcome_and_cause():
    rec = rr.append(rr.new_record("p-1", "promote"), "promote", {"candidate": {"run_id": "dep-3", "profile": "nextn"}})
    assert rr.outcome(rec) == "not_finished"
    assert rr.report(rr.append(rec, "stored"), {})["candidate"]["run_id"] == "dep-3"
    refused = rr.report(rr.append(rec, "failed", {"cause": "PROMOTE REFUSED on ct200: not running"}), {})
    assert (refused["outcome"], refused["cause"]) == ("promote_refused", "PROMOTE REFUSED on ct200: not running")
    assert rr.outcome(rr.append(rr.new_record("p-2", "promote"), "nothing")) == "nothing_to_promote"


def test_an_event_of_another_kind_is_an_error():
    with pytest.raises(dr.DeployRecordError, match="unknown rollback event 'switch'"):
        rr.append(rr.new_record("r", "rollback"), "switch")
    with pytest.raises(dr.DeployRecordError, match="unknown record kind 'soak'"):
        rr.new_record("r", "soak")


def test_the_written_record_reads_back(tmp_path):
    rec = rollback(("rollback", {"undid": None}))
    dr.write(rec, str(tmp_path / "r.json"))
    assert json.loads((tmp_path / "r.json").read_text()) == rec
