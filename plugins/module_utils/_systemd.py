# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What systemd says about a unit: ``systemctl show`` parsed in one place.

API (used by the sglang_wait and systemd_unit_snapshot modules)::

    unit_name("sglang-qwen")            # "sglang-qwen.service"
    text = show(module, systemctl, "sglang-qwen.service", ["ActiveState", ...])
    props = parse_properties(text)      # {"ExecStart": ["{ path=... }", ...], "ActiveState": ["active"]}
    parse_show(text)                    # sglang_wait's typed dict (WAIT_PROPERTIES)
    unit_info(props, credential_files)  # the snapshot's view: fragment, dropins, env_files, ...
    credential_files(texts)             # LoadCredential= paths named in the unit's files

``systemctl show`` prints one ``Key=value`` line per property; some keys repeat (one
``ExecStart=`` per command, one ``EnvironmentFiles=`` per file), so ``parse_properties`` keeps
every value in order. Nothing here runs anything but ``systemctl show``.
"""

from __future__ import absolute_import, division, print_function

import re

# systemctl show properties sglang_wait reads at each poll, and the key each gets in its result.
WAIT_PROPERTIES = {
    "LoadState": "load_state",
    "ActiveState": "active_state",
    "SubState": "sub_state",
    "Result": "result",
    "ExecMainStatus": "exec_main_status",
    "ExecMainCode": "exec_main_code",
    "NRestarts": "n_restarts",
    "InvocationID": "invocation_id",
    "MainPID": "main_pid",
    "ActiveEnterTimestamp": "active_enter_timestamp",
    "ExecMainStartTimestamp": "exec_main_start_timestamp",
    "ExecMainExitTimestamp": "exec_main_exit_timestamp",
    "ExecMainExitTimestampMonotonic": "exec_main_exit_monotonic",
}
_WAIT_INT_KEYS = ("exec_main_status", "exec_main_code", "n_restarts", "main_pid")

# What the snapshot needs to know about a unit (unit_info()).
UNIT_PROPERTIES = (
    "LoadState",
    "FragmentPath",
    "DropInPaths",
    "EnvironmentFiles",
    "UnitFileState",
    "ActiveState",
    "SubState",
    "ExecMainStartTimestampMonotonic",
    "ExecStart",
    "NeedDaemonReload",
)

# ActiveState values that count as "running" (a restore starts such a unit again).
ACTIVE_STATES = ("active", "activating", "reloading")
# UnitFileState values that count as "enabled" (a restore reenables such a unit).
ENABLED_STATES = ("enabled", "enabled-runtime")

# An ExecStart= value is "{ path=... ; argv[]=... ; ignore_errors=no ; start_time=[...] ;
# stop_time=[...] ; pid=... ; code=... ; status=... }": everything from start_time on changes at
# every start, what comes before is what the unit file says.
_EXEC_START_RUNTIME = re.compile(r"^(.*?) ; start_time=.*$")
# "EnvironmentFiles=/etc/default/x (ignore_errors=no)", one line per file; a "-" prefix (file may
# be missing) shows in some systemd versions.
_ENV_FILE = re.compile(r"^-?(\S+)")
# LoadCredential=NAME:/path and LoadCredentialEncrypted=NAME:/path with an absolute path (a bare
# name is systemd's credential store, not a file of the unit). systemd 252 shows these properties
# as "[unprintable]" in systemctl show, so they are read from the unit's own files.
_CREDENTIAL = re.compile(r"^\s*LoadCredential(?:Encrypted)?=[^:\s]+:(/\S+)", re.MULTILINE)
# SGLang's option: the field speculative_algorithm (sglang/srt/arg_groups/field_order.py:264 of
# 0.5.23) becomes --speculative-algorithm (sglang/srt/arg_groups/arg_utils.py:288-290,
# "--" + name.replace("_", "-")), as its own fixtures pass it
# (sglang/test/server_fixtures/spec_eagle_fixture.py:92). Given as "--opt value" or "--opt=value".
_ALGORITHM = re.compile(r"--speculative-algorithm[ =](\S+)")


def unit_name(name):
    """A unit name as systemctl takes it: "sglang-qwen" becomes "sglang-qwen.service"."""
    return name if "." in name else name + ".service"


def show(module, systemctl, unit, properties):
    """Run ``systemctl show UNIT --property=...`` through module.run_command; fail the module on error."""
    cmd = [systemctl, "show", unit, "--property=" + ",".join(properties)]
    rc, out, err = module.run_command(cmd)
    if rc != 0:
        module.fail_json(msg=f"systemctl show {unit} failed: {err.strip() or out.strip()}")
    return out


def parse_properties(text):
    """``Key=value`` lines into {key: [value, ...]} (values in order; keys that repeat keep all)."""
    props = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key and " " not in key:
            props.setdefault(key, []).append(value)
    return props


def first(props, key, default=""):
    """The first value of a property, or ``default`` when systemd did not print it."""
    values = props.get(key)
    return values[0] if values else default


def parse_show(text):
    """Parse ``systemctl show -p <WAIT_PROPERTIES>`` output into sglang_wait's unit dict (typed values)."""
    props = parse_properties(text)
    unit = {}
    for name, key in WAIT_PROPERTIES.items():
        value = first(props, name).strip()
        if key in _WAIT_INT_KEYS:
            unit[key] = int(value) if value.lstrip("-").isdigit() else 0
        elif key == "exec_main_exit_monotonic":
            # microseconds since boot; 0 means the main process has not exited yet
            unit[key] = int(value) / 1e6 if value.isdigit() and int(value) > 0 else None
        else:
            unit[key] = value
    return unit


def exec_start_static(value):
    """An ExecStart= value without its runtime fields: "{ path=... ; argv[]=... ; ignore_errors=no }"."""
    match = _EXEC_START_RUNTIME.match(value)
    return match.group(1) + " }" if match else value


def env_file_path(value):
    """The path of one EnvironmentFiles= value ("/etc/default/x (ignore_errors=no)")."""
    match = _ENV_FILE.match(value.strip())
    return match.group(1) if match else ""


def speculative_algorithm(exec_start):
    """The speculative algorithm an ExecStart names, upper case (NEXTN, DDTREE), or "NONE"."""
    match = _ALGORITHM.search(exec_start or "")
    return match.group(1).upper() if match else "NONE"


def credential_files(texts):
    """Absolute paths named by LoadCredential(Encrypted)= in the given unit file texts, in order, once each."""
    found = []
    for text in texts:
        for path in _CREDENTIAL.findall(text):
            if path not in found:
                found.append(path)
    return found


def unit_files(props):
    """The files systemd loaded the unit from: FragmentPath first, then the drop-ins."""
    fragment = first(props, "FragmentPath")
    return ([fragment] if fragment else []) + first(props, "DropInPaths").split()


def unit_info(props, credentials=()):
    """The snapshot's view of a unit from parse_properties() output (and its credential files).

    The keys are the ones roles/ddtree_deploy used for ``__ddtree_deploy_unit``.
    """
    load_state = first(props, "LoadState")
    fragment = first(props, "FragmentPath")
    active_state = first(props, "ActiveState")
    exec_starts = props.get("ExecStart", [])
    return {
        # A masked unit (LoadState=masked, FragmentPath=/dev/null) has no file to keep or restore.
        "exists": load_state not in ("not-found", "masked", "") and bool(fragment) and fragment != "/dev/null",
        "fragment": fragment,
        "dropins": first(props, "DropInPaths").split(),
        "env_files": [p for p in (env_file_path(v) for v in props.get("EnvironmentFiles", [])) if p],
        "credential_files": list(credentials),
        "enabled": first(props, "UnitFileState") in ENABLED_STATES,
        "active": active_state in ACTIVE_STATES,
        "active_state": active_state,
        # As systemctl status says it, e.g. "active (running)", "failed (failed)".
        "systemd_state": "{} ({})".format(active_state or "unknown", first(props, "SubState") or "unknown"),
        # Changes whenever systemd (re)starts the main process: tells a restart from none.
        "started_at": first(props, "ExecMainStartTimestampMonotonic", "0") or "0",
        "exec_start": [exec_start_static(v) for v in exec_starts],
        # For the messages: which speculative algorithm the unit runs (NEXTN, DDTREE, NONE).
        "algorithm": speculative_algorithm(" ".join(exec_starts)),
        "need_daemon_reload": first(props, "NeedDaemonReload") == "yes",
    }
