# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-smi parsing and GPU classification (plugins/module_utils/_gpu.py)."""

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils import _gpu

# Output of `nvidia-smi --query-gpu=index,name,memory.total,compute_cap,driver_version,uuid
# --format=csv,noheader,nounits` as real drivers print it: names, memory sizes (MiB, ECC on
# where the board ships with it) and compute capabilities of each model.
SAMPLES = {
    "ampere_48g": [
        "0, NVIDIA RTX A6000, 49140, 8.6, 550.127.05, GPU-5a1c8f0e-2b7d-4c3e-9f10-6d2a8b4e1c01, [N/A]\n"
        "1, NVIDIA RTX A6000, 49140, 8.6, 550.127.05, GPU-9e3b2d1a-7c6f-4a58-b0e2-3f1d5c7a9b02, [N/A]\n",
        "0, NVIDIA A40, 46068, 8.6, 535.183.01, GPU-1f2e3d4c-5b6a-4798-8a9b-0c1d2e3f4a03, [N/A]\n",
        # an RTX A6000 with ECC switched on reports less memory
        "0, NVIDIA RTX A6000, 46068, 8.6, 550.127.05, GPU-5a1c8f0e-2b7d-4c3e-9f10-6d2a8b4e1c04, [N/A]\n",
    ],
    "ada_48g": [
        "0, NVIDIA L40S, 46068, 8.9, 550.90.07, GPU-0a1b2c3d-4e5f-4061-8273-94a5b6c7d805, [N/A]\n"
        "1, NVIDIA L40S, 46068, 8.9, 550.90.07, GPU-0a1b2c3d-4e5f-4061-8273-94a5b6c7d806, [N/A]\n",
        "0, NVIDIA L40, 46068, 8.9, 550.90.07, GPU-0a1b2c3d-4e5f-4061-8273-94a5b6c7d807, [N/A]\n",
        "0, NVIDIA RTX 6000 Ada Generation, 49140, 8.9, 560.35.03, GPU-3c4d5e6f-7081-4923-a4b5-c6d7e8f90a08, [N/A]\n",
    ],
    "hopper_80g": [
        "0, NVIDIA H100 80GB HBM3, 81559, 9.0, 550.54.15, GPU-7f6e5d4c-3b2a-4190-8f7e-6d5c4b3a2909, Disabled\n",
        "0, NVIDIA H100 PCIe, 81559, 9.0, 535.154.05, GPU-7f6e5d4c-3b2a-4190-8f7e-6d5c4b3a2910, Disabled\n",
        "0, NVIDIA H100 NVL, 95830, 9.0, 550.54.15, GPU-7f6e5d4c-3b2a-4190-8f7e-6d5c4b3a2911, Disabled\n",
        "0, NVIDIA H800, 81559, 9.0, 535.104.12, GPU-7f6e5d4c-3b2a-4190-8f7e-6d5c4b3a2912, Disabled\n",
    ],
    "hopper_141g": [
        "0, NVIDIA H200, 143771, 9.0, 560.35.03, GPU-11223344-5566-4778-899a-abbccddeef13, Disabled\n",
        "0, NVIDIA H200 NVL, 143771, 9.0, 570.86.15, GPU-11223344-5566-4778-899a-abbccddeef14, Disabled\n",
        "0, NVIDIA GH200 144G HBM3e, 146831, 9.0, 560.35.03, GPU-11223344-5566-4778-899a-abbccddeef15, Disabled\n",
    ],
    "blackwell_rtx_96g": [
        "0, NVIDIA RTX PRO 6000 Blackwell Server Edition, 97887, 12.0, 575.57.08, "
        "GPU-aa11bb22-cc33-4d44-8e55-ff6600770016, [N/A]\n",
        "0, NVIDIA RTX PRO 6000 Blackwell Workstation Edition, 97887, 12.0, 575.57.08, "
        "GPU-aa11bb22-cc33-4d44-8e55-ff6600770017, [N/A]\n",
        "0, NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition, 97887, 12.0, 575.57.08, "
        "GPU-aa11bb22-cc33-4d44-8e55-ff6600770018, [N/A]\n",
    ],
    "blackwell_dc_180g": [
        "0, NVIDIA B200, 183359, 10.0, 570.124.06, GPU-de4dbeef-0000-4111-8222-333344445519, Disabled\n",
    ],
}
CASES = [(class_id, text) for class_id, texts in SAMPLES.items() for text in texts]


def parse(text):
    return _gpu.read_nvidia_smi(text).gpus


def test_query_is_the_documented_one():
    assert _gpu.NVIDIA_SMI_ARGS == (
        "--query-gpu=index,name,memory.total,compute_cap,driver_version,uuid,mig.mode.current",
        "--format=csv,noheader,nounits",
    )


def test_parse_types_every_field():
    gpus = parse(SAMPLES["ampere_48g"][0])
    assert gpus == [
        {
            "index": 0,
            "name": "NVIDIA RTX A6000",
            "memory_total_mib": 49140,
            "compute_cap": "8.6",
            "driver_version": "550.127.05",
            "uuid": "GPU-5a1c8f0e-2b7d-4c3e-9f10-6d2a8b4e1c01",
            "mig_mode": None,
        },
        {
            "index": 1,
            "name": "NVIDIA RTX A6000",
            "memory_total_mib": 49140,
            "compute_cap": "8.6",
            "driver_version": "550.127.05",
            "uuid": "GPU-9e3b2d1a-7c6f-4a58-b0e2-3f1d5c7a9b02",
            "mig_mode": None,
        },
    ]


def test_parse_ignores_blank_lines_and_keeps_commas_in_names():
    text = "\n0, Some, Odd GPU, 1024, 8.0, 1.0, GPU-x, [N/A]\n\n"
    assert parse(text)[0]["name"] == "Some, Odd GPU"
    assert _gpu.read_nvidia_smi("") == ([], [], [], [])


@pytest.mark.parametrize(
    "line",
    [
        "0, NVIDIA RTX A6000, 49140",
        "x, NVIDIA RTX A6000, 49140, 8.6, 550.1, GPU-x, [N/A]",
        "WARNING: infoROM is corrupted at gpu 0000:41:00.0",
        # what an old nvidia-smi prints when it does not know a query field
        'Field "compute_cap" is not a valid field to query.',
    ],
)
def test_lines_that_are_not_gpu_rows_are_skipped_and_kept(line):
    reading = _gpu.read_nvidia_smi(line + "\n" + SAMPLES["ampere_48g"][0])
    assert reading.skipped == [line] and reading.unreported == []
    assert [g["index"] for g in reading.gpus] == [0, 1]
    assert _gpu.classify_reading(reading) == "ampere_48g"


def test_only_lines_that_are_not_gpu_rows_name_no_class():
    reading = _gpu.read_nvidia_smi("index, name\n0, NVIDIA RTX A6000\n")
    assert reading.gpus == [] and reading.skipped == ["index, name", "0, NVIDIA RTX A6000"]
    with pytest.raises(_gpu.NvidiaSmiParseError) as err:
        _gpu.classify_reading(reading)
    assert "printed no GPU row, only 2 other line(s): 'index, name'" in str(err.value)
    assert "sglang_gpu_class" in str(err.value)


@pytest.mark.parametrize(
    ("line", "field", "expected"),
    [
        (
            "0, NVIDIA RTX A6000, [N/A], 8.6, 550.1, GPU-x, [N/A]",
            "memory_total_mib",
            "memory.total='[N/A]', not a number",
        ),
        ("0, NVIDIA RTX A6000, 49140, [N/A], 550.1, GPU-x, [N/A]", "compute_cap", "driver 510 or newer"),
    ],
)
def test_a_value_nvidia_smi_cannot_read_is_null_and_blocks_only_the_class(line, field, expected):
    reading = _gpu.read_nvidia_smi(line)
    assert reading.gpus[0][field] is None and reading.gpus[0]["name"] == "NVIDIA RTX A6000"
    with pytest.raises(_gpu.UnknownGpuError) as err:
        _gpu.classify_reading(reading)
    assert expected in str(err.value) and "sglang_gpu_class" in str(err.value)


@pytest.mark.parametrize(
    ("name", "memory_mib", "expected"),
    [
        ("NVIDIA A40-8Q", None, "vGPU profile"),
        ("NVIDIA A40-48C", None, "vGPU profile"),
        ("GRID A100-4B", None, "vGPU profile"),
        ("NVIDIA H100-80A", None, "vGPU profile"),
        # with memory, judged by it: an 8 GB slice is not ampere_48g
        ("NVIDIA A40-8Q", 8192, "memory 8192 MiB, expected 45000-49500 MiB"),
    ],
)
def test_vgpu_profiles_are_refused_by_name_and_judged_by_memory(name, memory_mib, expected):
    with pytest.raises(_gpu.UnknownGpuError) as err:
        _gpu.identify(name, "8.6" if memory_mib else None, memory_mib)
    assert expected in str(err.value)


def test_a_full_size_vgpu_profile_with_its_memory_is_its_class():
    assert _gpu.identify("NVIDIA A40-48Q", "8.6", 49152) == "ampere_48g"


@pytest.mark.parametrize(("class_id", "text"), CASES)
def test_real_outputs_classify_to_their_class(class_id, text):
    assert _gpu.classify(parse(text)) == class_id


@pytest.mark.parametrize(("class_id", "text"), CASES)
def test_name_alone_identifies_the_class(class_id, text):
    assert _gpu.identify(parse(text)[0]["name"]) == class_id


@pytest.mark.parametrize(
    "line",
    [
        "0, NVIDIA GeForce RTX 4090, 24564, 8.9, 550.1, GPU-x, [N/A]",
        "0, NVIDIA A100-SXM4-80GB, 81920, 8.0, 550.1, GPU-x, Disabled",
        # Turing Quadro RTX 6000: 'RTX 6000' without 'Ada' must not be taken for ada_48g
        "0, Quadro RTX 6000, 24576, 7.5, 470.1, GPU-x, [N/A]",
        "0, NVIDIA GB200, 189471, 10.0, 570.1, GPU-x, Disabled",
    ],
)
def test_unknown_gpu_names_it_lists_classes_and_the_override(line):
    with pytest.raises(_gpu.UnknownGpuError) as err:
        _gpu.classify(parse(line))
    message = str(err.value)
    assert parse(line)[0]["name"] in message
    for class_id in _gpu.CLASS_IDS:
        assert class_id in message
    assert "sglang_gpu_class" in message


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        # the 96 GB HBM3 GH200 must not get settings sized for 141 GB
        ("0, NVIDIA GH200 480GB, 97871, 9.0, 560.1, GPU-x, Disabled", "memory 97871 MiB, expected 139000-150000 MiB"),
        # a name that claims sm86 but reports another architecture
        ("0, NVIDIA RTX A6000, 49140, 8.9, 550.1, GPU-x, [N/A]", "compute capability 8.9, expected 8.6"),
        # a vGPU slice of an A40 has a fraction of its memory
        ("0, NVIDIA A40-8Q, 8192, 8.6, 550.1, GPU-x, [N/A]", "memory 8192 MiB"),
    ],
)
def test_cross_checks_refuse_a_name_that_contradicts_the_hardware(line, problem):
    with pytest.raises(_gpu.UnknownGpuError) as err:
        _gpu.classify(parse(line))
    assert problem in str(err.value)
    assert "sglang_gpu_class" in str(err.value)


def test_mixed_models_are_an_error_naming_each_gpu():
    gpus = parse(SAMPLES["ampere_48g"][0] + "2, NVIDIA L40S, 46068, 8.9, 550.1, GPU-y, [N/A]\n")
    with pytest.raises(_gpu.MixedGpuError) as err:
        _gpu.classify(gpus)
    message = str(err.value)
    assert "0: NVIDIA RTX A6000" in message and "2: NVIDIA L40S" in message
    assert "sglang_gpu_class" in message and "CUDA_VISIBLE_DEVICES" in message


def test_two_models_of_one_class_are_still_mixed():
    # RTX A6000 and A40 share a class, but one server still gets one model
    gpus = parse(
        "0, NVIDIA RTX A6000, 49140, 8.6, 550.1, GPU-a, [N/A]\n1, NVIDIA A40, 46068, 8.6, 550.1, GPU-b, [N/A]\n"
    )
    with pytest.raises(_gpu.MixedGpuError):
        _gpu.classify(gpus)


@pytest.mark.parametrize("gpus", [[], None, "NVIDIA RTX A6000", [{"index": 0}], ["NVIDIA RTX A6000"]])
def test_classify_rejects_what_is_not_a_gpu_list(gpus):
    with pytest.raises(_gpu.GpuError):
        _gpu.classify(gpus)


@pytest.mark.parametrize("name", ["", "   ", None, 3])
def test_identify_rejects_an_empty_or_non_string_name(name):
    with pytest.raises(_gpu.UnknownGpuError) as err:
        _gpu.identify(name)
    assert "sglang_gpu_class" in str(err.value)


def test_every_rule_names_a_known_class_and_every_class_has_a_rule():
    rule_classes = {rule.class_id for rule in _gpu.GPU_RULES}
    assert rule_classes == set(_gpu.CLASS_IDS)
    assert len(_gpu.CLASS_IDS) == len(set(_gpu.CLASS_IDS))
    for rule in _gpu.GPU_RULES:
        assert rule.reason.strip(), rule
        low, high = rule.memory_mib
        assert 0 < low < high


def test_architecture_contract_class_ids():
    assert _gpu.CLASS_IDS == (
        "ampere_48g",
        "ada_48g",
        "hopper_80g",
        "hopper_141g",
        "blackwell_rtx_96g",
        "blackwell_dc_180g",
    )


# --- MIG and GPUs nvidia-smi could not reach (issue #38, item 4) ------------------------------------------------

# nvidia-smi's own words for a GPU it could not reach, from public reports (cited in _gpu.GPU_ERROR_LINE).
LOST_LINES = [
    "Unable to determine the device handle for GPU0000:65:00.0: Unknown Error",  # nvidia-container-toolkit#69
    "Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error",  # open-gpu-kernel-modules#387
    "Unable to determine the device handle for GPU 0000:02:00.0: GPU is lost. Reboot the system to recover this GPU",
    "Unable to detect the device handle for GPU0000:B1:00.0: Unknown Error",  # Easy-GPU-PV#276
    "Unable to determine the device handle for GPU 000:BA:80.0: Unknown Error",  # dcgm-exporter#604
]


@pytest.mark.parametrize("line", LOST_LINES)
def test_a_gpu_nvidia_smi_could_not_reach_is_an_error_line_not_a_skipped_one(line):
    reading = _gpu.read_nvidia_smi(line + "\n" + SAMPLES["ampere_48g"][0].splitlines()[1] + "\n")
    assert len(reading.gpus) == 1 and reading.errors == [line] and reading.skipped == [line]


def test_a_warning_naming_a_gpu_is_not_an_error_line():
    reading = _gpu.read_nvidia_smi("WARNING: infoROM is corrupted at gpu 0000:41:00.0\n" + SAMPLES["ampere_48g"][0])
    assert reading.errors == [] and len(reading.gpus) == 2


def test_mig_mode_is_read_and_a_mig_enabled_gpu_has_no_class():
    row = "0, NVIDIA H100 80GB HBM3, 81559, 9.0, 550.54.15, GPU-7f6e5d4c-3b2a-4190-8f7e-6d5c4b3a2909, Enabled\n"
    gpus = parse(row + row.replace("0, ", "1, ", 1).replace("Enabled", "Disabled"))
    assert [g["mig_mode"] for g in gpus] == ["Enabled", "Disabled"]
    with pytest.raises(_gpu.MigEnabledError) as err:
        _gpu.classify(gpus)
    message = str(err.value)
    assert message.startswith("MIG is enabled on GPU 0 (NVIDIA H100 80GB HBM3): the GPU is split into instances")
    assert "nvidia-smi -i <index> -mig 0" in message and "sglang_gpu_class" in message
    assert _gpu.classify(parse(row.replace("Enabled", "Disabled"))) == "hopper_80g"
    assert parse(SAMPLES["ampere_48g"][0])[0]["mig_mode"] is None  # [N/A]: no MIG on an RTX A6000
