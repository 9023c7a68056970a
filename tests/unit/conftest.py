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


# --------------------------------------------------------------------------- SGLang releases
import os  # noqa: E402
import shutil  # noqa: E402

import pytest  # noqa: E402
from sglang_releases import pinned_sglang_version, unpack_sglang  # noqa: E402


@pytest.fixture(scope="session")
def sglang_tables(tmp_path_factory):
    """Option tables read by _sglang_flags from release wheels: tables(version, ddtree=False)."""
    from ansible_collections.ddtree.sglang.plugins.module_utils import _sglang_flags

    cache = {}

    def tables(version, ddtree=False):
        if (version, ddtree) not in cache:
            dest = tmp_path_factory.mktemp(f"sglang-{version}{'-ddtree' if ddtree else ''}")
            try:
                cache[version, ddtree] = _sglang_flags.read_cli_options(str(unpack_sglang(version, dest, ddtree)))
            finally:
                shutil.rmtree(dest, ignore_errors=True)
        return cache[version, ddtree]

    return tables


@pytest.fixture(scope="session")
def sglang_release_table(sglang_tables):
    """The option table of the pinned SGLang release, read from its wheel by _sglang_flags."""
    return sglang_tables(pinned_sglang_version())


# --------------------------------------------------------------------------- the ansible CLI


@pytest.fixture(scope="session")
def ansible_cli_env():
    """The environment for running ansible-playbook on localhost against the collection under
    test: its collection path, no colour, no warnings about the implicit localhost inventory, and
    ansible-core's default stdout callback, whose `fatal:` line carries a failed task's whole
    result (tests read it as JSON). Run from the clone, its ansible.cfg would select
    ddtree_default, which leaves out of that line a msg the [ERROR] line above already printed."""
    return dict(
        os.environ,
        ANSIBLE_STDOUT_CALLBACK="default",
        ANSIBLE_COLLECTIONS_PATH=str(COLLECTIONS_ROOT),
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_LOCALHOST_WARNING="0",
        ANSIBLE_INVENTORY_UNPARSED_WARNING="0",
    )
