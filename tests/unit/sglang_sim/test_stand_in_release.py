# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/sglang_sim/stand_in_release.py: the release files test hosts check the units against."""

import subprocess
import sys
import tarfile
from pathlib import Path

from ansible_collections.ddtree.sglang.plugins.module_utils import _sglang_flags
from sglang_releases import pinned_sglang_version, sglang_wheel

SCRIPT = Path(__file__).resolve().parents[2] / "sglang_sim" / "stand_in_release.py"


def test_the_stand_in_is_the_release_plus_pr29907(tmp_path, sglang_tables):
    out = tmp_path / "release.tar.gz"
    wheel = sglang_wheel(pinned_sglang_version())
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), str(wheel), str(out)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    with tarfile.open(out) as tar:
        names = tar.getnames()
        # The data filter where this Python has it (3.11.4+; Debian 12's python3 is 3.11.2).
        tar.extractall(tmp_path / "r", **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    site = "lib/python3.11/site-packages"
    assert f"{site}/sglang/srt/speculative/spec_info.py" in names
    assert f"{site}/sglang-{pinned_sglang_version()}.dist-info/METADATA" in names
    # The files it keeps are enough: the table equals the one read from the whole wheel, plus
    # the DDTree build's budget flag.
    table = _sglang_flags.read_cli_options(str(tmp_path / "r" / site / "sglang"))
    assert table == sglang_tables(pinned_sglang_version(), ddtree=True)
    bare = sglang_tables(pinned_sglang_version())
    known = {o["dest"] for o in bare["options"]}
    added = [o for o in table["options"] if o["dest"] not in known]
    assert [(o["dest"], o["flags"], o["type"]) for o in added] == [
        ("speculative_ddtree_budget", ["--speculative-ddtree-budget"], "int")
    ]


def test_not_a_wheel_fails_clearly(tmp_path):
    bad = tmp_path / "x.whl"
    bad.write_bytes(b"not a zip")
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), str(bad), str(tmp_path / "o.tgz")], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"cannot build the stand-in SGLang release from {bad}:")
