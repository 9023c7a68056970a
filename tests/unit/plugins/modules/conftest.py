# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every module test runs main() in-process through module_harness."""

import pytest
from module_harness import patch_ansible_module


@pytest.fixture(autouse=True)
def module_warnings(monkeypatch):
    """What the module passed to warn() during the test."""
    return patch_ansible_module(monkeypatch)
