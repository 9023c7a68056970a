# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_class filter: the same answers and errors as module_utils/_gpu.py, as AnsibleFilterError."""

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.ddtree.sglang.plugins.filter.gpu_class import FilterModule, gpu_class
from ansible_collections.ddtree.sglang.plugins.module_utils import _gpu


def _gpu_dict(name, compute_cap, memory, index=0):
    return {
        "index": index,
        "name": name,
        "memory_total_mib": memory,
        "compute_cap": compute_cap,
        "driver_version": "575.57.08",
        "uuid": f"GPU-{index}",
    }


def test_the_filter_is_registered():
    assert FilterModule().filters()["gpu_class"] is gpu_class


@pytest.mark.parametrize(
    ("name", "class_id"),
    [
        ("NVIDIA RTX A6000", "ampere_48g"),
        ("NVIDIA A40", "ampere_48g"),
        ("NVIDIA L40S", "ada_48g"),
        ("NVIDIA L40", "ada_48g"),
        ("NVIDIA RTX 6000 Ada Generation", "ada_48g"),
        ("NVIDIA H100 80GB HBM3", "hopper_80g"),
        ("NVIDIA H800", "hopper_80g"),
        ("NVIDIA H200", "hopper_141g"),
        ("NVIDIA GH200 144G HBM3e", "hopper_141g"),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "blackwell_rtx_96g"),
        ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "blackwell_rtx_96g"),
        ("NVIDIA B200", "blackwell_dc_180g"),
    ],
)
def test_a_name_maps_to_its_class(name, class_id):
    assert gpu_class(name) == class_id


def test_the_gpus_fact_maps_to_the_host_class():
    gpus = [_gpu_dict("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0", 97887, i) for i in range(8)]
    assert gpu_class(gpus) == "blackwell_rtx_96g"
    # a single GPU dict is a one-GPU host
    assert gpu_class(gpus[0]) == "blackwell_rtx_96g"


def test_unknown_gpu_is_a_filter_error_with_the_module_message():
    with pytest.raises(AnsibleFilterError) as err:
        gpu_class("NVIDIA GeForce RTX 4090")
    with pytest.raises(_gpu.UnknownGpuError) as module_err:
        _gpu.identify("NVIDIA GeForce RTX 4090")
    assert str(module_err.value) in str(err.value)
    assert "sglang_gpu_class" in str(err.value)
    for class_id in _gpu.CLASS_IDS:
        assert class_id in str(err.value)


def test_mixed_host_is_a_filter_error():
    gpus = [_gpu_dict("NVIDIA RTX A6000", "8.6", 49140, 0), _gpu_dict("NVIDIA L40S", "8.9", 46068, 1)]
    with pytest.raises(AnsibleFilterError) as err:
        gpu_class(gpus)
    assert "mixes GPU models" in str(err.value)
    assert "0: NVIDIA RTX A6000, 1: NVIDIA L40S" in str(err.value)


def test_cross_checks_apply_to_the_gpus_list():
    with pytest.raises(AnsibleFilterError) as err:
        gpu_class([_gpu_dict("NVIDIA GH200 480GB", "9.0", 97871)])
    assert "memory 97871 MiB" in str(err.value)


@pytest.mark.parametrize("name", ["NVIDIA GH200 480GB", "NVIDIA GH200"])
def test_a_bare_name_whose_memory_is_unknown_is_refused_naming_the_fix(name):
    """'GH200 480GB' is the 96 GB HBM3 part (480 GB is CPU + GPU memory): not the 141 GB class."""
    with pytest.raises(AnsibleFilterError) as err:
        gpu_class(name)
    msg = str(err.value)
    assert f"GPU {name!r} is a model sold with different memory sizes, and its name does not say which" in msg
    assert "class hopper_141g assumes 139000-150000 MiB" in msg
    assert "set sglang_gpu_class in the inventory" in msg and "memory_total_mib" in msg


def test_the_same_gpu_with_its_memory_known_is_classified():
    assert gpu_class([_gpu_dict("NVIDIA GH200", "9.0", 146831)]) == "hopper_141g"


@pytest.mark.parametrize("value", [None, 42, [], [None], ["NVIDIA RTX A6000"], ""])
def test_bad_input_is_a_filter_error(value):
    with pytest.raises(AnsibleFilterError):
        gpu_class(value)


@pytest.mark.parametrize("name", ["NVIDIA A40-8Q", "NVIDIA A40-48C", "NVIDIA RTX A6000-12B", "NVIDIA A40-4A"])
def test_a_vgpu_profile_name_is_refused_without_memory(name):
    """'NVIDIA A40-8Q' is an 8 GB slice of an A40: by name alone it looked like ampere_48g."""
    with pytest.raises(AnsibleFilterError) as err:
        gpu_class(name)
    assert f"GPU {name!r} is a vGPU profile" in str(err.value) and "memory_total_mib" in str(err.value)


def test_a_vgpu_profile_is_judged_by_its_memory():
    with pytest.raises(AnsibleFilterError) as err:
        gpu_class([_gpu_dict("NVIDIA A40-8Q", "8.6", 8192)])
    assert "memory 8192 MiB, expected 45000-49500 MiB" in str(err.value)
    assert gpu_class([_gpu_dict("NVIDIA A40-48Q", "8.6", 49152)]) == "ampere_48g"


def test_a_gpus_fact_with_unread_memory_is_refused_like_gpu_facts_does():
    # gpu_facts reports [N/A] memory as null; the filter must not name the class by name alone then
    with pytest.raises(AnsibleFilterError) as err:
        gpu_class([_gpu_dict("NVIDIA H200", "9.0", None)])
    assert "GPU 0 (NVIDIA H200) memory_total_mib is null" in str(err.value)
    assert "sglang_gpu_class" in str(err.value)
