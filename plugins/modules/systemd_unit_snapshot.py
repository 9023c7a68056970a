#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

DOCUMENTATION = r"""
---
module: systemd_unit_snapshot
short_description: Snapshot, restore and verify what systemd uses for a unit (the last-known-good store)
version_added: 0.1.0
description:
  - Keeps a last-known-good copy of a systemd unit in a store directory on the host, puts it back
    byte for byte, and compares the live unit with it.
  - What is copied is what systemd itself uses for the unit, as C(systemctl show) names it
    (C(FragmentPath), C(DropInPaths), C(EnvironmentFiles)), plus the files the unit's
    C(LoadCredential=) and C(LoadCredentialEncrypted=) lines name with an absolute path (read from
    the unit's files, because systemd 252 shows those properties as C([unprintable])).
  - The store holds C(files/) (one copy per file, mode 0600, owned by the user the module runs as,
    root on a host) and C(manifest.json), written last and atomically (a temporary file and a
    rename), with the sha256, owner, group and mode of every file, the unit's enabled and active
    state, what systemd loaded (C(FragmentPath), C(DropInPaths), the static part of C(ExecStart)),
    and a sha256 of the manifest's own content.
  - The store also holds two markers used by the P(ddtree.sglang.ddtree_deploy#role) role.
    C(deploy-in-progress) exists while a deploy has switched the unit and not yet proved or
    restored it. C(candidate-not-promoted.json) exists while a proved deploy made with
    C(ddtree_deploy_promote=false) awaits promotion; the store then keeps the promoted unit.
  - O(state=restored) starts the unit only when systemd, after a reload, loads exactly what the
    snapshot recorded, and restarts nothing when the unit already is the snapshot and runs.
  - It does not wait for the server to be ready; P(ddtree.sglang.sglang_wait#module) does that.
author:
  - ddtree.sglang developers (@ddtree)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details:
      - Every state reports what it would change and changes nothing.
      - O(state=restored) still checks every stored copy against the manifest and refuses a damaged
        snapshot, and reports in RV(restarted) whether it would restart the unit.
  diff_mode:
    support: full
    details:
      - Shows the before and after text of the unit file and drop-ins that change (O(state=snapshot)
        the stored copy and the live file, O(state=restored) the live file and the stored copy).
      - Environment and credential files hold secrets (API keys); for them the diff says only that
        the content differs, never the content.
  platform:
    platforms: posix
    details: Needs systemd (C(systemctl)) on the managed host, and root to write the unit's files.
options:
  name:
    description:
      - The systemd unit, with or without the C(.service) suffix.
    type: str
    required: true
    aliases: [service]
  state:
    description:
      - C(read) reads systemd's view of the unit (RV(unit)) and, when O(store) is given, the store's
        markers (RV(store)). Changes nothing.
      - C(snapshot) copies the unit's files into O(store) and writes the manifest. Store files that
        already equal the unit are not rewritten; stored files the new manifest does not list are
        removed. With O(in_progress) given, also writes the C(deploy-in-progress) marker, and fails,
        writing nothing, when that marker exists already (an earlier deploy was interrupted, and its unit
        was never proved). With O(in_progress) given and a C(candidate-not-promoted.json) marker in the
        store, the store keeps the promoted snapshot (RV(kept_promoted)). With O(in_progress) null, the
        unit is the proved last-known-good now; it is stored and both markers are removed. A unit that
        does not exist is not stored (RV(snapshotted) is false) and no marker is written.
      - C(candidate) records a proved unit that is not made last-known-good (C(ddtree_deploy_promote=false)); it
        writes C(candidate-not-promoted.json) holding O(candidate) and the unit's static C(ExecStart),
        and removes the C(deploy-in-progress) marker. The snapshot stays as it is. Without a snapshot in
        O(store) there is nothing to promote over, and only the in-progress marker is removed.
      - C(restored) puts the snapshot back. It checks every stored copy against the manifest first and
        refuses a damaged or cut-short snapshot, touching nothing. It puts back each file that differs
        (content, owner, group or mode) through a temporary file and a rename; removes the unit file and
        drop-ins in C(/etc/systemd/system) that the snapshot does not have (the copy there that shadows
        a vendor unit under C(/usr/lib), drop-ins a deploy added); reloads systemd when something changed
        or systemd asks for it (C(NeedDaemonReload)); enables or disables the unit as the snapshot was;
        and reads back what systemd loads. When that is not the snapshot's C(FragmentPath),
        C(DropInPaths) and C(ExecStart), it fails without starting the unit. Then it clears the failed
        state (C(reset-failed)) and restarts the unit if the snapshot was active, or stops it if not.
        When nothing had to change and the unit already runs, it is not restarted (RV(restarted) false,
        changed false). On success both markers are removed.
      - C(verified) compares the live unit with the snapshot and changes nothing (RV(matches),
        RV(differences)).
      - C(cleared) removes the marks O(marks) names (RV(cleared)) and nothing else; a caller clears them once
        a restored unit is proved, or when a deploy that changed no unit ends.
    type: str
    choices: [read, snapshot, candidate, restored, verified, cleared]
    default: read
  store:
    description:
      - The store directory of this unit, e.g. C(/var/lib/ddtree-sglang/last-known-good/sglang-qwen).
      - Required unless O(state=read). Created with mode 0700 (its parent with 0755) by O(state=snapshot).
    type: path
  in_progress:
    description:
      - With O(state=snapshot), what to write into the C(deploy-in-progress) marker (for example the
        deploy's run id and profile), or null when the unit being stored is proved (see O(state)).
    type: dict
  keep_markers:
    description:
      - With O(state=restored), leave the C(deploy-in-progress) and C(candidate-not-promoted.json) markers in
        place; the caller clears them (O(state=cleared)) once it has proved the restored service. By default
        a successful restore removes them.
    type: bool
    default: false
  marks:
    description:
      - With O(state=cleared), the marks to remove. C(in_progress) is the C(deploy-in-progress) marker,
        C(candidate) is C(candidate-not-promoted.json).
    type: list
    elements: str
    choices: [in_progress, candidate]
    default: [in_progress, candidate]
  candidate:
    description:
      - With O(state=candidate), what to write into C(candidate-not-promoted.json) (for example the
        deploy's run id and profile). The module adds the unit's static C(ExecStart) as C(exec_start).
    type: dict
    default: {}
notes:
  - Manifests written by the C(store.yml) tasks of earlier releases (no C(checksum), no C(version)) are
    read as they are. A manifest whose C(checksum) does not match its content is refused.
  - Only C(/etc/systemd/system) is cleaned by a restore. A unit file or drop-in under C(/run/systemd) or
    C(/usr/lib/systemd) that the snapshot lacks makes the restore fail before the start, naming what
    systemd loads.
seealso:
  - module: ddtree.sglang.sglang_wait
  - module: ansible.builtin.systemd_service
"""

EXAMPLES = r"""
- name: Read what systemd uses for the unit, and the store's markers
  ddtree.sglang.systemd_unit_snapshot:
    name: sglang-qwen
    store: /var/lib/ddtree-sglang/last-known-good/sglang-qwen
  register: unit_state

- name: Keep the running unit as last-known-good and mark a deploy in progress
  ddtree.sglang.systemd_unit_snapshot:
    name: sglang-qwen
    state: snapshot
    store: /var/lib/ddtree-sglang/last-known-good/sglang-qwen
    in_progress:
      run_id: "20261204T180000"
      profile: ddtree

- name: The deployed unit is proved - it is the last-known-good now
  ddtree.sglang.systemd_unit_snapshot:
    name: sglang-qwen
    state: snapshot
    store: /var/lib/ddtree-sglang/last-known-good/sglang-qwen
    in_progress: null

- name: The deployed unit is proved but not promoted - keep the old snapshot, note the candidate
  ddtree.sglang.systemd_unit_snapshot:
    name: sglang-qwen
    state: candidate
    store: /var/lib/ddtree-sglang/last-known-good/sglang-qwen
    candidate:
      run_id: "20261204T180000"
      profile: ddtree

- name: Put the last-known-good unit back (restarts it only if something changed)
  ddtree.sglang.systemd_unit_snapshot:
    name: sglang-qwen
    state: restored
    store: /var/lib/ddtree-sglang/last-known-good/sglang-qwen
  register: restored

- name: Wait for the restored server
  ddtree.sglang.sglang_wait:
    name: sglang-qwen
  when: restored.snapshot.active

- name: The restored unit is proved - nothing is in progress, no candidate awaits promotion
  ddtree.sglang.systemd_unit_snapshot:
    name: sglang-qwen
    state: cleared
    store: /var/lib/ddtree-sglang/last-known-good/sglang-qwen
    marks: [in_progress, candidate]

- name: Does the live unit still equal the snapshot?
  ddtree.sglang.systemd_unit_snapshot:
    name: sglang-qwen
    state: verified
    store: /var/lib/ddtree-sglang/last-known-good/sglang-qwen
  register: verified
"""

RETURN = r"""
unit:
  description:
    - systemd's view of the unit (for O(state=restored), after the restore).
  returned: always
  type: dict
  contains:
    exists:
      description: Whether systemd has the unit (C(LoadState) not C(not-found), a C(FragmentPath)).
      type: bool
    fragment:
      description: C(FragmentPath), the unit file systemd loads.
      type: str
    dropins:
      description: C(DropInPaths), in systemd's order.
      type: list
      elements: str
    env_files:
      description: The paths of C(EnvironmentFiles), including optional (C(-)) ones that may be missing.
      type: list
      elements: str
    credential_files:
      description: Absolute paths the unit's C(LoadCredential=) and C(LoadCredentialEncrypted=) lines name.
      type: list
      elements: str
    enabled:
      description: C(UnitFileState) is C(enabled) or C(enabled-runtime).
      type: bool
    active:
      description: C(ActiveState) is C(active), C(activating) or C(reloading).
      type: bool
    active_state:
      description: C(ActiveState).
      type: str
    systemd_state:
      description: C(ActiveState (SubState)), as C(systemctl status) shows it.
      type: str
    started_at:
      description: C(ExecMainStartTimestampMonotonic) (microseconds since boot, as a string); changes at every start.
      type: str
    exec_start:
      description: One entry per C(ExecStart=), without the fields that change at every start (start_time, pid, status).
      type: list
      elements: str
    algorithm:
      description: The C(--speculative-algorithm) the unit runs, upper case, or C(NONE).
      type: str
    need_daemon_reload:
      description: systemd's C(NeedDaemonReload) (the unit's files changed since it loaded them).
      type: bool
  sample:
    exists: true
    fragment: /etc/systemd/system/sglang-qwen.service
    dropins: [/etc/systemd/system/sglang-qwen.service.d/10-limits.conf]
    env_files: [/etc/default/sglang-qwen]
    credential_files: [/etc/ddtree-sglang/sglang-qwen.key]
    enabled: true
    active: true
    active_state: active
    systemd_state: active (running)
    started_at: "595590662"
    exec_start:
      - "{ path=/opt/sglang/bin/python ; argv[]=/opt/sglang/bin/python -m sglang.launch_server ... ; ignore_errors=no }"
    algorithm: NEXTN
    need_daemon_reload: false
store:
  description: The store's markers and whether it holds a snapshot.
  returned: when O(state=read) and O(store) is given
  type: dict
  contains:
    manifest:
      description: Whether C(manifest.json) exists.
      type: bool
    in_progress:
      description:
        - The content of the C(deploy-in-progress) marker (the run id and profile of the deploy that switched
          the unit and has not proved or restored it), or null when there is none.
      type: dict
    candidate:
      description: The content of C(candidate-not-promoted.json), or null when there is none.
      type: dict
  sample:
    manifest: true
    in_progress: null
    candidate: {run_id: "20261204T180000", profile: ddtree, exec_start: ["{ path=... }"]}
snapshotted:
  description: Whether the store holds the unit as it is now (false when the unit does not exist, or the
    promoted snapshot was kept).
  returned: when O(state=snapshot)
  type: bool
kept_promoted:
  description: The store kept the promoted snapshot because a candidate awaits promotion.
  returned: when O(state=snapshot)
  type: bool
in_progress_marked:
  description: Whether the C(deploy-in-progress) marker was written (or would be, in check mode).
  returned: when O(state=snapshot)
  type: bool
cleared:
  description: The marks that were in the store and were removed (or would be, in check mode).
  returned: when O(state=cleared)
  type: list
  elements: str
  sample: [in_progress]
candidate_marked:
  description: Whether C(candidate-not-promoted.json) was written (false when the store holds no snapshot).
  returned: when O(state=candidate)
  type: bool
files_written:
  description: The unit's files whose stored copy was written (or would be, in check mode).
  returned: when O(state=snapshot)
  type: list
  elements: str
files_restored:
  description: The files put back from the snapshot (or that would be, in check mode).
  returned: when O(state=restored)
  type: list
  elements: str
files_removed:
  description:
    - O(state=restored) the files removed from C(/etc/systemd/system) that the snapshot lacks;
      O(state=snapshot) the stored copies of an older snapshot that were removed from the store.
  returned: when O(state) is C(snapshot) or C(restored)
  type: list
  elements: str
restarted:
  description: Whether the unit was restarted (in check mode, whether it would be).
  returned: when O(state=restored)
  type: bool
restart_started_at:
  description: Unix time right before the restart (or stop) was asked of systemd, for downtime accounting;
    null when the unit was neither restarted nor stopped.
  returned: when O(state=restored)
  type: float
  sample: 1796400000.25
snapshot:
  description: What the snapshot records.
  returned: when O(state) is C(restored) or C(verified)
  type: dict
  contains:
    enabled:
      description: Whether the unit was enabled.
      type: bool
    active:
      description: Whether the unit was running (a restore starts it).
      type: bool
    files:
      description: The files of the snapshot.
      type: list
      elements: str
  sample: {enabled: true, active: true, files: [/etc/systemd/system/sglang-qwen.service, /etc/default/sglang-qwen]}
matches:
  description: Whether the live unit equals the snapshot.
  returned: when O(state=verified)
  type: bool
differences:
  description: How the live unit differs from the snapshot, one sentence each.
  returned: when O(state=verified)
  type: list
  elements: str
  sample: ["/etc/systemd/system/sglang-qwen.service differs from the snapshot (sha256)"]
manifest:
  description: The path of the store's manifest.
  returned: when O(store) is given
  type: str
  sample: /var/lib/ddtree-sglang/last-known-good/sglang-qwen/manifest.json
"""

import glob  # noqa: E402
import grp  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import pwd  # noqa: E402
import stat  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._redact import redact  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._systemd import (  # noqa: E402
    UNIT_PROPERTIES,
    credential_files,
    parse_properties,
    show,
    unit_files,
    unit_info,
    unit_name,
)

# Where the sglang role and administrators write units; the only place a restore removes files
# the snapshot lacks (a module-level constant, so tests point it at a temporary directory).
SYSTEMD_ETC = "/etc/systemd/system"
MANIFEST = "manifest.json"
STATES = ["read", "snapshot", "candidate", "restored", "verified", "cleared"]
IN_PROGRESS_MARKER = "deploy-in-progress"
CANDIDATE_MARKER = "candidate-not-promoted.json"
# Version 2: written by this module, with "checksum". Version-less manifests come from the
# ddtree_deploy role's store.yml before this module and are read as they are.
MANIFEST_VERSION = 2
# Kinds of stored files whose content may hold secrets: never shown in a diff.
SECRET_KINDS = ("env", "credential")
SECRET_TEXT = "(content not shown: environment and credential files hold secrets)\n"
SECRET_CHANGED_TEXT = "(content differs; not shown: environment and credential files hold secrets)\n"


def sha256_bytes(data):
    return hashlib.sha256(data).hexdigest()


def read_bytes(path):
    """A file's content, or None when it cannot be read (missing, a directory)."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def manifest_checksum(manifest):
    """sha256 of the manifest's content without its own checksum, in one canonical JSON form."""
    body = {key: value for key, value in manifest.items() if key != "checksum"}
    return sha256_bytes(json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8"))


def as_bool(value):
    """Manifests of store.yml may hold "True"/"False" strings where this module writes booleans."""
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "1")
    return bool(value)


def mode_text(mode):
    return format(stat.S_IMODE(mode), "04o")


def owner_name(uid):
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def group_name(gid):
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def atomic_write(path, data, mode, uid=None, gid=None):
    """Write ``data`` beside ``path`` and rename it into place: the file is never half written."""
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".ddtree-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if uid is not None:
            os.chown(tmp, uid, gid)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


class UnitSnapshot:
    """One state of the snapshot store of one unit: read, snapshot, candidate, restored, verified."""

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
            self.manifest_path = os.path.join(self.store, MANIFEST)
            self.in_progress_path = os.path.join(self.store, IN_PROGRESS_MARKER)
            self.candidate_path = os.path.join(self.store, CANDIDATE_MARKER)

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
        cmd = [self.systemctl] + list(args)
        rc, out, err = self.module.run_command(cmd)
        if rc != 0 and not kwargs.get("ignore_errors"):
            result = dict(kwargs.get("result") or {}, changed=True, rc=rc, stdout=out, stderr=err)
            self.module.fail_json(
                msg="systemctl {} failed (exit code {}): {}. {}".format(
                    " ".join(args), rc, (err.strip() or out.strip() or "(no output)"), kwargs.get("hint", "")
                ).strip(),
                **result,
            )
        return rc

    # ------------------------------------------------------------------ diff

    def add_diff(self, path, kind, before, after):
        if not self.module._diff:
            return
        if kind in SECRET_KINDS:
            entry = {
                "before_header": path,
                "after_header": path,
                "before": "" if before is None else SECRET_TEXT,
                "after": "" if after is None else SECRET_CHANGED_TEXT,
            }
        else:
            entry = {
                "before_header": path,
                "after_header": path,
                # A unit's text may still carry a key (--api-key in extra arguments, an
                # Environment= line): the collection's one redaction hides it.
                "before": "" if before is None else redact(before.decode("utf-8", "replace")),
                "after": "" if after is None else redact(after.decode("utf-8", "replace")),
            }
        self.diffs.append(entry)

    def exit(self, **result):
        if self.module._diff:
            result["diff"] = self.diffs
        self.module.exit_json(**result)

    # ------------------------------------------------------------------ store

    def read_marker(self, path):
        data = read_bytes(path)
        if data is None:
            return None
        try:
            value = json.loads(data.decode("utf-8", "replace") or "null")
        except ValueError:
            return {"unreadable": True}
        return value if isinstance(value, dict) else {"content": value}

    def write_marker(self, path, content):
        if not self.check_mode:
            data = (json.dumps(content, indent=2, sort_keys=True) + "\n").encode("utf-8")
            atomic_write(path, data, 0o600)

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
        """The manifest, checked: readable, well formed, its own checksum right (when it has one)."""
        data = read_bytes(self.manifest_path)
        if data is None:
            self.module.fail_json(
                msg=f"There is no snapshot of {self.unit} in {self.store} ({self.manifest_path} does not exist "
                "or cannot be read): nothing to restore or compare. A deploy with ddtree.sglang.ddtree_deploy "
                "writes it before switching the unit.",
                manifest=self.manifest_path,
            )
        manifest = None
        try:
            manifest = json.loads(data.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            problem = f"is not valid JSON ({exc})"
        else:
            problem = self.manifest_problem(manifest)
        if problem:
            self.module.fail_json(
                msg=f"The snapshot manifest {self.manifest_path} {problem}: the snapshot of {self.unit} is refused "
                "and nothing was changed. Take a new snapshot of a unit known to serve, or restore the store "
                "from a backup.",
                manifest=self.manifest_path,
            )
        return manifest

    @staticmethod
    def manifest_problem(manifest):
        if not isinstance(manifest, dict):
            return "does not hold a JSON object"
        if "checksum" in manifest and manifest["checksum"] != manifest_checksum(manifest):
            return "does not match its own checksum (edited or damaged)"
        files = manifest.get("files")
        if not isinstance(files, list):
            return "has no list of files"
        for entry in files:
            if not isinstance(entry, dict) or not all(
                isinstance(entry.get(key), str) and entry.get(key) for key in ("path", "stored", "sha256", "mode")
            ):
                return "has a file entry without path, stored, sha256 and mode"
        if not any(entry.get("kind") == "unit" for entry in files):
            return "lists no unit file"
        return None

    def damaged(self, manifest):
        """Stored copies that are missing, outside the store, or differ from their recorded sha256."""
        bad = []
        for entry in manifest["files"]:
            path = self.stored_path(entry)
            data = read_bytes(path) if path else None
            if data is None or sha256_bytes(data) != entry["sha256"]:
                bad.append(path or entry["stored"])
        return bad

    @staticmethod
    def wanted_systemd(manifest):
        """What systemd must load after a restore; store.yml's first manifests lack it (no ExecStart)."""
        recorded = manifest.get("systemd")
        if isinstance(recorded, dict):
            return {
                "fragment_path": recorded.get("fragment_path") or "",
                "dropin_paths": list(recorded.get("dropin_paths") or []),
                "exec_start": recorded.get("exec_start"),
            }
        files = manifest["files"]
        return {
            "fragment_path": next(e["path"] for e in files if e.get("kind") == "unit"),
            "dropin_paths": [e["path"] for e in files if e.get("kind") == "dropin"],
            "exec_start": None,
        }

    @staticmethod
    def summary(manifest):
        return {
            "enabled": as_bool(manifest.get("enabled")),
            "active": as_bool(manifest.get("active")),
            "files": [entry["path"] for entry in manifest["files"]],
        }

    def etc_files(self):
        """What /etc/systemd/system holds for the unit: its unit file and drop-ins (links too)."""
        found = []
        path = os.path.join(SYSTEMD_ETC, self.unit)
        if os.path.lexists(path):
            found.append(path)
        found.extend(sorted(glob.glob(os.path.join(SYSTEMD_ETC, self.unit + ".d", "*.conf"))))
        return found

    # ------------------------------------------------------------------ read

    def read(self):
        result = {"changed": False, "unit": self.read_unit()}
        if self.store:
            result["manifest"] = self.manifest_path
            result["store"] = {
                "manifest": os.path.exists(self.manifest_path),
                "in_progress": self.read_marker(self.in_progress_path),
                "candidate": self.read_marker(self.candidate_path),
            }
        self.exit(**result)

    # ------------------------------------------------------------------ snapshot

    def describe_files(self, unit):
        """Manifest entries (and contents) of the unit's files, in store.yml's order and naming."""
        paths = [unit["fragment"]] + unit["dropins"] + unit["env_files"] + unit["credential_files"]
        entries = []
        for index, path in enumerate(paths):
            # An optional environment file (EnvironmentFile=-...) that does not exist; nothing
            # but regular files is stored (a restore writes them back through a rename).
            data = read_bytes(path) if os.path.isfile(path) else None
            if data is None:
                continue
            info = os.stat(path)
            if index == 0:
                kind = "unit"
            elif path in unit["dropins"]:
                kind = "dropin"
            elif path in unit["credential_files"]:
                kind = "credential"
            else:
                kind = "env"
            entry = {
                "path": path,
                "kind": kind,
                "stored": f"files/{index:02d}-{os.path.basename(path)}",
                "sha256": sha256_bytes(data),
                "mode": mode_text(info.st_mode),
                "owner": owner_name(info.st_uid),
                "group": group_name(info.st_gid),
            }
            entries.append((entry, data))
        return entries

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
        if in_progress is not None and os.path.lexists(self.in_progress_path):
            self.module.fail_json(
                msg=f"An earlier deploy of {self.unit} was interrupted after switching the unit and before proving "
                f"it ({self.in_progress_path} exists, holding {json.dumps(self.read_marker(self.in_progress_path))}). "
                "The running unit is unproved, so it is not snapshotted; nothing was written. Restore the "
                "last-known-good unit first: ansible-playbook ddtree.sglang.rollback -l <host>",
                **result,
            )
        unit = self.read_unit()
        result["unit"] = unit
        if not unit["exists"]:
            result["msg"] = f"{self.unit} does not exist: there is nothing to snapshot, and no marker was written."
            self.exit(**result)

        if in_progress is not None and os.path.exists(self.candidate_path):
            # A candidate deployed with ddtree_deploy_promote false was never made last-known-good:
            # the store keeps the promoted unit, which a failure of this deploy restores.
            result["kept_promoted"] = True
        else:
            self.store_unit(unit, result)
            result["snapshotted"] = True

        if in_progress is not None:
            self.write_marker(self.in_progress_path, in_progress)
            result["in_progress_marked"] = True
        else:
            # The stored unit is proved: an interrupted deploy is over, a candidate is promoted.
            self.remove(self.in_progress_path)  # this run's own bookkeeping: not a change
            if self.remove(self.candidate_path):
                result["changed"] = True
        result["msg"] = self.snapshot_message(result)
        self.exit(**result)

    def snapshot_message(self, result):
        if result["kept_promoted"]:
            return (
                f"{self.unit}: a candidate awaits promotion ({self.candidate_path}); the store keeps the promoted "
                "snapshot, which a rollback restores."
            )
        if result["changed"]:
            return f"{self.unit} stored in {self.store} ({len(result['files_written'])} file(s) written)."
        return f"{self.unit}: the store in {self.store} already equals the unit."

    def store_unit(self, unit, result):
        old = None
        old_bytes = read_bytes(self.manifest_path)
        if old_bytes is not None:
            try:
                old = json.loads(old_bytes.decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                old = None
        old_by_path = {}
        if isinstance(old, dict) and isinstance(old.get("files"), list):
            old_by_path = {e.get("path"): e for e in old["files"] if isinstance(e, dict)}

        for directory in (self.store, os.path.join(self.store, "files")):
            if self.ensure_dir(directory):
                result["changed"] = True

        entries = self.describe_files(unit)
        for entry, data in entries:
            dest = os.path.join(self.store, entry["stored"])
            current = read_bytes(dest)
            if current == data and stat.S_IMODE(os.stat(dest).st_mode) == 0o600:
                continue
            result["files_written"].append(entry["path"])
            result["changed"] = True
            old_entry = old_by_path.get(entry["path"])
            before = read_bytes(os.path.join(self.store, old_entry["stored"])) if old_entry else None
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

        manifest = {
            "version": MANIFEST_VERSION,
            "service": self.service,
            "enabled": unit["enabled"],
            "active": unit["active"],
            "files": [entry for entry, dummy in entries],
            # What systemd loaded for the unit when it was snapshotted: a restore starts the unit
            # only when systemd loads the same again.
            "systemd": {
                "fragment_path": unit["fragment"],
                "dropin_paths": unit["dropins"],
                "exec_start": unit["exec_start"],
            },
        }
        manifest["checksum"] = manifest_checksum(manifest)
        data = (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode("utf-8")
        # Written last: a snapshot cut short has the old manifest, whose checksums the new copies
        # do not match, and a restore refuses it.
        if data != old_bytes:
            result["changed"] = True
            if not self.check_mode:
                atomic_write(self.manifest_path, data, 0o600)

    # ------------------------------------------------------------------ candidate

    def candidate(self):
        unit = self.read_unit()
        result = {"changed": False, "manifest": self.manifest_path, "unit": unit, "candidate_marked": False}
        if os.path.exists(self.manifest_path):
            content = dict(self.params["candidate"], exec_start=unit["exec_start"])
            data = (json.dumps(content, indent=2, sort_keys=True) + "\n").encode("utf-8")
            if read_bytes(self.candidate_path) != data:
                result["changed"] = True
                self.write_marker(self.candidate_path, content)
            result["candidate_marked"] = True
            result["msg"] = (
                f"{self.unit} is a proved candidate awaiting promotion ({self.candidate_path}); the last-known-good "
                f"in {self.store} is unchanged."
            )
        else:
            result["msg"] = f"{self.unit}: no snapshot in {self.store}, so no candidate to note."
        self.remove(self.in_progress_path)  # this run's own bookkeeping: not a change
        self.exit(**result)

    # ------------------------------------------------------------------ restored

    def file_differs(self, entry):
        """Why the live file differs from the snapshot's entry ("content", "owner", "mode"), or None."""
        try:
            info = os.lstat(entry["path"])
        except OSError:
            return "missing"
        if not stat.S_ISREG(info.st_mode):
            return "not a regular file"
        data = read_bytes(entry["path"])
        if data is None or sha256_bytes(data) != entry["sha256"]:
            return "content"
        if owner_name(info.st_uid) != entry.get("owner", owner_name(info.st_uid)) or group_name(
            info.st_gid
        ) != entry.get("group", group_name(info.st_gid)):
            return "owner"
        if mode_text(info.st_mode) != format(int(entry["mode"], 8), "04o"):
            return "mode"
        return None

    def ids(self, entry):
        """uid and gid of an entry's owner and group, by name (numeric ids as they are)."""
        try:
            owner = entry.get("owner")
            group = entry.get("group")
            uid = pwd.getpwnam(owner).pw_uid if owner and not owner.isdigit() else int(owner or os.getuid())
            gid = grp.getgrnam(group).gr_gid if group and not group.isdigit() else int(group or os.getgid())
        except KeyError:
            self.module.fail_json(
                msg=f"The snapshot records {entry['path']} as owned by {entry.get('owner')}:{entry.get('group')}, "
                "which this host does not know. Create that user and group (the sglang role does), then restore "
                "again; nothing was changed.",
            )
        return uid, gid

    def restored(self):
        manifest = self.load_manifest()
        summary = self.summary(manifest)
        bad = self.damaged(manifest)
        if bad:
            self.module.fail_json(
                msg=f"The snapshot copies {', '.join(bad)} are missing or do not match the sha256 recorded in "
                f"{self.manifest_path}; the snapshot of {self.unit} cannot be restored byte for byte. Nothing "
                "was changed.",
                changed=False,
                damaged=bad,
                snapshot=summary,
                manifest=self.manifest_path,
            )
        want = self.wanted_systemd(manifest)
        before = self.read_unit(with_credentials=False)
        files = manifest["files"]
        kept_paths = {entry["path"] for entry in files}
        to_restore = [entry for entry in files if self.file_differs(entry)]
        to_remove = [path for path in self.etc_files() if path not in kept_paths]
        ids = {entry["path"]: self.ids(entry) for entry in to_restore}
        files_changed = bool(to_restore or to_remove)
        reload = files_changed or before["need_daemon_reload"]
        enablement = files_changed or before["enabled"] != summary["enabled"]
        if summary["active"]:
            # Issue 24: a unit that already is the snapshot and runs is left running.
            action = "restart" if reload or before["active_state"] != "active" else None
        else:
            action = "stop" if before["active_state"] not in ("inactive", "failed", "") else None

        result = {
            "changed": bool(reload or enablement or action),
            "manifest": self.manifest_path,
            "snapshot": summary,
            "files_restored": [entry["path"] for entry in to_restore],
            "files_removed": to_remove,
            "restarted": action == "restart",
            "restart_started_at": None,
            "unit": before,
        }
        for entry in to_restore:
            current = read_bytes(entry["path"]) if os.path.isfile(entry["path"]) else None
            stored = read_bytes(self.stored_path(entry))
            if current != stored:
                self.add_diff(entry["path"], entry.get("kind"), current, stored)
        for path in to_remove:
            self.add_diff(path, "unit", read_bytes(path) if os.path.isfile(path) else b"", None)
        if self.check_mode:
            result["msg"] = self.restore_message(result, action, check=True)
            self.exit(**result)

        for entry in to_restore:
            os.makedirs(os.path.dirname(entry["path"]), exist_ok=True)
            uid, gid = ids[entry["path"]]
            atomic_write(entry["path"], read_bytes(self.stored_path(entry)), int(entry["mode"], 8), uid, gid)
        for path in to_remove:
            os.unlink(path)
        if reload:
            self.systemctl_run("daemon-reload", result=result)
        if enablement:
            # reenable also drops an [Install] link left pointing at a removed /etc copy.
            self.systemctl_run("--quiet", "reenable" if summary["enabled"] else "disable", self.unit, result=result)

        # Checked before starting anything: a unit that is not byte for byte the snapshot, or that
        # systemd does not load as it loaded the snapshot, is not started.
        after = self.read_unit()
        result["unit"] = after
        problems = self.systemd_differences(after, want)
        problems += [
            f"{entry['path']} differs from the snapshot (sha256)" for entry in files if self.sum_differs(entry)
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
        # The last-known-good is what runs (or is stopped as it was): nothing is in progress,
        # and a candidate that awaited promotion is gone. A caller that proves the restored service
        # first (ddtree_deploy) keeps the marks until it has: a restored unit that does not come up
        # leaves the host for rollback.yml to finish.
        if not self.module.params["keep_markers"]:
            self.remove(self.in_progress_path)
            self.remove(self.candidate_path)
        result["msg"] = self.restore_message(result, action)
        self.exit(**result)

    def sum_differs(self, entry):
        data = read_bytes(entry["path"])
        return data is None or sha256_bytes(data) != entry["sha256"]

    @staticmethod
    def systemd_differences(unit, want):
        problems = []
        if unit["fragment"] != want["fragment_path"]:
            problems.append(
                f"FragmentPath is {unit['fragment'] or 'none'}, the snapshot's was {want['fragment_path'] or 'none'}"
            )
        if unit["dropins"] != want["dropin_paths"]:
            problems.append(
                "DropInPaths are {}, the snapshot's were {}".format(
                    " ".join(unit["dropins"]) or "none", " ".join(want["dropin_paths"]) or "none"
                )
            )
        if want["exec_start"] is not None and unit["exec_start"] != want["exec_start"]:
            problems.append(
                "ExecStart is {}, the snapshot's was {}".format(
                    " ".join(unit["exec_start"]) or "none", " ".join(want["exec_start"]) or "none"
                )
            )
        return problems

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
        summary = self.summary(manifest)
        differences = [f"stored copy {path} is missing or damaged" for path in self.damaged(manifest)]
        kept_paths = set()
        for entry in manifest["files"]:
            kept_paths.add(entry["path"])
            why = self.file_differs(entry)
            if why:
                differences.append(
                    f"{entry['path']} is missing"
                    if why == "missing"
                    else f"{entry['path']} differs from the snapshot ({why})"
                )
        differences += [
            f"{path} is not in the snapshot (a restore removes it)"
            for path in self.etc_files()
            if path not in kept_paths
        ]
        unit = self.read_unit()
        differences += self.systemd_differences(unit, self.wanted_systemd(manifest))
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

    # ------------------------------------------------------------------ cleared

    def cleared(self):
        paths = {"in_progress": self.in_progress_path, "candidate": self.candidate_path}
        cleared = [mark for mark in self.params["marks"] if self.remove(paths[mark])]
        self.exit(
            changed=bool(cleared),
            manifest=self.manifest_path,
            cleared=cleared,
            msg=f"{self.unit}: cleared {', '.join(cleared)} in {self.store}."
            if cleared
            else f"{self.unit}: no mark to clear in {self.store}.",
        )

    def run(self):
        state = self.params["state"]
        if state != "read" and not self.store:
            self.module.fail_json(msg=f"state={state} needs store: the snapshot directory of {self.unit}.")
        getattr(self, state)()


def main():
    module = AnsibleModule(
        argument_spec=dict(
            name=dict(type="str", required=True, aliases=["service"]),
            state=dict(type="str", default="read", choices=STATES),
            store=dict(type="path"),
            in_progress=dict(type="dict"),
            candidate=dict(type="dict", default={}),
            keep_markers=dict(type="bool", default=False),
            marks=dict(
                type="list",
                elements="str",
                choices=["in_progress", "candidate"],
                default=["in_progress", "candidate"],
            ),
        ),
        supports_check_mode=True,
    )
    UnitSnapshot(module).run()


if __name__ == "__main__":
    main()
