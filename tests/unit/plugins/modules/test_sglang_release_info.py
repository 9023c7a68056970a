# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sglang_release_info: what a release venv serves, read statically, and the optional import check."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args
from ansible_collections.ddtree.sglang.plugins.modules import sglang_release_info

PATCHES = Path(__file__).resolve().parents[3] / "fixtures" / "patches"
SPEC_INFO_0_5_23 = (PATCHES / "sglang-0.5.23-spec_info.py.orig").read_text()

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


class ExitJson(Exception):
    pass


class FailJson(Exception):
    pass


@pytest.fixture(autouse=True)
def capture_exit(monkeypatch):
    def exit_json(self, **kwargs):
        raise ExitJson(kwargs)

    def fail_json(self, msg, **kwargs):
        kwargs["msg"] = msg
        raise FailJson(kwargs)

    monkeypatch.setattr(basic.AnsibleModule, "exit_json", exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail_json)


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
    if check_mode:
        args["_ansible_check_mode"] = True
    with patch_module_args(args):
        with pytest.raises((ExitJson, FailJson)) as caught:
            sglang_release_info.main()
    return caught.type is ExitJson, caught.value.args[0]


@pytest.mark.parametrize("check_mode", [False, True])
def test_patched_release_serves_ddtree(tmp_path, check_mode):
    release = make_release(tmp_path, patch="sglang-ddtree-algorithm.patch")
    ok, result = run(check_mode=check_mode, path=str(release), required_algorithms=["ddtree", "NEXTN"])
    assert ok, result
    assert result["changed"] is False
    assert result["version"] == "0.5.23"
    assert result["required_algorithms"] == ["DDTREE", "NEXTN"]
    assert result["algorithms"][:2] == ["DFLASH", "DDTREE"]
    assert result["is_dflash"] == ["DFLASH", "DDTREE"]
    assert result["aliases"] == {"NEXTN": "EAGLE"}
    assert result["problems"] == []
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
    ok, result = run(path=str(release), required_algorithms=["NEXTN"])
    assert ok and result["problems"] == []


def test_nothing_required_reports_only(tmp_path):
    ok, result = run(path=str(make_release(tmp_path)))
    assert ok and result["required_algorithms"] == [] and result["is_dflash"] == ["DFLASH"]


def test_path_without_sglang_fails_clearly(tmp_path):
    ok, result = run(path=str(tmp_path), required_algorithms=["DDTREE"])
    assert not ok
    assert result["msg"].startswith(f"Cannot read the SGLang release at {tmp_path}: no sglang package under")


def test_import_check_agrees_with_the_static_read(tmp_path):
    spec_info = IMPORTABLE_SPEC_INFO.format(dflash="(SpeculativeAlgorithm.DFLASH, SpeculativeAlgorithm.DDTREE)")
    release = make_release(tmp_path, spec_info=spec_info)
    ok, result = run(path=str(release), required_algorithms=["DDTREE", "NEXTN"], import_check=True)
    assert ok, result
    assert result["import_check"] == {
        "version": "0.5.23",
        "algorithms": ["DFLASH", "DDTREE", "EAGLE", "NONE"],
        "is_dflash": ["DFLASH", "DDTREE"],
        "accepted": {"DDTREE": "DDTREE", "NEXTN": "EAGLE"},
    }


def test_import_check_catches_what_the_static_read_cannot_see(tmp_path):
    # Statically unknown (a module-level set), at run time false for DDTREE.
    spec_info = IMPORTABLE_SPEC_INFO.format(dflash="_FAMILY") + "\n\n_FAMILY = {SpeculativeAlgorithm.DFLASH}\n"
    release = make_release(tmp_path, spec_info=spec_info)
    ok, result = run(path=str(release), required_algorithms=["DDTREE"], import_check=True)
    assert not ok
    assert "could not be read statically" in result["msg"]
    assert "at run time is_dflash() is false for DDTREE" in result["msg"]


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
