# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sglang_server_env: class environment < sglang_env."""

from pathlib import Path

import pytest
import yaml
from ansible.errors import AnsibleFilterError
from ansible_collections.ddtree.sglang.plugins.filter.sglang_server_env import FilterModule, sglang_server_env

VARS = Path(__file__).resolve().parents[4] / "roles" / "sglang" / "vars"
CLASSES = yaml.safe_load((VARS / "gpu_classes.yml").read_text())["__sglang_gpu_classes"]


def test_the_filter_is_registered():
    assert FilterModule().filters()["sglang_server_env"] is sglang_server_env


@pytest.mark.parametrize("class_id", sorted(CLASSES))
def test_class_environment_as_strings(class_id):
    env = sglang_server_env(class_id, gpu_classes=CLASSES)
    assert env == {name: str(entry["value"]) for name, entry in CLASSES[class_id]["env"].items()}


def test_host_env_wins_and_null_removes():
    env = sglang_server_env(
        "blackwell_rtx_96g",
        gpu_classes=CLASSES,
        env={"NCCL_P2P_DISABLE": 1, "CUDA_DEVICE_ORDER": None, "X": True, "Y": False, "Z": 0.5},
    )
    assert env == {"NCCL_P2P_DISABLE": "1", "X": "1", "Y": "0", "Z": "0.5"}


def test_unit_style_is_sorted_and_quoted():
    words = sglang_server_env(
        "ampere_48g", gpu_classes=CLASSES, env={"A": "x y", "B": "50%", "C": "$HOME"}, style="unit"
    )
    assert words == ['"A=x y"', "B=50%%", "C=$HOME", "CUDA_DEVICE_ORDER=PCI_BUS_ID"]


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"env": {"1BAD": "x"}}, "'1BAD' is not valid"),
        ({"env": {"BAD-NAME": "x"}}, "'BAD-NAME' is not valid"),
        ({"env": {"X": ["a"]}}, 'is a list (["a"]); expected a string or a number'),
        ({"env": ["X=1"]}, "sglang_env must be a dict"),
        # omit as ansible-core before 2.19 hands it to a filter: a placeholder string, never written into the unit
        ({"env": {"X": "__omit_place_holder__5e0c1d"}}, "'X' is omit; expected a string or a number"),
        ({"style": "shell"}, "'dict' or 'unit'"),
    ],
)
def test_bad_input_is_refused(kwargs, expected):
    with pytest.raises(AnsibleFilterError) as err:
        sglang_server_env("ampere_48g", gpu_classes=CLASSES, **kwargs)
    assert expected in str(err.value)


def test_unknown_class_is_refused_with_the_fix():
    with pytest.raises(AnsibleFilterError) as err:
        sglang_server_env("rtx_4090", gpu_classes=CLASSES)
    assert "Unknown GPU class 'rtx_4090'" in str(err.value) and "sglang_gpu_class" in str(err.value)
