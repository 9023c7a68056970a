# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SGLang release wheels for the flag checks of the unit tests (scripts/test setup downloads them)."""

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sglang_sim"))
from stand_in_release import release_files  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]
SGLANG_WHEEL_DIR = REPO_ROOT / ".cache" / "sglang-wheel"


def pinned_sglang_version():
    """sglang_install_version of roles/sglang_install/defaults/main.yml: the release the collection installs."""
    text = (REPO_ROOT / "roles" / "sglang_install" / "defaults" / "main.yml").read_text()
    match = re.search(r"^sglang_install_version:\s*\"?([^\"\s]+)\"?\s*$", text, re.MULTILINE)
    assert match, "roles/sglang_install/defaults/main.yml has no sglang_install_version"
    return match.group(1)


def ddtree_base_version():
    """The release #29907 is based on, from tests/sglang-wheels.txt (which setup downloads)."""
    lines = [
        line.split("#")[0].strip() for line in (REPO_ROOT / "tests" / "sglang-wheels.txt").read_text().splitlines()
    ]
    return [line for line in lines if line][0]


def sglang_wheel(version):
    """The wheel of an SGLang release that scripts/test setup downloads (pip download --no-deps)."""
    wheels = sorted(SGLANG_WHEEL_DIR.glob(f"sglang-{version}-*.whl"))
    if not wheels:
        pytest.fail(
            f"no sglang-{version} wheel in {SGLANG_WHEEL_DIR}: run scripts/test setup (it runs "
            f"pip download --no-deps sglang=={version} into that directory); the flag checks read the "
            "release's own argument definitions from it"
        )
    return wheels[0]


def unpack_sglang(version, dest, ddtree=False):
    """The wheel's Python files and metadata under dest, laid out as an installed package; with ddtree=True
    also #29907's field (the DDTree build, as tests/sglang_sim/stand_in_release.py makes it for test hosts).
    Returns the sglang package directory."""
    for name, data in release_files(str(sglang_wheel(version)), everything=True, ddtree=ddtree).items():
        path = dest / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return dest / "sglang"
