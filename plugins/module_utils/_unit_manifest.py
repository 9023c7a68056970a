# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The manifest of a unit's last-known-good store: what systemd_unit_snapshot keeps, checked.

A store holds ``files/`` (one copy of each file of the unit, mode 0600) and ``manifest.json``, which
lists each file (its path, kind, stored copy, sha256, owner, group and mode), the unit's enabled and
active state, what systemd loaded (``FragmentPath``, ``DropInPaths``, the static ``ExecStart``), and
a sha256 of its own content. Nothing here runs systemctl or writes a file (_unit_store.py does).
"""

from __future__ import absolute_import, division, print_function

import grp
import json
import os
import pwd
import stat

from ansible_collections.ddtree.sglang.plugins.module_utils._files import read_bytes, sha256_bytes

MANIFEST = "manifest.json"
# The only manifest this module writes and reads: the collection was never released with another.
MANIFEST_VERSION = 2
ENTRY_KEYS = ("path", "kind", "stored", "sha256", "mode", "owner", "group")


def manifest_checksum(manifest):
    """sha256 of the manifest's content without its own checksum, in one canonical JSON form."""
    body = {key: value for key, value in manifest.items() if key != "checksum"}
    return sha256_bytes(json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8"))


def build(service, unit, entries):
    """The manifest of ``unit`` (unit_info()) stored as ``entries`` (describe_files()), with its checksum."""
    manifest = {
        "version": MANIFEST_VERSION,
        "service": service,
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
    return manifest


def encode(content):
    """The bytes the store keeps for a manifest or a mark: sorted, indented JSON and a newline."""
    return (json.dumps(content, indent=2, sort_keys=True) + "\n").encode("utf-8")


def problem(manifest):
    """What is wrong with a parsed manifest, as the end of a sentence, or None."""
    if not isinstance(manifest, dict):
        return "does not hold a JSON object"
    if manifest.get("version") != MANIFEST_VERSION or "checksum" not in manifest:
        return f"is not a version {MANIFEST_VERSION} manifest with a checksum (this module did not write it)"
    if manifest["checksum"] != manifest_checksum(manifest):
        return "does not match its own checksum (edited or damaged)"
    files = manifest.get("files")
    if not isinstance(files, list) or not isinstance(manifest.get("systemd"), dict):
        return "has no list of files or no record of what systemd loaded"
    for entry in files:
        if not isinstance(entry, dict) or not all(isinstance(entry.get(key), str) and entry[key] for key in ENTRY_KEYS):
            return "has a file entry without " + ", ".join(ENTRY_KEYS)
    if not any(entry["kind"] == "unit" for entry in files):
        return "lists no unit file"
    return None


def wanted_systemd(manifest):
    """What systemd must load after a restore: the snapshot's FragmentPath, DropInPaths and ExecStart."""
    recorded = manifest["systemd"]
    return {
        "fragment_path": recorded.get("fragment_path") or "",
        "dropin_paths": list(recorded.get("dropin_paths") or []),
        "exec_start": list(recorded.get("exec_start") or []),
    }


def summary(manifest):
    """What the snapshot records, as the module returns it."""
    return {
        "enabled": bool(manifest.get("enabled")),
        "active": bool(manifest.get("active")),
        "files": [entry["path"] for entry in manifest["files"]],
    }


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


def describe_files(unit):
    """(entry, content) of each file of ``unit`` (unit_info()): the unit file, drop-ins, env and credential files.

    Stored names number the files in systemd's order. An optional environment file
    (EnvironmentFile=-...) that does not exist is left out; nothing but regular files is stored (a
    restore writes them back through a rename).
    """
    paths = [unit["fragment"]] + unit["dropins"] + unit["env_files"] + unit["credential_files"]
    entries = []
    for index, path in enumerate(paths):
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


def file_differs(entry):
    """Why the live file differs from the snapshot's entry ("missing", "content", "owner", "mode"), or None."""
    try:
        info = os.lstat(entry["path"])
    except OSError:
        return "missing"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    if content_differs(entry):
        return "content"
    if owner_name(info.st_uid) != entry["owner"] or group_name(info.st_gid) != entry["group"]:
        return "owner"
    if mode_text(info.st_mode) != entry["mode"]:
        return "mode"
    return None


def content_differs(entry):
    """Whether the live file's content is not the snapshot's (sha256), or cannot be read."""
    data = read_bytes(entry["path"])
    return data is None or sha256_bytes(data) != entry["sha256"]


def ids(entry):
    """uid and gid of an entry's owner and group, by name (numeric ids as they are); KeyError when unknown."""
    owner, group = entry["owner"], entry["group"]
    uid = int(owner) if owner.isdigit() else pwd.getpwnam(owner).pw_uid
    gid = int(group) if group.isdigit() else grp.getgrnam(group).gr_gid
    return uid, gid


def systemd_differences(unit, want):
    """How what systemd loads (unit_info()) differs from what the snapshot recorded, one sentence each."""
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
    if unit["exec_start"] != want["exec_start"]:
        problems.append(
            "ExecStart is {}, the snapshot's was {}".format(
                " ".join(unit["exec_start"]) or "none", " ".join(want["exec_start"]) or "none"
            )
        )
    return problems
