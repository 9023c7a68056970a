"""sglang_install's table of the Pythons a release has wheels for matches the real release.

The table (roles/sglang_install/vars/main.yml, __sglang_install_pypi_wheels) decides in
preflight whether the host's interpreter can install the release. Its entry for the pinned
release must exist and describe the wheel scripts/test downloaded from PyPI with pip: that
wheel's Python and platform tags are among the entry's.
"""

import re
from pathlib import Path

import yaml
from sglang_releases import pinned_sglang_version, sglang_wheel

REPO = Path(__file__).resolve().parents[3]
VARS = yaml.safe_load((REPO / "roles" / "sglang_install" / "vars" / "main.yml").read_text())
TABLE = VARS["__sglang_install_pypi_wheels"]


def test_the_pinned_release_has_an_entry_with_its_source():
    entry = TABLE[pinned_sglang_version()]
    assert entry["pythons"] and all(re.fullmatch(r"3\.[0-9]+", v) for v in entry["pythons"])
    assert "pip download" in entry["why"]


def test_the_downloaded_wheel_is_described_by_the_entry():
    version = pinned_sglang_version()
    entry = TABLE[version]
    wheel = sglang_wheel(version).name
    # sglang-0.5.23-cp311-cp311-manylinux_2_34_x86_64.whl: name-version-python-abi-platform
    match = re.fullmatch(rf"sglang-{re.escape(version)}-cp3(\d+)-cp3\d+-(manylinux_(\d+)_(\d+)_(\w+))\.whl", wheel)
    assert match, wheel
    assert f"3.{match[1]}" in entry["pythons"]
    assert match[2] == entry["platform"]
    assert f"{match[3]}.{match[4]}" == entry["glibc"]
    assert match[5] == entry["machine"]


def test_the_entry_leaves_out_a_python_the_release_has_no_wheel_for():
    # PyPI's 0.5.23 has no cp310 wheel (pip download --python-version 3.10: "No matching
    # distribution"); the molecule scenario sglang_install fails a 3.10 host in preflight.
    assert "3.10" not in TABLE[pinned_sglang_version()]["pythons"]
