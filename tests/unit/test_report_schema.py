# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""docs/schemas/deploy_record.schema.json describes what the runs write (issue 37): the records of deploys,
rollbacks and promotions and their host reports, generated here by the record's own functions for each kind
of outcome, validate; files that break the shape do not. The scenarios validate the files their runs wrote
with extensions/molecule/shared/validate_reports.py, tested here too."""

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils import _deploy_record as dr
from ansible_collections.ddtree.sglang.plugins.module_utils import _run_record as rr

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "schemas" / "deploy_record.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
BEFORE = ("preflight", "snapshot", "install", "options", "baseline")
FAILED = {"cause": "it broke", "task": "", "fix": "", "said": ""}


def record(*events, run_id="20261207T120000Z"):
    rec = dr.new_record(run_id)
    for at, event in enumerate(events):
        name, result = event if isinstance(event, tuple) else (event, None)
        rec = dr.append(rec, name, result=result, at=100 + at)
    return rec


CANDIDATE = {"index": 1, "of": 1, "name": "ddtree", "profile": "ddtree", "variants": [], "extra_args": {}}
DEPLOYS = {
    "deployed": record(
        *BEFORE,
        ("candidate", CANDIDATE),
        "switch",
        "stopped",
        "ready",
        "probe",
        "probed",
        "equivalence",
        "gate",
        ("passed", {"figures": {}}),
        "commit",
        ("done", {"restarted": True}),
    ),
    "rolled back at the probe": record(
        *BEFORE,
        "switch",
        "stopped",
        "ready",
        "probe",
        ("failed", FAILED),
        "restart",
        "restored",
        ("verified", {"verified": True}),
    ),
    "commit failed": record(
        *BEFORE,
        "switch",
        "stopped",
        "ready",
        "probe",
        "probed",
        "commit",
        ("failed", FAILED),
        "restart",
        "restored",
        ("verified", {"verified": True}),
    ),
    "restore failed": record(
        *BEFORE,
        "switch",
        "stopped",
        ("failed", FAILED),
        ("verified", {"verified": False, "state": "down", "systemd_state": "failed", "error": "x"}),
    ),
    "preflight failed": record("preflight", ("failed", FAILED)),
    "killed after the switch": record(*BEFORE, ("candidate", CANDIDATE), "switch"),
}


def deploy_files():
    for name, rec in DEPLOYS.items():
        rec = dr.set_result(rec, "preflight", {"gpu_class": "ampere_48g"})
        yield f"{name}: record", rec
        yield f"{name}: report", dr.report(rec, {"host": "ct129", "profile": "ddtree", "journal": "j.txt"})
    yield "check mode: report", dr.report(DEPLOYS["deployed"], {"host": "ct129", "check_mode": True})


def run_files(tmp_path):
    killed = tmp_path / "dep" / "ct129.record.json"
    killed.parent.mkdir()
    dr.write(DEPLOYS["killed after the switch"], str(killed))
    undid = rr.interrupted({"run_id": "dep", "profile": "ddtree"}, str(killed))
    rollback = rr.new_record("rb", "rollback")
    for event, result in (
        ("rollback", {"undid": undid}),
        ("restored", {"changed": True}),
        ("verified", {"verified": True}),
    ):
        rollback = rr.append(rollback, event, result)
    promote = rr.append(rr.new_record("pr", "promote"), "promote", {"candidate": {"run_id": "dep", "profile": "nextn"}})
    for name, rec in {
        "rollback": rollback,
        "rollback, nothing": rr.append(rr.new_record("rb2", "rollback"), "nothing", {"undid": None}),
        "promote": rr.append(promote, "stored"),
        "promote refused": rr.append(promote, "failed", {"cause": "PROMOTE REFUSED on ct129: not running"}),
    }.items():
        yield f"{name}: record", rec
        yield f"{name}: report", rr.report(rec, {"host": "ct129", "service": "sglang-qwen", "store": "/var/lib/x"})


def errors(document):
    # Through JSON, as the files are read: no tuples, no Python-only types.
    return [e.message for e in VALIDATOR.iter_errors(json.loads(json.dumps(document)))]


def test_the_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("name, document", list(deploy_files()), ids=lambda v: v if isinstance(v, str) else "")
def test_every_deploy_record_and_report_validates(name, document):
    assert errors(document) == [], name
    names = {e["event"] for e in document["events"]}
    assert names <= set(dr.STAGE_NAMES) | set(dr.MARKS), name


def test_every_rollback_and_promote_record_and_report_validates(tmp_path):
    files = list(run_files(tmp_path))
    assert len(files) == 8
    for name, document in files:
        assert errors(document) == [], name
    report = dict(files)["rollback: report"]
    assert (report["undid"]["run_id"], report["undid"]["last_stage"]) == ("dep", "switch")


@pytest.mark.parametrize(
    "breaks, says",
    [
        (lambda r: r["events"][0].pop("time"), "'time' is a required property"),
        (lambda r: r["events"][0].update(result="text"), "is not of type 'object', 'null'"),
        (lambda r: r.update(extra=1), "Additional properties"),
        (lambda r: r["events"].append({"event": "failed", "time": 1, "result": {"fix": "x"}}), "'cause' is a required"),
    ],
)
def test_a_record_that_breaks_the_shape_does_not_validate(breaks, says):
    rec = json.loads(json.dumps(DEPLOYS["deployed"]))
    breaks(rec)
    assert not VALIDATOR.is_valid(rec)
    # oneOf: the reason is among the branches' errors.
    messages = [e.message for err in VALIDATOR.iter_errors(rec) for e in (err.context or [err])]
    assert any(says in m for m in messages), messages


def test_a_report_without_its_events_does_not_validate():
    report = json.loads(json.dumps(dr.report(DEPLOYS["deployed"], {"host": "ct129"})))
    del report["events"]
    assert not VALIDATOR.is_valid(report)


def test_the_scenarios_validator_checks_every_file_and_fails_on_a_bad_one(tmp_path):
    run = tmp_path / "reports" / "run-1"
    run.mkdir(parents=True)
    (run / "ct129.record.json").write_text(json.dumps(DEPLOYS["deployed"]))
    (run / "ct129.json").write_text(json.dumps(dr.report(DEPLOYS["deployed"], {"host": "ct129"})))
    (run / "summary.json").write_text("{}")
    script = ROOT / "extensions" / "molecule" / "shared" / "validate_reports.py"
    argv = [sys.executable, str(script), str(ROOT / "docs" / "schemas" / "deploy_record.schema.json")]
    good = subprocess.run(argv + [str(tmp_path / "reports")], capture_output=True, text=True, check=False)
    assert good.returncode == 0, good.stdout
    assert good.stdout.count("\nok ") + good.stdout.startswith("ok ") == 2
    (run / "ct200.record.json").write_text(json.dumps({"run_id": "run-1", "events": [{"event": "switch"}]}))
    bad = subprocess.run(argv + [str(tmp_path / "reports")], capture_output=True, text=True, check=False)
    assert bad.returncode == 1 and "INVALID" in bad.stdout and "ct200.record.json" in bad.stdout
    empty = subprocess.run(argv + [str(tmp_path / "none")], capture_output=True, text=True, check=False)
    assert empty.returncode == 1 and "no report found" in empty.stdout


def test_every_scenario_whose_runs_write_reports_validates_them():
    # A scenario that runs the deploy, the rollback or the promotion (or the demo, which runs them) writes records
    # and reports: its verifier runs validate_reports.py on them (shared/tasks/validate_reports.yml or the script).
    molecule = ROOT / "extensions" / "molecule"
    writes = (
        "deploy_ddtree",
        "ddtree.sglang.rollback",
        "ddtree.sglang.promote",
        "DDTREE_DEPLOY_REPORT_DIR",
        "scripts/demo",
    )
    writers = sorted(
        d.name
        for d in molecule.iterdir()
        if (d / "molecule.yml").exists()
        and any(w in p.read_text() for p in d.iterdir() if p.suffix in (".yml", ".py") for w in writes)
    )
    assert {"deploy_success", "deploy_failures", "deploy_canary", "deploy_interrupted", "readme"} <= set(writers)
    missing = [name for name in writers if "validate_reports" not in (molecule / name / "verify.yml").read_text()]
    assert not missing, f"scenarios that write reports and do not validate them: {missing}"


def test_a_report_through_a_router_validates_and_its_drain_has_a_shape():
    rec = record(*BEFORE[:4], "drain", "baseline", ("candidate", CANDIDATE), "switch", "stopped", "ready", "probe")
    rec = dr.set_result(rec, "drain", {"out": True, "out_s": 12.5, "drained": 2, "returned": 0, "error": None})
    report = json.loads(json.dumps(dr.report(rec, {"host": "h"})))
    assert report["router"]["drained"] == 2
    assert not list(VALIDATOR.iter_errors(report))
    report["router"]["drained"] = "two"
    assert list(VALIDATOR.iter_errors(report))
