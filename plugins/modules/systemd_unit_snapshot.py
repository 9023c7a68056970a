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
  - What is copied is what systemd itself uses for the unit (C(FragmentPath), C(DropInPaths),
    C(EnvironmentFiles)), plus the files its C(LoadCredential=) and C(LoadCredentialEncrypted=) lines
    name with an absolute path (read from the unit's files, as systemd 252 shows them as C([unprintable])).
  - The store holds C(files/) (copies, mode 0600) and C(manifest.json), written last and atomically,
    with the sha256, owner, group and mode of every file, the unit's enabled and active state, what
    systemd loaded (C(FragmentPath), C(DropInPaths), the static C(ExecStart)) and its own sha256.
  - The store holds two marks, which only this module reads and writes. C(in_progress) is there while a
    deploy has switched the unit and not yet proved or restored it. C(candidate) is there while a proved
    deploy made with C(ddtree_deploy_promote=false) awaits promotion; the store then keeps the promoted unit.
  - It does not wait for the server to be ready; P(ddtree.sglang.sglang_wait#module) does that.
author:
  - ddtree.sglang developers (@ddtree)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details:
      - Every state reports what it would change and changes nothing; O(state=restored) still refuses a
        damaged snapshot and says in RV(restarted) whether it would restart the unit.
  diff_mode:
    support: full
    details:
      - The before and after text of the unit file and drop-ins that change. For environment and
        credential files (API keys) only that the content differs, never the content.
  platform:
    platforms: posix
    details: Needs systemd (C(systemctl)) on the managed host, and root to write the unit's files.
options:
  name:
    description: The systemd unit, with or without the C(.service) suffix.
    type: str
    required: true
    aliases: [service]
  state:
    description:
      - C(read) reads systemd's view of the unit (RV(unit)) and, with O(store), the store's marks (RV(store)).
      - C(snapshot) copies the unit's files into O(store) where they differ, removes stale copies and writes
        the manifest. With O(in_progress) it also writes the C(in_progress) mark, and fails writing nothing
        when that mark is there already (an earlier deploy was interrupted); a C(candidate) mark then keeps
        the promoted snapshot (RV(kept_promoted)). With O(in_progress) null the unit is proved; it is stored
        and both marks are removed. A unit that does not exist is not stored.
      - C(candidate) writes the C(candidate) mark (O(candidate) and the unit's static C(ExecStart)) and
        removes the C(in_progress) mark; the snapshot stays. Without a snapshot only the latter is done.
      - C(restored) refuses a damaged snapshot, touching nothing; puts back each file that differs (content,
        owner, group, mode) through a rename; removes what C(/etc/systemd/system) holds for the unit that the
        snapshot lacks; reloads systemd when needed; enables or disables the unit as it was. When systemd then
        loads anything but the snapshot's C(FragmentPath), C(DropInPaths) and C(ExecStart) it fails without
        starting the unit; else it restarts the unit if it was active (after C(reset-failed)) or stops it. A
        unit that already is the snapshot and runs is not restarted. On success both marks are removed
        unless O(keep_markers).
      - C(verified) compares the live unit with the snapshot (RV(matches), RV(differences)).
      - C(cleared) removes the marks O(marks) names (RV(cleared)) and nothing else.
    type: str
    choices: [read, snapshot, candidate, restored, verified, cleared]
    default: read
  store:
    description:
      - The unit's store directory, e.g. C(/var/lib/ddtree-sglang/last-known-good/sglang-qwen). Required unless
        O(state=read). Created with mode 0700 (its parent 0755) by O(state=snapshot).
    type: path
  in_progress:
    description:
      - With O(state=snapshot), the content of the C(in_progress) mark (for example the deploy's run id and
        profile), or null when the unit being stored is proved.
    type: dict
  keep_markers:
    description:
      - With O(state=restored), leave both marks; the caller clears them (O(state=cleared)) once it has
        proved the restored service.
    type: bool
    default: false
  candidate:
    description: With O(state=candidate), the content of the C(candidate) mark (for example run id and profile).
    type: dict
    default: {}
  marks:
    description: With O(state=cleared), the marks to remove.
    type: list
    elements: str
    choices: [in_progress, candidate]
    default: [in_progress, candidate]
notes:
  - Only C(/etc/systemd/system) is cleaned by a restore. A unit file or drop-in under C(/run/systemd) or
    C(/usr/lib/systemd) that the snapshot lacks makes the restore fail before the start, naming what
    systemd loads.
seealso:
  - module: ddtree.sglang.sglang_wait
  - module: ansible.builtin.systemd_service
"""

EXAMPLES = r"""
- name: Keep the running unit as last-known-good and mark a deploy in progress
  ddtree.sglang.systemd_unit_snapshot:
    name: sglang-qwen
    state: snapshot
    store: /var/lib/ddtree-sglang/last-known-good/sglang-qwen
    in_progress: {run_id: "20261204T180000", profile: ddtree}

- name: Is a deploy in progress, or a candidate awaiting promotion? (store.in_progress, store.candidate)
  ddtree.sglang.systemd_unit_snapshot:
    name: sglang-qwen
    store: /var/lib/ddtree-sglang/last-known-good/sglang-qwen
  register: unit_state

- name: Put the last-known-good unit back (restarts it only if something changed), keeping the marks
  ddtree.sglang.systemd_unit_snapshot:
    name: sglang-qwen
    state: restored
    store: /var/lib/ddtree-sglang/last-known-good/sglang-qwen
    keep_markers: true

- name: The restored unit is proved - nothing is in progress, no candidate awaits promotion
  ddtree.sglang.systemd_unit_snapshot:
    name: sglang-qwen
    state: cleared
    store: /var/lib/ddtree-sglang/last-known-good/sglang-qwen
    marks: [in_progress, candidate]
"""

RETURN = r"""
unit:
  description: systemd's view of the unit (after a restore, for O(state=restored)).
  returned: always
  type: dict
  contains:
    exists: {description: "systemd has the unit (a C(FragmentPath); not C(not-found), not masked).", type: bool}
    fragment: {description: "C(FragmentPath).", type: str}
    dropins: {description: "C(DropInPaths) in systemd's order.", type: list, elements: str}
    env_files: {description: "C(EnvironmentFiles) paths (optional ones too).", type: list, elements: str}
    credential_files: {description: "Absolute paths of C(LoadCredential=) lines.", type: list, elements: str}
    enabled: {description: "C(UnitFileState) is C(enabled) or C(enabled-runtime).", type: bool}
    active: {description: "C(ActiveState) is C(active), C(activating) or C(reloading).", type: bool}
    active_state: {description: "C(ActiveState).", type: str}
    systemd_state: {description: "C(ActiveState (SubState)), as C(systemctl status) shows it.", type: str}
    started_at: {description: "C(ExecMainStartTimestampMonotonic); changes at every start.", type: str}
    exec_start: {description: "Each C(ExecStart=) without what changes at every start.", type: list, elements: str}
    algorithm: {description: "The unit's C(--speculative-algorithm), upper case, or C(NONE).", type: str}
    need_daemon_reload: {description: "systemd's C(NeedDaemonReload).", type: bool}
  sample:
    exists: true
    fragment: /etc/systemd/system/sglang-qwen.service
    dropins: []
    env_files: [/etc/default/sglang-qwen]
    credential_files: [/etc/ddtree-sglang/sglang-qwen.key]
    enabled: true
    active: true
    active_state: active
    systemd_state: active (running)
    started_at: "595590662"
    exec_start: ["{ path=/opt/sglang/bin/python ; argv[]=/opt/sglang/bin/python -m sglang.launch_server ... }"]
    algorithm: NEXTN
    need_daemon_reload: false
store:
  description: Whether the store holds a snapshot, and its marks.
  returned: when O(state=read) and O(store) is given
  type: dict
  contains:
    manifest: {description: "Whether the store holds a snapshot (its manifest).", type: bool}
    in_progress:
      description: The C(in_progress) mark (the run id and profile of the deploy that switched the unit), or null.
      type: dict
    candidate: {description: "The C(candidate) mark (run id, profile, C(exec_start)) or null.", type: dict}
  sample: {manifest: true, in_progress: null, candidate: {run_id: "20261204T180000", profile: ddtree, exec_start: []}}
snapshotted:
  description: The store holds the unit as it is now (false for a missing unit, or when the promoted one was kept).
  returned: when O(state=snapshot)
  type: bool
kept_promoted:
  description: The store kept the promoted snapshot because a candidate awaits promotion.
  returned: when O(state=snapshot)
  type: bool
in_progress_marked:
  description: Whether the C(in_progress) mark was written (or would be, in check mode).
  returned: when O(state=snapshot)
  type: bool
candidate_marked:
  description: Whether the C(candidate) mark was written (false when the store holds no snapshot).
  returned: when O(state=candidate)
  type: bool
cleared:
  description: The marks that were there and were removed (or would be, in check mode).
  returned: when O(state=cleared)
  type: list
  elements: str
  sample: [in_progress]
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
  description: O(state=restored) the files removed from C(/etc/systemd/system); O(state=snapshot) stale stored copies.
  returned: when O(state) is C(snapshot) or C(restored)
  type: list
  elements: str
restarted:
  description: Whether the unit was restarted (in check mode, whether it would be).
  returned: when O(state=restored)
  type: bool
restart_started_at:
  description: Unix time right before the restart or stop was asked of systemd (downtime accounting), or null.
  returned: when O(state=restored)
  type: float
  sample: 1796400000.25
snapshot:
  description: What the snapshot records (C(enabled), C(active), C(files)).
  returned: when O(state) is C(restored) or C(verified)
  type: dict
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
  sample: ["/etc/systemd/system/sglang-qwen.service differs from the snapshot (content)"]
manifest:
  description: The path of the store's manifest.
  returned: when O(store) is given
  type: str
  sample: /var/lib/ddtree-sglang/last-known-good/sglang-qwen/manifest.json
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._unit_store import MARKS, STATES, UnitSnapshot  # noqa: E402


def main():
    module = AnsibleModule(
        argument_spec=dict(
            name=dict(type="str", required=True, aliases=["service"]),
            state=dict(type="str", default="read", choices=list(STATES)),
            store=dict(type="path"),
            in_progress=dict(type="dict"),
            candidate=dict(type="dict", default={}),
            keep_markers=dict(type="bool", default=False),
            marks=dict(type="list", elements="str", choices=list(MARKS), default=list(MARKS)),
        ),
        supports_check_mode=True,
    )
    UnitSnapshot(module).run()


if __name__ == "__main__":
    main()
