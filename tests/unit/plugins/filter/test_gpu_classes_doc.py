# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""docs/gpu-classes.md states the class table's values: keep the page and the YAML in step."""

from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[4]
DOC = (REPO / "docs" / "gpu-classes.md").read_text()
CLASSES = yaml.safe_load((REPO / "roles" / "sglang" / "vars" / "gpu_classes.yml").read_text())["__sglang_gpu_classes"]
_PROFILES = yaml.safe_load((REPO / "roles" / "sglang" / "vars" / "profiles.yml").read_text())


def _option_table():
    """Rows of the '| option | `ampere_48g` | ...' table as {option: {class: text}}."""
    lines = DOC.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| option | `"))
    header = [cell.strip().strip("`") for cell in lines[start].strip("|").split("|")]
    rows = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [cell.strip().strip("`") for cell in line.strip("|").split("|")]
        rows[cells[0]] = dict(zip(header[1:], cells[1:], strict=True))
    return header[1:], rows


def test_option_table_covers_every_class():
    classes = _option_table()[0]
    assert classes == list(CLASSES)


@pytest.mark.parametrize(
    "option",
    ["attention_backend", "mem_fraction_static", "cuda_graph_max_bs_decode", "max_running_requests", "context_length"],
)
def test_option_table_matches_the_yaml(option):
    rows = _option_table()[1]
    for class_id, entry in CLASSES.items():
        assert rows[option][class_id] == str(entry["options"][option]["value"]), (option, class_id)


def test_every_profile_and_variant_is_documented():
    for name in list(_PROFILES["__sglang_profiles"]) + list(_PROFILES["__sglang_profile_variants"]):
        assert f"| `{name}` |" in DOC, name
