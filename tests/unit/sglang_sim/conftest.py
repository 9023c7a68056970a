# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reuse the simulator fixtures of tests/unit/plugins/conftest.py (one definition, two test trees)."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "ddtree_sglang_plugin_fixtures", Path(__file__).resolve().parents[1] / "plugins" / "conftest.py"
)
_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fixtures)

sglang_sim = _fixtures.sglang_sim
sglang_router = _fixtures.sglang_router
h = _fixtures.h
LAUNCH_SERVER = _fixtures.LAUNCH_SERVER
SIM_DIR = _fixtures.SIM_DIR
