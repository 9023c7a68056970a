# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""scripts/demo's progress callback: its lines and the demo's own share the terminal, or a file."""

import importlib.util
import os
from pathlib import Path

CALLBACK = Path(__file__).resolve().parents[3] / "scripts" / "lib" / "callback_plugins" / "ddtree_progress.py"


def load():
    spec = importlib.util.spec_from_file_location("ddtree_progress", CALLBACK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Play:
    def get_name(self):
        return "Deploy DDTree"


def test_lines_of_the_callback_and_of_its_caller_do_not_overwrite_each_other(tmp_path, monkeypatch):
    # `scripts/demo 2>demo.txt`: stderr is a regular file opened without O_APPEND, and the demo hands
    # it to ansible-playbook as fd 3 (DDTREE_PROGRESS_FILE=/dev/fd/3) while it writes lines of its own.
    path = tmp_path / "demo.txt"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, b"[ddtree] deploying DDTree\n")
        monkeypatch.setenv("DDTREE_PROGRESS_FILE", f"/dev/fd/{fd}")
        callback = load().CallbackModule()
        callback.v2_playbook_on_play_start(Play())
        callback.v2_playbook_on_stats(None)
        os.write(fd, b"[ddtree] what each host serves now\n")
    finally:
        os.close(fd)
    lines = path.read_text().splitlines()
    assert len(lines) == 3, lines
    assert lines[0] == "[ddtree] deploying DDTree"
    assert lines[1].startswith("[ddtree] ") and lines[1].endswith(" play: Deploy DDTree"), lines
    assert lines[2] == "[ddtree] what each host serves now"


def test_a_path_is_appended_to(tmp_path, monkeypatch):
    path = tmp_path / "progress.txt"
    path.write_text("before\n")
    monkeypatch.setenv("DDTREE_PROGRESS_FILE", str(path))
    callback = load().CallbackModule()
    callback.v2_playbook_on_play_start(Play())
    callback.v2_playbook_on_stats(None)
    assert path.read_text().splitlines()[0] == "before"
    assert path.read_text().splitlines()[1].endswith(" play: Deploy DDTree")
