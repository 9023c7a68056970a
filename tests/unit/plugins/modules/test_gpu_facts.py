# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_facts: runs a real (stand-in) nvidia-smi executable and reports facts or a clear failure."""

import json
import os
import re
import stat
import sys
import time
from pathlib import Path

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils import _gpu
from ansible_collections.ddtree.sglang.plugins.modules import gpu_facts
from module_harness import run_main

REPO = Path(__file__).resolve().parents[4]
SIM = REPO / "tests" / "sglang_sim" / "nvidia_smi.py"

A6000X2 = (
    "0, NVIDIA RTX A6000, 49140, 8.6, 550.127.05, GPU-5a1c8f0e-2b7d-4c3e-9f10-6d2a8b4e1c01, [N/A]\n"
    "1, NVIDIA RTX A6000, 49140, 8.6, 550.127.05, GPU-9e3b2d1a-7c6f-4a58-b0e2-3f1d5c7a9b02, [N/A]\n"
)
NO_DRIVER = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    "Make sure that the latest NVIDIA driver is installed and running.\n"
)


def fake_nvidia_smi(tmp_path, stdout="", stderr="", rc=0):
    """An executable that prints like nvidia-smi and records its arguments."""
    script = tmp_path / "nvidia-smi"
    script.write_text(
        "#!{python}\nimport sys\nopen({args!r}, 'w').write(' '.join(sys.argv[1:]))\n"
        "sys.stdout.write({out!r})\nsys.stderr.write({err!r})\nsys.exit({rc})\n".format(
            python=sys.executable, args=str(tmp_path / "args"), out=stdout, err=stderr, rc=rc
        )
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def run(params):
    """(ok, result) of gpu_facts with params."""
    failed, result = run_main(gpu_facts.main, params)
    return not failed, result


@pytest.mark.parametrize("check_mode", [False, True])
def test_facts_of_a_ct129_class_host(tmp_path, check_mode):
    script = fake_nvidia_smi(tmp_path, A6000X2)
    ok, result = run({"nvidia_smi_path": str(script), "_ansible_check_mode": check_mode})
    assert ok, result
    assert result["changed"] is False
    facts = result["ansible_facts"]
    assert facts["gpu_count"] == 2
    assert facts["gpu_class"] == "ampere_48g"
    assert facts["gpus"][1] == {
        "index": 1,
        "name": "NVIDIA RTX A6000",
        "memory_total_mib": 49140,
        "compute_cap": "8.6",
        "driver_version": "550.127.05",
        "uuid": "GPU-9e3b2d1a-7c6f-4a58-b0e2-3f1d5c7a9b02",
        "mig_mode": None,
    }
    # the documented query, exactly
    assert (tmp_path / "args").read_text() == " ".join(_gpu.NVIDIA_SMI_ARGS)


def test_nvidia_smi_is_found_on_path(tmp_path, monkeypatch):
    fake_nvidia_smi(tmp_path, A6000X2)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    ok, result = run({})
    assert ok, result
    assert result["nvidia_smi_path"] == str(tmp_path / "nvidia-smi")


def test_missing_nvidia_smi_on_path_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(gpu_facts, "EXTRA_BIN_DIRS", [str(tmp_path / "nowhere")])
    ok, result = run({})
    assert not ok
    assert "nvidia-smi was not found on PATH" in result["msg"]
    assert "nvidia_smi_path" in result["msg"]


def test_missing_nvidia_smi_at_a_given_path(tmp_path):
    ok, result = run({"nvidia_smi_path": str(tmp_path / "bin" / "nvidia-smi")})
    assert not ok
    assert f"Cannot run nvidia-smi at {tmp_path / 'bin' / 'nvidia-smi'}: No such file or directory" in result["msg"]


def test_driver_not_loaded_quotes_nvidia_smi_and_its_exit_code(tmp_path):
    # real nvidia-smi prints this on stdout and exits 9
    script = fake_nvidia_smi(tmp_path, stdout=NO_DRIVER, rc=9)
    ok, result = run({"nvidia_smi_path": str(script)})
    assert not ok
    assert result["msg"].startswith("nvidia-smi failed (exit code 9): NVIDIA-SMI has failed because it couldn't")
    assert "The NVIDIA kernel driver is not loaded" in result["msg"]
    assert result["rc"] == 9 and result["stdout"] == NO_DRIVER


@pytest.mark.parametrize(
    ("stdout", "stderr", "rc", "hint"),
    [
        ("No devices were found\n", "", 6, "nvidia-smi sees no GPU"),
        ("Failed to initialize NVML: Driver/library version mismatch\n", "", 18, "reboot the host"),
        ("", "NVML Shared Library Not Found\n", 12, "libnvidia-ml.so was not found"),
        ('Field "compute_cap" is not a valid field to query.\n', "", 2, "driver 510 or newer"),
        ("", "something new\n", 255, None),
    ],
)
def test_other_nvidia_smi_failures_are_quoted_with_a_hint(tmp_path, stdout, stderr, rc, hint):
    script = fake_nvidia_smi(tmp_path, stdout=stdout, stderr=stderr, rc=rc)
    ok, result = run({"nvidia_smi_path": str(script)})
    assert not ok
    assert f"nvidia-smi failed (exit code {rc}): {(stderr or stdout).strip()}" in result["msg"]
    if hint:
        assert hint in result["msg"]


def test_output_without_gpu_rows_fails_quoting_the_lines(tmp_path):
    script = fake_nvidia_smi(tmp_path, "index, name\n0, NVIDIA RTX A6000\n")
    ok, result = run({"nvidia_smi_path": str(script)})
    assert not ok
    assert "nvidia-smi printed no GPU row, only 2 other line(s): 'index, name'" in result["msg"]
    assert result["skipped_lines"] == ["index, name", "0, NVIDIA RTX A6000"]


# A real H200's answer (driver 580.159.04), as nvidia-smi printed it; see the README beside it. The row was taken
# before gpu_facts asked for mig.mode.current: its MIG mode is the one the same H200's `nvidia-smi -q` printed.
H200_DIR = REPO / "tests/unit/plugins/fixtures/nvidia-smi-h200"
H200_MIG = re.search(r"MIG Mode\s+Current\s+: (\w+)", (H200_DIR / "nvidia-smi-q.txt").read_text()).group(1)
H200_CSV = (H200_DIR / "query-gpu.csv").read_text().rstrip("\n") + f", {H200_MIG}\n"
INFOROM = "WARNING: infoROM is corrupted at gpu 0000:41:00.0"


def test_a_real_h200_is_hopper_141g(tmp_path, module_warnings):
    script = fake_nvidia_smi(tmp_path, H200_CSV)
    ok, result = run({"nvidia_smi_path": str(script)})
    assert ok, result
    facts = result["ansible_facts"]
    assert facts["gpu_class"] == "hopper_141g" and facts["gpu_count"] == 1
    gpu = facts["gpus"][0]
    assert (gpu["name"], gpu["memory_total_mib"], gpu["compute_cap"], gpu["driver_version"]) == (
        "NVIDIA H200",
        143771,
        "9.0",
        "580.159.04",
    )
    assert result["skipped_lines"] == [] and module_warnings == []


def test_a_warning_line_before_a_real_h200_is_skipped_with_a_warning(tmp_path, module_warnings):
    script = fake_nvidia_smi(tmp_path, INFOROM + "\n" + H200_CSV)
    ok, result = run({"nvidia_smi_path": str(script)})
    assert ok, result
    assert result["ansible_facts"]["gpu_class"] == "hopper_141g"
    assert result["ansible_facts"]["gpus"][0]["memory_total_mib"] == 143771
    assert result["skipped_lines"] == [INFOROM]
    assert module_warnings == [f"Skipped a line of nvidia-smi's output that is not a GPU row: {INFOROM!r}"]


def test_unreadable_memory_blocks_only_the_class(tmp_path, module_warnings):
    script = fake_nvidia_smi(tmp_path, H200_CSV.replace("143771", "[N/A]"))
    ok, result = run({"nvidia_smi_path": str(script)})
    assert not ok
    assert "memory.total='[N/A]', not a number" in result["msg"] and "sglang_gpu_class" in result["msg"]
    # an inventory that names the class (the deploy role passes fail_on_unknown_class false then)
    ok, result = run({"nvidia_smi_path": str(script), "fail_on_unknown_class": False})
    assert ok, result
    facts = result["ansible_facts"]
    assert facts["gpu_class"] is None and facts["gpu_count"] == 1
    assert facts["gpus"][0]["memory_total_mib"] is None and facts["gpus"][0]["name"] == "NVIDIA H200"
    assert len(module_warnings) == 1 and "memory.total='[N/A]'" in module_warnings[0]


@pytest.mark.parametrize(
    ("stdout", "expected"),
    [
        ("0, NVIDIA GeForce RTX 4090, 24564, 8.9, 550.1, GPU-x, [N/A]\n", "Unknown GPU 'NVIDIA GeForce RTX 4090'"),
        (A6000X2 + "2, NVIDIA L40S, 46068, 8.9, 550.1, GPU-y, [N/A]\n", "mixes GPU models"),
        ("", "No GPU to classify"),
    ],
)
def test_unknown_or_mixed_gpus_fail_by_default_and_warn_when_allowed(tmp_path, module_warnings, stdout, expected):
    script = fake_nvidia_smi(tmp_path, stdout)
    ok, result = run({"nvidia_smi_path": str(script)})
    assert not ok
    assert expected in result["msg"] and "sglang_gpu_class" in result["msg"]

    ok, result = run({"nvidia_smi_path": str(script), "fail_on_unknown_class": False})
    assert ok, result
    assert result["ansible_facts"]["gpu_class"] is None
    assert result["ansible_facts"]["gpu_count"] == stdout.count("\n")
    assert len(module_warnings) == 1 and expected in module_warnings[0]


# --- the stand-in nvidia-smi of the simulated hosts (tests/sglang_sim/nvidia_smi.py) ----------

PRESET_CLASSES = {
    "rtx_a6000x2": ("ampere_48g", 2),
    "rtx_pro_6000_bwx8": ("blackwell_rtx_96g", 8),
    "a40x2": ("ampere_48g", 2),
    "l40sx4": ("ada_48g", 4),
    "rtx_6000_adax2": ("ada_48g", 2),
    "h100x8": ("hopper_80g", 8),
    "h200x8": ("hopper_141g", 8),
    "b200x8": ("blackwell_dc_180g", 8),
}


def sim_nvidia_smi(tmp_path, monkeypatch, preset=None):
    wrapper = tmp_path / "nvidia-smi"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{SIM}" "$@"\n')
    wrapper.chmod(0o755)
    gpus_file = tmp_path / "gpus.json"
    if preset is not None:
        gpus_file.write_text(json.dumps({"preset": preset}))
    monkeypatch.setenv("DDTREE_SIM_GPUS_FILE", str(gpus_file))
    return wrapper


def test_every_preset_of_the_simulator_is_covered():
    namespace = {}
    exec(compile(SIM.read_text(), str(SIM), "exec"), namespace)
    assert set(namespace["PRESETS"]) == set(PRESET_CLASSES) | {"mixed_a6000_l40s"}


@pytest.mark.parametrize(("preset", "expected"), sorted(PRESET_CLASSES.items()))
def test_simulator_presets_classify_to_their_class(tmp_path, monkeypatch, preset, expected):
    ok, result = run({"nvidia_smi_path": str(sim_nvidia_smi(tmp_path, monkeypatch, preset))})
    assert ok, result
    assert (result["ansible_facts"]["gpu_class"], result["ansible_facts"]["gpu_count"]) == expected
    assert [gpu["index"] for gpu in result["ansible_facts"]["gpus"]] == list(range(expected[1]))


def test_simulator_mixed_preset_fails(tmp_path, monkeypatch):
    ok, result = run({"nvidia_smi_path": str(sim_nvidia_smi(tmp_path, monkeypatch, "mixed_a6000_l40s"))})
    assert not ok
    assert "mixes GPU models (0: NVIDIA RTX A6000, 1: NVIDIA L40S)" in result["msg"]


def test_simulator_without_gpus_file_is_the_driver_not_loaded_case(tmp_path, monkeypatch):
    ok, result = run({"nvidia_smi_path": str(sim_nvidia_smi(tmp_path, monkeypatch))})
    assert not ok
    assert "exit code 9" in result["msg"] and "The NVIDIA kernel driver is not loaded" in result["msg"]


# --- an nvidia-smi that never returns (a GPU fallen off the bus) ------------------------------


@pytest.mark.wallclock
def test_nvidia_smi_that_never_returns_fails_within_the_timeout_naming_it(tmp_path):
    script = tmp_path / "nvidia-smi"
    # Ignores SIGTERM and never prints: only a kill ends it.
    script.write_text(
        f"#!{sys.executable}\nimport signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(3600)\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    start = time.monotonic()
    ok, result = run({"nvidia_smi_path": str(script), "timeout": 2})
    took = time.monotonic() - start
    assert not ok
    assert took < 2 + 1.5, took  # the timeout, plus the kill and a loaded machine's slack
    assert result["msg"].startswith(f"nvidia-smi ({script}) did not finish within 2 s (timeout) and was killed.")
    assert "fallen off the bus" in result["msg"]


def test_timeout_below_one_second_is_refused():
    ok, result = run({"timeout": 0})
    assert not ok and result["msg"] == "timeout must be at least 1 second, got 0"


# --- MIG and a GPU nvidia-smi could not reach (issue #38, item 4) -----------------------------------------------

LOST = "Unable to determine the device handle for GPU0000:41:00.0: Unknown Error"


@pytest.mark.parametrize("fail_on_unknown_class", [True, False])
def test_a_gpu_nvidia_smi_could_not_reach_makes_the_count_unknown(tmp_path, fail_on_unknown_class):
    # issue #38: one of two A6000s lost, nvidia-smi exits 0; before, one ampere_48g GPU and a "skipped line" warning
    script = fake_nvidia_smi(tmp_path, A6000X2.splitlines()[0] + "\n" + LOST + "\n")
    ok, result = run({"nvidia_smi_path": str(script), "fail_on_unknown_class": fail_on_unknown_class})
    assert not ok and "ansible_facts" not in result
    assert result["msg"].startswith(f"nvidia-smi could not reach every GPU: {LOST!r}. It printed 1 GPU row(s)")
    assert "the host's GPU count is unknown" in result["msg"] and "reboot the host" in result["msg"]
    assert result["gpu_errors"] == [LOST]


def test_a_mig_enabled_gpu_has_no_class_unless_the_inventory_names_it(tmp_path, module_warnings):
    script = fake_nvidia_smi(tmp_path, H200_CSV.replace(f", {H200_MIG}", ", Enabled"))
    ok, result = run({"nvidia_smi_path": str(script)})
    assert not ok and result["msg"].startswith("MIG is enabled on GPU 0 (NVIDIA H200)")
    ok, result = run({"nvidia_smi_path": str(script), "fail_on_unknown_class": False})
    assert ok, result
    facts = result["ansible_facts"]
    assert facts["gpu_class"] is None and facts["gpu_count"] == 1 and facts["gpus"][0]["mig_mode"] == "Enabled"
    assert any("MIG is enabled on GPU 0" in w for w in module_warnings)


def test_the_real_h200s_mig_mode_is_disabled(tmp_path):
    script = fake_nvidia_smi(tmp_path, H200_CSV)
    ok, result = run({"nvidia_smi_path": str(script)})
    assert ok and H200_MIG == "Disabled" and result["ansible_facts"]["gpus"][0]["mig_mode"] == "Disabled"
