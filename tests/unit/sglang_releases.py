# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SGLang release wheels for the flag checks of the unit tests (scripts/test setup downloads them)."""

import ast
import re
import zipfile
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SGLANG_WHEEL_DIR = REPO_ROOT / ".cache" / "sglang-wheel"

# What sgl-project/sglang#29907 adds to the command line: its ServerArgs field, as its branch
# declares it (commit 6c52d319a429be6216fba93b8291b7aff79516bb, quoted in docs/install.md),
# inserted after speculative_dflash_block_size as the pull request does.
PR29907_FIELD = (
    "speculative_ddtree_budget: A[\n"
    "    Optional[int],\n"
    '    "DDTREE only. Tree expansion budget. Defaults to speculative_num_draft_tokens - 1.",\n'
    "] = None\n"
)


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
    also #29907's field (the DDTree build). Returns the sglang package directory."""
    with zipfile.ZipFile(sglang_wheel(version)) as archive:
        names = [
            n for n in archive.namelist() if n.startswith("sglang/") and n.endswith(".py") or n.endswith("/METADATA")
        ]
        archive.extractall(dest, members=names)
    package = dest / "sglang"
    if ddtree:
        _insert_after_field(package, "speculative_dflash_block_size", PR29907_FIELD)
    return package


def _insert_after_field(package, anchor, text):
    candidates = [package / "srt" / "arg_groups" / "fields" / "spec.py", package / "srt" / "server_args.py"]
    for path in candidates:
        if not path.exists():
            continue
        source = path.read_text()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == anchor:
                lines = source.splitlines(keepends=True)
                indent = " " * node.col_offset
                block = "".join(indent + line + "\n" if line else "\n" for line in text.splitlines())
                lines.insert(node.end_lineno, block)
                path.write_text("".join(lines))
                return
    raise AssertionError(f"no {anchor} field in {candidates}: cannot add #29907's field")
