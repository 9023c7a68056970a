# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sglang_release_info: what a release venv serves, read statically, and the optional import check."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from ansible_collections.ddtree.sglang.plugins.modules import sglang_release_info
from module_harness import run_main

PATCHES = Path(__file__).resolve().parents[3] / "fixtures" / "patches"
SPEC_INFO_0_5_23 = (PATCHES / "sglang-0.5.23-spec_info.py.orig").read_text()
# The other 0.5.23 files #29907's wiring touches, by their path in the package.
EXCERPTS_0_5_23 = {
    "srt/arg_groups/fields/spec.py": PATCHES / "sglang-0.5.23-fields-spec.py.orig",
    "srt/arg_groups/speculative_hook.py": PATCHES / "sglang-0.5.23-speculative_hook.py.orig",
}
PR_PATCH = "sglang-0.5.23-ddtree-pr29907.patch"

# A package the release's python can really import (no torch): the import check's subject.
IMPORTABLE_SPEC_INFO = """
from enum import Enum, auto


class SpeculativeAlgorithm(Enum):
    DFLASH = auto()
    DDTREE = auto()
    EAGLE = auto()
    NONE = auto()

    @classmethod
    def from_string(cls, name):
        return cls.EAGLE if name.upper() == "NEXTN" else cls[name.upper()]

    def is_dflash(self):
        return self in {dflash}
"""
# What #29907 adds beside the enum, importable without torch (the import check's subject).
IMPORTABLE_WORKER = "class DDTreeWorker:\n    pass\n"


def make_release(root, spec_info=SPEC_INFO_0_5_23, patch=None, version="0.5.23"):
    """A release venv as the role lays it out, with an executable bin/python for the import check."""
    site = root / "lib" / "python3.11" / "site-packages"
    speculative = site / "sglang" / "srt" / "speculative"
    speculative.mkdir(parents=True)
    (site / "sglang" / "__init__.py").write_text(f"__version__ = {version!r}\n")
    (site / "sglang" / "srt" / "__init__.py").write_text("")
    (speculative / "__init__.py").write_text("")
    (speculative / "spec_info.py").write_text(spec_info)
    (speculative / "spec_registry.py").write_text('_RESERVED_ALIASES = frozenset({"NEXTN"})\n')
    for relative, excerpt in EXCERPTS_0_5_23.items():
        (site / "sglang" / relative).parent.mkdir(parents=True, exist_ok=True)
        (site / "sglang" / relative).write_text(excerpt.read_text())
    dist_info = site / f"sglang-{version}.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: sglang\nVersion: {version}\n")
    if patch:
        subprocess.run(
            ["patch", "--forward", "--batch", "--strip=1", f"--directory={site}", f"--input={PATCHES / patch}"],
            check=True,
            capture_output=True,
        )
    (root / "bin").mkdir()
    python = root / "bin" / "python"
    python.write_text(f'#!/bin/sh\nPYTHONPATH={site} exec {sys.executable} "$@"\n')
    python.chmod(0o755)
    return root


def run(check_mode=False, **args):
    """(ok, result) of sglang_release_info with args."""
    failed, result = run_main(sglang_release_info.main, args, check_mode=check_mode)
    return not failed, result


@pytest.mark.parametrize("check_mode", [False, True])
def test_patched_release_serves_ddtree(tmp_path, check_mode):
    release = make_release(tmp_path, patch=PR_PATCH)
    ok, result = run(check_mode=check_mode, path=str(release), required_algorithms=["ddtree", "NEXTN"])
    assert ok, result
    assert result["changed"] is False
    assert result["version"] == "0.5.23"
    assert result["required_algorithms"] == ["DDTREE", "NEXTN"]
    assert result["algorithms"][:2] == ["DFLASH", "DDTREE"]
    assert result["is_dflash"] == ["DFLASH"]
    assert result["aliases"] == {"NEXTN": "EAGLE"}
    assert result["problems"] == []
    package = release / "lib" / "python3.11" / "site-packages" / "sglang"
    assert result["ddtree"]["worker"]["class"] == "DDTreeWorker"
    assert result["ddtree"]["worker"]["file"] == str(package / "srt" / "speculative" / "ddtree_worker.py")
    assert result["ddtree"]["budget_field"].startswith(str(package / "srt" / "arg_groups" / "fields" / "spec.py"))
    assert result["ddtree"]["constraints"] == {"page_size": 1, "disable_overlap_schedule": True}
    assert result["direct_url"] is None
    assert result["package_dir"] == str(release / "lib" / "python3.11" / "site-packages" / "sglang")
    assert "import_check" not in result


def test_released_0_5_23_fails_for_ddtree_and_serves_nextn(tmp_path):
    release = make_release(tmp_path)
    ok, result = run(path=str(release), required_algorithms=["DDTREE"])
    assert not ok
    package = release / "lib" / "python3.11" / "site-packages" / "sglang"
    assert result["msg"].startswith(f"SGLang 0.5.23 at {package} cannot serve DDTREE")
    assert "SpeculativeAlgorithm has no DDTREE" in result["msg"]
    assert result["algorithms"][0] == "DFLASH"
    assert result["ddtree"]["registered"] is False
    ok, result = run(path=str(release), required_algorithms=["NEXTN"])
    assert ok and result["problems"] == []


def test_field_report_is_dflash_patch_does_not_pass_for_ddtree(tmp_path):
    # DDTREE is a member, but create_worker() hands it to the linear DFlash worker.
    release = make_release(tmp_path, patch="sglang-ddtree-algorithm.patch")
    ok, result = run(path=str(release), required_algorithms=["DDTREE"])
    assert not ok
    assert "cannot serve DDTREE" in result["msg"]
    assert "gives DDTREE the DFlashWorkerV2 worker, not DDTreeWorker" in result["msg"]
    assert "no field speculative_ddtree_budget" in result["msg"]
    assert len(result["problems"]) == 2
    # Not required, the same release only reports how DDTREE is wired.
    ok, result = run(path=str(release), required_algorithms=["NEXTN"])
    assert ok and result["ddtree"]["worker"]["class"] == "DFlashWorkerV2"


def test_nothing_required_reports_only(tmp_path):
    ok, result = run(path=str(make_release(tmp_path)))
    assert ok and result["required_algorithms"] == [] and result["is_dflash"] == ["DFLASH"]


def test_path_without_sglang_fails_clearly(tmp_path):
    ok, result = run(path=str(tmp_path), required_algorithms=["DDTREE"])
    assert not ok
    assert result["msg"].startswith(f"Cannot read the SGLang release at {tmp_path}: no sglang package under")


def importable_ddtree_release(tmp_path, worker=IMPORTABLE_WORKER):
    """A release whose spec_info imports without torch and wires DDTREE as #29907 does."""
    spec_info = IMPORTABLE_SPEC_INFO.format(dflash="(SpeculativeAlgorithm.DFLASH,)") + (
        "\n    def create_worker(self, server_args):\n"
        "        if self == SpeculativeAlgorithm.DDTREE:\n"
        "            from sglang.srt.speculative.ddtree_worker import DDTreeWorker\n\n"
        "            return DDTreeWorker\n"
        "        raise ValueError('unreachable')\n"
    )
    release = make_release(tmp_path, spec_info=spec_info)
    site = release / "lib" / "python3.11" / "site-packages" / "sglang"
    (site / "srt" / "speculative" / "ddtree_worker.py").write_text(worker)
    fields = site / "srt" / "arg_groups" / "fields" / "spec.py"
    fields.write_text(fields.read_text() + "    speculative_ddtree_budget: A[Optional[int], 'budget'] = None\n")
    return release


def test_import_check_agrees_with_the_static_read(tmp_path):
    release = importable_ddtree_release(tmp_path)
    ok, result = run(path=str(release), required_algorithms=["DDTREE", "NEXTN"], import_check=True)
    assert ok, result
    assert result["import_check"] == {
        "version": "0.5.23",
        "algorithms": ["DFLASH", "DDTREE", "EAGLE", "NONE"],
        "is_dflash": ["DFLASH"],
        "accepted": {"DDTREE": "DDTREE", "NEXTN": "EAGLE"},
        "ddtree_worker": "DDTreeWorker",
    }


def test_import_check_catches_what_the_static_read_cannot_see(tmp_path):
    # Statically the worker module defines the class; at run time it fails to import.
    release = importable_ddtree_release(tmp_path, worker=IMPORTABLE_WORKER + "import sglang_missing_dependency\n")
    ok, result = run(path=str(release), required_algorithms=["DDTREE"], import_check=True)
    assert not ok
    assert len(result["problems"]) == 1
    assert "at run time DDTreeWorker does not import: ModuleNotFoundError" in result["msg"]


def test_import_check_without_the_stack_names_the_fix(tmp_path):
    spec_info = "import torch\n" + IMPORTABLE_SPEC_INFO.format(dflash="(SpeculativeAlgorithm.DFLASH,)")
    release = make_release(tmp_path, spec_info=spec_info)
    probe = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True, check=False)
    assert probe.returncode != 0, "this test needs an interpreter without torch"
    ok, result = run(path=str(release), required_algorithms=["DFLASH"], import_check=True)
    assert not ok
    assert "could not import SGLang" in result["msg"]
    assert "ModuleNotFoundError: No module named 'torch'" in result["msg"]
    assert "sglang_install_import_check: false" in result["msg"]


def test_import_check_needs_a_python(tmp_path):
    release = make_release(tmp_path)
    os.unlink(release / "bin" / "python")
    ok, result = run(path=str(release), import_check=True)
    assert not ok and "is not an executable python" in result["msg"]
