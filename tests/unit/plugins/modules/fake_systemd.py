# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A fake systemd for module tests: one unit's files in a temporary directory tree, and the
systemctl commands the snapshot module runs (show, daemon-reload, reset-failed, reenable,
disable, restart, stop), each recorded in ``calls``.

It keeps what matters for a restore: systemd loads a unit's files at daemon-reload, not when
they change (``show`` reports the loaded definition and NeedDaemonReload=yes until a reload);
the fragment comes from /etc before /run before /usr/lib; a drop-in in /etc overrides one of the
same name in /usr/lib; ExecStart= and EnvironmentFile= lines of the fragment and drop-ins add up
(an empty ExecStart= resets the list).
"""

import os
from pathlib import Path


class FakeSystemd:
    def __init__(self, root, unit="sglang-qwen.service"):
        self.root = Path(root)
        self.unit = unit
        self.etc = self.root / "etc/systemd/system"
        self.run_dir = self.root / "run/systemd/system"
        self.vendor = self.root / "usr/lib/systemd/system"
        for directory in (self.etc, self.run_dir, self.vendor):
            directory.mkdir(parents=True, exist_ok=True)
        self.calls = []
        self.enabled = True
        self.active_state = "active"
        self.sub_state = "running"
        self.started_at = 1_000_000
        self.loaded = self.definition()
        self.fail = {}  # command -> (rc, stderr) to make a systemctl command fail

    # ---------------------------------------------------------------- files

    def write(self, path, text, mode=0o644):
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.chmod(path, mode)
        return path

    def definition(self):
        """What systemd would load from the files now."""
        fragment = None
        for directory in (self.etc, self.run_dir, self.vendor):
            if (directory / self.unit).exists():
                fragment = directory / self.unit
                break
        dropins = {}
        for directory in (self.vendor, self.run_dir, self.etc):  # later ones override same names
            for path in sorted((directory / (self.unit + ".d")).glob("*.conf")):
                dropins[path.name] = path
        dropin_paths = [dropins[name] for name in sorted(dropins)]
        exec_start, env_files = [], []
        for path in ([fragment] if fragment else []) + dropin_paths:
            for line in path.read_text().splitlines():
                key, dummy, value = line.partition("=")
                if key == "ExecStart":
                    exec_start = exec_start + [value] if value else []
                elif key == "EnvironmentFile":
                    env_files.append(value)
        return {
            "fragment": str(fragment) if fragment else "",
            "dropins": [str(p) for p in dropin_paths],
            "exec_start": exec_start,
            "env_files": env_files,
            "texts": [p.read_text() for p in ([fragment] if fragment else []) + dropin_paths],
        }

    # ---------------------------------------------------------------- systemctl

    def show(self):
        loaded = self.loaded
        lines = [
            "LoadState=" + ("loaded" if loaded["fragment"] else "not-found"),
            "FragmentPath=" + loaded["fragment"],
            "DropInPaths=" + " ".join(loaded["dropins"]),
            "UnitFileState=" + ("enabled" if self.enabled else "disabled"),
            "ActiveState=" + self.active_state,
            "SubState=" + self.sub_state,
            f"ExecMainStartTimestampMonotonic={self.started_at}",
            "NeedDaemonReload=" + ("yes" if self.definition() != loaded else "no"),
        ]
        for value in loaded["env_files"]:
            optional = value.startswith("-")
            lines.append(f"EnvironmentFiles={value.lstrip('-')} (ignore_errors={'yes' if optional else 'no'})")
        for command in loaded["exec_start"]:
            argv0 = command.split()[0]
            lines.append(
                f"ExecStart={{ path={argv0} ; argv[]={command} ; ignore_errors=no ; "
                f"start_time=[Fri 2026-12-04 18:00:0{self.started_at % 10} UTC] ; stop_time=[n/a] ; "
                f"pid={800 + self.started_at % 100} ; code=(null) ; status=0/0 }}"
            )
        return "\n".join(lines) + "\n"

    def run_command(self, cmd, *args, **kwargs):
        words = [w for w in cmd[1:] if w != "--quiet"]
        self.calls.append(words[0] if words[0] != "show" else "show")
        if words[0] in self.fail:
            rc, err = self.fail[words[0]]
            return rc, "", err
        verb = words[0]
        if verb == "show":
            assert words[1] == self.unit, words
            return 0, self.show(), ""
        if verb == "daemon-reload":
            self.loaded = self.definition()
        elif verb == "reset-failed":
            if self.active_state == "failed":
                self.active_state, self.sub_state = "inactive", "dead"
        elif verb in ("reenable", "enable"):
            self.enabled = True
        elif verb == "disable":
            self.enabled = False
        elif verb == "restart":
            self.started_at += 1
            self.active_state, self.sub_state = "active", "running"
        elif verb == "stop":
            self.active_state, self.sub_state = "inactive", "dead"
        else:
            raise AssertionError(f"unexpected systemctl command {cmd!r}")
        return 0, "", ""

    def commands(self):
        """The calls other than show, in order."""
        return [c for c in self.calls if c != "show"]
