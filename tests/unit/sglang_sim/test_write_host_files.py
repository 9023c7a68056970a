# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""write_host_files.py lays out a test host's files in one run: written, left alone, removed, refused."""

import json
import stat
import subprocess
import sys
from pathlib import Path

from hang_guard import hang_guard

WRITER = str(Path(__file__).resolve().parents[2] / "sglang_sim" / "write_host_files.py")


def run(document):
    text = document if isinstance(document, str) else json.dumps(document)
    return subprocess.run(
        [sys.executable, WRITER], input=text, capture_output=True, text=True, timeout=hang_guard(10), check=False
    )


def test_writes_files_with_their_modes_and_parents_then_changes_nothing(tmp_path):
    smi = tmp_path / "usr/local/bin/nvidia-smi"
    gpus = tmp_path / "etc/ddtree-sim/gpus.json"
    doc = {
        "files": [
            {"path": str(smi), "content": "#!/bin/sh\nexit 0\n", "mode": "0755"},
            {"path": str(gpus), "content": '{"preset": "rtx_a6000x2"}\n'},
        ]
    }
    first = run(doc)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout) == {"changed": [str(smi), str(gpus)]}
    assert smi.read_text() == "#!/bin/sh\nexit 0\n"
    assert stat.S_IMODE(smi.stat().st_mode) == 0o755
    assert stat.S_IMODE(gpus.stat().st_mode) == 0o644
    assert stat.S_IMODE(gpus.parent.stat().st_mode) & 0o755 == 0o755

    again = run(doc)
    assert json.loads(again.stdout) == {"changed": []}
    assert sorted(p.name for p in gpus.parent.iterdir()) == ["gpus.json"]  # no temporary file left


def test_a_changed_content_or_mode_is_rewritten(tmp_path):
    f = tmp_path / "behaviour.json"
    f.write_text("{}\n")
    f.chmod(0o600)
    out = run({"files": [{"path": str(f), "content": "{}\n"}]})
    assert json.loads(out.stdout) == {"changed": [str(f)]}
    assert stat.S_IMODE(f.stat().st_mode) == 0o644
    out = run({"files": [{"path": str(f), "content": '{"DDTREE": {"mode": "degenerate"}}\n'}]})
    assert json.loads(out.stdout) == {"changed": [str(f)]}
    assert json.loads(f.read_text()) == {"DDTREE": {"mode": "degenerate"}}


def test_absent_removes_a_file_and_is_quiet_when_there_is_none(tmp_path):
    f = tmp_path / "gpus.json"
    f.write_text("{}")
    assert json.loads(run({"files": [{"path": str(f), "state": "absent"}]}).stdout) == {"changed": [str(f)]}
    assert not f.exists()
    assert json.loads(run({"files": [{"path": str(f), "state": "absent"}]}).stdout) == {"changed": []}


def test_a_bad_entry_is_named_and_nothing_is_written(tmp_path):
    good = tmp_path / "good.json"
    for doc, named in [
        ({"files": [{"path": str(good), "content": "x"}, {"path": "relative.json", "content": "x"}]}, "files[1]"),
        ({"files": [{"path": str(good), "content": "x"}, {"path": str(tmp_path / "b"), "mode": "0644"}]}, "content"),
        ({"files": [{"path": str(good), "content": "x"}, {"path": str(tmp_path / "c"), "state": "dir"}]}, "state"),
        ({"file": []}, '{"files"'),
        ("not json", "Expecting value"),
    ]:
        out = run(doc)
        assert out.returncode == 2, doc
        assert named in out.stderr
        assert not good.exists()
