"""systemd_unit_snapshot: snapshot, restore and verify a unit against a fake systemd in a tmp dir."""

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest
import yaml
from ansible.module_utils import basic
from ansible_collections.ddtree.sglang.plugins.module_utils import _unit_manifest, _unit_store
from ansible_collections.ddtree.sglang.plugins.modules import systemd_unit_snapshot
from fake_systemd import FakeSystemd
from module_harness import run_main

UNIT = "sglang-qwen.service"
NEXTN = "/opt/sglang/bin/python -m sglang.launch_server --model-path /models/qwen --speculative-algorithm NEXTN"
DDTREE = "/opt/sglang-ddtree/bin/python -m sglang.launch_server --model-path /models/q --speculative-algorithm=DDTREE"
SECRET = "sk-very-secret-4711"
# The marks' files, named by the module alone.
IN_PROGRESS = _unit_store.MARKS["in_progress"]
CANDIDATE = _unit_store.MARKS["candidate"]


class Host:
    """A fake host: its systemd, its /etc/default and credential files, and the store."""

    def __init__(self, tmp_path):
        self.systemd = FakeSystemd(tmp_path / "root", UNIT)
        self.root = self.systemd.root
        self.store = tmp_path / "var/lib/ddtree-sglang/last-known-good/sglang-qwen"
        self.env = self.root / "etc/default/sglang-qwen"
        self.key = self.root / "etc/ddtree-sglang/sglang-qwen.key"

    def unit_text(self, exec_start=NEXTN, env=None, extra=""):
        env = env or str(self.env)
        return (
            "[Unit]\nDescription=SGLang\n[Service]\n"
            f"EnvironmentFile={env}\n"
            f"LoadCredential=sglang-api-key:{self.key}\n"
            "LoadCredential=store-only-name\n"
            f"ExecStart={exec_start}\n{extra}[Install]\nWantedBy=multi-user.target\n"
        )

    def install_nextn(self, where=None):
        """The last-known-good NEXTN unit: unit file, one drop-in, env file, credential; loaded and running."""
        where = where or self.systemd.etc
        self.systemd.write(where / UNIT, self.unit_text())
        self.systemd.write(where / (UNIT + ".d") / "10-limits.conf", "[Service]\nLimitNOFILE=65536\n")
        self.systemd.write(self.env, f"SGLANG_API_KEY={SECRET}\nHF_HOME=/var/cache/hf\n", 0o640)
        self.systemd.write(self.key, SECRET + "\n", 0o600)
        self.reload()

    def deploy_ddtree(self):
        """What a deploy does: a new unit in /etc, a new drop-in, a new env file content; reload, restart."""
        self.systemd.write(self.systemd.etc / UNIT, self.unit_text(DDTREE))
        self.systemd.write(self.systemd.etc / (UNIT + ".d") / "20-ddtree.conf", "[Service]\nTimeoutStartSec=1200\n")
        self.systemd.write(self.env, f"SGLANG_API_KEY={SECRET}-new\n", 0o600)
        self.reload()
        self.systemd.started_at += 7

    def reload(self):
        self.systemd.loaded = self.systemd.definition()

    def files(self):
        """Every file of the unit as bytes and mode, to compare before and after."""
        found = {}
        for base in (self.systemd.etc, self.systemd.vendor, self.systemd.run_dir, self.env.parent, self.key.parent):
            for path in sorted(base.rglob("*")):
                if path.is_file():
                    found[str(path)] = (path.read_bytes(), stat.S_IMODE(path.stat().st_mode))
        return found

    def manifest(self):
        return json.loads((self.store / "manifest.json").read_text())


@pytest.fixture
def host(tmp_path, monkeypatch):
    host = Host(tmp_path)
    monkeypatch.setattr(_unit_store, "SYSTEMD_ETC", str(host.systemd.etc))
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, required=False: "/usr/bin/" + name)
    monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, cmd, **kw: host.systemd.run_command(cmd))
    return host


def run(host, state, check=False, diff=False, **args):
    params = {"name": "sglang-qwen", "state": state, "store": str(host.store)}
    if diff:
        params["_ansible_diff"] = True
    params.update(args)
    return run_main(systemd_unit_snapshot.main, params, check_mode=check)


# ---------------------------------------------------------------------------------- read


def test_read_reports_what_systemd_loads(host):
    host.install_nextn()
    failed, result = run(host, "read")
    assert not failed and not result["changed"]
    unit = result["unit"]
    etc = host.systemd.etc
    assert unit["exists"] and unit["fragment"] == str(etc / UNIT)
    assert unit["dropins"] == [str(etc / (UNIT + ".d") / "10-limits.conf")]
    assert unit["env_files"] == [str(host.env)]
    # Absolute LoadCredential paths only: "store-only-name" is systemd's credential store.
    assert unit["credential_files"] == [str(host.key)]
    assert unit["enabled"] and unit["active"] and unit["systemd_state"] == "active (running)"
    assert unit["exec_start"] == [f"{{ path=/opt/sglang/bin/python ; argv[]={NEXTN} ; ignore_errors=no }}"]
    assert unit["algorithm"] == "NEXTN"
    assert unit["started_at"] == str(host.systemd.started_at)
    assert unit["need_daemon_reload"] is False
    assert result["store"] == {"manifest": False, "in_progress": None, "candidate": None}


def test_read_of_a_missing_unit(host):
    failed, result = run(host, "read")
    assert not failed
    assert result["unit"]["exists"] is False and result["unit"]["fragment"] == ""


# ---------------------------------------------------------------------------------- snapshot


def test_snapshot_stores_every_file_with_a_checksummed_manifest(host):
    host.install_nextn()
    failed, result = run(host, "snapshot")
    assert not failed and result["changed"] and result["snapshotted"]
    manifest = host.manifest()
    assert manifest["checksum"] == _unit_manifest.manifest_checksum(manifest)
    assert [(f["kind"], f["path"]) for f in manifest["files"]] == [
        ("unit", str(host.systemd.etc / UNIT)),
        ("dropin", str(host.systemd.etc / (UNIT + ".d") / "10-limits.conf")),
        ("env", str(host.env)),
        ("credential", str(host.key)),
    ]
    for entry in manifest["files"]:
        stored = host.store / entry["stored"]
        assert stored.read_bytes() == open(entry["path"], "rb").read()
        assert entry["sha256"] == hashlib.sha256(stored.read_bytes()).hexdigest()
        assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert [f["mode"] for f in manifest["files"]] == ["0644", "0644", "0640", "0600"]
    assert stat.S_IMODE(host.store.stat().st_mode) == 0o700
    assert stat.S_IMODE((host.store / "manifest.json").stat().st_mode) == 0o600
    assert manifest["enabled"] is True and manifest["active"] is True
    assert manifest["systemd"]["exec_start"] == result["unit"]["exec_start"]
    # No temporary files left beside what was written.
    assert sorted(p.name for p in host.store.rglob("*.ddtree-*")) == []


def test_snapshot_of_an_unchanged_unit_changes_nothing(host):
    host.install_nextn()
    run(host, "snapshot")
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in host.store.rglob("*") if p.is_file()}
    failed, result = run(host, "snapshot")
    assert not failed and not result["changed"] and result["files_written"] == []
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in host.store.rglob("*") if p.is_file()} == before


def test_snapshot_removes_stored_files_the_unit_no_longer_has(host):
    host.install_nextn()
    run(host, "snapshot")
    (host.systemd.etc / (UNIT + ".d") / "10-limits.conf").unlink()
    host.reload()
    failed, result = run(host, "snapshot")
    assert not failed and result["changed"]
    # Stored names number the files in systemd's order (as store.yml did): without the drop-in,
    # the env file and credential move up one, and every name of the old snapshot goes.
    old = ["01-10-limits.conf", "02-sglang-qwen", "03-sglang-qwen.key"]
    assert result["files_removed"] == [str(host.store / "files" / name) for name in old]
    assert sorted(p.name for p in (host.store / "files").iterdir()) == sorted(
        f["stored"][len("files/") :] for f in host.manifest()["files"]
    )


def test_snapshot_of_a_missing_unit_writes_nothing(host):
    failed, result = run(host, "snapshot", in_progress={"run_id": "r1"})
    assert not failed and not result["changed"] and not result["snapshotted"] and not result["in_progress_marked"]
    assert not host.store.exists()


def test_interrupted_deploy_is_refused_and_nothing_written(host):
    host.install_nextn()
    failed, result = run(host, "snapshot", in_progress={"run_id": "r1", "profile": "ddtree"})
    assert not failed and result["in_progress_marked"]
    marker = host.store / IN_PROGRESS
    assert json.loads(marker.read_text()) == {"run_id": "r1", "profile": "ddtree"}
    assert stat.S_IMODE(marker.stat().st_mode) == 0o600
    stored = host.manifest()
    host.deploy_ddtree()  # ... and the play was interrupted: the marker stays

    failed, result = run(host, "snapshot", in_progress={"run_id": "r2", "profile": "ddtree"})
    assert failed
    assert "ansible-playbook ddtree.sglang.rollback -l" in result["msg"] and "interrupted" in result["msg"]
    assert host.manifest() == stored
    assert json.loads(marker.read_text())["run_id"] == "r1"


def test_candidate_keeps_the_promoted_snapshot_until_promotion(host):
    host.install_nextn()
    run(host, "snapshot", in_progress={"run_id": "r1"})
    promoted = host.manifest()
    host.deploy_ddtree()
    failed, result = run(host, "candidate", candidate={"run_id": "r1", "profile": "ddtree"})
    assert not failed and result["candidate_marked"] and result["changed"]
    candidate = json.loads((host.store / CANDIDATE).read_text())
    assert candidate["run_id"] == "r1" and "DDTREE" in candidate["exec_start"][0]
    assert not (host.store / IN_PROGRESS).exists()
    read = run(host, "read")[1]
    assert read["store"]["candidate"] == candidate and read["store"]["in_progress"] is None

    # The next deploy snapshots over a candidate: the promoted NEXTN unit stays in the store.
    failed, result = run(host, "snapshot", in_progress={"run_id": "r2"})
    assert not failed and result["kept_promoted"] and not result["snapshotted"] and result["in_progress_marked"]
    assert "keeps the promoted snapshot" in result["msg"]
    assert host.manifest() == promoted

    # Promotion: the proved unit is stored, both markers go.
    failed, result = run(host, "snapshot", in_progress=None)
    assert not failed and result["snapshotted"] and result["changed"]
    assert "DDTREE" in host.manifest()["systemd"]["exec_start"][0]
    assert not (host.store / CANDIDATE).exists()
    assert not (host.store / IN_PROGRESS).exists()


def test_cleared_removes_the_marks_it_is_asked_to_and_read_reports_them(host):
    # What ddtree_deploy asks once a restored unit is proved, or when a failed deploy changed no unit:
    # the marks go, the snapshot stays. rollback.yml reads the interrupted run's id from `read`.
    host.install_nextn()
    run(host, "snapshot", in_progress={"run_id": "r1", "profile": "nextn"})
    run(host, "candidate", candidate={"run_id": "r1", "profile": "nextn"})
    run(host, "snapshot", in_progress={"run_id": "r2", "profile": "ddtree"})
    store = run(host, "read")[1]["store"]
    assert store["manifest"] and store["in_progress"] == {"run_id": "r2", "profile": "ddtree"}
    assert store["candidate"]["run_id"] == "r1"
    stored = host.manifest()

    failed, result = run(host, "cleared", check=True, marks=["in_progress"])
    assert not failed and result["changed"] and result["cleared"] == ["in_progress"]
    assert run(host, "read")[1]["store"]["in_progress"] is not None

    # A rescue whose restore failed asks for no mark (rollback.yml finishes the deploy): both stay.
    failed, result = run(host, "cleared", marks=[])
    assert not failed and not result["changed"] and result["cleared"] == []
    store = run(host, "read")[1]["store"]
    assert store["in_progress"]["run_id"] == "r2" and store["candidate"]["run_id"] == "r1"

    failed, result = run(host, "cleared", marks=["in_progress"])
    assert not failed and result["changed"] and result["cleared"] == ["in_progress"]
    store = run(host, "read")[1]["store"]
    assert store["in_progress"] is None and store["candidate"]["run_id"] == "r1"

    failed, result = run(host, "cleared")  # both, by default; in_progress is gone already
    assert not failed and result["changed"] and result["cleared"] == ["candidate"]
    assert run(host, "read")[1]["store"] == {"manifest": True, "in_progress": None, "candidate": None}
    assert host.manifest() == stored

    failed, result = run(host, "cleared")
    assert not failed and not result["changed"] and result["cleared"] == []
    assert "no mark to clear" in result["msg"]

    failed, result = run(host, "cleared", marks=["manifest"])
    assert failed and "manifest" in result["msg"]


def test_candidate_without_a_snapshot_only_clears_the_in_progress_marker(host):
    host.install_nextn()
    host.store.mkdir(parents=True)
    (host.store / IN_PROGRESS).write_text("{}\n")
    failed, result = run(host, "candidate", candidate={"run_id": "r1"})
    assert not failed and not result["candidate_marked"]
    assert not (host.store / CANDIDATE).exists()
    assert not (host.store / IN_PROGRESS).exists()


# ---------------------------------------------------------------------------------- restored


def test_round_trip_restores_byte_for_byte_and_restarts_after_reset_failed(host):
    host.install_nextn()
    original = host.files()
    run(host, "snapshot", in_progress={"run_id": "r1"})
    host.deploy_ddtree()
    run(host, "candidate", candidate={"run_id": "r1"})
    (host.store / IN_PROGRESS).write_text('{"run_id": "r2"}\n')
    started = host.systemd.started_at

    failed, verified = run(host, "verified")
    assert not failed and not verified["matches"]
    assert f"{host.systemd.etc / UNIT} differs from the snapshot (content)" in verified["differences"]
    assert any("20-ddtree.conf is not in the snapshot" in d for d in verified["differences"])

    host.systemd.calls.clear()
    failed, result = run(host, "restored")
    assert not failed, result["msg"]
    assert result["changed"] and result["restarted"]
    assert isinstance(result["restart_started_at"], float)
    assert result["files_restored"] == [str(host.systemd.etc / UNIT), str(host.env)]
    assert result["files_removed"] == [str(host.systemd.etc / (UNIT + ".d") / "20-ddtree.conf")]
    # reset-failed right before the restart (systemd 257's start limit), after the reload.
    assert host.systemd.commands() == ["daemon-reload", "reenable", "reset-failed", "restart"]
    assert host.systemd.started_at == started + 1
    assert host.files() == original
    assert result["unit"]["algorithm"] == "NEXTN" and result["unit"]["started_at"] == str(started + 1)
    paths = [f["path"] for f in host.manifest()["files"]]
    assert result["snapshot"] == {"enabled": True, "active": True, "files": paths}
    # The last-known-good is back: no deploy is in progress, no candidate awaits promotion.
    assert not (host.store / IN_PROGRESS).exists()
    assert not (host.store / CANDIDATE).exists()

    failed, verified = run(host, "verified")
    assert not failed and verified["matches"] and verified["differences"] == []


def test_restore_that_keeps_the_markers_for_its_caller(host):
    # ddtree_deploy proves the restored service before it clears the marks: a restored unit that
    # does not come up leaves the host for rollback.yml to finish.
    host.install_nextn()
    run(host, "snapshot", in_progress={"run_id": "r1"})
    host.deploy_ddtree()
    failed, result = run(host, "restored", keep_markers=True)
    assert not failed and result["restarted"], result["msg"]
    assert (host.store / IN_PROGRESS).exists()


def test_restore_of_the_unchanged_running_unit_does_not_restart_it(host):
    # Issue 24: rollback.yml on a host already serving its last-known-good unit.
    host.install_nextn()
    run(host, "snapshot")
    host.systemd.calls.clear()
    started = host.systemd.started_at
    failed, result = run(host, "restored")
    assert not failed
    assert result["changed"] is False and result["restarted"] is False and result["restart_started_at"] is None
    assert host.systemd.commands() == []
    assert host.systemd.started_at == started
    assert "already is the snapshot" in result["msg"] and "not restarted" in result["msg"]


def test_restore_of_a_changed_environment_file_restarts(host):
    host.install_nextn()
    run(host, "snapshot")
    host.systemd.write(host.env, "SGLANG_API_KEY=other\n", 0o640)
    host.systemd.calls.clear()
    failed, result = run(host, "restored")
    assert not failed and result["changed"] and result["restarted"]
    assert result["files_restored"] == [str(host.env)] and result["files_removed"] == []
    assert host.systemd.commands() == ["daemon-reload", "reenable", "reset-failed", "restart"]
    assert host.env.read_text() == f"SGLANG_API_KEY={SECRET}\nHF_HOME=/var/cache/hf\n"


def test_restore_of_a_changed_mode_puts_the_mode_back(host):
    host.install_nextn()
    run(host, "snapshot")
    os.chmod(host.key, 0o644)
    failed, result = run(host, "restored")
    assert not failed and result["files_restored"] == [str(host.key)]
    assert stat.S_IMODE(host.key.stat().st_mode) == 0o600


def test_restore_of_a_crashed_unit_restarts_it_although_its_files_are_equal(host):
    host.install_nextn()
    run(host, "snapshot")
    host.systemd.active_state, host.systemd.sub_state = "failed", "failed"
    host.systemd.calls.clear()
    failed, result = run(host, "restored")
    assert not failed and result["restarted"] and result["changed"]
    assert host.systemd.commands() == ["reset-failed", "restart"]
    assert result["unit"]["systemd_state"] == "active (running)"


def test_restore_of_a_vendor_unit_removes_the_etc_copy_that_shadows_it(host):
    host.install_nextn(where=host.systemd.vendor)
    run(host, "snapshot")
    assert host.manifest()["systemd"]["fragment_path"] == str(host.systemd.vendor / UNIT)
    # The sglang role writes its own copy to /etc/systemd/system, which shadows the vendor unit.
    host.deploy_ddtree()
    assert host.systemd.loaded["fragment"] == str(host.systemd.etc / UNIT)
    failed, result = run(host, "restored")
    assert not failed, result["msg"]
    assert str(host.systemd.etc / UNIT) in result["files_removed"]
    assert not (host.systemd.etc / UNIT).exists()
    assert result["unit"]["fragment"] == str(host.systemd.vendor / UNIT)
    assert result["unit"]["algorithm"] == "NEXTN" and result["restarted"]
    assert run(host, "verified")[1]["matches"]


def test_missing_optional_environment_file(host):
    missing = host.root / "etc/default/not-there"
    host.install_nextn()
    host.systemd.write(host.systemd.etc / UNIT, host.unit_text(env="-" + str(missing)))
    host.reload()
    read = run(host, "read")[1]
    assert read["unit"]["env_files"] == [str(missing)]
    failed, result = run(host, "snapshot")
    assert not failed
    assert str(missing) not in [f["path"] for f in host.manifest()["files"]]
    host.deploy_ddtree()
    failed, result = run(host, "restored")
    assert not failed and result["restarted"] and not missing.exists()
    assert run(host, "verified")[1]["matches"]


def test_damaged_stored_copy_is_refused_and_nothing_touched(host):
    host.install_nextn()
    run(host, "snapshot")
    host.deploy_ddtree()
    deployed = host.files()
    entry = next(f for f in host.manifest()["files"] if f["kind"] == "env")
    (host.store / entry["stored"]).write_text("SGLANG_API_KEY=tampered\n")
    host.systemd.calls.clear()
    for check in (True, False):
        failed, result = run(host, "restored", check=check)
        assert failed and not result["changed"]
        assert str(host.store / entry["stored"]) in result["msg"] and "Nothing was changed" in result["msg"]
    assert host.files() == deployed and host.systemd.calls == []


def test_snapshot_cut_short_is_refused(host):
    host.install_nextn()
    run(host, "snapshot")
    entry = host.manifest()["files"][1]
    (host.store / entry["stored"]).unlink()
    failed, result = run(host, "restored")
    assert failed and str(host.store / entry["stored"]) in result["msg"]
    assert result["damaged"] == [str(host.store / entry["stored"])]


def test_manifest_with_a_wrong_checksum_is_refused(host):
    host.install_nextn()
    run(host, "snapshot")
    manifest = host.manifest()
    manifest["active"] = False  # edited after it was written
    (host.store / "manifest.json").write_text(json.dumps(manifest))
    host.systemd.calls.clear()
    for state in ("restored", "verified"):
        failed, result = run(host, state)
        assert failed and "does not match its own checksum" in result["msg"]
    assert host.systemd.calls == []


def test_a_manifest_this_module_did_not_write_is_refused(host):
    """No version 2 and no checksum (the role's store.yml wrote such manifests before the module; never released)."""
    host.install_nextn()
    run(host, "snapshot")
    manifest = host.manifest()
    del manifest["checksum"], manifest["version"]
    (host.store / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    host.deploy_ddtree()
    deployed = host.files()
    host.systemd.calls.clear()
    failed, result = run(host, "restored")
    assert failed and "is not a version 2 manifest with a checksum" in result["msg"]
    assert "nothing was changed" in result["msg"]
    assert host.files() == deployed and host.systemd.calls == []


def test_systemd_loading_something_else_fails_without_starting(host):
    host.install_nextn()
    run(host, "snapshot", in_progress={"run_id": "r1"})
    host.deploy_ddtree()
    # A drop-in under /run that no restore removes: systemd loads it with the restored unit.
    host.systemd.write(host.systemd.run_dir / (UNIT + ".d") / "50-override.conf", "[Service]\nNice=5\n")
    host.systemd.calls.clear()
    failed, result = run(host, "restored")
    assert failed
    assert "DropInPaths are" in result["msg"] and "50-override.conf" in result["msg"]
    assert "not started" in result["msg"] and result["restarted"] is False
    assert "restart" not in host.systemd.commands() and "reset-failed" not in host.systemd.commands()
    # Not restored: the interrupted deploy's marker stays for rollback.yml.
    assert (host.store / IN_PROGRESS).exists()


def test_check_mode_changes_nothing(host):
    host.install_nextn()
    failed, result = run(host, "snapshot", check=True, in_progress={"run_id": "r1"})
    assert not failed and result["changed"] and not host.store.exists()

    run(host, "snapshot")
    host.deploy_ddtree()
    deployed = host.files()
    stored = {p: p.read_bytes() for p in host.store.rglob("*") if p.is_file()}
    host.systemd.calls.clear()
    failed, result = run(host, "restored", check=True)
    assert not failed and result["changed"] and result["restarted"] is True
    assert result["files_restored"] == [str(host.systemd.etc / UNIT), str(host.env)]
    assert "check mode" in result["msg"]
    assert host.files() == deployed and host.systemd.commands() == []
    failed, result = run(host, "snapshot", check=True)
    assert not failed and result["changed"]
    assert {p: p.read_bytes() for p in host.store.rglob("*") if p.is_file()} == stored


def test_diff_mode_shows_unit_text_but_never_secrets(host):
    host.install_nextn()
    run(host, "snapshot")
    host.deploy_ddtree()
    host.systemd.write(host.key, SECRET + "-rotated\n", 0o600)
    # A key on the deployed unit's command line is redacted from its diff too.
    host.systemd.write(host.systemd.etc / UNIT, host.unit_text(DDTREE + " --api-key " + SECRET))
    for state, check in (("restored", True), ("restored", False)):
        failed, result = run(host, state, check=check, diff=True)
        assert not failed
        text = json.dumps(result)
        assert SECRET not in text
        by_path = {d["before_header"]: d for d in result["diff"]}
        unit_diff = by_path[str(host.systemd.etc / UNIT)]
        assert "DDTREE" in unit_diff["before"] and "NEXTN" in unit_diff["after"]
        assert by_path[str(host.systemd.etc / (UNIT + ".d") / "20-ddtree.conf")]["after"] == ""
        for secret_file in (host.env, host.key):
            assert "content differs" in by_path[str(secret_file)]["after"]
    # Snapshot diffs hide them too.
    host.systemd.write(host.env, f"SGLANG_API_KEY={SECRET}-again\n", 0o640)
    failed, result = run(host, "snapshot", diff=True)
    assert not failed and SECRET not in json.dumps(result)
    assert [d["before_header"] for d in result["diff"]] == [str(host.env)]


def test_restore_of_an_inactive_snapshot_stops_the_unit(host):
    host.install_nextn()
    host.systemd.active_state, host.systemd.sub_state = "inactive", "dead"
    host.systemd.enabled = False
    run(host, "snapshot")
    host.deploy_ddtree()
    host.systemd.enabled = True
    host.systemd.active_state, host.systemd.sub_state = "active", "running"
    host.systemd.calls.clear()
    failed, result = run(host, "restored")
    assert not failed and not result["restarted"]
    assert host.systemd.commands() == ["daemon-reload", "disable", "stop"]
    assert result["unit"]["active_state"] == "inactive" and result["unit"]["enabled"] is False


def test_restore_without_a_snapshot_names_the_store(host):
    host.install_nextn()
    failed, result = run(host, "restored")
    assert failed and str(host.store / "manifest.json") in result["msg"]


def test_states_other_than_info_need_a_store(host):
    failed, result = run_main(systemd_unit_snapshot.main, {"name": "sglang-qwen", "state": "verified"})
    assert failed and "needs store" in result["msg"]


def test_the_marks_belong_to_the_module_no_role_task_names_or_touches_their_files():
    # Issue 37 item 4: playbooks ask the module (state=read, state=cleared); no YAML deletes or stats its files.
    repo = Path(__file__).resolve().parents[4]
    texts = {p: p.read_text() for d in ("roles", "playbooks") for p in (repo / d).rglob("*.yml")}
    for filename in _unit_store.MARKS.values():
        assert not [str(p) for p, text in texts.items() if filename in text], filename
    for path in (repo / "roles" / "ddtree_deploy" / "tasks").glob("*.yml"):

        def tasks(items):
            for task in items or []:
                yield task
                for key in ("block", "rescue", "always"):
                    yield from tasks(task.get(key))

        for task in tasks(yaml.safe_load(path.read_text())):
            for module in ("ansible.builtin.file", "ansible.builtin.stat", "ansible.builtin.slurp"):
                args = json.dumps(task.get(module) or "")
                assert "__ddtree_deploy_store" not in args, (path.name, task.get("name"))
            # The role deletes no file at all (a mark's path in a variable would pass the check above).
            assert (task.get("ansible.builtin.file") or {}).get("state") != "absent", (path.name, task.get("name"))
