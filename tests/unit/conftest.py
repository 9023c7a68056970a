"""Make the collection importable as ``ansible_collections.ddtree.sglang`` in unit tests.

The repository root is the collection root, so a symlink tree under ``.cache/`` gives
Python the ``ansible_collections/<namespace>/<name>`` layout that ansible-core's loader
and ansible-test expect, without copying files.
"""

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
COLLECTIONS_ROOT = REPO_ROOT / ".cache" / "collections"
_link = COLLECTIONS_ROOT / "ansible_collections" / "ddtree" / "sglang"
if not _link.exists():
    _link.parent.mkdir(parents=True, exist_ok=True)
    _link.symlink_to(REPO_ROOT, target_is_directory=True)
if str(COLLECTIONS_ROOT) not in sys.path:
    sys.path.insert(0, str(COLLECTIONS_ROOT))


# --------------------------------------------------------------------------- the pinned release
import re  # noqa: E402

import pytest  # noqa: E402

SGLANG_WHEEL_DIR = REPO_ROOT / ".cache" / "sglang-wheel"


def pinned_sglang_version():
    """sglang_install_version of roles/sglang_install/defaults/main.yml: the release the collection installs."""
    text = (REPO_ROOT / "roles" / "sglang_install" / "defaults" / "main.yml").read_text()
    match = re.search(r"^sglang_install_version:\s*\"?([^\"\s]+)\"?\s*$", text, re.MULTILINE)
    assert match, "roles/sglang_install/defaults/main.yml has no sglang_install_version"
    return match.group(1)


def pinned_sglang_wheel():
    """The pinned release's wheel that scripts/test setup downloads from PyPI (pip download --no-deps)."""
    version = pinned_sglang_version()
    wheels = sorted(SGLANG_WHEEL_DIR.glob(f"sglang-{version}-*.whl"))
    if not wheels:
        pytest.fail(
            f"no sglang-{version} wheel in {SGLANG_WHEEL_DIR}: run scripts/test setup (it runs "
            f"pip download --no-deps sglang=={version} into that directory); the flag checks read the "
            "release's own argument definitions from it"
        )
    return wheels[0]


@pytest.fixture(scope="session")
def sglang_release_table():
    """The option table of the pinned SGLang release, read from its wheel by _sglang_flags."""
    from ansible_collections.ddtree.sglang.plugins.module_utils import _sglang_flags

    return _sglang_flags.read_wheel_options(str(pinned_sglang_wheel()))
