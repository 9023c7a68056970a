# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The last-known-good store of one systemd unit: systemd_unit_snapshot's states.

    UnitSnapshot(module).run()   # module.params: name, state, store, in_progress, candidate, keep_markers, marks

The store (a directory on the host) holds the snapshot (_unit_manifest.py: ``files/`` and
``manifest.json``) and two marks, which this file alone names: ``in_progress`` while a deploy has
switched the unit and not proved or restored it, ``candidate`` while a proved deploy that was not
promoted awaits promotion. Playbooks read the marks with state ``read`` and remove them with state
``cleared``; they never touch the store's files.
"""

from __future__ import absolute_import, division, print_function

import glob
import json
import os
import stat
import time

from ansible_collections.ddtree.sglang.plugins.module_utils import _unit_manifest as manifests
from ansible_collections.ddtree.sglang.plugins.module_utils._files import (
    atomic_write,
    differs,
    read_bytes,
    sha256_bytes,
)
from ansible_collections.ddtree.sglang.plugins.module_utils._redact import redact
from ansible_collections.ddtree.sglang.plugins.module_utils._systemd import (
    UNIT_PROPERTIES,
    credential_files,
    parse_properties,
    show,
    unit_files,
    unit_info,
    unit_name,
)

STATES = ("read", "snapshot", "candidate", "restored", "verified", "cleared")
# The marks by the name the module's options use, and their files in the store.
MARKS = {"in_progress": "deploy-in-progress", "candidate": "candidate-not-promoted.json"}
# Where the sglang role and administrators write units; the only place a restore removes files
# the snapshot lacks (a module-level constant, so tests point it at a temporary directory).
SYSTEMD_ETC = "/etc/systemd/system"
# Kinds of stored files whose content may hold secrets: never shown in a diff.
SECRET_KINDS = ("env", "credential")
SECRET_TEXT = "(content not shown: environment and credential files hold secrets)\n"
SECRET_CHANGED_TEXT = "(content differs; not shown: environment and credential files hold secrets)\n"


class UnitSnapshot:
    """One state of the snapshot store of one unit: read, snapshot, candidate, restored, verified, cleared."""

    def __init__(self, module):
        self.module = module
        self.params = module.params
        self.unit = unit_name(self.params["name"])
        self.service = self.unit[: -len(".service")] if self.unit.endswith(".service") else self.unit
        self.store = self.params["store"]
        self.systemctl = module.get_bin_path("systemctl", required=True)
        self.check_mode = module.check_mode
        self.diffs = []
        if self.store:
            self.manifest_path = os.path.join(self.store, manifests.MANIFEST)
            self.marks = {name: os.path.join(self.store, filename) for name, filename in MARKS.items()}

    def run(self):
        state = self.params["state"]
        if state != "read" and not self.store:
            self.module.fail_json(msg=f"state={state} needs store: the snapshot directory of {self.unit}.")
        getattr(self, state)()

    # ------------------------------------------------------------------ systemd

    def read_unit(self, with_credentials=True):
        """systemd's view of the unit (unit_info), with the credential files its unit files name."""
        props = parse_properties(show(self.module, self.systemctl, self.unit, UNIT_PROPERTIES))
        creds = []
        if with_credentials:
            texts = [read_bytes(path) for path in unit_files(props)]
            creds = credential_files([t.decode("utf-8", "replace") for t in texts if t is not None])
        return unit_info(props, creds)

    def systemctl_run(self, *args, **kwargs):
        """Run one systemctl command; fail the module (with ``result``) unless ``ignore_errors``."""
        rc, out, err = self.module.run_command([self.systemctl] + list(args))
        if rc != 0 and not kwargs.get("ignore_errors"):
            result = dict(kwargs.get("result") or {}, changed=True, rc=rc, stdout=out, stderr=err)
            self.module.fail_json(
                msg="systemctl {} failed (exit code {}): {}. {}".format(
                    " ".join(args), rc, (err.strip() or out.strip() or "(no output)"), kwargs.get("hint", "")
                ).strip(),
                **result,
            )
        return rc

    def etc_files(self):
        """What /etc/systemd/system holds for the unit: its unit file and drop-ins (links too)."""
        found = []
        path = os.path.join(SYSTEMD_ETC, self.unit)
        if os.path.lexists(path):
            found.append(path)
        found.extend(sorted(glob.glob(os.path.join(SYSTEMD_ETC, self.unit + ".d", "*.conf"))))
        return found

    # ------------------------------------------------------------------ diff and exit

    def add_diff(self, path, kind, before, after):
        if not self.module._diff:
            return
        if kind in SECRET_KINDS:
            before = "" if before is None else SECRET_TEXT
            after = "" if after is None else SECRET_CHANGED_TEXT
        else:
            # A unit's text may still carry a key (--api-key in extra arguments, an Environment=
            # line): the collection's one redaction hides it.
            before = "" if before is None else redact(before.decode("utf-8", "replace"))
            after = "" if after is None else redact(after.decode("utf-8", "replace"))
        self.diffs.append({"before_header": path, "after_header": path, "before": before, "after": after})

    def exit(self, **result):
        if self.module._diff:
            result["diff"] = self.diffs
        self.module.exit_json(**result)

    # ------------------------------------------------------------------ marks and store files

    def read_mark(self, name):
        data = read_bytes(self.marks[name])
        if data is None:
            return None
        try:
            value = json.loads(data.decode("utf-8", "replace") or "null")
        except ValueError:
            return {"unreadable": True}
        return value if isinstance(value, dict) else {"content": value}

    def write_mark(self, name, content):
        if not self.check_mode:
            atomic_write(self.marks[name], manifests.encode(content), 0o600)

    def remove(self, path):
        """Remove a file if it exists; returns whether it existed."""
        if not os.path.lexists(path):
            return False
        if not self.check_mode:
            os.unlink(path)
        return True

    def stored_path(self, entry):
        """The absolute path of a manifest entry's stored copy; None when it points outside the store."""
        stored = entry.get("stored")
        if not isinstance(stored, str) or not stored or os.path.isabs(stored):
            return None
        path = os.path.normpath(os.path.join(self.store, stored))
        return path if path.startswith(os.path.join(os.path.normpath(self.store), "")) else None

    def load_manifest(self):
        """The manifest, checked: readable, well formed, its own checksum right."""
        data = read_bytes(self.manifest_path)
        if data is None:
            self.module.fail_json(
                msg=f"There is no snapshot of {self.unit} in {self.store} ({self.manifest_path} does not exist "
                "or cannot be read): nothing to restore or compare. A deploy with ddtree.sglang.ddtree_deploy "
                "writes it before switching the unit.",
                manifest=self.manifest_path,
            )
        try:
            problem = manifests.problem(json.loads(data.decode("utf-8")))
        except (ValueError, UnicodeDecodeError) as exc:
            problem = f"is not valid JSON ({exc})"
        if problem:
            self.module.fail_json(
                msg=f"The snapshot manifest {self.manifest_path} {problem}: the snapshot of {self.unit} is refused "
                "and nothing was changed. Take a new snapshot of a unit known to serve, or restore the store "
                "from a backup.",
                manifest=self.manifest_path,
            )
        return json.loads(data.decode("utf-8"))

    def damaged(self, manifest):
        """Stored copies that are missing, outside the store, or differ from their recorded sha256."""
        bad = []
        for entry in manifest["files"]:
            path = self.stored_path(entry)
            data = read_bytes(path) if path else None
            if data is None or sha256_bytes(data) != entry["sha256"]:
                bad.append(path or entry["stored"])
        return bad

    def ensure_dir(self, path):
        """A directory of the store, mode 0700; returns whether it was created or its mode fixed."""
        if os.path.isdir(path):
            if stat.S_IMODE(os.stat(path).st_mode) == 0o700:
                return False
            if not self.check_mode:
                os.chmod(path, 0o700)
            return True
        if not self.check_mode:
            os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
            os.mkdir(path, 0o700)
            os.chmod(path, 0o700)  # mkdir's mode is cut by the umask
        return True

    # ------------------------------------------------------------------ read, cleared

    def read(self):
        result = {"changed": False, "unit": self.read_unit()}
        if self.store:
            result["manifest"] = self.manifest_path
            result["store"] = {
                "manifest": os.path.exists(self.manifest_path),
                "in_progress": self.read_mark("in_progress"),
                "candidate": self.read_mark("candidate"),
            }
        self.exit(**result)

    def cleared(self):
        cleared = [mark for mark in self.params["marks"] if self.remove(self.marks[mark])]
        self.exit(
            changed=bool(cleared),
            manifest=self.manifest_path,
            cleared=cleared,
            msg=f"{self.unit}: cleared {', '.join(cleared)} in {self.store}."
            if cleared
            else f"{self.unit}: no mark to clear in {self.store}.",
        )

    # ------------------------------------------------------------------ snapshot

    def snapshot(self):
        in_progress = self.params["in_progress"]
        result = {
            "changed": False,
            "manifest": self.manifest_path,
            "snapshotted": False,
            "kept_promoted": False,
            "in_progress_marked": False,
            "files_written": [],
            "files_removed": [],
        }
        # An earlier deploy switched the unit and never proved or restored it: the running unit
        # is unproved, and storing it would replace the last-known-good with it.
        if in_progress is not None and os.path.lexists(self.marks["in_progress"]):
            self.module.fail_json(
                msg=f"An earlier deploy of {self.unit} was interrupted after switching the unit and before proving "
                f"it (its mark in {self.store} holds {json.dumps(self.read_mark('in_progress'))}). The running unit "
                "is unproved, so it is not snapshotted; nothing was written. Restore the last-known-good unit "
                "first: ansible-playbook ddtree.sglang.rollback -l <host>",
                **result,
            )
        unit = self.read_unit()
        result["unit"] = unit
        if not unit["exists"]:
            result["msg"] = f"{self.unit} does not exist: there is nothing to snapshot, and no mark was written."
            self.exit(**result)

        if in_progress is not None and os.path.exists(self.marks["candidate"]):
            # A candidate deployed with ddtree_deploy_promote false was never made last-known-good:
            # the store keeps the promoted unit, which a failure of this deploy restores.
            result["kept_promoted"] = True
        else:
            self.store_unit(unit, result)
            result["snapshotted"] = True

        if in_progress is not None:
            self.write_mark("in_progress", in_progress)
            result["in_progress_marked"] = True
        else:
            # The stored unit is proved: an interrupted deploy is over, a candidate is promoted.
            self.remove(self.marks["in_progress"])  # this run's own bookkeeping: not a change
            if self.remove(self.marks["candidate"]):
                result["changed"] = True
        result["msg"] = self.snapshot_message(result)
        self.exit(**result)

    def snapshot_message(self, result):
        if result["kept_promoted"]:
            return (
                f"{self.unit}: a candidate awaits promotion (marked in {self.store}); the store keeps the promoted "
                "snapshot, which a rollback restores."
            )
        if result["changed"]:
            return f"{self.unit} stored in {self.store} ({len(result['files_written'])} file(s) written)."
        return f"{self.unit}: the store in {self.store} already equals the unit."

    def old_copies(self):
        """The stored copy of each file of the store's current manifest, by the file's path (for diffs)."""
        try:
            old = json.loads((read_bytes(self.manifest_path) or b"null").decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return {}
        if not isinstance(old, dict) or not isinstance(old.get("files"), list):
            return {}
        return {e.get("path"): self.stored_path(e) for e in old["files"] if isinstance(e, dict)}

    def store_unit(self, unit, result):
        """Copy the unit's files into the store where they differ, drop stale copies, write the manifest last."""
        old_copies = self.old_copies()
        for directory in (self.store, os.path.join(self.store, "files")):
            if self.ensure_dir(directory):
                result["changed"] = True

        entries = manifests.describe_files(unit)
        for entry, data in entries:
            dest = os.path.join(self.store, entry["stored"])
            if not differs(dest, data, 0o600):
                continue
            result["files_written"].append(entry["path"])
            result["changed"] = True
            old_copy = old_copies.get(entry["path"])
            before = read_bytes(old_copy) if old_copy else None
            if before != data:
                self.add_diff(entry["path"], entry["kind"], before, data)
            if not self.check_mode:
                # Environment and credential files hold secrets (API keys): the copy stays 0600.
                atomic_write(dest, data, 0o600)

        keep = {os.path.join(self.store, entry["stored"]) for entry, dummy in entries}
        for path in sorted(glob.glob(os.path.join(self.store, "files", "*"))):
            if path not in keep and os.path.isfile(path):
                self.remove(path)
                result["files_removed"].append(path)
                result["changed"] = True

        data = manifests.encode(manifests.build(self.service, unit, entries))
        # Written last: a snapshot cut short has the old manifest, whose checksums the new copies
        # do not match, and a restore refuses it.
        if data != read_bytes(self.manifest_path):
            result["changed"] = True
            if not self.check_mode:
                atomic_write(self.manifest_path, data, 0o600)

    # ------------------------------------------------------------------ candidate

    def candidate(self):
        unit = self.read_unit()
        result = {"changed": False, "manifest": self.manifest_path, "unit": unit, "candidate_marked": False}
        if os.path.exists(self.manifest_path):
            content = dict(self.params["candidate"], exec_start=unit["exec_start"])
            if read_bytes(self.marks["candidate"]) != manifests.encode(content):
                result["changed"] = True
                self.write_mark("candidate", content)
            result["candidate_marked"] = True
            result["msg"] = (
                f"{self.unit} is a proved candidate awaiting promotion (marked in {self.store}); the last-known-good "
                "there is unchanged."
            )
        else:
            result["msg"] = f"{self.unit}: no snapshot in {self.store}, so no candidate to note."
        self.remove(self.marks["in_progress"])  # this run's own bookkeeping: not a change
        self.exit(**result)

    # ------------------------------------------------------------------ restored

    def restored(self):
        manifest = self.intact_manifest()
        summary = manifests.summary(manifest)
        plan = self.restore_plan(manifest, summary)
        result = {
            "changed": bool(plan["reload"] or plan["enablement"] or plan["action"]),
            "manifest": self.manifest_path,
            "snapshot": summary,
            "files_restored": [entry["path"] for entry in plan["restore"]],
            "files_removed": plan["remove"],
            "restarted": plan["action"] == "restart",
            "restart_started_at": None,
            "unit": plan["before"],
        }
        self.diff_restore(plan)
        if self.check_mode:
            result["msg"] = self.restore_message(result, plan["action"], check=True)
            self.exit(**result)

        self.put_back(plan, summary, result)
        self.check_loaded(manifest, result)
        self.restart(plan["action"], result)
        # The last-known-good is what runs (or is stopped as it was): nothing is in progress,
        # and a candidate that awaited promotion is gone. A caller that proves the restored service
        # first (ddtree_deploy) keeps the marks until it has (state cleared): a restored unit that
        # does not come up leaves the host for rollback.yml to finish.
        if not self.params["keep_markers"]:
            for path in self.marks.values():
                self.remove(path)
        result["msg"] = self.restore_message(result, plan["action"])
        self.exit(**result)

    def intact_manifest(self):
        """The manifest, refused (nothing changed) when a stored copy is missing or damaged."""
        manifest = self.load_manifest()
        bad = self.damaged(manifest)
        if bad:
            self.module.fail_json(
                msg=f"The snapshot copies {', '.join(bad)} are missing or do not match the sha256 recorded in "
                f"{self.manifest_path}; the snapshot of {self.unit} cannot be restored byte for byte. Nothing "
                "was changed.",
                changed=False,
                damaged=bad,
                snapshot=manifests.summary(manifest),
                manifest=self.manifest_path,
            )
        return manifest

    def restore_plan(self, manifest, summary):
        """What a restore changes: files to put back and remove, whether to reload, (re)enable, restart or stop."""
        before = self.read_unit(with_credentials=False)
        kept_paths = {entry["path"] for entry in manifest["files"]}
        restore = [entry for entry in manifest["files"] if manifests.file_differs(entry)]
        remove = [path for path in self.etc_files() if path not in kept_paths]
        files_changed = bool(restore or remove)
        reload = files_changed or before["need_daemon_reload"]
        if summary["active"]:
            # Issue 24: a unit that already is the snapshot and runs is left running.
            action = "restart" if reload or before["active_state"] != "active" else None
        else:
            action = "stop" if before["active_state"] not in ("inactive", "failed", "") else None
        return {
            "before": before,
            "restore": restore,
            "remove": remove,
            "ids": {entry["path"]: self.ids(entry) for entry in restore},
            "reload": reload,
            "enablement": files_changed or before["enabled"] != summary["enabled"],
            "action": action,
        }

    def ids(self, entry):
        try:
            return manifests.ids(entry)
        except KeyError:
            self.module.fail_json(
                msg=f"The snapshot records {entry['path']} as owned by {entry['owner']}:{entry['group']}, "
                "which this host does not know. Create that user and group (the sglang role does), then restore "
                "again; nothing was changed.",
            )

    def diff_restore(self, plan):
        for entry in plan["restore"]:
            current = read_bytes(entry["path"]) if os.path.isfile(entry["path"]) else None
            stored = read_bytes(self.stored_path(entry))
            if current != stored:
                self.add_diff(entry["path"], entry["kind"], current, stored)
        for path in plan["remove"]:
            self.add_diff(path, "unit", read_bytes(path) if os.path.isfile(path) else b"", None)

    def put_back(self, plan, summary, result):
        """The snapshot's files in place, the others gone, systemd reloaded and the unit (re)enabled as needed."""
        for entry in plan["restore"]:
            os.makedirs(os.path.dirname(entry["path"]), exist_ok=True)
            uid, gid = plan["ids"][entry["path"]]
            atomic_write(entry["path"], read_bytes(self.stored_path(entry)), int(entry["mode"], 8), uid, gid)
        for path in plan["remove"]:
            os.unlink(path)
        if plan["reload"]:
            self.systemctl_run("daemon-reload", result=result)
        if plan["enablement"]:
            # reenable also drops an [Install] link left pointing at a removed /etc copy.
            self.systemctl_run("--quiet", "reenable" if summary["enabled"] else "disable", self.unit, result=result)

    def check_loaded(self, manifest, result):
        """Fail without starting anything unless systemd loads exactly the snapshot, byte for byte."""
        after = self.read_unit()
        result["unit"] = after
        problems = manifests.systemd_differences(after, manifests.wanted_systemd(manifest))
        problems += [
            f"{entry['path']} differs from the snapshot (sha256)"
            for entry in manifest["files"]
            if manifests.content_differs(entry)
        ]
        if problems:
            result["restarted"] = False
            self.module.fail_json(
                msg=f"After the restore systemd does not load the snapshot of {self.unit}: {'; '.join(problems)}. "
                "The unit was not started. Something else defines the unit (a unit or drop-in under "
                f"/run/systemd or /etc/systemd the deploy did not write?): see systemctl cat {self.unit}.",
                differences=problems,
                **result,
            )

    def restart(self, action, result):
        """Restart (or stop) the unit as the snapshot was; nothing when it already is the snapshot and runs."""
        if action == "restart":
            # Deliberate, not a crash loop: clear the failed state and the start limit the
            # candidate's starts used up, or systemd 257 refuses the start ("Start request repeated
            # too quickly"; seen on Debian 13 after a prepare, a deploy and a crash).
            self.systemctl_run("reset-failed", self.unit, ignore_errors=True)
        if action:
            result["restart_started_at"] = time.time()
            self.systemctl_run(
                action,
                self.unit,
                result=result,
                hint=f"The snapshot's files are back in place; see journalctl -u {self.unit}.",
            )
            result["unit"] = self.read_unit()

    def restore_message(self, result, action, check=False):
        would = "would be " if check else ""
        if not result["changed"]:
            state = "is running" if result["snapshot"]["active"] else "is stopped"
            return (
                f"{self.unit} already is the snapshot in {self.store} and {state}: nothing was changed, "
                "and it was left as it was (not restarted)."
            )
        parts = []
        if result["files_restored"]:
            parts.append(f"{would}restored byte for byte: " + ", ".join(result["files_restored"]))
        if result["files_removed"]:
            parts.append(f"{would}removed (not in the snapshot): " + ", ".join(result["files_removed"]))
        if action == "restart":
            parts.append(f"{would}restarted")
        elif action == "stop":
            parts.append(f"{would}stopped (the snapshot's unit was not running)")
        else:
            parts.append("not restarted (it already runs the snapshot)")
        return f"{self.unit} {'(check mode) ' if check else ''}from the snapshot in {self.store}: {'; '.join(parts)}."

    # ------------------------------------------------------------------ verified

    def verified(self):
        manifest = self.load_manifest()
        summary = manifests.summary(manifest)
        unit = self.read_unit()
        differences = self.differences(manifest, summary, unit)
        self.exit(
            changed=False,
            manifest=self.manifest_path,
            matches=not differences,
            differences=differences,
            snapshot=summary,
            unit=unit,
            msg=(
                f"{self.unit} equals the snapshot in {self.store}."
                if not differences
                else f"{self.unit} differs from the snapshot in {self.store}: {'; '.join(differences)}."
            ),
        )

    def differences(self, manifest, summary, unit):
        """How the live unit differs from the snapshot, one sentence each."""
        differences = [f"stored copy {path} is missing or damaged" for path in self.damaged(manifest)]
        for entry in manifest["files"]:
            why = manifests.file_differs(entry)
            if why == "missing":
                differences.append(f"{entry['path']} is missing")
            elif why:
                differences.append(f"{entry['path']} differs from the snapshot ({why})")
        extra = [path for path in self.etc_files() if path not in summary["files"]]
        differences += [f"{path} is not in the snapshot (a restore removes it)" for path in extra]
        differences += manifests.systemd_differences(unit, manifests.wanted_systemd(manifest))
        if unit["need_daemon_reload"]:
            differences.append("systemd has not loaded the unit's current files (NeedDaemonReload=yes)")
        if unit["enabled"] != summary["enabled"]:
            differences.append(
                "the unit is {}, the snapshot's was {}".format(
                    "enabled" if unit["enabled"] else "not enabled", "enabled" if summary["enabled"] else "not enabled"
                )
            )
        if unit["active"] != summary["active"]:
            differences.append(
                "the unit is {}, the snapshot's was {}".format(
                    unit["systemd_state"], "active" if summary["active"] else "inactive"
                )
            )
        return differences
