# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write a simulated GPU host's own files in one run (standard library only).

The molecule harness (extensions/molecule/shared/prepare_gpu_host.yml, deploy_prepare.yml) gives
each test host a handful of small files: the stand-in nvidia-smi, the GPU set it reports, the
simulator's behaviour, the models' config.json. One Ansible task per file cost a module run (two
for a copy) per file and host, the most of a 15-host prepare's CPU on two cores; this writes them
all from one JSON document on stdin:

    {"files": [{"path": "/etc/ddtree-sim/gpus.json", "content": "...", "mode": "0644"},
               {"path": "/etc/ddtree-sim/old.json", "state": "absent"}]}

Missing parent directories are made (0755). A file whose content and mode are already right is
left alone; others are replaced atomically (a temporary file renamed over the old one), by the
collection's own plugins/module_utils/_files.py, the write systemd_unit_snapshot uses (copied
beside this file on a test host). Prints {"changed": [paths]} and exits 0, or names the bad entry
on stderr and exits 2 before writing anything.
"""

import json
import os
import sys

from collection_code import load, places

_files = load("_files")


def _check(document):
    if not isinstance(document, dict) or not isinstance(document.get("files"), list):
        raise ValueError('expected {"files": [...]}')
    for index, entry in enumerate(document["files"]):
        where = f"files[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str) or not entry["path"].startswith("/"):
            raise ValueError(f"{where}: needs an absolute 'path'")
        state = entry.get("state", "file")
        if state not in ("file", "absent"):
            raise ValueError("{} ({}): state must be file or absent, not {!r}".format(where, entry["path"], state))
        if state == "file":
            if not isinstance(entry.get("content"), str):
                raise ValueError("{} ({}): needs 'content' (a string)".format(where, entry["path"]))
            int(entry.get("mode", "0644"), 8)
    return document["files"]


def _write(path, content, mode):
    data = content.encode("utf-8")
    if not _files.differs(path, data, mode):
        return False
    os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
    _files.atomic_write(path, data, mode)
    return True


def apply(document):
    """Write or remove every entry of ``document``; return the paths changed."""
    changed = []
    for entry in _check(document):
        path = entry["path"]
        if entry.get("state", "file") == "absent":
            if os.path.lexists(path):
                os.unlink(path)
                changed.append(path)
        elif _write(path, entry["content"], int(entry.get("mode", "0644"), 8)):
            changed.append(path)
    return changed


def main():
    if _files is None:
        sys.stderr.write("write_host_files.py: no _files.py in {}\n".format(" or ".join(places("_files"))))
        return 70
    try:
        document = json.load(sys.stdin)
        _check(document)
    except ValueError as error:  # json.JSONDecodeError is a ValueError
        sys.stderr.write(f"write_host_files.py: {error}\n")
        return 2
    print(json.dumps({"changed": apply(document)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
